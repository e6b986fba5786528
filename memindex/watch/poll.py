"""Polling, where native file events do not arrive (see `memindex.watch.mounts`).

The scanner stats only the memory files, the category folders, the index and its config.
Its cost is bounded: the interval is stretched so that scanning takes at most
POLL_CPU_BUDGET of one core and POLL_WALL_BUDGET of the time, and the measured cost (stat
calls per second, CPU share) is logged. A scan delivers its events together, so when
polling the watcher cuts its debounce to POLL_DEBOUNCE_S (unless --debounce is given).

watchdog is imported inside `polling_observer` only.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..defaults import CONFIG_FILE, FOLDERS, INDEX_FILE, INDEX_MD, POLL_CPU_BUDGET, POLL_WALL_BUDGET


@dataclass
class Snapshot:
    folders: dict[str, int]  # category folder -> inode
    files: dict[str, tuple[int, int, int, int]]  # rel -> (mtime_ns, size, ctime_ns, inode)
    root_files: dict[str, tuple[int, int, int]]  # index.db, index.md, config -> (mtime_ns, size, inode)
    unreadable: set[str]  # folders that could not be listed this time (their files: unchanged)
    stats: int  # stat calls this scan made


_ROOT_FILES = (INDEX_FILE, INDEX_MD, CONFIG_FILE)


class PollScanner:
    """One stat per memory file and a few more: the category folders, the index and its
    config. Unlike watchdog's generic snapshot it never looks at anything else."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.fspath(root)

    def scan(self) -> Snapshot | None:
        """The current state, or None when the root itself is gone."""
        stats = 1
        try:
            if not stat_mod.S_ISDIR(os.stat(self.root).st_mode):
                return None
        except OSError:
            return None
        root_files: dict[str, tuple[int, int, int]] = {}
        for name in _ROOT_FILES:
            stats += 1
            try:
                st = os.stat(os.path.join(self.root, name))
            except OSError:
                continue
            root_files[name] = (st.st_mtime_ns, st.st_size, st.st_ino)
        folders: dict[str, int] = {}
        files: dict[str, tuple[int, int, int, int]] = {}
        unreadable: set[str] = set()
        for folder in FOLDERS:
            path = os.path.join(self.root, folder)
            stats += 1
            try:
                st = os.stat(path)
            except OSError:
                continue
            if not stat_mod.S_ISDIR(st.st_mode):
                continue
            folders[folder] = st.st_ino
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        name = entry.name
                        if name.startswith(".") or not name.endswith(".json"):
                            continue
                        stats += 1
                        try:
                            est = entry.stat()
                        except OSError:
                            continue
                        files[f"{folder}/{name}"] = (est.st_mtime_ns, est.st_size, est.st_ctime_ns, est.st_ino)
            except OSError:
                unreadable.add(folder)
        return Snapshot(folders, files, root_files, unreadable, stats)

    @staticmethod
    def diff(old: Snapshot, new: Snapshot) -> list[tuple[str, str, bool]]:
        """(event type, path relative to the root, is a directory) from old to new."""
        for folder in new.unreadable:  # a listing failed: assume nothing changed in it
            prefix = folder + "/"
            new.files.update({p: v for p, v in old.files.items() if p.startswith(prefix)})
        out: list[tuple[str, str, bool]] = []
        for folder, ino in old.folders.items():
            if folder not in new.folders:
                out.append(("deleted", folder, True))
            elif new.folders[folder] != ino:
                out += [("deleted", folder, True), ("created", folder, True)]
        out += [("created", f, True) for f in new.folders if f not in old.folders]
        if old.files != new.files:  # (the common case, no change, is one C-level compare)
            out += _file_changes(old.files, new.files)
        out += _file_changes(old.root_files, new.root_files)
        return out


def _file_changes(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(event type, path, False) of the files deleted, modified, then created."""
    out: list[tuple[str, str, bool]] = []
    for rel, key in old.items():
        now = new.get(rel)
        if now is None:
            out.append(("deleted", rel, False))
        elif now != key:
            out.append(("modified", rel, False))
    out += [("created", rel, False) for rel in new if rel not in old]
    return out


def polling_observer(
    root: str,
    interval: float,
    adaptive: bool,
    report: Callable[[dict[str, Any]], None],
    emitters: list[Any] | None = None,
) -> Any:
    """A watchdog observer whose emitter polls with PollScanner every `interval` seconds
    (stretched when `adaptive` and a scan costs more than the budget). `report` receives
    the measured cost after the first scan and whenever the interval changes; `emitters`
    collects the emitter (its `cost()` stays readable after the observer stopped)."""
    from watchdog import events as ev
    from watchdog.observers.api import BaseObserver, EventEmitter

    kinds = {
        ("created", False): ev.FileCreatedEvent, ("deleted", False): ev.FileDeletedEvent,
        ("modified", False): ev.FileModifiedEvent, ("created", True): ev.DirCreatedEvent,
        ("deleted", True): ev.DirDeletedEvent,
    }

    class MemoryPollingEmitter(EventEmitter):  # type: ignore[misc, valid-type]
        def __init__(self, event_queue: Any, watch: Any, timeout: float = 1.0, event_filter: Any = None, **_: Any) -> None:
            try:
                super().__init__(event_queue, watch, timeout=timeout, event_filter=event_filter)
            except TypeError:  # watchdog < 4: no event_filter
                super().__init__(event_queue, watch, timeout)
            self.scanner = PollScanner(root)
            self.snapshot: Snapshot | None = None
            self.base = interval
            self.interval = interval
            self.scans = 0
            self.stat_calls = 0
            self.cpu_s = 0.0
            self.cpu_avg = 0.0
            self.wall_avg = 0.0
            self.reported_interval = 0.0
            if emitters is not None:
                emitters.append(self)

        def _scan(self) -> Snapshot | None:
            cpu0, wall0 = time.thread_time(), time.perf_counter()
            snap = self.scanner.scan()
            events = []
            if snap is not None and self.snapshot is not None:
                events = PollScanner.diff(self.snapshot, snap)
            cpu, wall = time.thread_time() - cpu0, time.perf_counter() - wall0
            if snap is None:
                self.queue_event(ev.DirDeletedEvent(root))
                return None
            self.snapshot = snap
            for kind, rel, is_dir in events:
                self.queue_event(kinds[(kind, is_dir)](os.path.join(root, *rel.split("/"))))
            self.scans += 1
            self.stat_calls += snap.stats
            self.cpu_s += cpu
            first = self.scans == 1
            self.cpu_avg = cpu if first else 0.8 * self.cpu_avg + 0.2 * cpu
            self.wall_avg = wall if first else 0.8 * self.wall_avg + 0.2 * wall
            if adaptive:
                self.interval = max(self.base, self.cpu_avg / POLL_CPU_BUDGET, self.wall_avg / POLL_WALL_BUDGET)
            changed = abs(self.interval - self.reported_interval) > 0.25 * self.reported_interval
            if not self.reported_interval or changed:
                self.reported_interval = self.interval
                report(self.cost())
            return snap

        def cost(self) -> dict[str, Any]:
            files = len(self.snapshot.files) if self.snapshot else 0
            per_scan = self.stat_calls / max(self.scans, 1)
            return {
                "files": files,
                "interval_s": round(self.interval, 3),
                "base_interval_s": self.base,
                "stat_calls_per_scan": round(per_scan),
                "stat_calls_per_s": round(per_scan / self.interval, 1),
                "scan_cpu_ms": round(self.cpu_avg * 1000, 2),
                "scan_wall_ms": round(self.wall_avg * 1000, 2),
                "cpu_pct": round(100 * self.cpu_avg / self.interval, 3),
            }

        def on_thread_start(self) -> None:
            self._scan()  # the reference snapshot (it also sets the interval)

        def queue_events(self, timeout: float) -> None:
            if self.stopped_event.wait(self.interval):
                return
            if self._scan() is None:
                self.stop()

    return BaseObserver(MemoryPollingEmitter, timeout=interval)


def describe_cost(cost: dict[str, Any]) -> str:
    """The text of a `poll` log record, from an emitter's `cost()`."""
    if cost["interval_s"] > cost["base_interval_s"] * 1.001:
        note = f" (stretched from {cost['base_interval_s']:g} s to stay under {POLL_CPU_BUDGET:.0%} of a core)"
    else:
        note = ""
    return (
        f"polling {cost['files']} files every {cost['interval_s']:.2f} s{note}: {cost['stat_calls_per_scan']} stat"
        f" calls and {cost['scan_cpu_ms']:.1f} ms CPU per scan, {cost['stat_calls_per_s']:.0f} stat calls/s,"
        f" ~{cost['cpu_pct']:.2f}% of a core"
    )


def run_cost(emitters: list[Any], uptime: float) -> dict[str, Any] | None:
    """The polling cost over a whole run of `uptime` seconds, from the emitters that
    `polling_observer` collected (None when none scanned: events were native)."""
    scanned = [e for e in emitters if e.scans]
    if not scanned:
        return None
    cost: dict[str, Any] = scanned[-1].cost()
    uptime = max(uptime, 1e-9)
    cost["scans"] = sum(e.scans for e in scanned)
    cost["stat_calls_total"] = sum(e.stat_calls for e in scanned)
    cost["stat_calls_per_s_measured"] = round(cost["stat_calls_total"] / uptime, 1)
    cost["scan_cpu_pct_measured"] = round(100 * sum(e.cpu_s for e in scanned) / uptime, 3)
    return cost
