"""A Markdown note as one memory (`memindex import markdown`): typically a `.md` file
someone dropped into a category folder (`decisions/foo.md`), which the index ignores.

The category is the folder's when the file lies in a category folder, else the one given,
else `notes.classify`'s. The file's `# Title` is the memory's title (else its name); its
whole text the memory's content. The file itself is left where it is.
"""

from __future__ import annotations

from pathlib import Path

from ..defaults import FOLDERS
from . import markdown as md
from .engine import Planned, Report, Skipped, read_or_skip
from .notes import Note, classify, to_planned
from .source import source_path

KIND = "markdown"


def note_of(path: Path, text: str) -> Note:
    meta, body = md.front_matter(text)
    secs = md.sections(body)
    top = next((s for s in secs if s.level == 1), None)
    title = str(meta.get("title") or (top.heading if top else "") or path.stem.replace("-", " ").replace("_", " "))
    if top is not None:
        body = body.replace(f"# {top.heading}", "", 1) if f"# {top.heading}" in body else body
    return Note(path, [title], body.strip(), description=str(meta.get("description") or ""))


def plan(project: Path, files: list[Path], category: str | None, report: Report) -> list[Planned]:
    planned: list[Planned] = []
    for path in files:
        label = source_path(path, project)
        text = read_or_skip(report, path, label)
        if text is None:
            continue
        note = note_of(path, text)
        if len(md.plain(note.body).split()) < 3:
            report.skipped.append(Skipped(label, "the note has no text to make a memory of"))
            continue
        chosen = FOLDERS.get(path.parent.name) or category or classify(note)
        planned.append(to_planned(note, KIND, project, chosen, "note"))
    return planned
