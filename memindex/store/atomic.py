"""Crash-safe file writes: readers see the old file or the new one, never a torn one.

Used by the write path (memory files) and by sync (index.md).
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod

from ..defaults import FILE_MODE


def fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))  # a folder: never a FIFO's wait
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_temp(directory: str, name: str, data: bytes, mode: int | None = None) -> str:
    """A fully written, fsynced hidden temp file next to the final path: `mode` exactly
    when given, else FILE_MODE less what the umask takes away (never more, whatever the
    umask: 0666 under `umask 000` made a memory every user's to rewrite, and sync refuses it)."""
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        unlink_quietly(tmp)
        raise
    return tmp


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_NO_LINK = {errno.EPERM, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV}


def create_exclusive(path: str, data: bytes) -> None:
    """Create `path` with `data` atomically, never overwriting: readers see no file or the
    whole file. Raises FileExistsError if `path` exists (even as a dangling link)."""
    directory, name = os.path.split(path)
    tmp = write_temp(directory, name, data)
    try:
        try:
            os.link(tmp, path)  # fails with EEXIST, whatever `path` is
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in _NO_LINK:
                raise
            # No hard links on this filesystem: the caller holds the writer lock, so only a
            # foreign writer could race between this check and the rename.
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, "File exists", path) from None
            os.replace(tmp, path)
    finally:
        unlink_quietly(tmp)
    fsync_dir(directory)


def replace_atomic(path: str, data: bytes, new_mode: int | None = None) -> None:
    """Replace a file atomically, keeping its permission bits (a regular file's own: never
    those of what a link points to, such as /dev/zero's 0666) less write access for other
    users (another group's, every user's: sync refuses such a file); a new file gets
    `new_mode` (None: as `write_temp`). Readers see the old file or the new one, never an
    empty one."""
    directory, name = os.path.split(path)
    try:
        st = os.lstat(path)
        mode = _own_write_only(st) if stat_mod.S_ISREG(st.st_mode) else new_mode
    except OSError:
        mode = new_mode
    tmp = write_temp(directory, name, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise
    fsync_dir(directory)


def _own_write_only(st: os.stat_result) -> int:
    """A file's mode without write access for every user, nor for a group not the user's own."""
    mode = stat_mod.S_IMODE(st.st_mode) & ~stat_mod.S_IWOTH
    if hasattr(os, "getegid") and st.st_gid != os.getegid():
        mode &= ~stat_mod.S_IWGRP
    return mode
