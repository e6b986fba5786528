"""Is the index the files as they are? The checks above the O(1) folder one (`db.is_stale`):
`stat_fingerprint` and `is_current` for `search` and `explain` (one stat of every memory
file), `sync_due` for the prompt hook (one meta read: is a periodic check due?).
docs/reliability.md, "Freshness".
"""

from __future__ import annotations

import os
import time

from ..defaults import FOLDERS, FRESH_SYNC_COST_FACTOR, FRESH_SYNC_MIN_S, FUTURE_SLACK_S
from ..lean import loads, sqlite3
from .db import is_stale


_MASK = (1 << 64) - 1


def stat_fingerprint(root: str | os.PathLike[str]) -> list[int]:
    """[files, digest]: one pass of `stat` over the memory files (mtime_ns, ctime_ns, size,
    inode), folded into a number that moves when any of them does. An in-place edit moves
    no folder mtime, so `search` and `explain` compare this with the one the last full sync
    stored (`is_current`): O(files) stats, no SQL row per file (about 20 ms at 10k)."""
    count = acc = 0
    for name in FOLDERS:
        try:
            entries = os.scandir(os.path.join(root, name))
        except OSError:
            continue
        with entries:
            for entry in entries:
                n = entry.name
                if not n.endswith(".json") or n[0] == ".":
                    continue
                try:
                    st = entry.stat()
                except OSError:
                    continue
                count += 1
                acc += (st.st_mtime_ns * 0x9E3779B97F4A7C15 ^ st.st_ctime_ns * 0xC2B2AE3D27D4EB4F
                        ^ st.st_size * 0x165667B19E3779F9 ^ st.st_ino) & _MASK
    return [count, acc & _MASK]


def is_current(conn: sqlite3.Connection, root: str | os.PathLike[str]) -> bool:
    """The full check `search` and `explain` make before answering: the folders (files
    created, deleted, renamed), no file left to re-read under the racy-timestamp rule, and
    every file's stat as the last full sync saw it (an edit in place)."""
    if is_stale(conn, root):
        return False
    row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
    try:
        return row is not None and loads(row[0]) == stat_fingerprint(root)
    except (ValueError, TypeError):
        return False


def sync_due(conn: sqlite3.Connection) -> float | None:
    """The prompt hook's O(1) question: is the last full sync older than its interval
    (FRESH_SYNC_MIN_S, or FRESH_SYNC_COST_FACTOR times its own duration on a large store),
    or did it leave files to re-read? Returns that interval when a check is due (the
    hook starts at most one per interval), else None. A stamp in the future (the clock
    went back) is due."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('last_sync_ns', 'sync_ms', 'fingerprint')"))
    try:
        last = int(loads(meta.get("last_sync_ns", "0")))
        interval = max(FRESH_SYNC_MIN_S, FRESH_SYNC_COST_FACTOR * float(loads(meta.get("sync_ms", "0"))) / 1000.0)
    except (ValueError, TypeError):
        return FRESH_SYNC_MIN_S
    if meta.get("fingerprint", "null") == "null":
        return interval  # the last sync left racy files (or never ran whole)
    age = (time.time_ns() - last) / 1e9
    return interval if age < -FUTURE_SLACK_S or age > interval else None
