"""This user's private runtime folder: the worker's sockets and the hooks' session memos.

`$XDG_RUNTIME_DIR/memindex` when XDG_RUNTIME_DIR is an absolute folder of this user that
no one else may enter, else `/tmp/memindex-<uid>`. It must be a real folder (not a link)
owned by this user with mode 0700; anything else is refused. Standard library only: the
hooks import it.
"""

from __future__ import annotations

import os
import stat as stat_mod

SUN_PATH_MAX = 100  # a socket path holds 108 bytes on Linux, 104 on macOS, with its NUL


def why_not_private(path: str) -> str | None:
    """Why `path` is not a private folder of this user (a link, not a folder, another
    owner, open to others), or None. FileNotFoundError when it is absent."""
    from .rootfs import why_unsafe

    st = os.lstat(path)
    why = why_unsafe(st, folder=True)
    if why:
        return why
    if stat_mod.S_IMODE(st.st_mode) != 0o700:
        return f"has mode {stat_mod.S_IMODE(st.st_mode):04o}, not 0700"
    return None


def runtime_dir() -> str:
    """The folder of this user's worker sockets and session memos (not checked here: see `private_dir`)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or ""
    if os.path.isabs(base) and len(base) + len("/memindex/") + 21 <= SUN_PATH_MAX:
        try:
            if why_not_private(base) is None:
                return os.path.join(base, "memindex")
        except OSError:
            pass
    if not hasattr(os, "geteuid"):  # Windows: the user's own temporary folder
        return os.path.join(os.environ.get("TEMP") or os.path.expanduser("~"), "memindex")
    return f"/tmp/memindex-{os.geteuid()}"


def private_dir(create: bool = False) -> str:
    """`runtime_dir()`, checked (and made with mode 0700 when `create`). Raises UnsafeFile
    when it is not this user's private folder, FileNotFoundError when absent."""
    from .errors import UnsafeFile

    path = runtime_dir()
    if create:
        try:
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
