"""Hybrid search: the BM25 ranking and the dense one, fused.

    score(d) = minmax_lex(d) + minmax_dense(d)

Each channel's scores are scaled to [0, 1] over the candidates it returned (its best 1, its
`FUSION_DEPTH`-th or last 0; a memory a channel did not return gets 0 from it), then added with
equal weights: CombSUM of min-max normalised scores (Fox and Shaw, TREC-2 1994; Lee, SIGIR
1997). Reciprocal rank fusion (k = 60, Cormack, Clarke and Buettcher, SIGIR 2009), which
fuses ranks only, is the untuned baseline it had to beat, and did on every development
set (docs/evaluation.md, "The semantic channel"). Scores carry what ranks lose: a memory far ahead of the
rest in one channel stays ahead. Nothing is tuned: equal weights, each channel's own range.

The lexical channel is `query.search` exactly as `memindex search` runs it (tag-related
memories, retired memories handing their place to their replacements). The dense channel
ranks the memories that pass the same filters (categories, tag, retention) by cosine to the
query, retired ones handing their place on in the same way (`handed_on`): from the resident
worker when one answers, else in this process (`InProcess`: the model loaded here, the
index's vectors as one matrix).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from ..defaults import FUSION_DEPTH, RRF_K, WORKER_K_MAX, WORKER_ROWIDS_MAX
from ..retrieval.hits import Hit
from ..index import reads, vectors
from ..retrieval.query import Filters, Params, replace_inactive, search, where_clause
from .matrix import Snapshot, load_snapshot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    import numpy as np


# (query text, rowids passing the filters, or None when no filter applies beyond the
# record status, include inactive, k) -> [(rowid, cosine)] best first, or None (no channel).
# Memories at cosine 0 or below (orthogonal to the query: no evidence) are left out.
Dense = Callable[[str, "list[int] | None", bool, int], "list[tuple[int, float]] | None"]


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """rowid -> its fused score over these rankings (each best first, without duplicates)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, rowid in enumerate(ranking, 1):
            scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (k + rank)
    return scores


def minmax_sum(channels: Sequence[Sequence[tuple[int, float]]]) -> dict[int, float]:
    """rowid -> the sum over channels of its score scaled to [0, 1] by that channel's own
    best and worst candidate (a channel whose candidates all score alike gives each 1)."""
    scores: dict[int, float] = {}
    for channel in channels:
        if not channel:
            continue
        values = [s for _, s in channel]
        lo, hi = min(values), max(values)
        for rowid, s in channel:
            scores[rowid] = scores.get(rowid, 0.0) + ((s - lo) / (hi - lo) if hi > lo else 1.0)
    return scores


def fuse(
    conn: sqlite3.Connection, lexical: Sequence[Hit], dense: Sequence[tuple[int, float]], limit: int,
    method: str = "minmax",
) -> list[Hit]:
    """The fused top `limit`, as hits carrying their fused score (`method` "rrf": the
    baseline). Ties go to the better single rank, then to the lexical channel, then by path."""
    lex_rank = {h.rowid: i for i, h in enumerate(lexical, 1)}
    dense_rank = {rowid: i for i, (rowid, _) in enumerate(dense, 1)}
    if method == "rrf":
        scores = rrf([list(lex_rank), list(dense_rank)])
    else:
        scores = minmax_sum([[(h.rowid, h.score) for h in lexical], list(dense)])
    by_rowid = {h.rowid: h for h in lexical}
    extra = [r for r in dense_rank if r not in by_rowid]
    if extra:
        for row in reads.documents(conn, extra):  # a memory gone since the worker loaded its vectors is dropped
            by_rowid[row[0]] = Hit.from_row(row, 0.0)
    worst = len(lex_rank) + len(dense_rank) + 1

    def key(rowid: int) -> tuple[float, int, int, str]:
        lr, dr = lex_rank.get(rowid, worst), dense_rank.get(rowid, worst)
        return (-scores[rowid], min(lr, dr), lr, by_rowid[rowid].path)

    out = []
    for rowid in sorted((r for r in scores if r in by_rowid), key=key)[:limit]:
        hit = by_rowid[rowid]
        hit.score = scores[rowid]
        out.append(hit)
    return out


def fused_search(
    conn: sqlite3.Connection,
    text: str,
    dense: Dense,
    *,
    limit: int = 10,
    params: Params | None = None,
    filters: Filters | None = None,
    now: "datetime | None" = None,
    depth: int = FUSION_DEPTH,
    method: str = "minmax",
) -> tuple[list[Hit], bool]:
    """(hits, whether the dense channel took part): BM25 and dense rankings fused (`fuse`);
    the lexical hits alone when `dense` has nothing to offer."""
    from datetime import datetime, timezone

    filters = filters or Filters()
    now = now or datetime.now(timezone.utc)
    depth = max(depth, limit)
    lexical = search(conn, text, limit=depth, params=params, filters=filters, now=now, related=True)
    where, args = where_clause(filters, now)
    allowed = None
    if filters.categories or filters.tag or filters.retention_days:
        allowed = vectors.candidates(conn, where, args, include_inactive=True)
    # Retired and archived memories are ranked too, then hand their places to their
    # replacements, as in the lexical channel: a prompt worded like the old decision
    # finds, by meaning as by words, the one that holds now.
    ranked = dense(text, allowed, True, depth) if limit > 0 else None
    if ranked is None:
        return lexical[:limit], False
    if not filters.include_inactive:
        ranked = handed_on(conn, ranked, where, args)
    return fuse(conn, lexical, ranked, limit, method), True


def handed_on(
    conn: sqlite3.Connection, ranked: Sequence[tuple[int, float]], where: str, args: Sequence[object]
) -> list[tuple[int, float]]:
    """A dense ranking of all memories as active ones only: each retired or archived memory
    hands its cosine to the replacements it names (`query.replace_inactive`, the lexical
    channel's rule); one without a replacement leaves the ranking."""
    rows = {row[0]: row for row in reads.documents(conn, [r for r, _ in ranked], where, args)}
    hits = [Hit.from_row(rows[r], c) for r, c in ranked if r in rows]
    return [(h.rowid, h.score) for h in replace_inactive(conn, hits, where, list(args))]


# --- the dense channel in this process ----------------------------------------------------


class InProcess:
    """The dense channel with the model loaded in this process (`embedder`: anything with
    `embed`, `identity` and `dim`), over the index's vectors as one `matrix.Snapshot`
    (reloaded when `vectors_version` moves). Returns None when the index holds no vectors
    of this model (never synced with it: cosines against another model's mean nothing)."""

    def __init__(self, conn: sqlite3.Connection, embedder) -> None:
        self.conn, self.embedder = conn, embedder
        self.matrix: Snapshot | None = None
        self.queries: dict[str, "np.ndarray"] = {}  # query text -> vector (the evaluation repeats queries)
        self.problem: str | None = None

    def vector(self, text: str) -> "np.ndarray":
        vec = self.queries.get(text)
        if vec is None:
            vec = self.queries[text] = self.embedder.embed([text])[0]
        return vec

    def snapshot(self) -> Snapshot:
        if self.matrix is None or self.matrix.version != vectors.version(self.conn):
            self.matrix = load_snapshot(self.conn, int(self.embedder.dim))
        return self.matrix

    def __call__(self, text: str, allowed: list[int] | None, include_inactive: bool, k: int):
        import numpy as np

        info = vectors.model_info(self.conn)
        if info["embed_model"] != self.embedder.identity:
            self.problem = "the index holds no vectors of this model (run `memindex sync`)"
            return None
        snap = self.snapshot()
        if allowed is not None:
            mask = np.isin(snap.rowids, np.asarray(allowed, dtype=np.int64))
        else:
            mask = None if include_inactive else snap.active
        return [(r, c) for r, c in snap.top(self.vector(text), k, mask) if c > 0]  # orthogonal: no evidence

    def cosines(self, text: str, rowids: Sequence[int]) -> dict[int, float]:
        """Cosine of each of these memories (that has a vector) to `text`: what the worker
        answers the hook about its lexical candidates."""
        return self.snapshot().cosines(self.vector(text), rowids)


# --- the dense channel from the resident worker --------------------------------------------


class Worker:
    """The dense channel asked of the resident worker (`client.query`); None when it does
    not answer within `budget_s` (absent, busy, or a reply that makes no sense)."""

    def __init__(self, root: str, budget_s: float) -> None:
        self.root, self.budget_s = root, budget_s
        self.skipped = 0  # damaged stored vectors the worker left out

    def __call__(self, text: str, allowed: list[int] | None, include_inactive: bool, k: int):
        from . import client

        active = not include_inactive
        try:
            if allowed is not None and len(allowed) <= WORKER_ROWIDS_MAX:
                # few memories pass the filters: their cosines, ranked here
                reply = client.query(self.root, text, k=0, rowids=allowed, budget_s=self.budget_s, active=active)
                if reply is None:
                    return None
                pairs = [(int(r), float(c)) for r, c in dict(reply["cos"]).items()]
            else:
                want = k if allowed is None else WORKER_K_MAX  # filtered after: ask for more
                reply = client.query(self.root, text, k=want, rowids=(), budget_s=self.budget_s, active=active)
                if reply is None:
                    return None
                pairs = [(int(r), float(c)) for r, c in reply["top"]]
            if allowed is not None:
                wanted = set(allowed)
                pairs = [p for p in pairs if p[0] in wanted]
            skipped = reply.get("skipped", 0)
            self.skipped = skipped if isinstance(skipped, int) and not isinstance(skipped, bool) else 0
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # not the protocol this client speaks: answer lexically
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return [p for p in pairs if p[1] > 0][:k]
