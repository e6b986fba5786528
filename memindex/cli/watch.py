"""`memindex watch`: keep the index fresh while memory files change, until stopped.

SIGINT/SIGTERM/SIGHUP ask the watcher to stop once the sync in progress has committed
(exit 0); a second Ctrl-C aborts that sync (its transaction rolls back) and exits 130.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..config import DEFAULTS, Config
from ..errors import WatcherRunning
from ..watch.watcher import Log, Watcher
from ._common import AddParser, bounded, err
from .main import EXIT_OK, EXIT_PROBLEMS

_interval = bounded(0.05, 3600, "seconds")
_debounce = bounded(0, 60_000, "ms")


def register(add: AddParser) -> None:
    p = add("watch", example="memindex watch --polling --interval 5")
    p.add_argument(
        "--polling",
        action="store_true",
        help="poll instead of native file events (chosen automatically on WSL /mnt drives, SMB, NFS, VM shares)",
    )
    p.add_argument(
        "--interval",
        type=_interval,
        metavar="S",
        help="polling interval in seconds, used as given (default: watch.poll_interval_s = 2, stretched when"
        " a scan would use more than 1%% of a core)",
    )
    p.add_argument(
        "--debounce",
        type=_debounce,
        metavar="MS",
        help="wait until changes have been quiet this long before syncing "
        f"(default: watch.debounce_ms = {DEFAULTS['watch.debounce_ms']})",
    )
    p.set_defaults(handler=cmd_watch)


def _install_signals(watcher: Watcher) -> dict[int, Any]:
    import signal

    def on_signal(signum: int, frame: Any) -> None:
        if signum == signal.SIGINT and watcher.stopping:
            raise KeyboardInterrupt  # second Ctrl-C: abort the sync in progress (it rolls back)
        watcher.request_stop(signal.Signals(signum).name, wake=False)

    previous: dict[int, Any] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                previous[sig] = signal.signal(sig, on_signal)
            except (ValueError, OSError):  # not the main thread
                pass
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    import signal

    for sig, handler in previous.items():
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError, TypeError):
            pass


def cmd_watch(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Keep the index fresh while memory files change, until interrupted."""
    log = Log(json_mode=args.json, quiet=args.quiet)
    watcher = Watcher(
        root,
        cfg,
        polling=args.polling or None,
        interval=args.interval,
        debounce_ms=args.debounce,
        log=log,
    )
    previous = _install_signals(watcher)
    try:
        return EXIT_OK if watcher.run() else EXIT_PROBLEMS
    except ImportError as exc:  # watchdog is a dependency, but an install may lack it
        err(f"watch needs the watchdog package ({exc}); install it with `pip install watchdog`")
        return EXIT_PROBLEMS
    except WatcherRunning as exc:
        message = f"{exc}; stop it first (kill {exc.pid})" if exc.pid else str(exc)
        err(message)
        if args.json:
            log("refused", message, level="error", other_pid=exc.pid, root=str(root))
        return EXIT_PROBLEMS
    except OSError as exc:  # e.g. a read-only root: the marker cannot be created
        err(f"cannot watch {root}: {exc}")
        return EXIT_PROBLEMS
    finally:
        _restore_signals(previous)
