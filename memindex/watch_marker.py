"""The watcher's pid marker: who watches this root (read by `status`, written by `watch`)."""

from __future__ import annotations

import os
from pathlib import Path

from .defaults import WATCH_MARKER


def marker_path(root: Path) -> Path:
    return root / WATCH_MARKER


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watcher_pid(root: Path) -> int | None:
    """The pid of the live watcher of `root`, or None (a stale marker counts as none)."""
    try:
        pid = int(marker_path(root).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if pid > 0 and pid_alive(pid) else None
