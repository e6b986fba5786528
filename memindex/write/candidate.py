"""Candidate selection (`memindex candidate`): which existing memory new information updates.

The existing memory that new information should update is the best BM25 hit of
`query.search` for the new text, restricted to the category and to active memories. Whether
it really is the same topic is decided with two corpus-relative measures, never with an
absolute BM25 number:

* containment: the share of the new text's IDF mass (Lucene IDF of every query term; a term
  absent from the whole store weighs as much as the rarest term in it, df = 1) that the
  candidate's title, tags and body match (the engine's own term expressions, so `auth` may
  match `authentication`);
* title overlap: the share of the candidate's title-and-tags IDF mass that the new text
  contains (the reverse direction: does the new text talk about *that* memory's subject?).

match = containment + title overlap (0..2). UPDATE when match >= UPDATE_THRESHOLD, NOOP
when, in addition, exact containment (same measure, no prefix matching) >= NOOP_THRESHOLD:
every meaningful word of the new text is already in the memory, so it adds nothing. The
thresholds (and CANDIDATE_POOL, the hits looked at) are in memindex/defaults.py.

The thresholds were set on hand-written texts against a judged store; the figures and the
test that re-runs them: docs/evaluation.md, "Candidate selection". A lexical measure has a
known limit: a short text that reuses a memory's title words for another object is proposed
as an UPDATE; the assistant sees the candidate's title and content and can still choose CREATE.
"""

from __future__ import annotations

import math
import os
import sqlite3
from pathlib import Path
from typing import Any

from ..config import Config
from ..defaults import CANDIDATE_POOL, KEY_FIELDS, NO_DELETE, NOOP_THRESHOLD, UPDATE_THRESHOLD
from ..errors import MemoryFileError, UsageError
from ..store.paths import display_prefix
from ..store.files import extract_body, parse_json, read_bytes
from ..index.reader import open_fresh_reader
from ..text.words import query_terms
from .validate import clean_title, normalize_category, sha256_hex

# What a memory says: not its category's name, nor its `questions` (phrasings of what it
# answers: found by them, a memory is still judged UPDATE or NOOP by what it says).
_CONTENT_COLUMNS = ("title", "tags", "body")


def _absent_weight(plan: Any) -> float:
    """The weight of a term no memory has: that of the rarest possible term (df = 1).
    Lucene's IDF at df = 0 would let one unknown word outweigh five known ones in a store
    of one memory and turn every early update into a CREATE."""
    n = max(plan.n_docs, 1)
    return math.log(1 + (n - 1 + 0.5) / (1 + 0.5))


def containment(conn: sqlite3.Connection, plan: Any, hit: Any) -> float:
    """Share of the query's whole IDF mass (every term, including terms no memory has)
    that one memory's title, tags and body match."""
    from ..retrieval.query import coverage

    coverage(conn, plan, [hit], top_terms=None, columns=_CONTENT_COLUMNS, absent=_absent_weight(plan))
    return float(hit.coverage or 0.0)


def title_overlap(conn: sqlite3.Connection, subject: str, text: str, params: Any) -> float:
    """Share of a memory's title-and-tags IDF mass that `text` contains (same tokenizer,
    same term expressions as the engine)."""
    from ..retrieval.query import plan_query

    plan = plan_query(conn, subject, params)
    total = sum(plan.idf(t) for t in plan.df)
    got = sum(plan.idf(t) for t in _matching_terms(plan, text))
    return got / total if total > 0 else 0.0


def _matching_terms(plan: Any, text: str) -> list[Any]:
    """The planned terms that a piece of text contains (FTS5 matching, scratch table)."""
    from ..index.reads import Scratch
    from ..text.words import has_cjk, spaceless

    Scratch.load_text(text)
    side = spaceless(text)
    if side:
        Scratch.load_text(side, spaceless=True)
    return [
        term for term in plan.df
        if (not has_cjk(term.text) and Scratch.matching(plan.expressions[term]))
        or (side and Scratch.matching(plan.expressions[term], spaceless=True))
    ]


def _key_content(category: str, content: object) -> dict[str, Any]:
    if not isinstance(content, dict):
        return {}
    return {k: content[k] for k in KEY_FIELDS.get(category, ()) if k in content}


def memory_text(category: str, data: object) -> str:
    """The new information a whole memory object carries, as candidate matches it: its
    title and the text of its content."""
    if not isinstance(data, dict):
        return ""
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    return f"{title}\n{extract_body(category, data.get('content'))}".strip()


def find_candidate(
    root: str | os.PathLike[str],
    cfg: Config,
    category: str,
    new_info: str,
    *,
    conn: sqlite3.Connection | None = None,
) -> dict[str, Any]:
    """Which existing memory should `new_info` update? A JSON-ready answer with the
    candidate (or null), the recommendation CREATE / UPDATE / UPDATE_OR_DELETE / NOOP, the
    measures behind it, and the veto on deleting decisions, preferences and sessions."""
    from ..retrieval.query import Filters, Params, plan_query, search

    root = Path(root)
    category = normalize_category(category)
    if not isinstance(new_info, str) or not new_info.strip():
        raise UsageError("the new information is empty")
    delete_allowed = category not in NO_DELETE
    veto = None
    if not delete_allowed:
        veto = f"DELETE is vetoed for {category} memories: they are history; update them instead"
        if category == "decision":
            veto += " (a decision that no longer holds gets status 'superseded')"
    answer: dict[str, Any] = {
        "category": category,
        "recommendation": "CREATE",
        "candidate": None,
        "match": None,
        "thresholds": {"update": UPDATE_THRESHOLD, "noop": NOOP_THRESHOLD},
        "reason": "",
        "delete_allowed": delete_allowed,
        "veto": veto,
        "others": [],
    }
    if not query_terms(new_info):
        answer["reason"] = "the new information has no meaningful words to match"
        return answer
    own = conn is None
    conn = open_fresh_reader(root, cfg) if conn is None else conn
    try:
        params = Params.from_config(cfg)
        plan = plan_query(conn, new_info, params)
        hits = search(conn, new_info, limit=CANDIDATE_POOL, params=params, filters=Filters(categories=(category,)), plan=plan)
        hits = [h for h in hits if h.record_status == "active" and h.category == category]
        if not hits:
            answer["reason"] = f"no active {category} memory shares a word with the new information"
            return answer
        best = hits[0]
        cont = containment(conn, plan, best)
        overlap = title_overlap(conn, best.title + " " + " ".join(best.tags), new_info, params)
        exact = containment(conn, plan_query(conn, new_info, params.replace(prefix_mode="none")), best)
        score = cont + overlap
        prefix = display_prefix(root)
        answer["match"] = {
            "score": round(score, 3),
            "containment": round(cont, 3),
            "title_overlap": round(overlap, 3),
            "exact_containment": round(exact, 3),
            "bm25": round(best.score, 3),
        }
        answer["others"] = [{"path": prefix + h.path, "title": clean_title(h.title), "bm25": round(h.score, 3)} for h in hits[1:3]]
    finally:
        if own:
            conn.close()
    if score < UPDATE_THRESHOLD:
        answer["reason"] = (
            f"nearest {category} memory {prefix + best.path} matches {score:.2f} < {UPDATE_THRESHOLD}: a new topic"
        )
        answer["nearest"] = {"path": prefix + best.path, "title": clean_title(best.title)}
        return answer
    candidate: dict[str, Any] = {
        "path": prefix + best.path,
        "id": best.id,
        "title": clean_title(best.title),
        "tags": best.tags,
        "updated_at": best.updated_at,
        "record_status": best.record_status,
    }
    try:
        data, _ = read_bytes(root, best.path, int(cfg["index.max_file_bytes"]))
        parsed = parse_json(data)
        candidate["sha256"] = sha256_hex(data)
        candidate["content"] = _key_content(category, parsed.get("content") if isinstance(parsed, dict) else None)
        if isinstance(parsed, dict) and isinstance(parsed.get("questions"), list):
            candidate["questions"] = parsed["questions"]  # an update may add to them
    except MemoryFileError:
        candidate["content"] = {}
    answer["candidate"] = candidate
    if exact >= NOOP_THRESHOLD:
        answer["recommendation"] = "NOOP"
        answer["reason"] = f"the memory already contains {exact:.0%} of the new information's terms: nothing to add"
    elif delete_allowed:
        answer["recommendation"] = "UPDATE_OR_DELETE"
        answer["reason"] = (
            f"same topic (match {score:.2f} >= {UPDATE_THRESHOLD}): update it, or retire it "
            "(`memindex retire`) if the new information makes it obsolete"
        )
    else:
        answer["recommendation"] = "UPDATE"
        answer["reason"] = f"same topic (match {score:.2f} >= {UPDATE_THRESHOLD}): update it"
    return answer
