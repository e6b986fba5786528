"""What a registered document's text makes under its kind: the one dispatch from a file to
the reader of its kind (`adr`, else `pages`), shared by sync and the importers."""

from __future__ import annotations

import os

from ..defaults import CATEGORIES, DOC_MAX_BYTES, DOC_SUFFIXES, FOLDER_MAX_ENTRIES
from .documents import Document, NotIndexed, read_text
from .paths import FileStat, inside



def load(project: str, rel: str, kind: str, max_bytes: int = DOC_MAX_BYTES) -> tuple[Document, FileStat]:
    """Read and interpret one registered document (NotIndexed with the reason). An absolute
    path is an auto memory note: read only from this project's auto memory folder."""
    base = None
    if os.path.isabs(rel):
        from .automemory import default_folder

        base = str(default_folder(project))
    text, st = read_text(project, rel, max_bytes, base)
    folder = adr_folder(project, rel) if kind == "adr" else None
    return interpret(rel, kind, text, folder), st


def adr_folder(project: str, rel: str):  # type: ignore[no-untyped-def]
    """What an ADR's folder holds (`adr.Folder`): the Markdown files and folders beside it,
    and a check that a project path is a file inside the project."""
    from .adr import Folder

    real = os.path.realpath(project)
    parent = os.path.dirname(os.path.join(project, rel))
    files: list[str] = []
    subfolders: list[str] = []
    try:
        with os.scandir(parent) as it:
            for n, entry in enumerate(it):
                if n >= FOLDER_MAX_ENTRIES:
                    break
                name = entry.name
                if name.startswith(".") or not name.isprintable():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(name)
                elif name.lower().endswith(DOC_SUFFIXES):
                    files.append(name)
    except OSError:
        pass

    def exists(path: str) -> bool:
        full = os.path.realpath(os.path.join(project, path))
        return inside(full, real) and os.path.isfile(full)

    return Folder(tuple(sorted(files)), tuple(sorted(subfolders)), exists)


def interpret(rel: str, kind: str, text: str, folder=None) -> Document:  # type: ignore[no-untyped-def]
    """The document a file's text makes under its registered kind (`folder`: an ADR's
    `adr.Folder`, for its references by number and link)."""
    from . import markdown

    parsed = markdown.parse(text)
    if kind == "adr":
        from .adr import document

        doc = document(rel, parsed, folder)
    else:
        from .pages import document

        doc = document(rel, kind, parsed)
    if parsed.truncated:
        doc.problems.append("longer than the indexed size: its end is not indexed")
    if doc.category not in CATEGORIES:
        raise NotIndexed(f"unknown category {doc.category!r}")
    return doc
