"""Pages of the store's rows under filters, the facets to filter by, and the provenance
(`source.kind`) of every memory file: what the browse page lists.

A memory's provenance lives in its file, not in the index: `Provenance` reads each file's
`source` once per version of the file (the index's mtime and size of it) and keeps it in
memory, so a filter by provenance costs a lookup after the first page that needs it.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any

from ..defaults import CATEGORIES, RECORD_STATUSES, UI_PAGE_ROWS, UI_TOP_TAGS
from ..errors import UsageError
from ..index import browse
from ..index.reads import counts_by_status
from ..lean import loads
from ..text.render import shown

NO_SOURCE = "none"  # the provenance filter's value for memories written by hand or by the skills


def _json_list(raw: object) -> list:
    try:
        value = loads(raw) if isinstance(raw, str) and raw else []
    except ValueError:
        return []
    return value if isinstance(value, list) else []


@dataclass
class Filters:
    """What the browse page asks for; `from_query` checks every value against what it can be."""

    categories: list[str] = field(default_factory=list)
    status: str = "active"  # active, retired, archived, or all
    tag: str = ""
    kind: str = "all"
    source: str = ""  # a `source.kind`, NO_SOURCE, or "" for any
    file: str = ""
    updated_from: str = ""
    updated_to: str = ""
    order: str = "updated"
    page: int = 1

    @classmethod
    def from_query(cls, query: Any) -> Filters:
        """From a page's query string (a multi-dict with `get` and `getlist`)."""
        cats = [c for c in query.getlist("category") if c]
        bad = [c for c in cats if c not in CATEGORIES]
        if bad:
            raise UsageError(f"no category {bad[0]!r} (one of {', '.join(CATEGORIES)})")
        status = query.get("status") or "active"
        if status not in (*RECORD_STATUSES, "all"):
            raise UsageError(f"no status {status!r}")
        kind = query.get("kind") or "all"
        if kind not in browse.KINDS:
            raise UsageError(f"no kind {kind!r}")
        order = query.get("sort") or "updated"
        if order not in browse.ORDERS:
            raise UsageError(f"no order {order!r}")
        try:
            page = max(1, min(int(query.get("page") or 1), 1_000_000))
        except ValueError:
            raise UsageError("page must be a number") from None
        dates = {k: (query.get(k) or "").strip() for k in ("from", "to")}
        for k, v in dates.items():
            if v and not (len(v) <= 20 and all(ch.isdigit() or ch in "-:TZ" for ch in v)):
                raise UsageError(f"{k}: a date like 2026-03 or 2026-03-14")
        return cls(cats, status, (query.get("tag") or "").strip()[:100], kind, (query.get("source") or "").strip()[:64],
                   (query.get("file") or "").strip()[:300], dates["from"], dates["to"], order, page)

    def where(self) -> browse.Where:
        return browse.Where(
            categories=self.categories, statuses=() if self.status == "all" else (self.status,), tag=self.tag or None,
            kind=self.kind, file=self.file or None, updated_from=self.updated_from or None,
            updated_to=self.updated_to or None)


class Provenance:
    """path -> `source.kind` ("" when none) of every memory file, each file read once per
    version (the index's mtime and size of it), through `store.files.read_source`. The
    whole table is checked against the index only when the index's rows changed (a count
    and sums over them: one scan in SQLite)."""

    def __init__(self, root: str, max_bytes: int) -> None:
        self.root, self.max_bytes = root, max_bytes
        self._known: dict[str, tuple[int, int, str]] = {}
        self._key: tuple | None = None
        self._counts: dict[str, int] = {}
        self._kinds: dict[str, str] = {}
        self._lock = threading.Lock()

    def kinds(self, conn: sqlite3.Connection) -> dict[str, str]:
        from ..store.files import read_source

        key = browse.stats_key(conn)
        with self._lock:
            if key != self._key:
                known = self._known
                fresh: dict[str, tuple[int, int, str]] = {}
                for rel, mtime, size in browse.all_stats(conn):
                    have = known.get(rel)
                    if have is not None and have[0] == mtime and have[1] == size:
                        fresh[rel] = have
                        continue
                    src = read_source(self.root, rel, self.max_bytes)
                    fresh[rel] = (mtime, size, (src or {}).get("kind", ""))
                self._known, self._key = fresh, key
                counts: dict[str, int] = {}
                for _, _, kind in fresh.values():
                    counts[kind or NO_SOURCE] = counts.get(kind or NO_SOURCE, 0) + 1
                self._counts = dict(sorted(counts.items()))
                self._kinds = {rel: v[2] for rel, v in fresh.items()}
            return self._kinds  # (read-only for callers)

    def of(self, rows: list[tuple]) -> dict[str, str]:
        """path -> kind for these rows (`browse.ROW_COLUMNS`) only: a file read for each one
        not known at its version."""
        from ..store.files import read_source

        out: dict[str, str] = {}
        with self._lock:
            known = self._known
        for row in rows:
            rel, size, mtime = row[1], row[10], row[11]
            if rel.startswith("@"):
                continue
            have = known.get(rel)
            if have is None or have[0] != mtime or have[1] != size:
                src = read_source(self.root, rel, self.max_bytes)
                have = (mtime, size, (src or {}).get("kind", ""))
            out[rel] = have[2]
        return out

    def counts(self, conn: sqlite3.Connection) -> dict[str, int]:
        self.kinds(conn)
        return dict(self._counts)

    def paths(self, conn: sqlite3.Connection, kind: str) -> set[str]:
        want = "" if kind == NO_SOURCE else kind
        return {rel for rel, k in self.kinds(conn).items() if k == want}

    def ready(self) -> bool:
        """Whether `kinds` answers without reading every file first (the first run, done
        in the background at start-up, has finished)."""
        return self._key is not None


def row_json(row: tuple, prefix: str, source: str | None = None, score: float | None = None) -> dict[str, Any]:
    """One row of `browse.ROW_COLUMNS` as the page shows it."""
    rowid, path, mem_id, category, title, tags, status, created, updated, related, size = row[:11]
    return {
        "path": path, "shown": shown(prefix, path) or path, "id": mem_id, "category": category, "title": title,
        "tags": _json_list(tags), "status": status, "created_at": created, "updated_at": updated,
        "related_files": _json_list(related), "size": size, "document": path.startswith("@"), "source": source,
        "score": score,
    }


@dataclass
class Page:
    rows: list[dict[str, Any]]
    total: int
    page: int
    pages: int


def list_rows(conn: sqlite3.Connection, prefix: str, filters: Filters, provenance: Provenance | None,
              per_page: int = UI_PAGE_ROWS) -> Page:
    """One page of rows under the filters, newest first by default."""
    among = provenance.paths(conn, filters.source) if filters.source and provenance is not None else None
    total, rows = browse.page(conn, filters.where(), filters.order, per_page, (filters.page - 1) * per_page, among)
    kinds = provenance.of(rows) if provenance is not None else {}
    pages = max(1, -(-total // per_page))
    return Page([row_json(r, prefix, kinds.get(r[1]) or None) for r in rows], total, filters.page, pages)


def facets(conn: sqlite3.Connection, provenance: Provenance | None) -> dict[str, Any]:
    """Counts to filter by: per category and status, the commonest tags, memory files and
    document sections, provenance kinds."""
    by: dict[str, dict[str, int]] = {c: {s: 0 for s in RECORD_STATUSES} for c in CATEGORIES}
    for category, status, n in counts_by_status(conn):
        by.setdefault(category, {}).setdefault(status, 0)
        by[category][status] += n
    memories, documents = browse.kind_counts(conn)
    return {
        "categories": by, "tags": browse.top_tags(conn, UI_TOP_TAGS), "memories": memories, "documents": documents,
        "sources": provenance.counts(conn) if provenance is not None and provenance.ready() else None,
    }


def with_rows(conn: sqlite3.Connection, prefix: str, hits: list, provenance: Provenance | None) -> list[dict[str, Any]]:
    """Search hits (`policy.recall.search_hits`, in their order) as the page's rows."""
    rows = browse.rows_by_path(conn, [h.path for h in hits])
    kinds = provenance.of(list(rows.values())) if provenance is not None else {}
    out = []
    for h in hits:
        row = rows.get(h.path)
        if row is not None:
            out.append(row_json(row, prefix, kinds.get(h.path) or None, score=round(h.score, 4)))
    return out
