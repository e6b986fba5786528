"""Registering the project's own documents, indexed in place: what `memindex import adr |
markdown | claude-md | claude-memory` and `memindex init` do.

A document is never copied into a memory file: a copy drifts from its source the day the
source is edited, and two texts of one decision compete in search. Registering writes the
folder or file into the project's `memory-config.json` (`documents.paths`: path -> kind;
Claude Code's auto memory, outside the repository, through the user's own setting
`documents.claude_memory`), then syncs: the index reads the files, and keeps reading them
as they change (mtime diff, watcher, hooks).

Every file is reported: indexed (its title, category, status -> lifecycle), or not and why.
A file deliberately left out (a template, an index page, not an ADR, no text) is not a
failure; one that could not be read (too large, a link out of the project, another user's,
binary) is. Memories an earlier memindex copied from a now-registered document (`source`
kind adr, markdown, claude-md or claude-memory) are archived through the write path, with a
reason naming the document: they would duplicate it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config, load_config
from ..errors import LockTimeout, MemindexError
from ..store import documents as docs
from ..store.paths import project_of

COPY_KINDS = ("adr", "markdown", "claude-md", "claude-memory")  # `source.kind` of the copies the old imports wrote


@dataclass
class FileOutcome:
    """One registered file: indexed (what it reads as) or not (why)."""

    path: str  # relative to the project; absolute for an auto memory note
    kind: str
    indexed: bool
    reason: str = ""  # why it is not indexed, or why it is retired / archived
    deliberate: bool = False  # not indexed on purpose (a template, an index page, no text): no failure
    title: str = ""
    category: str = ""
    status: str = ""  # an ADR's status as written
    state: str = ""  # ... as one word (accepted, proposed, superseded, ...)
    lifecycle: str = ""  # active, retired or archived
    replaced_by: str = ""
    date: str = ""

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", None) or k in ("indexed",)}


@dataclass
class Registration:
    """What one registration did (or, with dry_run, would do)."""

    kind: str
    dry_run: bool
    config: str = ""  # the config file written (shown)
    paths: dict[str, str] = field(default_factory=dict)  # what the command registers
    added: list[str] = field(default_factory=list)  # ... of which new (or of a new kind)
    files: list[FileOutcome] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # a registered path that cannot be read
    copies: list[dict[str, str]] = field(default_factory=list)  # earlier copies archived: memory, document, reason
    copy_errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    setting: str = ""  # the user's own setting written (import claude-memory)

    @property
    def failed(self) -> list[FileOutcome]:
        return [f for f in self.files if not f.indexed and not f.deliberate]

    @property
    def exit_code(self) -> int:
        """0 when every file is indexed or deliberately left out; 1 when a file that should
        be a document could not be read, a registered path cannot be used, or an earlier
        copy could not be archived."""
        return 1 if self.failed or self.problems or self.copy_errors else 0

    def to_json(self) -> dict[str, Any]:
        indexed = [f for f in self.files if f.indexed]
        return {
            "kind": self.kind, "dry_run": self.dry_run, "config": self.config, "paths": self.paths,
            "registered": self.added, "setting": self.setting or None,
            "files": [f.to_json() for f in self.files],
            "counts": {"files": len(self.files), "indexed": len(indexed), "not_indexed": len(self.files) - len(indexed),
                       "failed": len(self.failed), **_lifecycles(indexed)},
            "problems": self.problems, "archived_copies": self.copies, "copy_errors": self.copy_errors,
            "warnings": self.warnings, "exit_code": self.exit_code,
        }


def _lifecycles(indexed: list[FileOutcome]) -> dict[str, int]:
    out = {"active": 0, "retired": 0, "archived": 0}
    for f in indexed:
        out[f.lifecycle] = out.get(f.lifecycle, 0) + 1
    return out


def outcomes(project: str, paths: dict[str, str], auto_memory: str | None = None) -> tuple[list[FileOutcome], dict[str, str]]:
    """What every file the `paths` name reads as, as sync will index it (the cross-file
    "Supersedes" links included); and the registered paths that cannot be read."""
    from ..store.adr import replaced_by
    from ..store.interpret import load

    problems: dict[str, str] = {}
    found = docs.walk(project, paths, problems, auto_memory=auto_memory)
    out: list[FileOutcome] = []
    adrs: dict[str, list[str]] = {}
    for rel, (_, kind) in sorted(found.items()):
        try:
            doc, _ = load(project, rel, kind)
        except docs.NotIndexed as exc:
            out.append(FileOutcome(rel, kind, False, exc.reason, exc.deliberate))
            continue
        if kind == "adr":
            adrs[rel] = doc.supersedes
        out.append(FileOutcome(rel, kind, True, doc.reason, title=doc.title, category=_categories(doc), status=doc.status,
                               state=doc.state, lifecycle=doc.record_status, replaced_by=(doc.successors or [""])[0],
                               date=doc.created_at[:10]))
    links = replaced_by(adrs, set(adrs))
    for f in out:
        if f.path in links and f.indexed and not (f.lifecycle == "retired" and f.replaced_by):
            f.lifecycle, f.replaced_by = "retired", links[f.path]
            f.reason = f"{f.reason or 'ADR status: ' + (f.status or f.state)} (replaced by {links[f.path]}, which supersedes it)"
    return out, problems


def _categories(doc: docs.Document) -> str:
    """The document's category, or its sections' when they differ (`constraint 1, preference 3`)."""
    cats: dict[str, int] = {}
    for unit in doc.units:
        if unit.anchor and "~" not in unit.anchor:
            cats[unit.category or doc.category] = cats.get(unit.category or doc.category, 0) + 1
    if len(cats) <= 1:
        return doc.category
    return ", ".join(f"{c} {n}" for c, n in sorted(cats.items()))


def register(root: str | os.PathLike[str], kind: str, paths: dict[str, str], *, dry_run: bool = False,
             auto_memory: bool = False, lock_timeout: float | None = None) -> Registration:
    """Register `paths` (project-relative folder or file -> kind; checked by the caller)
    in the project's config, sync, and report every file; `auto_memory`: Claude Code's auto
    memory folder, registered by the user's own setting (the caller writes it)."""
    from ..store import scaffold
    from ..store.automemory import default_folder
    from ..write import display

    root = Path(root)
    project = project_of(root)
    reg = Registration(kind, dry_run, config=display(root, "memory-config.json"), paths=dict(paths))
    folder = str(default_folder(project)) if auto_memory else None
    reg.files, reg.problems = outcomes(project, paths, folder)
    if not dry_run:
        if paths:
            reg.added, before, after = scaffold.register_documents(root, paths)
            _keep_trust(root, before, after)
        cfg = load_config(root)
        missing = [p for p in paths if cfg["documents.paths"].get(p) != paths[p]]  # type: ignore[attr-defined]
        if missing:
            reg.warnings.append(f"registered, but the settings in force do not list {', '.join(missing)} "
                                f"(MEMINDEX_CONFIG_JSON sets documents.paths?): not indexed")
        _sync(root, cfg, reg, lock_timeout)
    else:
        cfg = load_config(root)
        have = cfg["documents.paths"]
        reg.added = [p for p, k in paths.items() if have.get(p) != k]  # type: ignore[attr-defined]
    archive_copies(root, cfg, reg, lock_timeout)
    return reg


def _keep_trust(root: Path, before: bytes | None, after: bytes) -> None:
    """A config the user trusted (`memindex trust`) stays trusted when the only change is
    memindex's own registration of documents (which a repository may make anyway)."""
    from .. import trust

    if before is not None and before != after and trust.state(root, before) == trust.TRUSTED:
        trust.allow(root, after, str(root / "memory-config.json"))


def _sync(root: Path, cfg: Config, reg: Registration, lock_timeout: float | None) -> None:
    """Sync, then take each file's fate from the index (it may have changed since it was read)."""
    from ..index import open_reader
    from ..index.sync import sync

    sync(root, cfg, progress=False, lock_timeout=lock_timeout)
    try:
        conn = open_reader(root)
        rows = {p: e for p, e in conn.execute("SELECT path, error FROM sources")}
        conn.close()
    except Exception as exc:  # noqa: BLE001 - the report still says what was read
        reg.warnings.append(f"could not read the index back ({exc})")
        return
    for f in reg.files:
        if f.path not in rows:
            f.indexed, f.deliberate = False, False
            f.reason = "not read by sync: the settings in force do not register it (a project's config can turn it off)"
        elif (rows[f.path] is None) != f.indexed:
            f.indexed, f.reason, f.deliberate = rows[f.path] is None, rows[f.path] or "", False


def indexed_sources(root: Path, reg: Registration) -> set[str]:
    """The document files that are indexed now (or would be, in a dry run)."""
    out = {f.path for f in reg.files if f.indexed}
    if reg.dry_run:
        try:
            from ..index import open_reader

            conn = open_reader(root)
            out |= {p for (p,) in conn.execute("SELECT path FROM sources WHERE error IS NULL")}
            conn.close()
        except Exception:  # noqa: BLE001 - no index yet: only this run's files
            pass
    return out


def archive_copies(root: Path, cfg: Config, reg: Registration, lock_timeout: float | None) -> None:
    """Archive the active memories an earlier memindex copied from a document that is now
    indexed in place (`source.kind` in COPY_KINDS, `source.path` an indexed file)."""
    from ..defaults import MAX_REASON
    from ..store.files import read_bytes, walk
    from ..write import display, set_status

    indexed = indexed_sources(root, reg)
    if not indexed:
        return
    for rel in sorted(walk(root)):
        try:
            data, _ = read_bytes(root, rel, int(cfg["index.max_file_bytes"]))  # type: ignore[call-overload]
            if b'"source"' not in data:
                continue
            mem = json.loads(data)
        except (MemindexError, ValueError, OSError):
            continue
        src = mem.get("source") if isinstance(mem, dict) else None
        if not isinstance(src, dict) or src.get("kind") not in COPY_KINDS or mem.get("record_status", "active") != "active":
            continue
        path = str(src.get("path") or "")
        if path not in indexed:
            continue
        reason = f"Now indexed in place from {path}: this copy would duplicate it"[:MAX_REASON]
        entry = {"memory": display(root, rel), "document": path, "reason": reason}
        if not reg.dry_run:
            try:
                set_status(root, cfg, rel, "archive", reason=reason, lock_timeout=lock_timeout)
            except LockTimeout:
                raise
            except MemindexError as exc:
                reg.copy_errors.append({**entry, "error": str(exc)})
                continue
        reg.copies.append(entry)
