"""The file hooks. PreToolUse: when the assistant is about to read or edit a file, the
memories anchored to it that still fit the user's latest prompt (`inject.on_file`, rule
10). PostToolUse: a memory file the assistant wrote is synced in the background.

The prompt comes from the session memo the prompt hook left (`memindex.runtime`), else from
the transcript. The answer is JSON `additionalContext` (Claude Code shows a PreToolUse
hook's plain stdout to the user only), never a permission decision: the tool always runs.
Standard library only, like the rest of the hooks' path.
"""

from __future__ import annotations

import os

from ..defaults import DOC_SUFFIXES, FOLDERS
from . import Quiet, _root_for, note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def answer(data: dict, root: str, note: Callable[[str], None]) -> str:
    """What the hook prints for this PreToolUse payload of the memory root `root` (the
    policy's door decides, `policy.door.decide_file`; config warnings go to `note`);
    raises index.IndexUnavailable when there is no index."""
    from ..policy.door import PromptInput, decide_file

    inp = PromptInput.from_hook({k: v for k, v in data.items() if k not in ("prompt", "user_prompt")})
    if inp.file is None:
        return ""
    from ..store.paths import inside

    if inside(os.path.abspath(inp.file), os.path.abspath(root)):
        return ""  # a memory file: the write path's business, not a file at hand
    from . import config_for

    decided = decide_file(root, config_for(root, note), inp, note)
    hits, prefix = decided.hits, decided.prefix
    from ..text.render import memory_context, shown

    block = memory_context(hits, prefix)
    if not block:
        return ""
    if decided.memo is not None:
        from .. import runtime as memo

        memo.add_shown(inp.session_id, decided.memo, [shown(prefix, h.path) or "" for h in hits])
    from ..lean import dumps

    return dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": block}}) + "\n"


def on_pre_tool_use(data: dict) -> str:
    """PreToolUse on Read|Edit|MultiEdit|Write: the memories of the file at hand."""
    root = _root_for(data.get("cwd"))
    from .. import index

    try:
        return answer(data, root, note)
    except index.IndexUnavailable as exc:
        raise Quiet(str(exc)) from None


def on_post_tool_use(data: dict) -> str:
    """PostToolUse on Write|Edit|MultiEdit: sync the edited memory file, or the registered
    document (documents.paths), in the background."""
    from ..index import freshen

    tool_input = data.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path.endswith((".json", *DOC_SUFFIXES)):
        return ""
    if not os.path.isabs(path) and isinstance(data.get("cwd"), str):
        path = os.path.join(data["cwd"], path)
    path = os.path.abspath(path)
    if not path.endswith(".json"):
        return _document_written(path, data)
    root = _root_for(os.path.dirname(path))
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if rel.startswith("..") or rel.split("/")[0] not in FOLDERS or rel.count("/") != 1:
        return ""
    freshen.spawn_sync(root, note, [rel], lock_timeout=30.0)
    return ""


def _document_written(path: str, data: dict) -> str:
    """A Markdown file the assistant wrote: re-indexed when a registered path holds it (a
    folder of it, or the file itself), by the same one-file background sync."""
    from ..config import load_config
    from ..index import freshen
    from ..store.paths import project_of

    root = _root_for(data.get("cwd"))
    project = project_of(root)
    rel = os.path.relpath(path, project).replace(os.sep, "/")
    if rel.startswith("../") or rel == "..":
        return ""
    registered = load_config(root)["documents.paths"]
    if any(p in (".", "./") or rel == p.strip("/") or rel.startswith(p.strip("/") + "/") for p in registered):  # type: ignore[union-attr]
        freshen.spawn_sync(root, note, [rel], lock_timeout=30.0)
    return ""
