"""First use: create a project's memory root and the permission rules its skills need.

Idempotent and never destructive: existing folders and files are kept as they are, and a
settings file that is not valid JSON is refused rather than rewritten.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..defaults import DATA_DIR, CAPTURE_FOLDER, CONFIG_FILE, DERIVED_FILES, FOLDER_MODE, FOLDERS, GITIGNORE, MEMORY_DIR
from ..errors import MemindexError
from . import rootfs
from .atomic import create_exclusive, replace_atomic

DATA = Path(DATA_DIR)


@dataclass
class InitResult:
    root: Path
    created: list[str] = field(default_factory=list)  # relative to the project
    kept: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)  # files init added lines to (.gitignore)
    rules_added: list[str] = field(default_factory=list)


def permission_rules() -> list[str]:
    """The allow rules the skills need (memindex/data/permissions.json)."""
    return list(json.loads((DATA / "permissions.json").read_text(encoding="utf-8"))["allow"])


def init_project(project: Path) -> InitResult:
    """Create `<project>/.claude/memory/` with its category folders and a commented config."""
    if not project.is_dir():
        raise MemindexError(f"{project} is not a folder")
    root = project.joinpath(*MEMORY_DIR)
    result = InitResult(root=root)
    # sessions-local/ is made by the first capture, with the .gitignore that keeps it local
    folders = [f for f in FOLDERS if f != CAPTURE_FOLDER]
    for rel in [Path(MEMORY_DIR[0]), Path(*MEMORY_DIR), *(Path(*MEMORY_DIR, f) for f in folders)]:
        path = project / rel
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise MemindexError(f"{path} exists and is not a folder: move it away first")
        if path.is_dir():
            result.kept.append(f"{rel}/")
        else:
            path.mkdir(mode=FOLDER_MODE)  # the umask may only take bits away
            result.created.append(f"{rel}/")
    config = root / CONFIG_FILE
    rel = str(Path(*MEMORY_DIR, CONFIG_FILE))
    try:
        create_exclusive(str(config), (DATA / "memory-config.template.json").read_bytes())
        result.created.append(rel)
    except FileExistsError:
        result.kept.append(rel)
    rel = str(Path(*MEMORY_DIR, GITIGNORE))
    {"created": result.created, "updated": result.updated, "kept": result.kept}[ignore_derived(root)].append(rel)
    return result


GITIGNORE_HEAD = "# Derived by memindex from the memory files: never committed (memindex init)\n"


def ignore_derived(root: Path) -> str:
    """List every derived file (defaults.DERIVED_FILES) in the root's .gitignore: creates it,
    or appends the patterns it lacks (the rest of the file is kept). Returns what it did."""
    from ..errors import UnsafeFile

    path = str(root / GITIGNORE)
    try:
        create_exclusive(path, (GITIGNORE_HEAD + "\n".join(DERIVED_FILES) + "\n").encode())
        return "created"
    except FileExistsError:
        pass
    try:
        text = (rootfs.read(path, 1_048_576) or b"").decode("utf-8", "replace")
    except UnsafeFile as exc:
        raise MemindexError(f"{exc}: add these lines to it by hand: {' '.join(DERIVED_FILES)}") from None
    have = {line.strip() for line in text.splitlines()}
    missing = [p for p in DERIVED_FILES if p not in have]
    if not missing:
        return "kept"
    lead = "" if not text or text.endswith("\n") else "\n"
    rootfs.write(path, (lead + GITIGNORE_HEAD + "\n".join(missing) + "\n").encode(), append=True)
    return "updated"


def _settings_file(path: Path, project: Path) -> Path:
    """The file to edit for `.claude/settings.json`: itself, or the file it links to when
    that stays inside the project (written in place of the target, the link kept). A link
    out of the project (a cloned repository's could name any file of the user), a dangling
    one or anything but a regular file is refused with what to do instead."""
    from .paths import inside

    if not path.is_symlink():
        if path.exists() and not path.is_file():
            raise MemindexError(f"{path} is not a regular file; add the rules by hand")
        return path
    target = os.path.realpath(path)
    if not inside(target, os.path.realpath(project)):
        raise MemindexError(f"{path} is a symbolic link to {target}, outside the project: memindex does not "
                            f"write there; add the rules to that file by hand (`memindex init` prints them)")
    if not os.path.isfile(target):
        raise MemindexError(f"{path} is a symbolic link to {target}, which is not a regular file; add the rules by hand")
    return Path(target)


def add_permissions(project: Path, result: InitResult | None = None) -> list[str]:
    """Merge the skills' allow rules into `<project>/.claude/settings.json`; returns the
    rules that were not there yet. Anything else in the file is left as it is."""
    path = _settings_file(project / MEMORY_DIR[0] / "settings.json", project)
    settings: Any = {}
    if path.exists():
        try:
            settings = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise MemindexError(f"{path} is not valid JSON ({exc}); fix it or add the rules by hand") from None
        if not isinstance(settings, dict) or not isinstance(settings.get("permissions", {}), dict):
            raise MemindexError(f"{path}: expected an object with a 'permissions' object; add the rules by hand")
    allow = settings.setdefault("permissions", {}).setdefault("allow", [])
    if not isinstance(allow, list):
        raise MemindexError(f"{path}: permissions.allow is not a list; add the rules by hand")
    added = [rule for rule in permission_rules() if rule not in allow]
    if added:
        allow.extend(added)
        rootfs.make_folders(str(path.parent))
        replace_atomic(str(path), (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    if result is not None:
        result.rules_added = added
    return added
