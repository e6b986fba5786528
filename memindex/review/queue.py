"""The review queue: every detector over the store's active memories, the findings kept
in the index for the hooks, acknowledged items left out.

`refresh` runs the detectors (bounded: git calls with a timeout, reads bounded) and
replaces the index's `review` table with what they found, under the writer lock; `queue`
is the list a person or the model acts on (fresh by default, or as the last refresh
left it); `pending` counts it from the index alone, for SessionStart.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

from .. import index
from ..config import Config
from ..errors import MemoryFileError
from ..index import reads
from ..store.files import extract_body, read_bytes
from ..store.paths import display_prefix
from ..text.render import shown
from . import acks
from .items import Entry, Item, sort_items, stored


class Context:
    """What every detector is given: the root, the settings, the entries, the clock."""

    def __init__(self, root: str, cfg: Config, entries: list[Entry], now: datetime) -> None:
        self.root, self.cfg, self.entries, self.now = root, cfg, entries, now
        self.prefix = display_prefix(root)
        self.by_rel = {e.rel: e for e in entries}
        self.notes: dict[str, Any] = {}  # what each detector says of its run (report)

    def shown(self, entry: Entry) -> str:
        return shown(self.prefix, entry.rel) or entry.rel

    def item(self, kind: str, entry: Entry, reason: str, evidence: dict[str, Any], suggested: str, **more: Any) -> Item:
        other = more.pop("other", None)
        return Item(kind, entry, reason, evidence, suggested, self.shown(entry), other,
                    self.shown(other) if other is not None else None, **more)


def load_entries(root: str, cfg: Config, conn) -> list[Entry]:
    """The active memories (their files read, bounded) and document sections the index
    holds. A file is parsed only when it is the one the index read (same stat): sync has
    checked its shape then; one changed since waits for the next sync."""
    import hashlib

    from ..lean import loads

    max_bytes = int(cfg["index.max_file_bytes"])
    out: list[Entry] = []
    for doc, rel, mtime, size, category, title, tags, created, updated, related in reads.review_entries(conn):
        tags_l = loads(tags) if tags else []
        files = loads(related) if related else []
        if rel.startswith("@"):
            out.append(Entry(rel, doc, mtime, category, title, tags_l, created, updated, files, {}, "", title))
            continue
        try:
            raw, st = read_bytes(root, rel, max_bytes)
        except MemoryFileError:
            continue  # gone or broken since the last sync: the next sync says so
        if st.mtime_ns != mtime or (size != -1 and st.size != size):
            continue
        try:
            data = loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        questions = [q for q in data.get("questions") or () if isinstance(q, str)] if isinstance(data.get("questions"), list) else []
        text = "\n".join([title, extract_body(category, data.get("content")), *questions])
        out.append(Entry(rel, doc, mtime, category, title, tags_l, created, updated, files, data,
                         hashlib.sha256(raw).hexdigest(), text))
    return out


def detect(ctx: Context) -> list[Item]:
    """Every detector's items for these entries (unsorted, acknowledged ones included)."""
    from . import conflicts, expiry, stale, use

    items: list[Item] = []
    for name, run in (("expired", expiry.detect), ("stale", stale.detect), ("conflicts", conflicts.detect),
                      ("unused", use.detect)):
        started = time.perf_counter()
        items += run(ctx)
        ctx.notes.setdefault("ms", {})[name] = round((time.perf_counter() - started) * 1000, 1)
    return items


def refresh(root: str, cfg: Config, *, now: datetime | None = None, allow_sync: bool = True) -> dict[str, Any]:
    """Run the detectors and store their findings in the index (the hooks read them);
    returns the report: counts by kind, timings, what git said. `allow_sync=False`: the
    index as it is (SessionStart starts its own sync beside this one: a second full walk
    would only repeat it; findings are keyed to each file's mtime, so a memory that sync
    changes is checked again next time)."""
    from ..index.reader import open_fresh_reader
    from ..index.sync import writer_lock

    started = time.perf_counter()
    now = now or datetime.now(timezone.utc)
    conn = open_fresh_reader(root, cfg, allow_sync=allow_sync)
    try:
        entries = load_entries(root, cfg, conn)
    finally:
        conn.close()
    ctx = Context(root, cfg, entries, now)
    items = detect(ctx)
    rows = [(i.entry.doc, i.entry.rel, i.entry.mtime_ns, i.kind, i.key, i.basis, i.reason,
             json.dumps(i.evidence, ensure_ascii=False, sort_keys=True), i.suggested, i.other_path, i.note, int(i.dead))
            for i in items]
    report = {
        "checked_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "memories": len(entries), "items": len(items),
        "by_kind": _by_kind(items), **ctx.notes, "ms_total": round((time.perf_counter() - started) * 1000, 1),
    }
    with writer_lock(root, float(cfg["index.lock_timeout_s"])):
        wconn, rebuilt = index.open_writer(root)
        try:
            if rebuilt is None:  # a rebuilt index renumbered its rows: the next refresh stores them
                with index.transaction(wconn):
                    index.replace_review(wconn, rows)
                    index.set_meta(wconn, review=report)
        finally:
            wconn.close()
    report["stored"] = rebuilt is None
    report["_items"] = items
    return report


def _by_kind(items: list[Item]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i.kind] = out.get(i.kind, 0) + 1
    return out


def queue(root: str, cfg: Config, *, fresh: bool = True, include_kept: bool = False,
          now: datetime | None = None) -> list[Item]:
    """The review queue: a fresh run of the detectors (`fresh`), or what the last one
    stored; acknowledged items left out unless `include_kept` (then marked `kept`)."""
    if fresh:
        items = refresh(root, cfg, now=now)["_items"]
    else:
        items = stored_items(root, cfg)
    kept = acks.load(root)
    out = []
    for item in items:
        item.kept = acks.quiet(kept, item.key, item.basis)
        if include_kept or not item.kept:
            out.append(item)
    return sort_items(out)


def stored_items(root: str, cfg: Config) -> list[Item]:
    """The items the last refresh stored, of memories unchanged since."""
    from ..index.reader import open_fresh_reader

    conn = open_fresh_reader(root, cfg)
    try:
        rows = reads.review_rows(conn)
    finally:
        conn.close()
    prefix = display_prefix(root)
    return [stored(row, prefix) for row in rows]


def last_report(conn) -> dict[str, Any] | None:
    """The meta the last refresh stored ({checked_at, memories, items, by_kind, ms...})."""
    value = index.get_meta(conn).get("review")
    return value if isinstance(value, dict) else None
