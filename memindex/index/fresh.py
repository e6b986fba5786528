"""Is the index the files as they are? The O(1) folder check (`is_stale`), and above it
`stat_fingerprint` and `is_current` for `search` and `explain` (one stat of every memory
file), `sync_due` for the prompt hook (one meta read: is a periodic check due?).
docs/reliability.md, "Freshness".
"""

from __future__ import annotations

import os
import time

from ..defaults import FOLDERS, FRESH_SYNC_COST_FACTOR, FRESH_SYNC_MIN_S, FUTURE_SLACK_S, SPAWN_MARKER
from ..lean import sqlite3
from ..store import rootfs
from .db import meta_values

TYPE_CHECKING = False  # annotations only
if TYPE_CHECKING:
    from collections.abc import Callable


_MASK = (1 << 64) - 1


def folder_mtimes(root: str | os.PathLike[str]) -> dict[str, int]:
    """mtime_ns of each category folder (0 when absent): the O(1) freshness key.

    A folder's mtime moves when a file in it is created, deleted or renamed (atomic writes
    included); an in-place edit is caught by the PostToolUse hook, watch, or the next sync.
    """
    out: dict[str, int] = {}
    for name in FOLDERS:
        try:
            out[name] = os.stat(os.path.join(root, name)).st_mtime_ns
        except OSError:
            out[name] = 0
    return out


def _doc_dirs_moved(root: str | os.PathLike[str], dirs: object) -> bool:
    """Has a folder of the registered documents (as the last sync walked them) changed?"""
    if not dirs:
        return False
    from ..store.paths import project_of

    project = project_of(root)
    for folder, mtime in dirs.items():  # type: ignore[union-attr]
        try:
            if os.stat(os.path.join(project, folder)).st_mtime_ns != mtime:
                return True
        except OSError:
            if mtime:
                return True
    return False


def is_stale(conn: sqlite3.Connection, root: str | os.PathLike[str], doc_paths: object = None) -> bool:
    """The cheap check: have the category folders (or the registered documents' folders, or
    what is registered: `doc_paths`, when the caller has the settings) changed since the last
    sync, or has the racy window of a folder the last sync saw change just then passed (on 1 s
    timestamps a file created in that second leaves the folder's mtime as the sync saw it)?"""
    try:
        meta = meta_values(conn, ("folder_mtimes", "racy_until_ns", "doc_dirs", "doc_paths"))
        if "folder_mtimes" not in meta or meta["folder_mtimes"] != folder_mtimes(root):
            return True
        if doc_paths is not None and (meta.get("doc_paths") or {}) != doc_paths:
            return True
        if _doc_dirs_moved(root, meta.get("doc_dirs")):
            return True
        return time.time_ns() >= int(meta.get("racy_until_ns") or 0) > 0
    except (ValueError, TypeError, RecursionError):
        return True  # damaged: the sync it triggers repairs it


def now_ns() -> int:
    return time.time_ns()


def stat_fingerprint(root: str | os.PathLike[str], keep: dict[str, list[os.DirEntry]] | None = None) -> list[int]:
    """[files, digest]: one pass of `stat` over the memory files (mtime_ns, ctime_ns, size,
    inode), folded into a number that moves when any of them does. An in-place edit moves
    no folder mtime, so `search` and `explain` compare this with the one the last full sync
    stored (`is_current`): O(files) stats, no SQL row per file.
    `keep` (a sync) receives each listed folder's entries, their stat cached, for its walk:
    one stat per file, not two."""
    count = acc = 0
    for name in FOLDERS:
        try:
            entries = os.scandir(os.path.join(root, name))
        except OSError:
            continue
        with entries:
            if keep is not None:
                keep[name] = entries = list(entries)  # type: ignore[assignment]
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


def doc_fingerprint(root: str | os.PathLike[str], dirs: object, singles: object, newest: list[int] | None = None) -> list[int]:
    """[files, digest] of the registered documents' stats (mtime, ctime, size): the Markdown
    files directly in each folder the last sync walked (`dirs`) and the files registered one
    by one (`singles`), as `stat_fingerprint` is for memory files."""
    from ..defaults import DOC_SUFFIXES
    from ..store.paths import project_of

    project = project_of(root)
    count = acc = 0

    def add(st: os.stat_result) -> None:
        nonlocal count, acc
        if newest is not None:
            newest[0] = max(newest[0], st.st_mtime_ns, st.st_ctime_ns)
        count += 1
        acc += (st.st_mtime_ns * 0x9E3779B97F4A7C15 ^ st.st_ctime_ns * 0xC2B2AE3D27D4EB4F
                ^ st.st_size * 0x165667B19E3779F9) & _MASK

    for folder in dirs or ():  # type: ignore[union-attr]
        try:
            with os.scandir(os.path.join(project, folder)) as entries:
                for entry in entries:
                    n = entry.name
                    if n[0] != "." and n.lower().endswith(DOC_SUFFIXES) and n.isprintable():
                        try:
                            st = entry.stat()
                        except OSError:
                            continue
                        if not entry.is_dir():
                            add(st)
        except OSError:
            continue
    for rel in singles or ():  # type: ignore[union-attr]
        try:
            add(os.stat(os.path.join(project, rel)))
        except OSError:
            continue
    return [count, acc & _MASK]


def is_current(conn: sqlite3.Connection, root: str | os.PathLike[str], doc_paths: object = None) -> bool:
    """The full check `search` and `explain` make before answering: the folders (files
    created, deleted, renamed), no file left to re-read under the racy-timestamp rule, and
    every file's stat as the last full sync saw it (an edit in place), documents too."""
    if is_stale(conn, root, doc_paths):
        return False
    try:
        stored = meta_values(conn, ("fingerprint",)).get("fingerprint")
    except (ValueError, TypeError, RecursionError):
        return False
    return stored is not None and stored == stat_fingerprint(root) and documents_current(conn, root, doc_paths)


def documents_moved(root: str | os.PathLike[str], doc_paths: object) -> bool:
    """Have the registered documents changed since the last sync (`documents_current`)? For
    `memindex watch`, whose observer sees the memory root only; True on a damaged record."""
    from .db import open_reader
    from ..errors import IndexUnavailable

    try:
        conn = open_reader(root)
    except IndexUnavailable:
        return False  # the missing index is the watcher's own case
    try:
        return not documents_current(conn, root, doc_paths)
    except sqlite3.Error:
        return True
    finally:
        conn.close()


def documents_current(conn: sqlite3.Connection, root: str | os.PathLike[str], doc_paths: object = None) -> bool:
    """Does the index hold the registered documents as they are: what is registered
    (`doc_paths`, when the caller has the settings), their folders, and every file's stat?
    True at once where none is registered and none was."""
    try:
        meta = meta_values(conn, ("doc_fingerprint", "doc_dirs", "doc_singles", "doc_paths"))
    except (ValueError, TypeError, RecursionError):
        return False
    if doc_paths is not None and (meta.get("doc_paths") or {}) != doc_paths:
        return False
    if not (meta.get("doc_dirs") or meta.get("doc_singles")):
        return True
    if _doc_dirs_moved(root, meta.get("doc_dirs")):
        return False
    return meta.get("doc_fingerprint") == doc_fingerprint(root, meta.get("doc_dirs"), meta.get("doc_singles"))


def sync_due(conn: sqlite3.Connection) -> float | None:
    """The prompt hook's O(1) question: is the last full sync older than its interval
    (FRESH_SYNC_MIN_S, or FRESH_SYNC_COST_FACTOR times its own duration on a large store),
    or did it leave files to re-read? Returns that interval when a check is due (the
    hook starts at most one per interval), else None. A stamp in the future (the clock
    went back) is due."""
    try:
        meta = meta_values(conn, ("last_sync_ns", "sync_ms", "fingerprint"))
        last = int(meta.get("last_sync_ns") or 0)
        interval = max(FRESH_SYNC_MIN_S, FRESH_SYNC_COST_FACTOR * float(meta.get("sync_ms") or 0) / 1000.0)
    except (ValueError, TypeError, RecursionError):
        return FRESH_SYNC_MIN_S
    if meta.get("fingerprint") is None:
        return interval  # the last sync left racy files (or never ran whole)
    age = (time.time_ns() - last) / 1e9
    return interval if age < -FUTURE_SLACK_S or age > interval else None


def refresh(conn: sqlite3.Connection, root: str | os.PathLike[str], say: Callable[[str], None],
            doc_paths: object = None) -> None:
    """The prompt hook's freshness, O(1): a stale index (files added, removed, renamed: the
    folders' mtimes) gets a background sync; one whose last full sync is older than its
    interval (`sync_due`) gets a background `sync --if-changed`, which sees edits made in
    place. The process starter loads only then."""
    if is_stale(conn, root, doc_paths):
        interval, extra = FRESH_SYNC_MIN_S, ()
    elif (interval := sync_due(conn)) is not None and not rootfs.guarded(os.path.join(root, SPAWN_MARKER), interval):
        extra = ("--if-changed",)  # once per interval: the prompts between load nothing more
    else:
        return
    from .freshen import spawn_sync

    spawn_sync(root, say, None, 0.0, interval, *extra)
