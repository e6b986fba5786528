"""Which index this user's memindex built here: a random build id in the index's meta,
recorded in a file of the user's own, outside the repository, keyed by the root's real path.

A repository can commit `.claude/memory/.index.db` (built from memories it then deleted),
or a project can be copied with its index: readers must not answer from such a file. Every
reader compares the index's `build_id` with the record (one small file read: the prompt hook
pays microseconds, no hashing module); a writer that finds no match deletes the file and
builds the index anew from the memory files. `memindex rebuild` mints a new id, so an index
that was ever published stops being accepted once rebuilt.

SQLite applies a `-wal` file to the index on opening, whoever wrote it, and a WAL can leave
the meta page (the build id) alone: so the record also holds the salt of the index's WAL
header (random for each WAL generation), and a non-empty `-wal` with
another salt is not ours either (`wal_salt`; memindex.index.db, `begin`).

Records live in `$XDG_STATE_HOME/memindex/indexes/` (default `~/.local/state/...`); where that
cannot be written (a read-only or another user's home), in this user's private runtime
folder (`memindex.runtime`), which does not survive a reboot: the index is then rebuilt
once. Standard library only: the hooks use it.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time

from ..defaults import PROVENANCE_MAX_BYTES, PROVENANCE_PRUNE_S
from ..store import rootfs
from ..errors import UnsafeFile



def new_id() -> str:
    """A fresh build id: 128 random bits, nothing anyone else can guess."""
    return os.urandom(16).hex()


def _state_folder() -> str:
    from ..runtime import user_folder

    return user_folder("state", "memindex", "indexes")


def _fallback_folder(create: bool) -> str:
    from ..runtime import private_dir

    return os.path.join(private_dir(create=create), "indexes")


def _key(root_real: str) -> str:
    from ..runtime import name_hash

    return name_hash(root_real.encode("utf-8", "surrogateescape"))


def accepted(root: str | os.PathLike[str]) -> tuple[str, ...]:
    """The build ids recorded for `root` (the current one, and the one before a rebuild
    while it commits); empty when there is no record this user wrote."""
    return recorded(root)[0]


def recorded(root: str | os.PathLike[str]) -> tuple[tuple[str, ...], str]:
    """(the accepted build ids, the WAL salt recorded after the last commit or ""): one read."""
    real = os.path.realpath(root)
    name = _key(real)
    for folder in (_state_folder, lambda: _fallback_folder(False)):
        try:
            data = rootfs.read(os.path.join(folder(), name), PROVENANCE_MAX_BYTES)
        except (OSError, UnsafeFile):
            continue
        if data is None:
            continue
        lines = data.decode("utf-8", "surrogateescape").split("\n")
        if lines[0] == real:
            return tuple(line for line in lines[1:3] if line), (lines[3] if len(lines) > 3 else "")
    return (), ""


def _usable(folder: str) -> str | None:
    """Make `folder` (0700) and say why it cannot hold records, or None."""
    rootfs.make_folders(folder, 0o700)
    st = os.lstat(folder)
    why = rootfs.why_unsafe(st, folder=True)
    if why is None and st.st_mode & 0o022:
        why = f"is writable by others (mode {stat_mod.S_IMODE(st.st_mode):04o})"
    return why


def record(root: str | os.PathLike[str], build_id: str, previous: str | None = None, wal: str | None = None) -> str:
    """Record `build_id` (and `previous`, still accepted until the caller commits) for
    `root`, with the WAL salt `wal` (None: the one recorded); returns the record's path.
    Raises UnsafeFile when no folder of this user can hold it (the caller's sync then
    fails, rather than build an index no reader accepts)."""
    real = os.path.realpath(root)
    name = _key(real)
    if wal is None:
        wal = recorded(root)[1]
    data = "\n".join([real, build_id, previous or "", wal, ""]).encode("utf-8", "surrogateescape")
    problems = []
    for folder in (_state_folder, lambda: _fallback_folder(True)):
        try:
            where = folder()
            why = _usable(where)
            if why:
                problems.append(f"{where} {why}")
                continue
            path = os.path.join(where, name)
            fresh = not os.path.lexists(path)
            tmp = os.path.join(where, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
            rootfs.write(tmp, data)
            os.replace(tmp, path)
            if fresh:
                _prune(where, keep=name)
            return path
        except (OSError, UnsafeFile) as exc:
            problems.append(str(exc))
    raise UnsafeFile(_state_folder(), "cannot hold the index's build record (" + "; ".join(problems) + ")")


def record_wal(root: str | os.PathLike[str], salt: str | None) -> None:
    """`salt` is the salt of the index's WAL from now on (the writer, under the lock, has
    just started a WAL generation); only a changed salt rewrites the record."""
    ids, wal = recorded(root)
    if salt is not None and wal != salt:
        record(root, ids[0] if ids else "", ids[1] if len(ids) > 1 else None, salt)


def wal_salt(index: str) -> str | None:
    """The salts of the `-wal` header of the index at `index` (bytes 16-23, random for each
    WAL generation) in hex, or None when the WAL is absent or empty (nothing to apply).
    SQLite applies any `-wal` beside the index, a committed one too, and such a WAL can
    replace title and FTS pages while leaving the meta page (the build id) alone."""
    try:
        fd = rootfs.open_fd(index + "-wal")
    except FileNotFoundError:
        return None
    try:
        head = os.read(fd, 32)
    finally:
        os.close(fd)
    return head[16:24].hex() if head else None  # a header cut short has no salt of ours


def wal_accepted(salt: str | None, recorded: str) -> bool:
    """No WAL content, or the WAL whose salt this user's writer recorded last?"""
    return salt is None or (len(salt) == 16 and salt == recorded)


def adopt_wal(root: str | os.PathLike[str], index: str) -> bool:
    """For a writer, under the lock: is the index's `-wal` ours (recorded) or harmless
    (then recorded now)? Harmless: a writer killed between starting a WAL generation with
    its one-page write and recording it leaves one valid frame, page 1 as in the index
    file but for its change counters (bytes 24-27, 92-95), whatever else follows (frames of
    other salts SQLite ignores). False: the index must not be opened with this WAL."""
    salt = wal_salt(index)
    if wal_accepted(salt, recorded(root)[1]):
        return True
    if not os.path.exists(index):
        return False  # a WAL without its index: removed with the rest
    fd = rootfs.open_fd(index + "-wal")
    try:
        db = rootfs.open_fd(index)
    except BaseException:
        os.close(fd)
        raise
    try:
        head = os.pread(fd, 32, 0)
        size = int.from_bytes(head[8:12], "big") if len(head) == 32 else 0
        frame = os.pread(fd, 24 + size, 32) if size >= 512 else b""
        page = os.pread(db, size, 0) if frame else b""
        mask = lambda b: b[:24] + b[28:92] + b[96:]  # noqa: E731
        if len(frame) != 24 + size or frame[:4] != b"\0\0\0\1" or frame[8:16] != head[16:24] or mask(frame[24:]) != mask(page):
            return False
        at, end = 32 + 24 + size, os.fstat(fd).st_size
        while at + 24 <= end:  # any later frame of this generation could be applied: not harmless
            if os.pread(fd, 24, at)[8:16] == head[16:24]:
                return False
            at += 24 + size
    finally:
        os.close(fd)
        os.close(db)
    record_wal(root, salt)
    return True


def _prune(folder: str, keep: str) -> None:
    """Drop records, older than a day, of roots whose index no longer exists."""
    from ..defaults import INDEX_FILE

    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name == keep:
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime < PROVENANCE_PRUNE_S:
                continue
            data = rootfs.read(entry.path, PROVENANCE_MAX_BYTES) or b""
            root = data.decode("utf-8", "surrogateescape").split("\n")[0]
            if entry.name.endswith(".tmp") or not os.path.exists(os.path.join(root, INDEX_FILE)):
                os.unlink(entry.path)
        except (OSError, UnsafeFile):
            continue
