"""Ask the root's running watcher whether the index holds every memory file as it is: O(1)
where `fresh.is_current` makes one stat per memory file.

`memindex watch` on a native-inotify file system listens on a Unix socket in this user's
private runtime folder (`runtime.runtime_dir`, never in the repository):
`<runtime dir>/<hash of the root's real path>.watch.sock`. The watcher answers "fresh" only
after its own sentinel (a file it creates and removes in the root) came through its
observer, so that every event the kernel queued before the question was seen, with no
memory-file change pending or being synced, and it names the index generation its last
sync left (`build_id`, `last_sync_ns`, `last_write_ns` from the meta table). The reader
accepts the answer only when that is the generation it reads: an index replaced or written
by someone else since is checked the slow way. `memindex.watch.answer` is the other side.

Protocol: one JSON line each way. The request `{"op": "fresh", "gen": G, "wait": true}`;
the answer `{"ok": true, "fresh": true, "gen": G}` or `{"ok": true, "fresh": false, "why":
...}`; with "wait", a watcher with changes still to sync may first send `{"ok": true,
"wait": true}`, syncs them at once, then sends the answer (within `WATCH_SYNC_WAIT_S`).

Only a socket of this user (its owner and, on Linux, the listening process's uid) in a
private folder is asked (`runtime.connect_private`, strict); anything else, a stale
socket, a slow or garbled answer is `None`, and the caller makes the stat pass. Standard
library only.
"""

from __future__ import annotations

import os
import time

from ..defaults import WATCH_REPLY_MAX
from ..defaults import (
    WATCH_ASK_BUDGET_MAX_S,
    WATCH_ASK_BUDGET_S,
    WATCH_ASK_PER_FILE_S,
    WATCH_MARKER,
    WATCH_SOCKET_SUFFIX,
    WATCH_SYNC_WAIT_S,
)
from ..lean import dumps, loads
from ..runtime import connect_private, socket_path as runtime_socket_path
from .db import meta_values
from .fresh import documents_current, folder_mtimes, is_current

GENERATION_KEYS = ("build_id", "last_sync_ns", "last_write_ns")


def socket_path(root: str | os.PathLike[str]) -> str:
    """The watcher's socket for a memory root (one per root's real path)."""
    return runtime_socket_path(root, WATCH_SOCKET_SUFFIX)


def generation(conn) -> list[object]:
    """What identifies the index's state: every sync writes `last_sync_ns` (a full one) or
    `last_write_ns` (some files), a rebuild a new `build_id` (as the reader read the meta
    table on opening)."""
    meta = meta_values(conn, GENERATION_KEYS)
    return [meta.get(k) for k in GENERATION_KEYS]


class _Uncached:
    """A connection seen without its Reader's copy of the meta table."""

    meta = None

    def __init__(self, conn) -> None:
        self.execute = conn.execute


def _line(sock, buf: bytearray, deadline: float) -> dict | None:
    """The next JSON line from the watcher, or None (closed, too long, garbled, too late)."""
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        chunk = sock.recv(WATCH_REPLY_MAX)
        if not chunk or len(buf) + len(chunk) > WATCH_REPLY_MAX:
            return None
        buf += chunk
    end = buf.index(b"\n")
    try:
        reply = loads(bytes(buf[:end]))
    except (ValueError, RecursionError):
        return None
    del buf[: end + 1]
    return reply if isinstance(reply, dict) and reply.get("ok") is True else None


def budget(files: object) -> float:
    """How long a reader waits for the watcher's answer: longer on a larger store, where
    the stat pass it would make instead costs more."""
    try:
        per_file = float(files) * WATCH_ASK_PER_FILE_S  # type: ignore[arg-type]
    except (TypeError, ValueError):
        per_file = 0.0
    return min(max(WATCH_ASK_BUDGET_S, per_file), WATCH_ASK_BUDGET_MAX_S)


def ask(root: str | os.PathLike[str], gen: list[object], wait: bool = True,
        budget_s: float = WATCH_ASK_BUDGET_S, wait_s: float = WATCH_SYNC_WAIT_S) -> dict | None:
    """The watcher's answer (a dict with "fresh"), or None when no watcher of this user
    answers within `budget_s` (`wait_s` more once it said it is syncing changes for us).
    Never raises."""
    deadline = time.monotonic() + budget_s
    try:
        sock, _ = connect_private(socket_path(root), deadline, strict=True)  # only this user's, private, listened by this uid
        if sock is None:
            return None
        try:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            left_ms = round((deadline - time.monotonic()) * 1000)  # the watcher waits for its sentinel at most this
            sock.sendall(dumps({"op": "fresh", "gen": gen, "wait": bool(wait), "budget_ms": left_ms}).encode() + b"\n")
            buf = bytearray()
            reply = _line(sock, buf, deadline)
            if reply is not None and reply.get("wait") is True and wait:
                reply = _line(sock, buf, time.monotonic() + wait_s)
            return reply
        finally:
            sock.close()
    except Exception:  # never raise: the caller makes the stat pass
        return None


def vouches(conn, root: str | os.PathLike[str], folders: dict[str, int] | None = None) -> bool:
    """Does the root's watcher say that the index this connection reads holds every file
    as it is? False when no watcher answers, or it answers anything but that. `folders`
    (the category folders' mtimes now), when the index's differ: files were added,
    removed or renamed, which the watcher syncs (a full sync); the answer then counts
    only if that sync recorded these folders."""
    try:
        gen = generation(conn)
        files = meta_values(conn, ("doc_count",)).get("doc_count")
    except (ValueError, TypeError, RecursionError):
        return False
    reply = ask(root, gen, budget_s=budget(files))
    if reply is None or reply.get("fresh") is not True:
        return False
    if reply.get("gen") == gen and folders is None:
        return True
    try:  # the watcher synced for us: the connection's next statements read that state
        now = meta_values(_Uncached(conn), GENERATION_KEYS + ("folder_mtimes",))
    except Exception:
        return False
    return reply.get("gen") == [now.get(k) for k in GENERATION_KEYS] and (
        folders is None or now.get("folder_mtimes") == folders)


def is_current_asking_watcher(conn, root: str | os.PathLike[str], doc_paths: object = None) -> bool:
    """`fresh.is_current` for `search`, `explain` and `status`: O(1) when the root's watcher
    runs on inotify (`vouches`), else the folders (six stats) and the stat pass. The racy
    window is not waited out when the watcher answers: a write after a sync read a file
    queued an event it has seen. Files added or removed (the folders moved): the watcher
    syncs them once for every reader, rather than each reader syncing."""
    if os.path.exists(os.path.join(root, WATCH_MARKER)):  # (no marker: no watcher to ask)
        try:
            stored = meta_values(conn, ("folder_mtimes",)).get("folder_mtimes")
        except (ValueError, TypeError, RecursionError):
            return False
        folders = folder_mtimes(root)
        if vouches(conn, root, None if stored == folders else folders) and documents_current(conn, root, doc_paths):
            return True  # the watcher vouches for the memory files; the documents' folders are checked here
    return is_current(conn, root, doc_paths)  # the folders (`is_stale`), then the stat pass
