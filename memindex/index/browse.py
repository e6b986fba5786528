"""Reader-side queries for people browsing a store (the local UI, memindex/catalog): pages
of the index's rows under filters, facet counts, a row by its path, what names a memory
as its replacement, and the store's figures by month and by category.

Like memindex/index/reads.py, user text reaches these only as bound parameters; lists are
bound as one JSON array (`reads.IN_LIST`). Never loaded by the hooks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from collections.abc import Collection
from dataclasses import dataclass

from .reads import IN_LIST, json_list

ROW_COLUMNS = ("d.rowid, d.path, d.id, d.category, d.title, d.tags, d.record_status, d.created_at, d.updated_at,"
               " d.related_files, d.size, d.mtime_ns, d.successors, d.problems, d.confidence")
ORDERS = {  # name -> ORDER BY
    "updated": "d.updated_at DESC, d.path",
    "created": "d.created_at DESC, d.path",
    "title": "d.title COLLATE NOCASE, d.path",
    "path": "d.path",
}
KINDS = ("all", "memories", "documents")


@dataclass
class Where:
    """What a page of rows is restricted to (every field optional)."""

    categories: Sequence[str] = ()
    statuses: Sequence[str] = ()
    tag: str | None = None
    kind: str = "all"  # memories (files in the store), documents (sections indexed in place), or all
    file: str | None = None  # a related file's path, or part of it
    updated_from: str | None = None  # ISO dates (a prefix compares as the day it names)
    updated_to: str | None = None
    created_from: str | None = None
    created_to: str | None = None

    def sql(self) -> tuple[str, list[object]]:
        clauses: list[str] = []
        args: list[object] = []
        if self.categories:
            clauses.append(f"d.category IN {IN_LIST}")
            args.append(json_list(self.categories))
        if self.statuses:
            clauses.append(f"d.record_status IN {IN_LIST}")
            args.append(json_list(self.statuses))
        if self.tag:
            clauses.append("d.rowid IN (SELECT doc FROM tag_index WHERE tag = ?)")
            args.append(self.tag.lower())
        if self.kind == "memories":
            clauses.append("d.path NOT LIKE '@%'")
        elif self.kind == "documents":
            clauses.append("d.path LIKE '@%'")
        if self.file:
            clauses.append("instr(lower(d.related_files), ?) > 0")
            args.append(self.file.lower())
        for column, lo, hi in (("updated_at", self.updated_from, self.updated_to),
                               ("created_at", self.created_from, self.created_to)):
            if lo:
                clauses.append(f"d.{column} >= ?")
                args.append(lo)
            if hi:  # the whole day (or month, year) it names
                clauses.append(f"substr(d.{column}, 1, ?) <= ?")
                args.extend((len(hi), hi))
        return "".join(f" AND {c}" for c in clauses), args


ORDER_KEYS = {"updated": ("d.updated_at", True), "created": ("d.created_at", True), "title": ("lower(d.title)", False),
              "path": ("d.path", False)}


def page(conn: sqlite3.Connection, where: Where, order: str, limit: int, offset: int,
         among: Collection[str] | None = None) -> tuple[int, list[tuple]]:
    """(rows matching in all, one page of their `ROW_COLUMNS`); `among`: only rows with one
    of these paths (a provenance filter the caller resolved: thousands of paths, matched
    here rather than bound into the statement)."""
    sql, args = where.sql()
    if among is not None:
        column, newest_first = ORDER_KEYS.get(order, ORDER_KEYS["updated"])
        keyed = [(k, p) for p, k in conn.execute(f"SELECT d.path, {column} FROM documents d WHERE 1{sql}", args) if p in among]
        keyed.sort(key=lambda kp: kp[1])  # the path breaks ties, as ORDERS does
        if newest_first:
            keyed.sort(key=lambda kp: kp[0] or "", reverse=True)
        else:
            keyed.sort(key=lambda kp: kp[0] or "")
        chosen = [p for _, p in keyed[offset: offset + limit]]
        rows = rows_by_path(conn, chosen)
        return len(keyed), [rows[p] for p in chosen if p in rows]
    total = conn.execute(f"SELECT count(*) FROM documents d WHERE 1{sql}", args).fetchone()[0]
    rows = conn.execute(
        f"SELECT {ROW_COLUMNS} FROM documents d WHERE 1{sql} ORDER BY {ORDERS.get(order, ORDERS['updated'])}"
        " LIMIT ? OFFSET ?", (*args, limit, offset),
    ).fetchall()
    return total, rows


def rows_by_path(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, tuple]:
    """path -> `ROW_COLUMNS`, for these rows."""
    return {r[1]: r for r in conn.execute(
        f"SELECT {ROW_COLUMNS} FROM documents d WHERE d.path IN {IN_LIST}", (json_list(paths),))}


def rows_by_id(conn: sqlite3.Connection, ids: Sequence[str]) -> list[tuple]:
    """The memory files' rows with one of these ids (documents' rows left out)."""
    return conn.execute(
        f"SELECT {ROW_COLUMNS} FROM documents d WHERE d.id IN {IN_LIST} AND d.path NOT LIKE '@%' ORDER BY d.path",
        (json_list(ids),)).fetchall()


def document_rows(conn: sqlite3.Connection, file: str) -> list[tuple]:
    """The rows of one document file's sections (`@file#anchor`), in path order."""
    return conn.execute(f"SELECT {ROW_COLUMNS} FROM documents d WHERE d.path >= ? AND d.path < ? ORDER BY d.path",
                        (f"@{file}#", f"@{file}$")).fetchall()


def source_of(conn: sqlite3.Connection, file: str) -> tuple | None:
    """(kind, title, error, supersedes) of a registered document file."""
    return conn.execute("SELECT kind, title, error, supersedes FROM sources WHERE path = ?", (file,)).fetchone()


def naming(conn: sqlite3.Connection, refs: Sequence[str]) -> list[tuple]:
    """Rows whose `successors` (the replacements a retired or archived memory names: ids,
    `folder/id`, or a document's `@file#`) hold one of `refs`."""
    return conn.execute(
        f"SELECT {ROW_COLUMNS} FROM documents d WHERE d.successors IS NOT NULL AND EXISTS"
        f" (SELECT 1 FROM json_each(d.successors) s WHERE s.value IN {IN_LIST}) ORDER BY d.path LIMIT 50",
        (json_list(refs),)).fetchall()


def stats_key(conn: sqlite3.Connection) -> tuple:
    """What changes when any memory file's row does: their count, the sums of their sizes
    and mtimes (modulo a prime: no overflow), the largest rowid."""
    return tuple(conn.execute(
        "SELECT count(*), total(size), total(mtime_ns % 1000000007), max(rowid) FROM documents WHERE path NOT LIKE '@%'"
    ).fetchone())


def all_stats(conn: sqlite3.Connection) -> list[tuple[str, int, int]]:
    """(path, mtime_ns, size) of every memory file's row."""
    return conn.execute("SELECT path, mtime_ns, size FROM documents WHERE path NOT LIKE '@%'").fetchall()


# --- facets and figures -----------------------------------------------------------------


def top_tags(conn: sqlite3.Connection, limit: int) -> list[tuple[str, int]]:
    """The commonest tags and how many rows carry each."""
    return conn.execute("SELECT tag, count(*) AS n FROM tag_index GROUP BY tag ORDER BY n DESC, tag LIMIT ?",
                        (limit,)).fetchall()


def kind_counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """(memory files' rows, documents' section rows)."""
    row = conn.execute("SELECT sum(path NOT LIKE '@%'), sum(path LIKE '@%') FROM documents").fetchone()
    return int(row[0] or 0), int(row[1] or 0)


def by_month(conn: sqlite3.Connection, column: str = "created_at") -> list[tuple[str, str, int]]:
    """(YYYY-MM, category, memories) of the memory files, by the month of `column`."""
    col = {"created_at": "created_at", "updated_at": "updated_at"}[column]
    return conn.execute(
        f"SELECT substr({col}, 1, 7) AS m, category, count(*) FROM documents"
        f" WHERE path NOT LIKE '@%' AND length({col}) >= 7 GROUP BY m, category ORDER BY m").fetchall()


def sizes(conn: sqlite3.Connection) -> list[tuple[str, int, int, int]]:
    """(category, memory files, their bytes, document sections) per category."""
    return conn.execute(
        "SELECT category, sum(path NOT LIKE '@%'), sum(CASE WHEN path NOT LIKE '@%' THEN size ELSE 0 END),"
        " sum(path LIKE '@%') FROM documents GROUP BY category ORDER BY category").fetchall()


def review_by_path(conn: sqlite3.Connection, paths: Sequence[str]) -> list[tuple]:
    """(path, kind, reason, suggested, other_path) of the stored review items of these rows."""
    return conn.execute(
        f"SELECT path, kind, reason, suggested, other_path FROM review WHERE path IN {IN_LIST} ORDER BY path, kind",
        (json_list(paths),)).fetchall()
