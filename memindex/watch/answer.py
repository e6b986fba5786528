"""The watcher's answer to "is the index current?" (`memindex.index.watched` asks it): O(1)
for `search`, `explain` and `status`, where the reader's own check stats every memory file.

The watcher listens on `index.watched.socket_path(root)` (mode 0600, in this user's private
runtime folder; a peer of another uid is not answered). For each question it:

1. says "unknown" at once unless its observer is inotify and alive, its initial sync ran,
   it is not stopping, and (unless the reader may wait) nothing is pending;
2. creates and removes a sentinel file in the root (`.watch.<pid>.<n>.tmp`: a derived
   file's pattern, so git ignores it; sync never reads the root's own files) and waits up to
   the reader's budget for that file's event to come through its observer: inotify keeps
   one queue per instance, in order, so every event the kernel queued before the question
   has then been handed to the watcher (a queue overflow, a lost event: no sentinel, or a
   full sync queued; either way "unknown");
3. answers "fresh" with its generation only when every change it was handed up to the
   sentinel has been synced and committed (`Watcher.seq == Answerer.done_seq`); when the
   reader may wait, it first sends "wait", syncs what is pending at once (no debounce) and
   answers after the commit, within WATCH_SYNC_WAIT_S.

A reader whose index generation differs (another process synced, the file was replaced)
makes its stat pass; the watcher then checks that index itself in the background
(`Answerer.adopt`) so that the next question is answered again.
"""

from __future__ import annotations

import itertools
import os
import socket
import stat as stat_mod
import threading
import time
from typing import Any

from ..defaults import WATCH_ASK_BUDGET_MAX_S, WATCH_ASK_BUDGET_S, WATCH_SYNC_WAIT_S
from ..defaults import WATCH_BACKLOG, WATCH_CONN_DEADLINE_S, WATCH_REQUEST_MAX, WATCH_TICK_S
from ..errors import UnsafeFile
from ..index import watched
from ..lean import dumps, loads
from ..runtime import listen_private, peer_uid, private_dir
from ..store import rootfs



def listen(watcher: Any) -> "Answerer | None":
    """An Answerer listening for `watcher`, on inotify only (a poll's events come seconds
    late: readers make their own stat pass); None otherwise, or when it cannot listen."""
    if not _on_inotify(watcher):
        return None
    answerer = Answerer(watcher)
    try:
        answerer.start()
    except Exception as exc:  # an unsafe runtime folder, a path too long for a socket
        watcher.log("warning", f"readers will stat every file: cannot listen ({exc})", level="warning", during="answer")
        return None
    return answerer


class Answerer:
    """The socket, its thread, and the sentinels in flight of one watcher."""

    def __init__(self, watcher: Any) -> None:
        self.watcher = watcher
        self.sentinels = Sentinels(watcher._root_s, os.getpid())
        self.prefix = self.sentinels.prefix
        self.path: str | None = None
        self.sock: socket.socket | None = None
        self.ident: tuple[int, int] | None = None
        self.answers = {"fresh": 0, "unknown": 0, "waited": 0}
        self.done_seq = 0  # the intake's `seq` that the last committed sync covered
        self.generation: list[object] | None = None  # the index's generation that sync left
        self._ours: list[object] = []  # the last generations our syncs left (a reader may hold one)
        self.linked: set[str] = set()  # memory files or folders whose changes may raise no event here
        self.expedite = False  # a reader waits: sync what is pending now, not after the debounce
        self.adopt_due = False
        self.adoptions = 0  # checks of an index another process wrote (a stat pass each, here)
        self._next_adopt = 0.0
        self._synced = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the socket ---------------------------------------------------------------------------

    def start(self) -> str:
        """Listen (a socket of ours left by a killed watcher is replaced: we hold the
        root's marker) and answer on a thread. Raises OSError or UnsafeFile."""
        private_dir(create=True)
        path = watched.socket_path(self.watcher.root)
        sock, ident = listen_private(path, WATCH_BACKLOG)  # accept blocks: no wake-ups while idle (`stop` shuts it down)
        self.sock, self.path, self.ident = sock, path, ident
        self._thread = threading.Thread(target=self._serve, name="memindex-watch-answer", daemon=True)
        self._thread.start()
        return path

    def stop(self) -> None:
        """Stop answering; remove the socket if it is still ours."""
        self._stop.set()
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(1.0 + WATCH_CONN_DEADLINE_S)
        if self.sock is not None:
            try:
                st = os.lstat(self.path or "")
                if (st.st_dev, st.st_ino) == self.ident:
                    os.unlink(self.path or "")
            except OSError:
                pass
            self.sock.close()
            self.sock = None

    def still_ours(self) -> bool:
        try:
            st = os.lstat(self.path or "")
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.ident

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()  # type: ignore[union-attr]
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(WATCH_TICK_S)  # (EMFILE and the like: not a busy loop)
                continue
            try:
                self._handle(conn)
            except Exception as exc:  # one bad connection never stops the watcher
                self.watcher.log("answer", f"answering a reader failed: {type(exc).__name__}: {exc}", level="debug")
            finally:
                conn.close()

    def _handle(self, conn: socket.socket) -> None:
        uid = peer_uid(conn)
        if uid is not None and uid != os.geteuid():
            return  # only this user's readers
        deadline = time.monotonic() + WATCH_CONN_DEADLINE_S
        buf = b""
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or len(buf) > WATCH_REQUEST_MAX:
                return
            conn.settimeout(left)
            chunk = conn.recv(WATCH_REQUEST_MAX)
            if not chunk:
                return
            buf += chunk
        try:
            request = loads(buf[: buf.index(b"\n")])
        except (ValueError, RecursionError):
            return _send(conn, {"ok": False, "error": "not JSON"})
        if not isinstance(request, dict) or request.get("op") != "fresh":
            return _send(conn, {"ok": False, "error": "unknown request"})
        conn.settimeout(WATCH_SYNC_WAIT_S + 1.0)
        reply = self.answer(request.get("gen"), bool(request.get("wait")), lambda: _send(conn, {"ok": True, "wait": True}),
                            _sentinel_wait(request.get("budget_ms")))
        self.answers["fresh" if reply.get("fresh") else "unknown"] += 1
        _send(conn, {"ok": True, **reply})

    # -- what the watcher tells us (its main thread) -------------------------------------------

    def synced(self, seq: int, full: bool, paths: list[str]) -> None:
        """A sync that covered the intake's changes up to `seq` committed: record the index's
        generation it left, look for links again, and wake the readers waiting for it."""
        self._look_for_links(full, paths)
        gen = _read_generation(self.watcher.root)
        with self._synced:
            self._record(gen)
            self.done_seq = max(self.done_seq, seq)
            self.expedite = False
            self._synced.notify_all()

    def wait_synced(self, seq: int, timeout: float) -> bool:
        """Have the main loop sync what is pending now; True once changes up to `seq` are committed."""
        end = time.monotonic() + timeout
        with self._synced:
            while self.done_seq < seq:
                self.expedite = True
                self.watcher._wake.set()
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._synced.wait(min(left, 0.05))
        return True

    def adopt_generation(self) -> None:
        """A reader's index is not the one our syncs left (another process synced, or the
        file was replaced): have the main loop check it (at most once a second)."""
        now = time.monotonic()
        if now >= self._next_adopt:
            self._next_adopt = now + 1.0
            self.adopt_due = True
            self.watcher._wake.set()

    def adopt(self) -> None:
        """(main thread) Adopt the index's generation if it holds every file as it is (one
        stat per file, here rather than in every reader); else queue a full sync."""
        from .. import index

        self.adopt_due = False
        self.adoptions += 1
        try:
            conn = index.open_reader(self.watcher.root)
        except Exception:
            return
        try:
            gen = watched.generation(conn)
            current = index.is_current(conn, self.watcher.root)
        except Exception:
            current = False
        finally:
            conn.close()
        if not current:
            self.watcher.add_change(None, full=True, trigger="index written elsewhere")
            return
        with self._synced:  # (syncs run on this thread too: none ran meanwhile)
            self._record(gen)

    def _record(self, gen: list[object] | None) -> None:
        """(under `_synced`) The index's generation now: the one readers are told, kept with
        the last few ours (a reader may still hold one)."""
        self.generation = gen
        self._ours = [gen, *self._ours[:7]]

    def _look_for_links(self, full: bool, paths: list[str]) -> None:
        """Memory files and category folders whose changes may raise no event here
        (`linked`): a full sync looks at them all (one lstat per memory file, here, not in
        readers); a targeted one at its own files."""
        root = self.watcher._root_s
        if full:
            self.linked = linked(root)  # (built apart, then swapped in: an answer meanwhile sees the old set whole)
            return
        try:
            dev = os.lstat(root).st_dev
        except OSError:
            return
        for rel in paths:
            try:
                st = os.lstat(os.path.join(root, rel))
            except OSError:
                self.linked.discard(rel)
                continue
            (self.linked.add if _linked(st, dev) else self.linked.discard)(rel)

    def why_not(self) -> str | None:
        """Why the watcher cannot vouch for the index now (None: it can, once drained)."""
        w = self.watcher
        if w.stopping:
            return "stopping"
        if not w.started.is_set():
            return "starting"
        if not _on_inotify(w):
            return "not on inotify events"
        if not w._observer_alive():
            return "the observer stopped"
        if self.linked:
            return f"{sorted(self.linked)[0]} is a link or on another file system: its changes may raise no event here"
        if not self.still_ours():
            return "its socket was replaced"
        return None

    # -- the answer ---------------------------------------------------------------------------

    def answer(self, gen: object, wait: bool = False, waiting: Any = None,
               sentinel_s: float = WATCH_ASK_BUDGET_S) -> dict[str, Any]:
        """{"fresh": True, "gen": G} or {"fresh": False, "why": ...} (see the module):
        `sentinel_s`, how long to wait for the sentinel (the reader's budget)."""
        w = self.watcher
        why = self.why_not()
        if why:
            return {"fresh": False, "why": why}
        if not wait and w.seq != self.done_seq:
            return {"fresh": False, "why": "changes not synced yet"}
        if not self._drain(sentinel_s):
            return {"fresh": False, "why": "the sentinel's event did not come through in time"}
        seen = w.seq  # every change queued before the question is counted in here
        if self.done_seq < seen:
            if not wait:
                return {"fresh": False, "why": "changes not synced yet"}
            if waiting is not None:
                waiting()
            self.answers["waited"] += 1
            if not self.wait_synced(seen, WATCH_SYNC_WAIT_S):
                return {"fresh": False, "why": "the watcher's sync did not finish in time"}
        why = self.why_not()  # a link found by the sync just made, the observer gone meanwhile
        if why:
            return {"fresh": False, "why": why}
        with self._synced:
            mine = self.generation
        if mine is None:
            return {"fresh": False, "why": "no generation yet"}
        if gen not in self._ours:
            self.adopt_generation()  # not an index we synced: another process wrote it, or it was replaced
        return {"fresh": True, "gen": mine}

    def _drain(self, timeout: float) -> bool:
        return self.sentinels.drain(timeout)

    def is_sentinel(self, path: str) -> bool:
        """Is this event's path one of our sentinels? (Called on the observer's thread:
        marks it arrived.)"""
        return self.sentinels.arrived(path)


class Sentinels:
    """Files created and removed in the root (`.watch.<tag>.<n>.tmp`: a derived file's
    pattern, so git ignores it; sync never reads the root's own files) to learn that an
    observer has handed over every event queued before: inotify keeps one queue per
    instance, in order."""

    def __init__(self, root: str, tag: object) -> None:
        self.prefix = os.path.join(root, f".watch.{tag}.")
        self._count = itertools.count(1)
        self._arrived: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def drain(self, timeout: float) -> bool:
        """Create and remove a sentinel; True once its event came through."""
        path = f"{self.prefix}{next(self._count)}.tmp"
        arrived = threading.Event()
        with self._lock:
            self._arrived[path] = arrived
        try:
            os.close(rootfs.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))  # a new name: never an existing file
            os.unlink(path)
            return arrived.wait(timeout)
        except (OSError, UnsafeFile):
            return False
        finally:
            with self._lock:
                self._arrived.pop(path, None)

    def arrived(self, path: str) -> bool:
        """Is this event's path one of these sentinels? (The observer's thread: marks it arrived.)"""
        if not path.startswith(self.prefix):
            return False
        with self._lock:
            arrived = self._arrived.get(path)
        if arrived is not None:
            arrived.set()
        return True


def linked(root: str) -> set[str]:
    """Memory files and category folders under `root` whose changes may raise no event in
    the watched folders: symbolic links and files with other hard links (a change made
    through another name), and anything on another file system than the root (a mount
    whose changes may come from elsewhere). One lstat per memory file."""
    from ..defaults import FOLDERS
    from .events import is_memory_name

    try:
        dev = os.lstat(root).st_dev
    except OSError:
        return {"."}
    found = set()
    for folder in FOLDERS:
        path = os.path.join(root, folder)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat_mod.S_ISLNK(st.st_mode) or st.st_dev != dev:
            found.add(folder)
            continue
        try:
            with os.scandir(path) as entries:
                for e in entries:
                    if is_memory_name(e.name):
                        try:
                            if _linked(e.stat(follow_symlinks=False), dev):
                                found.add(f"{folder}/{e.name}")
                        except OSError:
                            pass
        except OSError:
            pass
    return found


def _on_inotify(watcher: Any) -> bool:
    """Does the watcher's observer read inotify (one ordered queue: the sentinel proves a drain)?"""
    return watcher.observer_kind == "native" and "inotify" in type(watcher.observer).__name__.lower()


def _linked(st: os.stat_result, dev: int) -> bool:
    return stat_mod.S_ISLNK(st.st_mode) or st.st_nlink > 1 or st.st_dev != dev


def _sentinel_wait(budget_ms: object) -> float:
    """The reader's remaining budget, less a margin for the answer's way back."""
    try:
        seconds = float(budget_ms) / 1000.0  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = WATCH_ASK_BUDGET_S
    if seconds != seconds:  # NaN
        seconds = WATCH_ASK_BUDGET_S
    return min(max(seconds - 0.005, 0.005), WATCH_ASK_BUDGET_MAX_S)


def _read_generation(root: Any) -> list[object] | None:
    from .. import index

    try:
        conn = index.open_reader(root)
    except Exception:
        return None
    try:
        return watched.generation(conn)
    except Exception:
        return None
    finally:
        conn.close()


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.sendall(dumps(message).encode() + b"\n")
    except OSError:
        pass
