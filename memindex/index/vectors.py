"""The `vectors` table: one sentence embedding per memory, beside the FTS5 index.

A vector is float32 little-endian bytes (`embed_dim` x 4), keyed by the memory's rowid.
Meta holds `embed_model` (the model's identity), `embed_dim`, `embed_source` (the
`semantic.model` setting that produced them) and `embed_check` (a digest of the identity
and the weights file's size and time: a sync with nothing to embed and the same check need
not load the model), and `vectors_version`, a stamp that changes with every
change to the table, so that a resident worker knows when to reload its matrix.

Every document has a vector or is "missing": active and inactive alike (a search with
`--include-inactive` ranks both). Writers drop a memory's vector when its text changes or
it goes (`rows`), and the semantic writer fills in what is missing after each sync.
Standard library only: the prompt hook may import this.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence

from .reads import IN_LIST, json_list

META_KEYS = ("embed_model", "embed_dim", "embed_source", "embed_check")
# a stored vector counts only when it is a blob of embed_dim float32s: anything else (a
# truncated or foreign value) is "missing", skipped by readers and recomputed by the next sync
_WELL_FORMED = "typeof(v.vec) = 'blob' AND length(v.vec) = 4 * coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'embed_dim'), -1)"


def version(conn: sqlite3.Connection) -> int:
    """The stamp of the vectors' last change (0: never changed)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vectors_version'").fetchone()
    try:
        return int(json.loads(row[0])) if row is not None else 0
    except (ValueError, TypeError):
        return 0


def _bump(conn: sqlite3.Connection) -> None:
    """A new, never-repeated stamp (a counter would restart at 0 after a rebuild drops meta,
    and could climb back to a value a worker holds): max(previous + 1, now in ns)."""
    stamp = max(version(conn) + 1, time.time_ns())
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_version', ?)", (json.dumps(stamp),))


def model_info(conn: sqlite3.Connection) -> dict[str, object]:
    """`embed_model`, `embed_dim`, `embed_source`, `embed_check` as stored (absent keys: None)."""
    found = dict(conn.execute(f"SELECT key, value FROM meta WHERE key IN {IN_LIST}", (json_list(META_KEYS),)))
    out: dict[str, object] = {}
    for key in META_KEYS:
        try:
            out[key] = json.loads(found[key]) if key in found else None
        except (ValueError, TypeError):
            out[key] = None
    return out


def set_model_info(conn: sqlite3.Connection, identity: str, dim: int, source: str, check: str) -> None:
    """Record the model the vectors come from; `check` lets a later sync see, without loading
    the model, that the setting still names the same weights (semantic.vectors.model_check)."""
    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [("embed_model", json.dumps(identity)), ("embed_dim", json.dumps(int(dim))), ("embed_source", json.dumps(source)),
         ("embed_check", json.dumps(check))],
    )


def count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]


def count_missing(conn: sqlite3.Connection) -> int:
    """Documents (active or not) without a well-formed vector."""
    return conn.execute(
        f"SELECT count(*) FROM documents d WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc = d.rowid AND {_WELL_FORMED})"
    ).fetchone()[0]


def missing(conn: sqlite3.Connection) -> list[tuple[int, int]]:
    """(rowid, length of its indexed text) of every document without a well-formed vector."""
    return conn.execute(
        "SELECT d.rowid, length(f.title) + length(f.tags) + length(f.body) + length(f.questions) FROM documents d"
        f" JOIN fts f ON f.rowid = d.rowid WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc = d.rowid AND {_WELL_FORMED})"
    ).fetchall()


def texts(conn: sqlite3.Connection, rowids: Sequence[int]) -> list[tuple[int, str, str, str, str]]:
    """(rowid, title, tags as JSON, indexed body, questions) of these documents, in the order given."""
    found = {
        row[0]: row
        for row in conn.execute(
            f"SELECT d.rowid, d.title, d.tags, f.body, f.questions FROM documents d JOIN fts f ON f.rowid = d.rowid"
            f" WHERE d.rowid IN {IN_LIST}",
            (json_list(rowids),),
        )
    }
    return [found[r] for r in rowids if r in found]


def put(conn: sqlite3.Connection, items: Iterable[tuple[int, bytes]]) -> int:
    """Store vectors (rowid, float32 bytes) of documents that still exist; returns how many."""
    cur = conn.executemany(
        "INSERT OR REPLACE INTO vectors(doc, vec) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM documents WHERE rowid = ?1)",
        list(items),
    )
    stored = max(cur.rowcount, 0)
    if stored:
        _bump(conn)
    return stored


def get(conn: sqlite3.Connection, rowid: int) -> bytes | None:
    row = conn.execute("SELECT vec FROM vectors WHERE doc = ?", (rowid,)).fetchone()
    return None if row is None else bytes(row[0])


def delete(conn: sqlite3.Connection, rowids: Iterable[int]) -> int:
    """Drop these documents' vectors; returns how many there were."""
    cur = conn.execute(f"DELETE FROM vectors WHERE doc IN {IN_LIST}", (json_list(rowids),))
    if cur.rowcount > 0:
        _bump(conn)
    return max(cur.rowcount, 0)


def delete_all(conn: sqlite3.Connection) -> int:
    cur = conn.execute("DELETE FROM vectors")
    _bump(conn)
    return max(cur.rowcount, 0)


def has(conn: sqlite3.Connection, rowid: int) -> bool:
    return conn.execute("SELECT 1 FROM vectors WHERE doc = ?", (rowid,)).fetchone() is not None


def indexed_text(conn: sqlite3.Connection, rowid: int) -> tuple[str, str, str, str] | None:
    """(title, tags, body, questions) as the FTS5 row holds them: what a vector was computed from."""
    return conn.execute("SELECT title, tags, body, questions FROM fts WHERE rowid = ?", (rowid,)).fetchone()


def all_vectors(conn: sqlite3.Connection) -> tuple[list[int], bytes, int]:
    """Every well-formed vector, in rowid order: (rowids, their bytes concatenated, how many
    malformed ones were skipped), ready for `numpy.frombuffer(data, '<f4').reshape(len(rowids), dim)`."""
    rowids: list[int] = []
    blobs: list[bytes] = []
    for rowid, blob in conn.execute(f"SELECT v.doc, v.vec FROM vectors v WHERE {_WELL_FORMED} ORDER BY v.doc"):
        rowids.append(rowid)
        blobs.append(blob)
    skipped = count(conn) - len(rowids)
    return rowids, b"".join(blobs), skipped


def candidates(
    conn: sqlite3.Connection, where: str = "", args: Sequence[object] = (), include_inactive: bool = False
) -> list[int]:
    """rowids of the memories a search may return: active ones (all with
    `include_inactive`) passing the filters `where` (`reads.filter_sql` on `documents d`)."""
    status = "1" if include_inactive else "d.record_status = 'active'"
    return [r for (r,) in conn.execute(f"SELECT d.rowid FROM documents d WHERE {status}{where}", tuple(args))]
