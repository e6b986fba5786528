"""The old keyword matcher (`memory_retrieve.py`), re-implemented as the reference
documents specify it: title and tags only, 2/3/1 points. It is the evaluation's baseline
(memory.Strategy's `legacy_inject`), no longer a match_strategy: it recalls less than either
of memindex's. Its constants are its own on purpose: they are the old system's, not memindex's.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime, timezone

from memindex.defaults import CATEGORY_PRIORITY
from memindex.retrieval.hits import Hit
from memindex.index import reads

_TOKEN_RE = re.compile(r"[a-z0-9]+")
# The 60 stop words of the investigation files plus the 4 two-letter additions (64).
STOP_WORDS = frozenset(
    """
    a an the is was are were be been being do does did have has had will would could
    can should may might shall must i you we they he she it me my your this that these
    those what which who whom how when where why if then else so and or but not no yes
    to of in on at for with from by about up out into just also very too let please help
    need want know think make like use get go see as am us vs
    """.split()
)
DEEP_CHECK_LIMIT = 20
# The old system's category descriptions: a prompt word in one adds up to 2 points.
DESCRIPTIONS = {
    "session_summary": "High-level summary of work done in a coding session, including goals, outcomes, and next steps",
    "decision": "Architectural and technical choices with rationale -- why X was chosen over Y",
    "runbook": "Step-by-step procedures for diagnosing and fixing specific errors or issues",
    "constraint": "External limitations, platform restrictions and hard rules the project must respect",
    "tech_debt": "Deferred work, known shortcuts and cleanup items with their priority",
    "preference": "Conventions and personal preferences for code style, tools and workflow",
}
RECENCY_DAYS = 30


def tokenize(text: str) -> set[str]:
    return {w for w in _TOKEN_RE.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1}


def score_entry(prompt_words: set[str], title: str, tags: set[str]) -> int:
    """+2 per exact title word, +3 per exact tag, +1 per prompt word (>= 4 chars) that is a
    prefix of a title word or tag, or has one (>= 4 chars) as a prefix."""
    title_tokens = tokenize(title)
    exact_title = prompt_words & title_tokens
    exact_tags = prompt_words & tags
    score = 2 * len(exact_title) + 3 * len(exact_tags)
    targets = title_tokens | tags
    for word in prompt_words - exact_title - exact_tags:
        if len(word) >= 4 and any(t.startswith(word) for t in targets):
            score += 1
        elif any(word.startswith(t) and len(t) >= 4 for t in targets):
            score += 1
    return score


def score_description(prompt_words: set[str], description_tokens: set[str]) -> int:
    exact = prompt_words & description_tokens
    score = 1.0 * len(exact)
    for word in prompt_words - exact:
        if len(word) >= 4 and any(d.startswith(word) for d in description_tokens):
            score += 0.5
    return min(2, int(score + 0.5))


def _recent(updated_at: str, now: datetime) -> bool:
    try:
        when = datetime.fromisoformat(updated_at.replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (now - when).days <= RECENCY_DAYS


def match(
    conn: sqlite3.Connection,
    prompt: str,
    *,
    max_inject: int = 5,
    descriptions: dict[str, str] | None = DESCRIPTIONS,
    now: datetime | None = None,
) -> list[Hit]:
    """What the old hook would inject (score = its integer points).

    Pass 1 scores every active entry (index.md lists active memories only); pass 2 adds the
    recency bonus to the top 20, as the old deep check did.
    """
    now = now or datetime.now(timezone.utc)
    words = tokenize(prompt)
    if not words or max_inject <= 0:
        return []
    desc_tokens = {c: tokenize(d) for c, d in (descriptions or {}).items()}
    scored = []
    for row in reads.active_entries(conn):
        hit = Hit.from_row(row, 0.0)
        hit.tags = [t.strip().lower() for t in hit.tags]
        score = score_entry(words, hit.title, set(hit.tags))
        if score > 0 and desc_tokens.get(hit.category):
            score += score_description(words, desc_tokens[hit.category])
        if score > 0:
            hit.score = float(score)
            scored.append((score, CATEGORY_PRIORITY.get(hit.category, 10), hit))
    scored.sort(key=lambda s: (-s[0], s[1]))
    final = []
    for rank, (score, prio, hit) in enumerate(scored):
        if rank < DEEP_CHECK_LIMIT and _recent(hit.updated_at, now):
            hit.score += 1
        final.append((hit.score, prio, hit))
    final.sort(key=lambda s: (-s[0], s[1]))
    return [hit for _, _, hit in final[:max_inject]]
