"""Which memories a session's model opened, from its transcript: a Read of a memory's
file, `memindex get PATH`, the MCP server's `get`, a command that prints the file (`cat`,
`head`, `jq`, ...). The capture job (Stop, SessionEnd) records them in the use log
(memindex/usage.py), once per tool call id.

Only the model's own tool calls count (the transcript's `tool_use` blocks, never a tool's
output or a file's text). A path is resolved against the session's working folder, then
must lie in the memory root's category folders (or, for a document indexed in place, in
the project): anything else is not a memory and is not counted.
"""

from __future__ import annotations

import os
import shlex

from ..defaults import DOC_SUFFIXES, FOLDERS
from ..store.paths import project_of

READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "jq", "sed", "awk", "grep", "rg", "view", "nl", "python3"})
_SPLIT = {"|", "||", "&&", ";", "&"}


def memory_rel(root: str, project: str, cwd: str, arg: str) -> str | None:
    """The memory's path in the root (`decisions/x.json`), or a document's row prefix
    (`@docs/adr/0007.md`), that `arg` names; None for anything else."""
    arg = arg.strip().strip("'\"")
    if not arg or "\x00" in arg or len(arg) > 4096:
        return None
    head = arg.split("/", 1)[0]
    if head in FOLDERS and arg.endswith(".json") and arg.count("/") == 1 and ".." not in arg:
        return arg  # as search shows it without the prefix: `memindex get decisions/x.json`
    full = arg if os.path.isabs(arg) else os.path.join(cwd or project, arg)
    full = os.path.normpath(os.path.realpath(full))
    root_real, project_real = os.path.realpath(root), os.path.realpath(project)
    if full.startswith(root_real + os.sep):
        rel = full[len(root_real) + 1:].replace(os.sep, "/")
        if rel.endswith(".json") and rel.count("/") == 1 and rel.split("/")[0] in FOLDERS:
            return rel
        return None
    if full.startswith(project_real + os.sep) and full.endswith(DOC_SUFFIXES):
        return "@" + full[len(project_real) + 1:].replace(os.sep, "/")
    return None


def _words(command: str) -> list[list[str]]:
    """The simple commands of a shell line, each as its words (shlex; a line it cannot
    split is read as whitespace-separated words)."""
    try:
        lexer = shlex.shlex(command[:8192], posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = command[:8192].split()
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok in _SPLIT:
            out.append([])
        else:
            out[-1].append(tok)
    return [words for words in out if words]


def _from_bash(root: str, project: str, cwd: str, command: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for words in _words(command):
        names = [os.path.basename(w) for w in words]
        if "memindex" in names:
            i = names.index("memindex")
            rest = words[i + 1:]
            while rest[:1] == ["--root"] or (rest and rest[0].startswith("--root=")):
                rest = rest[2:] if rest[0] == "--root" else rest[1:]
            if rest[:1] == ["get"]:
                for w in rest[1:]:
                    if not w.startswith("-") and (rel := memory_rel(root, project, cwd, w)):
                        found.append(("get", rel))
            continue
        if names[0] in READERS:
            for w in words[1:]:
                if (".json" in w or w.endswith(DOC_SUFFIXES)) and (rel := memory_rel(root, project, cwd, w)):
                    found.append(("bash", rel))
    return found


def opens(root: str, reads: list[tuple[str, str, str]], cwd: str = "") -> list[tuple[str, str, str]]:
    """(tool call id, channel, path) of every memory these tool calls (capture.parse's
    `Session.reads`) opened; a call that opens several gets one id each (`id#n`)."""
    project = project_of(root)
    out: list[tuple[str, str, str]] = []
    for tool_id, tool, arg in reads:
        hits: list[tuple[str, str]] = []
        if tool == "Read":
            rel = memory_rel(root, project, cwd, arg)
            hits = [("read", rel)] if rel else []
        elif tool == "Bash":
            hits = _from_bash(root, project, cwd, arg)
        elif tool.startswith("mcp__") and tool.endswith("__get") and "memindex" in tool:
            rel = memory_rel(root, project, cwd, arg.removeprefix(".claude/memory/"))
            hits = [("mcp-get", rel)] if rel else []
        for n, (channel, rel) in enumerate(hits):
            out.append((tool_id if n == 0 else f"{tool_id}#{n}", channel, rel))
    return out
