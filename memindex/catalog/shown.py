"""What the assistant was shown, and why: the use log's sessions (memindex/usage.py), each
prompt the hook answered with the memories it injected and those it considered and dropped,
each with its reason (the decision `memindex explain` gives), what search, MCP and the
recent list showed, and what the model opened.

The use log keeps a hash of each prompt, never its text; the prompt's words are looked up
in the session's own transcript (Claude Code's, this user's, outside the repository) when
it is still there, read bounded.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from .. import usage
from ..defaults import UI_SESSIONS
from ..index import browse
from ..runtime import name_hash
from ..store.paths import display_prefix
from ..text.render import shown

TRANSCRIPT_READ_BYTES = 64 * 1024 * 1024  # of a transcript read to find a session's prompts


def _count(events: list[dict], kind: str) -> int:
    return sum(1 for ev in events if ev.get("e") == kind)


def sessions(root: str, limit: int = UI_SESSIONS) -> list[dict[str, Any]]:
    """The sessions of the use log, newest first, each with its counts."""
    out = []
    for log in usage.sessions(root, limit):
        prompts = [ev for ev in log.events if ev.get("e") == "prompt"]
        times = [ev["t"] for ev in log.events if isinstance(ev.get("t"), (int, float))]
        out.append({
            "name": log.name, "mtime": log.mtime, "first": min(times) if times else None, "last": max(times) if times else None,
            "prompts": len(prompts), "answered": sum(1 for ev in prompts if ev.get("k")),
            "injected": sum(len(ev.get("k") or ()) for ev in prompts), "dropped": sum(len(ev.get("d") or ()) for ev in prompts),
            "shown": _count(log.events, "shown"), "opened": _count(log.events, "open"),
            "terminal": log.name.startswith("cli-"),
        })
    return out


def _transcript_prompts(root: str, name: str) -> dict[str, str]:
    """hash -> prompt text, from the transcript of the session the log `name` is of."""
    if not name.startswith("s-"):
        return {}
    try:
        from ..capture.importer import default_folder
        from ..capture.parse import read_transcript

        folder = default_folder(root)
        with os.scandir(folder) as entries:
            files = [e.path for e in entries if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)]
        for path in files:
            stem = os.path.basename(path)[: -len(".jsonl")]
            if "s-" + name_hash(stem.encode("utf-8", "surrogateescape")) == name:
                session = read_transcript(path, TRANSCRIPT_READ_BYTES)
                return {name_hash(p.encode("utf-8", "surrogateescape")): p for p in session.prompts}
    except (OSError, ValueError):
        pass
    return {}


def _pairs(value: object) -> list[tuple[str, str]]:
    out = []
    for item in value if isinstance(value, list) else ():
        if isinstance(item, list) and item and isinstance(item[0], str):
            out.append((item[0], item[1] if len(item) > 1 and isinstance(item[1], str) else ""))
        elif isinstance(item, str):
            out.append((item, ""))
    return out


def session(root: str, conn: sqlite3.Connection, name: str) -> dict[str, Any] | None:
    """One session's events in order, each memory named with its title as the index has it
    now (None for one gone since); None when the log has no session of that name."""
    log = usage.session(root, name)
    if log is None:
        return None
    prompts = _transcript_prompts(root, name)
    events: list[dict[str, Any]] = []
    for ev in log.events:
        kind = ev.get("e")
        t = ev.get("t") if isinstance(ev.get("t"), (int, float)) else None
        if kind == "prompt":
            h = ev.get("h") if isinstance(ev.get("h"), str) else ""
            events.append({"e": "prompt", "t": t, "hash": h, "prompt": prompts.get(h),
                           "injected": _pairs(ev.get("k")), "dropped": _pairs(ev.get("d"))})
        elif kind == "shown":
            events.append({"e": "shown", "t": t, "channel": str(ev.get("c", "?")), "paths": [p for p, _ in _pairs(ev.get("k"))]})
        elif kind == "open" and isinstance(ev.get("k"), str):
            events.append({"e": "open", "t": t, "channel": str(ev.get("c", "?")), "path": ev["k"]})
    named: set[str] = set()
    for ev in events:
        named.update(p for p, _ in ev.get("injected", ()))
        named.update(p for p, _ in ev.get("dropped", ()))
        named.update(ev.get("paths", ()))
        if "path" in ev:
            named.add(ev["path"])
    rows = browse.rows_by_path(conn, sorted(named))
    prefix = display_prefix(root)
    titles = {p: {"title": rows[p][4], "category": rows[p][3], "status": rows[p][6]} for p in named if p in rows}
    return {"name": name, "mtime": log.mtime, "events": events, "titles": titles,
            "shown": {p: shown(prefix, p) or p for p in named}, "found_prompts": len(prompts)}
