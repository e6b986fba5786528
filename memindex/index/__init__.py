"""The on-disk index `<root>/.index.db`: the only module that speaks SQL.

`db` opens, creates and repairs the file; `rows` is what writers (sync, rebuild, watch,
the write path, all under the lock in `sync`) put in; `reads` is every query readers (the
hook, search, status) ask. Readers open it read-only and never touch the memory files.
"""

from ..errors import IndexTooNew, IndexUnavailable
from .db import (
    confirm_build,
    describe,
    get_meta,
    index_path,
    is_corruption,
    open_reader,
    open_writer,
    remove_db_files,
    set_meta,
    transaction,
)
from .fresh import doc_fingerprint, documents_current, folder_mtimes, is_current, is_stale, now_ns, refresh, stat_fingerprint, sync_due

# The writer side loads only when a writer asks for it: the prompt hook reads.
_ROWS = frozenset({
    "PREFIX_MARK", "count_documents", "count_invalid", "count_not_indexed", "has_sources", "newest_session", "index_md_lines",
    "mark_invalid", "optimize", "remove", "replace_review", "reset", "stored_stats", "tag_key", "upsert",
})


def __getattr__(name: str) -> object:
    if name in _ROWS:
        from . import rows

        return getattr(rows, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "IndexTooNew", "IndexUnavailable", "PREFIX_MARK", "confirm_build", "describe", "folder_mtimes", "get_meta", "index_path",
    "is_corruption", "is_current", "is_stale", "mark_invalid", "now_ns", "open_reader", "open_writer", "remove",
    "refresh", "remove_db_files", "reset", "set_meta", "stat_fingerprint", "stored_stats", "sync_due", "tag_key", "upsert",
    "transaction", "count_documents", "count_invalid",
    "index_md_lines", "optimize",
]
