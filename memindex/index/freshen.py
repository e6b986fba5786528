"""How the hooks keep the index fresh without making a prompt wait: background syncs
(single flight; `fresh.refresh` decides when one is due, O(1)), and the cold-start build of
a missing index. Standard library only: the prompt hook runs it under
`python3 -I -S`. `say` is the hook's stderr note (one line for the whole call).
"""

from __future__ import annotations

import os

from ..defaults import (
    COLD_SYNC_BUDGET_S,
    COLD_SYNC_MAX_FILES,
    FOLDERS,
    FRESH_SYNC_MIN_S,
    LOG_FILE,
    SPAWN_GUARD_S,
    SPAWN_MARKER,
)
from ..errors import UnsafeFile

TYPE_CHECKING = False  # collections.abc costs the hook an import; annotations only
if TYPE_CHECKING:
    from collections.abc import Callable

    Say = Callable[[str], None]


def _start_sync(root, paths: list[str] | None, lock_timeout: float, rebuild: bool = False, nice: bool = True):
    """A detached `memindex sync` (or `rebuild`), stderr to the root's log; at a lower
    priority unless someone waits for it (`nice=False`: the first prompt's cold build, and
    the files the assistant just wrote, which it may search for next)."""
    from ..background import start

    args = ["rebuild" if rebuild else "sync", "--quiet", "--lock-timeout", str(lock_timeout)]
    if paths and not rebuild:
        args.append("--coalesce")  # a burst of edits while the lock is held: one waiting sync, not one each
    for rel in paths or ():
        args += ["--path", rel]
    return start(root, *args, nice=nice)


def spawn_sync(
    root, say: Say, paths: list[str] | None = None, lock_timeout: float = 0.0, guard_s: float = SPAWN_GUARD_S, *extra: str
) -> None:
    """Start one detached `memindex sync` (single-flight: the lock, plus a short guard so a
    burst of prompts does not start a burst of processes)."""
    from ..store import rootfs

    try:
        if paths is None and not rootfs.single_flight(os.path.join(root, SPAWN_MARKER), guard_s):
            return
        from ..store.marker import watcher_pid

        if watcher_pid(root) is not None:
            return  # `memindex watch` keeps this root fresh already
        if paths is None:
            from ..background import start_detached

            start_detached(root, "sync", "--quiet", "--lock-timeout", str(lock_timeout), *extra)
        else:
            _start_sync(root, paths, lock_timeout, nice=False)  # one file: short, and awaited
    except UnsafeFile as exc:
        say(f"no background sync: {exc}")
    except OSError as exc:
        say(f"could not start a background sync: {exc.strerror or exc}")


def _small_store(root) -> bool:
    """At most COLD_SYNC_MAX_FILES memory files (counting stops there)."""
    seen = 0
    for folder in FOLDERS:
        try:
            with os.scandir(os.path.join(root, folder)) as entries:
                for entry in entries:
                    seen += entry.name.endswith(".json")
                    if seen > COLD_SYNC_MAX_FILES:
                        return False
        except OSError:
            continue
    return True


def build_missing_index(root, say: Say, rebuild: bool = False) -> bool:
    """No cold start: index a small store in the foreground within COLD_SYNC_BUDGET_S.
    Returns whether the index is now there; an overrunning sync goes on in the background."""
    if not _small_store(root):
        if rebuild:
            try:
                _start_sync(root, None, lock_timeout=30.0, rebuild=True)
            except (OSError, UnsafeFile) as exc:
                say(f"could not start a rebuild: {exc}")
        else:
            spawn_sync(root, say)
        say("a background sync was started")
        return False
    import subprocess

    try:
        proc = _start_sync(root, None, lock_timeout=COLD_SYNC_BUDGET_S, rebuild=rebuild, nice=False)
    except UnsafeFile as exc:
        say(f"no sync: {exc}")
        return False
    except OSError as exc:
        say(f"could not start a sync: {exc.strerror or exc}")
        return False
    try:
        if proc.wait(timeout=COLD_SYNC_BUDGET_S) == 0:
            return True
        say(f"the sync failed (see {LOG_FILE})")
        return False
    except subprocess.TimeoutExpired:
        say(f"the first sync takes longer than {COLD_SYNC_BUDGET_S:g} s; it goes on in the background")
        return False
