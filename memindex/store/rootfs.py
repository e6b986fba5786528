"""The one way memindex opens its own files in a memory root (lock, markers, log, config,
index): never through a symbolic link, never blocking on a FIFO or a device, only a
regular file owned by the current user, and read with a size bound.

A memory root is untrusted input (a cloned repository can carry links and FIFOs under
`.claude/memory/`); `docs/reliability.md` states the threat model. Standard library only:
the prompt hook uses it.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
import time

from ..defaults import FOLDER_MODE, FUTURE_SLACK_S
from ..errors import UnsafeFile

# Windows has neither O_NOFOLLOW nor O_NONBLOCK (nor FIFOs); a link is still refused by lstat.
_BASE = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def euid() -> int | None:
    """This process's effective uid; None where the OS has no uids (Windows)."""
    get = getattr(os, "geteuid", None)
    return get() if get is not None else None


def why_unsafe(st: os.stat_result, folder: bool = False) -> str | None:
    """Why an lstat result is not this user's own regular file (or folder), or None."""
    if stat_mod.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if folder and not stat_mod.S_ISDIR(st.st_mode):
        return "is not a folder"
    if not folder and not stat_mod.S_ISREG(st.st_mode):
        return "is not a regular file"
    me = euid()
    if me is not None and st.st_uid != me:
        return f"is owned by uid {st.st_uid}, not by this user ({me})"
    return None


def single_flight(path: str, window_s: float, ahead_s: float = FUTURE_SLACK_S) -> bool:
    """At most one start per `window_s`: False when the guard file at `path` was touched
    less than that ago, else touch it and say True. An mtime up to `ahead_s` in the future
    backs off (a deliberate back-off); further ahead, the clock was set back since: the
    guard has expired, it would otherwise silence every start until the clock caught up.
    The guard is checked like every root file (no link, FIFO or foreign file)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        reason = why_unsafe(st)
        if reason:
            raise UnsafeFile(path, reason)
        if not expired(st.st_mtime, window_s, ahead_s):
            return False
    write(path, b"")
    if st is not None and st.st_mtime > time.time():
        os.utime(path)  # truncating kept the future mtime on some systems: now, explicitly
    return True


def guarded(path: str, window_s: float) -> bool:
    """Would `single_flight` refuse a start now (a guard touched less than `window_s` ago)?
    A look without touching anything; `single_flight` decides (and checks the file)."""
    try:
        return not expired(os.lstat(path).st_mtime, window_s)
    except OSError:
        return False


def expired(mtime: float, window_s: float, ahead_s: float = FUTURE_SLACK_S) -> bool:
    """Is a guard touched at `mtime` older than `window_s`, or further than `ahead_s` in
    the future (the clock went back)?"""
    age = time.time() - mtime
    return age >= window_s or age < -(window_s + ahead_s)


def open_fd(path: str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """os.open without following a link or blocking, then a regular-file, same-owner check.

    Raises UnsafeFile (with the path and the reason) for a link, FIFO, device, directory or
    another user's file; FileNotFoundError when it is absent and O_CREAT was not given."""
    if not _BASE & getattr(os, "O_NOFOLLOW", 0) and os.path.islink(path):
        raise UnsafeFile(path, "is a symbolic link")  # no O_NOFOLLOW (Windows): checked first
    try:
        fd = os.open(path, flags | _BASE, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(path, "is a symbolic link") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO without a reader, a folder
            raise UnsafeFile(path, "is not a regular file") from None
        raise
    try:
        why = why_unsafe(os.fstat(fd))
        if why:
            raise UnsafeFile(path, why)
        if _BASE & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read(path: str, max_bytes: int) -> bytes | None:
    """The file's bytes (at most `max_bytes`; longer raises UnsafeFile), or None if absent."""
    try:
        fd = open_fd(path)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnsafeFile(path, f"is larger than {max_bytes} bytes")
    return data


def write(path: str, data: bytes, append: bool = False) -> None:
    """Create, truncate or append to one of memindex's small files."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = open_fd(path, flags, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def make_folders(path: str, mode: int = FOLDER_MODE) -> None:
    """`os.makedirs(path, exist_ok=True)`, each folder it creates (parents too) at `mode`
    whatever the umask: `os.makedirs` gives the parents 0777 minus the umask, every user's
    to write under `umask 000`."""
    head, tail = os.path.split(path)
    if not tail:
        head, tail = os.path.split(head)
    if head and tail and not os.path.lexists(head):
        make_folders(head, mode)
    try:
        os.mkdir(path, mode)  # the umask may only take bits away from `mode`
    except FileExistsError:
        if not os.path.isdir(path):
            raise


def derived_mode(root: str, files_mode: int) -> int:
    """The mode of memindex's derived files (index, its WAL and SHM, index.md, the log):
    no more readable than what they are derived from. Owner read-write, plus group and
    other read only where the root folder and every category folder and memory file
    (`files_mode`: their modes AND-ed) all allow it. One file at 0600 makes them all 0600."""
    try:
        root_mode = os.stat(root).st_mode
    except OSError:
        root_mode = 0
    return 0o600 | (0o044 & root_mode & files_mode)


def create_private(path: str) -> None:
    """Create an empty file at 0600 unless something is there (SQLite then keeps the
    mode, and gives its WAL and SHM files the same)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BASE, 0o600))
    except FileExistsError:
        pass


def protect(paths: list[str], mode: int, exact: bool) -> None:
    """Give each existing derived file `mode` (`exact`), or take away the group and other
    bits that `mode` lacks (a partial view of the memory files may only tighten). Links,
    FIFOs and other users' files are left alone (they are reported where they are used)."""
    for path in paths:
        try:
            fd = open_fd(path)
        except (OSError, UnsafeFile):
            continue
        try:
            now = stat_mod.S_IMODE(os.fstat(fd).st_mode)
            want = mode if exact else now & ~(0o077 & ~mode)
            if want != now:
                os.fchmod(fd, want)
        except OSError:
            pass
        finally:
            os.close(fd)


def check(path: str) -> None:
    """For files another library opens by name (SQLite's index, its -wal/-shm/-journal):
    raise UnsafeFile unless the path is absent or a regular file of this user."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    why = why_unsafe(st)
    if why:
        raise UnsafeFile(path, why)


def try_lock(fd: int) -> bool:
    """Take an exclusive lock on an open file without waiting: flock, or msvcrt on Windows."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
