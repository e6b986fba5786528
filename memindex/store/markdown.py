"""Markdown as memindex reads it: front matter, sections by heading, their plain text.

One CommonMark parser (markdown-it-py, with mdit-py-plugins' front matter) for every path
that reads Markdown: the project's documents indexed in place, ADRs, CLAUDE.md, Claude
Code's auto memory notes. Never on the prompt hook's path (sync and the importers only).

A repository's Markdown is untrusted: the input is bounded before parsing, the front
matter is read with `yaml.safe_load` (no tags, no objects) and only its scalars and lists
of scalars are kept, and nothing here follows a link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..defaults import MARKDOWN_MAX_CHARS, MARKDOWN_MAX_SECTIONS, FRONT_MATTER_MAX_CHARS


@dataclass
class Section:
    """One heading and the text under it, up to the next heading of any level."""

    level: int  # 1-6; 0 for the text before the first heading
    heading: str  # the heading's plain text ("" for level 0)
    path: tuple[str, ...]  # the headings above it and its own, outermost first
    anchor: str  # GitHub's slug of the heading, unique in the file ("" for level 0)
    line: int  # where it starts, 0-based
    blocks: list[str] = field(default_factory=list)  # paragraphs, list items, code, table rows
    tables: list[list[list[str]]] = field(default_factory=list)  # each table's rows of cells, its header first
    code: set[int] = field(default_factory=set)  # which blocks are code (fenced or indented)

    @property
    def text(self) -> str:
        return "\n".join(self.blocks).strip()

    def items(self) -> list[str]:
        """The section's list items ("- " blocks), without their marker."""
        return [b[2:] for b in self.blocks if b.startswith("- ")]


@dataclass
class Parsed:
    meta: dict[str, Any]  # the front matter's keys (lowercased) with scalar or list values
    sections: list[Section]
    links: list[tuple[str, str]]  # (words, target) of every inline link, in order
    truncated: bool = False  # the text was cut at MARKDOWN_MAX_CHARS

    @property
    def title(self) -> str:
        """The first level-1 heading's text, else the front matter's `title`, else ""."""
        first = next((s.heading for s in self.sections if s.level == 1 and s.heading), "")
        meta_title = self.meta.get("title")
        return first or (meta_title.strip() if isinstance(meta_title, str) else "")

    def text(self) -> str:
        return "\n".join(s.text for s in self.sections if s.text)


@lru_cache(maxsize=1)
def _parser():  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    # the block structure in one pass; a block's inline markup only where it has any that
    # matters (`_inline`): a link's target, HTML, an entity (half the parse time otherwise)
    md = MarkdownIt("commonmark", {"html": True}).use(front_matter_plugin).enable("table").enable("strikethrough")
    md.disable("inline")
    md.normalizeLink = md.normalizeLinkText = lambda url: url  # nothing is rendered: targets as written
    md.validateLink = lambda url: True  # ... and kept whatever their scheme (never followed)
    return md


@lru_cache(maxsize=1)
def _inline_parser():  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable("strikethrough")
    md.normalizeLink = md.normalizeLinkText = lambda url: url
    md.validateLink = lambda url: True
    return md


def slug(heading: str) -> str:
    """GitHub's heading anchor: lowercased, punctuation but `-` and `_` dropped, spaces to `-`."""
    out = []
    for ch in heading.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def front_matter(raw: str) -> dict[str, Any]:
    """A YAML front matter's top-level keys, lowercased, each a string, number, boolean,
    date (as ISO text) or list of those, and a nested mapping's such values as
    `parent.key`; anything else is left out. {} when it is not a
    mapping or not valid YAML."""
    import yaml

    if len(raw) > FRONT_MATTER_MAX_CHARS:
        return {}
    try:
        data = yaml.safe_load(raw)
    except (yaml.YAMLError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        if isinstance(value, list):
            kept = [_scalar(v) for v in value[:100]]
            out[key.lower()] = [v for v in kept if v is not None]
        elif isinstance(value, dict):  # one level down, as `parent.key` (Claude Code's `metadata.type`)
            for sub, inner in list(value.items())[:100]:
                if isinstance(sub, str) and (v := _scalar(inner)) is not None:
                    out[f"{key.lower()}.{sub.lower()}"] = v
        elif (v := _scalar(value)) is not None:
            out[key.lower()] = v
    return out


def _scalar(value: Any) -> str | int | float | bool | None:
    import datetime

    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return None


def parse(text: str) -> Parsed:
    """The sections of a Markdown text, each with its plain text: paragraphs and headings'
    inline markup made plain (a link keeps its words; its target goes to `links`), list
    items as "- item" blocks, fenced and indented code and tables kept line by line. HTML
    blocks and comments are dropped."""
    truncated = len(text) > MARKDOWN_MAX_CHARS
    text = text[:MARKDOWN_MAX_CHARS].replace("\x00", "\ufffd")
    tokens = _parser().parse(text)
    meta: dict[str, Any] = {}
    links: list[tuple[str, str]] = []
    sections = [Section(0, "", (), "", 0)]
    stack: list[tuple[int, str]] = []  # (level, heading) of the headings enclosing the current one
    anchors: dict[str, int] = {}
    list_depth = 0
    row: list[str] | None = None  # the cells of the table row being read
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "front_matter":
            meta = front_matter(tok.content)
        elif kind == "heading_open":
            level = int(tok.tag[1])
            heading = _inline(tokens[i + 1], links, full=True) if i + 1 < len(tokens) else ""
            i += 2
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
            base = slug(heading)
            n = anchors.get(base, 0)
            anchors[base] = n + 1
            if len(sections) >= MARKDOWN_MAX_SECTIONS:  # the rest goes to the last section
                sections[-1].blocks.append(heading)
            else:
                line = tok.map[0] if tok.map else sections[-1].line
                sections.append(Section(level, heading, tuple(h for _, h in stack), base if n == 0 else f"{base}-{n}", line))
        elif kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "table_open":
            sections[-1].tables.append([])
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            if row and any(row):
                sections[-1].blocks.append(" | ".join(c for c in row if c))
                if sections[-1].tables:
                    sections[-1].tables[-1].append(row)
            row = None
        elif kind == "inline":
            words = _inline(tok, links)
            if row is not None:
                row.append(words)
            elif words:
                sections[-1].blocks.append(("- " if list_depth else "") + words)
        elif kind in ("fence", "code_block"):
            code = tok.content.rstrip("\n")
            if code.strip():
                sections[-1].code.add(len(sections[-1].blocks))
                sections[-1].blocks.append(code)
        i += 1
    if not sections[0].blocks and len(sections) > 1:
        sections.pop(0)
    return Parsed(meta, sections, links, truncated)


_MARKUP = frozenset("*_`~\\[]()<>&!|")


def _inline(tok: Any, links: list[tuple[str, str]], full: bool = False) -> str:
    """The plain text of an inline token: words, code spans, link and image words; markup,
    HTML and link targets (kept in `links`) left out; each line's spaces made single (a
    paragraph's lines stay lines: "Status: Accepted" and "Date: ..." are two fields).
    A block with no markup character is its own plain text; the others (and headings,
    `full`) go through the inline parser."""
    raw = tok.content
    if not full and _MARKUP.isdisjoint(raw):
        lines = (" ".join(line.split()) for line in raw.split("\n"))
        return "\n".join(line for line in lines if line)
    if not full and "](" not in raw and "<" not in raw and "&" not in raw and "\\" not in raw and "![" not in raw:
        # emphasis and code spans only: their marks are separators to the tokenizer anyway
        lines = (" ".join(line.replace("`", "").replace("*", "").replace("__", " ").split()) for line in raw.split("\n"))
        return "\n".join(line for line in lines if line)
    out: list[str] = []
    href: str | None = None
    start = 0
    for child in _inline_parser().parseInline(raw)[0].children or ():
        kind = child.type
        if kind in ("text", "code_inline"):
            out.append(child.content)
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind == "link_open":
            href = str(child.attrs.get("href", ""))
            start = len(out)
        elif kind == "link_close" and href is not None:
            links.append((" ".join("".join(out[start:]).split()), href))
            href = None
        elif kind == "image":
            out.append(child.content)
    lines = (" ".join(line.split()) for line in "".join(out).split("\n"))
    return "\n".join(line for line in lines if line)
