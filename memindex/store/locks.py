"""The writer's locks on a memory root: an OS lock, released when its process dies, through
`filelock` where it is installed and the same lock from the standard library where it is
not (the bare `python3` that runs the hooks).

`filelock` is imported only when a lock is taken: readers (the prompt hook) take none. A
lock path that is not this user's regular file (a committed `.index.lock/` folder, a link,
a FIFO) is replaced once, with one line on stderr, so that it cannot stop every sync for good.
"""

from __future__ import annotations

import os
import stat as stat_mod
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from . import rootfs
from .rootfs import try_lock
from ..errors import LockTimeout, UnsafeFile


def _replace_bad(path: str) -> None:
    """Remove what sits at a lock path unless it is this user's regular file: a folder
    (moved aside when it holds anything), a link (the link itself, never its target), a
    FIFO, a socket, another user's file. Raises UnsafeFile when it cannot be removed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    why = rootfs.why_unsafe(st)
    if why is None:
        return
    try:
        if stat_mod.S_ISDIR(st.st_mode):
            try:
                os.rmdir(path)
            except OSError:
                os.rename(path, f"{path}.moved-aside-{time.time_ns()}")
        else:
            os.unlink(path)
    except FileNotFoundError:
        return  # another process replaced it first
    except OSError as exc:
        raise UnsafeFile(path, f"{why} and cannot be replaced ({exc.strerror}): remove it") from None
    print(f"memindex: replaced the lock path {path}, which {why}", file=sys.stderr)


class _Busy(Exception):
    pass


class _StdlibLock:
    """The same OS lock as filelock's, for an interpreter without it (the hooks run the
    plugin's background syncs with a bare `python3`): `flock` on POSIX, `msvcrt.locking`
    on Windows. Both kinds exclude each other (the same kernel lock)."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path, self.timeout, self.fd = path, timeout, -1

    def acquire(self, blocking: bool = True, poll_interval: float = 0.05) -> None:
        fd = rootfs.open_fd(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + (self.timeout if blocking else 0)
        try:
            while not try_lock(fd):
                if time.monotonic() >= deadline:
                    raise _Busy()
                time.sleep(poll_interval)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def release(self) -> None:
        fd, self.fd = self.fd, -1
        try:
            _unlock(fd)
        finally:
            os.close(fd)


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


def _lock(path: str, timeout: float):
    """(lock, the exception a busy lock raises): filelock's, else the standard library's."""
    _replace_bad(path)
    try:
        import filelock  # only when a lock is taken: its imports are heavy
    except ImportError:
        return _StdlibLock(path, timeout), _Busy
    return filelock.FileLock(path, timeout=timeout, mode=0o644), filelock.Timeout


@contextmanager
def exclusive(path: str, timeout: float) -> Iterator[None]:
    """Hold the lock at `path`, waiting at most `timeout` seconds (LockTimeout past it)."""
    lock, timed_out = _lock(path, timeout)
    try:
        lock.acquire(poll_interval=0.05)
    except timed_out:
        raise LockTimeout(path, timeout) from None
    except IsADirectoryError:  # a folder appeared since: say so, never wait on it
        raise UnsafeFile(path, "is not a regular file") from None
    except OSError as exc:
        raise OSError(exc.errno, f"cannot take the lock {path}: {exc.strerror}") from None
    try:
        yield
    finally:
        lock.release()


@contextmanager
def attempt(path: str) -> Iterator[bool]:
    """Take the lock at `path` if it is free: yields whether this caller holds it."""
    lock, timed_out = _lock(path, 0)
    try:
        lock.acquire(blocking=False)
    except timed_out:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
