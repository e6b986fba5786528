"""This user's own folders: the private runtime folder (the worker's and the watcher's sockets, both ends, and the hooks'
session memos, kept here too), and the XDG folders of the user's config, state and cache
(`user_folder`).

`$XDG_RUNTIME_DIR/memindex` when XDG_RUNTIME_DIR is an absolute folder of this user that
no one else may enter, else `$TMPDIR/memindex-<uid>` (`/tmp/memindex-<uid>`). It must be a
real folder (not a link) owned by this user that no one else may enter; anything else is
refused. In a shared temporary folder anyone can create that name first: when another
user's (or an open) folder squats it, this user's cache folder is used instead
(`$XDG_CACHE_HOME/memindex/run`, default `~/.cache/memindex/run`), so no one else can
disable the worker; `squatted()` says so in one line. Standard library only: the hooks
import it.

The session memo (`recall`, `remember`, `add_shown`) is what one session's hooks tell each
other: the prompt hook leaves the user's latest prompt, its earlier turns and the memories
it injected for the PreToolUse hook.

The transcript cannot carry them: Claude Code writes it lazily (in `-p` mode the first
turn's file does not exist yet when the first tool runs, `tests/e2e`), so a tool hook
reading it would see an older prompt or none, and would repeat what the prompt hook just
showed. The memo is one small JSON file per session in the private runtime folder, named
by a hash of the session id; memos older than MEMO_TTL_S are removed when a new session
writes its first. Every memo function swallows its errors: a memo is an optimisation of
relevance, never a reason to fail a hook.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time

from .defaults import MEMO_MAX, MEMO_PROMPT_MAX, MEMO_TTL_S, SUN_PATH_MAX
from .errors import UnsafeFile
from .lean import dumps, loads
from .store import rootfs

# (XDG variable, the default under the home folder) of each kind of this user's own folder
XDG = {"config": ("XDG_CONFIG_HOME", ".config"), "state": ("XDG_STATE_HOME", ".local/state"),
       "cache": ("XDG_CACHE_HOME", ".cache")}


def user_folder(kind: str, *parts: str) -> str:
    """`$XDG_<KIND>_HOME/<parts>` when the variable is an absolute path (the XDG rule: a
    relative value is ignored), else under the home folder's default (XDG)."""
    var, default = XDG[kind]
    base = os.environ.get(var) or ""
    if not os.path.isabs(base):
        base = os.path.join(os.environ.get("HOME") or os.path.expanduser("~"), *default.split("/"))
    return os.path.join(base, *parts)


def why_not_private(path: str) -> str | None:
    """Why `path` is not a private folder of this user (a link, not a folder, another
    owner, open to others), or None. FileNotFoundError when it is absent."""
    st = os.lstat(path)
    why = rootfs.why_unsafe(st, folder=True)
    if why:
        return why
    if stat_mod.S_IMODE(st.st_mode) & 0o077:
        return f"has mode {stat_mod.S_IMODE(st.st_mode):04o}: others may enter it"
    return None


def _shared() -> str:
    """`memindex-<uid>` in the temporary folder every user shares."""
    base = os.environ.get("TMPDIR") or ""
    if not os.path.isabs(base) or len(base) > 40:
        base = "/tmp"
    if not hasattr(os, "geteuid"):  # Windows: the user's own temporary folder
        return os.path.join(os.environ.get("TEMP") or os.path.expanduser("~"), "memindex")
    return os.path.join(base, f"memindex-{os.geteuid()}")


def _own_fallback() -> str:
    """A folder under this user's cache folder: no other user can create it first."""
    return user_folder("cache", "memindex", "run")


def squatted() -> str | None:
    """One line when the shared folder is not this user's private one and the fallback is
    used instead (for the worker's log and `status`), else None."""
    used, shared = runtime_dir(), _shared()
    if used != _own_fallback():
        return None
    try:
        why = why_not_private(shared)
    except OSError as exc:
        why = f"cannot be checked ({exc.strerror or exc})"
    return f"{shared} {why}: using {used} instead (remove {shared} to go back to it)"


def runtime_dir() -> str:
    """The folder of this user's worker sockets and session memos (not checked here: see `private_dir`)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or ""
    if os.path.isabs(base) and len(base) + len("/memindex/") + 21 <= SUN_PATH_MAX:
        try:
            if why_not_private(base) is None:
                return os.path.join(base, "memindex")
        except OSError:
            pass
    shared = _shared()
    try:
        if why_not_private(shared) is None:
            return shared
    except FileNotFoundError:
        return shared  # made by `private_dir(create=True)`
    except OSError:
        pass
    fallback = _own_fallback()
    return fallback if len(fallback) + 22 <= SUN_PATH_MAX else shared  # too long for a socket: refused as it is


def private_dir(create: bool = False) -> str:
    """`runtime_dir()`, checked (and made with mode 0700 when `create`, its parents too
    when it is the cache fallback). Raises UnsafeFile when it is not this user's private
    folder, FileNotFoundError when absent."""
    path = runtime_dir()
    if create:
        try:
            if path == _own_fallback():
                rootfs.make_folders(os.path.dirname(path), 0o700)
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    why = why_not_private(path)
    if why:
        raise UnsafeFile(path, why)
    return path


def name_hash(data: bytes) -> str:
    """A 64-bit FNV-1a hash in hex: a short file name for a root or a session (no hashlib)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def socket_path(root: str | os.PathLike[str], suffix: str) -> str:
    """`<runtime dir>/<hash of the root's real path><suffix>`: one socket per root and
    listener (the semantic worker's, the watcher's)."""
    real = os.path.realpath(os.fspath(root))
    return os.path.join(runtime_dir(), name_hash(real.encode("utf-8", "surrogateescape")) + suffix)


def peer_uid(sock) -> int | None:
    """The uid of the process at the other end of a Unix socket (Linux SO_PEERCRED), or
    None where the OS does not say."""
    import _socket
    import sys

    opt = getattr(_socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    try:
        creds = sock.getsockopt(_socket.SOL_SOCKET, opt, 12)  # struct ucred: pid, uid, gid
    except OSError:
        return None
    return int.from_bytes(creds[4:8], sys.byteorder)


def connect_private(path: str, deadline: float, strict: bool = False):
    """(a socket connected to this user's listener at `path`, None) or (None, why): "unsafe"
    (the folder is not this user's private one, the path is not a socket of this user),
    "absent" (none there, or a stale one nobody listens on: ECONNREFUSED), "slow". `strict`:
    also refused ("unsafe") when the socket is open to others or another user's process
    listens. `_socket`, not `socket`, which imports `selectors` and enums."""
    import _socket

    try:
        if why_not_private(os.path.dirname(path)):
            return None, "unsafe"
        st = os.lstat(path)
    except OSError:
        return None, "absent"
    if not stat_mod.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
        return None, "unsafe"
    if strict and stat_mod.S_IMODE(st.st_mode) & 0o077:
        return None, "unsafe"
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.connect(path)
    except TimeoutError:
        sock.close()
        return None, "slow"
    except OSError:
        sock.close()
        return None, "absent"
    if strict:
        uid = peer_uid(sock)
        if uid is not None and uid != os.geteuid():
            sock.close()
            return None, "unsafe"
    return sock, None


def listen_private(path: str, backlog: int):
    """A Unix socket listening at `path` in this user's private runtime folder (mode 0600
    from its creation), for a process holding the root's marker: any socket of this user
    already there is a dead one's and is replaced; anything else raises UnsafeFile.
    Returns (socket, (st_dev, st_ino)): the identity tells later whether it is still ours."""
    import socket

    try:
        st = os.lstat(path)
        if not stat_mod.S_ISSOCK(st.st_mode) or st.st_uid != os.geteuid():
            raise UnsafeFile(path, "is not a socket of this user")
        os.unlink(path)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: no instant where others may connect
    try:
        sock.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(backlog)
    st = os.lstat(path)
    return sock, (st.st_dev, st.st_ino)


# --- the session memo ------------------------------------------------------------------



def _path(session_id: str, create: bool = False) -> str:
    return os.path.join(private_dir(create), f"session-{name_hash(session_id.encode('utf-8', 'surrogateescape'))}.json")


def recall(session_id: object) -> dict | None:
    """The session's memo {"prompt", "turns", "shown"}, or None (absent, unsafe, garbled)."""
    if not isinstance(session_id, str) or not session_id:
        return None
    try:
        data = loads(rootfs.read(_path(session_id), MEMO_MAX) or b"")
    except (OSError, ValueError, RecursionError, UnsafeFile):
        return None
    ok = isinstance(data, dict) and isinstance(data.get("prompt"), str)
    return data if ok and _strings(data.get("turns")) and _strings(data.get("shown")) else None


def remember(session_id: object, prompt: str, turns: list[str], shown: list[str]) -> None:
    """Leave the latest prompt (replacing the memo: what earlier prompts' hooks showed is
    in the transcript by the time a new prompt comes)."""
    _write(session_id, {"prompt": prompt[:MEMO_PROMPT_MAX], "turns": [t[:MEMO_PROMPT_MAX] for t in turns], "shown": shown})


def add_shown(session_id: object, memo: dict, shown: list[str]) -> None:
    """Add what a tool hook injected to the memo it read."""
    _write(session_id, {**memo, "shown": [*memo["shown"], *(p for p in shown if p not in memo["shown"])]})


def _write(session_id: object, memo: dict) -> None:
    if not isinstance(session_id, str) or not session_id:
        return
    try:
        path = _path(session_id, create=True)
        data = dumps(memo).encode("utf-8", "surrogateescape")
        if len(data) > MEMO_MAX:
            return
        scratch = f"{path}.{os.getpid()}.tmp"
        rootfs.write(scratch, data)
        # Never a rename over the old memo: ext4 then forces the new file's blocks out first
        # (auto_da_alloc), on every prompt. A reader sees the old memo, none (the
        # memo is a hint: every reader falls back to the transcript), or the new one; never half.
        try:
            os.unlink(path)
            new = False
        except FileNotFoundError:
            new = True
        os.rename(scratch, path)
        if new:
            _prune(os.path.dirname(path))
    except (OSError, ValueError, UnsafeFile):
        pass


def _prune(folder: str) -> None:
    cutoff = time.time() - MEMO_TTL_S
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith("session-") and entry.is_file(follow_symlinks=False):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
