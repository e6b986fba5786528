"""The watcher: keep the index of one memory root fresh while its files change.

One long-running process per memory root (the pid marker `<root>/.watch.pid`, see
`memindex.store.marker`). It watches the root recursively with `watchdog`, so category
folders that are deleted and created again are seen, and turns the file events that
`memindex.watch.events` accepts and batches into incremental syncs:

* A batch of in-place edits of known files is a targeted sync (`sync(only=...)`, no walk);
  anything that adds, removes or renames files is a full incremental sync, which also
  records the folders' mtimes readers check. Every sync is `memindex.index.sync.sync`.
* A failing sync (lock held by another writer, unusable index, unexpected error) is logged
  and retried with a growing delay; invalid memory files are logged and skipped by sync.
* `request_stop()` (the command calls it on SIGINT/SIGTERM/SIGHUP) sets a flag: the sync in
  progress finishes (commits), then the watcher stops and removes its marker. A second
  Ctrl-C aborts the sync in progress (the transaction rolls back); see `memindex.cli.watch`.

Where native events do not arrive (`memindex.watch.mounts`) it polls instead
(`memindex.watch.poll`). watchdog is imported inside functions only.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..config import Config, load_config
from ..defaults import CHECK_S, INDEX_MD, MAX_DELAY_FACTOR, MAX_DELAY_MIN_S, POLL_DEBOUNCE_S, RETRY_MAX_S
from ..defaults import SYNC_LOCK_TIMEOUT_MAX_S, TARGETED_MAX, WAIT_SLICE_S
from ..errors import WatcherRunning
from .answer import listen
from ..index.fresh import documents_moved
from .events import Batch, EventIntake, schedule
from ..store.marker import Marker, pid_alive
from .mounts import needs_polling
from .poll import describe_cost, polling_observer, run_cost


class Log:
    """Log records: a line of text on stderr, or (--json) one JSON object per line on stdout.
    `quiet` keeps warnings and errors only; `sink` receives every record (tests, bench)."""

    def __init__(
        self,
        json_mode: bool = False,
        quiet: bool = False,
        sink: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.json_mode, self.quiet, self.sink = json_mode, quiet, sink
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
                    print(json.dumps(record, ensure_ascii=False, default=str), file=sys.stdout, flush=True)
                elif level != "debug":
                    stamp = now.astimezone().strftime("%Y-%m-%d %H:%M:%S")
                    tag = "" if level == "info" else f"{level}: "
                    print(f"{stamp} memindex watch: {tag}{msg or event}", file=sys.stderr, flush=True)
            except (BrokenPipeError, ValueError):
                pass  # nobody reads the log any more; keep watching


class Watcher(EventIntake):
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
        super().__init__()
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
        self.failed = False  # a problem (not a request) stopped the watcher
        self.started = threading.Event()  # set once the initial sync has run
        self.syncing = False
        self._stop_reason: str | None = None
        self._next_check = 0.0
        self._not_before = 0.0
        self._backoff = 0.0
        self._started_at = 0.0
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

    def _give_up(self, reason: str) -> None:
        """Stop because of a problem: `run()` then returns False."""
        self.failed = True
        self.request_stop(reason)

    def run(self) -> bool:
        """Claim the root, sync, then apply changes until stopped. True when it stopped on
        request, False when a problem stopped it (the root removed, the observer failed,
        another watcher took over). Raises WatcherRunning when the root is taken."""
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
            self.answerer = listen(self)  # readers ask us instead of stat-ing every file
            now = time.monotonic()
            self._sync(Batch(first=now, last=now, full=True, triggers={"start"}))
            self.started.set()
            self._next_check = time.monotonic() + self.check_s
            while self._stop_reason is None:
                self._step()
        finally:
            self.started.set()
            if self.answerer is not None:
                self.answerer.stop()
            self._unbridge_watchdog_log()
            self._stop_observer()
            self.marker.release()
        cost = run_cost(self._poll_emitters, time.monotonic() - self._started_at)
        self.log(
            "stop",
            f"stopped ({self._stop_reason}) after {self.syncs} syncs",
            reason=self._stop_reason,
            syncs=self.syncs,
            errors=self.errors,
            uptime_s=round(time.monotonic() - self._started_at, 1),
            **({"poll": cost} if cost else {}),
            **({"answers": self.answerer.answers} if self.answerer else {}),
        )
        return not self.failed

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
            observer = polling_observer(
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
        schedule(observer, self, self._root_s)

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
        self.log("poll", describe_cost(cost), **cost)

    # -- main loop ---------------------------------------------------------------------------

    def _due(self, batch: Batch) -> float:
        if self.answerer is not None and self.answerer.expedite:  # a reader waits for it
            return self._not_before
        return max(min(batch.last + self.debounce, batch.first + self.max_delay), self._not_before)

    def _step(self) -> None:
        now = time.monotonic()
        with self._lock:
            batch = self._pending
        answerer = self.answerer
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
        if answerer is not None and answerer.adopt_due:
            answerer.adopt()
        with self._lock:
            batch = self._pending
            if batch is not None and now >= self._due(batch):
                self._pending = None
            else:
                batch = None
        if batch is not None:
            self._sync(batch)

    def _periodic_check(self) -> None:
        from ..index import index_path

        self._check_now = False
        self._next_check = time.monotonic() + self.check_s
        if not os.path.isdir(self.root):
            self.log("error", f"the memory root {self.root} was removed; stopping", level="error", during="check")
            self._give_up("memory root removed")
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
        if self.cfg["documents.paths"] and documents_moved(self.root, self.cfg["documents.paths"]):
            self.add_change(None, full=True, trigger="documents changed")  # (outside the root the observer watches)
        if not self._observer_alive():
            self.log("warning", "the file observer stopped; restarting it", level="warning", during="check")
            self._stop_observer()
            try:
                self._start_observer()
            except Exception as exc:
                self.log("error", f"cannot restart the observer: {exc}", level="error", during="check")
                self._give_up("observer failed")
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
            self._give_up("another watcher took over")
            return
        self.marker.release()
        try:
            self.marker.claim()
        except WatcherRunning as exc:
            self.log("error", f"{exc}; stopping", level="error", during="check", other_pid=exc.pid)
            self._give_up("another watcher took over")
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
        from ..index import index_path
        from ..index.sync import sync

        started = time.monotonic()
        full = batch.full or len(batch.paths) > TARGETED_MAX or not os.path.isfile(index_path(self.root))
        trigger = ",".join(sorted(batch.triggers)) or "changes"
        paths = sorted(batch.paths)
        self.log("sync_start", level="debug", trigger=trigger, full=full, changes=len(paths))
        try:
            report = sync(self.root, self.cfg, only=None if full else paths, lock_timeout=self._lock_timeout())
            full = full or bool(report.rebuilt)  # a recreated index: sync read every file, not just these
        except Exception as exc:  # LockTimeout, IndexUnavailable, sqlite3.Error, OSError, ...
            self._failed(batch, exc)
            return
        self._backoff = 0.0
        self._not_before = 0.0
        self.syncs += 1
        if self.answerer is not None:
            self.answerer.synced(batch.seq, full, paths)
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
        self.requeue(batch)  # the changes wait for the next attempt
        self.log(
            "error",
            f"sync failed: {type(exc).__name__}: {exc}; retrying in {self._backoff:g} s",
            level="error",
            during="sync",
            error=f"{type(exc).__name__}: {exc}",
            retry_in_s=self._backoff,
        )
