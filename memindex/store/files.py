"""The memory files: walking the category folders, reading and converting one file.

Reading is tolerant: a file that parses and has a category and a title is indexed; every
other problem is reported, never fatal. Full schema validation lives in `schema`.
"""

from __future__ import annotations

import json
import os
import re
import stat as stat_mod
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..defaults import CATEGORIES, CATEGORY_FOLDER, FOLDERS, JSON_MAX_DEPTH, JSON_MAX_DIGITS
from ..defaults import QUESTION_MAX_CHARS, QUESTIONS_MAX, RECORD_STATUSES, TAG_MAX_CHARS, TAGS_INDEX_MAX
from ..errors import MemindexError, MemoryFileError, short
from ..text.render import safe_relpath
from .paths import FileStat, inside, why_foreign
from .stamps import indexed_stamp


# How a refusal under the root's owner and mode rule starts (a folder in `walk`'s problems,
# a file in the index's invalid table): another user could make such memories say anything.
REFUSED = "refused: "

_HARMLESS_SUFFIXES = ("~", ".tmp", ".swp", ".bak", ".orig")  # editors' and tools' leftovers


def is_ignored_name(name: str) -> bool:
    """A name in a category folder that memindex skips and the user may not expect it to:
    anything but hidden files, `<id>.json` and editors' leftovers (`x.json~`, `.swp`)."""
    return not (name.startswith(".") or name.endswith(".json") or name.endswith(_HARMLESS_SUFFIXES))


def folder_refusal(root: str | os.PathLike[str], folder: str) -> str | None:
    """Why a category folder is refused (another user owns it or may write in it), or None."""
    try:
        st = os.stat(os.path.join(root, folder))
    except OSError:
        return None
    why = why_foreign(st)
    return f"{REFUSED}the folder {why}: its memories are not indexed" if why else None


def refusals(root: str | os.PathLike[str], invalid: dict[str, str]) -> dict[str, str]:
    """Everything refused under the owner and mode rule: category folders (looked at now)
    and memory files (as the last sync found them, from the index's invalid table)."""
    out = {f"{folder}/": why for folder in FOLDERS if (why := folder_refusal(root, folder))}
    out.update({rel: why for rel, why in invalid.items() if why.startswith(REFUSED)})
    return out


def walk(
    root: str | os.PathLike[str], problems: dict[str, str] | None = None, modes: list[int] | None = None,
    ignored: list[str] | None = None, listed: dict[str, list[os.DirEntry]] | None = None,
) -> dict[str, FileStat]:
    """Every `<folder>/<name>.json` under the category folders, keyed by relative path.

    Symlinks are followed only when they stay inside the root; hidden files, temp files
    and anything else are skipped (what a user may have meant as a memory, a `.md` or a
    folder, is added to `ignored`). Files that vanish during the walk are simply absent.
    `modes`: a one-item list, AND-ed with each folder's and file's mode (rootfs.derived_mode).
    `listed`: the entries `index.stat_fingerprint` just listed (a sync): no second stat per file."""
    root_real = os.path.realpath(root)
    found: dict[str, FileStat] = {}
    for folder in FOLDERS:
        dir_path = os.path.join(root, folder)
        try:
            if not inside(os.path.realpath(dir_path), root_real):
                if problems is not None:
                    problems[folder + "/"] = "category folder is a link that leaves the memory root"
                continue
            refused = folder_refusal(root, folder)
            if refused:
                if problems is not None:
                    problems[folder + "/"] = refused
                continue
            entries = listed[folder] if listed is not None and folder in listed else list(os.scandir(dir_path))
            if modes is not None:  # a folder others cannot read keeps its files' secrets too
                modes[0] &= os.stat(dir_path).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            if problems is not None:
                problems[folder + "/"] = f"cannot list folder: {exc.strerror}"
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}"
            if ignored is not None and is_ignored_name(entry.name):
                ignored.append(rel)
                continue
            try:
                is_link = entry.is_symlink()
            except OSError:
                continue
            st = stat_file(root_real, rel, entry.path, problems, is_link, modes, None if listed is None or is_link else entry)
            if st is not None:
                found[rel] = st
    return found


def stat_file(
    root_real: str, rel: str, path: str, problems: dict[str, str] | None = None, is_link: bool | None = None,
    modes: list[int] | None = None, entry: os.DirEntry | None = None,
) -> FileStat | None:
    """The stat of one candidate memory file (`entry`'s cached one when given), or None if it is
    not one (hidden, temp, not .json, not a regular file, vanished) or is a link leaving the root."""
    name = os.path.basename(rel)
    if not name.endswith(".json") or name.startswith("."):
        return None
    if safe_relpath("", rel) is None:
        if problems is not None:
            problems[rel] = "file name has spaces, control or direction characters: rename it"
        return None
    try:
        if os.path.islink(path) if is_link is None else is_link:
            target = os.path.realpath(path)
            if not inside(target, root_real):
                if problems is not None:
                    problems[rel] = "symlink leaves the memory root (not followed)"
                return None
            path = target
        st = os.stat(path, follow_symlinks=False) if entry is None else entry.stat(follow_symlinks=False)
    except OSError:
        return None  # vanished, dangling, or a loop
    if not stat_mod.S_ISREG(st.st_mode):
        return None
    if modes is not None:
        modes[0] &= st.st_mode
    return FileStat.of(st)


@dataclass
class Memory:
    """What the index keeps of one memory file."""

    path: str  # relative to the memory root: decisions/x.json
    id: str
    category: str
    title: str
    tags: list[str]
    body: str
    record_status: str = "active"
    created_at: str = ""
    updated_at: str = ""
    related_files: list[str] = field(default_factory=list)
    confidence: float | None = None
    problems: list[str] = field(default_factory=list)
    successors: list[str] = field(default_factory=list)  # memories named as replacements
    questions: list[str] = field(default_factory=list)  # phrasings it answers (own FTS5 column)
    heading: str = ""  # a document's section: its heading path, indexed with the title


def read_bytes(root: str | os.PathLike[str], rel: str, max_bytes: int) -> tuple[bytes, FileStat]:
    """Read one file, refusing huge ones; the stat is taken from the open descriptor."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    path = os.path.join(root, rel)
    try:
        fd = os.open(path, flags)  # the common case: a plain file, no link to resolve
    except OSError as exc:
        if not os.path.islink(path):
            raise MemoryFileError(f"cannot open: {exc.strerror}") from None
        real = os.path.realpath(path)
        if not inside(real, os.path.realpath(root)):
            raise MemoryFileError("symlink leaves the memory root (not followed)") from None
        try:
            fd = os.open(real, flags)
        except OSError as exc2:
            raise MemoryFileError(f"cannot open: {exc2.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat_mod.S_ISREG(st.st_mode):
            raise MemoryFileError("not a regular file")
        foreign = why_foreign(st)
        if foreign:
            raise MemoryFileError(f"{REFUSED}the file {foreign}: another user could make it say anything; not indexed")
        if st.st_size > max_bytes:
            raise MemoryFileError(f"file is {st.st_size} bytes, over the {max_bytes}-byte limit")
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise MemoryFileError(f"cannot read: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise MemoryFileError(f"file grew over the {max_bytes}-byte limit while reading")
    return data, FileStat.of(st)


def parse_json(data: bytes) -> Any:
    """Parse bytes as JSON with a precise error (line and column)."""
    if b"\x00" in data[:8192]:
        raise MemoryFileError("binary file (contains NUL bytes), not JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MemoryFileError(f"not UTF-8: invalid byte at offset {exc.start}") from None
    try:
        value = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise MemoryFileError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise MemoryFileError(f"invalid JSON: nested deeper than {JSON_MAX_DEPTH} levels") from None
    _check_shape(value)
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > JSON_MAX_DIGITS:
        raise MemoryFileError(f"invalid JSON: a number of more than {JSON_MAX_DIGITS} digits")
    return int(text)


def _no_constant(name: str) -> float:
    raise MemoryFileError(f"invalid JSON: {name} is not a JSON number")


def _check_shape(value: Any) -> None:
    """Bounds every consumer can rely on, checked once and iteratively (no recursion):
    nesting depth, and text that UTF-8 can hold (no lone surrogate from "\\ud800")."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, str):
            if not _encodable(item):
                raise MemoryFileError("text is not valid Unicode: an unpaired surrogate escape (\\ud800-\\udfff)")
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > JSON_MAX_DEPTH:
            raise MemoryFileError(f"invalid JSON: nested deeper than {JSON_MAX_DEPTH} levels")
        if isinstance(item, dict):
            todo.extend((k, depth + 1) for k in item)
            todo.extend((v, depth + 1) for v in item.values())
        else:
            todo.extend((v, depth + 1) for v in item)


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Free-text fields of `content`, per category, in reading order. Enum fields (status,
# outcome, severity, ...) are left out of the body: they are labels, not text.
BODY_FIELDS: dict[str, tuple[str, ...]] = {
    "session_summary": ("goal", "completed", "in_progress", "blockers", "next_actions", "key_changes"),
    "decision": ("context", "decision", "alternatives", "rationale", "consequences"),
    "runbook": ("trigger", "symptoms", "steps", "verification", "root_cause", "environment"),
    "constraint": ("rule", "impact", "workarounds"),
    "tech_debt": ("description", "reason_deferred", "impact", "suggested_fix", "acceptance_criteria"),
    "preference": ("topic", "value", "reason", "examples"),
}
ENUM_FIELDS = frozenset({"status", "outcome", "kind", "severity", "active", "expires", "priority", "strength"})


def _texts(value: Any, out: list[str], depth: int = 0) -> None:
    if depth > 20:
        return
    if isinstance(value, str):
        if value.strip():
            out.append(value.strip())
    elif isinstance(value, list):
        for item in value:
            _texts(item, out, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _texts(item, out, depth + 1)


def extract_body(category: str, content: Any) -> str:
    """All the text of `content`: the category's fields first, then any other text field,
    so that a file with unexpected keys is still searchable. One line per text."""
    if not isinstance(content, dict):
        out: list[str] = []
        _texts(content, out)
        return "\n".join(out)
    out = []
    known = BODY_FIELDS.get(category, ())
    for key in known:
        _texts(content.get(key), out)
    for key, value in content.items():
        if key not in known and key not in ENUM_FIELDS:
            _texts(value, out)
    return "\n".join(out)


_FOLDER_ALT = "|".join(FOLDERS)
_REF_RE = re.compile(rf"\b(?:(?:{_FOLDER_ALT})/)?[a-z0-9]+(?:-[a-z0-9]+)+(?:\.json)?\b")


def successor_refs(data: dict[str, Any]) -> list[str]:
    """Ids or `folder/id` paths that a retired or archived memory names as its replacement
    ("Replaced by ruff (preferences/ruff-lint-and-format)"). Unresolved here: the query
    engine keeps those that exist and are active."""
    refs: list[str] = []
    for key in ("retired_reason", "archived_reason", "superseded_by", "replaced_by"):
        value = data.get(key)
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                for ref in _REF_RE.findall(text[:2000]):
                    ref = ref.removesuffix(".json")
                    if ref not in refs:
                        refs.append(ref)
    return refs[:10]


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


def _tags(value: Any, problems: list[str]) -> list[str]:
    """Lowercased, without duplicates, at most TAGS_INDEX_MAX: a file with 80,000 tags
    costs what one with 64 does (search work grows with the tags of its best hits)."""
    seen: dict[str, None] = {}
    for tag in _str_list(value):
        seen.setdefault(tag.lower()[:TAG_MAX_CHARS], None)
    tags = list(seen)
    if len(tags) > TAGS_INDEX_MAX:
        problems.append(f"{len(tags)} tags: only the first {TAGS_INDEX_MAX} are indexed")
        tags = tags[:TAGS_INDEX_MAX]
    return tags


def _questions(value: Any, problems: list[str]) -> list[str]:
    """The `questions` indexed: a hand-written file over the bounds is indexed within them, and told."""
    kept = [q[:QUESTION_MAX_CHARS] for q in _str_list(value)[:QUESTIONS_MAX]]
    if kept != _str_list(value):
        problems.append(f"'questions': only the first {QUESTIONS_MAX}, of at most {QUESTION_MAX_CHARS} characters, are indexed")
    return kept


def to_memory(rel: str, data: Any) -> Memory:
    """Build the indexable record, or raise MemoryFileError if it cannot be indexed."""
    if not isinstance(data, dict):
        raise MemoryFileError(f"top level is {type(data).__name__}, expected an object")
    folder, _, name = rel.partition("/")
    category = data.get("category")
    if category is None or category == "":
        raise MemoryFileError("missing field 'category'")
    if not isinstance(category, str) or category not in CATEGORIES:  # a list or an object: named, never hashed
        shown = short(category)
        raise MemoryFileError(f"bad value for 'category': {shown} (expected one of {', '.join(CATEGORIES)})")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise MemoryFileError("missing field 'title'")
    problems: list[str] = []
    if FOLDERS.get(folder) != category:
        problems.append(f"category {category!r} belongs in {CATEGORY_FOLDER[category]}/, not {folder}/")
    stem = name[: -len(".json")]
    mem_id = data.get("id")
    if not isinstance(mem_id, str) or not mem_id:
        problems.append("missing field 'id'")
        mem_id = stem
    elif mem_id != stem:
        problems.append(f"id {mem_id!r} does not match the file name {name!r}")
    status = data.get("record_status", "active")
    if status not in RECORD_STATUSES:
        problems.append(f"bad value for 'record_status': {status!r}")
        status = "active"
    confidence = data.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        confidence = None
    from .secrets import without_secrets

    title, tags, body = without_secrets(title.strip(), _tags(data.get("tags"), problems),
                                         extract_body(category, data.get("content")), problems)
    mem = Memory(
        path=rel,
        id=mem_id,
        category=category,
        title=title,
        tags=tags,
        body=body,
        record_status=status,
        created_at=indexed_stamp(data, "created_at", problems),
        updated_at=indexed_stamp(data, "updated_at", problems),
        related_files=_str_list(data.get("related_files")),
        confidence=float(confidence) if confidence is not None else None,
        problems=problems,
        successors=successor_refs(data) if status != "active" else [],
        questions=_questions(data.get("questions"), problems),
    )
    return mem


def load_memory(root: str | os.PathLike[str], rel: str, max_bytes: int) -> tuple[Memory, FileStat]:
    """Read, parse and convert one file (raises MemoryFileError with the reason)."""
    data, st = read_bytes(root, rel, max_bytes)
    return to_memory(rel, parse_json(data)), st


def iter_memories(root: str | os.PathLike[str], max_bytes: int) -> Iterator[tuple[str, Memory | None, str | None]]:
    """(rel, memory or None, error or None) for every memory file: for tools and the eval."""
    for rel in sorted(walk(root)):
        try:
            mem, _ = load_memory(root, rel, max_bytes)
            yield rel, mem, None
        except MemoryFileError as exc:
            yield rel, None, str(exc)


SOURCE_KEYS = ("kind", "path", "section", "session_id")


def read_source(root: str | os.PathLike[str], rel: str, max_bytes: int) -> dict[str, str] | None:
    """The `source` (provenance) of the memory at `rel`, for display: its known string
    fields, cleaned of control and direction characters; None when it has none or the
    file cannot be read now."""
    from ..text.words import sanitize_title

    try:
        data = parse_json(read_bytes(root, rel, max_bytes)[0])
    except (MemindexError, OSError):
        return None
    src = data.get("source") if isinstance(data, dict) else None
    if not isinstance(src, dict):
        return None
    out = {k: sanitize_title(src[k], limit=1000) for k in SOURCE_KEYS if isinstance(src.get(k), str)}
    return out or None
