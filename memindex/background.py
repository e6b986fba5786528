"""`memindex` commands the hooks start in the background: detached (their own session,
they outlive the hook), stdin and stdout on /dev/null, stderr appended to the root's log
(rotated once past LOG_MAX_BYTES). Standard library only: the hooks use it.

Isolated from the project (a cloned repository is untrusted input): the working folder is
`/`, never the project, and Python is told not to put the current folder first on its path
(`-P` on 3.11+; on 3.10, which has no -P short of -I, the bootstrap drops that entry before
importing anything). The package itself comes from an explicit path, first. Unlike `-I`,
this keeps the user's own site-packages (`pip install --user`) and environment: the
project's files, not the user's, are the untrusted part.
"""

from __future__ import annotations

import os
import sys

from .defaults import LOG_FILE, LOG_MAX_BYTES, NICE, PACKAGE_DIR


# Runs as `python [-P] -c BOOT memindex PACKAGE_PARENT --root ROOT ARGS...` ("memindex" names
# the process in `ps`): the package's parent goes first on sys.path (on 3.10, in place of
# the current folder that -c put there), then the CLI sees `memindex --root ROOT ARGS...`.
BOOT = (
    "import sys; sys.path[0:0 if getattr(sys.flags, 'safe_path', 0) else 1] = [sys.argv[2]]; "
    "sys.argv[0:3] = ['memindex']; from memindex.cli import main; sys.exit(main())"
)
# Maintenance the hooks start (periodic checks, syncs, session capture) runs at a lower
# priority: on a busy machine it would otherwise take the CPU from the very hook that
# started it, and from the user's own work. Not the semantic worker: prompts wait for it.
BOOT_NICE = f"import os; os.nice({NICE}) if hasattr(os, 'nice') else None; " + BOOT
CWD = os.path.abspath(os.sep)  # never the project: nothing there is looked up by name


def command(root: str | os.PathLike[str], *args: str, nice: bool = False) -> list[str]:
    """`memindex --root ROOT ARGS...` for this package, whatever the caller's own sys.path
    (the hooks run `-I -S` from the plugin folder), isolated from the project's files;
    `nice`: at a lower priority (NICE)."""
    package_parent = os.path.dirname(PACKAGE_DIR)
    flags = ["-P"] if sys.version_info >= (3, 11) else []
    boot = BOOT_NICE if nice else BOOT
    return [sys.executable, *flags, "-c", boot, "memindex", package_parent, "--root", os.path.abspath(os.fspath(root)), *args]


def open_log(root: str | os.PathLike[str]) -> int:
    """The root's log, appended to (rotated once past LOG_MAX_BYTES); raises UnsafeFile
    when it is a link, a FIFO or another user's file."""
    from .store import rootfs

    path = os.path.join(root, LOG_FILE)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    fd = rootfs.open_fd(path, flags, 0o600)  # private at first: sync sets rootfs.derived_mode
    if os.fstat(fd).st_size > LOG_MAX_BYTES:
        os.close(fd)
        os.replace(path, path + ".1")  # renames the checked file itself, never a link's target
        fd = rootfs.open_fd(path, flags, 0o600)
    return fd


def start_detached(root: str | os.PathLike[str], *args: str, nice: bool = True) -> int:
    """`start` for the prompt hook's periodic syncs, without importing `subprocess` on
    every prompt that starts one: `posix_spawn` in a new session where the OS
    has it (through `/bin/sh -c 'cd / && exec ...'`: the working folder is `/`, as for
    `start`), else `start`. Returns the child's pid; nobody waits for it."""
    spawn = getattr(os, "posix_spawn", None)
    if spawn is None or not os.path.exists("/bin/sh"):  # Windows
        return start(root, *args, nice=nice).pid
    cmd = command(root, *args, nice=nice)
    log = open_log(root)
    try:
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, log, 2),
        ]
        return spawn("/bin/sh", ["sh", "-c", 'cd / && exec "$@"', "sh", *cmd], dict(os.environ),
                     file_actions=actions, setsid=True)
    finally:
        os.close(log)


def start(root: str | os.PathLike[str], *args: str, nice: bool = False):
    """Start `memindex --root ROOT ARGS...` detached, from `/` (`nice`: at a lower
    priority); returns its Popen."""
    import subprocess

    cmd = command(root, *args, nice=nice)
    log = open_log(root)
    try:
        return subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            cwd=CWD, start_new_session=True, close_fds=True,
        )
    finally:
        os.close(log)
