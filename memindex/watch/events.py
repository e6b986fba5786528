"""Which file events count, and how they are coalesced into batches for the next sync.

* Events are filtered at once, on the observer's thread: only `<folder>/<name>.json` in the
  six category folders counts; editors' temporary and hidden files, the index's own files
  (`.index.db*`, `.index.lock`, `index.md`, `.watch.pid`, `.memindex.log`, `.sync.spawned`)
  and everything outside the category folders are ignored. The deletion of the index (or
  of index.md) triggers a rebuild; a change of memory-config.json reloads the settings.
* Accepted events are coalesced: a sync starts once no event came for `debounce`
  (`watch.debounce_ms`), or at the latest `max(2 s, 10 x debounce)` after the
  first event of a burst, so a `git checkout` of hundreds of files is one or a few syncs
  (the timing is the watcher's, `memindex.watch.watcher`).

watchdog is imported inside `event_filter` only.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..defaults import CONFIG_FILE, FOLDERS

_IGNORED_EVENT_TYPES = frozenset({"opened", "closed_no_write"})
_STRUCTURAL = frozenset({"created", "deleted", "moved"})


@dataclass
class Batch:
    """Changes waiting for the next sync."""

    first: float
    last: float
    paths: set[str] = field(default_factory=set)
    full: bool = False
    events: int = 0
    triggers: set[str] = field(default_factory=set)
    seq: int = 0  # the intake's count of changes when the last one joined this batch


class Handler:
    """What watchdog calls (on its dispatcher thread)."""

    def __init__(self, intake: "EventIntake") -> None:
        self.intake = intake

    def dispatch(self, event: Any) -> None:
        self.intake.on_event(event)


def is_memory_name(name: str) -> bool:
    """What sync indexes: `<name>.json`, not hidden (editors' temporary files are not)."""
    return name.endswith(".json") and not name.startswith(".")


def event_filter() -> list[type]:
    """The watchdog event classes the watcher listens to (fewer inotify events: no open,
    no close-without-write, no directory-modified)."""
    from watchdog import events as ev

    names = (
        "FileCreatedEvent", "FileDeletedEvent", "FileModifiedEvent", "FileMovedEvent",
        "FileClosedEvent", "FileAttribEvent", "DirCreatedEvent", "DirDeletedEvent", "DirMovedEvent",
    )
    return [getattr(ev, n) for n in names if hasattr(ev, n)]


def schedule(observer: Any, intake: "EventIntake", root: str) -> None:
    """Have `observer` hand `intake` the events under `root`, recursively (only the
    `event_filter` classes where watchdog takes a filter: 4 and later)."""
    handler = Handler(intake)
    try:
        observer.schedule(handler, root, recursive=True, event_filter=event_filter())
    except TypeError:  # watchdog < 4
        observer.schedule(handler, root, recursive=True)


class EventIntake:
    """The observer-thread side of the watcher: classify events, queue them in the pending
    `Batch` and wake the main loop. The main loop takes the batch (`_pending`, under
    `_lock`) when it is due; a failed sync puts it back (`requeue`)."""

    _root_s: str  # the watched root, as the observer reports its paths
    log: Callable[..., None]

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: Batch | None = None
        self._check_now = False
        self._reload_config = False
        self._bridge: logging.Handler | None = None
        self.seq = 0  # changes queued so far (a reader's "fresh" needs them all synced)
        self.answerer: Any = None  # memindex.watch.answer.Answerer, when readers may ask

    def on_event(self, event: Any) -> None:
        etype = event.event_type
        if etype in _IGNORED_EVENT_TYPES:
            return
        answerer = self.answerer
        if answerer is not None and answerer.is_sentinel(os.fsdecode(event.src_path)):
            return  # our own question to the observer (memindex.watch.answer)
        is_dir = bool(event.is_directory)
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                self._classify(os.fsdecode(path), etype, is_dir)

    def _classify(self, path: str, etype: str, is_dir: bool) -> None:
        root = self._root_s
        if path == root:
            if etype in ("deleted", "moved"):
                self._flag_check()
            return
        if not path.startswith(root + os.sep):
            return
        rel = path[len(root) + 1 :].replace(os.sep, "/")
        parts = rel.split("/")
        if parts[0] in FOLDERS:
            if len(parts) == 1:  # the category folder itself
                if etype in _STRUCTURAL:
                    self.add_change(None, full=True, trigger=f"folder {etype}")
            elif len(parts) == 2 and not is_dir and is_memory_name(parts[1]):
                self.add_change(rel, full=etype in _STRUCTURAL, trigger=etype)
            return  # editors' temporary files, hidden files, subfolders: not memories
        if len(parts) == 1:  # the root's own files: index, lock, index.md, marker, log, config
            if parts[0] == CONFIG_FILE:
                self._reload_config = True
                self._flag_check()
            elif etype in ("deleted", "moved"):
                self._flag_check()

    def add_change(self, rel: str | None, full: bool = False, trigger: str = "changes") -> None:
        """Queue a change for the next sync (thread-safe)."""
        now = time.monotonic()
        with self._lock:
            batch = self._pending
            fresh = batch is None
            if batch is None:
                batch = self._pending = Batch(first=now, last=now)
            batch.last = now
            batch.events += 1
            batch.full = batch.full or full
            batch.triggers.add(trigger)
            if rel is not None:
                batch.paths.add(rel)
            self.seq += 1
            batch.seq = self.seq
        if fresh:
            self._wake.set()

    def requeue(self, batch: Batch) -> None:
        """Put back the changes of a failed sync: they wait for the next attempt."""
        with self._lock:
            pending = self._pending
            if pending is None:
                pending = self._pending = batch
            else:
                pending.paths |= batch.paths
                pending.full = pending.full or batch.full
                pending.events += batch.events
                pending.triggers |= batch.triggers
                pending.first = min(pending.first, batch.first)
                pending.seq = max(pending.seq, batch.seq)
            pending.triggers.add("retry")

    def _flag_check(self) -> None:
        self._check_now = True
        self._wake.set()

    def _bridge_watchdog_log(self) -> None:
        """watchdog reports lost events (inotify queue overflow) only in its log: turn those
        into a full sync, and its warnings into ours."""
        intake = self

        class Bridge(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    message = record.getMessage()
                except Exception:
                    message = str(record.msg)
                intake.log("warning", f"watchdog: {message}", level="warning", source=record.name, message=message)
                if "overflow" in message.lower():
                    intake.add_change(None, full=True, trigger="events lost")

        self._bridge = Bridge(level=logging.WARNING)
        logging.getLogger("watchdog").addHandler(self._bridge)

    def _unbridge_watchdog_log(self) -> None:
        if self._bridge is not None:
            logging.getLogger("watchdog").removeHandler(self._bridge)
            self._bridge = None
