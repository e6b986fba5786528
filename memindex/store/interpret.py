"""What a registered document's text makes under its kind: the one dispatch from a file to
the reader of its kind (`adr`, else `pages`), shared by sync and the importers."""

from __future__ import annotations

from ..defaults import CATEGORIES, DOC_MAX_BYTES
from .documents import Document, NotIndexed, read_text
from .paths import FileStat


def load(project: str, rel: str, kind: str, max_bytes: int = DOC_MAX_BYTES) -> tuple[Document, FileStat]:
    """Read and interpret one registered document (NotIndexed with the reason)."""
    text, st = read_text(project, rel, max_bytes)
    return interpret(rel, kind, text), st


def interpret(rel: str, kind: str, text: str) -> Document:
    """The document a file's text makes under its registered kind."""
    from . import markdown

    parsed = markdown.parse(text)
    if kind == "adr":
        from .adr import document

        doc = document(rel, parsed)
    else:
        from .pages import document

        doc = document(rel, kind, parsed)
    if parsed.truncated:
        doc.problems.append("longer than the indexed size: its end is not indexed")
    if doc.category not in CATEGORIES:
        raise NotIndexed(f"unknown category {doc.category!r}")
    return doc
