"""Free-form Markdown notes (CLAUDE.md sections, Claude Code's auto memory, a note dropped
into a category folder) as memories: which category a note is, and its content.

The category rule, in order, on the note's title, headings and declared type (never its
whole body, where "deploy" or "never" often appear in passing):
1. a Claude Code memory of type `user` is a preference (it describes the person);
2. runbook words (how to, steps, deploy, release, setup, install, troubleshoot, debug,
   commands, workflow, rollback) make a runbook, if the note has steps (list items or
   code lines) to give it;
3. decision words (decision, decided, chose, architecture, adr, switched to) a decision;
4. debt words (tech debt, todo, known issue, fixme, hack, workaround, flaky, legacy) tech debt;
5. hard-rule words (must, never, do not, don't, cannot, required, forbidden, not allowed,
   constraint, limit, rule, policy, security, gotcha, pitfall, caveat, important, warning,
   freeze, deadline), in the
   headings or in the note's first sentence, a constraint;
6. anything else a preference: most notes say how the team likes things done, and a
   preference claims less than a constraint (which ranks above it in ties).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..defaults import CATEGORIES, TITLE_MAX
from . import markdown as md
from .engine import Planned
from .source import make_source, source_path, stable_id

RUNBOOK = re.compile(r"\b(how ?to|runbook|steps?|procedures?|deploy\w*|releas\w*|set ?up|install\w*|troubleshoot\w*|debug\w*|commands?|workflows?|rollback|recover\w*)\b", re.I)
DECISION = re.compile(r"\b(decisions?|decided|chose|chosen|architecture|adrs?|switched to)\b", re.I)
DEBT = re.compile(r"\b(tech(nical)? debt|todos?|known (issues?|bugs?)|fixme|hacks?|workarounds?|flaky|legacy)\b", re.I)
HARD = re.compile(r"\b(must|never|do not|don't|cannot|can't|required|forbidden|not allowed|constraints?|limits?|limitations?|rules?|polic(y|ies)|security|gotchas?|pitfalls?|caveats?|important|warning|freeze|deadlines?)\b", re.I)
_WHY = re.compile(r"^\s*(?:[-*]\s*)?\*{0,2}why\*{0,2}\s*:\*{0,2}\s*(.*)$", re.I)
_HOW = re.compile(r"^\s*(?:[-*]\s*)?\*{0,2}how to apply\*{0,2}\s*:\*{0,2}\s*(.*)$", re.I)
_STOP = frozenset("a an and or the of for to in on with by at is are be this that our we you it as from into".split())
BOILERPLATE = re.compile(r"this file provides guidance to (claude|agents?|ai)", re.I)


@dataclass
class Note:
    """One note: its heading path (the title), its Markdown body, and what a Claude Code
    memory file declares about itself."""

    path: Path
    headings: list[str]
    body: str
    section: str | None = None  # the heading path inside a file with several notes
    description: str = ""
    declared_type: str = ""  # Claude Code memory type: user, feedback, project, reference
    extra_tags: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        text = " > ".join(h for h in self.headings if h) or self.path.stem.replace("_", " ").replace("-", " ")
        return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1].rsplit(" ", 1)[0] + "…"


def split(body: str) -> tuple[str, str, str]:
    """(the note's text without its Why/How-to-apply lines, why, how to apply)."""
    keep, why, how = [], [], []
    for line in body.split("\n"):
        if (m := _WHY.match(line)):
            why.append(m.group(1))
        elif (m := _HOW.match(line)):
            how.append(m.group(1))
        else:
            keep.append(line)
    return "\n".join(keep), md.plain(" ".join(why)), md.plain(" ".join(how))


def steps(body: str) -> list[str]:
    """List items, else the lines of code blocks: what a runbook's steps can be."""
    items = md.bullets(body)
    if items:
        return items
    code, fenced = [], False
    for line in body.split("\n"):
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
        elif fenced and line.strip():
            code.append(line.strip())
    return code


def classify(note: Note, allowed: tuple[str, ...] = CATEGORIES, default: str = "preference") -> str:
    """The category of a note (the rule in the module docstring), among `allowed`."""
    label = " ".join([*note.headings, note.description, note.path.stem.replace("_", " ").replace("-", " ")])
    text, _, _ = split(note.body)
    first = re.split(r"(?<=[.!?])\s", md.prose(text), maxsplit=1)[0] if text.strip() else ""
    if note.declared_type == "user":
        order = []
    else:
        order = [
            ("runbook", bool(RUNBOOK.search(label)) and bool(steps(text))),
            ("decision", bool(DECISION.search(label))),
            ("tech_debt", bool(DEBT.search(label))),
            ("constraint", bool(HARD.search(label) or HARD.search(first))),
        ]
    for category, hit in order:
        if hit and category in allowed:
            return category
    return default


def content(category: str, note: Note) -> dict[str, object]:
    """The `content` of a `category` memory made from a note."""
    text, why, how = split(note.body)
    body = md.prose(text) or note.description or note.title
    if category == "runbook":
        out: dict[str, object] = {"trigger": note.description or note.title, "steps": steps(text)}
        rest = md.paragraphs(text)
        if rest:
            out["environment"] = " ".join(p for p in rest if not p.startswith(("```", "~~~")))[:2000]
    elif category == "decision":
        out = {"status": "accepted", "context": why or note.description, "decision": body}
    elif category == "tech_debt":
        out = {"status": "open", "priority": "medium", "description": body}
        if why:
            out["reason_deferred"] = why
    elif category == "constraint":
        strong = re.search(r"\b(MUST|NEVER|DO NOT|CRITICAL)\b", body)
        out = {"kind": "policy", "rule": body, "severity": "high" if strong else "medium", "active": True, "expires": None}
        if why:
            out["impact"] = [why]
    else:
        out = {"topic": note.title, "value": body, "strength": "default"}
        if why:
            out["reason"] = why
    if how:
        out["how_to_apply"] = how
    return out


def tags(note: Note, kind_tag: str) -> list[str]:
    """The kind's tag, the note's own tags, then the words of its headings."""
    out = [kind_tag, *note.extra_tags]
    for heading in note.headings:
        for word in re.findall(r"[a-z0-9][a-z0-9+#.-]*", heading.lower()):
            if word not in _STOP and len(word) > 1 and word not in out:
                out.append(word)
    return out[:8]


def to_planned(note: Note, kind: str, project: Path, category: str, id_prefix: str) -> Planned:
    """The memory of a note; its id is `id_prefix` and the slug of the file and section."""
    src = make_source(kind, note.path, project, "\0".join((note.title, note.description, note.body)), note.section)
    data: dict[str, object] = {
        "title": note.title, "tags": tags(note, kind), "content": content(category, note),
        "related_files": [], "confidence": 0.7, "source": src,
    }
    label = source_path(note.path, project) + (f" # {note.section}" if note.section else "")
    return Planned(category, stable_id(id_prefix, note.section or note.path.stem), data, label)


def from_sections(path: Path, text: str, drop_title: bool = True) -> list[Note]:
    """One note per section that has text of its own (a heading with only subsections
    gives none; its heading goes into its children's titles). The document's `# Title`
    is left out of the titles when it has subsections; boilerplate intros are skipped."""
    secs = md.sections(text)
    has_sub = any(s.level >= 2 for s in secs)
    notes: list[Note] = []
    seen: dict[str, int] = {}
    for sec in secs:
        body = sec.text
        if len(md.plain(body).split()) < 3 or BOILERPLATE.search(body):
            continue
        heads = [h for h in sec.path]
        if drop_title and has_sub and secs and any(s.level == 1 for s in secs):
            top = next(s.heading for s in secs if s.level == 1)
            if len(heads) > 1 and heads[0] == top:
                heads = heads[1:]
        label = " > ".join(heads) or path.name
        seen[label] = seen.get(label, 0) + 1
        section = label if seen[label] == 1 else f"{label} ({seen[label]})"
        notes.append(Note(path, heads or [path.stem], body, section=section))
    return notes
