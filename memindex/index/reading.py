"""The one way an adapter opens the index for reading (`read_index`): as the CLI reads it
(after a sync when a file changed) or as the hooks do (as it is, refreshed in the
background, built when missing, rebuilt when damaged). Standard library only on the
hooks' side: the prompt hook runs it under `python3 -I -S`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # annotations only
if TYPE_CHECKING:
    from collections.abc import Callable

    Say = Callable[[str], None]


def read_index(root, cfg, say: Say, use: Callable, *, reader: Callable | None = None, build: bool = True,
               refresh: bool = True):
    """The one way an adapter reads the index: `use(conn)` on a read-only connection, closed
    after. `reader` (the CLI, MCP, UI: `reader.fresh_reader`) opens it: after an incremental sync
    when a file changed (`reader.open_fresh_reader`). Else (the hooks): the
    index as it is, a stale one `refresh`ed in the background for next time; with `build`, a
    missing one built first (a small store, within COLD_SYNC_BUDGET_S) and a damaged one
    rebuilt (readers cannot see damage past the header on opening: the repair starts
    here, instead of the hook staying silent on every prompt). Raises IndexUnavailable when
    there is none to read (IndexTooNew: never rebuilt by this older copy)."""
    if reader is not None:
        conn = reader()
        try:
            return use(conn)
        finally:
            conn.close()
    from ..errors import IndexTooNew, IndexUnavailable
    from ..lean import sqlite3
    from .db import is_corruption

    try:
        return _read(root, cfg, say, use, refresh)
    except IndexTooNew:
        raise
    except IndexUnavailable:
        from .freshen import build_missing_index  # (only then: a fresh index's prompt loads no starter)

        if not build or not build_missing_index(root, say):
            raise
        return _read(root, cfg, say, use, refresh)
    except sqlite3.DatabaseError as exc:
        if not build or not is_corruption(exc):
            raise
        say(f"the index is damaged ({exc})")
        from .freshen import build_missing_index

        if not build_missing_index(root, say, rebuild=True):
            raise IndexUnavailable("a rebuild was started") from None
        return _read(root, cfg, say, use, refresh)


def _read(root, cfg, say: Say, use: Callable, refresh: bool):
    from .db import open_reader
    from .fresh import refresh as refresh_if_stale

    conn = open_reader(root, busy_ms=1000)
    try:
        if refresh:
            refresh_if_stale(conn, root, say, cfg["documents.paths"])
        return use(conn)
    finally:
        conn.close()

