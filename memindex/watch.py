"""`memindex watch`: keep the index fresh while memory files change.

One long-running process per memory root (the pid marker `<root>/.watch.pid`, see
`watch_marker`). It watches the root recursively with `watchdog`, so category folders that
are deleted and created again are seen, and turns file events into incremental syncs:

* Events are filtered at once, on the observer's thread: only `<folder>/<name>.json` in the
  six category folders counts; editors' temporary and hidden files, the index's own files
  (`.index.db*`, `.index.lock`, `index.md`, `.watch.pid`, `.memindex.log`, `.sync.spawned`)
  and everything outside the category folders are ignored. The deletion of the index (or
  of index.md) triggers a rebuild; a change of memory-config.json reloads the settings.
* Accepted events are coalesced: a sync starts once no event came for `debounce` (400 ms by
  default, config `watch.debounce_ms`), or at the latest `max(2 s, 10 x debounce)` after the
  first event of a burst, so a `git checkout` of hundreds of files is one or a few syncs.
* A batch of in-place edits of known files is a targeted sync (`sync(only=...)`: no walk);
  anything that adds, removes or renames files (atomic writes included) is a full
  incremental sync, which also records the folders' mtimes that readers use as their O(1)
  freshness check. Every sync is `memindex.sync.sync`: the same lock as `memindex sync`,
  one SQLite transaction.
* A failing sync (lock held by another writer, unusable index, unexpected error) is logged
  and retried with a growing delay; invalid memory files are logged and skipped by sync.
* SIGINT/SIGTERM/SIGHUP set a flag: the sync in progress finishes (commits), then the
  watcher stops, removes its marker and exits 0. A second Ctrl-C aborts the sync in progress
  (the transaction rolls back) and exits 130.

Where native events do not arrive (WSL's /mnt/* drives (9p/drvfs), CIFS/SMB, NFS, VM shared
folders, ...: detected from /proc/self/mountinfo) the watcher polls instead, with a scanner
that stats only the memory files. Its cost is bounded: the interval is stretched so that
scanning takes at most POLL_CPU_BUDGET of one core and POLL_WALL_BUDGET of the time, and
the measured cost (stat calls per second, CPU share) is logged. A scan delivers its events
together, so when polling the debounce is cut to POLL_DEBOUNCE_S (unless --debounce is given).

watchdog is imported lazily, inside functions: other commands do not pay for it.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import stat as stat_mod
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from .cli import command, err
from .config import Config, load_config
from .defaults import CONFIG_FILE, EXIT_OK, EXIT_PROBLEMS, FOLDERS, INDEX_FILE, INDEX_MD
from .watch_marker import Marker, WatcherRunning, pid_alive

# --- tuning (chosen on scripts/bench_watch.py, see docs/benchmarks.md) ---------------

WAIT_SLICE_S = 0.25  # the main loop looks at the stop flag at least this often
CHECK_S = 2.0  # periodic check: root, index, marker, observer
MAX_DELAY_MIN_S = 2.0  # a continuous stream of events still syncs at least this often...
MAX_DELAY_FACTOR = 10.0  # ...or every 10 x debounce, whichever is longer
TARGETED_MAX = 256  # more modified files than this: a full sync (one walk) instead
SYNC_LOCK_TIMEOUT_MAX_S = 2.0  # wait for another writer at most this long, then retry later
RETRY_MAX_S = 30.0
POLL_CPU_BUDGET = 0.01  # a poll scan may use at most this share of one core...
POLL_WALL_BUDGET = 0.10  # ...and take at most this share of the time (slow network stats)
POLL_DEBOUNCE_S = 0.05  # polled events come all at once, once per scan: no need to wait long

# File systems where inotify (or the platform's native API) misses changes made elsewhere:
# on the Windows side of WSL, on another machine, on the host of a VM or container.
POLLING_FS: dict[str, str] = {
    "9p": "9p (WSL 2 /mnt drives, VM shares)",
    "drvfs": "drvfs (WSL /mnt drives)",
    "cifs": "CIFS/SMB network share",
    "smb3": "SMB network share",
    "smbfs": "SMB network share",
    "nfs": "NFS network share",
    "nfs4": "NFS network share",
    "afs": "AFS network file system",
    "ceph": "CephFS network file system",
    "glusterfs": "GlusterFS network file system",
    "fuse.glusterfs": "GlusterFS network file system",
    "lustre": "Lustre network file system",
    "vboxsf": "VirtualBox shared folder",
    "vmhgfs": "VMware shared folder",
    "fuse.vmhgfs-fuse": "VMware shared folder",
    "fuse.sshfs": "sshfs remote folder",
    "sshfs": "sshfs remote folder",
    "fuse.grpcfuse": "Docker Desktop file sharing",
    "fuse.osxfs": "Docker Desktop file sharing",
    "fakeowner": "Docker Desktop file sharing",
    "prl_fs": "Parallels shared folder",
}

_IGNORED_EVENT_TYPES = frozenset({"opened", "closed_no_write"})
_STRUCTURAL = frozenset({"created", "deleted", "moved"})


# --- where native events do not arrive ----------------------------------------------------


def _unescape(text: str) -> str:
    """Mount points in /proc escape space, tab, newline and backslash as octal."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def read_mounts(text: str | None = None) -> list[tuple[str, str, str]]:
    """(mount point, file system type, source) of every mount, from /proc/self/mountinfo
    (or /proc/mounts, or `text` in either format); empty where /proc does not exist."""
    if text is None:
        for path in ("/proc/self/mountinfo", "/proc/mounts"):
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                break
            except OSError:
                continue
        else:
            return []
    mounts = []
    for line in text.splitlines():
        parts = line.split()
        try:
            sep = parts.index("-", 6)  # mountinfo: ... mount-point options [optional] - type source
        except ValueError:
            if len(parts) >= 3:  # /proc/mounts: source mount-point type options ...
                mounts.append((_unescape(parts[1]), parts[2], _unescape(parts[0])))
            continue
        if len(parts) > sep + 1 and len(parts) > 4:
            source = _unescape(parts[sep + 2]) if len(parts) > sep + 2 else ""
            mounts.append((_unescape(parts[4]), parts[sep + 1], source))
    return mounts


def mount_of(path: str | os.PathLike[str], mounts: list[tuple[str, str, str]] | None = None) -> tuple[str, str, str] | None:
    """The mount holding `path`: the longest mount point above it (the last one listed when
    a mount point was mounted over)."""
    real = os.path.realpath(path)
    best = None
    for mount in read_mounts() if mounts is None else mounts:
        point = mount[0]
        if real == point or real.startswith(point.rstrip("/") + "/"):
            if best is None or len(point) >= len(best[0]):
                best = mount
    return best


def needs_polling(root: str | os.PathLike[str], mounts: list[tuple[str, str, str]] | None = None) -> tuple[bool, str]:
    """(poll?, why): whether native file events can be trusted under `root`."""
    mount = mount_of(root, mounts)
    if mount is None:
        return False, "native file events"
    point, fstype, source = mount
    kind = POLLING_FS.get(fstype)
    if kind is None and "drvfs" in source.lower():
        kind = "WSL drvfs drive"
    if kind is None:
        return False, f"native file events ({fstype} file system at {point})"
    return True, f"{point} is a {fstype} file system ({kind}): native file events do not arrive there"


# --- the polling scanner --------------------------------------------------------------------


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
            for rel, key in old.files.items():
                now = new.files.get(rel)
                if now is None:
                    out.append(("deleted", rel, False))
                elif now != key:
                    out.append(("modified", rel, False))
            out += [("created", rel, False) for rel in new.files if rel not in old.files]
        for name, key in old.root_files.items():
            now = new.root_files.get(name)
            if now is None:
                out.append(("deleted", name, False))
            elif now != key:
                out.append(("modified", name, False))
        out += [("created", n, False) for n in new.root_files if n not in old.root_files]
        return out


def _event_filter() -> list[type]:
    """The watchdog event classes the watcher listens to (fewer inotify events: no open,
    no close-without-write, no directory-modified)."""
    from watchdog import events as ev

    names = (
        "FileCreatedEvent", "FileDeletedEvent", "FileModifiedEvent", "FileMovedEvent",
        "FileClosedEvent", "FileAttribEvent", "DirCreatedEvent", "DirDeletedEvent", "DirMovedEvent",
    )
    return [getattr(ev, n) for n in names if hasattr(ev, n)]


def _polling_observer(
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


# --- the log --------------------------------------------------------------------------------


class Log:
    """Log records: a line of text on stderr, or (--json) one JSON object per line on stdout.
    `quiet` keeps warnings and errors only; `sink` receives every record (tests, bench)."""

    def __init__(
        self,
        json_mode: bool = False,
        quiet: bool = False,
        sink: Callable[[dict[str, Any]], None] | None = None,
        out: Any = None,
        text_out: Any = None,
    ) -> None:
        self.json_mode, self.quiet, self.sink = json_mode, quiet, sink
        self.out, self.text_out = out, text_out
        self._lock = threading.Lock()

    def __call__(self, event: str, msg: str = "", level: str = "info", **fields: Any) -> None:
        now = datetime.now(timezone.utc)
        record = {"ts": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"), "event": event, "level": level, **fields}
        if self.sink is not None:
            self.sink(record)
        if self.quiet and level in ("info", "debug"):
            return
        with self._lock:
            try:
                if self.json_mode:
                    print(json.dumps(record, ensure_ascii=False, default=str), file=self.out or sys.stdout, flush=True)
                elif level != "debug":
                    stamp = now.astimezone().strftime("%Y-%m-%d %H:%M:%S")
                    tag = "" if level == "info" else f"{level}: "
                    print(f"{stamp} memindex watch: {tag}{msg or event}", file=self.text_out or sys.stderr, flush=True)
            except (BrokenPipeError, ValueError):
                pass  # nobody reads the log any more; keep watching


# --- the watcher ----------------------------------------------------------------------------


@dataclass
class Batch:
    """Changes waiting for the next sync."""

    first: float
    last: float
    paths: set[str] = field(default_factory=set)
    full: bool = False
    events: int = 0
    triggers: set[str] = field(default_factory=set)


class _Handler:
    """What watchdog calls (on its dispatcher thread)."""

    def __init__(self, watcher: "Watcher") -> None:
        self.watcher = watcher

    def dispatch(self, event: Any) -> None:
        self.watcher.on_event(event)


def _is_memory_name(name: str) -> bool:
    """What sync indexes: `<name>.json`, not hidden (editors' temporary files are not)."""
    return name.endswith(".json") and not name.startswith(".")


class Watcher:
    """Keep the index of one memory root fresh until `request_stop()` (or a signal)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        cfg: Config | None = None,
        *,
        polling: bool | None = None,
        interval: float | None = None,
        debounce_ms: float | None = None,
        log: Callable[..., None] | None = None,
        check_s: float = CHECK_S,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self._root_s = str(self.root)
        self.cfg = cfg if cfg is not None else load_config(self.root)
        self.force_polling = bool(polling)
        self.interval_explicit = interval is not None
        self.interval = float(interval if interval is not None else self.cfg["watch.poll_interval_s"])  # type: ignore[arg-type]
        self.debounce_explicit = debounce_ms is not None
        debounce = debounce_ms if debounce_ms is not None else self.cfg["watch.debounce_ms"]
        self.debounce = max(0.0, float(debounce)) / 1000.0  # type: ignore[arg-type]
        self.max_delay = max(MAX_DELAY_MIN_S, MAX_DELAY_FACTOR * self.debounce)
        self.log: Callable[..., None] = log or Log(quiet=True)
        self.check_s = check_s
        self.marker = Marker(self.root)
        self.observer: Any = None
        self.observer_kind = ""
        self.observer_why = ""
        self.syncs = 0
        self.errors = 0
        self.exit_code = EXIT_OK
        self.started = threading.Event()  # set once the initial sync has run
        self.syncing = False
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: Batch | None = None
        self._stop_reason: str | None = None
        self._check_now = False
        self._reload_config = False
        self._next_check = 0.0
        self._not_before = 0.0
        self._backoff = 0.0
        self._started_at = 0.0
        self._bridge: logging.Handler | None = None
        self._poll_emitters: list[Any] = []
        self._announced = False
        self._early_cost: dict[str, Any] | None = None

    # -- control ----------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self._stop_reason is not None

    def request_stop(self, reason: str = "stopped", wake: bool = True) -> None:
        """Stop after the current sync. From a signal handler pass wake=False (no locks)."""
        if self._stop_reason is None:
            self._stop_reason = reason
        if wake:
            self._wake.set()

    def run(self) -> int:
        """Claim the root, sync, then apply changes until stopped. Raises WatcherRunning."""
        self.marker.claim()
        self._started_at = time.monotonic()
        try:
            self._bridge_watchdog_log()
            self._start_observer()
            self.log(
                "start",
                f"watching {self.root} ({self._observer_text()}); Ctrl-C to stop",
                root=self._root_s,
                pid=os.getpid(),
                observer=self.observer_kind,
                observer_class=type(self.observer).__name__,
                why=self.observer_why,
                debounce_ms=round(self.debounce * 1000),
                interval_s=self.interval if self.observer_kind == "polling" else None,
            )
            self._announced = True
            if self._early_cost is not None:
                self._on_poll_cost(self._early_cost)
            now = time.monotonic()
            self._sync(Batch(first=now, last=now, full=True, triggers={"start"}))
            self.started.set()
            self._next_check = time.monotonic() + self.check_s
            while self._stop_reason is None:
                self._step()
        finally:
            self.started.set()
            self._unbridge_watchdog_log()
            self._stop_observer()
            self.marker.release()
        cost = self._poll_cost()
        self.log(
            "stop",
            f"stopped ({self._stop_reason}) after {self.syncs} syncs",
            reason=self._stop_reason,
            syncs=self.syncs,
            errors=self.errors,
            uptime_s=round(time.monotonic() - self._started_at, 1),
            **({"poll": cost} if cost else {}),
        )
        return self.exit_code

    def _observer_text(self) -> str:
        if self.observer_kind == "polling":
            return f"polling every {self.interval:g} s: {self.observer_why}; debounce {self.debounce * 1000:.0f} ms"
        return f"{type(self.observer).__name__}; debounce {self.debounce * 1000:.0f} ms"

    # -- observers ----------------------------------------------------------------------------

    def _start_observer(self) -> None:
        if self.force_polling:
            polling, why = True, "--polling"
        else:
            polling, why = needs_polling(self.root)
        observer = None
        if not polling:
            try:
                observer = self._native_observer()
                if "polling" in type(observer).__name__.lower():  # watchdog's own fallback
                    observer.stop()
                    observer = None
                    polling, why = True, "no native file events on this platform"
            except Exception as exc:  # inotify limits (ENOSPC, EMFILE), missing backend
                polling, why = True, f"the native observer failed ({type(exc).__name__}: {exc})"
        if observer is None:
            observer = _polling_observer(
                self._root_s, self.interval, not self.interval_explicit, self._on_poll_cost, self._poll_emitters
            )
            self._schedule(observer)
            observer.start()
        self.observer = observer
        self.observer_kind = "polling" if polling else "native"
        self.observer_why = why
        if polling and not self.debounce_explicit and self.debounce > POLL_DEBOUNCE_S:
            # A scan delivers its events together: waiting longer only adds latency.
            self.debounce = POLL_DEBOUNCE_S
            self.max_delay = max(MAX_DELAY_MIN_S, MAX_DELAY_FACTOR * self.debounce)

    def _native_observer(self) -> Any:
        from watchdog.observers import Observer

        observer = Observer()
        self._schedule(observer)
        try:
            observer.start()
        except BaseException:
            try:
                observer.stop()
            except Exception:
                pass
            raise
        return observer

    def _schedule(self, observer: Any) -> None:
        handler = _Handler(self)
        try:
            observer.schedule(handler, self._root_s, recursive=True, event_filter=_event_filter())
        except TypeError:  # watchdog < 4
            observer.schedule(handler, self._root_s, recursive=True)

    def _stop_observer(self) -> None:
        observer, self.observer = self.observer, None
        if observer is None:
            return
        try:
            observer.stop()
            observer.join(timeout=5)
        except Exception:
            pass

    def _observer_alive(self) -> bool:
        observer = self.observer
        if observer is None or not observer.is_alive():
            return False
        emitters = getattr(observer, "emitters", None)
        return all(e.is_alive() for e in emitters) if emitters else True

    def _on_poll_cost(self, cost: dict[str, Any]) -> None:
        if not self._announced:  # the reference scan runs before the start line: report it after
            self._early_cost = cost
            return
        if cost["interval_s"] > cost["base_interval_s"] * 1.001:
            note = f" (stretched from {cost['base_interval_s']:g} s to stay under {POLL_CPU_BUDGET:.0%} of a core)"
        else:
            note = ""
        self.log(
            "poll",
            f"polling {cost['files']} files every {cost['interval_s']:.2f} s{note}: {cost['stat_calls_per_scan']} stat"
            f" calls and {cost['scan_cpu_ms']:.1f} ms CPU per scan, {cost['stat_calls_per_s']:.0f} stat calls/s,"
            f" ~{cost['cpu_pct']:.2f}% of a core",
            **cost,
        )

    def _poll_cost(self) -> dict[str, Any] | None:
        """The polling cost over the whole run (None when events were native)."""
        emitters = [e for e in self._poll_emitters if e.scans]
        if not emitters:
            return None
        cost = emitters[-1].cost()
        uptime = max(time.monotonic() - self._started_at, 1e-9)
        cost["scans"] = sum(e.scans for e in emitters)
        cost["stat_calls_total"] = sum(e.stat_calls for e in emitters)
        cost["stat_calls_per_s_measured"] = round(cost["stat_calls_total"] / uptime, 1)
        cost["scan_cpu_pct_measured"] = round(100 * sum(e.cpu_s for e in emitters) / uptime, 3)
        return cost

    def _bridge_watchdog_log(self) -> None:
        """watchdog reports lost events (inotify queue overflow) only in its log: turn those
        into a full sync, and its warnings into ours."""
        watcher = self

        class Bridge(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    message = record.getMessage()
                except Exception:
                    message = str(record.msg)
                watcher.log("warning", f"watchdog: {message}", level="warning", source=record.name, message=message)
                if "overflow" in message.lower():
                    watcher.add_change(None, full=True, trigger="events lost")

        self._bridge = Bridge(level=logging.WARNING)
        logging.getLogger("watchdog").addHandler(self._bridge)

    def _unbridge_watchdog_log(self) -> None:
        if self._bridge is not None:
            logging.getLogger("watchdog").removeHandler(self._bridge)
            self._bridge = None

    # -- events (observer thread) ------------------------------------------------------------

    def on_event(self, event: Any) -> None:
        etype = event.event_type
        if etype in _IGNORED_EVENT_TYPES:
            return
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
            elif len(parts) == 2 and not is_dir and _is_memory_name(parts[1]):
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
        if fresh:
            self._wake.set()

    def _flag_check(self) -> None:
        self._check_now = True
        self._wake.set()

    # -- main loop ---------------------------------------------------------------------------

    def _due(self, batch: Batch) -> float:
        return max(min(batch.last + self.debounce, batch.first + self.max_delay), self._not_before)

    def _step(self) -> None:
        now = time.monotonic()
        with self._lock:
            batch = self._pending
        wait = min(WAIT_SLICE_S, self._next_check - now)
        if batch is not None:
            wait = min(wait, self._due(batch) - now)
        if wait > 0:
            self._wake.wait(wait)
            self._wake.clear()
        if self._stop_reason is not None:
            return
        now = time.monotonic()
        if self._check_now or now >= self._next_check:
            self._periodic_check()
            if self._stop_reason is not None:
                return
        with self._lock:
            batch = self._pending
            if batch is not None and now >= self._due(batch):
                self._pending = None
            else:
                batch = None
        if batch is not None:
            self._sync(batch)

    def _periodic_check(self) -> None:
        from .index import index_path

        self._check_now = False
        self._next_check = time.monotonic() + self.check_s
        if not os.path.isdir(self.root):
            self.log("error", f"the memory root {self.root} was removed; stopping", level="error", during="check")
            self.exit_code = EXIT_PROBLEMS
            self.request_stop("memory root removed")
            return
        if self._reload_config:
            self._reload_config = False
            self.cfg = load_config(self.root)
            for warning in self.cfg.warnings:
                self.log("warning", f"config: {warning}", level="warning", during="config")
            self.log("config", "memory-config.json changed: settings reloaded")
        if not self.marker.still_ours():
            self._reclaim_marker()
            if self._stop_reason is not None:
                return
        if not os.path.isfile(index_path(self.root)) or not os.path.isfile(self.root / INDEX_MD):
            with self._lock:
                pending = self._pending
                missing_queued = pending is not None and "index missing" in pending.triggers
            if not missing_queued:
                self.add_change(None, full=True, trigger="index missing")
        if not self._observer_alive():
            self.log("warning", "the file observer stopped; restarting it", level="warning", during="check")
            self._stop_observer()
            try:
                self._start_observer()
            except Exception as exc:
                self.log("error", f"cannot restart the observer: {exc}", level="error", during="check")
                self.exit_code = EXIT_PROBLEMS
                self.request_stop("observer failed")
                return
            self.add_change(None, full=True, trigger="observer restarted")

    def _reclaim_marker(self) -> None:
        owner = self.marker.owner()
        if owner is not None and owner != os.getpid() and pid_alive(owner):
            self.log(
                "error",
                f"another watcher (pid {owner}) took over {self.marker.path}; stopping",
                level="error",
                during="check",
                other_pid=owner,
            )
            self.exit_code = EXIT_PROBLEMS
            self.request_stop("another watcher took over")
            return
        self.marker.release()
        try:
            self.marker.claim()
        except WatcherRunning as exc:
            self.log("error", f"{exc}; stopping", level="error", during="check", other_pid=exc.pid)
            self.exit_code = EXIT_PROBLEMS
            self.request_stop("another watcher took over")
            return
        self.log("warning", f"{self.marker.path} was removed; recreated it", level="warning", during="check")

    # -- syncing -----------------------------------------------------------------------------

    def _lock_timeout(self) -> float:
        return min(float(self.cfg["index.lock_timeout_s"]), SYNC_LOCK_TIMEOUT_MAX_S)  # type: ignore[arg-type]

    def _sync(self, batch: Batch) -> None:
        self.syncing = True
        try:
            self._sync_batch(batch)
        finally:
            self.syncing = False

    def _sync_batch(self, batch: Batch) -> None:
        from .index import index_path
        from .sync import sync

        started = time.monotonic()
        full = batch.full or len(batch.paths) > TARGETED_MAX or not os.path.isfile(index_path(self.root))
        trigger = ",".join(sorted(batch.triggers)) or "changes"
        paths = sorted(batch.paths)
        self.log("sync_start", level="debug", trigger=trigger, full=full, changes=len(paths))
        try:
            report = sync(self.root, self.cfg, only=None if full else paths, lock_timeout=self._lock_timeout())
            if report.rebuilt and not full:  # the index was recreated: a targeted sync is not enough
                full = True
                more = sync(self.root, self.cfg, lock_timeout=self._lock_timeout())
                report.added += more.added
                report.updated += more.updated
                report.removed += more.removed
                report.invalid = more.invalid
                report.problems.update(more.problems)
                report.ms += more.ms
        except Exception as exc:  # LockTimeout, IndexUnavailable, sqlite3.Error, OSError, ...
            self._failed(batch, exc)
            return
        self._backoff = 0.0
        self._not_before = 0.0
        self.syncs += 1
        shown = paths[:3]
        what = ", ".join(shown) + (f" and {len(paths) - len(shown)} more" if len(paths) > len(shown) else "")
        if "start" in batch.triggers:
            lead = "initial sync"
        elif "index missing" in batch.triggers:
            lead = "index missing: rebuilt"
        elif paths:
            lead = f"{len(paths)} changed file{'s' if len(paths) != 1 else ''} ({what})"
        else:
            lead = f"{trigger} ({batch.events} event{'s' if batch.events != 1 else ''})"
        self.log(
            "sync",
            f"{lead}: {report.summary()}",
            trigger=trigger,
            full=full,
            events=batch.events,
            changes=len(paths),
            paths=paths[:20],
            wait_ms=round((started - batch.first) * 1000, 1),
            n=self.syncs,
            **report.to_json(),
        )
        for rel, reason in sorted(report.problems.items()):
            self.log("invalid", f"{rel}: {reason}", level="warning", path=rel, reason=reason)

    def _failed(self, batch: Batch, exc: Exception) -> None:
        self.errors += 1
        self._backoff = min(max(self._backoff * 2, 0.5), RETRY_MAX_S)
        self._not_before = time.monotonic() + self._backoff
        with self._lock:  # the changes wait for the next attempt
            pending = self._pending
            if pending is None:
                self._pending = batch
            else:
                pending.paths |= batch.paths
                pending.full = pending.full or batch.full
                pending.events += batch.events
                pending.triggers |= batch.triggers
                pending.first = min(pending.first, batch.first)
            self._pending.triggers.add("retry")
        self.log(
            "error",
            f"sync failed: {type(exc).__name__}: {exc}; retrying in {self._backoff:g} s",
            level="error",
            during="sync",
            error=f"{type(exc).__name__}: {exc}",
            retry_in_s=self._backoff,
        )


# --- command line ---------------------------------------------------------------------------


def _bounded(lo: float, hi: float, unit: str) -> Callable[[str], float]:
    """An argparse type: a finite number within lo..hi."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be between {lo:g} and {hi:g} {unit}")
        return value

    return parse


_interval = _bounded(0.05, 3600, "seconds")
_debounce = _bounded(0, 60_000, "ms")


def register_cli(sub: Any, add: Callable[..., argparse.ArgumentParser]) -> None:
    """Add the `watch` subcommand to the CLI parser."""
    p = add("watch", "keep the index fresh while memory files change (runs until Ctrl-C or SIGTERM)")
    p.add_argument(
        "--polling",
        action="store_true",
        help="poll instead of native file events (chosen automatically on WSL /mnt drives, SMB, NFS, VM shares)",
    )
    p.add_argument(
        "--interval",
        type=_interval,
        metavar="S",
        help="polling interval in seconds, used as given (default: watch.poll_interval_s = 2, stretched when"
        " a scan would use more than 1%% of a core)",
    )
    p.add_argument(
        "--debounce",
        type=_debounce,
        metavar="MS",
        help="wait until changes have been quiet this long before syncing (default: watch.debounce_ms = 400)",
    )


def _install_signals(watcher: Watcher) -> dict[int, Any]:
    import signal

    def on_signal(signum: int, frame: Any) -> None:
        if signum == signal.SIGINT and watcher.stopping:
            raise KeyboardInterrupt  # second Ctrl-C: abort the sync in progress (it rolls back)
        watcher.request_stop(signal.Signals(signum).name, wake=False)

    previous: dict[int, Any] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                previous[sig] = signal.signal(sig, on_signal)
            except (ValueError, OSError):  # not the main thread
                pass
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    import signal

    for sig, handler in previous.items():
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError, TypeError):
            pass


@command("watch")
def cmd_watch(args: argparse.Namespace, root: Path, cfg: Config) -> int:
    """Keep the index fresh while memory files change, until interrupted."""
    log = Log(json_mode=args.json, quiet=args.quiet)
    watcher = Watcher(
        root,
        cfg,
        polling=args.polling or None,
        interval=args.interval,
        debounce_ms=args.debounce,
        log=log,
    )
    previous = _install_signals(watcher)
    try:
        return watcher.run()
    except ImportError as exc:  # watchdog is a dependency, but an install may lack it
        err(f"watch needs the watchdog package ({exc}); install it with `pip install watchdog`")
        return EXIT_PROBLEMS
    except WatcherRunning as exc:
        message = f"{exc}; stop it first (kill {exc.pid})" if exc.pid else str(exc)
        err(message)
        if args.json:
            log("refused", message, level="error", other_pid=exc.pid, root=str(root))
        return EXIT_PROBLEMS
    except OSError as exc:  # e.g. a read-only root: the marker cannot be created
        err(f"cannot watch {root}: {exc}")
        return EXIT_PROBLEMS
    finally:
        _restore_signals(previous)
