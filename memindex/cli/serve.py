"""`memindex serve`: the resident worker of one memory root (`memindex.semantic.worker`).

The hooks start it in the background (`memindex.semantic.client.start`); it can also be
run by hand with `--foreground`. A second worker for a root that has one exits 0 at once
with one line naming the first. Exit 1: it could not start (no model, no numpy, an unsafe
socket folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from datetime import datetime, timezone

from ..config import DEFAULTS, Config
from ._common import AddParser, bounded

_idle = bounded(0.1, 7 * 86400, "seconds")
_pid = bounded(1, 2**31 - 1, "", integer=True)


def register(add: AddParser) -> None:
    p = add("serve", example="memindex serve --foreground")
    p.add_argument("--idle-exit", type=_idle, metavar="S",
                   help="exit after this many seconds without a query "
                   f"(default: semantic.idle_exit_s = {DEFAULTS['semantic.idle_exit_s']:g})")
    p.add_argument("--parent", type=_pid, metavar="PID", action="append", default=[],
                   help="exit when this process is gone (repeatable; the hooks pass Claude Code's pid)")
    p.add_argument("--foreground", action="store_true",
                   help="log on stderr (--json: JSON lines on stdout) instead of <root>/.memindex.log")
    p.set_defaults(handler=cmd_serve)


class _Log:
    """Log records: to the root's log file (appended through rootfs), or, in the foreground,
    text on stderr / JSON lines on stdout. `quiet` keeps warnings and errors."""

    def __init__(self, root: str, foreground: bool, json_mode: bool, quiet: bool) -> None:
        self.path = os.path.join(root, ".memindex.log")
        self.foreground, self.json_mode, self.quiet = foreground, json_mode, quiet
        self._lock = threading.Lock()

    def __call__(self, event: str, msg: str = "", level: str = "info", **fields: object) -> None:
        if level == "debug" or (self.quiet and level == "info"):
            return
        ts = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if self.json_mode:
            line = json.dumps({"ts": ts, "event": event, "level": level, "pid": os.getpid(), "msg": msg, **fields},
                              ensure_ascii=False, default=str)
        else:
            line = f"memindex serve[{os.getpid()}] {ts} {level}: {msg}"
        with self._lock:
            try:
                if not self.foreground:
                    from ..store import rootfs

                    rootfs.write(self.path, (line + "\n").encode("utf-8", "replace"), append=True)
                else:
                    print(line, file=sys.stdout if self.json_mode else sys.stderr, flush=True)
            except Exception:
                pass  # a log that cannot be written never stops the worker


def _install_signals(stop) -> None:  # noqa: ANN001
    import signal

    def on_signal(signum: int, frame: object) -> None:
        stop.set(f"signal {signal.Signals(signum).name}")

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                signal.signal(sig, on_signal)
            except (ValueError, OSError):
                pass


def cmd_serve(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Serve until idle, orphaned or stopped."""
    from ..semantic import worker

    root = os.fspath(root)
    log = _Log(root, args.foreground, args.json, args.quiet)
    stop = worker.Stop()
    _install_signals(stop)
    idle = args.idle_exit if args.idle_exit is not None else float(cfg["semantic.idle_exit_s"])
    code = worker.run(root, str(cfg["semantic.model"]), idle, list(args.parent), log,
                      batch_size=int(cfg["semantic.batch_size"]), stop=stop)
    if code and not args.foreground and not args.quiet:
        print(f"memindex: the worker could not start (see {log.path})", file=sys.stderr)
    return code
