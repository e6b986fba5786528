"""The writer side of the semantic channel: embed the memories that have no vector.

Every writer (sync, rebuild, watch, save/update) runs `embed_missing` after the text
transaction of its sync, when `semantic.enabled` is on. Memories are embedded in batches of
`semantic.batch_size`, each batch stored in its own transaction: a process killed half-way
loses at most one batch, and the next sync embeds what is still missing. A model whose
identity or dimension differs from the stored one makes every vector go first (re-embedded).

A model that cannot be loaded (not installed, unsupported, NumPy missing) never fails the
sync: the text index is already committed, and the outcome is one line in the SyncReport.

NumPy and the model are imported on first use only; `sync` imports this module only when
the semantic channel is on.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time

from .. import index
from ..defaults import EMBED_PROGRESS_MIN, EMBED_TEXT_CHARS
from ..errors import ModelError, ModelNotFound
from ..index import vectors
from ..text.progress import progress_bar

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

    from ..config import Config


_EMBEDDERS: dict[str, object] = {}  # model setting -> loaded embedder, once per process


def get_embedder(model: str):
    """The embedder of a `semantic.model` setting, loaded once per process (a failure is
    not remembered: a model installed later is found by the next call). Raises
    ModelNotFound, ModelError or ImportError."""
    found = _EMBEDDERS.get(model)
    if found is None:
        from .model import load

        found = _EMBEDDERS[model] = load(model)
    return found


def embed_text(title: str, tags_json: str, body: str, questions: str = "") -> str:
    """What is embedded of a memory: title, tags, its questions, body (the FTS5 row's
    text), capped. The questions come before the body: the model reads 256 tokens, and a
    long body must not cut off the phrasings written for it (one vector per memory:
    docs/evaluation.md, "Questions at save time")."""
    try:
        tags = ", ".join(str(t) for t in json.loads(tags_json))
    except (ValueError, TypeError):
        tags = ""
    head = f"{title}\n{tags}\n{questions}" if questions else f"{title}\n{tags}"
    return f"{head}\n{body}"[:EMBED_TEXT_CHARS]


def to_blob(vec: "np.ndarray") -> bytes:
    import numpy as np

    return np.asarray(vec, dtype="<f4").tobytes()


def model_check(identity: object, stamp: str) -> str:
    """The digest stored beside the vectors: their model's identity and its weights' stamp."""
    return hashlib.sha256(f"{identity}\0{stamp}".encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _same_model(stored: dict[str, object], source: str, stamp: str) -> bool:
    """Were the stored vectors made by the model `source` names, with these weights?"""
    return stored["embed_source"] == source and stored["embed_check"] == model_check(stored["embed_model"], stamp)


def needs_embedding(conn: sqlite3.Connection, source: str, fetch: bool = False) -> bool:
    """Would a sync embed anything (memories without a vector of this model)? False when
    the model cannot be found: a sync would not help, and the search says why. With
    `fetch`, a hub model not here yet is downloaded first (`locate.resolve`)."""
    from .locate import weights_stamp

    try:
        stamp = weights_stamp(source, fetch=fetch)
    except (ModelNotFound, ModelError):
        return False
    return not (_same_model(vectors.model_info(conn), source, stamp) and vectors.count_missing(conn) == 0)


def embed_missing(conn: sqlite3.Connection, cfg: "Config", progress: bool = False) -> str:
    """Embed the memories without a well-formed vector (the caller holds the writer lock,
    outside any transaction); returns the one-line outcome for the SyncReport. Vectors whose
    numbers are damaged are left out by readers; `memindex rebuild` recomputes every vector."""
    from .locate import weights_stamp

    source = str(cfg["semantic.model"])
    stored = vectors.model_info(conn)
    try:
        stamp = weights_stamp(source, fetch=True)  # a hub id not here yet: downloaded once
    except (ModelNotFound, ModelError) as exc:
        return f"not embedded: {exc}"
    same = _same_model(stored, source, stamp)
    if same and vectors.count_missing(conn) == 0:
        return "up to date"  # no model load for a sync that changed nothing
    try:
        embedder = get_embedder(source)
    except (ModelNotFound, ModelError, ImportError) as exc:
        return f"not embedded: {exc}"
    identity, dim = embedder.identity, int(embedder.dim)
    changed = (stored["embed_model"], stored["embed_dim"]) != (identity, dim)
    if changed or not same:
        with index.transaction(conn):
            if changed and vectors.count(conn):
                vectors.delete_all(conn)  # another model's vectors: re-embed everything
            vectors.set_model_info(conn, identity, dim, source, model_check(identity, stamp))
    todo = vectors.missing(conn)
    if not todo:
        return "up to date"
    todo.sort(key=lambda item: -item[1])  # batches of similar lengths: little padding
    batch = int(cfg["semantic.batch_size"])
    started, done = time.perf_counter(), 0
    bar = progress_bar(len(todo), progress, EMBED_PROGRESS_MIN, "memory", "embedding")
    try:
        for start in range(0, len(todo), batch):
            rows = vectors.texts(conn, [rowid for rowid, _ in todo[start:start + batch]])
            vecs = embedder.embed([embed_text(*row[1:]) for row in rows], batch_size=batch)
            with index.transaction(conn):
                vectors.put(conn, [(row[0], to_blob(vec)) for row, vec in zip(rows, vecs)])
            done += len(rows)
            if bar is not None:
                bar.update(len(rows))
    except sqlite3.Error:
        raise  # the index itself failed: as for the text sync
    except Exception as exc:  # the model failed half-way: what is stored stays, the next sync goes on
        return f"embedded {done} of {len(todo)}, then stopped: {type(exc).__name__}: {exc}"
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - started
    why = " (model changed: all re-embedded)" if changed and stored["embed_model"] else ""
    return f"embedded {done}{why} in {seconds:.1f} s"
