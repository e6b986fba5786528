"""Claude Code's auto memory for this project as memindex memories.

Claude Code keeps its own notes outside the repository, in
`~/.claude/projects/<project key>/memory/`: `MEMORY.md` (an index of links to topic files,
of which it loads the first 200 lines) and topic files, each with a front matter
(`name`, `description`, `type` or `metadata.type`: user, feedback, project, reference).
The project key is the project's canonical git root (the main checkout for a worktree),
with every character that is not an ASCII letter or digit replaced by `-`; past 200
characters it is cut and a hash of the full path appended (as Claude Code 2.1 does).
`CLAUDE_CONFIG_DIR` moves `~/.claude`.

A topic file with a front matter is one memory; a file without one (or MEMORY.md's own
notes, once its index lines are set aside) gives one memory per section. The category
comes from `notes.classify`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..defaults import IMPORT_MAX_FILES
from ..errors import WriteError
from . import markdown as md
from .engine import Planned, Report, Skipped, read_or_skip
from .notes import Note, classify, from_sections, to_planned
from .source import read_text, source_path

KIND = "claude-memory"
INDEX = "MEMORY.md"
KEY_MAX = 200


def _java_hash(text: str) -> int:
    """JavaScript's `(h << 5) - h + charCode | 0` over UTF-16 code units."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i:i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def project_key(path: str) -> str:
    """Claude Code's folder name for a project path under ~/.claude/projects/."""
    # JavaScript replaces each UTF-16 code unit: a character past U+FFFF is two dashes
    key = "".join(c if c.isascii() and c.isalnum() else "--" if ord(c) > 0xFFFF else "-" for c in path)
    if len(key) <= KEY_MAX:
        return key
    return f"{key[:KEY_MAX]}-{_base36(abs(_java_hash(path)))}"


def git_root(project: Path) -> Path:
    """The canonical git root of a project without running git (a repository's config can
    make git run programs): the folder holding `.git`, and for a worktree (`.git` is a
    file `gitdir: <main>/.git/worktrees/NAME`) the main checkout. The project itself when
    it is not in a repository."""
    folder = project.resolve()
    for candidate in (folder, *folder.parents):
        dot = candidate / ".git"
        if dot.is_dir():
            return candidate
        if dot.is_file():
            return _main_checkout(dot) or candidate
    return folder


def _main_checkout(dot: Path) -> Path | None:
    """The main checkout of the worktree whose `.git` file is `dot`, only when git's own
    records agree both ways: `.git` names `<common>/worktrees/NAME`, whose `commondir`
    names `<common>` and whose `gitdir` names this very `.git` file. A `.git` file a
    repository ships (an archive's, a crafted one) cannot name another project's records:
    they do not point back at it. None otherwise (the folder is then its own root)."""
    try:
        line = read_text(dot).strip()
        if not line.startswith("gitdir:"):
            return None
        gitdir = (dot.parent / line[len("gitdir:"):].strip()).resolve()
        common = (gitdir / read_text(gitdir / "commondir").strip()).resolve()
        back = (gitdir / read_text(gitdir / "gitdir").strip()).resolve()
    except (WriteError, OSError, ValueError):
        return None
    if gitdir.parent != (common / "worktrees").resolve() or back != dot.resolve():
        return None
    return common.parent


def claude_projects_dir() -> Path:
    """Claude Code's per-project folders (transcripts, auto memory): `$CLAUDE_CONFIG_DIR/projects`,
    else `~/.claude/projects`."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return Path(base) / "projects"


def default_folder(project: Path) -> Path:
    """Where Claude Code keeps this project's auto memory."""
    return claude_projects_dir() / project_key(str(git_root(project))) / "memory"


def memory_files(folder: Path) -> list[Path]:
    """MEMORY.md first, then the topic files (sorted), at most IMPORT_MAX_FILES."""
    try:
        names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".md") and not e.name.startswith("."))
    except OSError:
        return []
    names.sort(key=lambda n: n != INDEX)
    return [folder / n for n in names][:IMPORT_MAX_FILES]


def _index(text: str) -> tuple[dict[str, tuple[str, str]], str]:
    """MEMORY.md's index lines ({file name: (title, description)}) and the rest of its text."""
    described: dict[str, tuple[str, str]] = {}
    rest = []
    for line in text.split("\n"):
        found = md.links(line)
        if found and re.match(r"^\s*(?:[-*+]|\d+\.)\s", line) and found[0][1].endswith(".md") and "/" not in found[0][1]:
            tail = md.plain(line.split(")", 1)[1]) if ")" in line else ""
            described[found[0][1]] = (md.plain(found[0][0]), tail.lstrip("-—–: ").strip())
        else:
            rest.append(line)
    return described, "\n".join(rest)


def notes_of(path: Path, text: str, described: dict[str, tuple[str, str]]) -> list[Note]:
    """The notes of one auto memory file."""
    meta, body = md.front_matter(text)
    if not meta:
        return from_sections(path, body)
    nested = meta.get("metadata")
    declared = meta.get("type") or (nested.get("type") if isinstance(nested, dict) else None)
    name = str(meta.get("name") or path.stem)
    secs = md.sections(body)
    if secs and len(secs) > 1 and secs[1].level == 1 and not secs[0].text:
        body = "\n".join(secs[1].lines) + "".join(f"\n{'#' * s.level} {s.heading}\n" + "\n".join(s.lines) for s in secs[2:])
    linked, summary = described.get(path.name, ("", ""))
    description = str(meta.get("description") or summary)
    # the index's link words are a human title; a kebab-case `name` is a slug
    title = linked or (name.replace("_", " ").replace("-", " ") if re.fullmatch(r"[\w-]+", name) else name)
    tags = [str(declared)] if declared else []
    return [Note(path, [title], body.strip(), description=description, declared_type=str(declared or ""), extra_tags=tags)]


def plan(project: Path, folders: list[Path], report: Report) -> list[Planned]:
    """The memories of every auto memory file in `folders`."""
    planned: list[Planned] = []
    files = [f for folder in folders for f in memory_files(folder)]
    described: dict[str, tuple[str, str]] = {}
    for path in files:
        text = read_or_skip(report, path, source_path(path, project))
        if text is None:
            continue
        report.read.add(source_path(path, project))
        if path.name == INDEX:
            described, text = _index(text)
        notes = notes_of(path, text, described)
        if not notes:
            report.ignored.append(Skipped(source_path(path, project), "no note with text in it"))
        for note in notes:
            planned.append(to_planned(note, KIND, project, classify(note), "claude-memory"))
    return planned
