"""`memindex import transcripts`: every Claude Code transcript of this project (or of a
folder given) through the capture summariser, one summary per session.

Idempotent: a summary is found again by its session's id, so a second run creates
nothing, updates only the summaries whose transcript says something new, and leaves the
rest unchanged (the write path compares before it writes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..config import Config
from ..defaults import IMPORT_BATCH, IMPORT_MAX_FILES
from ..errors import MemindexError, UsageError
from ..importers.claude_memory import claude_projects_dir, project_key  # Claude Code's folders
from ..store.paths import project_of
from .parse import read_transcript
from .store import write_summaries
from .summary import summarise



def default_folder(root: str | os.PathLike[str]) -> Path:
    """Claude Code's transcript folder of the project that holds this memory root (its
    path as given, or its real path: Claude Code records the folder it was started in)."""
    project = project_of(os.path.realpath(root))
    projects = claude_projects_dir()
    candidates = [project_of(root), project]
    for path in candidates:
        folder = projects / project_key(path)
        if folder.is_dir():
            return folder
    return projects / project_key(project)


def transcripts(folder: Path) -> list[Path]:
    """The session transcripts of a folder (`*.jsonl` directly in it, oldest first, the
    newest IMPORT_MAX_FILES at most; the subagents' transcripts in session subfolders are
    sidechains, left out)."""
    if not folder.is_dir():
        raise UsageError(f"no transcript folder at {folder} (give one with --from DIR)")
    found = [p for p in folder.iterdir() if p.name.endswith(".jsonl") and p.is_file() and not p.is_symlink()]
    return sorted(found, key=lambda p: (p.stat().st_mtime, p.name))[-IMPORT_MAX_FILES:]  # the newest, at most


def import_transcripts(
    root: str | os.PathLike[str], cfg: Config, folder: Path, *, dry_run: bool = False,
    progress: Callable[[list[Path]], Iterator[Path]] | None = None, batch: int = IMPORT_BATCH,
    lock_timeout: float | None = None,
) -> dict[str, Any]:
    """Summarise every transcript of `folder` into this root, `batch` summaries per write
    transaction (the writer lock is released between batches). Returns {folder, dry_run,
    counts: {created, updated, unchanged, skipped, failed}, items: [{transcript, status,
    path?, session_id?, reason?}]}."""
    files = transcripts(folder)
    counts = dict.fromkeys(("created", "updated", "unchanged", "skipped", "failed"), 0)
    items: list[dict[str, Any]] = []
    pending: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (item, memory)

    def flush() -> None:
        try:
            answers = write_summaries(str(root), cfg, [m for _, m in pending], dry_run=dry_run, lock_timeout=lock_timeout)
        except (MemindexError, OSError) as exc:
            answers = [{"status": "failed", "error": str(exc)}] * len(pending)
        for (item, _), answer in zip(pending, answers):
            item["status"] = answer["status"]
            if "path" in answer:
                item["path"] = answer["path"]
            if answer.get("error") or answer.get("reason"):
                item["reason"] = answer.get("error") or answer.get("reason")
        pending.clear()

    for path in progress(files) if progress else files:
        item: dict[str, Any] = {"transcript": str(path)}
        items.append(item)
        try:
            session = read_transcript(str(path))
        except OSError as exc:
            item.update(status="failed", reason=str(exc))
            continue
        item["session_id"] = session.session_id
        memory = summarise(session, str(path))
        if memory is None:
            item.update(status="skipped", reason="no user prompt in the transcript")
            continue
        pending.append((item, memory))
        if len(pending) >= batch:
            flush()
    if pending:
        flush()
    for item in items:
        item["status"] = item["status"] if item["status"] in counts else "skipped"
        counts[item["status"]] += 1
    return {"folder": str(folder), "dry_run": dry_run, "counts": counts, "items": items}
