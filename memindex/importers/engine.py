"""Applying an import: planned memories become files through the write path.

An importer turns its sources into `Planned` memories (or `Skipped` ones, with the reason);
`apply` then writes them with `memindex.write`'s own functions (new memories in batches
with `save_memories`, one lock and index update each; changes with `update_memory`;
lifecycle steps with `set_status`, as `memindex retire --replaced-by`), so validation and
the write path's secret checks apply to every one. Idempotent: a memory whose `source`
(origin and digest) is already on disk is left alone; a changed source updates its memory
in place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config
from ..defaults import CATEGORY_FOLDER, FOLDERS, IMPORT_BATCH, IMPORT_PROGRESS_MIN
from ..text.progress import progress_bar
from ..errors import LockTimeout, MemindexError, WriteError
from ..store.files import walk
from ..write import display, save_memories, set_status, update_memory
from ..write.records import read_current, replacing
from .source import alternate_id, same_origin



@dataclass
class Planned:
    """One memory an importer wants, and the lifecycle state its source gives it."""

    category: str
    id: str
    data: dict[str, Any]  # title, tags, content, related_files, source (created_at optional)
    label: str  # how reports name it: the source path (and section)
    status: str = "active"  # active | retired | archived
    reason: str | None = None
    replaced_by: str | None = None  # the label of the planned memory that replaces it


@dataclass
class Skipped:
    label: str
    reason: str
    problems: list[str] = field(default_factory=list)


@dataclass
class Report:
    """What an import did (or, with dry_run, would do)."""

    kind: str
    dry_run: bool
    found: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    ignored: list[Skipped] = field(default_factory=list)  # not this kind of source at all
    warnings: list[str] = field(default_factory=list)
    read: set[str] = field(default_factory=set)  # source paths read whole: their gone sections are retired

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "dry_run": self.dry_run, "found": self.found,
            "created": self.created, "updated": self.updated, "unchanged": len(self.unchanged),
            "retired": self.retired, "archived": self.archived,
            "skipped": [{"source": s.label, "reason": s.reason, "problems": s.problems} for s in self.skipped],
            "ignored": [{"source": s.label, "reason": s.reason} for s in self.ignored],
            "warnings": self.warnings,
        }


def read_or_skip(report: Report, path: Path, label: str) -> str | None:
    """A source file's text, counted in report.found; None (and the file in
    report.skipped, with the reason) when it cannot be read."""
    from .source import read_text

    report.found += 1
    try:
        return read_text(path)
    except WriteError as exc:
        report.skipped.append(Skipped(label, str(exc.args[0]), exc.problems))
        return None


def _locate(root: Path, cfg: Config, item: Planned, claimed: set[str]) -> tuple[str, dict[str, Any] | None, list[str]]:
    """(where the memory goes, the memory already there or None, older copies of the same
    origin in another category folder). The id is the planned one unless a memory of
    another origin holds it (on disk, or `claimed` earlier in this import); then the
    planned id with a digest of the origin."""
    src = item.data["source"]
    moved: list[str] = []
    for folder in FOLDERS:
        if folder != CATEGORY_FOLDER[item.category]:
            rel = f"{folder}/{item.id}.json"
            if os.path.lexists(os.path.join(root, rel)):
                other = read_current(root, rel, cfg)
                if other and same_origin(other.get("source"), src) and other.get("record_status") != "retired":
                    moved.append(rel)
    for mem_id in (item.id, alternate_id(item.id, src)):
        rel = f"{CATEGORY_FOLDER[item.category]}/{mem_id}.json"
        if rel in claimed:
            continue
        current = read_current(root, rel, cfg)
        if current is None or same_origin(current.get("source"), src):
            item.id = mem_id
            claimed.add(rel)
            return rel, current, moved
    raise WriteError(f"memories of another origin already hold the ids {item.id!r} and {alternate_id(item.id, src)!r}")


def apply(
    root: str | os.PathLike[str],
    cfg: Config,
    report: Report,
    planned: list[Planned],
    *,
    progress: bool = False,
    lock_timeout: float | None = None,
) -> Report:
    """Write the planned memories (or, with report.dry_run, say what would be written),
    then give each the lifecycle state its source says. New memories are saved in batches
    of IMPORT_BATCH (one lock and index update each: `save_memories`); a memory the write
    path refuses is reported in `skipped` with every problem, and the rest go on."""
    root = Path(root)
    placed: dict[str, tuple[str, Planned, dict[str, Any] | None]] = {}  # label -> (rel, item, memory)
    new: list[tuple[str, Planned]] = []
    claimed: set[str] = set()
    bar = progress_bar(len(planned), progress, IMPORT_PROGRESS_MIN, "memory", f"import {report.kind}")
    try:
        for item in planned:
            try:
                rel, current, moved = _locate(root, cfg, item, claimed)
                if current is None:
                    new.append((rel, item))
                    continue
                if bar is not None:
                    bar.update(1)
                placed[item.label] = (rel, item, _update(root, cfg, report, rel, item, current, lock_timeout))
                for old in moved:  # the source now reads as another kind of memory
                    _transition(root, cfg, report, old, "retire", f"Re-imported as {rel[:-5]}", rel, lock_timeout)
            except LockTimeout:
                raise
            except MemindexError as exc:
                report.skipped.append(_skipped(item.label, exc))
        for start in range(0, len(new), IMPORT_BATCH):
            chunk = new[start:start + IMPORT_BATCH]
            _create(root, cfg, report, chunk, placed, lock_timeout)
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    _retire_gone(root, cfg, report, planned, lock_timeout)
    for rel, item, mem in placed.values():
        if item.status == "active" or (mem is not None and mem.get("record_status", "active") == item.status):
            continue
        if mem is None:  # a dry run's new memory
            (report.retired if item.status == "retired" else report.archived).append(display(root, rel))
            continue
        if item.status == "archived" and mem.get("record_status") != "active":
            continue  # retired by hand: archiving would bring it back
        successor = placed.get(item.replaced_by or "")
        try:
            _transition(
                root, cfg, report, rel, "retire" if item.status == "retired" else "archive", item.reason,
                successor[0] if successor and successor[2] is not None else None, lock_timeout,
            )
        except LockTimeout:
            raise
        except MemindexError as exc:
            report.skipped.append(_skipped(item.label, exc))
    return report


def _skipped(label: str, exc: MemindexError) -> Skipped:
    """A source the write path refused: its reason and every problem it named."""
    return Skipped(label, str(exc.args[0]) if exc.args else type(exc).__name__, list(getattr(exc, "problems", []) or []))


def _create(
    root: Path, cfg: Config, report: Report, chunk: list[tuple[str, Planned]],
    placed: dict[str, tuple[str, Planned, dict[str, Any] | None]], lock_timeout: float | None,
) -> None:
    """Save new memories in one transaction (`save_memories`); in a dry run, only say so."""
    if report.dry_run:
        for rel, item in chunk:
            report.created.append(display(root, rel))
            placed[item.label] = (rel, item, None)
        return
    batch = [(item.category, {**item.data, "id": item.id}) for _, item in chunk]
    for (rel, item), (_, data), answer in zip(chunk, batch, save_memories(root, cfg, batch, lock_timeout=lock_timeout)):
        if isinstance(answer, MemindexError):
            report.skipped.append(_skipped(item.label, answer))
            continue
        if answer.get("warning"):
            report.warnings.append(answer["warning"])
        report.created.append(answer["path"])
        placed[item.label] = (rel, item, {**data, "record_status": "active"})


def _update(
    root: Path, cfg: Config, report: Report, rel: str, item: Planned, current: dict[str, Any], lock_timeout: float | None,
) -> dict[str, Any]:
    """Bring an existing memory in line with its source, if the source changed."""
    shown = display(root, rel)
    if current.get("source") == item.data["source"]:
        report.unchanged.append(shown)
        return current
    report.updated.append(shown)
    if not report.dry_run:
        update_memory(root, cfg, rel, replacing(current, item.data, "Re-imported: the source changed"), lock_timeout=lock_timeout)
    return current


def _transition(
    root: Path, cfg: Config, report: Report, rel: str, action: str, reason: str | None, replaced_by: str | None,
    lock_timeout: float | None,
) -> None:
    (report.retired if action == "retire" else report.archived).append(display(root, rel))
    if not report.dry_run:
        set_status(root, cfg, rel, action, reason=reason, replaced_by=replaced_by, lock_timeout=lock_timeout)


def _retire_gone(root: Path, cfg: Config, report: Report, planned: list[Planned], lock_timeout: float | None) -> None:
    """Retire the active memories this kind of import made from a file it read whole
    (report.read) whose section is no longer there (a heading renamed or removed)."""
    if not report.read:
        return
    wanted = {(p.data["source"].get("path"), p.data["source"].get("section")) for p in planned}
    for rel in sorted(walk(root)):
        try:
            mem = read_current(root, rel, cfg)
        except WriteError:
            continue
        src = mem.get("source") if mem else None
        if not isinstance(src, dict) or src.get("kind") != report.kind or mem.get("record_status", "active") != "active":
            continue
        if src.get("path") in report.read and (src.get("path"), src.get("section")) not in wanted:
            try:
                _transition(root, cfg, report, rel, "retire", f"No longer in {src.get('path')}", None, lock_timeout)
            except LockTimeout:
                raise
            except MemindexError as exc:
                report.skipped.append(_skipped(display(root, rel), exc))
