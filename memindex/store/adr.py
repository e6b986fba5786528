"""An Architecture Decision Record as a document: its title, number, status, dates and links.

Reads the common templates: Nygard / adr-tools (`# 1. Title`, `Date:`, `## Status` with
"Superseded by [2. ...](0002-...md)"), MADR 2 (`* Status:` bullets, bold or not), MADR 3/4
(front matter `status:` / `date:`), the Tendermint/Cosmos style (`## Changelog` with dated
entries, `## Status`, `## Proposal` / `## Detailed Design`), metadata tables (`| Status |
Accepted |`, or a `| Created | State |` header over one row), and free status lines (emoji,
bold, "Implemented in #123", "Accepted; supersedes ADR-0045").

Status -> lifecycle (the index row's `record_status`; `LIFECYCLE`): accepted, proposed (in
review, under review, pending, draft, TBD) and an unknown status stay active, the status
shown as written; superseded with a successor that is one of the project's files is retired
and points at it (its own "Superseded by" link or number, or a newer ADR's "Supersedes" link:
`supersedes` here, applied across files by sync), superseded without one is archived with
the reason; deprecated is retired when it names its replacement, else archived; rejected
and reverted are archived.

Not indexed, with the reason: template files and stubs, a folder's README/index page that
has no status of its own, and a file with no status, number or ADR section at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .dates import day as _day, parse_date
from .documents import INDEX_NAMES, Document, NotIndexed, Unit, doc_id, normalize, stem_of, units

# A status sentence's first words -> its state (first match wins).
STATUS_WORDS: tuple[tuple[str, str], ...] = (
    (r"superseded|replaced by|obsoleted by", "superseded"),
    (r"revert|rolled back|roll back|undone|backed out", "reverted"),
    (r"deprecat|obsolete|retired|sunset|no longer (in use|valid|applies)", "deprecated"),
    (r"reject|declin|withdrawn|abandon|discard|won'?t do|not accepted|cancel", "rejected"),
    (r"propos|draft|(in |under |for )?review\b|pending|tbd\b|to be decided|open\b|discuss|wip\b|rfc\b|"
     r"under consideration|consider|in progress|work in progress|refinement|idea\b|explor|request for comment|"
     r"tech preview", "proposed"),
    (r"accept|approv|adopt|decided|done\b|agreed|implement|active\b|final|complete|in effect|in force|live\b|"
     r"valid\b|current\b|ratified|merged|established|confirmed|standard|reviewed", "accepted"),
)
LIFECYCLE = {"superseded": "retired", "deprecated": "archived", "rejected": "archived", "reverted": "archived"}
# An ADR whose "Supersedes" retires another: one that took effect (superseded or deprecated
# since, it still replaced the older one: a chain 1 <- 2 <- 3); not a proposal, a rejected or
# a reverted one.
TOOK_EFFECT = ("accepted", "unknown", "superseded", "deprecated")
SUCCESSOR = re.compile(r"^(superseded|replaced|obsoleted)\s+by\b|^deprecated\s+(in\s+favou?r\s+of|by|for)\b", re.I)
SUPERSEDES = re.compile(r"^(supersedes|replaces|obsoletes)\b", re.I)
# field names as written (lowercased) -> what they give
FIELDS = {
    "status": "status", "state": "status", "adr status": "status", "decision status": "status", "current status": "status",
    "date": "date", "decided": "date", "decision date": "date", "date decided": "date", "accepted on": "date",
    "created": "created", "created on": "created", "created at": "created", "date created": "created",
    "last modified": "updated", "last updated": "updated", "updated": "updated", "modified": "updated",
    "supersedes": "supersedes", "replaces": "supersedes", "superseded by": "superseded by",
    "superseded-by": "superseded by", "superseded_by": "superseded by", "replaced by": "superseded by",
    "tags": "tags",
}
_FIELD = re.compile(r"^\s*(?:[-*+]\s+)?([A-Za-z][A-Za-z _-]{0,24}?)\s*:\s*(.*)$")
_NUMBER = re.compile(r"^(?:(?:adr|rfc)[-_ ]?)?(\d{1,5})(?:[-_ .]|$)", re.I)
_TITLE_NUMBER = re.compile(r"^(?:(ADR|RFC)\s*[-_ #]?\s*)?(\d{1,5}|n|N|NNNN|XXXX|x)\s*[.:)\-]\s+|^(ADR|RFC)\s*[-#]?(\d{1,5})?\s*[:\-]\s+", re.I)
_DATED_NAME = re.compile(r"^(\d{4})-?(\d{2})(?:-?(\d{2}))?(?:[-_ ]|$)")
_PLACEHOLDER = re.compile(r"^\s*(\[[^\]]*\]|\{[^}]*\}|<[^>]*>|\.\.\.|…|tbd|todo:?.*|n/a|-)\s*$", re.I)
_TEMPLATE_NAME = re.compile(r"^_?(?:[a-z]+-)?(?:adr[-_ ]?)?(?:\d{1,5}[-_ ])?(?:adr[-_ ]?)?template(?:[-_][a-z0-9]+)?$", re.I)
ADR_HEADINGS = re.compile(
    r"^(context|decision|status$|consequence|considered option|options? considered|options?\b|problem|proposal|proposed|"
    r"detailed design|alternative|rationale|motivation|background|open question|goals?\b|non-goals|pros and cons|"
    r"drivers|what\b|why\b|how\b|changelog|change log)", re.I)
CHANGELOG = ("changelog", "change log", "history", "revision history", "document history", "changes", "revisions")


@dataclass
class Folder:
    """What an ADR's own folder holds, for the references it makes by number or link."""

    files: tuple[str, ...] = ()  # the Markdown files beside it (names)
    subfolders: tuple[str, ...] = ()
    exists: Callable[[str], bool] = field(default=lambda rel: False)  # is this project path a file?


def status_of(raw: str) -> str:
    """The state a status text says: its first sentence's, unless a later sentence starts
    with an ending one ("Implemented. Superseded by ADR-013." is superseded; "Parts of this
    ADR were superseded" is not). "" for no status, "unknown" for words none of these."""
    sentences = _sentences(raw)
    if not sentences:
        return ""
    state = _state(sentences[0])
    for later in sentences[1:]:
        found = _state(later)
        if found in ("superseded", "reverted", "deprecated", "rejected"):
            state = found
    return state


def _sentences(raw: str) -> list[str]:
    text = re.sub(r"[^\w\s'./;:,()#>-]", " ", raw.strip())
    parts = re.split(r"(?<=[.;!])\s+|\s+->\s+|\n+|\s+-\s+|\s*;\s*", text)
    return [p.strip(" .,:-()") for p in parts if p.strip(" .,:-()")]


def _state(sentence: str) -> str:
    low = sentence.lower().lstrip("[{(<*_ ")
    for pattern, state in STATUS_WORDS:
        if re.match(rf"(?:{pattern})", low):
            return state
    return "unknown"


def _text(block: str) -> str:
    return block[2:] if block.startswith("- ") else block


def _heading_key(heading: str) -> str:
    return re.sub(r"^[\d.\\\s]+", "", heading).strip(" :*").lower()


def fields(parsed: Any) -> tuple[dict[str, str], str]:
    """(the ADR's fields: status, date, created, updated, supersedes, superseded by, tags;
    the text of its `## Status` section). From, first wins: the front matter, `Key: value`
    lines and metadata tables above its first ADR section, then the Status section."""
    out: dict[str, str] = {}
    for key, value in parsed.meta.items():
        name = FIELDS.get(key.replace("_", " ").replace("-", " ").strip()) or FIELDS.get(key)
        if name and name not in out and value not in (None, ""):
            out[name] = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    status_text = ""
    head = True  # fields live above the record's first section (or in a Status section)
    for n, sec in enumerate(parsed.sections):
        key = _heading_key(sec.heading)
        if sec.level >= 1 and key in ("status", "status of this adr", "decision status", "current status"):
            status_text = status_text or "\n".join(sec.blocks[:4])
            continue
        head = head and n < 3 and not (sec.level >= 2 and ADR_HEADINGS.match(key))
        if not head:
            continue
        for i, block in enumerate(sec.blocks):
            if i in sec.code:
                continue
            for line in _text(block).splitlines():
                found = _FIELD.match(_text(line))
                name = FIELDS.get(found.group(1).strip().lower()) if found else None
                if name and name not in out and found.group(2).strip():  # type: ignore[union-attr]
                    out[name] = found.group(2).strip()  # type: ignore[union-attr]
        for table in sec.tables:
            _table_fields(table, out)
    if "status" not in out and status_text:
        out["status"] = status_text.split("\n")[0]
    return out, status_text


def _table_fields(table: list[list[str]], out: dict[str, str]) -> None:
    """`| Status | Accepted |` rows, or a header row of field names over one row of values."""
    if not table:
        return
    header = [FIELDS.get(c.strip(" :*").lower()) for c in table[0]]
    if any(header) and len(table) == 2 and len(table[0]) > 2:  # one row of values (more rows: a list of records)
        for name, value in zip(header, table[1]):
            if name and name not in out and value.strip():
                out[name] = value.strip()
        return
    for row in table:
        if len(row) >= 2 and (name := FIELDS.get(row[0].strip(" :*").lower())) and name not in out and row[1].strip():
            out[name] = row[1].strip()


# The text adr-tools' `adr new` and MADR's template put in each section: an ADR still made of
# it is a stub (first words, lowercased).
TEMPLATE_TEXT = (
    "the issue motivating this decision", "the change that we're proposing or have agreed to implement",
    "what becomes easier or more difficult to do", "describe the context and problem statement",
    "what is the status, such as proposed",
)


def is_stub(parsed: Any) -> bool:
    """An empty skeleton: fewer than three words of its own (a title alone, or only
    placeholders such as `[short title]`, `{context}`, `...`, `TBD`, a field line such as
    `Date: ...`, or the sentences `adr new` writes)."""
    words = 0
    for sec in parsed.sections:
        for block in sec.blocks:
            for line in _text(block).splitlines():
                text = _text(line)
                if _PLACEHOLDER.match(text) or text.lower().startswith(TEMPLATE_TEXT):
                    continue
                found = _FIELD.match(text)
                if found and FIELDS.get(found.group(1).strip().lower()):
                    continue
                words += len(text.split())
    return words < 3


def _is_template(rel: str, title: str, raw_status: str) -> str:
    """Why a file is a template (its name, a placeholder title, a status that lists the
    choices), or ""."""
    if _TEMPLATE_NAME.match(stem_of(rel)):
        return "not an ADR: a template (by its name)"
    if re.match(r"^\s*(\[[^\]]*\]|\{[^}]*\}|<[^>]*>)\s*$|^\s*[{<]", title):
        return f"not an ADR: a template (its title {title[:60]!r} is a placeholder)"
    if "|" in raw_status and len([w for w in re.split(r"[|,]", raw_status) if _state(w.strip(" []{}`\"'")) != "unknown"]) >= 2:
        return "not an ADR: a template (its status lists the choices)"
    return ""


def number_of(rel: str, title: str) -> tuple[int | None, str]:
    """(the ADR's number from its file name, else its title; the title without it)."""
    stem = stem_of(rel)
    found = None if _DATED_NAME.match(stem) and len(stem) > 7 else _NUMBER.match(stem)
    bare = title
    head = _TITLE_NUMBER.match(title)
    if head:
        bare = title[head.end():].strip() or title
        bare = re.sub(r"^(ADR|RFC)\s*[:\-]\s+", "", bare, flags=re.I) or bare
    number = int(found.group(1)) if found else None
    if number is None and head and (head.group(2) or head.group(4) or "").isdigit():
        number = int(head.group(2) or head.group(4))
    return number, bare


def resolve(rel: str, ref: str, folder: Folder) -> str | None:
    """The project path of the ADR a reference names: a link target (relative to the ADR's
    folder; `x`, `x.md`, `x/`'s index page) or an ADR number ("#13", "ADR-0019") of a file
    beside it. None when it names nothing in the project (an outside URL, a missing file)."""
    base = rel.rsplit("/", 1)[0] if "/" in rel else ""
    if ref.startswith("number:"):
        want = int(ref[7:])
        for name in folder.files:
            found = _NUMBER.match(stem_of(name))
            if found and int(found.group(1)) == want and not (_DATED_NAME.match(name) and len(stem_of(name)) > 7):
                path = f"{base}/{name}" if base else name
                return path if path != rel else None
        return None
    target = ref.split("#")[0].split("?")[0].strip()
    if not target or "://" in target or target.startswith(("mailto:", "//")) or "\\" in target:
        return None
    joined = target.lstrip("/") if target.startswith("/") else (f"{base}/{target}" if base else target)
    parts: list[str] = []
    for part in joined.split("/"):
        if part == "..":
            if not parts:
                return None  # above the project
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    path = "/".join(parts)
    for candidate in (path, f"{path}.md", f"{path}/_index.md", f"{path}/index.md", f"{path}/README.md"):
        if candidate and candidate != rel and folder.exists(candidate):
            return candidate
    return None


def _clean(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text).lower().split())


_REF_NUMBER = re.compile(r"(?:^|(?<=\s))(?:(?:ADR|RFC)\s*[-_ ]?\s*|#)?0*(\d{1,5})\b", re.I)


def _refs(sentences: list[str], links: list[tuple[str, str]], verb: re.Pattern[str]) -> list[str]:
    """The references of the sentences that start with `verb`: their links' targets, else
    the ADR numbers they name ("ADR-0019", "#13", "20. User models")."""
    out: list[str] = []
    for sentence in sentences:
        head = verb.match(sentence)
        if not head:
            continue
        plain = _clean(sentence)
        targets = [t for w, t in links if _clean(w) and _clean(w) in plain]
        if not targets:
            targets = [f"number:{int(m.group(1))}" for m in _REF_NUMBER.finditer(sentence[head.end():])][:3]
        out += [t for t in targets if t not in out]
    return out


def document(rel: str, parsed: Any, folder: Folder | None = None) -> Document:
    """The document an ADR's parsed text makes, or NotIndexed (deliberate: a template, a
    stub, an index page, not an ADR)."""
    rel = normalize(rel)
    folder = folder or Folder()
    found, status_text = fields(parsed)
    raw_status = " ".join(found.get("status", "").split())
    title = parsed.title
    why = _is_template(rel, title, raw_status)
    if why:
        raise NotIndexed(why, deliberate=True)
    state = status_of(raw_status)
    stem = stem_of(rel)
    name = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    if name in INDEX_NAMES and not state and (len(folder.files) > 1 or folder.subfolders):
        raise NotIndexed("not an ADR: the folder's index page (no status of its own); its ADRs are indexed one by one",
                         deliberate=True)
    if is_stub(parsed):
        raise NotIndexed("an empty ADR: no section has text of its own (a stub)", deliberate=True)
    number, bare = number_of(rel, title or stem)
    has_heading = any(ADR_HEADINGS.match(_heading_key(s.heading)) for s in parsed.sections if 2 <= s.level <= 3)
    beside_index = name not in INDEX_NAMES and any(f.rsplit(".", 1)[0].lower() in INDEX_NAMES for f in folder.files)
    if not state and number is None and not _DATED_NAME.match(stem) and not has_heading and not beside_index:
        raise NotIndexed("not an ADR: no status, number or ADR section (Context, Decision, Consequences, ...)",
                         deliberate=True)
    if not title or bare.strip().lower() in ("title", "adr title", "untitled"):
        bare = re.sub(r"^[\d_-]+", "", stem).replace("-", " ").replace("_", " ").strip() or stem
    label = "RFC" if re.match(r"^\W*RFC\b", title or "") or stem.lower().startswith("rfc") else "ADR"
    shown = f"{label} {number}: {bare}" if number is not None else bare
    said = [raw_status, status_text]
    if found.get("superseded by") and not _PLACEHOLDER.match(found["superseded by"]) and _clean(found["superseded by"]) not in ("n a", "none"):
        said.append(f"Superseded by {found['superseded by']}")
    sentences = _sentences("\n".join(said))
    successors = [p for ref in _refs(sentences, parsed.links, SUCCESSOR) if (p := resolve(rel, ref, folder))]
    state = status_of("\n".join(said)) or state
    record, reason = _lifecycle(state or "accepted", raw_status, successors, sentences)
    doc = Document(path=rel, kind="adr", id=doc_id(rel, "adr"), category="decision", title=shown,
                   tags=_tags(parsed.meta, found), record_status=record, status=raw_status[:80],
                   successors=successors[:1] if record == "retired" else [], state=state or "accepted", reason=reason)
    if found.get("supersedes") and not found["supersedes"].lower().startswith(("n/a", "none", "-")):
        sentences.append(f"Supersedes {found['supersedes']}")
    if doc.state in TOOK_EFFECT:
        doc.supersedes = [p for ref in _refs(sentences, parsed.links, SUPERSEDES) if (p := resolve(rel, ref, folder))][:5]
    doc.created_at, doc.updated_at = _dates(rel, parsed, found)
    doc.units = units(parsed, title)
    if not doc.units or doc.units[0].anchor:  # a head row: what a successor link names (`@file#`)
        doc.units.insert(0, Unit("", "", f"Status: {raw_status}" if raw_status else ""))
    return doc


def _lifecycle(state: str, raw: str, successors: list[str], sentences: list[str]) -> tuple[str, str]:
    """(record_status, why) for a state: retired only with a successor to point at."""
    said = f"ADR status: {raw}" if raw else f"ADR status: {state}"
    if state in ("superseded", "deprecated") and successors:
        return "retired", f"{said} (replaced by {successors[0]})"
    if state == "superseded":
        why = "its successor is not one of the project's files" if any(SUCCESSOR.match(s) for s in sentences) else "no successor named"
        return "archived", f"{said} ({why})"
    record = LIFECYCLE.get(state, "active")
    return record, (said if record != "active" else "")


def _tags(meta: dict[str, Any], found: dict[str, str]) -> list[str]:
    raw = meta.get("tags")
    tags = [str(t) for t in raw] if isinstance(raw, list) else re.split(r"[,;]", found.get("tags", ""))
    return list(dict.fromkeys(t.strip().lower() for t in tags if t.strip() and not _PLACEHOLDER.match(t)))[:12]


def _dates(rel: str, parsed: Any, found: dict[str, str]) -> tuple[str, str]:
    """(created_at, updated_at) from the file: its date fields, else its changelog's dated
    entries (first and last), else a date in its file name (`2023-06-26-x.md`)."""
    created = parse_date(found.get("created", "")) or parse_date(found.get("date", ""))
    updated = parse_date(found.get("updated", ""))
    log = [d for s in parsed.sections if _heading_key(s.heading) in CHANGELOG for b in s.blocks if (d := parse_date(b))]
    if not created and log:
        created = min(log)
    if not created:
        dated = _DATED_NAME.match(stem_of(rel))
        if dated:
            created = _day(int(dated.group(1)), int(dated.group(2)), int(dated.group(3) or 1))
    if log and max(log) > (updated or ""):
        updated = max(log)
    return created or updated, max(updated, created)


def supersedes(rel: str, parsed: Any, folder: Folder | None = None) -> list[str]:
    """The project paths of the ADRs this file replaces ("Supersedes [1. x](0001-x.md)",
    "supersedes ADR-0045", a `supersedes:` field), when it took effect itself (TOOK_EFFECT);
    [] otherwise (a proposal, a rejected ADR), and for a file that is no ADR."""
    try:
        return document(rel, parsed, folder).supersedes
    except NotIndexed:
        return []


def replaced_by(supersedes_of: dict[str, list[str]], active: set[str]) -> dict[str, str]:
    """Across files: each ADR that a newer one says it supersedes -> that newer one (the
    last by path when several do). `supersedes_of`: ADR -> what it supersedes (as
    `supersedes` gives it); `active`: the ADRs counted. An ADR never replaces itself."""
    out: dict[str, str] = {}
    for newer in sorted(supersedes_of):
        if newer not in active:
            continue
        for old in supersedes_of[newer]:
            if old != newer:
                out[old] = newer
    return out
