"""The watcher's pid marker: who watches this root (read by `status` and the prompt hook,
written by `watch`). Standard library only: the hook imports it under `python -I -S`.

`<root>/.watch.pid` holds the watcher's pid. Where the OS has `flock` (Linux, macOS, BSD)
the watcher also holds an exclusive lock on that file for its whole life: the kernel
decides who wins when two watchers start at the same instant, and a watcher that was
killed (SIGKILL, a crash, a reboot) releases the lock with its last breath, so its stale
marker never blocks the next one. Elsewhere the marker is created with O_CREAT|O_EXCL and
a marker whose pid is dead counts as stale.
"""

from __future__ import annotations

import errno
import os
import time

from . import rootfs
from ..defaults import MAX_PID_BYTES, WATCH_MARKER
from ..errors import UnsafeFile, WatcherRunning


try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover  (Windows)
    fcntl = None  # type: ignore[assignment]


def marker_path(root: Path) -> Path:
    from pathlib import Path  # not on the prompt hook's path (`watcher_pid` joins strings)

    return Path(root) / WATCH_MARKER


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # pragma: no cover  (Windows: invalid pid)
        return False
    return True


def _read_pid(path: Path) -> int | None:
    """The pid in the marker; None when absent, garbled, or not a small regular file of
    this user (a link to /dev/zero or a FIFO is refused, never read or waited on)."""
    try:
        data = rootfs.read(str(path), MAX_PID_BYTES)
        pid = int(data.split()[0]) if data else 0
    except (OSError, ValueError, IndexError, UnsafeFile):
        return None
    return pid if 0 < pid < 2**31 else None


def _locked_by_someone(path: Path) -> bool | None:
    """Does a live process hold the marker's lock? None when that cannot be told."""
    if fcntl is None:
        return None
    try:
        fd = rootfs.open_fd(str(path))
    except (OSError, UnsafeFile):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return True if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES) else None
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def watcher_pid(root: Path) -> int | None:
    """The pid of the live watcher of `root`, or None (a stale marker counts as none)."""
    return owner_pid(os.path.join(root, WATCH_MARKER))


def owner_pid(path: Path) -> int | None:
    """The pid of the live process that holds the pid marker at `path` (the watcher's, the
    resident worker's), or None: a stale marker counts as none."""
    pid = _read_pid(path)
    if pid is None or not pid_alive(pid):
        return None
    # A live pid in the file may be a recycled one: the lock says whether a watcher holds it.
    return None if _locked_by_someone(path) is False else pid


class Marker:
    """This process's claim on `<root>/.watch.pid` (or another marker `name`, such as the
    resident worker's): `claim()`, `still_ours()`, `release()`."""

    def __init__(self, root: Path, name: str = WATCH_MARKER) -> None:
        from pathlib import Path

        self.path = Path(root) / name
        self.fd: int | None = None
        self.ident: tuple[int, int] | None = None

    def claim(self, wait_s: float = 2.0) -> None:
        """Take the marker or raise WatcherRunning naming the owner's pid."""
        if fcntl is None:  # pragma: no cover
            return self._claim_exclusive_create(wait_s)
        deadline = time.monotonic() + wait_s
        while True:
            fd = rootfs.open_fd(str(self.path), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                pid = _read_pid(self.path)
                if pid is not None and pid_alive(pid):
                    raise WatcherRunning(pid, self.path) from None
                # The holder is starting (no pid written yet) or is `status` probing the
                # lock for an instant: look again shortly.
                if time.monotonic() > deadline:
                    raise WatcherRunning(pid, self.path) from None
                time.sleep(0.05)
                continue
            # Locked. The previous owner may have unlinked the path meanwhile: then this
            # lock is on an orphan inode and the claim starts over.
            st = os.fstat(fd)
            try:
                current = os.lstat(self.path)
            except FileNotFoundError:
                current = None
            if current is None or (current.st_dev, current.st_ino) != (st.st_dev, st.st_ino):
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self.fd, self.ident = fd, (st.st_dev, st.st_ino)
            return None

    def _claim_exclusive_create(self, wait_s: float) -> None:  # pragma: no cover  (Windows)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fd = rootfs.open_fd(str(self.path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                pid = _read_pid(self.path)
                if pid is not None and pid_alive(pid):
                    raise WatcherRunning(pid, self.path) from None
                if pid is None and time.monotonic() < deadline:
                    time.sleep(0.05)  # being written by a watcher that is starting
                    continue
                try:
                    os.unlink(self.path)
                except FileNotFoundError:
                    pass
                continue
            os.write(fd, f"{os.getpid()}\n".encode())
            st = os.fstat(fd)
            self.fd, self.ident = fd, (st.st_dev, st.st_ino)
            return None

    def still_ours(self) -> bool:
        """Is the marker on disk still the one we hold (not deleted or replaced)?"""
        if self.fd is None:
            return False
        try:
            st = os.lstat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.ident

    def owner(self) -> int | None:
        """The pid the marker on disk names (ours or another watcher's)."""
        return _read_pid(self.path)

    def release(self) -> None:
        """Remove the marker (while still holding the lock), then drop the lock."""
        if self.fd is None:
            return
        try:
            if self.still_ours():
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.fd = self.ident = None

    def __enter__(self) -> "Marker":
        self.claim()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
