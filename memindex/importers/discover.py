"""What a project already has that memindex can index in place: `memindex init` finds it,
says it (with counts), registers the ADR and runbook folders, and offers the rest.

- ADR folders anywhere common, nested ones included: the one adr-tools' `.adr-dir` names,
  and folders named like ADR_NAMES (`docs/adr`, `doc/adr`, `docs/decisions`,
  `docs/architecture/decisions`, `docs/references/architecture`,
  `architecture-decision-record(s)`, `adr`, `decisions`, `rfcs`, ...) that hold
  ADR-shaped files (a numbered or dated name, or a status line, table or section);
- runbook folders (`runbooks`, `docs/runbooks`, `ops`, `operations`, `playbooks`, `sops`, ...)
  that hold Markdown pages, and `alerts` (or `incidents`, `troubleshooting`) folders of pages
  shaped as runbooks (Diagnosis, Mitigation, ... sections);
- CLAUDE.md / AGENTS.md, and Claude Code's auto memory: offered, not registered (opt-in:
  Claude Code already puts CLAUDE.md into every session, and MEMORY.md's first lines; the
  auto memory is outside the repository and needs the user's own setting).

The walk is bounded (FIND_MAX_DIRS folders, FIND_MAX_DEPTH levels, no hidden, vendored or
build folders, no links), and so is what it reads of a file (its first FIND_HEAD_BYTES).
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path

from ..defaults import DOC_SKIP_DIRS, DOC_SUFFIXES, FIND_HEAD_BYTES, FIND_MAX_DEPTH, FIND_MAX_DIRS, FIND_SAMPLE
from ..store import documents as docs
from ..store.paths import check_doc_path
from ..text.render import shown_path

ADR_NAMES = frozenset({
    "adr", "adrs", "decisions", "decision-records", "decision_records", "decision-log", "architecture-decisions",
    "architecture-decision-record", "architecture-decision-records", "architectural-decision-records",
    "design-decisions", "rfc", "rfcs",
})
ADR_PATHS = ("docs/adr", "doc/adr", "docs/decisions", "docs/architecture/decisions", "docs/references/architecture",
             "architecture/decisions", "docs/architecture/adr")
RUNBOOK_NAME = re.compile(r"(^|[-_])(runbooks?|playbooks?|sops?)($|[-_])", re.I)  # runbooks, deprecated_runbooks, sop
OPS_NAMES = frozenset({"ops", "operations"})  # generic names: at least two pages
ALERT_NAMES = frozenset({"alerts", "alerting", "incidents", "oncall", "on-call", "troubleshooting"})  # ... shaped as runbooks
_RUNBOOK_TEXT = re.compile(r"(?im)^#{2,3}\s*(diagnosis|mitigation|remediation|resolution|symptoms|troubleshooting|impact|procedure)\b")
INSTRUCTION_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md")
_ADR_NAME = re.compile(r"^(?:(?:[a-z]+-)?(?:adr|rfc)[-_ ]?)?\d{1,5}[-_ .]|^\d{4}-\d{2}(?:-\d{2})?-|^(?:[a-z]+-)?adr-", re.I)
_ADR_TEXT = re.compile(r"(?im)^\s*(?:[-*]\s*)?(?:\*\*)?(?:status|state)(?:\*\*)?\s*:|\|\s*(?:status|state)\s*\||^#{1,3}\s*status\s*$")


@dataclass
class Found:
    """One folder (or file) to index, or to offer."""

    kind: str  # adr, runbook, claude-md, claude-memory
    path: str  # relative to the project (absolute for the auto memory)
    files: int  # Markdown files it holds
    registered: bool = False  # already in documents.paths
    opt_in: bool = False  # offered only (its command registers it)
    command: str = ""

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def line(self) -> str:
        what = {"adr": "ADR file", "runbook": "runbook page", "claude-md": "section",
                "claude-memory": "auto memory note"}.get(self.kind, "file")
        text = f"{shown_path(self.path)}: {self.files} {what}{'s' if self.files != 1 else ''}"
        return text + (f": {self.command} (opt-in)" if self.opt_in else "")


def _md_files(folder: str, limit: int) -> list[str]:
    """Markdown files under a folder (recursive, bounded, no links, no hidden folders)."""
    out: list[str] = []
    todo = [folder]
    while todo and len(out) < limit:
        current = todo.pop()
        try:
            with os.scandir(current) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name.lower() not in DOC_SKIP_DIRS:
                    todo.append(entry.path)
            elif entry.name.lower().endswith(DOC_SUFFIXES):
                out.append(entry.path)
    return out[:limit]


def _head_matches(path: str, pattern: re.Pattern[str]) -> bool:
    """Does the file's first FIND_HEAD_BYTES match (read without following a link)?"""
    return bool(pattern.search(docs.read_head(path, FIND_HEAD_BYTES)))


def _adr_shaped(path: str) -> bool:
    return bool(_ADR_NAME.match(os.path.basename(path))) or _head_matches(path, _ADR_TEXT)


def _adr_folder_name(rel: str) -> bool:
    return rel.rsplit("/", 1)[-1].lower() in ADR_NAMES or rel in ADR_PATHS


def find(project: Path, registered: dict[str, str] | None = None) -> list[Found]:
    """The ADR and runbook folders of a project (outermost first, none inside another),
    each with its Markdown files counted; then CLAUDE.md / AGENTS.md and the auto memory,
    offered. `registered`: documents.paths as they are (marked, never offered twice)."""
    registered = registered or {}
    root = str(project)
    named = _adr_dir_file(project)
    found: list[Found] = []
    taken: list[str] = []
    todo: deque[tuple[str, int]] = deque([("", 0)])
    seen = 0
    while todo and seen < FIND_MAX_DIRS:
        rel, depth = todo.popleft()
        seen += 1
        if rel and any(rel == t or rel.startswith(t + "/") for t in taken):
            continue
        full = os.path.join(root, rel) if rel else root
        kind = _kind_of(rel, full, named)
        if kind:
            found.append(Found(kind, rel, len(docs.walk(root, {rel: kind})), registered=_covered(rel, registered)))
            taken.append(rel)
            continue
        if depth >= FIND_MAX_DEPTH:
            continue
        try:
            with os.scandir(full) as it:
                subs = sorted(e.name for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
        except OSError:
            continue
        todo += [(f"{rel}/{n}" if rel else n, depth + 1) for n in subs if n.lower() not in DOC_SKIP_DIRS and n.isprintable()]
    found.sort(key=lambda f: f.path)
    for name in INSTRUCTION_FILES:
        if os.path.isfile(os.path.join(root, name)) and not os.path.islink(os.path.join(root, name)):
            found.append(Found("claude-md", name, _sections(root, name), registered=_covered(name, registered), opt_in=True,
                               command=f"memindex import claude-md {name}"))
    from ..store.automemory import default_folder

    auto = default_folder(project)
    notes = [n for n in (os.listdir(auto) if auto.is_dir() else []) if n.lower().endswith(DOC_SUFFIXES) and not n.startswith(".")]
    if notes:
        found.append(Found("claude-memory", str(auto), len(notes), opt_in=True, command="memindex import claude-memory"))
    return found


def _sections(root: str, name: str) -> int:
    """The sections of an instruction file that have text (what `import claude-md` indexes)."""
    from ..store.interpret import load

    try:
        doc, _ = load(root, name, "claude-md")
    except docs.NotIndexed:
        return 0
    return sum(1 for u in doc.units if u.text and "~" not in u.anchor)


def _covered(rel: str, registered: dict[str, str]) -> bool:
    return any(rel == p or rel.startswith(p.rstrip("/") + "/") or p in (".", "./") for p in registered)


def _kind_of(rel: str, full: str, named: str | None) -> str:
    """`adr` or `runbook` when this folder is one to index, else ""."""
    if not rel:
        return ""
    name = rel.rsplit("/", 1)[-1].lower()
    if rel == named or _adr_folder_name(rel) or name == "architecture":
        if name == "architecture" and rel != named and rel not in ADR_PATHS:  # a common name: ADRs directly in it, two at least
            files = [f for f in _md_files(full, FIND_SAMPLE) if os.path.dirname(f) == full]
            return "adr" if sum(1 for f in files if _adr_shaped(f)) >= 2 else ""
        return "adr" if any(_adr_shaped(f) for f in _md_files(full, FIND_SAMPLE)) else ""
    if RUNBOOK_NAME.search(name) or name in OPS_NAMES or name in ALERT_NAMES:
        pages = [f for f in _md_files(full, FIND_SAMPLE) if os.path.basename(f).rsplit(".", 1)[0].lower() not in docs.INDEX_NAMES]
        if name in ALERT_NAMES:  # a common word: pages shaped as runbooks (Diagnosis, Mitigation, ...), two at least
            pages = [f for f in pages if _head_matches(f, _RUNBOOK_TEXT)]
        return "runbook" if len(pages) >= (1 if RUNBOOK_NAME.search(name) else 2) else ""
    return ""


def _adr_dir_file(project: Path) -> str | None:
    """The folder adr-tools' `.adr-dir` names, when it is a path inside the project."""
    from ..store import rootfs
    from ..errors import UnsafeFile

    try:
        raw = rootfs.read(str(project / ".adr-dir"), 4096)
    except (UnsafeFile, OSError):
        return None
    line = (raw or b"").decode("utf-8", "replace").strip().splitlines()
    rel = line[0].strip().strip("/") if line else ""
    if not rel or check_doc_path(rel):
        return None
    real = os.path.realpath(project / rel)
    return docs.normalize(rel) if real.startswith(os.path.realpath(project) + os.sep) and os.path.isdir(real) else None
