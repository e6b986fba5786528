"""Architecture Decision Records (Markdown) as `decision` memories.

Reads both common styles:
- Nygard / adr-tools: `# 1. Title`, `Date: 2024-01-15`, `## Status` (with adr-tools'
  "Superseded by [2. Title](0002-title.md)" and "Supersedes ..." links), `## Context`,
  `## Decision`, `## Consequences`;
- MADR 2.x (and log4brains): `* Status: accepted`, `* Date:`, `* Tags:` bullets under the
  title; MADR 3.x/4.x: a front matter `status:`/`date:`; then `## Context and Problem
  Statement`, `## Decision Drivers`, `## Considered Options`, `## Decision Outcome`
  (`Chosen option: "X", because Y`, `### Consequences` or `### Positive/Negative
  Consequences`), `## Pros and Cons of the Options`.

Status -> lifecycle (the memory's `record_status`): accepted and proposed stay active;
superseded is retired and linked to its replacement (as `memindex retire --replaced-by`);
deprecated and rejected are archived (kept for the record, out of search and injection,
and never deleted by gc: there is no replacement to point to).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path

from ..defaults import ADR_FOLDERS, IMPORT_MAX_FILES, TITLE_MAX
from ..errors import WriteError
from . import markdown as md
from .engine import Planned, Report, Skipped, read_or_skip
from .source import make_source, read_text, rehash, source_path, stable_id

KIND = "adr"
# first word(s) of an ADR status -> the decision memory's content.status
STATUS_WORDS: tuple[tuple[str, str], ...] = (
    (r"supersed|replaced", "superseded"),
    (r"deprecat|obsolete|retired", "deprecated"),
    (r"reject|declin|withdrawn|abandon", "rejected"),
    (r"propos|draft|open|pending|review|discuss|wip", "proposed"),
    (r"accept|approv|adopt|decided|done|agreed|implement|active|final", "accepted"),
)
LIFECYCLE = {"superseded": "retired", "deprecated": "archived", "rejected": "archived"}
_SKIP_NAMES = re.compile(r"^(readme|index|template|adr-template|_.*|\..*)\.md$|template", re.IGNORECASE)
_NUMBER = re.compile(r"^(\d+)[-_ .]")
_TITLE_NUMBER = re.compile(r"^(?:ADR[-_ ]?)?(\d+)\s*[.:)\-]\s*", re.IGNORECASE)
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_FIELD = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?(status|date|deciders|decision-makers|tags|technical story)(?:\*\*)?\s*:\s*(.*)$", re.IGNORECASE)


@dataclass
class Adr:
    path: Path
    number: int | None
    title: str
    status: str  # the memory's content.status (or "rejected")
    raw_status: str
    date: str | None
    context: str
    decision: str
    alternatives: list[dict[str, str]] = field(default_factory=list)
    rationale: list[str] = field(default_factory=list)
    consequences: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)  # link targets or numbers
    supersedes: list[str] = field(default_factory=list)


def find_folders(project: Path) -> list[Path]:
    """The ADR folders of a project: the one adr-tools' `.adr-dir` names, then the usual
    places (ADR_FOLDERS) that exist, each inside the project."""
    found: list[Path] = []
    candidates = list(ADR_FOLDERS)
    try:
        named = read_text(project / ".adr-dir").strip().splitlines()
        if named and named[0].strip():
            candidates.insert(0, named[0].strip())
    except WriteError:
        pass
    real = project.resolve()
    for rel in candidates:
        folder = (project / rel).resolve()
        if folder.is_dir() and folder.is_relative_to(real) and folder not in found:
            found.append(folder)
    return found


def adr_files(folder: Path) -> list[Path]:
    """The Markdown files of an ADR folder that may be ADRs (not README, index or a
    template), sorted, at most IMPORT_MAX_FILES."""
    try:
        names = sorted(e.name for e in folder.iterdir() if e.name.lower().endswith(".md"))
    except OSError:
        return []
    return [folder / n for n in names if not _SKIP_NAMES.search(n)][:IMPORT_MAX_FILES]


def _status(raw: str) -> str:
    low = raw.lower()
    for pattern, status in STATUS_WORDS:
        if re.match(rf"\W*(?:{pattern})", low):
            return status
    return "accepted"


def _refs(text: str, verb: str) -> list[str]:
    """Link targets (or bare ADR numbers) after `verb` ("superseded by", "supersedes")."""
    out: list[str] = []
    for match in re.finditer(rf"{verb}\s*:?\s*(.*)", text, re.IGNORECASE):
        tail = match.group(1)
        targets = [t for _, t in md.links(tail)]
        if not targets:
            number = re.match(r"\W*(?:ADR[-_ ]?)?(\d+)", tail, re.IGNORECASE)
            targets = [number.group(1)] if number else []
        out += [t for t in targets if t not in out]
    return out


def _sentences(text: str) -> list[str]:
    items = md.bullets(text)
    return items or md.paragraphs(text)


def parse(path: Path, text: str) -> Adr:
    """An ADR, or WriteError naming what is missing."""
    meta, body = md.front_matter(text)
    secs = md.sections(body)
    fields: dict[str, str] = {k: str(v) for k, v in meta.items() if isinstance(v, (str, int))}
    if isinstance(meta.get("tags"), list):
        fields["tags"] = ",".join(map(str, meta["tags"]))  # type: ignore[arg-type]
    title_sec = next((s for s in secs if s.level == 1), None)
    for sec in secs:
        if sec.level <= 1:
            for line in sec.lines:
                found = _FIELD.match(line)
                if found and found.group(1).lower() not in fields:
                    fields[found.group(1).lower()] = found.group(2).strip()
    by_name: dict[str, md.Section] = {}
    for sec in secs:
        by_name.setdefault(sec.heading.lower(), sec)
    status_sec = by_name.get("status")
    raw_status = fields.get("status") or (status_sec.text if status_sec else "")
    status_text = raw_status + ("\n" + status_sec.text if status_sec and fields.get("status") else "")
    title = title_sec.heading if title_sec else ""
    number_match = _NUMBER.match(path.name) or _TITLE_NUMBER.match(title)
    if number_match and len(number_match.group(1)) >= 6:  # log4brains' 20200926-slug.md: a date, not a number
        number_match = None
    title = _TITLE_NUMBER.sub("", title, count=1).strip() or title
    context_sec = next((s for s in secs if s.level >= 2 and re.match(r"context|problem", s.heading, re.I)), None)
    decision_sec = next((s for s in secs if s.level >= 2 and re.match(r"decision( outcome)?$|decision outcome", s.heading, re.I)), None)
    if decision_sec is None or not title:
        missing = [w for w, ok in (("'# Title' heading", title), ("'## Decision' or '## Decision Outcome' section", decision_sec)) if not ok]
        raise WriteError("not a readable ADR", [f"it has no {m}" for m in missing])
    context = md.prose(context_sec.text) if context_sec else ""
    drivers = next((s for s in secs if re.match(r"decision drivers", s.heading, re.I)), None)
    if drivers and md.bullets(drivers.text):
        context = (context + "\n\nDecision drivers: " + "; ".join(md.bullets(drivers.text))).strip()
    decision = md.prose(decision_sec.text)
    adr = Adr(
        path=path, number=int(number_match.group(1)) if number_match else None, title=title,
        status=_status(md.plain(raw_status)), raw_status=md.plain(raw_status.split("\n")[0]),
        date=_iso_date(fields.get("date", "")), context=context, decision=decision or md.plain(decision_sec.heading),
        tags=[t.strip() for t in re.split(r"[,;]", fields.get("tags", "")) if t.strip()],
        superseded_by=_refs(status_text, r"superseded\s+by"), supersedes=_refs(status_text, r"\bsupersedes"),
    )
    _outcome(adr, secs, decision_sec)
    return adr


def _iso_date(text: str) -> str | None:
    """The ADR's date as `created_at`: a real day, not after today (else none: the memory
    is then dated by its import)."""
    found = _DATE.search(text)
    if not found:
        return None
    try:
        day = date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
    except ValueError:
        return None
    return f"{day.isoformat()}T00:00:00Z" if day <= datetime.now(timezone.utc).date() else None


def _outcome(adr: Adr, secs: list[md.Section], decision_sec: md.Section) -> None:
    """Chosen option, alternatives with the reasons against them, rationale, consequences."""
    chosen, because = _chosen(" ".join(md.paragraphs(decision_sec.text)))
    if because:
        adr.rationale.append(because)
    elif chosen:  # "Chosen option: "X", because" and the reasons as a list
        adr.rationale += md.bullets(decision_sec.text)
    options_sec = next((s for s in secs if re.match(r"considered options", s.heading, re.I)), None)
    pros = {s.heading.lower(): s for s in secs if len(s.path) >= 2 and re.match(r"pros and cons", s.path[-2], re.I)}
    for option in md.bullets(options_sec.text) if options_sec else []:
        name = option.strip()
        if chosen and (_key(name) == _key(chosen) or _key(name).startswith(_key(chosen))):
            if name.lower() in pros:
                adr.rationale += [b for b in md.bullets(pros[name.lower()].text) if b.lower().startswith("good")]
            continue
        alt = {"option": name}
        against = [b for b in md.bullets(pros[name.lower()].text) if b.lower().startswith("bad")] if name.lower() in pros else []
        if against:
            alt["rejected_reason"] = "; ".join(against)
        adr.alternatives.append(alt)
    for sec in secs:
        if sec.level >= 2 and re.match(r"(positive |negative )?consequences", sec.heading, re.I):
            items = _sentences(sec.text)
            if sec.heading.lower().startswith(("positive", "negative")):
                items = [f"{sec.heading.split()[0]}: {i}" for i in items]
            adr.consequences += items


def _chosen(text: str) -> tuple[str | None, str | None]:
    """MADR's `Chosen option: "X", because Y` as (X, Y); X may be unquoted."""
    found = re.search(r"chosen option\s*:?\s*(.*)", text, re.IGNORECASE | re.DOTALL)
    if not found:
        return None, None
    rest = found.group(1).strip()
    quoted = re.match(r"[\"“'`]([^\"”'`]+)[\"”'`]\s*(.*)", rest, re.DOTALL)
    if quoted:
        chosen, tail = quoted.group(1), quoted.group(2)
    else:
        chosen, comma, tail = rest.partition(",")
        tail = comma + tail
    because = re.match(r"[,.;:]?\s*because\b\s*(.*)", tail, re.IGNORECASE | re.DOTALL)
    reason = because.group(1).strip().rstrip(".").strip() if because else ""
    return chosen.strip().rstrip(".") or None, reason or None


def _key(option: str) -> str:
    """An option's name for comparison: lowercase words only."""
    return " ".join(re.findall(r"[a-z0-9]+", option.lower()))


def to_planned(adr: Adr, project: Path, text: str) -> Planned:
    label = source_path(adr.path, project)
    heading = f"ADR {adr.number}: {adr.title}" if adr.number is not None else adr.title
    if len(heading) > TITLE_MAX:
        heading = heading[: TITLE_MAX - 1].rsplit(" ", 1)[0] + "…"
    content: dict[str, object] = {
        "status": "deprecated" if adr.status == "rejected" else adr.status,
        "context": adr.context, "decision": adr.decision,
        "alternatives": adr.alternatives, "rationale": adr.rationale, "consequences": adr.consequences,
    }
    if adr.raw_status and adr.raw_status.lower() != content["status"]:
        content["adr_status"] = adr.raw_status[:200]
    data: dict[str, object] = {
        "title": heading, "tags": ["adr", *adr.tags][:12], "content": content, "related_files": [],
        "confidence": 0.9 if adr.status == "accepted" else 0.6,
        "source": make_source(KIND, adr.path, project, text),
    }
    if adr.date:
        data["created_at"] = adr.date
    status = LIFECYCLE.get(adr.status, "active")
    reason = None if status == "active" else f"ADR status: {adr.raw_status or adr.status}"[:300]
    return Planned("decision", stable_id("adr", adr.path.stem), data, label, status, reason)


def plan(project: Path, folders: list[Path], report: Report) -> list[Planned]:
    """The decision memories of every ADR in `folders`, superseded ones linked to their
    replacement; unreadable or malformed files go to report.skipped, other Markdown
    files (not ADRs) to report.ignored."""
    parsed: list[tuple[Adr, Planned]] = []
    for folder in folders:
        files = adr_files(folder)
        if len(files) >= IMPORT_MAX_FILES:
            report.warnings.append(f"{source_path(folder, project)}: only the first {IMPORT_MAX_FILES} files were read")
        for path in files:
            label = source_path(path, project)
            text = read_or_skip(report, path, label)
            if text is None:
                continue
            try:
                adr = parse(path, text)
            except WriteError as exc:
                bucket = report.skipped if _NUMBER.match(path.name) else report.ignored
                bucket.append(Skipped(label, str(exc.args[0]), exc.problems))
                continue
            parsed.append((adr, to_planned(adr, project, text)))
    _link_supersedes(parsed)
    return [p for _, p in parsed]


def _link_supersedes(parsed: list[tuple[Adr, Planned]]) -> None:
    """Point each superseded ADR at its replacement: by its own "Superseded by" link or
    number, or by another ADR's "Supersedes" link to it."""
    by_path = {adr.path.resolve(): planned for adr, planned in parsed}
    by_number = {adr.number: planned for adr, planned in parsed if adr.number is not None}

    def find(adr: Adr, ref: str) -> Planned | None:
        if ref.isdigit():
            return by_number.get(int(ref))
        target = ref.split("#")[0]
        return by_path.get((adr.path.parent / target).resolve()) if target else None

    for adr, planned in parsed:
        for ref in adr.supersedes:
            old = find(adr, ref)
            if old is not None and old is not planned:
                old.status, old.replaced_by = "retired", planned.label
                old.reason = old.reason or f"Superseded by {planned.data['title']}"
                old.data["content"]["status"] = "superseded"  # type: ignore[index]
                old.data["source"] = rehash(old.data["source"], "superseded by " + planned.label)  # type: ignore[arg-type]
    for adr, planned in parsed:
        for ref in adr.superseded_by:
            new = find(adr, ref)
            if new is not None and new is not planned:
                planned.replaced_by = new.label
                planned.reason = f"Superseded by {new.data['title']}"[:300]
                break
