"""The user's own words in a transcript's user entry: what capture keeps as a session's
goal, its requests and its title, and what the Stop hook's triage reads as the prompt.

Claude Code (and other tools writing its transcript format) records more than the user
typed as user text: reminders it attaches (`<system-reminder>`, which can quote a file, a
hook's output or a todo list), the input and output of a `!` shell command
(`<bash-input>`, `<bash-stdout>`, `<bash-stderr>`), slash-command wrappers
(`<command-name>`, `<command-message>`, `<command-args>`, `<local-command-stdout>`, ...),
background tasks (`<task-notification>`), other agents (`<teammate-message>`,
`<cross-session-message>`, `<channel>`), IDE context (`<ide_opened_file>`,
`<ide_selection>`) and hook output (`<user-prompt-submit-hook>`, any `<...-hook>`). None of
it is the user's words, and a repository controls much of it: kept as a goal, a later
session would be shown it as what the user asked.

`strip_wrappers` removes every such element wherever it stands (before, inside or after
the prompt's text), in one linear pass over the tags:
- nested elements are removed with the outermost one (a close tag ends the innermost open
  element of its name, and those opened inside it);
- an unclosed element runs to the end of the text;
- a stray close tag (no element of its name open) means what precedes it was inside one:
  the text back to the end of the last removed element (or the start) goes with it.
A prompt that is nothing but wrappers is no prompt (prompt_text returns None). Standard
library only, `re` loaded only for a text holding a `<`: the Stop hook imports it.
"""

from __future__ import annotations

from ..defaults import TAG_ATTRS_MAX
from ..policy.transcript import user_parts

# Exact names, and the families Claude Code builds names in (bash-*, command-*,
# local-command-*, *-hook). Matched case-insensitively: a look-alike in other case is not
# the user's words either.
_NAMES = (r"system-reminder|task-notification|teammate-message|cross-session-message|agent-message|channel|"
          r"fork-boilerplate|ide_opened_file|ide_selection|ide_diagnostics|new-diagnostics|memory-context|"
          r"(?:bash|command|local-command)-[a-z][a-z_-]{0,40}|[a-z][a-z_-]{0,40}-hook")
_TAG = None
_NOT_WORDS = ("Caveat:", "[Request interrupted")  # Claude Code's own lines recorded as user text


def _tag_re():
    global _TAG
    if _TAG is None:
        import re

        _TAG = re.compile(rf"<(/?)({_NAMES})(?=[\s/>])[^<>]{{0,{TAG_ATTRS_MAX}}}>", re.IGNORECASE)
    return _TAG


def strip_wrappers(text: str) -> str:
    """`text` without the wrapper elements Claude Code adds to a user's prompt (see the
    module's docstring), stripped of surrounding white space."""
    if "<" not in text:
        return text.strip()
    kept: list[str] = []
    outside = 0  # where the text outside any element resumes
    stack: list[str] = []  # names of the open elements, outermost first
    depth: dict[str, int] = {}  # name -> how many of `stack` have it (a close's match in O(1))
    for m in _tag_re().finditer(text):
        name, closing = m.group(2).lower(), bool(m.group(1))
        if not closing:
            if m.group(0).endswith("/>"):  # a self-closed element: only the tag goes
                if not stack:
                    kept.append(text[outside:m.start()])
                    outside = m.end()
                continue
            if not stack:
                kept.append(text[outside:m.start()])
            stack.append(name)
            depth[name] = depth.get(name, 0) + 1
            continue
        if depth.get(name):
            while stack:  # close the innermost element of this name and those inside it
                top = stack.pop()
                depth[top] -= 1
                if top == name:
                    break
            if not stack:
                outside = m.end()
        elif not stack:  # a stray close: what precedes it (since the last element) was inside one
            outside = m.end()
    if not stack:  # an unclosed element runs to the end
        kept.append(text[outside:])
    return " ".join(p.strip() for p in kept if p.strip())


def prompt_text(entry: object) -> str | None:
    """The user's own words in a transcript entry, every wrapper removed; None for an entry
    that holds none (not a prompt, or nothing but wrappers and Claude Code's own lines)."""
    parts = user_parts(entry)
    if parts is None:
        return None
    text = strip_wrappers("\n".join(parts))
    if not text or text.startswith(_NOT_WORDS):
        return None
    return text
