"""What a review item's suggested action does, through the write path (memindex.write:
validation, secrets refused, the writer lock, the file and its index row in one step):
retire, archive, update, merge, keep. A document indexed in place (`docs/adr/x.md#a`)
is the project's own file, not a memory: every action but keep says to edit that file."""

from __future__ import annotations

import os
from typing import Any

from ..config import Config
from ..defaults import QUESTIONS_MAX
from ..errors import UsageError
from ..store.paths import project_of


def _memory_path(root: str, path: str) -> str:
    """`path` if it can name a memory file; a document's row or file is refused with what to do."""
    text = path.strip()
    if text.startswith("@") or "#" in text or text.endswith((".md", ".markdown", ".mdx")):
        file = text.lstrip("@").partition("#")[0]
        raise UsageError(f"{file} is a document indexed in place, not a memory: edit the file itself "
                         "(memindex re-reads it on the next sync)")
    return text


def retire(root: str, cfg: Config, path: str, *, reason: str | None = None, replaced_by: str | None = None,
           expect_hash: str | None = None) -> dict[str, Any]:
    """Retire a memory that no longer holds (`replaced_by`: the one that holds now)."""
    from ..write import set_status

    return set_status(root, cfg, _memory_path(root, path), "retire", reason=reason or "no longer holds (review)",
                      replaced_by=replaced_by, expect_hash=expect_hash, cwd=project_of(root))


def archive(root: str, cfg: Config, path: str, *, reason: str | None = None, expect_hash: str | None = None) -> dict[str, Any]:
    """Archive a memory: kept, out of search and injection (`memindex unarchive` undoes it)."""
    from ..write import set_status

    return set_status(root, cfg, _memory_path(root, path), "archive", reason=reason or "archived from the review",
                      expect_hash=expect_hash, cwd=project_of(root))


def update(root: str, cfg: Config, path: str, patch: object, *, expect_hash: str | None = None) -> dict[str, Any]:
    """Merge changes into a memory (`memindex update`'s rules: content key by key, a change_summary)."""
    from ..write import update_memory

    return update_memory(root, cfg, _memory_path(root, path), patch, expect_hash=expect_hash, cwd=project_of(root))


def merge(root: str, cfg: Config, path: str, into: str, *, expect_hash: str | None = None) -> dict[str, Any]:
    """Merge a duplicate into the memory that stays: `into` gains the tags, questions and
    related files `path` has and it lacks (one update), then `path` is retired, replaced by
    `into` (search and the hook offer `into` where `path` would have matched). What the
    text of `path` adds is for the caller to put into `into` first (`update`)."""
    from ..policy.recall import read_memory
    from ..write import set_status, update_memory

    path, into = _memory_path(root, path), _memory_path(root, into)
    gone = read_memory(root, cfg, path)
    kept = read_memory(root, cfg, into)
    if gone["path"] == kept["path"]:
        raise UsageError("a memory cannot be merged into itself")
    old, new = gone["memory"], kept["memory"]

    def union(field: str, limit: int | None = None) -> list[str] | None:
        have = [v for v in new.get(field) or () if isinstance(v, str)]
        more = [v for v in old.get(field) or () if isinstance(v, str) and v not in have]
        if not more:
            return None
        merged = have + more
        return merged[:limit] if limit else merged

    patch: dict[str, Any] = {}
    for field, limit in (("tags", None), ("questions", QUESTIONS_MAX), ("related_files", None)):
        value = union(field, limit)
        if value is not None and value != new.get(field):
            patch[field] = value
    updated = None
    if patch:
        patch["change_summary"] = f"merged {gone['path']} into this memory (its tags, questions, related files)"
        updated = update_memory(root, cfg, kept["path"], patch, cwd=project_of(root))
    retired = set_status(root, cfg, gone["path"], "retire", reason="merged (review: duplicate)", replaced_by=kept["path"],
                         expect_hash=expect_hash, cwd=project_of(root))
    return {"status": "merged", "path": gone["path"], "into": kept["path"], "retired": retired, "updated": updated}


def keep(root: str, cfg: Config, path: str, *, kind: str | None = None) -> dict[str, Any]:
    """Acknowledge the review items of `path` (of one `kind`, or all): they stay out of the
    queue until the memory, the other memory of the item, or the evidence changes."""
    from . import acks
    from .queue import queue

    want = _shown_key(root, path)
    items = [i for i in queue(root, cfg, fresh=False, include_kept=True) if want in (i.shown, i.path)]
    if not items:  # nothing stored for it yet (or it changed since): look again now
        items = [i for i in queue(root, cfg, fresh=True, include_kept=True) if want in (i.shown, i.path)]
    if kind is not None:
        items = [i for i in items if i.kind == kind]
    if not items:
        raise UsageError(f"no review item for {path}" + (f" of kind {kind}" if kind else ""))
    acks.add(root, {i.key: i.basis for i in items})
    return {"status": "kept", "path": items[0].shown, "items": [{"kind": i.kind, "other_path": i.other_shown} for i in items]}


def _shown_key(root: str, path: str) -> str:
    """A path as the queue names it: as shown, or relative to the root (`decisions/x.json`)."""
    text = path.strip()
    if os.path.isabs(text):
        real = os.path.realpath(text)
        root_real = os.path.realpath(root)
        if real.startswith(root_real + os.sep):
            return real[len(root_real) + 1:]
        proj = os.path.realpath(project_of(root))
        if real.startswith(proj + os.sep):
            return real[len(proj) + 1:]
    return text.lstrip("./") if text.startswith("./") else text
