"""The store stays true: what needs a human or the model, in one queue, and what acting
on it does. Library first: `memindex review` (cli/review.py), the MCP tools `review`,
`keep`, `merge`, the SessionStart line, the prompt hook's notes and the local UI all call
these functions and nothing else.

Contract
--------
Reading (no writes but the index's `review` table and meta, under the writer lock):

    queue(root, cfg, *, fresh=True, include_kept=False, now=None) -> list[Item]
        The review queue, sorted (conflict, stale, expired, duplicate, unused; then path).
        `fresh`: run every detector now (bounded: git calls time out, files are read with
        bounds) and store the findings; else the last refresh's findings for memories
        unchanged since. Acknowledged items are left out unless `include_kept`.
    refresh(root, cfg, *, now=None) -> dict
        Run the detectors and store what they found (the hooks read it); the report:
        {checked_at, memories, items, by_kind, ms: {detector: ms}, ms_total, stored, git}.
    stored_items(root, cfg) -> list[Item]
        What the last refresh stored (no detector runs).
    pending.counts(conn, root) -> dict[kind, int]
        Items waiting, from the index alone (standard library: SessionStart).

`Item.to_json()` is the queue's JSON shape (`memindex review --json` prints
`{"items": [...]}` of them):

    {"kind": "stale" | "conflict" | "duplicate" | "unused" | "expired",
     "path": ".claude/memory/decisions/x.json",      # as search shows it
     "reason": "one line",
     "evidence": {...},                              # per kind, below
     "suggested": "retire" | "archive" | "update" | "merge" | "keep",
     "other_path": ".claude/memory/decisions/y.json"}  # conflict, duplicate: the other memory

Evidence by kind: stale {"files": [{"path", "state": "deleted" | "renamed" | "missing",
"to"?, "commit"?, "date"?}], "names": [{"name", "state": "gone", "seen_at"}],
"churn": {"files", "lines_changed", "ratio"}?, "since": commit, "head": commit};
expired {"expires"} or {"status"} or {"active": false}; duplicate and conflict {"match",
"signals": [...], "newer": path}; unused {"shown", "sessions", "opened": 0, "shown_by",
"last_shown"}. An item's `key` (kind, path, other path) names it across runs; its `basis`
(the memory's bytes, the other memory's, the stable part of the evidence) is what `keep`
holds on to.

Acting (memindex.write underneath: validation, secret refusal, the lock, the index):

    retire(root, cfg, path, *, reason=None, replaced_by=None, expect_hash=None) -> dict
    archive(root, cfg, path, *, reason=None, expect_hash=None) -> dict
    update(root, cfg, path, patch, *, expect_hash=None) -> dict
    merge(root, cfg, path, into, *, expect_hash=None) -> dict
        `into` gains the tags, questions, related files of `path`; `path` is retired,
        replaced by `into`.
    keep(root, cfg, path, *, kind=None) -> dict
        Acknowledge the item(s) of `path` until the memory or its evidence changes
        (recorded per user: review/acks.py).

A document indexed in place (`docs/adr/x.md#a`, rows `@file#anchor`) may be reported, but
every action on it but `keep` raises UsageError: "edit the file".

Modules: items (Item, Entry), queue (refresh, queue, the detectors' context), pending
(SessionStart's count), acks (keep), actions; the detectors: stale (the code moved on:
git), conflicts (duplicates, contradictions), expiry (dates and statuses), use (shown,
never opened: memindex/usage.py).
"""

from __future__ import annotations

from ..lazy import exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .actions import archive, keep, merge, retire, update
    from .items import Entry, Item
    from .queue import queue, refresh, stored_items

_EXPORTS = {
    "queue": "queue", "refresh": "queue", "stored_items": "queue", "Item": "items", "Entry": "items",
    "retire": "actions", "archive": "actions", "update": "actions", "merge": "actions", "keep": "actions",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = exports(__name__, _EXPORTS)
