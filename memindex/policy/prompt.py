"""The prompt before any search: is it worth a look, which earlier user turns complete it,
and what the semantic model reads of it.

The first steps of the injection policy (`inject`), apart so that the prompt hook can
decide them, and send the prompt to the semantic worker, before it imports the search
engine: the worker embeds while the hook loads and runs the lexical side.
"""

from __future__ import annotations

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

    A scan, not a regular expression: most prompts then never load `re` (7 ms of the
    hook). tests/test_prompt.py checks it against the pattern
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
