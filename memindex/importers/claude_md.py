"""`CLAUDE.md` / `AGENTS.md` sections as constraints and preferences (opt-in).

One memory per section that has text of its own (a `##` heading and what follows it up to
the next heading): the unit the authors wrote. Per bullet would make dozens of memories
that each lose their heading's words and context; per file, one memory that matches every
prompt. A section is a constraint when its heading or first sentence uses a hard-rule word
(must, never, do not, ...), else a preference (`notes.classify` among those two).
"""

from __future__ import annotations

from pathlib import Path

from .engine import Planned, Report, Skipped, read_or_skip
from .notes import classify, from_sections, to_planned
from .source import source_path

KIND = "claude-md"
DEFAULT_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md")
ALLOWED = ("constraint", "preference")


def default_files(project: Path) -> list[Path]:
    """The instruction files of a project that exist (CLAUDE.local.md is personal: only
    when named)."""
    return [project / name for name in DEFAULT_FILES if (project / name).is_file()]


def _id_prefix(path: Path) -> str:
    return "agents-md" if path.name.lower() == "agents.md" else "claude-md"


def plan(project: Path, files: list[Path], report: Report) -> list[Planned]:
    planned: list[Planned] = []
    for path in files:
        text = read_or_skip(report, path, source_path(path, project))
        if text is None:
            continue
        report.read.add(source_path(path, project))
        notes = from_sections(path, text)
        if not notes:
            report.ignored.append(Skipped(source_path(path, project), "no section with text in it"))
        prefix = _id_prefix(path) + ("-dot-claude" if path.parent.name == ".claude" else "")
        for note in notes:
            planned.append(to_planned(note, KIND, project, classify(note, ALLOWED), prefix))
    return planned
