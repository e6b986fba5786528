"""A reader that answers from the files as they are: the index as it is, or after an
incremental sync when a file changed (`index.is_current`: the folders, the racy files of the
last sync, and one stat of every memory file, so an edit in place is seen too; or one
question to the root's running watcher, `watched.is_current_asking_watcher`).
`memindex search`, `explain` and `candidate` read through it; a fresh index costs them no
import of the writer side. A long-running reader (the MCP server) may bring its own watch
on the root (`memindex.watch.resident`), which spares the check while nothing changed."""

from __future__ import annotations

import sqlite3
import sys
import os

from .. import index
from ..config import Config
from ..errors import IndexUnavailable, LockTimeout
from .fresh import documents_current
from .watched import is_current_asking_watcher


TYPE_CHECKING = False  # annotations only: `search` never imports typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    class Watch(Protocol):
        """A resident reader's own watch on the root (memindex.watch.resident.ResidentWatch)."""

        def checkpoint(self) -> object: ...
        def vouches(self, token: object, conn: sqlite3.Connection) -> bool: ...
        def confirm(self, token: object, conn: sqlite3.Connection) -> None: ...


def open_fresh_reader(
    root: str | os.PathLike[str], cfg: Config, allow_sync: bool = True, watch: Watch | None = None
) -> sqlite3.Connection:
    """A read-only connection, after an incremental sync when a memory file changed since
    the last one or the index is missing (a short lock wait: if another writer is busy, read
    what exists). A long-running reader's `watch` may vouch that nothing changed since its
    last check, which spares the check; every check made here is recorded with it."""
    if not allow_sync:  # `--no-sync`: the index as it is; a stat pass would be thrown away
        return index.open_reader(root)
    token = watch.checkpoint() if watch is not None else None  # before anything is read
    conn = None
    try:
        conn = index.open_reader(root)
        docs = cfg["documents.paths"]
        if watch is not None and watch.vouches(token, conn) and documents_current(conn, root, docs):
            return conn  # (the resident watch sees the memory files; the documents' folders are checked here)
        if is_current_asking_watcher(conn, root, docs):
            if watch is not None:
                watch.confirm(token, conn)
            return conn
    except IndexUnavailable:
        pass
    if conn is not None:
        conn.close()
    conn, synced = _sync_then_open(root, cfg, "could not sync first", "reading the index as it is")
    if synced and watch is not None:
        watch.confirm(token, conn)
    return conn


def fresh_reader(root, cfg, allow_sync: bool = True, watch=None) -> Callable[[], sqlite3.Connection]:
    """`read_index`'s reader for the CLI, MCP and UI: the index after an incremental sync
    when a file changed (`open_fresh_reader`)."""

    def open_it():
        return open_fresh_reader(root, cfg, allow_sync=allow_sync, watch=watch)

    return open_it


def sync_then_open(
    root: str | os.PathLike[str], cfg: Config, failed: str, instead: str, progress: bool = False
) -> sqlite3.Connection:
    """A sync with a short lock wait, then a read-only connection. When the sync fails
    (another writer busy, a full disk), the index as it is, and one stderr line
    `memindex: <failed> (<why>); <instead>`."""
    return _sync_then_open(root, cfg, failed, instead, progress)[0]


def _sync_then_open(
    root: str | os.PathLike[str], cfg: Config, failed: str, instead: str, progress: bool = False
) -> tuple[sqlite3.Connection, bool]:
    """`sync_then_open`, and whether the sync ran."""
    try:
        from .sync import sync  # only when needed: a fresh index costs no writer imports

        sync(root, cfg, lock_timeout=min(float(cfg["index.lock_timeout_s"]), 3.0), progress=progress)
    except (LockTimeout, IndexUnavailable, sqlite3.Error, OSError) as exc:
        try:
            conn = index.open_reader(root)
        except IndexUnavailable as again:
            raise IndexUnavailable(f"{again} (the sync before it failed: {exc})") from None
        print(f"memindex: {failed} ({exc}); {instead}", file=sys.stderr)
        return conn, False
    return index.open_reader(root), True
