"""The relevance model: P(relevant | what the engine knows about one candidate).

The injection policy's hand-set thresholds (rules 1, 2, 6, 7) each drew one boundary over
one signal. This draws one boundary over all of them: a logistic regression over features
the engine already computes for a prompt's word matches (`features`), trained on the dev
slices of every judged set (`scripts/train_relevance.py`), its weights a data file
(`memindex/data/relevance.json`). Inference is a dot product: standard library only, the
prompt hook imports it (and not `explain`, the words for a decision, unless one is worded).
"""

from __future__ import annotations

import math
import os

from ..defaults import CATEGORY_PRIORITY, COVERAGE_TERMS, DATA_DIR
from ..index.db import meta_values
from ..index.reads import Scratch
from ..lean import loads
from ..retrieval.query import term_weights
from ..text.words import has_cjk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from ..config import Config
    from ..retrieval.hits import Hit
    from ..policy.dense import Dense
    from ..policy.inject import Outcome, Pool
    from ..lean import sqlite3
    from ..retrieval.query import QueryPlan
    from ..text.words import Term

    Matches = dict[Term, dict[int, frozenset[str]]]  # per term, per memory, the columns it matches in

WEIGHTS_FILE = os.path.join(DATA_DIR, "relevance.json")

def _days(iso: str, now_days: float) -> float:
    """Days from an ISO date (`2026-11-22...`) to `now_days`, without importing datetime."""
    try:
        y, m, d = int(iso[0:4]), int(iso[5:7]), int(iso[8:10])
    except (ValueError, TypeError):
        return 365.0
    # days from civil (Howard Hinnant's algorithm), epoch 1970-01-01
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return max(0.0, now_days - (era * 146097 + doe - 719468))


def _now_days(now: datetime | None) -> float:
    if now is not None:
        return now.timestamp() / 86400.0
    import time

    return time.time() / 86400.0


def _identifiers(plan: QueryPlan, idents: list[Term], matches: Matches) -> dict[int, float]:
    """Per memory (by the rowid its words are read from), its share of the IDF mass of the
    prompt's identifiers that some memory holds (`mark_booted`, `Economy.reconcile`: terms
    of several parts, matched as a phrase). An identifier is rarely shared by accident.
    `idents`: the prompt's terms of several parts that some memory holds; `matches`: the
    pool's `column_matches`."""
    mass = sum(plan.idf(t) for t in idents)
    got: dict[int, float] = {}
    for t in idents:
        for rowid in matches.get(t, {}):
            got[rowid] = got.get(rowid, 0.0) + plan.idf(t) / mass
    return got


def column_matches(conn: sqlite3.Connection, plan: QueryPlan, hits: list[Hit]) -> Matches:
    """For each of the plan's terms some memory holds, the columns of each of these hits
    (by the rowid its words are read from) that match it: one query a term for every column
    at once (`Scratch.columns_matching`), where a coverage per column took one query a term and
    column; `_coverages` reads them."""
    rowids = {hit.via or hit.rowid for hit in hits}
    Scratch.load_from(conn, rowids)
    if plan.side_df:
        Scratch.load_from(conn, rowids, spaceless=True)
    out: Matches = {}
    for term, df in plan.df.items():
        if df == 0:
            continue
        found = Scratch.columns_matching(plan.expressions[term]) if df > plan.side_df.get(term, 0) else {}
        if term in plan.side_df:
            for rowid, cols in Scratch.columns_matching(plan.expressions[term], spaceless=True).items():
                found[rowid] = found.get(rowid, frozenset()) | cols
        out[term] = found
    return out


# the coverages the model reads: name -> (the columns a term may match in, an absent term's weight)
COVERAGES: dict[str, tuple[tuple[str, ...], float | None]] = {
    "title": (("title",), None), "tags": (("tags",), None), "body": (("body", "forms"), None),
    "questions": (("questions",), None), "known": ((), 0.0), "all": ((), None),
}


def _coverages(plan: QueryPlan, hits: list[Hit], matches: Matches) -> dict[str, list[float]]:
    """`retrieval.query.coverage` by each of COVERAGES at once, a list in the order of
    `hits`, from one per-column match (`column_matches`): the term weights are computed
    once per kind of mass, not once per column."""
    masses = {absent: term_weights(plan, absent, COVERAGE_TERMS) for _, absent in COVERAGES.values()}
    # a replacement found through a retired memory is judged by the words that found it
    # (the last hit of a rowid, as `coverage`)
    by_rowid = {hit.via or hit.rowid: i for i, hit in enumerate(hits)}
    got = {name: [0.0] * len(hits) for name in COVERAGES}
    for term, found in matches.items():
        for rowid, cols in found.items():
            i = by_rowid.get(rowid)
            if i is None:
                continue
            for name, (columns, absent) in COVERAGES.items():
                if not columns or cols.intersection(columns):
                    got[name][i] += masses[absent][0][term]
    out = {}
    for name, (_, absent) in COVERAGES.items():
        total, values = masses[absent][1], got[name]
        out[name] = [min(values[i] / total, 1.0) if total > 0 and by_rowid[h.via or h.rowid] == i else 0.0
                     for i, h in enumerate(hits)]
    return out


def features(
    conn: sqlite3.Connection, pool: Pool, now: datetime | None = None, dense: Dense | None = None
) -> list[tuple[Hit, dict[str, float]]]:
    """Each active word match of the pool with its features (sets `hit.coverage`)."""
    active = [h for h in pool.hits if h.record_status == "active"] + list(pool.extra)
    if not active:
        return []
    plan = pool.plan
    # the prompt's coverage by each column and by the memory's whole (the hits loaded once)
    matches = column_matches(conn, plan, active)
    cov = _coverages(plan, active, matches)
    for h, c in zip(active, cov["all"]):
        h.coverage = c
    # a memory saved without questions cannot match there: no evidence against it
    asks = Scratch.with_questions()
    phrases = [t for t, df in plan.df.items() if df and t.is_phrase]
    idents = _identifiers(plan, phrases, matches)
    has_ident = float(bool(phrases))
    covs = cov["all"]
    best_cov = max(covs) or 1.0
    by_cov = sorted(range(len(covs)), key=lambda i: -covs[i])
    cov_rank = {i: r for r, i in enumerate(by_cov)}
    best = active[0].score or 1.0
    idfs = sorted((plan.idf(t) for t in plan.df), reverse=True)[:COVERAGE_TERMS]
    ceiling = math.log(1 + (plan.n_docs + 0.5) / 0.5) or 1.0
    rarity = (sum(idfs) / len(idfs) / ceiling) if idfs else 0.0
    # words no memory has; a CJK bigram straddling two words is unknown by construction
    # (its seam), so those runs are judged by their coverage alone
    words = [df for t, df in plan.df.items() if not has_cjk(t.text)]
    unknown = (sum(1 for df in words if df == 0) / len(words)) if words else 0.0
    n_terms = math.log1p(len(plan.df))
    today = _now_days(now)
    # a session ages from the store's own latest one (a project left for a year: its last
    # session is still the latest), and never from a date ahead of the clock
    latest = meta_values(conn, ("newest_session",)).get("newest_session")
    fresh = isinstance(latest, str) and latest[:4].isdigit() and latest[5:7].isdigit() and latest[8:10].isdigit()
    session_today = today - _days(latest, today) if fresh else today  # type: ignore[arg-type]
    nearest = dense.top[0][1] if dense is not None and dense.top else None
    cosines = {**dict(dense.top), **dense.cos} if dense is not None else {}
    margin = 0.0
    if dense is not None and len(dense.top) > 1:
        peers = [c for _, c in dense.top[1:10]]
        margin = dense.top[0][1] - sum(peers) / len(peers)
    pool_cos = sorted((cosines[h.rowid] for h in active if h.rowid in cosines), reverse=True)
    by_meaning = {h.rowid for h in pool.extra}
    out = []
    for i, h in enumerate(active):
        nxt = active[i + 1].score if i + 1 < len(active) else 0.0
        f = {
            "rel_score": h.score / best,
            # BM25 grows with the log of the store's size (IDF): against the IDF of a word
            # in one memory, a score means the same in a store of 6 memories and of 100
            "norm_score": max(h.score, 0.0) / ceiling,
            "top": float(i == 0),
            "rank": math.log1p(i),
            "gap_next": (h.score - nxt) / best,
            "coverage": covs[i],
            "coverage_rel": covs[i] / best_cov,
            "coverage_top": float(covs[i] >= best_cov),
            "best_coverage": best_cov,
            "coverage_rank": math.log1p(cov_rank[i]),
            "known_coverage": cov["known"][i],
            "title_coverage": cov["title"][i],
            "tags_coverage": cov["tags"][i],
            "body_coverage": cov["body"][i],
            "questions_coverage": cov["questions"][i],
            "has_questions": float((h.via or h.rowid) in asks),
            "identifier": min(idents.get(h.via or h.rowid, 0.0), 1.0),
            "has_identifier": has_ident,
            "n_terms": n_terms,
            "rarity": rarity,
            "unknown": unknown,
            "anchored": float(h.rowid in pool.anchored),
            "asked": float(pool.asked is not None and h.category == pool.asked),
            "general": float(pool.general),
            "general_gap": float(pool.general) * (1.0 - covs[i]),
            "age": math.log1p(_days(h.updated_at, today)),
            # a session summary ages; an accepted decision, a constraint or a runbook does not
            # until it is superseded, retired or stale (which take it out of the pool)
            "age_session": math.log1p(_days(h.updated_at, session_today)) if h.category == "session_summary" else 0.0,
            "document": float(h.path.startswith("@")),
            "sections": math.log1p(h.sections - 1),  # a document's further sections that matched
            "replacement": float(h.via is not None),
        }
        for c in CATEGORY_PRIORITY:
            f[f"cat_{c}"] = float(h.category == c)
        if dense is not None:
            cos = cosines.get(h.rowid)
            f["cos"] = cos if cos is not None else 0.0
            f["cos_gap"] = (nearest - cos) if cos is not None and nearest is not None else 0.0
            f["standout"] = margin
            f["is_nearest"] = float(bool(dense.top) and dense.top[0][0] == h.rowid)
            f["cos_rank"] = math.log1p(pool_cos.index(cos)) if cos is not None else math.log1p(len(pool_cos))
            f["cos_x_coverage"] = f["cos"] * covs[i]
            # a memory no word found is another population: its evidence gets its own weights
            alone = float(h.rowid in by_meaning)
            f["meaning_only"] = alone
            for k in ("cos", "cos_gap", "standout", "is_nearest", "cos_rank"):
                f["mo_" + k] = alone * f[k]
            f["mo_standout_nearest"] = alone * margin * f["is_nearest"]
        out.append((h, f))
    return out


class Bar:
    """Where a candidate is injected: its P reaches `min_confidence` and `min_share` of the
    best P among the prompt's candidates of its population (chosen together at training)."""

    __slots__ = ("min_confidence", "min_share")

    def __init__(self, min_confidence: float, min_share: float = 0.0) -> None:
        self.min_confidence, self.min_share = min_confidence, min_share


class Model:
    """A logistic regression in the raw feature space: P = sigmoid(bias + sum w_i x_i).
    `means` are the training set's feature means, for explaining a score as each feature's
    push away from an average candidate. Two populations each get their own `Bar`: memory
    files, and sections of the project's documents (long texts, another scale of scores and
    coverages: the same P does not buy the same precision in both). `min_share`: a second
    pick far less likely than the first is mostly a near miss."""

    __slots__ = ("name", "bias", "weights", "means", "memories", "documents")

    def __init__(self, name: str, bias: float, weights: dict[str, float], means: dict[str, float],
                 min_confidence: float, min_share: float = 0.0, documents: Bar | None = None) -> None:
        self.name, self.bias, self.weights, self.means = name, bias, weights, means
        self.memories = Bar(min_confidence, min_share)
        self.documents = documents or self.memories

    @property
    def min_confidence(self) -> float:
        return self.memories.min_confidence

    @property
    def min_share(self) -> float:
        return self.memories.min_share

    def bar(self, document: bool) -> Bar:
        return self.documents if document else self.memories

    def logit(self, f: dict[str, float]) -> float:
        return self.bias + sum(w * f.get(k, 0.0) for k, w in self.weights.items())

    def prob(self, f: dict[str, float]) -> float:
        z = self.logit(f)
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


_models: dict[str, Model] = {}


def load(kind: str = "lexical", path: str = WEIGHTS_FILE) -> Model:
    """The shipped model for `kind` ("lexical", or "semantic" with the worker's evidence)."""
    key = f"{path}#{kind}"
    if key not in _models:
        with open(path, "rb") as fh:
            data = loads(fh.read())
        m = data["models"].get(kind) or data["models"]["lexical"]  # no model for the worker's view: words alone
        docs = m.get("documents")
        _models[key] = Model(kind, float(m["bias"]), {k: float(v) for k, v in m["weights"].items()},
                             {k: float(v) for k, v in m["means"].items()}, float(m["min_confidence"]),
                             float(m.get("min_share", 0.0)),
                             Bar(float(docs["min_confidence"]), float(docs.get("min_share", 0.0))) if docs else None)
    return _models[key]


def choose(conn: sqlite3.Connection, pool: Pool, cfg: Config, now: datetime | None, outcome: Outcome) -> list[Hit]:
    """The relevance model decides (`match_strategy: calibrated`): every candidate's
    P(relevant) from all the evidence at once; the best ones reaching their population's
    bar (`Model.bar`: `retrieval.min_confidence` when the user set it, else the trained one,
    and its share of the population's best P), at most `max_inject`."""
    model = load("semantic" if outcome.dense is not None else "lexical")
    given = cfg["retrieval.min_confidence"]
    scored = [(model.prob(f), h, f) for h, f in features(conn, pool, now, outcome.dense)]
    scored.sort(key=lambda s: -s[0])
    best = {doc: next((p for p, h, _ in scored if h.path.startswith("@") == doc), 0.0) for doc in (False, True)}
    picks: list[Hit] = []
    for p, h, f in scored:
        doc = h.path.startswith("@")
        bar = model.bar(doc)
        floor = bar.min_confidence if given is None else given
        kept = p >= floor and p >= bar.min_share * best[doc] and len(picks) < cfg["retrieval.max_inject"]
        if kept:
            picks.append(h)
        outcome.note(h, kept, lambda p=p, f=f, kept=kept, floor=floor, bar=bar, top=best[doc]:
                     _why(model, p, f, kept, floor, bar.min_share, top, cfg), p)
    return picks


def _why(model: Model, p: float, f: dict[str, float], kept: bool, floor: float, share: float, best: float,
         cfg: Config) -> str:
    from .explain import why  # explain's words: loaded only when a decision is worded

    return why(model, p, f, kept, floor, share, best, cfg)
