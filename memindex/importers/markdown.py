"""Markdown as the importers read it: front matter, sections by heading, bullets, inline
links made plain. Deliberately small (no Markdown library): ADRs, CLAUDE.md files and
Claude Code's auto memory notes are plain headings, paragraphs and lists."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Linear patterns only: a repository's Markdown is untrusted (a `\s*#*\s*$` tail or a
# `<!--.*?-->` scan backtracks polynomially on a crafted file); the rest is done in Python.
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
# A link's words and target hold no `[` (each try stops at the next one, so a run of `[a](`
# costs linear time, not quadratic; a nested `[x [1]](url)` stays text).
_LINK = re.compile(r"!?\[([^\]\[]*)\]\(([^)\s\[]*)(?:\s+\"[^\"]*\")?\)")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")


@dataclass
class Section:
    """One heading and the text under it, up to the next heading of any level."""

    level: int  # 0 for the text before the first heading
    heading: str
    path: list[str]  # the headings above it and its own
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip()


def front_matter(text: str) -> tuple[dict[str, object], str]:
    """A leading `---` YAML block as {key: value} (scalars, `[a, b]` and `- a` lists, one
    nested level as a dict), and the text after it. Not a YAML parser: the front matter
    of MADR and of Claude Code's memory files is flat key: value lines."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        return {}, text
    data: dict[str, object] = {}
    parent: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line[:1] in (" ", "\t")
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and parent is not None:
            value = data.get(parent)
            data[parent] = (value if isinstance(value, list) else []) + [_scalar(item.group(1))]
            continue
        match = re.match(r"^\s*([A-Za-z0-9_-]+)\s*:\s*(.*)$", line)
        if not match:
            continue
        key, value = match.group(1).lower(), match.group(2).strip()
        if indented and parent is not None and isinstance(data.get(parent), (dict, type(None))):
            nested = data.get(parent) or {}
            assert isinstance(nested, dict)
            nested[key] = _scalar(value)
            data[parent] = nested
            continue
        parent = key
        data[key] = None if value == "" else _scalar(value)
    return data, "\n".join(lines[end + 1:])


def _scalar(value: str) -> object:
    value = value.strip()
    if value.startswith("[") and value.endswith("]") and "](" not in value:
        return [_scalar(v) for v in value[1:-1].split(",") if v.strip()]
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def sections(text: str) -> list[Section]:
    """The document cut at its headings (headings inside code fences are text). HTML
    comments (templates' hints) are dropped."""
    text = _uncommented(text.replace("\r\n", "\n").replace("\r", "\n"))
    out = [Section(0, "", [])]
    stack: list[tuple[int, str]] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            level, heading = len(match.group(1)), plain(_closed(match.group(2)))
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, heading)]
            out.append(Section(level, heading, [h for _, h in stack]))
        else:
            out[-1].lines.append(line.rstrip())
    return out


def _uncommented(text: str) -> str:
    """The text without its `<!-- ... -->` comments (an unclosed one stays text)."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        end = text.find("-->", start + 4) if start >= 0 else -1
        if end < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:start])
        pos = end + 3


def _closed(heading: str) -> str:
    """A heading's text without its optional closing `#`s (`## Title ##`)."""
    heading = heading.rstrip(" \t")
    bare = heading.rstrip("#")
    return bare.rstrip(" \t") if not bare or bare[-1] in " \t" else heading


def plain(text: str) -> str:
    """Inline Markdown as text: links become their words, emphasis marks go."""
    text = _LINK.sub(lambda m: m.group(1) or m.group(2), text)
    text = _EMPHASIS.sub(r"\2", text)
    return re.sub(r"\s+", " ", text).strip()


def links(text: str) -> list[tuple[str, str]]:
    """(words, target) of every inline link."""
    return [(m.group(1), m.group(2)) for m in _LINK.finditer(text)]


def bullets(text: str) -> list[str]:
    """The list items of a block (a continuation line joins its item), as plain text."""
    items: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _BULLET.match(line)
        if match:
            items.append(match.group(1))
        elif items and line.startswith((" ", "\t")) and line.strip():
            items[-1] += " " + line.strip()
    return [p for p in (plain(i) for i in items) if p]


def paragraphs(text: str) -> list[str]:
    """The non-list paragraphs of a block, each as one plain line (code fences kept
    verbatim as one paragraph)."""
    out: list[str] = []
    current: list[str] = []
    fence: list[str] | None = None
    for line in text.split("\n"):
        if _FENCE.match(line):
            if fence is None:
                fence = [line]
                continue
            fence.append(line)
            out.append("\n".join(fence))
            fence = None
            continue
        if fence is not None:
            fence.append(line)
            continue
        if not line.strip() or _BULLET.match(line):
            if current:
                out.append(plain(" ".join(current)))
                current = []
            continue
        if line.startswith((" ", "\t")) and not current:
            continue  # a list item's continuation
        current.append(line.strip())
    if current:
        out.append(plain(" ".join(current)))
    if fence is not None:
        out.append("\n".join(fence))
    return [p for p in out if p]


def prose(text: str) -> str:
    """A block as one string: its paragraphs, then its list items as `- item` lines."""
    parts = paragraphs(text)
    items = bullets(text)
    if items:
        parts.append("\n".join(f"- {i}" for i in items))
    return "\n\n".join(parts).strip()
