"""`memindex import claude-memory`: Claude Code's auto memory of this project, indexed in
place (`~/.claude/projects/<project key>/memory`: memindex/store/automemory.py).

The folder is outside the repository, so a repository's config cannot name it: the user's
own config turns it on (`documents.claude_memory`, config.LOOSER), for every project, each
reading its own folder. Sync then reads that folder's Markdown notes (that folder only, no
links), by the same mtime diff as the project's documents.
"""

from __future__ import annotations

from ..config import Config, user_config_path
from ..store.automemory import claude_projects_dir, default_folder, git_root, project_key  # noqa: F401  (capture's import)
from ..store.scaffold import enable_user_setting
from ..text.render import shown_path

KIND = "claude-memory"


def enable(project: str, cfg: Config, dry_run: bool = False) -> tuple[str, int]:
    """Turn on `documents.claude_memory` in the user's own config (unless `dry_run`); the
    line that says so, and how many notes the folder holds now."""
    folder = default_folder(project)
    path = user_config_path()
    if not dry_run and not cfg["documents.claude_memory"]:
        enable_user_setting(path, True)
    notes = [p for p in folder.glob("*.md") if not p.name.startswith(".")] if folder.is_dir() else []
    return f"documents.claude_memory = true in {shown_path(path)} for {shown_path(str(folder))}", len(notes)
