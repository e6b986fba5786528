"""What each MCP tool does, as plain methods over the engine (memindex.policy.recall for reading,
memindex.write for writing): the same functions `memindex search|explain|save|update|
retire` call, with the CLI's rules (sync before reading when the index is stale, the
write path's validation, secret refusal and lock). No SDK here: memindex/mcp/server.py
turns these into tools and their exceptions into MCP errors.

Answers are text for a model: search and recent_sessions the CLI's compact lines
(`rank. [CATEGORY] title | #tags | updated | path`), the rest JSON.
"""

from __future__ import annotations

import json
from typing import Any

from ..config import Config, load_config
from ..errors import RootNotFound
from ..store.paths import project_of


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


class Memories:
    """One project's memory root, found once (or, when the project has none yet, on each
    call until `memindex init` makes one); its config read afresh for each call, so an
    edit to it applies without restarting the server."""

    def __init__(self, root: str | None, start: str, explicit: bool = False) -> None:
        self._root, self._start, self._explicit = root, start, explicit
        self._warned: tuple[str, ...] = ()

    def _context(self) -> tuple[str, Config]:
        from ..store.paths import find_root

        if self._root is None:
            try:
                self._root = find_root(self._start, explicit=self._explicit)
            except RootNotFound as exc:
                raise RootNotFound(f"{exc}; run `memindex init` in the project first") from None
        cfg = load_config(self._root)
        if tuple(cfg.warnings) != self._warned:  # said once, not on every call
            self._warned = tuple(cfg.warnings)
            from ..policy.recall import warn

            for warning in cfg.warnings:
                warn(f"config: {warning}")
        return self._root, cfg

    # --- reading ------------------------------------------------------------------------

    def search(self, query: str, limit: int | None = None, category: str | None = None,
               include_inactive: bool = False) -> str:
        from ..store.paths import display_prefix
        from ..policy.recall import format_hits, search_hits

        root, cfg = self._context()
        categories = (_category(category),) if category else ()
        hits = search_hits(root, cfg, query, limit=limit, categories=categories, include_inactive=include_inactive,
                           record="mcp")
        return format_hits(hits, display_prefix(root)) or "no memory matches; try other words"

    def get(self, path: str) -> str:
        from ..policy.recall import read_memory

        root, cfg = self._context()
        return _json(read_memory(root, cfg, path, record="mcp-get"))

    def recent_sessions(self, limit: int = 3) -> str:
        from ..store.paths import display_prefix
        from ..policy.recall import format_hits, recent_sessions

        root, cfg = self._context()
        return format_hits(recent_sessions(root, cfg, limit, record="recent"), display_prefix(root)) or "no session summary yet"

    def explain(self, prompt: str) -> str:
        from ..policy.recall import explain

        root, cfg = self._context()
        return _json(explain(root, cfg, prompt))

    def review(self, kind: list[str] | None = None, fresh: bool = True) -> str:
        from .. import review

        root, cfg = self._context()
        items = review.queue(root, cfg, fresh=fresh)
        if kind:
            items = [i for i in items if i.kind in kind]
        return _json({"items": [i.to_json() for i in items]})

    # --- writing (memindex.write: validation, secret refusal, the writer lock) ---------

    def save(self, category: str, data: dict[str, Any], new_topic: bool = False) -> str:
        from ..write import save_new

        root, cfg = self._context()
        return _json(save_new(root, cfg, category, data, new_topic=new_topic))

    def update(self, path: str, data: dict[str, Any], expect_hash: str | None = None) -> str:
        from ..write import update_memory

        root, cfg = self._context()
        return _json(update_memory(root, cfg, path, data, expect_hash=expect_hash, cwd=project_of(root)))

    def retire(self, path: str, reason: str | None = None, replaced_by: str | None = None,
               expect_hash: str | None = None) -> str:
        from ..write import set_status

        root, cfg = self._context()
        return _json(set_status(
            root, cfg, path, "retire", reason=reason, replaced_by=replaced_by, expect_hash=expect_hash, cwd=project_of(root),
        ))


    def keep(self, path: str, kind: str | None = None) -> str:
        from .. import review

        root, cfg = self._context()
        return _json(review.keep(root, cfg, path, kind=kind))

    def merge(self, path: str, into: str, expect_hash: str | None = None) -> str:
        from .. import review

        root, cfg = self._context()
        return _json(review.merge(root, cfg, path, into, expect_hash=expect_hash))


def _category(name: str) -> str:
    from ..write.validate import normalize_category

    return normalize_category(name)

