"""Where Claude Code keeps a project's auto memory: `~/.claude/projects/<project key>/memory/`.

The folder holds `MEMORY.md` (an index of links to topic files, of which Claude Code loads
the first 200 lines) and topic files, each with a front matter (`name`, `description`,
`type` or `metadata.type`: user, feedback, project, reference). It lies outside the
repository, so only the user's own setting (`documents.claude_memory`) has it indexed.

The project key is the project's canonical git root (the main checkout for a worktree),
with every character that is not an ASCII letter or digit replaced by `-`; past 200
characters it is cut and a hash of the full path appended (as Claude Code 2.1 does).
`CLAUDE_CONFIG_DIR` moves `~/.claude`. The git root is found without running git (a
repository's config can make git run programs), and a `.git` file the repository ships
cannot name another project's records.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..defaults import AUTO_MEMORY_KEY_MAX, SMALL_FILE_MAX
from ..errors import UnsafeFile
from . import rootfs

INDEX = "MEMORY.md"


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
    if len(key) <= AUTO_MEMORY_KEY_MAX:
        return key
    return f"{key[:AUTO_MEMORY_KEY_MAX]}-{_base36(abs(_java_hash(path)))}"


def _line(path: Path) -> str:
    try:
        data = rootfs.read(str(path), SMALL_FILE_MAX)
    except (UnsafeFile, OSError) as exc:
        raise ValueError(str(exc)) from None
    if data is None:
        raise ValueError(f"{path}: no such file")
    return data.decode("utf-8", "replace").strip()


def git_root(project: Path) -> Path:
    """The canonical git root of a project: the folder holding `.git`, and for a worktree
    (`.git` is a file `gitdir: <main>/.git/worktrees/NAME`) the main checkout. The project
    itself when it is not in a repository."""
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
        line = _line(dot)
        if not line.startswith("gitdir:"):
            return None
        gitdir = (dot.parent / line[len("gitdir:"):].strip()).resolve()
        common = (gitdir / _line(gitdir / "commondir")).resolve()
        back = (gitdir / _line(gitdir / "gitdir")).resolve()
    except (OSError, ValueError):
        return None
    if gitdir.parent != (common / "worktrees").resolve() or back != dot.resolve():
        return None
    return common.parent


def claude_projects_dir() -> Path:
    """Claude Code's per-project folders (transcripts, auto memory): `$CLAUDE_CONFIG_DIR/projects`,
    else `~/.claude/projects`."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return Path(base) / "projects"


def default_folder(project: str | os.PathLike[str]) -> Path:
    """Where Claude Code keeps this project's auto memory."""
    return claude_projects_dir() / project_key(str(git_root(Path(project)))) / "memory"
