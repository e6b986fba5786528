"""Captured session summaries do not pile up: the newest `capture.keep_sessions` and every
one of the last `capture.keep_days` stay as they are (a user back from a long break still
finds their last sessions); the others are folded into one digest per month (a
session summary listing each session's day, goal, outcome and the memories it saved;
its files as related files), then archived with the digest named in the reason; or,
with `capture.older: "archive"`, archived alone. Archived summaries stay on disk, out of
search and injection (`memindex unarchive` brings one back) and `gc` never deletes them.

Only summaries capture wrote (tag `captured-session`); those a person wrote, and the
digests themselves (tag `session-digest`), are never folded. Through the write path,
in the capture job after it wrote the session's summary (never on a hook's path).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from ..config import Config
from ..defaults import CAPTURE_TAG, SUMMARY_MAX_BYTES
from ..errors import MemindexError

DIGEST_TAG = "session-digest"
LINE_CHARS = 240
FILES_MAX = 40


def _captured(conn) -> list[tuple[str, str, str]]:
    """(path, created_at, updated_at) of the active captured summaries, newest first."""
    return conn.execute(
        "SELECT path, created_at, updated_at FROM documents WHERE category = 'session_summary' AND record_status = 'active'"
        " AND tag_key LIKE ? AND tag_key NOT LIKE ? ORDER BY updated_at DESC, path",
        (f"%,{CAPTURE_TAG},%", f"%,{DIGEST_TAG},%"),
    ).fetchall()


def due(root: str, cfg: Config, now: datetime | None = None) -> list[str]:
    """The captured summaries the rule takes out now (their paths in the root)."""
    from ..index.reader import open_fresh_reader

    keep, days = int(cfg["capture.keep_sessions"]), int(cfg["capture.keep_days"])
    if keep <= 0 and days <= 0:
        return []
    now = now or datetime.now(timezone.utc)
    cutoff = (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ") if days > 0 else ""
    conn = open_fresh_reader(root, cfg)
    try:
        rows = _captured(conn)
    finally:
        conn.close()
    return [path for i, (path, _, updated) in enumerate(rows)
            if (keep <= 0 or i >= keep) and (not cutoff or updated < cutoff)]


def fold(root: str, cfg: Config, now: datetime | None = None) -> dict[str, Any]:
    """Apply the rule: {"folded": n, "archived": n, "digests": [paths], "failed": [...]}."""
    from ..policy.recall import read_memory
    from ..write import set_status

    paths = due(root, cfg, now)
    out: dict[str, Any] = {"folded": 0, "archived": 0, "digests": [], "failed": []}
    if not paths:
        return out
    by_month: dict[str, list[dict[str, Any]]] = {}
    for rel in paths:
        try:
            got = read_memory(root, cfg, rel)
        except MemindexError as exc:
            out["failed"].append(f"{rel}: {exc}")
            continue
        mem = got["memory"]
        by_month.setdefault(str(mem.get("created_at") or mem.get("updated_at") or "")[:7] or "undated", []).append(
            {"rel": rel, "memory": mem})
    for month, sessions in sorted(by_month.items()):
        digest = None
        if cfg["capture.older"] == "fold":
            try:
                digest = _digest(root, cfg, month, sessions)
            except MemindexError as exc:
                out["failed"].append(f"digest {month}: {exc}")
                continue
            out["digests"].append(digest)
        for s in sessions:
            reason = f"folded into {digest}" if digest else f"older than the newest {cfg['capture.keep_sessions']} captured sessions"
            try:
                set_status(root, cfg, s["rel"], "archive", reason=reason)
            except MemindexError as exc:
                out["failed"].append(f"{s['rel']}: {exc}")
                continue
            out["folded" if digest else "archived"] += 1
    return out


def _line(mem: dict[str, Any]) -> str:
    c = mem.get("content") if isinstance(mem.get("content"), dict) else {}
    day = str(mem.get("created_at") or "")[:10]
    goal = " ".join(str(c.get("goal") or mem.get("title") or "").split())
    line = f"{day}: {goal}"[:LINE_CHARS]
    extra = [str(c.get("outcome") or "")]
    saved = c.get("saved_memories")
    if isinstance(saved, list) and saved:
        extra.append("saved " + ", ".join(str(p) for p in saved[:3]))
    return f"{line} ({'; '.join(e for e in extra if e)})"


def _digest(root: str, cfg: Config, month: str, sessions: list[dict[str, Any]]) -> str:
    """Create or extend the month's digest; its path as `memindex` shows it."""
    from ..capture.store import existing, ignore_folder, target_folder
    from ..defaults import CAPTURE_FOLDER
    from ..policy.recall import read_memory
    from ..write import save_memories, update_memory

    mem_id = f"sessions-digest-{month}"
    lines, files, saved = [], [], []
    for s in sorted(sessions, key=lambda s: (str(s["memory"].get("created_at") or ""), str(s["memory"].get("updated_at") or ""))):
        mem = s["memory"]
        lines.append(_line(mem))
        for f in mem.get("related_files") or ():
            if isinstance(f, str) and f not in files:
                files.append(f)
        c = mem.get("content") if isinstance(mem.get("content"), dict) else {}
        saved += [p for p in c.get("saved_memories") or () if isinstance(p, str) and p not in saved]
    rel = existing(root, mem_id)
    if rel is not None:
        current = read_memory(root, cfg, rel)["memory"]
        c = current.get("content") if isinstance(current.get("content"), dict) else {}
        lines = [*(c.get("completed") or []), *(x for x in lines if x not in (c.get("completed") or []))]
        files = [*(current.get("related_files") or []), *(f for f in files if f not in (current.get("related_files") or []))]
        saved = [*(c.get("saved_memories") or []), *(p for p in saved if p not in (c.get("saved_memories") or []))]
    content: dict[str, Any] = {"goal": f"The captured sessions of {month}, folded into one summary", "outcome": "success",
                               "completed": lines}
    if saved:
        content["saved_memories"] = saved[:50]
    memory = {"title": f"Sessions of {month} ({len(lines)} folded)", "tags": [CAPTURE_TAG, DIGEST_TAG],
              "content": content, "related_files": files[:FILES_MAX]}
    while len(json.dumps(memory, ensure_ascii=False).encode()) > SUMMARY_MAX_BYTES and len(content["completed"]) > 1:
        content["completed"] = content["completed"][1:]  # the oldest lines go first
        memory["title"] = f"Sessions of {month} ({len(content['completed'])} folded, older ones cut)"
    if rel is not None:
        return update_memory(root, cfg, rel, {**memory, "change_summary": f"folded {len(sessions)} more sessions"})["path"]
    folder = target_folder(cfg)
    if folder == CAPTURE_FOLDER:
        ignore_folder(root)
    [answer] = save_memories(root, cfg, [("session_summary", {**memory, "id": mem_id}, folder)], redact=True)
    if isinstance(answer, Exception):
        raise answer
    return answer["path"]
