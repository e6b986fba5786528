"""Where things are: the memory root, how paths are shown, what stays inside the root.

Standard library only and no heavy imports: the prompt hook starts here.
"""

from __future__ import annotations

import os
import stat

from ..defaults import FOLDERS, MEMORY_DIR
from ..errors import RootNotFound, UntrustedRoot


def find_root(start: str | os.PathLike[str] | None = None, explicit: bool = False) -> str:
    """The memory root for a path, checked for trust (`check_trust`).

    `start` may be the memory folder itself or a project containing `.claude/memory`. When
    it is not `explicit` (no --root), walk up from it to the first `.claude/memory`.
    """
    base = os.path.abspath(os.fspath(start) if start is not None else os.getcwd())
    folder = base
    while True:
        nested = os.path.join(folder, *MEMORY_DIR)
        if os.path.isdir(nested):
            check_trust(folder)
            return nested
        if explicit:
            if os.path.isdir(folder) and _looks_like_memory_root(folder):
                _check_dir(folder, os.stat(folder))
                return folder
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    where = f"in {base}" if explicit else f"in {base} or any parent"
    raise RootNotFound(
        f"no {'/'.join(MEMORY_DIR)} folder {where}: run `memindex init` in the project's top folder, "
        f"or pass --root PATH (a project or its memory folder)"
    )


def check_trust(project: str) -> None:
    """Raise UntrustedRoot unless the project folder, `.claude` and `.claude/memory` are
    each owned by this user or root and writable by no one else (group write only for the
    user's own group), and any of them that is a symbolic link stays inside the project.

    A cloned repository can carry `.claude/memory -> ~/somewhere`; a project under /tmp can
    belong to another user: in both, the files memindex would read and write are not the
    user's to trust. An explicit `--root` at the memory folder itself is the user's choice."""
    project_real = os.path.realpath(project)
    _check_dir(project, os.stat(project))
    path = project
    for name in MEMORY_DIR:
        path = os.path.join(path, name)
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(path)
            if not inside(target, project_real):
                raise UntrustedRoot(path, f"is a symbolic link to {target}, outside the project (use --root to mean it)")
            _check_dir(path, st, link=True)
            st = os.stat(target)
        _check_dir(path, st)


def _check_dir(path: str, st: os.stat_result, link: bool = False) -> None:
    what = "link" if link else "folder"
    if not hasattr(os, "geteuid"):
        return  # Windows: no uids nor mode bits to check (its ACLs are not read here)
    if st.st_uid not in (os.geteuid(), 0):
        raise UntrustedRoot(path, f"({what}) belongs to uid {st.st_uid}, not to this user")
    why = None if link else why_foreign(st)
    if why:
        raise UntrustedRoot(path, why)


def why_foreign(st: os.stat_result) -> str | None:
    """The root's owner and mode rule, for any folder or file memindex trusts: owned by this
    user or root, writable by no one else (group write only for the user's own group).
    Why `st` breaks it, or None (always None where the OS has no uids: Windows)."""
    if not hasattr(os, "geteuid"):
        return None
    if st.st_uid not in (os.geteuid(), 0):
        return f"belongs to uid {st.st_uid}, not to this user"
    if st.st_mode & stat.S_IWOTH:
        return "is writable by every user"
    if st.st_mode & stat.S_IWGRP and st.st_gid != os.getegid():
        return f"is writable by group {st.st_gid}"
    return None


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


def project_of(root: str | os.PathLike[str]) -> str:
    """The project a memory root belongs to: the folder holding `.claude/memory`, or the
    root's parent for a root elsewhere (`--root`). Relative paths are read from it when no
    working directory is the caller's (the MCP server); importers look for its files."""
    path = os.path.abspath(root)
    parts = path.split(os.sep)
    return os.path.dirname(os.path.dirname(path)) if tuple(parts[-2:]) == MEMORY_DIR else os.path.dirname(path)


def check_doc_path(rel: object) -> str | None:
    """Why a registered document path (`documents.paths`) cannot be used, or None: it must
    be relative to the project and stay inside it (no `..`, no control characters)."""
    if not isinstance(rel, str) or not rel.strip():
        return "expected a path relative to the project"
    if rel.startswith(("/", "~")) or "\\" in rel or ":" in rel.split("/")[0]:
        return "is not relative to the project"
    parts = [p for p in rel.strip("/").split("/") if p not in ("", ".")]
    if ".." in parts or (not parts and rel.strip() not in (".", "./")):
        return "leaves the project"
    if not all(p.isprintable() for p in parts):
        return "has control characters"
    return None


def check_doc_paths(value: object) -> tuple[dict[str, str], str | None]:
    """`documents.paths` as config.py takes it: {path relative to the project: kind}, each
    entry that cannot be used left out and named (the warning)."""
    from ..defaults import DOC_KINDS
    from ..errors import short

    if not isinstance(value, dict):
        return {}, f"expected an object of path: kind, got {short(value)}"
    kept: dict[str, str] = {}
    bad: list[str] = []
    for rel, kind in value.items():
        why = check_doc_path(rel) or (None if kind in DOC_KINDS else f"{short(kind)} is not one of {', '.join(DOC_KINDS)}")
        if why:
            bad.append(f"{short(rel)}: {why}")
        else:
            kept[rel] = kind
    return kept, ("; ".join(bad[:3]) + (f" (and {len(bad) - 3} more)" if len(bad) > 3 else "")) if bad else None


def inside(path: str, root_real: str) -> bool:
    """Is a resolved path the root or below it?"""
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


class FileStat(tuple):
    """What sync compares: (mtime_ns, size, ctime_ns). ctime catches what mtime and size
    miss: a chmod that makes an unreadable file readable, a same-size replacement with a
    forged mtime. (A namedtuple's equal, without loading `collections` in the hook.)"""

    __slots__ = ()

    def __new__(cls, mtime_ns: int, size: int, ctime_ns: int) -> "FileStat":
        return tuple.__new__(cls, (mtime_ns, size, ctime_ns))

    def __getnewargs__(self) -> tuple[int, int, int]:
        return tuple(self)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return "FileStat(mtime_ns=%r, size=%r, ctime_ns=%r)" % tuple(self)

    mtime_ns = property(lambda self: self[0])
    size = property(lambda self: self[1])
    ctime_ns = property(lambda self: self[2])

    @classmethod
    def of(cls, st: os.stat_result) -> "FileStat":
        return cls(st.st_mtime_ns, st.st_size, st.st_ctime_ns)
