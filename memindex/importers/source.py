"""Provenance: the `source` object an imported memory carries, the stable id derived from
it, and reading a source file safely.

`source` = {"kind": "adr"|"claude-memory"|"claude-md"|"markdown"|"transcript"|...,
"path": where it came from (relative to the project when inside it, else absolute),
"section": the heading path inside the file (when one file gives several memories),
"session_id": the Claude Code session (transcripts), "sha256": a digest of the source
text and the importer's version, so a re-import skips what did not change}.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..store import rootfs
from ..defaults import ID_MAX, IMPORT_MAX_SOURCE_BYTES
from ..errors import UnsafeFile, WriteError
from ..write import slugify

IMPORTER_VERSION = "1"  # bump when a mapping changes: every imported memory is rewritten once


def source_path(path: Path, project: Path) -> str:
    """The path as `source.path`: relative to the project when inside it, else absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(os.path.abspath(project)).as_posix()
    except ValueError:
        return absolute.as_posix()


def make_source(kind: str, path: Path, project: Path, text: str, section: str | None = None) -> dict[str, str]:
    """The `source` object of a memory made from `text` (a file, or one section of it)."""
    src = {"kind": kind, "path": source_path(path, project)}
    if section:
        src["section"] = section
    src["sha256"] = hashlib.sha256(f"{IMPORTER_VERSION}\0{kind}\0{section or ''}\0{text}".encode()).hexdigest()
    return src


def rehash(src: dict[str, str], extra: str) -> dict[str, str]:
    """`src` with a digest that also covers `extra` (what another file says about it)."""
    return {**src, "sha256": hashlib.sha256(f"{src['sha256']}\0{extra}".encode()).hexdigest()}


def same_origin(a: object, b: object) -> bool:
    """Whether two `source` objects name the same origin (kind, path, section)."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    return all(a.get(k) == b.get(k) for k in ("kind", "path", "section"))


def stable_id(prefix: str, *parts: str) -> str:
    """`prefix-<slug of parts>`, a lowercase slug of at most ID_MAX characters: the same
    source always gives the same id."""
    slug = slugify("-".join(p for p in (prefix, *parts) if p), ID_MAX)
    return slug or prefix


def alternate_id(mem_id: str, src: dict[str, str]) -> str:
    """The id to use when `mem_id` is taken by a memory of another origin: the same id with
    a short digest of the origin (still stable)."""
    digest = hashlib.sha256(f"{src.get('kind')}\0{src.get('path')}\0{src.get('section', '')}".encode()).hexdigest()[:8]
    return f"{mem_id[: ID_MAX - 9].rstrip('-')}-{digest}"


def read_text(path: Path) -> str:
    """A source file's text (UTF-8, undecodable bytes replaced). Never through a link, a
    FIFO or another user's file, at most IMPORT_MAX_SOURCE_BYTES: WriteError otherwise."""
    try:
        data = rootfs.read(str(path), IMPORT_MAX_SOURCE_BYTES)
    except UnsafeFile as exc:
        raise WriteError(f"not read: {exc}") from None
    except OSError as exc:
        raise WriteError(f"cannot read: {exc.strerror or exc}") from None
    if data is None:
        raise WriteError("no such file")
    return data.decode("utf-8", "replace").lstrip("\ufeff")
