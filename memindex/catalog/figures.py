"""The store in figures, for the pictures: memory files by category and month (written and
in all), the bytes of each category and of the index, and this user's use of the memories
most shown or opened (memindex/usage.py: hook injections, other listings, opens)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from ..config import Config
from ..defaults import CATEGORIES, INDEX_FILE, UI_CHART_MEMORIES, UI_CHART_MONTHS
from ..index import browse


def _months(first: str, last: str) -> list[str]:
    """Every YYYY-MM from `first` to `last`."""
    y, m = int(first[:4]), int(first[5:7])
    out = []
    while f"{y:04d}-{m:02d}" <= last and len(out) < 12 * 200:
        out.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _valid_month(text: str) -> bool:
    return len(text) == 7 and text[:4].isdigit() and text[4] == "-" and text[5:].isdigit() and 1 <= int(text[5:]) <= 12


def by_month(conn: sqlite3.Connection, months: int = UI_CHART_MONTHS) -> dict[str, Any]:
    """{months: [...], written: {category: [n per month]}, total: [memories by the end of
    each month]}: the last `months` months that have memories (created_at)."""
    rows = [(m, c, n) for m, c, n in browse.by_month(conn) if _valid_month(m)]
    if not rows:
        return {"months": [], "written": {}, "total": [], "before": 0}
    every = _months(rows[0][0], rows[-1][0])
    shown = every[-months:]
    index = {m: i for i, m in enumerate(shown)}
    written = {c: [0] * len(shown) for c in CATEGORIES}
    before = 0
    for m, c, n in rows:
        if m in index:
            written.setdefault(c, [0] * len(shown))[index[m]] += n
        else:
            before += n
    total, running = [], before
    for i in range(len(shown)):
        running += sum(v[i] for v in written.values())
        total.append(running)
    return {"months": shown, "written": {c: v for c, v in written.items() if any(v)}, "total": total, "before": before}


def sizes(root: str, conn: sqlite3.Connection) -> dict[str, Any]:
    """{categories: [{category, files, bytes, sections}], index_bytes, files, bytes}."""
    cats = [{"category": c, "files": int(f or 0), "bytes": int(b or 0), "sections": int(s or 0)}
            for c, f, b, s in browse.sizes(conn)]
    index_bytes = 0
    for suffix in ("", "-wal"):
        try:
            index_bytes += os.stat(os.path.join(root, INDEX_FILE + suffix)).st_size
        except OSError:
            pass
    return {"categories": cats, "index_bytes": index_bytes, "files": sum(c["files"] for c in cats),
            "bytes": sum(c["bytes"] for c in cats), "sections": sum(c["sections"] for c in cats)}


def use(root: str, cfg: Config, conn: sqlite3.Connection, limit: int = UI_CHART_MEMORIES) -> dict[str, Any]:
    """The memories this user's sessions were shown or opened most: {enabled, memories:
    [{path, title, category, injected, listed, opened}], summary}."""
    if not cfg["review.usage"]:
        return {"enabled": False, "memories": [], "summary": None}
    from .. import usage

    uses = usage.counts(root)
    used = [(p, u) for p, u in uses.items() if u.shown or u.opened]  # (a memory only ever dropped: not drawn)
    ranked = sorted(used, key=lambda kv: (-(kv[1].shown + kv[1].opened), kv[0]))[:limit]
    paths = [p for p, _ in ranked]
    rows = browse.rows_by_path(conn, paths)
    docs = {p for p in paths if p.startswith("@")}
    for p in docs:  # a document's use counts against its file: name it by its first section
        first = browse.document_rows(conn, p[1:])
        if first:
            rows[p] = first[0]
    out = []
    for path, u in ranked:
        row = rows.get(path)
        hook = u.shown_by.get("hook", 0)
        out.append({"path": row[1] if row else path, "title": row[4] if row else None, "category": row[3] if row else None,
                    "injected": hook, "listed": u.shown - hook, "opened": u.opened})
    return {"enabled": True, "memories": out, "summary": usage.summary(uses)}
