"""An Architecture Decision Record as a document: its title, status, date and links.

Reads the common templates: Nygard / adr-tools (`# 1. Title`, `Date:`, `## Status` with
"Superseded by [2. ...](0002-...md)"), MADR 2 (`* Status:` bullets), MADR 3/4 (front matter
`status:`/`date:`), the Tendermint/Cosmos style (`## Changelog` with dated entries,
`## Status`, `## Proposal` / `## Decision` / `## Detailed Design`), and free status lines
(emoji, bold, "Status: **Accepted**").

Status -> lifecycle: accepted, proposed and in-review ADRs stay active (the status is
shown); superseded ones are retired and point to their successor when one is named, else
archived; deprecated, rejected, withdrawn and reverted ones are archived.
"""

from __future__ import annotations

import re

from .documents import Document, NotIndexed, doc_id, normalize, units

# first words of a status line -> the ADR's status (first match wins)
STATUS_WORDS: tuple[tuple[str, str], ...] = (
    (r"supersed|replaced", "superseded"),
    (r"revert|rolled back|undone", "reverted"),
    (r"deprecat|obsolete|retired", "deprecated"),
    (r"reject|declin|withdrawn|abandon|discarded|won't do", "rejected"),
    (r"in review|review|propos|draft|open|pending|discuss|wip|rfc|under consideration|tbd", "proposed"),
    (r"accept|approv|adopt|decided|done|agreed|implement|active|final|complete", "accepted"),
)
LIFECYCLE = {"superseded": "retired", "deprecated": "archived", "rejected": "archived", "reverted": "archived"}
_FIELD = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(status|date|deciders|decision-makers|tags)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*)$", re.I)
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NUMBER = re.compile(r"^(?:adr[-_ ]?)?(\d{1,5})[-_ .]", re.I)
_TITLE_NUMBER = re.compile(r"^(?:ADR[-_ ]?)?(\d{1,5})\s*[.:)\-]\s*", re.I)
_PLACEHOLDER = re.compile(r"^\s*(\[[^\]]*\]|\{[^}]*\}|<[^>]*>|\.\.\.|…|tbd|todo:?.*|n/a|-)\s*$", re.I)


def status_of(raw: str) -> str:
    """The status a status line says ("Accepted", "✅ accepted", "In Review.", "Superseded by ...")."""
    low = raw.strip().lower()
    low = "".join(ch for ch in low if ch.isalnum() or ch in " '-./").strip()
    for pattern, status in STATUS_WORDS:
        if re.match(rf"\W*(?:{pattern})", low):
            return status
    return "accepted" if not low else "unknown"


def _date(text: str) -> str:
    found = _DATE.search(text or "")
    if not found:
        return ""
    y, m, d = (int(g) for g in found.groups())
    if not (1990 <= y <= 2100 and 1 <= m <= 12 and 1 <= d <= 31):
        return ""
    return f"{y:04d}-{m:02d}-{d:02d}T00:00:00Z"


def is_stub(parsed) -> bool:  # type: ignore[no-untyped-def]
    """A template or an empty skeleton: no section holds a sentence of its own (only
    placeholders such as `[short title]`, `{context}`, `...`, `TBD`)."""
    real = 0
    for sec in parsed.sections:
        for block in sec.blocks:
            text = block[2:] if block.startswith("- ") else block
            if not _PLACEHOLDER.match(text) and len(text.split()) >= 4:
                real += 1
    return real == 0


def document(rel: str, parsed) -> Document:  # type: ignore[no-untyped-def]
    """The document an ADR's parsed text makes, or NotIndexed (a template stub, no title)."""
    rel = normalize(rel)
    title = parsed.title
    if not title:
        raise NotIndexed("not an ADR: it has no title (a '# Title' heading or front matter 'title:')")
    if is_stub(parsed):
        raise NotIndexed("a template or an empty ADR: no section has text of its own")
    fields: dict[str, str] = {k: str(v) for k, v in parsed.meta.items() if isinstance(v, (str, int, float))}
    head = [s for s in parsed.sections if s.level <= 1]
    for sec in head:
        for block in sec.blocks:
            for line in block.splitlines():
                found = _FIELD.match(line[2:] if line.startswith("- ") else line)
                if found and found.group(1).lower() not in fields:
                    fields[found.group(1).lower()] = found.group(2).strip()
    by_name = {}
    for sec in parsed.sections:
        by_name.setdefault(sec.heading.strip().lower().rstrip(":"), sec)
    status_sec = by_name.get("status")
    raw_status = fields.get("status") or (status_sec.blocks[0] if status_sec and status_sec.blocks else "")
    raw_status = raw_status.split("\n")[0][2:] if raw_status.startswith("- ") else raw_status.split("\n")[0]
    status = status_of(raw_status)
    date = _date(fields.get("date", ""))
    if not date:
        log = by_name.get("changelog") or by_name.get("change log") or by_name.get("history")
        dates = [d for b in (log.blocks if log else []) if (d := _date(b))]
        date = min(dates) if dates else ""
    number = _NUMBER.match(rel.rsplit("/", 1)[-1]) or _TITLE_NUMBER.match(title)
    shown = _TITLE_NUMBER.sub("", title, count=1).strip() or title
    if number and not _TITLE_NUMBER.match(title):
        shown = f"ADR {int(number.group(1))}: {shown}"
    elif number:
        shown = f"ADR {int(number.group(1))}: {shown}"
    status_text = " ".join([raw_status, *(status_sec.blocks if status_sec else [])])
    successors = _links_after(parsed, rel, status_text, r"superseded\s+by|replaced\s+by")
    record = LIFECYCLE.get(status, "active")
    if status == "superseded" and not successors:
        record = "archived"
    tags = parsed.meta.get("tags")
    doc = Document(
        path=rel, kind="adr", id=doc_id(rel), category="decision", title=shown,
        tags=[str(t).lower() for t in tags][:12] if isinstance(tags, list) else [],
        record_status=record, status=raw_status.strip()[:80], created_at=date, updated_at=date,
        successors=successors,
    )
    doc.units = units(parsed, title)
    return doc


def _links_after(parsed, rel: str, status_text: str, verb: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The documents (project paths) the status names after `verb` ("Superseded by [5](0005-x.md)")."""
    if not re.search(verb, status_text, re.I):
        return []
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    out: list[str] = []
    for words, target in parsed.links:
        if not target or "://" in target or target.startswith(("#", "mailto:")):
            continue
        if words and words not in status_text:
            continue
        path = normalize(f"{folder}/{target.split('#')[0]}" if folder else target.split("#")[0])
        parts = []
        for p in path.split("/"):
            if p == "..":
                if parts:
                    parts.pop()
            else:
                parts.append(p)
        path = "/".join(parts)
        if path and path != rel and path not in out:
            out.append(path)
    return out[:5]
