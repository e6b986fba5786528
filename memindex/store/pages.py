"""A runbook, a docs page, a CLAUDE.md / AGENTS.md or an auto memory note as a document.

The title is the page's own: its first `# heading`, else the front matter's `title` as
written (an alert name such as `KubeQuotaExceeded` stays one word), else (an auto memory
note) its `name`, else the file's name (an `index.md`, `_index.md` or `README.md` is
titled by its folder). A title that only repeats its folder's name (three pages titled
"Patroni" in `patroni/`) gets the file's name after it: `Patroni (failover)`. The front
matter's `description` and `summary` join the head of the page, its `tags` and `keywords`
its tags; its date fields date it. Nothing is dropped for its shape: a page without list
items is a page, its fenced code is its text.

The category follows the kind registered (`CATEGORY_OF_KIND`, or a category's own name),
and for instruction files, auto memory notes and docs pages the stated rule of
`store/classify.py`: per section for CLAUDE.md / AGENTS.md and for a note without front
matter (each section is one note), per page for a docs page and a note with front matter.
"""

from __future__ import annotations

import re
from typing import Any

from ..defaults import CATEGORIES
from . import classify as rule
from .dates import parse_date
from .documents import INDEX_NAMES, Document, NotIndexed, Unit, doc_id, normalize, stem_of, units
from .ids import slugify

CATEGORY_OF_KIND = {"runbook": "runbook", "docs": rule.DOCS_DEFAULT, "claude-md": "preference", "notes": "preference"}
DATE_KEYS = ("date", "created", "updated", "lastmod", "last_modified", "last_reviewed_on", "last_reviewed", "review_date")


def title_of(rel: str, parsed: Any) -> str:
    """The page's title (the rule above)."""
    title = parsed.title
    if not title:
        name = parsed.meta.get("name")
        title = name.strip() if isinstance(name, str) and name.strip() else stem_of(rel)
    parts = rel.split("/")
    own = parts[-1].rsplit(".", 1)[0].lower()
    if len(parts) > 1 and own not in INDEX_NAMES and slugify(title) == slugify(parts[-2]) and slugify(stem_of(rel)) != slugify(title):
        title = f"{title} ({stem_of(rel)})"
    return title


def _text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return value.strip() if isinstance(value, str) else ""


def document(rel: str, kind: str, parsed: Any) -> Document:
    """The document a page's parsed text makes (NotIndexed when it has no text)."""
    rel = rel if rel.startswith("/") else normalize(rel)
    meta = parsed.meta
    if sum(len(s.text.split()) for s in parsed.sections) + len(_text(meta, "description").split()) < 3:
        raise NotIndexed("has no text to index", deliberate=True)
    title = title_of(rel, parsed)
    tags: list[str] = []
    for key in ("tags", "keywords"):
        value = meta.get(key)
        if isinstance(value, list):
            tags += [str(t).strip().lower() for t in value if str(t).strip()]
        elif isinstance(value, str):
            tags += [t.strip().lower() for t in value.split(",") if t.strip()]
    if re.search(r"\[deprecated\]|\(deprecated\)|^deprecated\b", title, re.I) or meta.get("deprecated") is True:
        tags.append("deprecated")  # kept in search (it still tells older versions what to do), and said
    declared = _text(meta, "type") or _text(meta, "metadata.type")  # Claude Code 2.1 nests it
    if declared and kind == "notes":
        tags.append(declared.lower())
    description = " ".join(x for x in (_text(meta, "description"), _text(meta, "summary")) if x)
    category = CATEGORY_OF_KIND.get(kind, kind if kind in CATEGORIES else "runbook")
    if kind == "docs":
        category = rule.classify_page(title, description, _text(meta, "type"))
    doc = Document(path=rel, kind=kind, id=doc_id(rel), category=category, title=title, tags=list(dict.fromkeys(tags))[:12])
    for key in DATE_KEYS:
        if (when := parse_date(str(meta.get(key) or ""))):
            doc.created_at = doc.created_at or when
            doc.updated_at = max(doc.updated_at, when)
    doc.units = units(parsed, parsed.title)
    if kind == "claude-md":
        doc.units = [u for u in (_without_boilerplate(u) for u in doc.units) if u.text or u.heading]
    if description:
        if doc.units and doc.units[0].anchor == "":
            doc.units[0].text = "\n".join([description, doc.units[0].text]).strip()
        else:
            doc.units.insert(0, Unit("", "", description))
    if kind == "claude-md":
        for unit in doc.units:
            unit.category = _classify_unit(unit, title, rule.INSTRUCTIONS)
        doc.category = _first_category(doc.units, "preference")
    elif kind == "notes" and (meta.get("name") or meta.get("description") or declared):
        doc.category = rule.classify(" ".join((title, description, stem_of(rel))), rule.first_sentence(_blocks(parsed)),
                                     rule.has_steps(_blocks(parsed), _code(parsed)), declared)
    elif kind == "notes":
        for unit in doc.units:
            unit.category = _classify_unit(unit, title, rule.NOTES)
        doc.category = _first_category(doc.units, "preference")
    return doc


def _blocks(parsed: Any) -> list[str]:
    return [b for s in parsed.sections for b in s.blocks]


def _code(parsed: Any) -> set[int]:
    return {i for s in parsed.sections for i in s.code}


def _without_boilerplate(unit: Unit) -> Unit:
    """A CLAUDE.md head without "This file provides guidance to Claude Code ..."."""
    lines = [line for line in unit.text.split("\n") if not rule.BOILERPLATE.search(line)]
    unit.text = "\n".join(lines).strip()
    return unit


def _classify_unit(unit: Unit, title: str, allowed: tuple[str, ...]) -> str:
    blocks = unit.text.split("\n")
    label = unit.heading or title
    return rule.classify(label, rule.first_sentence(blocks), rule.has_steps(blocks) or unit.has_code, "", allowed)


def _first_category(units_: list[Unit], default: str) -> str:
    """The document's own category: its first section's that has one (the head's often has none)."""
    for unit in units_:
        if unit.anchor and unit.category:
            return unit.category
    return units_[0].category if units_ and units_[0].category else default
