"""The write path: save, update, retire/archive/unarchive/restore, gc, and candidate.

Library first: these functions work without the CLI (`memindex.cli.write` and
`memindex.cli.candidate` are thin layers over them) and raise the exceptions of
`memindex.errors` (`WriteError` and its subclasses, `LockTimeout`), which carry data,
never exit codes.

    validate   input normalisation: cleaned fields, a new memory, file bytes
    records    what a write changes in a memory: an update merged in, a lifecycle step
    locate     which memory file a path names, and how it is shown
    ops        the writes themselves, each in one locked, indexed transaction
    batch      many saves or many updates, in one transaction each batch
    candidate  which existing memory new information should update
"""

from __future__ import annotations

from ..lazy import exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .candidate import find_candidate, memory_text
    from .locate import display, resolve_path
    from .batch import save_memories, update_memories
    from .ops import gc, grace_period_days, save_memory, save_new, set_status, update_memory
    from .records import TRANSITIONS, merge_update
    from .validate import clean_title, normalize_category, normalize_hash, prepare_new, serialize, slugify, utc_now

# name -> the submodule that defines it (loaded on first use: `memindex candidate` reads
# only, and does not pay for the writer's modules)
_EXPORTS = {
    "find_candidate": "candidate", "memory_text": "candidate", "display": "locate", "resolve_path": "locate", "gc": "ops",
    "grace_period_days": "ops", "save_memory": "ops", "save_memories": "batch", "save_new": "ops", "set_status": "ops",
    "update_memory": "ops", "update_memories": "batch",
    "TRANSITIONS": "records", "merge_update": "records", "clean_title": "validate", "normalize_category": "validate",
    "normalize_hash": "validate", "prepare_new": "validate", "serialize": "validate", "slugify": "validate",
    "utc_now": "validate",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = exports(__name__, _EXPORTS)
