"""What a prompt asks for, beyond its words: to resume earlier work, or a kind of memory.

The patterns are data (memindex/data/intents.json). Each intent has a few lowercase
words, one of which every match of its patterns holds: a prompt with none of them is
never matched against the patterns, so most prompts never load the regular-expression
engine (7 ms of the hook's start).

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
