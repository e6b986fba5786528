"""Formatting memories for people and for the assistant: one place for the line format."""

from __future__ import annotations

import os

from ..defaults import BLOCK_LIMIT, DATA_DIR, TAGS_MAX
from .words import sanitize_tag, sanitize_title


_UNSAFE_IN_PATH = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}  # controls, BiDi, spaces
_PLAIN_PATH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._@+-/")  # the common case


def safe_relpath(prefix: str, rel: str) -> str | None:
    """The shown path of a memory (`prefix` + `folder/name.json`), or None if `rel` could
    leave the memory root or carries characters that could forge or disguise a line."""
    if not rel or "\\" in rel or rel.startswith("/"):
        return None
    parts = rel.split("/")
    if len(parts) != 2 or any(p in ("", ".", "..") for p in parts):
        return None
    if not _PLAIN_PATH.issuperset(rel) and any(_category(ch) in _UNSAFE_IN_PATH for ch in rel):
        return None
    return prefix + rel


def shown(prefix: str, path: str) -> str | None:
    """How an index row's path is shown: a memory file's under the memory folder's `prefix`
    (`safe_relpath`), a document's section as the file, relative to the project, and its
    anchor (`@docs/adr/0007-x.md#decision` -> `docs/adr/0007-x.md#decision`). None when it
    could leave the project or carries characters that could forge or disguise a line."""
    if not path.startswith("@"):
        return safe_relpath(prefix, path)
    file, _, anchor = path[1:].rpartition("#")
    if not file or "\\" in file or file.startswith("~"):
        return None
    parts = file.split("/")
    if any(p in ("..", ".") for p in parts) or any(p == "" for p in parts[1:]):
        return None
    text = file + (f"#{anchor}" if anchor else "")
    if not _PLAIN_PATH.union("#~").issuperset(text) and any(_category(ch) in _UNSAFE_IN_PATH for ch in text):
        return None
    return text


def shown_path(rel: str) -> str:
    """A relative path fit for one line of output: as it is, or quoted with escapes."""
    return rel if rel.isprintable() else ascii(rel)


def _category(ch: str) -> str:
    import unicodedata  # only for the rare path that is not plain ASCII

    return unicodedata.category(ch)


_UNSAFE: dict[int, str] | None = None  # code point -> its character reference


def _unsafe_table() -> dict[int, str]:
    """Look-alikes of `<`, `>`, `&` and invisible or line-breaking characters, from
    data/unsafe_chars.json (derived with unicodedata by scripts/gen_unsafe_chars.py, so the
    hook does not load unicodedata): each becomes a numeric character reference."""
    global _UNSAFE
    if _UNSAFE is None:
        from ..lean import loads

        with open(os.path.join(DATA_DIR, "unsafe_chars.json"), "rb") as fh:
            data = loads(fh.read())
        points = [cp for cp, _ in data["lookalikes"]]
        for lo, hi in data["invisible_ranges"]:
            points.extend(range(lo, hi + 1))
        points.extend((0x09, 0x0A))  # tab and newline: never inside one field of a line
        _UNSAFE = {cp: f"&#x{cp:X};" for cp in points}
    return _UNSAFE


def unsafe_characters() -> dict[int, str]:
    """The code points `escape` turns into character references (look-alikes of `<`, `>`,
    `&`; invisible, direction and line-breaking characters), each with its reference: for
    a reader that shows them visibly rather than as the characters (the local UI)."""
    return _unsafe_table()


def escape(text: str, quote: bool = True) -> str:
    """XML escaping (what html.escape does, without importing html.entities), and
    Unicode-aware: look-alikes of the markup characters (U+FF1C, U+3008, ...), line and
    paragraph separators, bidi and zero-width controls become character references, so
    nothing in a field can look like, or hide, the block's own tags."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if quote:
        text = text.replace('"', "&quot;").replace("'", "&#x27;")
    if not (text.isascii() and text.isprintable()):
        text = text.translate(_unsafe_table())
    return text


def memory_line(category: str, title: str, path: str, tags: list[str], xml: bool = False) -> str:
    """`- [DECISION] title -> .claude/memory/decisions/x.json #tags:a,b` (index.md's format).

    Titles and tags are re-sanitized here, whatever the file said; `xml` escapes for the
    hook's `<memory-context>` block.
    """
    title = sanitize_title(title) or "(untitled)"
    clean_tags = [t for t in (sanitize_tag(t) for t in tags[:TAGS_MAX]) if t]
    cat = "".join(ch for ch in category.upper() if ch.isalpha() or ch == "_")
    if xml:  # each field escaped; the line's own ` -> ` stays as the format has it
        title, path, clean_tags = escape(title), escape(path), [escape(t) for t in clean_tags]
    line = f"- [{cat}] {title} -> {path}"
    if clean_tags:
        line += " #tags:" + ",".join(clean_tags)
    return line




NOTE_MAX = 120  # characters of a memory's note in the block


def memory_context(hits: list, prefix: str, notes: dict[str, str] | None = None, limit: int = BLOCK_LIMIT) -> str:
    """The hook's block: one escaped line per memory, no bodies, under `limit` characters;
    `notes` (path -> a few words: "may be stale: x.py was deleted") go after the line, in
    parentheses. Empty when there is nothing to say."""
    head = f'<memory-context source="{escape(prefix, quote=True)}">'
    tail = "</memory-context>"
    lines: list[str] = []
    size = len(head) + len(tail) + 2
    for hit in hits:
        path = shown(prefix, hit.path)
        if path is None:
            continue
        line = memory_line(hit.category, hit.title, path, hit.tags, xml=True)
        note = (notes or {}).get(hit.path)
        if note:
            line += f" ({escape(sanitize_title(note, limit=NOTE_MAX))})"
        if size + len(line) + 1 > limit:
            break
        lines.append(line)
        size += len(line) + 1
    if not lines:
        return ""
    return "\n".join([head, *lines, tail]) + "\n"
