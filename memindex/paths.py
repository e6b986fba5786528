"""Where things are: the memory root, how paths are shown, what stays inside the root.

Standard library only and no heavy imports: the prompt hook starts here.
"""

from __future__ import annotations

import os
from collections import namedtuple

from .defaults import FOLDERS, MEMORY_DIR


class RootNotFound(Exception):
    """No `.claude/memory` folder where one was expected."""


def find_root(start: str | os.PathLike[str] | None = None, explicit: bool = False) -> str:
    """The memory root for a path.

    `start` may be the memory folder itself or a project containing `.claude/memory`. When
    it is not `explicit` (no --root), walk up from it to the first `.claude/memory`.
    """
    base = os.path.abspath(os.fspath(start) if start is not None else os.getcwd())
    folder = base
    while True:
        nested = os.path.join(folder, *MEMORY_DIR)
        if os.path.isdir(nested):
            return nested
        if explicit:
            if os.path.isdir(folder) and _looks_like_memory_root(folder):
                return folder
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    where = f"in {base}" if explicit else f"in {base} or any parent"
    raise RootNotFound(f"no {'/'.join(MEMORY_DIR)} folder {where}")


def _looks_like_memory_root(folder: str) -> bool:
    name, parent = os.path.basename(folder), os.path.basename(os.path.dirname(folder))
    if (parent, name) == MEMORY_DIR:
        return True
    return any(os.path.isdir(os.path.join(folder, f)) for f in FOLDERS)


def display_prefix(root: str | os.PathLike[str]) -> str:
    """How paths are shown: relative to the project root, as index.md writes them."""
    root = os.fspath(root)
    name, parent = os.path.basename(root), os.path.basename(os.path.dirname(root))
    if (parent, name) == MEMORY_DIR:
        return "/".join(MEMORY_DIR) + "/"
    return name + "/"


def inside(path: str, root_real: str) -> bool:
    """Is a resolved path the root or below it?"""
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


class FileStat(namedtuple("FileStat", "mtime_ns size ctime_ns")):
    """What sync compares. ctime catches what mtime and size miss: a chmod that makes an
    unreadable file readable, a same-size replacement with a forged mtime."""

    __slots__ = ()

    @classmethod
    def of(cls, st: os.stat_result) -> "FileStat":
        return cls(st.st_mtime_ns, st.st_size, st.st_ctime_ns)
