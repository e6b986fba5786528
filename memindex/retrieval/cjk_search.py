"""Search over text without spaces: `fts_cjk` (memindex/text/cjk.py) fused into the BM25 ranking.

`query.plan_query` counts each term in `fts` and, in a store with CJK text, in `fts_cjk`
too (a bigram only there, a word in both: glued to CJK text it is only in `fts_cjk`).
When a term it keeps matches in `fts_cjk`, `search` ranks with `rank` here instead of
`fts` alone; otherwise nothing changes.

**One BM25 scale.** FTS5's bm25() is a sum over the query's terms of IDF x a saturated,
length-normalized term frequency, so the two tables' scores add up term by term. But an
FTS5 table computes IDF from its own row count: in `fts_cjk`, which holds only the CJK
memories, a bigram in 2 of 3 of them would weigh nothing (FTS5 floors a negative IDF at
1e-6) however rare it is in the store. So each `fts_cjk` term is ranked on its own and its
bm25 rescaled from that table's IDF to the IDF the term has in the whole store (FTS5's
formula, the store's memory count, the term's matches in both tables): the result is
what `fts` would score if it held the bigrams, with `fts_cjk`'s own length normalization.
The `fts` part is FTS5's bm25 for the query's other terms, over every memory they match
(bounded, as every term asked, by the planner's posting budget).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence

from ..text.cjk import bigrams, has_cjk
from ..index import reads
from ..text.words import Term

TYPE_CHECKING = False  # annotations only
if TYPE_CHECKING:
    from .query import QueryPlan


def fts5_idf(n_rows: int, n_hits: int) -> float:
    """FTS5's bm25 IDF (fts5_aux.c): log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    idf = math.log((n_rows - n_hits + 0.5) / (n_hits + 0.5)) if n_rows > 0 else 0.0
    return idf if idf > 0 else 1e-6


def scores(conn: sqlite3.Connection, plan: QueryPlan, weights: Sequence[float]) -> dict[int, float]:
    """rowid -> score (higher is better) of every memory matching the plan's terms."""
    total: dict[int, float] = {}
    words = [plan.expressions[t] for t in plan.used if plan.df[t] > plan.side_df.get(t, 0)]
    if words:
        for rowid, bm25 in reads.rank(conn, " OR ".join(words), weights, -1):
            total[rowid] = -bm25
    for term in plan.used:
        if not plan.side_df.get(term):
            continue
        found = reads.rank_spaceless(conn, plan.expressions[term], weights)
        if not found:
            continue
        in_store = plan.df[term] - plan.side_df[term] + len(found)
        scale = fts5_idf(plan.n_docs, in_store) / fts5_idf(plan.spaceless, len(found))
        for rowid, bm25 in found:
            total[rowid] = total.get(rowid, 0.0) - bm25 * scale
    return total


def rank(
    conn: sqlite3.Connection, plan: QueryPlan, weights: Sequence[float], where: str, args: Sequence[object], fetch: int
) -> list[tuple]:
    """`reads.HIT_COLUMNS` + bm25-like score (lower is better) of the best `fetch` matches
    passing the filters `where`, best first (what `search` ranks from `fts` alone)."""
    total = scores(conn, plan, weights)
    order = sorted(total, key=lambda r: (-total[r], r))
    rows = reads.documents(conn, order[:fetch], where, args)
    if len(rows) < fetch < len(order):  # too many filtered out: filter them all
        rows = reads.documents(conn, order, where, args)
    return sorted((r + (-total[r[0]],) for r in rows), key=lambda r: (r[8], r[0]))[:fetch]


def coverage_mass(plan: QueryPlan, weights: dict[Term, float], unknown: float) -> list[float]:
    """The weights the coverage rule sums, for a query with CJK runs.

    A bigram no memory has is mostly a seam between two words (库迁 in 数据库迁移), not a
    word the memories lack: weighing each at full IDF, as an unknown English word is,
    would leave every CJK prompt uncovered. So such bigrams weigh nothing; instead each
    stretch of a run that no known bigram covers (a word no memory has, 容器 in
    数据库容器迁移) counts as len // 2 unknown words, at `unknown` each."""
    values = [w for t, w in weights.items() if plan.df.get(t) or not has_cjk(t.text)]
    stretches = set()
    for run in plan.runs:
        asked = [False] * len(run)
        known = [False] * len(run)
        for i, pair in enumerate(bigrams(run)):
            df = plan.df.get(Term((pair,)))
            if df is not None:
                asked[i] = asked[i + 1] = True
                if df > 0:
                    known[i] = known[i + 1] = True
        stretch = ""
        for ch, a, k in zip(run + " ", asked + [False], known + [False]):
            if a and not k:
                stretch += ch
            elif stretch:
                stretches.add(stretch)
                stretch = ""
    values.extend(unknown for s in stretches for _ in range(len(s) // 2))
    return values
