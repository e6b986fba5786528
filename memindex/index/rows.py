"""Writer-side rows: what sync and the write path put in and take out (under the lock)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from ..text.cjk import segment
from ..text.identifiers import other_forms
from ..defaults import CATEGORY_PRIORITY, CATEGORY_WORDS, FILES_INDEX_MAX
from ..store.paths import FileStat
from ..text.render import safe_relpath
from ..text.render import memory_line
from .db import _create
from .reads import file_key
from .vectors import delete as delete_vectors, has as has_vector, indexed_text

TYPE_CHECKING = False  # annotations only: the hook never imports typing
if TYPE_CHECKING:
    from ..store.files import Memory

PREFIX_MARK = "\x00"  # stands for the display prefix in stored index.md lines


def reset(conn: sqlite3.Connection) -> None:
    """Empty the index inside the caller's transaction (rebuild in place)."""
    _create(conn)


def stored_stats(conn: sqlite3.Connection) -> tuple[dict[str, FileStat], dict[str, FileStat]]:
    """(indexed files, known-invalid files), each path -> stat at the time it was read."""
    docs = {p: FileStat(m, s, i) for p, m, s, i in
            conn.execute("SELECT path, mtime_ns, size, ctime_ns FROM documents WHERE path NOT LIKE '@%'")}
    bad = {p: FileStat(m, s, i) for p, m, s, i in conn.execute("SELECT path, mtime_ns, size, ctime_ns FROM invalid")}
    return docs, bad


def tag_key(tags: Iterable[str]) -> str:
    return "," + ",".join(t.replace(",", " ") for t in tags) + ","


def upsert(conn: sqlite3.Connection, mem: "Memory", st: FileStat) -> bool:
    """Insert or replace one memory (documents row and FTS row share the rowid).
    Returns whether its index.md line changed (new, retitled, retagged, status)."""
    conn.execute("DELETE FROM invalid WHERE path = ?", (mem.path,))
    row = conn.execute("SELECT rowid, index_line, record_status FROM documents WHERE path = ?", (mem.path,)).fetchone()
    # index.md's line, rendered once per change (prefix left as a NUL placeholder).
    line = memory_line(mem.category, mem.title, PREFIX_MARK + mem.path, mem.tags) if safe_relpath("", mem.path) else None
    values = (
        mem.path, st.mtime_ns, st.size, st.ctime_ns, mem.id, mem.category, mem.title,
        json.dumps(mem.tags, ensure_ascii=False), tag_key(mem.tags), mem.record_status,
        mem.created_at, mem.updated_at, json.dumps(mem.related_files, ensure_ascii=False),
        mem.confidence, json.dumps(mem.problems, ensure_ascii=False) if mem.problems else None, line,
        json.dumps(mem.successors) if mem.successors else None,
    )
    body = mem.body
    title = f"{mem.title}\n{mem.heading}" if mem.heading else mem.title  # a document's section: its headings too
    questions = "\n".join(mem.questions)
    if mem.related_files:
        body = body + "\n" + " ".join(mem.related_files)
    # identifiers in their other spelling too (KubeQuotaExceeded <-> kube_quota_exceeded)
    forms = other_forms("\n".join((title, " ".join(mem.tags), body)))
    if row is None:
        cur = conn.execute(
            "INSERT INTO documents(path, mtime_ns, size, ctime_ns, id, category, title, tags, tag_key,"
            " record_status, created_at, updated_at, related_files, confidence, problems, index_line, successors)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            values,
        )
        rowid = cur.lastrowid
    else:
        rowid = row[0]
        conn.execute(
            "UPDATE documents SET path=?, mtime_ns=?, size=?, ctime_ns=?, id=?, category=?, title=?, tags=?,"
            " tag_key=?, record_status=?, created_at=?, updated_at=?, related_files=?, confidence=?,"
            " problems=?, index_line=?, successors=? WHERE rowid=?",
            (*values, rowid),
        )
        # Its vector (if any) goes when the text it was computed from changes: re-embedded.
        if has_vector(conn, rowid) and indexed_text(conn, rowid) != (title, " ".join(mem.tags), body, questions):
            delete_vectors(conn, [rowid])
        conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
        conn.execute("DELETE FROM fts_cjk WHERE rowid = ?", (rowid,))
    conn.execute(
        "INSERT INTO fts(rowid, title, tags, body, kind, questions, forms) VALUES (?,?,?,?,?,?,?)",
        (rowid, title, " ".join(mem.tags), body, CATEGORY_WORDS.get(mem.category, ""), questions, forms),
    )
    spaceless = (segment(title), segment(" ".join(mem.tags)), segment(body), segment(questions))
    if any(spaceless):  # CJK text: its bigrams in the second table (memindex/text/cjk.py)
        conn.execute("INSERT INTO fts_cjk(rowid, title, tags, body, questions) VALUES (?,?,?,?,?)", (rowid, *spaceless))
    conn.execute("DELETE FROM tag_index WHERE doc = ?", (rowid,))
    conn.executemany("INSERT OR IGNORE INTO tag_index(tag, doc) VALUES (?, ?)", [(t, rowid) for t in mem.tags])
    conn.execute("DELETE FROM file_index WHERE doc = ?", (rowid,))
    conn.executemany(
        "INSERT OR IGNORE INTO file_index(name, file, doc) VALUES (?, ?, ?)",
        [(file_key(f), f, rowid) for f in mem.related_files[:FILES_INDEX_MAX] if file_key(f)],
    )
    return row is None or (row[1], row[2]) != (line, mem.record_status)


def mark_invalid(conn: sqlite3.Connection, rel: str, st: FileStat, error: str) -> bool:
    """Remember an unreadable file (so it is not re-read until it changes) and unindex it.
    Returns whether an indexed memory went away."""
    removed = remove(conn, [rel])
    conn.execute(
        "INSERT OR REPLACE INTO invalid(path, mtime_ns, size, ctime_ns, error) VALUES (?,?,?,?,?)",
        (rel, st.mtime_ns, st.size, st.ctime_ns, error),
    )
    return removed > 0


def remove(conn: sqlite3.Connection, paths: Iterable[str]) -> int:
    """Unindex these paths; returns how many indexed memories were removed."""
    removed = 0
    for rel in paths:
        row = conn.execute("SELECT rowid FROM documents WHERE path = ?", (rel,)).fetchone()
        if row is not None:
            conn.execute("DELETE FROM fts WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM fts_cjk WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM tag_index WHERE doc = ?", (row[0],))
            conn.execute("DELETE FROM file_index WHERE doc = ?", (row[0],))
            delete_vectors(conn, [row[0]])
            conn.execute("DELETE FROM review WHERE doc = ?", (row[0],))
            conn.execute("DELETE FROM documents WHERE rowid = ?", (row[0],))
            removed += 1
        conn.execute("DELETE FROM invalid WHERE path = ?", (rel,))
    return removed




def count_documents(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM documents").fetchone()[0]


def count_invalid(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM invalid").fetchone()[0]


def optimize(conn: sqlite3.Connection) -> None:
    """Merge FTS5's segments into one b-tree: after many inserts, queries at a large store
    stay as fast as after a rebuild."""
    conn.execute("INSERT INTO fts(fts) VALUES('optimize')")
    if conn.execute("SELECT 1 FROM fts_cjk_docsize LIMIT 1").fetchone():
        conn.execute("INSERT INTO fts_cjk(fts_cjk) VALUES('optimize')")


def index_md_lines(conn: sqlite3.Connection) -> list[str]:
    """The stored `index.md` lines of active memories (prefix still PREFIX_MARK), in the
    file's order: category priority, then path."""
    rows = conn.execute(
        "SELECT category, path, index_line FROM documents"
        " WHERE record_status = 'active' AND index_line IS NOT NULL"
    ).fetchall()
    rows.sort(key=lambda r: (CATEGORY_PRIORITY.get(r[0], 99), r[1]))
    return [line for _, _, line in rows]


def has_sources(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sources LIMIT 1").fetchone() is not None


def count_not_indexed(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM sources WHERE error IS NOT NULL").fetchone()[0]


def newest_session(conn: sqlite3.Connection) -> str:
    """The latest `updated_at` of an active session summary ("" without any): how old a
    session is counts from the store's own latest, not from the clock (relevance's age)."""
    row = conn.execute("SELECT max(updated_at) FROM documents WHERE category = 'session_summary'"
                       " AND record_status = 'active' AND updated_at != ''").fetchone()
    return row[0] or ""


def replace_review(conn: sqlite3.Connection, rows: Iterable[tuple]) -> None:
    """The review's findings in place of the last ones (inside the caller's transaction):
    (doc, path, mtime_ns, kind, key, basis, reason, evidence JSON, suggested, other_path,
    note, dead)."""
    conn.execute("DELETE FROM review")
    conn.executemany(
        "INSERT OR REPLACE INTO review(doc, path, mtime_ns, kind, key, basis, reason, evidence, suggested, other_path,"
        " note, dead) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows,
    )
