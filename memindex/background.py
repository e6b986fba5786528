"""`memindex` commands the hooks start in the background: detached (their own session,
they outlive the hook), stdin and stdout on /dev/null, stderr appended to the root's log
(rotated once past LOG_MAX_BYTES). Standard library only: the hooks use it."""

from __future__ import annotations

import os
import sys

from .defaults import LOG_FILE, LOG_MAX_BYTES


def command(root: str | os.PathLike[str], *args: str) -> tuple[list[str], dict[str, str]]:
    """`python -m memindex --root ROOT ARGS...` for this package, whatever the caller's
    own sys.path (the hooks run `-I -S` from the plugin folder), and its environment."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = package_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return [sys.executable, "-m", "memindex", "--root", os.fspath(root), *args], env


def open_log(root: str | os.PathLike[str]) -> int:
    """The root's log, appended to (rotated once past LOG_MAX_BYTES); raises UnsafeFile
    when it is a link, a FIFO or another user's file."""
    from . import rootfs

    path = os.path.join(root, LOG_FILE)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    fd = rootfs.open_fd(path, flags, 0o644)
    if os.fstat(fd).st_size > LOG_MAX_BYTES:
        os.close(fd)
        os.replace(path, path + ".1")  # renames the checked file itself, never a link's target
        fd = rootfs.open_fd(path, flags, 0o644)
    return fd


def start_detached(root: str | os.PathLike[str], *args: str) -> int:
    """`start` for the prompt hook's periodic syncs, without loading `subprocess` (5 ms of
    imports on every prompt that starts one): `posix_spawn` in a new session where the OS
    has it, else `start`. Returns the child's pid; nobody waits for it."""
    spawn = getattr(os, "posix_spawn", None)
    if spawn is None:  # Windows
        return start(root, *args).pid
    cmd, env = command(root, *args)
    log = open_log(root)
    try:
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, log, 2),
        ]
        return spawn(cmd[0], cmd, env, file_actions=actions, setsid=True)
    finally:
        os.close(log)


def start(root: str | os.PathLike[str], *args: str, cwd: str | None = None):
    """Start `memindex --root ROOT ARGS...` detached; returns its Popen."""
    import subprocess

    cmd, env = command(root, *args)
    log = open_log(root)
    try:
        return subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            env=env, cwd=cwd, start_new_session=True, close_fds=True,
        )
    finally:
        os.close(log)
