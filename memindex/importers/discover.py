"""What a project already knows that memindex could import: `memindex init` says it,
with counts and the command for each, and never imports by itself."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import WriteError
from ..text.render import shown_path
from . import adr, claude_md, claude_memory
from .notes import from_sections
from .source import read_text, source_path


@dataclass
class Offer:
    kind: str
    count: int
    where: str  # the folder or files, relative to the project where inside it
    text: str  # what was found, as init says it
    command: str
    opt_in: bool = False

    def line(self) -> str:
        return f"{self.text}: {self.command}" + (" (opt-in)" if self.opt_in else "")

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def offers(project: Path) -> list[Offer]:
    """One offer per source found (none for a kind with nothing to import)."""
    out: list[Offer] = []
    for folder in adr.find_folders(project):
        count = len(adr.adr_files(folder))
        if count:
            where = source_path(folder, project)  # .adr-dir names it: escaped in the text init prints
            out.append(Offer("adr", count, where, f"found {count} ADR{'s' if count != 1 else ''} in {shown_path(where)}",
                             "memindex import adr"))
    folder = claude_memory.default_folder(project)
    files = claude_memory.memory_files(folder) if folder.is_dir() else []
    if files:
        out.append(Offer("claude-memory", len(files), str(folder), f"Claude Code auto memory: {len(files)} file{'s' if len(files) != 1 else ''}",
                         "memindex import claude-memory"))
    for path in claude_md.default_files(project):
        try:
            count = len(from_sections(path, read_text(path)))
        except WriteError:
            continue
        if count:
            where = source_path(path, project)
            out.append(Offer("claude-md", count, where, f"{shown_path(where)}: {count} section{'s' if count != 1 else ''}",
                             f"memindex import claude-md {where}", opt_in=True))
    return out
