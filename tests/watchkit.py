"""A `Watcher` on a thread with its log records collected, for the watch tests
(tests/test_watch.py, tests/test_watch_fresh.py)."""

from __future__ import annotations

import threading
from pathlib import Path

from memindex_dev.evaluation.bench import wait_for
from memindex.watch import Log, Watcher


class Running:
    """A Watcher on a thread, its log records collected."""

    def __init__(self, root: Path, mode: str = "native", debounce_ms: float = 50, **kw) -> None:
        polling = kw.pop("polling", mode == "polling" or None)
        interval = kw.pop("interval", 0.1 if mode == "polling" else None)
        self.records: list[dict] = []
        self.watcher = Watcher(
            root,
            polling=polling,
            interval=interval,
            debounce_ms=debounce_ms,
            log=Log(quiet=True, sink=self.records.append),
            check_s=kw.pop("check_s", 0.2),
            **kw,
        )
        self.ok: bool | None = None  # what run() returned: True when it stopped on request
        self.exc: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.ok = self.watcher.run()
        except BaseException as exc:  # noqa: BLE001
            self.exc = exc

    def __enter__(self) -> "Running":
        self.thread.start()
        wait_for(lambda: self.watcher.started.is_set() or self.exc, what="the watcher to start")
        if self.exc is not None:
            raise self.exc
        return self

    def __exit__(self, *exc: object) -> None:
        self.watcher.request_stop("test over")
        self.thread.join(10)
        assert not self.thread.is_alive(), "the watcher did not stop"

    def syncs(self) -> list[dict]:
        return [r for r in list(self.records) if r["event"] == "sync"]

    def idle(self) -> bool:
        w = self.watcher
        return w._pending is None and not w.syncing

    def settle(self, timeout: float = 10.0) -> None:
        wait_for(self.idle, timeout, "the watcher to be idle")
