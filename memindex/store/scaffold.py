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


# --- registering documents: the one edit memindex makes to a config file ---------------


def _top_level(text: str) -> tuple[dict[str, tuple[int, int]], int]:
    """The spans of a JSON object's top-level values (key -> (start, end)) and the index of
    its closing brace; ValueError when the text is not one JSON object."""
    decoder = json.JSONDecoder()
    ws = " \t\r\n"
    i = 0
    while i < len(text) and text[i] in ws:
        i += 1
    if i >= len(text) or text[i] != "{":
        raise ValueError("not a JSON object")
    i += 1
    spans: dict[str, tuple[int, int]] = {}
    while True:
        while i < len(text) and text[i] in ws:
            i += 1
        if i < len(text) and text[i] == "}":
            return spans, i
        if i >= len(text) or text[i] != '"':
            raise ValueError("expected a key")
        key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
        while i < len(text) and text[i] in ws:
            i += 1
        if i >= len(text) or text[i] != ":":
            raise ValueError("expected ':'")
        i += 1
        while i < len(text) and text[i] in ws:
            i += 1
        _, end = decoder.raw_decode(text, i)
        spans[key] = (i, end)
        i = end
        while i < len(text) and text[i] in ws:
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
        elif i >= len(text) or text[i] != "}":
            raise ValueError("expected ',' or '}'")


def with_documents(text: str, paths: dict[str, str] | None = None, claude_memory: bool | None = None) -> tuple[str, list[str]]:
    """A config's text with `documents.paths` extended by `paths` (a path registered under
    another kind takes the one given) and `documents.claude_memory` set, every other byte of
    the file kept; and the paths added or changed. ValueError (with what is wrong) when the
    text is no JSON object or its `documents` is no object."""
    text = text if text.strip() else "{}\n"
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("it is not a JSON object")
    documents = data.get("documents", {})
    if not isinstance(documents, dict) or not isinstance(documents.get("paths", {}), dict):
        raise ValueError("its `documents` (or `documents.paths`) is not an object")
    new = dict(documents)
    have = dict(documents.get("paths", {}))
    added = [p for p, kind in (paths or {}).items() if have.get(p) != kind]
    if added:
        new["paths"] = {**have, **{p: paths[p] for p in added}}  # type: ignore[index]
    if claude_memory is not None and documents.get("claude_memory") is not claude_memory:
        new["claude_memory"] = claude_memory
    if new == documents and "documents" in data:
        return text, added
    spans, close = _top_level(text)
    value = json.dumps(new, indent=2, ensure_ascii=False).replace("\n", "\n  ")
    if "documents" in spans:
        start, end = spans["documents"]
        return text[:start] + value + text[end:], added
    before = text[:close].rstrip()
    lead = "" if before.endswith("{") else ","
    return f'{before}{lead}\n  "documents": {value}\n{text[close:]}', added


def register_documents(root: Path, paths: dict[str, str]) -> tuple[list[str], bytes | None, bytes]:
    """Add `paths` (project-relative folder or file -> kind) to the project's
    `memory-config.json` (created when missing), keeping everything else in it; the only
    change `memindex init` and `memindex import` make to a config. Returns (the paths added
    or given a new kind, the file's bytes before, after). MemindexError when the file cannot be read or
    is not valid JSON: nothing is written then."""
    from . import rootfs
    from ..errors import UnsafeFile

    path = str(root / CONFIG_FILE)
    try:
        raw = rootfs.read(path, 1_048_576)
    except UnsafeFile as exc:
        raise MemindexError(f"{exc}: register the documents by hand (documents.paths)") from None
    text = (raw or b"").decode("utf-8", "replace")
    try:
        new, added = with_documents(text, paths)
    except ValueError as exc:
        raise MemindexError(f"{path}: {exc}; fix it first, nothing was written") from None
    data = new.encode("utf-8")
    if raw is None:
        create_exclusive(path, data)
    elif data != raw:
        replace_atomic(path, data)
    return added, raw, data


def enable_user_setting(path: str, claude_memory: bool = True) -> bool:
    """Set `documents.claude_memory` in the user's own config (created when missing, the
    rest kept); whether it changed. MemindexError when the file is not valid JSON."""
    try:
        with open(path, "rb") as fh:
            raw: bytes | None = fh.read(1_048_577)
    except FileNotFoundError:
        raw = None
    except OSError as exc:
        raise MemindexError(f"{path}: cannot read ({exc.strerror or exc})") from None
    text = (raw or b"").decode("utf-8", "replace")
    try:
        new, _ = with_documents(text, None, claude_memory)
    except ValueError as exc:
        raise MemindexError(f"{path}: {exc}; fix it first, nothing was written") from None
    if raw is not None and new.encode("utf-8") == raw:
        return False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    replace_atomic(path, new.encode("utf-8"), 0o600)
    return True
