"""Reader-side queries: every statement the hook, search and status run against the index.

User text reaches these only as bound parameters or as FTS5 expressions that `query` built
from double-quoted terms; lists of any length are bound as one JSON array (`IN_LIST`),
because SQLite builds cap bound variables (999 in older ones).
"""

from __future__ import annotations

from _thread import _local as thread_local

from ..defaults import TOKENIZER
from ..lean import dumps, loads, sqlite3
from .db import meta_values
from .schema import CAPTURED_HERE

TYPE_CHECKING = False  # annotations only
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

HIT_COLUMNS = "d.rowid, d.path, d.id, d.category, d.title, d.tags, d.updated_at, d.record_status"
IN_LIST = "(SELECT value FROM json_each(?))"  # an IN list bound as one JSON array


def json_list(values: Iterable[object]) -> str:
    return dumps(list(values))


# --- counts for planning --------------------------------------------------------------


def doc_count(conn: sqlite3.Connection) -> int:
    count = meta_values(conn, ("doc_count",)).get("doc_count")
    if count is not None:
        return int(count)
    return conn.execute("SELECT count(*) FROM documents").fetchone()[0]


def has_documents(conn: sqlite3.Connection) -> bool:
    """Does the index hold any document's sections (`documents.path` from `@`)? One probe
    of the path index."""
    meta = getattr(conn, "meta", None)
    if meta is not None and "doc_rows" in meta:
        return bool(meta["doc_rows"])
    return conn.execute("SELECT 1 FROM documents WHERE path >= '@' AND path < 'A' LIMIT 1").fetchone() is not None


def top_rowid(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(rowid) FROM documents").fetchone()
    return row[0] or 0


def sample_matches(
    conn: sqlite3.Connection, expression: str, sample: int, spaceless: bool = False
) -> tuple[int, int | None]:
    """(matches among the first `sample`, the largest rowid among them), in `fts` or, with
    `spaceless`, in `fts_cjk` (the bigrams of text without spaces, memindex/text/cjk.py)."""
    if spaceless:
        sql = "SELECT count(*), max(rowid) FROM (SELECT rowid FROM fts_cjk WHERE fts_cjk MATCH ? LIMIT ?)"
    else:
        sql = "SELECT count(*), max(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)"
    return conn.execute(sql, (expression, sample)).fetchone()


def spaceless_count(conn: sqlite3.Connection, upto: int | None = None) -> int:
    """Memories with CJK text (rows of `fts_cjk`; 0 in a store without any), those up to
    rowid `upto` only if given: a count of FTS5's own per-row table, microseconds where
    counting `fts_cjk` itself scans it."""
    if upto is None:
        return conn.execute("SELECT count(*) FROM fts_cjk_docsize").fetchone()[0]
    return conn.execute("SELECT count(*) FROM fts_cjk_docsize WHERE id <= ?", (upto,)).fetchone()[0]


def tag_count(conn: sqlite3.Connection, tag: str, cap: int) -> int:
    """Memories carrying a tag, counted up to `cap`."""
    return conn.execute("SELECT count(*) FROM (SELECT 1 FROM tag_index WHERE tag = ? LIMIT ?)", (tag, cap)).fetchone()[0]


# --- filters and documents ------------------------------------------------------------


def filter_sql(
    categories: Sequence[str], tag_key: str | None, cutoffs: Sequence[tuple[str, str]], without_key: str | None = None
) -> tuple[str, list[object]]:
    """` AND ...` clauses on `documents d`: categories, a tag (as `index.tag_key` writes it),
    a tag memories must not have, and per-category cutoffs (memories updated before the
    cutoff are hidden)."""
    clauses, args = [], []
    if categories:
        clauses.append(f"d.category IN ({','.join('?' * len(categories))})")
        args.extend(categories)
    if tag_key:
        clauses.append("instr(d.tag_key, ?) > 0")
        args.append(tag_key)
    if without_key:
        clauses.append("instr(d.tag_key, ?) = 0")
        args.append(without_key)
    for category, cutoff in cutoffs:
        clauses.append("NOT (d.category = ? AND d.updated_at != '' AND substr(d.updated_at, 1, 19) < ?)")
        args.extend((category, cutoff))
    return "".join(f" AND {c}" for c in clauses), args


# The few memories looked up drive these queries (CROSS JOIN keeps them the outer loop):
# with a category filter and no statistics SQLite would otherwise walk the category's index,
# every memory of that kind.
def documents(conn: sqlite3.Connection, rowids: Iterable[int], where: str = "", args: Sequence[object] = ()) -> list[tuple]:
    """The `HIT_COLUMNS` of these memories that pass the filters `where`."""
    return conn.execute(
        f"SELECT {HIT_COLUMNS} FROM (SELECT DISTINCT value AS r FROM json_each(?)) AS j"
        f" CROSS JOIN documents d ON d.rowid = j.r WHERE 1{where}", (json_list(rowids), *args)
    ).fetchall()


def successors(conn: sqlite3.Connection, rowids: Iterable[int]) -> dict[int, list[str]]:
    """rowid -> the replacements a retired or archived memory names."""
    return {
        rowid: loads(raw)
        for rowid, raw in conn.execute(
            f"SELECT rowid, successors FROM documents WHERE successors IS NOT NULL AND rowid IN {IN_LIST}",
            (json_list(rowids),),
        )
    }


def active_by_ref(
    conn: sqlite3.Connection, ids: Sequence[str], paths: Sequence[str], where: str, args: Sequence[object]
) -> list[tuple]:
    """Active memories with one of these ids or paths, passing the filters."""
    return conn.execute(
        f"SELECT {HIT_COLUMNS} FROM (SELECT rowid AS r FROM documents WHERE id IN {IN_LIST} AND path NOT LIKE '@%'"
        f" UNION SELECT rowid FROM documents WHERE path IN {IN_LIST}) AS refs"
        f" CROSS JOIN documents d ON d.rowid = refs.r WHERE d.record_status = 'active'{where}",
        (json_list(ids), json_list(paths), *args),
    ).fetchall()


def latest(conn: sqlite3.Connection, category: str, limit: int) -> list[tuple]:
    """The most recently updated active memories of a category (`HIT_COLUMNS`), none dated
    beyond the clock's slack (store/stamps.py)."""
    from ..store.stamps import latest_credible  # "where did we leave off?" only: not on every prompt's path

    return conn.execute(
        f"SELECT {HIT_COLUMNS} FROM documents d WHERE d.category = ? AND d.record_status = 'active'"
        " AND d.updated_at <= ? ORDER BY d.updated_at DESC LIMIT ?",
        (category, latest_credible(), limit),
    ).fetchall()


def latest_captured(conn: sqlite3.Connection, limit: int) -> list[tuple]:
    """`latest` of the session summaries captured on this machine (sessions-local/), through
    their own index: the category's would walk every summary of the store."""
    from ..store.stamps import latest_credible

    return conn.execute(
        f"SELECT {HIT_COLUMNS} FROM documents d INDEXED BY documents_captured WHERE {CAPTURED_HERE}"
        " AND d.updated_at <= ? ORDER BY d.updated_at DESC LIMIT ?",
        (latest_credible(), limit),
    ).fetchall()


def active_entries(conn: sqlite3.Connection) -> Iterable[tuple]:
    """Every active memory's (`HIT_COLUMNS`): the old matcher scans them all."""
    return conn.execute(f"SELECT {HIT_COLUMNS} FROM documents d WHERE d.record_status = 'active'")


def file_key(path: str) -> str:
    """What related files are looked up by: the lowercased base name (a prompt or a tool
    call names `src/api/auth.py`, `./api/auth.py` or an absolute path to the same file)."""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()


def by_related_file(conn: sqlite3.Connection, names: Iterable[str]) -> list[tuple[str, int]]:
    """(related file as the memory wrote it, memory) for active memories naming a file with
    one of these base names (`file_key`); the caller matches the rest of the path."""
    return conn.execute(
        f"SELECT f.file, f.doc FROM file_index f JOIN documents d ON d.rowid = f.doc"
        f" WHERE f.name IN {IN_LIST} AND d.record_status = 'active'",
        (json_list(names),),
    ).fetchall()


def changed_since(conn: sqlite3.Connection, rowids: Iterable[int]) -> dict[int, int]:
    """rowid -> when the memory file last changed (ns): its ctime, which `cp -p`, `rsync -a`
    or `tar x` cannot set back as they do the mtime (the later of the two, to be safe)."""
    return dict(conn.execute(
        f"SELECT rowid, max(mtime_ns, ctime_ns) FROM documents WHERE rowid IN {IN_LIST}", (json_list(rowids),)
    ))


# --- what the last review found (memindex/review): the `review` table holds one row per
# item, for the memory as it was then (a row whose memory's mtime_ns moved since is not
# used); `note` is the prompt hook's few words, `dead` leaves the memory out of its block.

REVIEW_COLUMNS = "r.doc, r.path, r.kind, r.key, r.basis, r.reason, r.evidence, r.suggested, r.other_path, r.note, r.dead"


def review_notes(conn: sqlite3.Connection, rowids: Iterable[int]) -> dict[int, tuple[str, bool]]:
    """rowid -> (the prompt hook's note, whether the memory is clearly dead) for these
    memories, from review rows of the memory as it is now (same mtime)."""
    out: dict[int, tuple[str, bool]] = {}
    for doc, note, dead in conn.execute(
        f"SELECT r.doc, r.note, r.dead FROM review r JOIN documents d ON d.rowid = r.doc"
        f" WHERE r.doc IN {IN_LIST} AND r.note IS NOT NULL AND r.mtime_ns = d.mtime_ns ORDER BY r.dead DESC, r.key",
        (json_list(rowids),),
    ):
        if doc not in out:
            out[doc] = (note, bool(dead))
    return out


def review_entries(conn: sqlite3.Connection) -> list[tuple]:
    """(rowid, path, mtime_ns, size, category, title, tags, created_at, updated_at,
    related_files) of every active memory and document section, in path order: what a
    review reads."""
    return conn.execute(
        "SELECT rowid, path, mtime_ns, size, category, title, tags, created_at, updated_at, related_files FROM documents"
        " WHERE record_status = 'active' ORDER BY path"
    ).fetchall()


def review_rows(conn: sqlite3.Connection) -> list[tuple]:
    """Every review row still about its memory as it is (REVIEW_COLUMNS, in key order)."""
    return conn.execute(
        f"SELECT {REVIEW_COLUMNS} FROM review r JOIN documents d ON d.rowid = r.doc"
        f" WHERE r.mtime_ns = d.mtime_ns ORDER BY r.key"
    ).fetchall()


def vectors_version(conn: sqlite3.Connection) -> int:
    """The index's `vectors_version` stamp as the worker reads it (`index.vectors.version`:
    0 when never set or unreadable)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vectors_version'").fetchone()
    try:
        return int(row[0]) if row is not None else 0
    except (TypeError, ValueError):
        return 0


# --- ranking --------------------------------------------------------------------------


def rank(conn: sqlite3.Connection, match: str, weights: Sequence[float], limit: int) -> list[tuple[int, float]]:
    """(rowid, bm25) of the best `limit` matches, ranked by FTS5 alone (lower is better).
    `weights`: title, tags, body, kind, questions, forms (the columns of `fts`)."""
    return conn.execute(
        "SELECT rowid, bm25(fts, ?, ?, ?, ?, ?, ?) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?",
        (*weights, match, limit),
    ).fetchall()


def rank_spaceless(conn: sqlite3.Connection, expression: str, weights: Sequence[float]) -> list[tuple[int, float]]:
    """(rowid, bm25) of every `fts_cjk` row matching one term (the `fts` weights, but
    `fts_cjk` has no kind column). The caller bounds the rows: it asks only terms under the
    posting budget."""
    return conn.execute(
        "SELECT rowid, bm25(fts_cjk, ?, ?, ?, ?) FROM fts_cjk WHERE fts_cjk MATCH ?", (*weights[:3], weights[4], expression)
    ).fetchall()


def rank_filtered(
    conn: sqlite3.Connection, match: str, weights: Sequence[float], where: str, args: Sequence[object], limit: int
) -> list[tuple]:
    """`HIT_COLUMNS` + bm25 of the best `limit` matches passing the filters (joined in SQL)."""
    return conn.execute(
        f"SELECT {HIT_COLUMNS}, bm25(fts, ?, ?, ?, ?, ?, ?) AS s FROM fts JOIN documents d ON d.rowid = fts.rowid"
        f" WHERE fts MATCH ?{where} ORDER BY s LIMIT ?",
        (*weights, match, *args, limit),
    ).fetchall()


def tag_boosts(
    conn: sqlite3.Connection,
    lend: dict[str, float],
    *,
    among: Iterable[int] | None = None,
    outside: Iterable[int] | None = None,
    where: str = "",
    args: Sequence[object] = (),
    limit: int = -1,
) -> list[tuple[int, float]]:
    """(memory, sum of what its tags lend), largest first, summed by SQLite: `among` these
    memories, or `outside` these ones passing the filters `where`, or over all."""
    values = ",".join(["(?,?)"] * len(lend))
    join, condition, extra = "", "1", []
    if among is not None:
        condition, extra = f"t.doc IN {IN_LIST}", [json_list(among)]
    elif outside is not None:
        join = " CROSS JOIN documents d ON d.rowid = t.doc"
        condition, extra = f"d.rowid NOT IN {IN_LIST}{where}", [json_list(outside), *args]
    return conn.execute(
        f"WITH w(tag, lend) AS (VALUES {values}) SELECT t.doc, sum(w.lend) AS b FROM w"
        f" CROSS JOIN tag_index t ON t.tag = w.tag{join} WHERE {condition} GROUP BY t.doc ORDER BY b DESC, t.doc LIMIT ?",
        (*(x for item in lend.items() for x in item), *extra, limit),
    ).fetchall()


# --- status ---------------------------------------------------------------------------


def counts_by_status(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(category, status, memory files): documents' sections are counted by `document_counts`."""
    return conn.execute(
        "SELECT category, record_status, count(*) FROM documents WHERE path NOT LIKE '@%' GROUP BY 1, 2").fetchall()


def document_counts(conn: sqlite3.Connection) -> tuple[dict[str, int], dict[str, str]]:
    """({kind: files indexed}, {file: why it is not indexed}) of the registered documents."""
    indexed: dict[str, int] = {}
    skipped: dict[str, str] = {}
    for path, kind, error in conn.execute("SELECT path, kind, error FROM sources ORDER BY path"):
        if error is None:
            indexed[kind] = indexed.get(kind, 0) + 1
        else:
            skipped[path] = error
    return indexed, skipped


def invalid_files(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT path, error FROM invalid"))


# --- exact re-matching of a few memories ----------------------------------------------


# the scratch tables' columns, in order: `h` as `fts`, `hc` as `fts_cjk`
_SCRATCH_TABLES = {"h": ("title", "tags", "body", "kind", "questions", "forms"), "hc": ("title", "tags", "body", "questions")}


def _create(conn: sqlite3.Connection, table: str) -> None:
    conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(_SCRATCH_TABLES[table])}, tokenize='{TOKENIZER}')")


class _Tables:
    """One thread's scratch connection and what it has loaded."""

    __slots__ = ("conn", "spaceless", "loaded")

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        _create(self.conn, "h")
        self.spaceless = False  # `hc` made (on first use)
        self.loaded: set[str] = set()  # the tables loaded once already (`Scratch._empty` makes them anew)


class Scratch:
    """A private in-memory FTS5 table with the index's tokenizer, to re-check which terms a
    handful of memories match: exact FTS5 semantics, no second matcher to drift. With
    `spaceless`, its twin `hc` holds what `fts_cjk` holds (made on first use). One per
    thread: the MCP server runs its tools in worker threads, and one thread's load must
    not land in another's query."""

    _local = thread_local()  # threading.local without importing threading (the hook)

    @classmethod
    def _state(cls) -> _Tables:
        state = getattr(cls._local, "tables", None)
        if state is None:
            state = cls._local.tables = _Tables()
        return state

    @classmethod
    def _db(cls, spaceless: bool = False) -> sqlite3.Connection:
        state = cls._state()
        if spaceless and not state.spaceless:
            _create(state.conn, "hc")
            state.spaceless = True
        return state.conn

    @classmethod
    def load_from(cls, conn: sqlite3.Connection, rowids: Iterable[int], spaceless: bool = False) -> None:
        """Copy these memories' indexed text from the index (from `fts_cjk` into `hc`)."""
        if spaceless:
            rows = conn.execute(
                f"SELECT rowid, title, tags, body, questions FROM fts_cjk WHERE rowid IN {IN_LIST}", (json_list(rowids),)
            ).fetchall()
            db = cls._empty("hc")
            db.executemany("INSERT INTO hc(rowid, title, tags, body, questions) VALUES (?,?,?,?,?)", rows)
            return
        rows = conn.execute(
            f"SELECT rowid, title, tags, body, kind, questions, forms FROM fts WHERE rowid IN {IN_LIST}", (json_list(rowids),)
        ).fetchall()
        db = cls._empty("h")
        db.executemany("INSERT INTO h(rowid, title, tags, body, kind, questions, forms) VALUES (?,?,?,?,?,?,?)", rows)

    @classmethod
    def _empty(cls, table: str) -> sqlite3.Connection:
        """The scratch connection with `table` empty: made anew once it has been loaded (FTS5
        keeps a deleted row's entries until a merge, so a long-lived process, the MCP server
        or an evaluation, reloading a table thousands of times saw each query slow down;
        merging it with 'optimize' instead broke the table)."""
        db, loaded = cls._db(table == "hc"), cls._state().loaded
        if table in loaded:
            db.execute(f"DROP TABLE {table}")
            _create(db, table)
        loaded.add(table)
        return db

    @classmethod
    def load_text(cls, text: str, spaceless: bool = False) -> None:
        """One piece of free text, as the body of rowid 1 (`spaceless`: `cjk.segment`ed text, in `hc`)."""
        table = "hc" if spaceless else "h"
        db = cls._empty(table)
        db.execute(f"INSERT INTO {table}(rowid, body) VALUES (1, ?)", (text,))

    @classmethod
    def with_questions(cls) -> set[int]:
        """The loaded memories that list the questions they answer."""
        return {r for (r,) in cls._db().execute("SELECT rowid FROM h WHERE questions <> ''")}

    @classmethod
    def columns_matching(cls, expression: str, spaceless: bool = False) -> dict[int, frozenset[str]]:
        """For each loaded memory that matches an FTS5 expression, the columns it matches in:
        one query where a column filter takes one query a column. bm25() weighted to one
        column is non-zero exactly where the expression matches in that column (FTS5 keeps
        an IDF above zero); it reads the match positions FTS5 has already found, where
        highlight() rebuilds each column's whole text."""
        table = "hc" if spaceless else "h"
        names = _SCRATCH_TABLES[table]
        marks = ", ".join(f"bm25({table}, {', '.join('1' if j == i else '0' for j in range(len(names)))})"
                          for i in range(len(names)))
        rows = cls._db(spaceless).execute(f"SELECT rowid, {marks} FROM {table} WHERE {table} MATCH ?", (f"({expression})",))
        return {row[0]: frozenset(n for n, hit in zip(names, row[1:]) if hit) for row in rows}

    @classmethod
    def matching(cls, expression: str, columns: Sequence[str] = (), spaceless: bool = False) -> list[int]:
        """rowids of the loaded memories that match an FTS5 expression (in `columns` only;
        `hc` has no category column)."""
        table = "hc" if spaceless else "h"
        if spaceless and columns:
            columns = [c for c in columns if c != "kind"]
            if not columns:
                return []
        only = "{" + " ".join(columns) + "} : " if columns else ""
        return [
            r for (r,) in cls._db(spaceless).execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (f"{only}({expression})",))
        ]
