"""The write path: save, update, retire/archive/unarchive/restore, gc, and candidate.

Library first: these functions work without the CLI (`memindex.cli.write` and
`memindex.cli.candidate` are thin layers over them) and raise the exceptions of
`memindex.errors` (`WriteError` and its subclasses, `LockTimeout`), which carry data,
never exit codes.

    validate   input normalisation: cleaned fields, a new memory, file bytes
    records    what a write changes in a memory: an update merged in, a lifecycle step
    locate     which memory file a path names, and how it is shown
    ops        the writes themselves, each in one locked, indexed transaction
    candidate  which existing memory new information should update
"""

from .candidate import find_candidate
from .locate import display, resolve_path
from .ops import gc, grace_period_days, save_memory, set_status, update_memory
from .records import TRANSITIONS, merge_update
from .validate import clean_title, normalize_category, normalize_hash, prepare_new, serialize, slugify, utc_now

__all__ = [
    "TRANSITIONS", "clean_title", "display", "find_candidate", "gc", "grace_period_days", "merge_update",
    "normalize_category", "normalize_hash", "prepare_new", "resolve_path", "save_memory", "serialize", "set_status",
    "slugify", "update_memory", "utc_now",
]
