"""Which memory file a caller means, and how its path is shown.

A memory is named the way a person or an assistant has it at hand: an absolute path, a path
relative to the working directory, `.claude/memory/decisions/x.json` or `decisions/x`. All
of them become the one relative form the index uses, `decisions/x.json`, and only if it
lies in a category folder inside the root (links out of it are refused).
"""

from __future__ import annotations

import os

from ..defaults import FOLDERS, MEMORY_DIR
from ..errors import MemoryNotFound, UsageError
from ..store.paths import display_prefix, inside
from ..text.render import safe_relpath


def display(root: str | os.PathLike[str], rel: str) -> str:
    """A relative memory path as shown to the user: `.claude/memory/decisions/x.json`."""
    return display_prefix(root) + rel


def _rel_in_root(path: str, root_real: str) -> str | None:
    name = os.path.basename(path)
    if not name or name in (".", ".."):
        return None
    if not name.endswith(".json"):
        name += ".json"
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    if not inside(parent, root_real) or parent == root_real:
        return None
    folder = os.path.relpath(parent, root_real).replace(os.sep, "/")
    if folder not in FOLDERS or name.startswith("."):
        return None
    rel = f"{folder}/{name}"
    return rel if safe_relpath("", rel) is not None else None


def resolve_path(root: str | os.PathLike[str], given: str, cwd: str | None = None) -> str:
    """A memory path given as absolute, relative to the working directory, like
    `.claude/memory/decisions/x.json`, or like `decisions/x.json`, as `decisions/x.json`.
    It must name an existing file inside one of the root's category folders."""
    root = os.fspath(root)
    root_real = os.path.realpath(root)
    if not isinstance(given, str) or not given.strip() or "\x00" in given:
        raise UsageError(f"not a memory path: {given!r}")
    norm = given.strip().replace("\\", "/")
    candidates: list[str] = []
    if os.path.isabs(norm):
        candidates.append(norm)
    else:
        candidates.append(os.path.join(cwd or os.getcwd(), norm))
        bare = norm.removeprefix("./")
        for prefix in (display_prefix(root), "/".join(MEMORY_DIR) + "/"):
            if bare.startswith(prefix):
                candidates.append(os.path.join(root, bare[len(prefix):]))
        candidates.append(os.path.join(root, bare))
    rels = [r for r in (_rel_in_root(c, root_real) for c in candidates) if r is not None]
    for rel in rels:
        if os.path.lexists(os.path.join(root, rel)):
            return rel
    if rels:
        raise MemoryNotFound(f"no memory at {display(root, rels[0])}")
    raise MemoryNotFound(
        f"{given!r} is not a memory file of {root} "
        f"(expected <folder>/<id>.json in one of: {', '.join(f + '/' for f in FOLDERS)})"
    )
