"""Client of the resident worker (`memindex serve`, `memindex.semantic.worker`).

Standard library only, and light: the prompt hook imports it under `python3 -I -S`. It
uses `_socket` rather than `socket`, which imports `selectors` and enums.

The worker listens on a Unix socket in a private folder of this user:
`$XDG_RUNTIME_DIR/memindex` when XDG_RUNTIME_DIR is an absolute folder of this user that
no one else may enter, else `/tmp/memindex-<uid>`. The folder must be a real folder (not a
link) owned by this user with mode 0700, and the socket a socket owned by this user;
anything else is refused, never connected to. The socket's name is a 64-bit FNV-1a hash of
the memory root's real path (a socket path holds at most about 104 bytes).

Protocol: one JSON object per line each way (at most `WORKER_REQUEST_MAX` bytes per request).

    {"op": "ping"}                     -> {"ok": true, "pid", "model", "docs", "rss_mb", "started", ...}
    {"op": "query", "text": T, "k": 20, "rowids": [..], "active": false}
                                       -> {"ok": true, "top": [[rowid, cos], ..], "cos": {"rowid": cos}}
    {"op": "query", ..., "defer": true} then a second line {"rowids": [..]}: the worker embeds
                                          the text while the client finds its lexical candidates
    {"op": "adopt", "pid": P}          -> {"ok": true}: the worker also lives while P does

`top` holds at most `k` (<= WORKER_K_MAX) memories, best first (active ones only with "active");
`cos` the rowids asked for (<= WORKER_ROWIDS_MAX) that have a vector. A query answer also carries
`docs` and `vectors_version`. Anything wrong is {"ok": false, "error": ...}: a request that
is not JSON, too long or of an unknown op, and a worker with no vectors it can use (another
model's, no index), so that `memindex search` falls back to the model in its own process.

Every function here returns None (never raises) when the worker is absent, slow, unsafe
or answers nonsense: callers then answer lexically, as without a worker.
"""

from __future__ import annotations

import os
import time

from ..defaults import LOG_FILE, SERVE_MARKER, SERVE_SPAWN_MARKER, SPAWN_GUARD_S
from ..defaults import FAIL_BACKOFF_S, WORKER_K_MAX, WORKER_REPLY_MAX, WORKER_REQUEST_MAX, WORKER_ROWIDS_MAX, WORKER_TEXT_MAX
from ..lean import dumps, loads
from .. import runtime
from ..runtime import name_hash, private_dir, runtime_dir, squatted, why_not_private  # noqa: F401  (the worker uses them from here)

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox"})

# Why the last call returned None: "absent" (no socket, nobody listening), "unsafe", "slow",
# "garbled". The prompt hook starts a worker on "absent" only.
last_failure: str | None = None


def socket_path(root: str | os.PathLike[str]) -> str:
    """The worker's socket for a memory root: `<runtime dir>/<hash of its real path>.sock`."""
    return runtime.socket_path(root, ".sock")


def _fail(kind: str) -> None:
    global last_failure
    last_failure = kind
    return None


def _connect(root: str | os.PathLike[str], deadline: float):
    """A connected socket, or None (with `last_failure` set)."""
    sock, why = runtime.connect_private(socket_path(root), deadline)
    return sock if sock is not None else _fail(why)  # "absent": also a stale socket of a killed worker


def _send(sock, message: dict, deadline: float) -> bool:
    line = dumps(message).encode() + b"\n"
    if len(line) > WORKER_REQUEST_MAX:
        return False
    sock.settimeout(max(deadline - time.monotonic(), 0.001))
    sock.sendall(line)
    return True


def _receive(sock, deadline: float) -> dict | None:
    buf = b""
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            return _fail("slow")
        sock.settimeout(left)
        chunk = sock.recv(65_536)
        if not chunk:
            return _fail("garbled")  # closed without an answer (a full pool, a refused request)
        buf += chunk
        if len(buf) > WORKER_REPLY_MAX:
            return _fail("garbled")
    try:
        reply = loads(buf[: buf.index(b"\n")])
    except (ValueError, RecursionError):
        return _fail("garbled")
    if not isinstance(reply, dict) or reply.get("ok") is not True:
        return _fail("garbled")
    return reply


def _request(root: str | os.PathLike[str], message: dict, budget_s: float) -> dict | None:
    global last_failure
    last_failure = None
    deadline = time.monotonic() + budget_s
    try:
        sock = _connect(root, deadline)
        if sock is None:
            return None
        try:
            if not _send(sock, message, deadline):
                return _fail("garbled")
            return _receive(sock, deadline)
        finally:
            sock.close()
    except TimeoutError:
        return _fail("slow")
    except Exception:  # never raise: the caller answers lexically
        return _fail("garbled")


def _query_message(text: str, k: int, active: bool) -> dict:
    text = text[:WORKER_TEXT_MAX] if isinstance(text, str) else ""
    message = {"op": "query", "text": text, "k": max(0, min(int(k), WORKER_K_MAX)), "active": bool(active)}
    # ensure_ascii: at most 12 bytes a character; cut until the line fits
    while len(dumps(message)) > WORKER_REQUEST_MAX // 2 and message["text"]:
        message["text"] = message["text"][: len(message["text"]) // 2]
    return message


def _rowids(rowids) -> list[int]:
    return [int(r) for r in list(rowids)[:WORKER_ROWIDS_MAX]]


def query(
    root: str | os.PathLike[str], text: str, k: int = 20, rowids=(), budget_s: float = 0.15, active: bool = False
) -> dict | None:
    """The `k` memories nearest to `text` and the cosines of `rowids`, within `budget_s`
    seconds in all: {"top": [[rowid, cos], ...], "cos": {"rowid": cos}, ...}, or None."""
    try:
        message = _query_message(text, k, active)
        message["rowids"] = _rowids(rowids)
    except (TypeError, ValueError):
        return _fail("garbled")
    return _request(root, message, budget_s)


def ping(root: str | os.PathLike[str], budget_s: float = 0.5) -> dict | None:
    """The worker's state (pid, model, docs, rss_mb, started, ...), or None."""
    return _request(root, {"op": "ping"}, budget_s)


class Pending:
    """A query sent ahead: the worker embeds the text while the caller finds its lexical
    candidates; `finish(rowids)` sends them and waits for the answer until the deadline."""

    def __init__(self, sock, deadline: float) -> None:
        self.sock, self.deadline = sock, deadline

    def finish(self, rowids=()) -> dict | None:
        global last_failure
        sock, self.sock = self.sock, None
        if sock is None:
            return None
        last_failure = None
        try:
            if not _send(sock, {"rowids": _rowids(rowids)}, self.deadline):
                return _fail("garbled")
            return _receive(sock, self.deadline)
        except TimeoutError:
            return _fail("slow")
        except Exception:
            return _fail("garbled")
        finally:
            sock.close()

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def begin(root: str | os.PathLike[str], text: str, k: int = 20, budget_s: float = 0.15, active: bool = True) -> Pending | None:
    """Send a query whose rowids follow (see `Pending`), or None when the worker is absent."""
    global last_failure
    last_failure = None
    deadline = time.monotonic() + budget_s
    sock = None
    try:
        message = _query_message(text, k, active)
        message["defer"] = True
        sock = _connect(root, deadline)
        if sock is None:
            return None
        if not _send(sock, message, deadline):
            sock.close()
            return _fail("garbled")
        return Pending(sock, deadline)
    except Exception:
        if sock is not None:
            sock.close()
        return _fail("slow" if last_failure is None else last_failure)


# --- processes -----------------------------------------------------------------------------


def proc_stat(pid: int) -> tuple[str, int, int, str] | None:
    """(command name, parent pid, start time in clock ticks, state letter) from /proc, or
    None (not Linux, or the process is gone)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            data = fh.read(4096).decode("utf-8", "replace")
        comm = data[data.index("(") + 1 : data.rindex(")")]
        fields = data[data.rindex(")") + 2 :].split()
        return comm, int(fields[1]), int(fields[19]), fields[0]
    except (OSError, ValueError, IndexError):
        return None


def session_parent() -> int:
    """The process a hook belongs to (Claude Code): the hook's parent, or, when that is a
    shell running the hook's command line, the shell's parent."""
    pid = os.getppid()
    for _ in range(4):
        info = proc_stat(pid)
        if info is None or info[0] not in _SHELLS or info[1] <= 1:
            break
        pid = info[1]
    return pid


def running_pid(root: str | os.PathLike[str]) -> int | None:
    """The pid of the live worker of `root` (it holds the marker's lock), or None."""
    from ..store.marker import owner_pid

    return owner_pid(os.path.join(os.fspath(root), SERVE_MARKER))  # type: ignore[arg-type]


def _log(root: str, line: str) -> None:
    from ..store import rootfs

    try:
        rootfs.write(os.path.join(root, LOG_FILE), f"memindex: {line}\n".encode(), append=True)
    except Exception:
        pass


def start(root: str | os.PathLike[str], parent_pid: int | None = None) -> None:
    """Start the worker of `root` in the background, unless it runs: then it only adopts
    `parent_pid` (lives while that process does too). Single flight: at most one start per
    SPAWN_GUARD_S per root (the guard file's mtime; a worker that cannot start sets it in
    the future to back off). Never raises: a failure is one line in the root's log."""
    root = os.fspath(root)
    try:
        if running_pid(root) is not None:
            if parent_pid:
                _request(root, {"op": "adopt", "pid": int(parent_pid)}, 0.1)
            return
        from ..store import rootfs

        if rootfs.single_flight(os.path.join(root, SERVE_SPAWN_MARKER), SPAWN_GUARD_S, FAIL_BACKOFF_S):
            _spawn(root, parent_pid)
    except Exception as exc:
        _log(root, f"could not start the worker: {type(exc).__name__}: {exc}")


def restart(root: str | os.PathLike[str], parent_pid: int | None = None) -> None:
    """`start`, for a prompt that found no worker (it exited idle, or was killed): the
    guard file is looked at first, so that within SPAWN_GUARD_S of the last start (or
    during a back-off) this costs one lstat."""
    try:
        from ..store.rootfs import expired

        if not expired(os.lstat(os.path.join(os.fspath(root), SERVE_SPAWN_MARKER)).st_mtime, SPAWN_GUARD_S, FAIL_BACKOFF_S):
            return
    except OSError:
        pass
    start(root, parent_pid)


def _spawn(root: str, parent_pid: int | None) -> None:
    """`memindex --root ROOT serve [--parent PID]`, detached (`background.start`), from `/`."""
    from ..background import start

    start(root, "serve", *(["--parent", str(int(parent_pid))] if parent_pid else []))
