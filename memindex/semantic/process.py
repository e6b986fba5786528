"""The resident worker's dealings with processes and files: the processes it serves, its
resident memory, the model it loads, the back-off when it cannot start, the setting that
started it."""

from __future__ import annotations

import os
import threading
import time

from ..defaults import PARENTS_MAX, SERVE_SPAWN_MARKER
from . import client



def rss_mb() -> float:
    """Resident memory of this process in MiB (/proc; else the peak, from getrusage)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            pages = int(fh.read().split()[1])
        return round(pages * os.sysconf("SC_PAGE_SIZE") / 1048576, 1)
    except (OSError, ValueError, IndexError):
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return round(peak / (1048576 if sys.platform == "darwin" else 1024), 1)


def limit_threads() -> None:
    """One BLAS thread: a query is one short text, and a second thread's start-up costs more
    than it saves. Takes effect before NumPy is first imported."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
        os.environ.setdefault(var, "1")


class Parents:
    """The processes the worker lives for (empty: no such limit)."""

    def __init__(self) -> None:
        self.known: dict[int, int | None] = {}  # pid -> start time (Linux), to tell a recycled pid
        self._lock = threading.Lock()

    def add(self, pid: int) -> bool:
        from ..store.marker import pid_alive

        if not (0 < pid < 2**31) or pid == os.getpid() or not pid_alive(pid):
            return False
        info = client.proc_stat(pid)
        if info is not None and info[3] in "ZX":
            return False
        with self._lock:
            if len(self.known) < PARENTS_MAX or pid in self.known:
                self.known[pid] = info[2] if info else None
        return True

    def all_gone(self) -> bool:
        from ..store.marker import pid_alive

        with self._lock:
            if not self.known:
                return False
            for pid, started in list(self.known.items()):
                info = client.proc_stat(pid) if started is not None else None
                recycled = started is not None and (info is None or info[2] != started)
                if not pid_alive(pid) or recycled or (info is not None and info[3] in "ZX"):  # a zombie is gone
                    del self.known[pid]
            return not self.known


def semantic_setting(root: str) -> tuple[bool, str] | None:
    """(semantic.enabled, semantic.model) of the root's config; None if it cannot be read."""
    from ..config import load_config

    try:
        cfg = load_config(root)
    except Exception:
        return None
    if any("semantic" in w or "cannot read" in w or "invalid JSON" in w for w in cfg.warnings if w != cfg.notice):
        return None  # a config being written, or broken: not a reason to stop
    return bool(cfg["semantic.enabled"]), str(cfg["semantic.model"])


def back_off(root: str, seconds: float) -> None:
    """Keep the hooks from starting a worker that cannot start for `seconds` (the spawn
    guard's mtime, set in the future)."""
    from ..store import rootfs

    try:
        fd = rootfs.open_fd(os.path.join(root, SERVE_SPAWN_MARKER), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            when = time.time() + seconds
            os.utime(fd, (when, when))
        finally:
            os.close(fd)
    except Exception:
        pass
