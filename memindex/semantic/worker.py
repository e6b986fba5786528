"""The resident worker (`memindex serve`): one process per memory root keeps the embedding
model and the stored vectors in memory and answers "embed this text, give me the nearest
memories and these memories' cosines" over a Unix socket only this user can open. The
protocol and the socket's place are in `memindex.semantic.client`.

Lifecycle:

* single instance: an exclusive flock on `<root>/.serve.pid` (`store.marker.Marker`); a
  second worker for the same root exits 0 at once, naming the first;
* the model is loaded and the vectors read before the socket exists: a client never waits
  on a worker that is still loading, it finds no socket and answers lexically;
* it exits after `idle_exit_s` without a query, when every process it serves (`--parent`,
  and those adopted since) is gone (looked at every WORKER_PARENT_POLL_S; a recycled pid is told
  apart by its start time on Linux), on SIGTERM/SIGINT/SIGHUP, and when its socket or
  marker is removed or replaced; it removes both on the way out;
* bounded: requests of at most 64 KiB, a fixed pool of threads behind a short queue (a
  connection past it is closed at once), a deadline per connection, one embedding at a
  time, a small cache of query vectors; memory is the model plus n x dim x 4 bytes.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections import OrderedDict
from typing import Any, Callable

from ..defaults import (
    FAIL_BACKOFF_S, SERVE_MARKER, WORKER_BACKLOG, WORKER_CACHE, WORKER_CONN_DEADLINE_S, WORKER_K_MAX,
    WORKER_PARENT_POLL_S, WORKER_POOL, WORKER_REQUEST_MAX, WORKER_ROWIDS_MAX, WORKER_TEXT_MAX, WORKER_TICK_S,
)
from ..runtime import listen_private
from . import client
from .matrix import VectorSource
from .model import load as load_model
from .process import Parents, back_off, limit_threads, rss_mb, semantic_setting


Log = Callable[..., None]


class Stop:
    """Why the worker should stop (None: it should not); set from a signal handler too."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def set(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason


class Worker:
    """One worker for one memory root (see the module's docstring)."""

    def __init__(self, root: str, embedder: Any, idle_exit_s: float, log: Log, batch_size: int = 32,
                 stop: Stop | None = None) -> None:
        self.root, self.embedder, self.idle_exit_s, self.log = root, embedder, idle_exit_s, log
        self.batch_size, self.stop = batch_size, stop or Stop()
        self.source = VectorSource(root, embedder.identity, embedder.dim, log)
        self.parents = Parents()
        self.started = time.time()
        self.last_used = time.monotonic()
        self.requests = 0
        self.setting = semantic_setting(root)  # (enabled, model) at start: a change stops the worker
        self.path: str | None = None
        self.sock: Any = None
        self.ident: tuple[int, int] | None = None
        self._queue: queue.Queue = queue.Queue(WORKER_BACKLOG)
        self._embed_lock = threading.Lock()
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._busy = 0
        self._busy_lock = threading.Lock()

    # --- lifecycle ------------------------------------------------------------------------

    def request_stop(self, reason: str) -> None:
        self.stop.set(reason)

    def bind(self) -> str:
        """Listen on the root's socket (mode 0600, in the checked private folder)."""
        client.private_dir(create=True)
        moved = client.squatted()
        if moved:  # another user took the shared folder's name first: the worker runs anyway
            print(f"memindex serve: {moved}", file=sys.stderr, flush=True)
        path = client.socket_path(self.root)
        sock, ident = listen_private(path, WORKER_BACKLOG)  # holding the marker, any socket here is a dead worker's
        sock.settimeout(WORKER_TICK_S)
        self.sock, self.path, self.ident = sock, path, ident
        return path

    def serve(self, marker: Any = None) -> str:
        """Answer until a reason to stop; returns that reason."""
        for _ in range(WORKER_POOL):
            threading.Thread(target=self._work, daemon=True).start()
        next_check = time.monotonic() + WORKER_PARENT_POLL_S
        while self.stop.reason is None:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                conn = None
            except OSError as exc:
                self.log("accept", f"accept failed: {exc}", level="warning")
                time.sleep(WORKER_TICK_S)
                conn = None
            if conn is not None:
                try:
                    self._queue.put_nowait(conn)
                except queue.Full:
                    conn.close()  # the client sees the connection closed and answers lexically
            now = time.monotonic()
            if self._busy == 0 and self._queue.empty() and now - self.last_used > self.idle_exit_s:
                self.request_stop(f"idle for {self.idle_exit_s:g} s")
            if now >= next_check:
                next_check = now + WORKER_PARENT_POLL_S
                self._periodic(marker)
            self.source.current()  # a reload happens here, rarely in a query
        return self.stop.reason or "stopped"

    def _periodic(self, marker: Any) -> None:
        if self.parents.all_gone():
            self.request_stop("the session it served ended (parent process gone)")
        try:
            st = os.lstat(self.path)
            ours = (st.st_dev, st.st_ino) == self.ident
        except OSError:
            ours = False
        if not ours:
            self.request_stop("its socket was removed or replaced")
        if marker is not None and not marker.still_ours():
            self.request_stop(f"its marker {SERVE_MARKER} was removed or replaced")
        setting = semantic_setting(self.root)
        if setting is not None and self.setting is not None and setting != self.setting:
            self.request_stop("semantic.enabled or semantic.model changed in memory-config.json")

    def close(self) -> None:
        """Remove the socket (if still ours) and stop listening."""
        if self.sock is not None:
            try:
                st = os.lstat(self.path)
                if (st.st_dev, st.st_ino) == self.ident:
                    os.unlink(self.path)
            except OSError:
                pass
            self.sock.close()
            self.sock = None
        self.source.close()

    # --- answering ------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            conn = self._queue.get()
            with self._busy_lock:
                self._busy += 1
            try:
                self._answer(conn)
            except Exception as exc:  # one bad connection never stops the worker
                self.log("error", f"{type(exc).__name__}: {exc}", level="warning")
            finally:
                with self._busy_lock:
                    self._busy -= 1
                try:
                    conn.close()
                except OSError:
                    pass

    def _answer(self, conn: Any) -> None:
        deadline = time.monotonic() + WORKER_CONN_DEADLINE_S
        reader = _Lines(conn, deadline)
        request = reader.next_json()
        if request is None:
            return _reply(conn, {"ok": False, "error": reader.error or "no request"})
        op = request.get("op")
        if op == "ping":
            return _reply(conn, self.info())
        self.last_used = time.monotonic()
        self.requests += 1
        if op == "adopt":  # another session of this root: live while it does too
            pid = request.get("pid")
            if not self.parents.known:  # started without --parent: it serves until idle or stopped
                return _reply(conn, {"ok": True})
            ok = isinstance(pid, int) and not isinstance(pid, bool) and self.parents.add(pid)
            return _reply(conn, {"ok": True} if ok else {"ok": False, "error": "no such process"})
        if op != "query":
            return _reply(conn, {"ok": False, "error": f"unknown op {str(op)[:40]!r}"})
        text, k = request.get("text"), request.get("k", 20)
        if not isinstance(text, str) or not isinstance(k, int) or isinstance(k, bool):
            return _reply(conn, {"ok": False, "error": "query needs a text and an integer k"})
        snapshot = self.source.current()
        if snapshot.note:  # no vectors it can use (another model's, no index): the caller does without
            return _reply(conn, {"ok": False, "error": f"no usable vectors: {snapshot.note}"})
        vec = self.embed(text)
        mask = snapshot.active if request.get("active") is True else None
        top = [[r, round(c, 6)] for r, c in snapshot.top(vec, max(0, min(k, WORKER_K_MAX)), mask)]
        rowids = request.get("rowids", [])
        if request.get("defer") is True:  # the rowids follow, once the client has its candidates
            follow = reader.next_json()
            if follow is None:
                return None  # the client gave up (its budget) or sent nonsense
            rowids = follow.get("rowids", [])
        if not isinstance(rowids, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in rowids):
            return _reply(conn, {"ok": False, "error": "rowids must be a list of integers"})
        cos = {str(r): round(c, 6) for r, c in snapshot.cosines(vec, rowids[: WORKER_ROWIDS_MAX]).items()}
        return _reply(conn, {"ok": True, "top": top, "cos": cos, "docs": snapshot.docs, "vectors_version": snapshot.version,
                             "skipped": snapshot.skipped})

    def embed(self, text: str) -> Any:
        text = text[: WORKER_TEXT_MAX]
        with self._embed_lock:
            vec = self._cache.get(text)
            if vec is None:
                vec = self.embedder.embed([text], batch_size=self.batch_size)[0]
                self._cache[text] = vec
                if len(self._cache) > WORKER_CACHE:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(text)
        return vec

    def info(self) -> dict[str, Any]:
        from datetime import datetime, timezone

        snapshot = self.source.snapshot
        return {
            "ok": True, "pid": os.getpid(), "root": self.root, "model": self.embedder.model_id,
            "identity": self.embedder.identity, "docs": snapshot.docs, "active_docs": int(snapshot.active.sum()),
            "vectors_version": snapshot.version, "vectors_note": snapshot.note, "vectors_skipped": snapshot.skipped,
            "rss_mb": rss_mb(),
            "started": datetime.fromtimestamp(self.started, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "idle_exit_s": self.idle_exit_s, "idle_s": round(time.monotonic() - self.last_used, 1),
            "requests": self.requests, "parents": sorted(self.parents.known), "socket": self.path,
        }


class _Lines:
    """Request lines from a connection: at most WORKER_REQUEST_MAX bytes each, within the
    connection's deadline."""

    def __init__(self, conn: Any, deadline: float) -> None:
        self.conn, self.deadline, self.buf, self.error = conn, deadline, b"", ""

    def next_json(self) -> dict | None:
        while b"\n" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.error = "timed out"
                return None
            self.conn.settimeout(left)
            try:
                chunk = self.conn.recv(65_536)
            except OSError:
                self.error = "timed out"
                return None
            if not chunk:
                self.error = "closed"
                return None
            self.buf += chunk
            if len(self.buf) > WORKER_REQUEST_MAX and b"\n" not in self.buf[: WORKER_REQUEST_MAX]:
                self.error = f"request over {WORKER_REQUEST_MAX} bytes"
                return None
        line, _, self.buf = self.buf.partition(b"\n")
        if len(line) >= WORKER_REQUEST_MAX:
            self.error = f"request over {WORKER_REQUEST_MAX} bytes"
            return None
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            self.error = "not JSON"
            return None
        if not isinstance(value, dict):
            self.error = "not a JSON object"
            return None
        return value


def _reply(conn: Any, message: dict[str, Any]) -> None:
    conn.settimeout(1.0)
    try:
        conn.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    except OSError:
        pass  # the client left (its budget ran out)


def run(root: str, model: str, idle_exit_s: float, parents: list[int], log: Log,
        batch_size: int = 32, stop: Stop | None = None) -> int:
    """Claim the root, load the model and vectors, listen, answer until a reason to stop,
    clean up. Returns the exit code: 0 (stopped, or another worker serves the root), 1 (it
    could not start: no model, an unsafe socket folder, a marker it cannot create)."""
    from ..errors import MemindexError, WatcherRunning
    from ..store.marker import Marker

    marker = Marker(root, SERVE_MARKER)
    try:
        marker.claim(wait_s=0.5)
    except WatcherRunning as exc:
        log("running", f"another worker (pid {exc.pid or '?'}) serves {root}; exiting", other_pid=exc.pid)
        return 0
    except (OSError, MemindexError) as exc:
        log("refused", f"cannot claim {SERVE_MARKER}: {exc}", level="error")
        return 1
    worker = None
    stop = stop or Stop()
    try:
        tracked = Parents()
        for pid in parents:
            if not tracked.add(pid):
                log("exit", f"parent process {pid} is gone; not starting")
                return 0
        limit_threads()
        start = time.perf_counter()
        try:
            embedder = load_model(model)
            embedder.identity  # noqa: B018  (hashes the weights now, not in the first query)
        except (ImportError, MemindexError, OSError) as exc:
            log("refused", f"cannot load the model {model!r}: {exc}", level="error")
            back_off(root, FAIL_BACKOFF_S)
            return 1
        if stop.reason:
            log("exit", f"stopping before serving: {stop.reason}")
            return 0
        worker = Worker(root, embedder, idle_exit_s, log, batch_size, stop)
        worker.parents = tracked
        snapshot = worker.source.current()
        try:
            path = worker.bind()
        except (OSError, MemindexError) as exc:
            log("refused", f"cannot listen: {exc}", level="error")
            back_off(root, FAIL_BACKOFF_S)
            return 1
        log("ready", f"serving {root} on {path}: model {embedder.model_id}, {snapshot.docs} vectors"
            f"{' (' + snapshot.note + ')' if snapshot.note else ''}, ready in {time.perf_counter() - start:.2f} s,"
            f" {rss_mb():.0f} MiB", pid=os.getpid(), socket=path, docs=snapshot.docs, rss_mb=rss_mb(),
            parents=sorted(tracked.known), idle_exit_s=idle_exit_s)
        reason = worker.serve(marker)
        log("exit", f"stopping: {reason} ({worker.requests} requests)", reason=reason)
        return 0
    finally:
        if worker is not None:
            worker.close()
        marker.release()
