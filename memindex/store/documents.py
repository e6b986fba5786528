"""The project's own documents, indexed in place: ADR folders, runbooks and docs folders,
CLAUDE.md / AGENTS.md, Claude Code's auto memory notes.

A document stays where the project keeps it and is never copied into a memory file (a copy
would drift from it): sync reads it, by the same mtime diff as memory files, into one index
row per section (`Unit`). What a folder holds is registered in the settings
(`documents.paths`: folder or file -> kind); `memindex init` and `memindex import` register.

Repository documents are untrusted text like memory files: every path stays inside the
project (links leaving it are not followed, `..` is refused), walks and files are bounded,
and a repository's config cannot name anything outside the project.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from dataclasses import dataclass, field

from ..defaults import (
    DOC_KINDS, DOC_MAX_BYTES, DOC_SUFFIXES, DOC_MAX_DEPTH, DOC_MAX_FILES, DOC_SKIP_DIRS, DOC_UNIT_WORDS, ID_MAX,
)
from ..errors import MemindexError
from .paths import FileStat, check_doc_path, inside, why_foreign

DOC_MARK = "@"  # an index row's path starts with it when the row is a document's section



class NotIndexed(MemindexError):
    """A registered file that is not indexed, and why. `deliberate`: it was looked at and is
    no document to index (a template, an index page, not an ADR, no text); otherwise it
    could not be read (too large, a link out, not this user's, binary)."""

    def __init__(self, reason: str, deliberate: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.deliberate = deliberate


@dataclass
class Unit:
    """One retrieval unit of a document: a section (with the text of its subsections), or a
    passage of a long one. `anchor` names it in the shown path (`x.md#decision`)."""

    anchor: str  # "" for the document's head (its title and the text before the first section)
    heading: str  # the section's heading path below the document's title ("Decision > Option A")
    text: str
    category: str = ""  # this section's own category where it differs (a CLAUDE.md rule); "" for the document's
    has_code: bool = False  # it holds code (a runbook's steps can be commands)


@dataclass
class Document:
    """What the index keeps of one document file."""

    path: str  # relative to the project ("docs/adr/0007-x.md"); absolute outside it (auto memory)
    kind: str  # one of DOC_KINDS
    id: str  # a stable slug from the path
    category: str  # one of CATEGORIES
    title: str
    tags: list[str] = field(default_factory=list)
    record_status: str = "active"
    status: str = ""  # the document's own status as written ("Accepted", "In Review", ...)
    created_at: str = ""
    updated_at: str = ""
    successors: list[str] = field(default_factory=list)  # documents (project paths) that replace it
    supersedes: list[str] = field(default_factory=list)  # documents it replaces (an ADR that took effect says so)
    state: str = ""  # an ADR's status as one word: accepted, proposed, rejected, deprecated, superseded, reverted, unknown
    reason: str = ""  # why it is retired or archived, as a report says it
    units: list[Unit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def row_path(self, unit: Unit) -> str:
        """The index row's path of one unit: `@docs/adr/0007-x.md#decision`."""
        return f"{DOC_MARK}{self.path}#{unit.anchor}"


def is_document_path(path: str) -> bool:
    return path.startswith(DOC_MARK)


def document_of(path: str) -> tuple[str, str]:
    """(file, anchor) of a document row's path; ("", "") for a memory file's."""
    if not path.startswith(DOC_MARK):
        return "", ""
    file, _, anchor = path[1:].rpartition("#")
    return file, anchor


INDEX_NAMES = ("index", "_index", "readme")  # a folder's own page: named after the folder


def stem_of(rel: str) -> str:
    """A document's name without its folder and suffixes (`x.html.md` -> `x`); an index
    page's (`index.md`, `_index.md`, `README.md`) is its folder's name."""
    parts = rel.rstrip("/").split("/")
    name = parts[-1]
    low = name.lower()
    for suffix in DOC_SUFFIXES:
        if low.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.lower().endswith((".html", ".htm")):
        name = name.rsplit(".", 1)[0]
    if name.lower() in INDEX_NAMES and len(parts) > 1:
        return parts[-2]
    return name


def doc_id(rel: str, kind: str = "") -> str:
    """A stable slug from a document's name (`docs/adr/0007-use-x.md` -> `adr-0007-use-x`,
    `docs/adr/adr-007-x.md` -> `adr-007-x`, `runbooks/KubeQuotaExceeded.md` ->
    `kubequotaexceeded`). Not unique on its own: the index row's path is the document's
    identity; the id names it in `--json` output."""
    from .ids import slugify

    slug = slugify(stem_of(rel), ID_MAX) or "document"
    if kind == "adr" and not any(t in ("adr", "rfc", "adrs", "rfcs") for t in slug.split("-")):
        slug = slugify(f"adr-{slug}", ID_MAX)
    return slug


def normalize(rel: str) -> str:
    return "/".join(p for p in rel.strip("/").split("/") if p not in ("", "."))


def walk(project: str, paths: dict[str, str], problems: dict[str, str] | None = None,
         dirs: list[str] | None = None, auto_memory: str | None = None) -> dict[str, tuple[FileStat, str]]:
    """Every Markdown file the registered `paths` (file or folder -> kind) name, keyed by its
    path relative to the project, with its stat and kind. Folders are read recursively (at
    most DOC_MAX_DEPTH deep, skipping hidden, vendored and build folders), at most
    DOC_MAX_FILES files in all; links are followed only while they stay inside the project.
    `problems` gets each registered path that cannot be read, and why; `dirs` every folder
    listed (the hooks' cheap freshness check stats them). `auto_memory`: Claude Code's auto
    memory folder of this project (outside it; only when the user's own config says so),
    whose Markdown files join as `notes` under their absolute paths (`walk_auto_memory`)."""
    problems = {} if problems is None else problems
    real = os.path.realpath(project)
    found: dict[str, tuple[FileStat, str]] = {}
    for rel, kind in sorted(paths.items()):
        why = check_doc_path(rel)
        if why is None and kind not in DOC_KINDS:
            why = f"unknown kind {kind!r} (one of {', '.join(DOC_KINDS)})"
        if why:
            problems[rel] = why
            continue
        rel = normalize(rel)  # "" for the project itself (".")
        full = os.path.join(project, rel) if rel else project
        try:
            target = os.path.realpath(full)
            if not inside(target, real):
                problems[rel] = "is a link that leaves the project (not followed)"
                continue
            st = os.stat(target)
        except OSError as exc:
            problems[rel] = f"cannot be read: {exc.strerror or exc}"
            continue
        if stat_mod.S_ISDIR(st.st_mode):
            _walk_dir(project, real, rel, kind, found, problems, dirs)
        elif stat_mod.S_ISREG(st.st_mode):
            found.setdefault(rel, (FileStat.of(st), kind))
        else:
            problems[rel] = "is not a file or a folder"
    if auto_memory:
        found.update(walk_auto_memory(auto_memory, problems, dirs))
    if len(found) > DOC_MAX_FILES:
        problems["documents"] = f"more than {DOC_MAX_FILES} files registered: only the first {DOC_MAX_FILES} are indexed"
        found = dict(sorted(found.items())[:DOC_MAX_FILES])
    return found


def walk_auto_memory(folder: str, problems: dict[str, str], dirs: list[str] | None = None) -> dict[str, tuple[FileStat, str]]:
    """The Markdown files directly in Claude Code's auto memory folder (absolute path ->
    stat, `notes`): that folder only (Claude Code keeps it flat), never a link, a hidden
    file or anything but a regular file this user owns, at most DOC_MAX_FILES."""
    found: dict[str, tuple[FileStat, str]] = {}
    if dirs is not None:
        dirs.append(folder)  # watched even before Claude Code makes it: its appearing is a change
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return found  # nothing written yet: nothing to index
    except OSError as exc:
        problems[folder] = f"cannot be read: {exc.strerror or exc}"
        return found
    if not stat_mod.S_ISDIR(st.st_mode):
        problems[folder] = "is not a folder (a link is not followed)"
        return found
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        problems[folder] = f"cannot list folder: {exc.strerror or exc}"
        return found
    for entry in entries:
        name = entry.name
        if name.startswith(".") or not name.lower().endswith(DOC_SUFFIXES):
            continue
        if not name.isprintable():
            problems[os.path.join(folder, name)] = "has control characters in its name (not read)"
            continue
        try:
            est = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat_mod.S_ISREG(est.st_mode):
            found[os.path.join(folder, name)] = (FileStat.of(est), "notes")
        elif stat_mod.S_ISLNK(est.st_mode):
            problems[os.path.join(folder, name)] = "is a symbolic link (not followed outside the project)"
        if len(found) >= DOC_MAX_FILES:
            break
    return found


def _walk_dir(project: str, real: str, rel: str, kind: str, found: dict[str, tuple[FileStat, str]],
              problems: dict[str, str], dirs: list[str] | None) -> None:
    todo = [(rel, 0)]
    while todo:
        folder, depth = todo.pop()
        if dirs is not None:
            dirs.append(folder)
        try:
            with os.scandir(os.path.join(project, folder)) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            problems[folder] = f"cannot list folder: {exc.strerror or exc}"
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            child = f"{folder}/{name}" if folder else name
            if not name.isprintable():  # a name that could forge or hide a line of output: named, not read
                if name.lower().endswith(DOC_SUFFIXES) or entry.is_dir(follow_symlinks=False):
                    problems[child] = "has control characters in its name (not read)"
                continue
            try:
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if not inside(target, real):
                        problems[child] = "is a link that leaves the project (not followed)"
                        continue
                    st = os.stat(target)
                else:
                    st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat_mod.S_ISDIR(st.st_mode):
                if depth + 1 < DOC_MAX_DEPTH and name.lower() not in DOC_SKIP_DIRS:
                    todo.append((child, depth + 1))
            elif stat_mod.S_ISREG(st.st_mode) and name.lower().endswith(DOC_SUFFIXES):
                found.setdefault(child, (FileStat.of(st), kind))
                if len(found) > DOC_MAX_FILES:
                    return


def read_text(project: str, rel: str, max_bytes: int = DOC_MAX_BYTES, base: str | None = None) -> tuple[str, FileStat]:
    """A document's text (UTF-8, undecodable bytes replaced) and its stat, read through one
    descriptor that never follows a link out of the project; NotIndexed with the reason.
    An absolute `rel` (an auto memory note) must lie directly in `base`, and is no link."""
    path = os.path.join(project, rel)
    real = os.path.realpath(path)
    if os.path.isabs(rel):
        if not base or os.path.dirname(os.path.abspath(rel)) != os.path.abspath(base):
            raise NotIndexed("is outside the project and not in its auto memory folder (not read)")
        real = os.path.abspath(rel)  # opened with O_NOFOLLOW: a link there is refused
    elif not inside(real, os.path.realpath(project)):
        raise NotIndexed("is a link that leaves the project (not followed)")
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotIndexed("is a symbolic link (not followed)") from None
        raise NotIndexed(f"cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat_mod.S_ISREG(st.st_mode):
            raise NotIndexed("is not a regular file")
        foreign = why_foreign(st)
        if foreign:
            raise NotIndexed(f"refused: the file {foreign}")
        if st.st_size > max_bytes:
            raise NotIndexed(f"is {st.st_size} bytes, over the {max_bytes}-byte limit")
        data = fh.read(max_bytes + 1)
    if b"\x00" in data[:8192]:
        raise NotIndexed("is a binary file")
    return data.decode("utf-8", "replace").lstrip("\ufeff"), FileStat.of(st)


def read_head(path: str, max_bytes: int) -> str:
    """The first `max_bytes` of a file, "" for anything but a regular file (never through a
    link, never blocking on a FIFO): what `memindex init` looks at to tell an ADR folder."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        if not stat_mod.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return ""
        return fh.read(max_bytes).decode("utf-8", "replace")


def units(parsed, title: str) -> list[Unit]:  # type: ignore[no-untyped-def]
    """A document's retrieval units: its head (the title's own text and whatever comes
    before the first section), then one per top section (the highest heading level under
    the title), each with the headings and text of its subsections; a unit longer than
    DOC_UNIT_WORDS is cut into passages of about that many words, at block boundaries."""
    title_sec = next((s for s in parsed.sections if s.level == 1 and s.heading == title), None)
    rest = [s for s in parsed.sections if s is not title_sec and s.level > 0]
    below = [s.level for s in rest if s.level >= 2] or [s.level for s in rest]
    top = min(below) if below else 7
    groups: list[tuple[str, str, list[str], list[bool]]] = [("", "", [], [False])]
    for s in parsed.sections:
        if s is title_sec or s.level == 0:
            target, blocks = groups[0], list(s.blocks)
        elif s.level < top:  # a second level-1 heading over level-2 sections: its text goes to the head
            target, blocks = groups[0], [s.heading, *s.blocks]
        elif s.level == top:
            heading = " > ".join(h for h in s.path if h != title)
            groups.append((s.anchor, heading, [], [False]))
            target, blocks = groups[-1], list(s.blocks)
        else:
            target, blocks = groups[-1], [s.heading, *s.blocks]
        target[2].extend(blocks)
        target[3][0] = target[3][0] or bool(s.code)
    out: list[Unit] = []
    for anchor, heading, blocks, code in groups:
        if not blocks and not heading:
            continue  # (an ADR keeps a head row of its own: a successor link names it, store/adr.py)
        for i, passage in enumerate(_passages(blocks)):
            out.append(Unit(anchor if i == 0 else f"{anchor}~{i + 1}", heading, passage, has_code=code[0]))
    return out


def _passages(blocks: list[str]) -> list[str]:
    """Blocks joined into passages of about DOC_UNIT_WORDS words (a block is never split)."""
    out: list[str] = []
    buf: list[str] = []
    words = 0
    for block in blocks:
        n = len(block.split())
        if buf and words + n > DOC_UNIT_WORDS:
            out.append("\n".join(buf))
            buf, words = [], 0
        buf.append(block)
        words += n
    if buf or not out:
        out.append("\n".join(buf))
    return out
