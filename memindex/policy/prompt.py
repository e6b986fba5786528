"""The prompt before any search: is it worth a look, which earlier user turns complete it,
what the semantic model reads of it, the files it names, and what it asks for beyond its
words (its intents).

The first steps of the injection policy (`inject`), apart so that the prompt hook can
decide them, and send the prompt to the semantic worker, before it imports the search
engine: the worker embeds while the hook loads and runs the lexical side.

Intents are what a prompt asks for beyond its words: to resume earlier work, or a kind
of memory.

The patterns are data (memindex/data/intents.json). Each intent has a few lowercase
words, one of which every match of its patterns holds: a prompt with none of them is
never matched against the patterns, so most prompts never load the regular-expression
engine (a large share of the hook's start).

- `resume` ("where did we leave off?"): the latest session summary is wanted, not the
  memories that share the request's words ("off", "last", "doing");
- a category (`runbook`, `decision`, `constraint`, `tech_debt`, `preference`): the prompt
  asks for that kind of memory by the form of its request ("is there a runbook for ...",
  "any constraints on ...", "what did we decide about ..."), not by a bare noun: "add a
  NOT NULL constraint" asks for no constraint memory;
- `general` ("what's the difference between ...", "how does X work?"): a question about
  the world, unless a word points at the project or the conversation ("we", "our",
  "here", "it", ...: the intent's `unless` pattern).
"""

from __future__ import annotations

import os

from ..defaults import CATEGORIES, DATA_DIR
from ..lean import loads
from ..text.words import query_terms

TYPE_CHECKING = False  # annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..config import Config


def dense_text(prompt: str, turns: Sequence[str], cfg: Config) -> str:
    """What the semantic model reads for a prompt: the prompt first (it reads 256 tokens),
    then the earlier user turns, latest first, when the prompt needs them (as `enrich`)."""
    if not turns or not needs_context(prompt, cfg):
        return prompt
    return "\n".join([prompt, *reversed(turns)])


def wants_injection(prompt: str, cfg: Config) -> bool:
    """Is injection on, and is the prompt long enough to be worth a look?"""
    if not cfg["retrieval.enabled"] or cfg["retrieval.max_inject"] <= 0:
        return False
    return len(prompt.strip()) >= cfg["retrieval.min_prompt_chars"]


def needs_context(prompt: str, cfg: Config) -> bool:
    """Should earlier user turns enrich this prompt? Only short ones ("fix that again"):
    more terms would dilute a specific prompt."""
    if not cfg["retrieval.transcript_context.enabled"]:
        return False
    return len(query_terms(prompt)) <= cfg["retrieval.transcript_context.max_prompt_terms"]


def enrich(prompt: str, turns: Sequence[str], cfg: Config) -> str:
    """The prompt preceded by the last user turns, when it needs them."""
    if not turns or not needs_context(prompt, cfg):
        return prompt
    keep = list(turns)[-cfg["retrieval.transcript_context.max_turns"]:]
    return "\n".join([*keep, prompt])


_EXT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_STEM_END = _EXT_CHARS | {"_", "-"}


def files_named(prompt: str, limit: int = 20) -> list[str]:
    """The file paths a prompt names (`src/app.py`, `next.config.js`, `./a/b.ts`): a name
    with an extension of a letter and up to 7 more, alone or after folders; a dotted word
    counts only with one dot (`e.g.` and version numbers do not).

    A scan, not a regular expression: most prompts then never load `re`.
    tests/test_lean.py checks it against the pattern
    `(?<![\\w/.-])((?:[\\w.-]+/)*[\\w.-]*[A-Za-z0-9_-]\\.[A-Za-z][A-Za-z0-9]{0,7})(?![\\w/])`."""
    found: list[str] = []
    i, n = 0, len(prompt)
    while i < n and len(found) < limit:
        if not _in_path(prompt[i]):
            i += 1
            continue
        j = i + 1
        while j < n and _in_path(prompt[j]):
            j += 1
        name = _path_at_start(prompt[i:j])
        if name is not None and ("/" in name or name.count(".") == 1):
            found.append(name)
        i = j
    return found


def _in_path(ch: str) -> bool:
    return ch.isalnum() or ch in "_/.-"


def _path_at_start(run: str) -> str | None:
    """The pattern's match at the start of a run of path characters (it cannot start
    inside one), trying what its backtracking tries, in the same order: most folders
    first, then the longest name, then the longest extension."""
    starts = [0]  # where the name may start: after each of the leading folders
    for k, ch in enumerate(run):
        if ch == "/":
            if k == starts[-1]:
                break  # an empty folder name ends the folders
            starts.append(k + 1)
    for p in reversed(starts):
        q = run.find("/", p)
        q = len(run) if q < 0 else q
        for t in range(q - 3, p - 1, -1):  # the last stem character
            if run[t] not in _STEM_END or run[t + 1] != "." or run[t + 2] not in _EXT_CHARS or not run[t + 2].isalpha():
                continue
            more = 0
            while more < 7 and t + 3 + more < q and run[t + 3 + more] in _EXT_CHARS:
                more += 1
            for e in range(t + 3 + more, t + 2, -1):
                if e == len(run) or run[e] in ".-":
                    return run[:e]
    return None


# --- intents: what the prompt asks for beyond its words ----------------------------------

_INTENTS: dict[str, tuple[tuple[tuple[str, ...], ...], list[str], str | None]] | None = None


def intents() -> dict[str, tuple[tuple[tuple[str, ...], ...], list[str], str | None]]:
    """Intent name -> (prefilter words, patterns, `unless`: a pattern that rules the intent
    out), read once. Each prefilter entry is the words that must all occur (one word, or
    several where each alone is common: "how do" and " work"). A pattern may use
    `{request}`, the shared start of a request for a kind of memory (`_request`)."""
    global _INTENTS
    if _INTENTS is None:
        with open(os.path.join(DATA_DIR, "intents.json"), "rb") as fh:
            data = loads(fh.read())
        request = data["_request"]
        _INTENTS = {
            k: (
                tuple((w,) if isinstance(w, str) else tuple(w) for w in v["words"]),
                [p.replace("{request}", request) for p in v["patterns"]],
                v.get("unless"),
            )
            for k, v in data.items() if not k.startswith("_")
        }
    return _INTENTS


def intents_of(prompt: str) -> list[str]:
    """Every intent whose patterns match the prompt, in the file's order."""
    low = prompt.lower()
    found = []
    for name, (words, patterns, unless) in intents().items():
        if any(all(w in low for w in entry) for entry in words):
            import re

            if any(re.search(p, prompt, re.IGNORECASE) for p in patterns) and not (
                unless and re.search(unless, prompt, re.IGNORECASE)
            ):
                found.append(name)
    return found


def category_asked(names: list[str]) -> str | None:
    """The one kind of memory the prompt asks for (of its intents, `names`); None when it
    asks for none or several ("any runbooks or conventions for ..." wants both)."""
    asked = [n for n in names if n in CATEGORIES]
    return asked[0] if len(asked) == 1 else None


def without_intent(prompt: str, name: str) -> str:
    """The prompt with the words that make it this intent taken out ("where did we leave
    off with the tz migration?" -> "... the tz migration?"): what is left is its topic."""
    import re

    def kept(m: re.Match[str]) -> str:  # a request's words between its start and its noun are topic
        return f" {m.groupdict().get('keep') or ''} "

    for pattern in intents()[name][1]:
        prompt = re.sub(pattern, kept, prompt, flags=re.IGNORECASE)
    return prompt
