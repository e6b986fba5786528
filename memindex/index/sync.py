"""Bring the index up to date with the memory files: the only writer of `.index.db`.

An (mtime, size, ctime) diff decides what to re-read; all changes go in one transaction
under one lock on `.index.lock` (filelock), so a killed sync leaves the previous index intact.
"""

from __future__ import annotations

import math
import os
import random
import sqlite3
import time
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..defaults import QUEUE_LOCK_S
from .. import index
from . import docsync, health
from ..store import rootfs
from ..config import Config, load_config
from ..defaults import (
    FOLDERS, INDEX_MD, LOCK_FILE, LOG_FILE, QUEUE_FILE, QUEUE_MAX_BYTES, RACY_WINDOW_NS, SYNC_PROGRESS_MIN, TARGETED_MAX,
    WAIT_FILE,
)
from ..store.atomic import replace_atomic
from .db import built_by
from ..text.progress import progress_bar
from ..text.render import safe_relpath
from ..store.paths import FileStat, display_prefix
from ..errors import LockTimeout, MemoryFileError, UnsafeFile, UsageError
from ..store.files import REFUSED, folder_refusal, load_memory, stat_file, walk


@contextmanager
def writer_lock(root: Path, timeout: float) -> Iterator[None]:
    """The single-writer lock on `<root>/.index.lock` (`locks.exclusive`: an OS lock through
    filelock, released by the OS if we die; a lock path that is not a regular file is
    replaced, never a reason to stop syncing)."""
    from ..store.locks import exclusive

    with exclusive(os.path.join(root, LOCK_FILE), check_timeout(timeout)):
        yield


def check_timeout(timeout: float) -> float:
    """A finite, non-negative number of seconds (NaN and negatives would wait forever)."""
    if not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout < 0:
        raise UsageError(f"lock timeout must be a finite number of seconds >= 0, got {timeout!r}")
    return float(timeout)


@contextmanager
def waiting_turn(root: Path) -> Iterator[bool]:
    """Background syncs coalesce: at most one waits for the writer lock per root. Yields
    False when another one already waits: it has not taken the queue (`take_handed`) nor
    walked the files yet, so it will see this caller's change too, and this caller can
    leave at once."""
    from ..store.locks import attempt

    with attempt(os.path.join(root, WAIT_FILE)) as mine:
        yield mine




@contextmanager
def _queue(root: Path, flags: int) -> Iterator[int]:
    """The hand-over queue `<root>/.sync.queue`, open and locked (rootfs.open_fd: never a
    link, FIFO or another user's file). Raises OSError or UnsafeFile."""
    fd = rootfs.open_fd(os.path.join(root, QUEUE_FILE), flags, 0o600)
    try:
        deadline = time.monotonic() + QUEUE_LOCK_S
        while not rootfs.try_lock(fd):
            if time.monotonic() > deadline:
                raise OSError(f"{QUEUE_FILE} stays locked")
            time.sleep(0.002)
        yield fd
    finally:
        os.close(fd)  # (closing releases the lock)


def hand_over(root: Path, paths: Iterable[str]) -> bool:
    """Queue files for the sync that takes the writer lock next (`take_handed`); False when
    the queue cannot be written (the caller then syncs them itself)."""
    data = "".join(f"{p}\n" for p in paths if p and "\n" not in p).encode("utf-8", "surrogateescape")
    try:
        with _queue(root, os.O_WRONLY | os.O_APPEND | os.O_CREAT) as fd:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
    except (OSError, UnsafeFile):
        return False
    return True


def take_handed(root: Path) -> list[str] | None:
    """(Under the writer lock) the files handed over so far, and the queue emptied; None
    when there are too many, or the queue cannot be read: a full sync covers them all."""
    try:
        with _queue(root, os.O_RDWR) as fd:
            data = os.read(fd, QUEUE_MAX_BYTES + 1)
            os.ftruncate(fd, 0)
    except FileNotFoundError:
        return []
    except (OSError, UnsafeFile):
        return None
    paths = sorted({p for p in data.decode("utf-8", "surrogateescape").split("\n") if p})
    return None if len(data) > QUEUE_MAX_BYTES or len(paths) > TARGETED_MAX else paths


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    invalid: int = 0
    ms: float = 0.0
    rebuilt: str | None = None  # why the index was recreated, if it was
    problems: dict[str, str] = field(default_factory=dict)  # newly found, path -> reason
    coalesced: bool = False  # another background sync was already waiting: left to it
    semantic: str | None = None  # what the semantic channel did ("embedded 12 in 0.4 s"); None: off
    documents: dict[str, object] | None = None  # the registered documents: counts, and the files not indexed

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.rebuilt)

    def summary(self) -> str:
        if self.coalesced:
            return "another sync is already waiting for the lock; left to it"
        line = (
            f"{self.added} added, {self.updated} updated, {self.removed} removed, "
            f"{self.invalid} invalid in {self.ms:.0f} ms"
        )
        line += f" (rebuilt: {self.rebuilt})" if self.rebuilt else ""
        if self.documents:
            d = self.documents
            line += (f"; documents: {d['added']} added, {d['updated']} updated, {d['removed']} removed,"
                     f" {d['not_indexed']} not indexed of {d['files']}")
        return line + (f"; semantic: {self.semantic}" if self.semantic else "")

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        out["ms"] = round(self.ms, 1)
        if self.semantic is None:
            del out["semantic"]  # the lexical index's report, as before the semantic channel
        if self.documents is None:
            del out["documents"]
        return out


def sync(
    root: Path,
    cfg: Config | None = None,
    *,
    rebuild: bool = False,
    only: Iterable[str] | None = None,
    progress: bool = False,
    lock_timeout: float | None = None,
    coalesce: bool = False,
    if_changed: bool = False,
) -> SyncReport:
    """Make the index match the files. `only` limits the diff to some relative paths (a
    write of one file); `rebuild` re-reads everything in place, in one transaction.

    With `coalesce` (the hooks' background syncs), at most one caller per root waits for
    the lock; the others hand their `only` files over to it (`hand_over`) and return at
    once (`report.coalesced`). The one that waits indexes what was handed over, and only
    that: a memory the assistant just wrote is searchable in the time one file takes,
    whatever the size of the store (a full incremental sync, without `only`, covers all)."""
    cfg = cfg or load_config(root)
    timeout = check_timeout(cfg["index.lock_timeout_s"] if lock_timeout is None else lock_timeout)
    if if_changed and not rebuild and only is None and _unchanged(root, cfg):
        return SyncReport()  # no lock, no walk, no semantic pass: the periodic check stays cheap
    if only is not None:
        only = list(only)
    with ExitStack() as held:
        if coalesce:
            handed = only is not None and hand_over(root, only)
            with waiting_turn(root) as mine:
                if not mine and (only is None or handed):
                    return SyncReport(coalesced=True)
                held.enter_context(writer_lock(root, timeout))
            if mine:
                queued = take_handed(root)  # ours, and those of the syncs that left theirs to us
                if only is not None:
                    only = None if queued is None else sorted({*only, *queued})
        else:
            held.enter_context(writer_lock(root, timeout))
        return _repairing(root, lambda: _sync_locked(root, cfg, rebuild=rebuild, only=only, progress=progress))


def _unchanged(root: Path, cfg: Config) -> bool:
    """Does the index hold every file as it is (`index.is_current`, no lock taken)?"""
    try:
        conn = index.open_reader(root)
    except index.IndexUnavailable:
        return False
    try:
        return index.is_current(conn, root, docsync.registered(cfg))
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _repairing(root: Path, run: Callable[[], SyncReport]) -> SyncReport:
    """Run a sync; if the index file turns out damaged past its header (pages that SQLite
    calls malformed), replace it and rebuild everything from the memory files."""
    try:
        return run()
    except sqlite3.DatabaseError as exc:
        if not index.is_corruption(exc):
            raise
        index.remove_db_files(index.index_path(root))
        report = _sync_locked(root, load_config(root), rebuild=True, only=None, progress=False)
        report.rebuilt = f"index was corrupt ({exc})"
        return report


def sync_files_locked(
    root: Path, cfg: Config, rels: Iterable[str], folders_before: dict[str, int] | None = None
) -> SyncReport:
    """Index just these files (relative paths), for a caller that already holds
    `writer_lock` (the write path): no walk, no full sync; index.md is regenerated.
    `folders_before` (folder mtimes taken under the lock before the write) lets an index
    that was fresh stay marked fresh, so the next search does not re-walk everything."""
    return _repairing(
        root, lambda: _sync_locked(root, cfg, rebuild=False, only=list(rels), progress=False, folders_before=folders_before)
    )


def _diff_targets(
    root: Path, only: list[str] | None, problems: dict[str, str], modes: list[int], ignored: list[str] | None = None,
    listed: dict[str, list[os.DirEntry]] | None = None,
) -> dict[str, FileStat]:
    if only is None:
        return walk(root, problems, modes, ignored, listed)
    root_real = os.path.realpath(root)
    found: dict[str, FileStat] = {}
    refused = {folder: folder_refusal(root, folder) for folder in {rel.split("/")[0] for rel in only} if folder in FOLDERS}
    problems.update({f"{folder}/": why for folder, why in refused.items() if why})
    for rel in only:
        if safe_relpath("", rel) is not None and rel.split("/")[0] in FOLDERS and not refused[rel.split("/")[0]]:
            st = stat_file(root_real, rel, os.path.join(root, rel), problems, modes=modes)
            if st is not None:
                found[rel] = st
    return found


def derived_files(root: Path) -> list[str]:
    """Every file memindex derives from the memory files (rootfs.derived_mode)."""
    db = index.index_path(root)
    return [db, f"{db}-wal", f"{db}-shm", f"{db}-journal", os.path.join(root, INDEX_MD),
            os.path.join(root, LOG_FILE), os.path.join(root, LOG_FILE) + ".1"]


def _diff(
    current: dict[str, FileStat], docs: dict[str, FileStat], bad: dict[str, FileStat], problems: dict[str, str]
) -> tuple[list[str], list[str]]:
    """(files to read, paths gone): what differs between the files and the index."""
    to_read = [p for p, st in current.items() if docs.get(p) != st and bad.get(p) != st]
    # A folder that could not be listed (permissions, I/O) keeps what the index knew.
    # A refused one (another user's) keeps nothing.
    unlisted = {key[:-1] for key, why in problems.items() if key.endswith("/") and not why.startswith(REFUSED)}
    gone = [p for p in (set(docs) | set(bad)) if p not in current and p.split("/")[0] not in unlisted]
    return to_read, gone


def racy(st: FileStat, start_ns: int) -> FileStat:
    """Git's racy-timestamp rule: a file whose mtime or ctime is not older than the sync's
    start (less RACY_WINDOW_NS, the coarsest timestamp tick) could be written again within
    the same tick, leaving the same stat. It is stored with size -1, so the next diff
    re-reads it whatever its stat says then."""
    if max(st.mtime_ns, st.ctime_ns) > start_ns - RACY_WINDOW_NS:
        return FileStat(st.mtime_ns, -1, st.ctime_ns)
    return st


def is_recheck(old: FileStat | None, new: FileStat) -> bool:
    """A racy file re-read with a stat that did not move: not counted as a change."""
    return old is not None and old.size == -1 and (old.mtime_ns, old.ctime_ns) == (new.mtime_ns, new.ctime_ns)


def pending(root: Path, conn: sqlite3.Connection) -> tuple[int, int]:
    """(new or changed files, removed files) that the next sync would apply: a full walk,
    for `status` once `index.is_current` said that a stat moved; the hook's cheap check is
    `index.is_stale`. Racy files the next sync re-reads only in case are not counted."""
    problems: dict[str, str] = {}
    current = walk(root, problems)
    docs, bad = index.stored_stats(conn)
    to_read, gone = _diff(current, docs, bad, problems)
    to_read = [p for p in to_read if not is_recheck(docs.get(p) or bad.get(p), current[p])]
    return len(to_read), len(gone)


def _sync_locked(
    root: Path,
    cfg: Config,
    *,
    rebuild: bool,
    only: Iterable[str] | None,
    progress: bool,
    folders_before: dict[str, int] | None = None,
) -> SyncReport:
    started = time.perf_counter()
    start_ns = time.time_ns()
    report = SyncReport()
    conn, why = index.open_writer(root)
    try:
        folder_mtimes = index.folder_mtimes(root)  # before the walk: later changes stay visible
        # A folder changed within the racy window may change again unseen: `is_stale` says
        # so once the window has passed, so that one more sync looks.
        racy_until = start_ns + RACY_WINDOW_NS if any(v > start_ns - RACY_WINDOW_NS for v in folder_mtimes.values()) else 0
        only_list = list(only) if only is not None else None
        if why and only_list is not None:
            only_list = None  # a new or repaired index needs every file, not just these
        only_docs = None
        if only_list is not None:  # a path that is no memory file's is a registered document's
            only_docs = [p for p in only_list if p.split("/")[0] not in FOLDERS]
            only_list = [p for p in only_list if p.split("/")[0] in FOLDERS]
        meta_before = index.get_meta(conn)
        listed: dict[str, list[os.DirEntry]] = {}
        fingerprint = index.stat_fingerprint(root, listed) if only_list is None else None
        ignored: list[str] | None = [] if only_list is None else None
        modes = [0o777]
        current = _diff_targets(root, only_list, report.problems, modes, ignored, listed)
        docs, bad = index.stored_stats(conn)
        if only_list is not None:
            wanted = set(only_list)
            docs = {p: s for p, s in docs.items() if p in wanted}
            bad = {p: s for p, s in bad.items() if p in wanted}
        if rebuild and only_list is None:
            why = why or "requested"
            docs, bad = {}, {}
        report.rebuilt = why
        to_read, gone = _diff(current, docs, bad, report.problems)
        max_bytes = cfg["index.max_file_bytes"]
        bar = progress_bar(len(to_read), progress, SYNC_PROGRESS_MIN, "file", "indexing")
        try:
            with index.transaction(conn):
                if rebuild and only_list is None:
                    index.reset(conn)
                report.removed = index.remove(conn, gone)
                # A writer killed after COMMIT but before index.md was rewritten left the flag on.
                lines_changed = bool(report.removed) or bool(why) or bool(index.get_meta(conn).get("index_md_dirty"))
                racy_files = 0
                for rel in _insertion_order(to_read):
                    try:
                        mem, st = load_memory(root, rel, max_bytes)
                    except MemoryFileError as exc:
                        report.problems[rel] = str(exc)
                        st = racy(current[rel], start_ns)
                        lines_changed |= index.mark_invalid(conn, rel, st, str(exc))
                    else:
                        recheck = is_recheck(docs.get(rel), st)
                        st = racy(st, start_ns)
                        lines_changed |= index.upsert(conn, mem, st)
                        if rel not in docs:
                            report.added += 1
                        elif not recheck:
                            report.updated += 1
                    racy_files += st.size == -1
                    if bar is not None:
                        bar.update(1)
                report.documents = docsync.apply(conn, str(root), cfg, meta_before, lambda st: racy(st, start_ns),
                                                 rebuild=bool(rebuild and only_list is None), only=only_docs)
                if only_list is None:
                    if racy_files or racy_until:
                        fingerprint = None  # `search` syncs again until the racy window has passed
                    index.set_meta(
                        conn, folder_mtimes=folder_mtimes, racy_until_ns=racy_until, last_sync_ns=index.now_ns(),
                        fingerprint=fingerprint,
                        sync_ms=round((time.perf_counter() - started) * 1000, 1), built_by=built_by(),
                    )
                else:
                    index.set_meta(conn, last_write_ns=index.now_ns())
                    if folders_before is not None and index.get_meta(conn).get("folder_mtimes") == folders_before:
                        index.set_meta(conn, folder_mtimes=folder_mtimes, racy_until_ns=racy_until)
                count = index.count_documents(conn)
                index.set_meta(conn, doc_count=count, health=health.summarize(conn, ignored),
                               newest_session=index.newest_session(conn))
                if lines_changed:
                    index.set_meta(conn, index_md_dirty=1)
                if (rebuild and only_list is None) or len(to_read) > max(1000, count // 10):
                    index.optimize(conn)
        finally:
            if bar is not None:
                bar.close()
        if rebuild and only_list is None:
            index.confirm_build(conn)  # the rebuilt index's new id alone is accepted now
        report.invalid = index.count_invalid(conn) + sum(
            1 for p in report.problems if p not in current and not p.endswith("/")
        )
        # index.md changes only when a line does (a body edit leaves it as it is).
        if lines_changed or not os.path.exists(os.path.join(root, INDEX_MD)):
            write_index_md(root, conn)
            if lines_changed:
                index.set_meta(conn, index_md_dirty=0)
        # no more readable than the memory files: exact after a full walk, else only tighter
        rootfs.protect(derived_files(root), rootfs.derived_mode(str(root), modes[0]), exact=only_list is None)
        if cfg["semantic.enabled"]:  # after the text is committed: embedding never fails a sync
            from ..semantic.vectors import embed_missing

            report.semantic = embed_missing(conn, cfg, progress)
    finally:
        conn.close()
    report.ms = (time.perf_counter() - started) * 1000
    return report


def _insertion_order(paths: list[str], run: int = 256) -> list[str]:
    """Paths in runs of `run` neighbours, the runs shuffled: rowids end up an unbiased
    sample of the store (query planning estimates frequencies from them), while each run
    still fills the path index in order (a full shuffle costs more on a large store)."""
    order = sorted(paths)
    if len(order) <= 2 * run:
        return order
    runs = [order[i : i + run] for i in range(0, len(order), run)]
    random.Random(len(order)).shuffle(runs)
    return [rel for chunk in runs for rel in chunk]


def write_index_md(root: Path, conn: sqlite3.Connection) -> None:
    """Regenerate `<root>/index.md` (active memories only, sanitized titles), atomically.
    Lines were rendered when each file was indexed, so this is a join, not 10k renders."""
    path = os.path.join(root, INDEX_MD)
    rootfs.check(path)  # a link, FIFO, folder or another user's file is refused, never replaced
    prefix = display_prefix(root)
    head = ["# Memory index", "", "<!-- generated by memindex sync; do not edit -->", ""]
    lines = [line.replace(index.PREFIX_MARK, prefix, 1) for line in index.index_md_lines(conn)]
    for stale in Path(root).glob(f".{INDEX_MD}.*.tmp"):  # left by a killed writer (we hold the lock)
        try:
            stale.unlink()
        except OSError:
            pass
    # a new index.md starts private; an existing one keeps its mode (sync then sets derived_mode)
    replace_atomic(path, ("\n".join(head + lines) + "\n").encode("utf-8"), new_mode=0o600)
