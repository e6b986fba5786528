"""The documents' part of a sync (memindex/store/documents.py): the registered files
walked, diffed by stat against the `sources` table, and each changed file's sections put
in as `documents` rows, inside the caller's transaction and lock.

A registered file that is not indexed keeps a `sources` row with the reason, so it is not
read again until it changes, and `status`, `doctor` and the imports can name it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import os

from ..defaults import DOC_MAX_BYTES, DOC_POOL_MAX, DOC_POOL_MIN
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


AUTO_MEMORY = "~auto-memory"  # registered() key of Claude Code's auto memory folder (no project path is written so)


def registered(cfg: Config) -> dict[str, str]:
    """The registered paths -> kind (`documents.paths`), and AUTO_MEMORY -> `notes` when
    the user's own config turns on Claude Code's auto memory (`documents.claude_memory`:
    a repository's config cannot, config.LOOSER): what a change of makes the index stale."""
    out = dict(cfg["documents.paths"])  # type: ignore[call-overload]
    if cfg["documents.claude_memory"]:
        out[AUTO_MEMORY] = "notes"
    return out


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
            path=doc.row_path(unit), id=doc.id, category=unit.category or doc.category, title=title, tags=tags, body=body,
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


def apply(conn: sqlite3.Connection, root: str, cfg: Config, meta_before: dict, racy,  # type: ignore[no-untyped-def]
          rebuild: bool = False, only: list[str] | None = None) -> dict[str, object] | None:
    """Sync's documents part, inside its transaction: the rows of what changed, and (a full
    sync) the folders, files and stats the hooks' and search's freshness checks compare
    with. None when no document is registered nor was. `only`: just these project paths."""
    from . import fresh

    registered_now = registered(cfg)
    if not (registered_now or meta_before.get("doc_dirs") or rows.has_sources(conn)) or only == []:
        return None
    report = sync_documents(conn, root, cfg, racy, rebuild=rebuild, only=only)
    if only is None:
        # the stats as the walk left them; a file changed within the racy window (read or
        # not) leaves none, so the next check syncs again
        singles = sorted(p for p in registered_now if p not in report.dirs and p != AUTO_MEMORY)
        newest = [0]
        printed: list[int] | None = fresh.doc_fingerprint(root, report.dirs, singles, newest)
        if report.racy or racy(FileStat(newest[0], 0, newest[0])).size == -1:  # (sync's racy rule)
            printed = None
        from .db import set_meta

        set_meta(conn, doc_dirs=report.dirs, doc_singles=singles, doc_paths=registered_now, doc_fingerprint=printed)
    return report.summary(rows.count_not_indexed(conn))


def sync_documents(conn: sqlite3.Connection, root: str, cfg: Config, racy, rebuild: bool = False,  # type: ignore[no-untyped-def]
                   only: list[str] | None = None) -> DocReport:
    """Bring the documents' rows in step with the registered files (`only`: just these
    project paths, as the PostToolUse hook names them). `racy` is sync's racy-stat rule."""
    report = DocReport()
    project = project_of(root)
    paths = registered(cfg)
    auto = None
    if paths.pop(AUTO_MEMORY, None):
        from ..store.automemory import default_folder

        auto = str(default_folder(project))
    walked: list[str] = []
    current = docs.walk(project, paths, report.problems, walked, auto_memory=auto)
    report.files = len(current)
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
    changed: set[str] = set()
    to_read = [(path, kind, st) for path, (st, kind) in sorted(current.items()) if before.get(path) != (st, kind)]
    for (path, kind, st), loaded in zip(to_read, _loaded(project, to_read)):
        old = before.get(path)
        changed.add(path)
        _index_file(conn, path, kind, st, loaded, racy, report)
        if old is None:
            report.added += 1
        elif not (old[0].size == -1 and (old[0].mtime_ns, old[0].ctime_ns) == (st.mtime_ns, st.ctime_ns)):
            report.updated += 1  # (a racy file read again with a stat that did not move is no change)
    if changed or report.removed or rebuild:
        link_supersedes(conn, project, changed, racy, report)
    return report


def _load(project: str, path: str, kind: str) -> tuple[docs.Document, FileStat] | str:
    """One registered file read and interpreted, or why not (a value: it crosses processes)."""
    try:
        return load_document(project, path, kind, DOC_MAX_BYTES)
    except docs.NotIndexed as exc:
        return exc.reason


def _load_many(project: str, chunk: list[tuple[str, str]]) -> list[tuple[docs.Document, FileStat] | str]:
    return [_load(project, path, kind) for path, kind in chunk]


def _loaded(project: str, to_read: list[tuple[str, str, FileStat]]) -> list[tuple[docs.Document, FileStat] | str]:
    """What `_load` makes of each file, in order: in this process for a few files; in a pool
    of processes, one per core, for a cold build or a large change (parsing Markdown is most
    of a document's cost, and a sync holds no other work meanwhile). The pool's workers are
    started fresh ("spawn": nothing of this process, its open index included, is shared)."""
    cores = min(os.cpu_count() or 1, DOC_POOL_MAX)
    if len(to_read) >= DOC_POOL_MIN and cores >= 2:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        jobs = [(path, kind) for path, kind, _ in to_read]
        size = max(8, len(jobs) // (cores * 4))
        chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        try:
            with ProcessPoolExecutor(cores, mp_context=multiprocessing.get_context("spawn")) as pool:
                return [r for part in pool.map(_load_many, [project] * len(chunks), chunks) for r in part]
        except (OSError, RuntimeError, BrokenProcessPool):  # no processes here (a sandbox, a limit)
            pass
    return [_load(project, path, kind) for path, kind, _ in to_read]


def _index_file(conn: sqlite3.Connection, path: str, kind: str, st: FileStat,  # type: ignore[no-untyped-def]
                loaded: tuple[docs.Document, FileStat] | str, racy, report: DocReport) -> None:
    """One registered file's rows (or its reason into `sources`)."""
    if isinstance(loaded, str):
        remove_file(conn, path)
        report.skipped[path] = loaded
        _record(conn, path, kind, racy(st), None, loaded)
        return
    doc, st = loaded
    remove_file(conn, path)
    st = racy(st)
    report.racy += st.size == -1
    for mem in memories(doc, st):
        rows.upsert(conn, mem, st)
    _record(conn, path, kind, st, doc.title, None, doc.supersedes)


def link_supersedes(conn: sqlite3.Connection, project: str, changed: set[str], racy, report: DocReport) -> None:  # type: ignore[no-untyped-def]
    """An ADR that took effect and says it supersedes another (store/adr.py `supersedes`, kept in
    `sources.supersedes`) retires that one, pointing at it, unless that one names its own
    successor. Across files, so after the changed ones are read: a link that went away (the
    newer ADR edited or removed) gives its old ADR back its own state by reading it again."""
    import json

    from ..store.adr import replaced_by

    adrs = {p: json.loads(s) if s else [] for p, s in
            conn.execute("SELECT path, supersedes FROM sources WHERE kind = 'adr' AND error IS NULL")}
    links = {old: new for old, new in replaced_by(adrs, set(adrs)).items() if old in adrs}
    before = {}
    row = conn.execute("SELECT value FROM meta WHERE key = 'doc_links'").fetchone()
    if row:
        try:
            before = dict(json.loads(row[0]))
        except (ValueError, TypeError):
            before = {}
    for old in sorted(set(before) | set(links)):
        if before.get(old) == links.get(old) and old not in changed:
            continue
        if old not in changed and old in adrs:  # its rows carry the link that went away: read it again
            st = conn.execute("SELECT mtime_ns, size, ctime_ns FROM sources WHERE path = ?", (old,)).fetchone()
            _index_file(conn, project, old, "adr", FileStat(*st), racy, report)
        if old in links:
            lo, hi = _range(old)
            conn.execute(
                "UPDATE documents SET record_status = 'retired', successors = ? WHERE path >= ? AND path < ?"
                " AND NOT (record_status = 'retired' AND successors IS NOT NULL)",
                (json.dumps([f"{docs.DOC_MARK}{links[old]}#"]), lo, hi),
            )
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('doc_links', ?)", (json.dumps(links, sort_keys=True),))


def _record(conn: sqlite3.Connection, path: str, kind: str, st: FileStat, title: str | None, error: str | None,
            supersedes: list[str] | None = None) -> None:
    import json

    conn.execute(
        "INSERT OR REPLACE INTO sources(path, kind, mtime_ns, size, ctime_ns, title, error, supersedes)"
        " VALUES (?,?,?,?,?,?,?,?)",
        (path, kind, st.mtime_ns, st.size, st.ctime_ns, title, error, json.dumps(supersedes) if supersedes else None),
    )


def not_indexed(conn: sqlite3.Connection) -> dict[str, str]:
    """Every registered file that is not indexed -> why."""
    return dict(conn.execute("SELECT path, error FROM sources WHERE error IS NOT NULL"))


