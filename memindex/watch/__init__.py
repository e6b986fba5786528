"""`memindex watch`: keep the index fresh while memory files change.

* `watcher`: the `Watcher` (one per memory root) that turns file events into incremental
  syncs, with its checks and retries, and its `Log`;
* `events`: which file events count, and how they are batched;
* `mounts`: where native file events do not arrive (WSL /mnt drives, SMB, NFS, VM shares);
* `poll`: the scanner that polls there instead, at a bounded cost;

The command is `memindex.cli.watch`. Its pid marker `<root>/.watch.pid`, read by `status` and
the prompt hook, is `memindex.store.marker`. This package imports nothing up front: the names
below load their module on first use. watchdog is imported inside functions only: other commands do not pay for it.
"""

from __future__ import annotations

from ..lazy import exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .events import Batch
    from .mounts import mount_of, needs_polling, read_mounts
    from .poll import PollScanner, Snapshot
    from .watcher import Log, Watcher

# name -> the submodule that defines it
_EXPORTS = {
    "Batch": "events",
    "Log": "watcher",
    "PollScanner": "poll",
    "Snapshot": "poll",
    "Watcher": "watcher",
    "mount_of": "mounts",
    "needs_polling": "mounts",
    "read_mounts": "mounts",
}
__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = exports(__name__, _EXPORTS)
