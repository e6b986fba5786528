"""The session summaries as a timeline: newest first, a page at a time, each with what its
file says the session set out to do and where it ended (read bounded, as `memindex get`
reads a memory), grouped by day."""

from __future__ import annotations

import sqlite3
from typing import Any

from ..config import Config
from ..defaults import CAPTURE_TAG, UI_PAGE_ROWS
from ..errors import MemindexError
from ..index import browse
from ..store.paths import display_prefix
from .listing import row_json

LISTS = ("completed", "in_progress", "blockers", "next_actions", "key_changes")


def _strings(value: object, limit: int = 20) -> list[str]:
    return [v for v in value if isinstance(v, str)][:limit] if isinstance(value, list) else []


def timeline(root: str, cfg: Config, conn: sqlite3.Connection, page: int = 1, include_inactive: bool = False,
             per_page: int = UI_PAGE_ROWS) -> dict[str, Any]:
    """{days: [{day, sessions: [...]}], total, page, pages}: one page of the summaries."""
    from ..store.files import parse_json, read_bytes

    where = browse.Where(categories=("session_summary",), statuses=() if include_inactive else ("active",))
    total, rows = browse.page(conn, where, "updated", per_page, (page - 1) * per_page)
    prefix = display_prefix(root)
    max_bytes = int(cfg["index.max_file_bytes"])
    days: list[dict[str, Any]] = []
    for row in rows:
        item = row_json(row, prefix)
        item["captured"] = CAPTURE_TAG in item["tags"]
        content: dict[str, Any] = {}
        source: dict[str, Any] = {}
        if not item["document"]:
            try:
                data = parse_json(read_bytes(root, row[1], max_bytes)[0])
            except (MemindexError, OSError):
                data = None
            if isinstance(data, dict):
                content = data.get("content") if isinstance(data.get("content"), dict) else {}
                source = data.get("source") if isinstance(data.get("source"), dict) else {}
        item["goal"] = content.get("goal") if isinstance(content.get("goal"), str) else ""
        item["outcome"] = content.get("outcome") if isinstance(content.get("outcome"), str) else ""
        for key in LISTS:
            item[key] = _strings(content.get(key))
        item["session_id"] = source.get("session_id") if isinstance(source.get("session_id"), str) else None
        day = (item["updated_at"] or "")[:10] or "undated"
        if not days or days[-1]["day"] != day:
            days.append({"day": day, "sessions": []})
        days[-1]["sessions"].append(item)
    return {"days": days, "total": total, "page": page, "pages": max(1, -(-total // per_page))}
