"""The documents' part of a sync (memindex/store/documents.py): the registered files
walked, diffed by stat against the `sources` table, and each changed file's sections put
in as `documents` rows, inside the caller's transaction and lock.

A registered file that is not indexed keeps a `sources` row with the reason, so it is not
read again until it changes, and `status`, `doctor` and the imports can name it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from ..defaults import DOC_MAX_BYTES
from ..store import documents as docs
from ..store.interpret import load as load_document
from ..store.files import Memory
from ..store.secrets import without_secrets
from ..store.paths import FileStat, project_of
from . import rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config import Config


@dataclass
class DocReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # file -> why it is not indexed (new this sync)
    problems: dict[str, str] = field(default_factory=dict)  # registered path -> why it cannot be read
    dirs: dict[str, int] = field(default_factory=dict)  # every folder walked -> its mtime_ns
    files: int = 0  # documents registered (indexed or not)
    racy: int = 0  # files stored under the racy-stat rule (read again next sync)

    def summary(self, not_indexed: int) -> dict[str, object]:
        return {"added": self.added, "updated": self.updated, "removed": self.removed, "files": self.files,
                "not_indexed": not_indexed, "skipped": dict(self.skipped), "problems": dict(self.problems)}


def registered(cfg: Config) -> dict[str, str]:
    """The registered paths -> kind (`documents.paths`)."""
    return dict(cfg["documents.paths"])  # type: ignore[call-overload]


def stored(conn: sqlite3.Connection) -> dict[str, tuple[FileStat, str]]:
    return {p: (FileStat(m, s, c), k) for p, k, m, s, c in
            conn.execute("SELECT path, kind, mtime_ns, size, ctime_ns FROM sources")}


def _range(path: str) -> tuple[str, str]:
    """The `documents.path` range of one file's rows: `@file#` up to `@file$` ('$' follows '#')."""
    return f"{docs.DOC_MARK}{path}#", f"{docs.DOC_MARK}{path}$"


def remove_file(conn: sqlite3.Connection, path: str) -> int:
    lo, hi = _range(path)
    paths = [p for (p,) in conn.execute("SELECT path FROM documents WHERE path >= ? AND path < ?", (lo, hi))]
    return rows.remove(conn, paths)


def memories(doc: docs.Document, st: FileStat) -> list[Memory]:
    """One index row (as a Memory) per unit of the document; secrets redacted as a memory
    file's are."""
    out = []
    successors = [f"{docs.DOC_MARK}{s}#" for s in doc.successors]
    stem = doc.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if stem.lower() in ("index", "_index", "readme") and "/" in doc.path:
        stem = doc.path.rsplit("/", 2)[-2]
    named = _words(stem) - _words(doc.title)  # the file's name, where it says what the title does not
    for unit in doc.units:
        problems = list(doc.problems)
        title, tags, body = without_secrets(doc.title, list(doc.tags), unit.text, problems)
        out.append(Memory(
            path=doc.row_path(unit), id=doc.id, category=doc.category, title=title, tags=tags, body=body,
            record_status=doc.record_status, created_at=doc.created_at, updated_at=doc.updated_at,
            related_files=[doc.path], problems=problems, successors=successors if doc.record_status != "active" else [],
            heading="\n".join(x for x in (unit.heading, stem if named else "") if x),
        ))
    return out


def _words(text: str) -> set[str]:
    from ..text.identifiers import camel_parts

    out: set[str] = set()
    for word in text.replace("_", " ").replace("-", " ").replace(".", " ").split():
        out.update(camel_parts(word) or [word.lower()])
    return {w for w in out if not w.isdigit()}


def sync_documents(conn: sqlite3.Connection, root: str, cfg: Config, racy, rebuild: bool = False,  # type: ignore[no-untyped-def]
                   only: list[str] | None = None) -> DocReport:
    """Bring the documents' rows in step with the registered files (`only`: just these
    project paths, as the PostToolUse hook names them). `racy` is sync's racy-stat rule."""
    report = DocReport()
    project = project_of(root)
    paths = registered(cfg)
    walked: list[str] = []
    current = docs.walk(project, paths, report.problems, walked)
    report.files = len(current)
    import os

    for folder in walked:
        try:
            report.dirs[folder] = os.stat(os.path.join(project, folder)).st_mtime_ns
        except OSError:
            report.dirs[folder] = 0
    before = {} if rebuild else stored(conn)
    if only is not None:
        wanted = set(only)
        current = {p: v for p, v in current.items() if p in wanted}
        before = {p: v for p, v in before.items() if p in wanted}
    if rebuild:
        conn.execute("DELETE FROM sources")
    unlisted = {p for p, why in report.problems.items() if why.startswith("cannot list")}
    for path in sorted(set(before) - set(current)):
        if any(path.startswith(u + "/") for u in unlisted):
            continue  # a folder that could not be listed keeps what the index knew
        report.removed += remove_file(conn, path) > 0
        conn.execute("DELETE FROM sources WHERE path = ?", (path,))
    for path, (st, kind) in sorted(current.items()):
        old = before.get(path)
        if old == (st, kind):
            continue
        try:
            doc, st = load_document(project, path, kind, DOC_MAX_BYTES)
        except docs.NotIndexed as exc:
            remove_file(conn, path)
            report.skipped[path] = exc.reason
            _record(conn, path, kind, racy(st), None, exc.reason)
            continue
        remove_file(conn, path)
        st = racy(st)
        report.racy += st.size == -1
        for mem in memories(doc, st):
            rows.upsert(conn, mem, st)
        _record(conn, path, kind, st, doc.title, None)
        if old is None:
            report.added += 1
        elif not (old[0].size == -1 and (old[0].mtime_ns, old[0].ctime_ns) == (st.mtime_ns, st.ctime_ns)):
            report.updated += 1  # (a racy file read again with a stat that did not move is no change)
    return report


def _record(conn: sqlite3.Connection, path: str, kind: str, st: FileStat, title: str | None, error: str | None) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO sources(path, kind, mtime_ns, size, ctime_ns, title, error) VALUES (?,?,?,?,?,?,?)",
        (path, kind, st.mtime_ns, st.size, st.ctime_ns, title, error),
    )


def not_indexed(conn: sqlite3.Connection) -> dict[str, str]:
    """Every registered file that is not indexed -> why."""
    return dict(conn.execute("SELECT path, error FROM sources WHERE error IS NOT NULL"))


