"""Training and judging the relevance model (`memindex.relevance`) on the judged sets.

`collect` runs every judged prompt through the policy's own candidate pool and feature
code (the same functions the hook calls) and records each candidate's features and grade,
beside what the hand-set rules inject for the same prompt. `fit` is an L2-regularised
logistic regression (Newton's method, standardised features; numpy, training time only).
`choose_threshold` picks `min_confidence` (and `min_share`) on training prompts alone. `policy_metrics`
scores a model's injections as `memory.inject_metrics` scores the rules'.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from memindex import index
from memindex.config import parse_config
from memindex.defaults import CALIBRATED_MIN_DOCS
from memindex.index import reads
from memindex.policy.inject import candidate_pool, decide, with_nearest
from memindex.policy.prompt import intents_of
from memindex.retrieval.query import Params
from memindex.relevance import features
from memindex.index.sync import sync

from .memory import NOW, Strategy, earlier_turns, inject_metrics
from .docsets import file_of
from .sets import Store, is_holdout


@dataclass
class Prompt:
    """One judged prompt: its candidates' features and grades, and the rules' injections."""

    set_name: str
    store: str
    qid: str
    kind: str
    holdout: bool
    judgments: dict[str, int]
    rules: list[str]
    resume: bool = False
    questions: bool = False  # its store's memories carry their blind questions (`sets.add_questions`)
    group: str = ""  # the kind of store it was asked of (evaluation/kinds.py), set by the trainer
    documents: frozenset[str] = frozenset()  # the candidates that are documents' sections (files)
    small: bool = False  # asked of a small store cut from its set (`sets.small_stores`)
    docs: int = 0  # memories in its store (below `CALIBRATED_MIN_DOCS` the rules decide)
    cands: list[tuple[str, dict[str, float]]] = field(default_factory=list)
    # search ranking (`collect(ranking=True)`, with the worker): the top 10 of `memindex
    # search` (BM25 and dense fused), of BM25 alone and of the dense channel alone, and the
    # features of the union of the word matches and the `RANK_DEPTH` nearest by meaning
    search: dict[str, list[str]] = field(default_factory=dict)
    ranked: list[tuple[str, dict[str, float]]] = field(default_factory=list)

    @property
    def negative(self) -> bool:
        return not self.judgments


def collect(stores: list[Store], semantic: bool = False, questions: bool = False, ranking: bool = False,
            small: bool = False) -> list[Prompt]:
    """Every prompt of every store, through the product's candidate pool and features
    (`questions`: the stores' memories were given their questions; `ranking`, with
    `semantic`: also each judged prompt's search rankings, `Prompt.search` and `.ranked`)."""
    out: list[Prompt] = []
    # the rules' choice, for comparison (the product's default is the model itself)
    cfg = parse_config(_RULES_CFG(semantic))
    params = Params.from_config(cfg)
    base = cfg
    for store in stores:
        cfg = parse_config(_merged(_RULES_CFG(semantic), store.config)) if store.config else base
        sync(store.root, cfg)
        conn = index.open_reader(store.root)
        docs = reads.doc_count(conn)
        strategy = Strategy("rules", semantic=semantic)
        with tempfile.TemporaryDirectory(prefix="memindex-rel-") as tmp_name:
            tmp = Path(tmp_name)
            for q in store.queries:
                turns = earlier_turns(tmp / f"{q['id']}.jsonl", q) if q.get("transcript") else []
                dense_fn = strategy.worker_view(conn, q["query"], turns) if semantic else None
                outcome = decide(conn, q["query"], cfg, turns=turns, now=NOW, params=params, dense=dense_fn)
                p = Prompt(store.set_name, store.name, q["id"], q.get("kind", ""), is_holdout(store.set_name, q["id"]),
                           dict(q["judgments"]), _unique(file_of(h.path) for h in outcome.hits), questions=questions,
                           small=small, docs=docs)
                if outcome.intent == "resume" or "resume" in intents_of(q["query"]):
                    p.resume = True
                elif len(q["query"].strip()) >= cfg["retrieval.min_prompt_chars"]:
                    pool = candidate_pool(conn, q["query"], cfg, turns=turns, now=NOW, params=params)
                    dense = outcome.dense if semantic else None
                    pool = with_nearest(conn, pool, dense, NOW)
                    p.cands = [(file_of(h.path), f) for h, f in features(conn, pool, NOW, dense)]
                    p.documents = frozenset(path for path, f in p.cands if f.get("document"))
                    if ranking and dense is not None and p.judgments:
                        _rankings(conn, p, q["query"], turns, cfg, params, strategy, dense)
                out.append(p)
        conn.close()
    return out


def _RULES_CFG(semantic: bool) -> dict:
    return {"retrieval": {"match_strategy": "fts5_bm25"}, "semantic": {"enabled": semantic}}


def _merged(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _unique(paths) -> list[str]:  # type: ignore[no-untyped-def]
    return list(dict.fromkeys(paths))


RANK_DEPTH = 10  # search ranks the word matches and this many nearest memories by meaning


def _rankings(conn, p: Prompt, prompt: str, turns: list[str], cfg, params: Params, strategy: Strategy, dense) -> None:
    """The search rankings of one prompt (see `Prompt.search`)."""
    from memindex.policy.prompt import enrich
    from memindex.retrieval.query import Filters, search
    from memindex.semantic.fusion import fused_search

    text, filters, channel = enrich(prompt, turns, cfg), Filters.from_config(cfg), strategy.dense(conn)
    fused, _ = fused_search(conn, text, channel, limit=10, params=params, filters=filters, now=NOW)
    paths = dict(conn.execute("SELECT rowid, path FROM documents"))
    p.search = {
        "fused": [h.path for h in fused],
        "bm25": [h.path for h in search(conn, text, limit=10, params=params, filters=filters, now=NOW, related=True)],
        "dense": [paths[r] for r, _ in (channel(text, None, False, 10) or [])],
    }
    pool = with_nearest(conn, candidate_pool(conn, prompt, cfg, turns=turns, now=NOW, params=params), dense, NOW, RANK_DEPTH)
    p.ranked = [(h.path, f) for h, f in features(conn, pool, NOW, dense)]


def recall_at(prompts: list[Prompt], runs: list[list[str]], k: int = 10) -> float:
    """Mean over these prompts of the share of their judged memories in a run's top k."""
    shares = [sum(1 for x in run[:k] if p.judgments.get(x, 0) >= 1) / sum(1 for g in p.judgments.values() if g >= 1)
              for p, run in zip(prompts, runs)]
    return sum(shares) / len(shares) if shares else 0.0


# --- the model -----------------------------------------------------------------------------


def design(prompts: list[Prompt], names: list[str]):
    """X, y (grade >= 1), grade-2 flags and each row's weight (its group's: `group_weights`)
    for every candidate of these prompts."""
    import numpy as np

    rows, y, g2, w = [], [], [], []
    weight = group_weights(prompts)
    for p in prompts:
        for path, f in p.cands:
            rows.append([f.get(n, 0.0) for n in names])
            grade = p.judgments.get(path, 0)
            y.append(1.0 if grade >= 1 else 0.0)
            g2.append(grade >= 2)
            w.append(weight[p.group])
    return np.array(rows, dtype=float).reshape(-1, len(names)), np.array(y), np.array(g2), np.array(w)


def group_weights(prompts: list[Prompt]) -> dict[str, float]:
    """Each group (kind of store) weighs as much as any other in a fit, whatever its number
    of prompts: LoCoMo's 1,200 training prompts must not drown an ADR collection's 30."""
    counts: dict[str, int] = {}
    for p in prompts:
        counts[p.group] = counts.get(p.group, 0) + 1
    total = len(prompts)
    return {g: total / (len(counts) * n) for g, n in counts.items()}


def fit(prompts: list[Prompt], names: list[str], l2: float = 1.0, grade2_weight: float = 1.0) -> dict:
    """An L2-regularised logistic regression, each kind of store weighed alike; returns
    {bias, weights, means} in raw units."""
    import numpy as np

    X, y, g2, kw = design(prompts, names)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd < 1e-9] = 1.0
    Z = np.hstack([np.ones((len(X), 1)), (X - mu) / sd])
    sw = np.where(g2, grade2_weight, 1.0) * kw
    w = np.zeros(Z.shape[1])
    reg = np.full(Z.shape[1], l2)
    reg[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(Z @ w, -35, 35)))
        grad = Z.T @ (sw * (p - y)) + reg * w
        hess = (Z * (sw * p * (1 - p))[:, None]).T @ Z + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    raw = w[1:] / sd
    bias = w[0] - float((raw * mu).sum())
    return {"bias": float(bias), "weights": {n: float(v) for n, v in zip(names, raw)},
            "means": {n: float(v) for n, v in zip(names, mu)}}


def probabilities(model, prompts: list[Prompt]) -> list[list[tuple[str, float]]]:
    """Per prompt, (path, P(relevant)) for each candidate, best first."""
    out = []
    for p in prompts:
        scored = [(path, model.prob(f)) for path, f in p.cands]
        scored.sort(key=lambda s: -s[1])
        out.append(scored)
    return out


def picks(scored: list[tuple[str, float]], threshold: float, max_inject: int = 3, share: float = 0.0,
          documents: frozenset[str] = frozenset(), doc_bar: tuple[float, float] | None = None) -> list[str]:
    """The calibrated policy's choice among one prompt's candidates (best first): P at
    least `threshold` and at least `share` of the best candidate's of its population; a
    document's section (`documents`) by its own bar, `doc_bar` (`relevance.choose`)."""
    doc_t, doc_s = doc_bar or (threshold, share)
    best = {doc: next((prob for path, prob in scored if (path in documents) == doc), 0.0) for doc in (False, True)}
    out = []
    for path, prob in scored:
        doc = path in documents
        t, s = (doc_t, doc_s) if doc else (threshold, share)
        if prob >= t and prob >= s * best[doc]:
            out.append(path)
    return out[:max_inject]


def policy_metrics(prompts: list[Prompt], chosen: list[list[str]]) -> dict[str, float]:
    """`memory.inject_metrics` of these injections, with the counts behind its negatives' share."""
    queries = [{"id": str(i), "judgments": p.judgments} for i, p in enumerate(prompts)]
    m = inject_metrics(queries, {str(i): {"inject": got} for i, got in enumerate(chosen)})
    neg = sum(1 for p in prompts if p.negative)
    return {**m, "injected": sum(len(got) for p, got in zip(prompts, chosen) if not p.negative),
            "negatives": neg, "neg_injected": sum(1 for p, got in zip(prompts, chosen) if p.negative and got)}


def model_choice(prompts: list[Prompt], scored: list[list[tuple[str, float]]], threshold: float,
                 max_inject: int = 3, share: float = 0.0, doc_bar: tuple[float, float] | None = None) -> list[list[str]]:
    """What the calibrated policy injects: the rules' choice where the prompt asks to resume
    (rule 3 is not about relevance) or its store is too small for the model
    (`CALIBRATED_MIN_DOCS`), else `picks` (documents by `doc_bar`)."""
    return [p.rules if p.resume or p.docs < CALIBRATED_MIN_DOCS
            else picks(s, threshold, max_inject, share, p.documents, doc_bar) for p, s in zip(prompts, scored)]


BETA = 1.0  # precision and grade-2 recall weigh alike (the targets: precision 0.85 at recall 0.80)



def objective(m: dict[str, float]) -> float:
    """What a threshold is chosen for on training prompts: F-beta (BETA) of precision and
    grade-2 recall, less half the share of unrelated prompts injected."""
    p, r, b2 = m["precision"], m["recall_g2"], BETA * BETA
    f = (1 + b2) * p * r / (b2 * p + r) if p + r else 0.0
    return f - 0.5 * m["false_inject"]


def out_of_fold(prompts: list[Prompt], fit_model) -> tuple[list[Prompt], list[list[tuple[str, float]]]]:
    """Each set's prompts scored by a model (`fit_model(prompts)`) fitted on the other sets
    only: where a threshold is chosen, the model must be as it is on a store it never saw
    (a model scoring its own training prompts is surer of them than of a new store's)."""
    held: list[Prompt] = []
    scored: list[list[tuple[str, float]]] = []
    for name in sorted({p.set_name for p in prompts}):
        test = [p for p in prompts if p.set_name == name]
        held += test
        scored += probabilities(fit_model([p for p in prompts if p.set_name != name]), test)
    return held, scored


def choose_threshold(prompts: list[Prompt], scored: list[list[tuple[str, float]]]) -> tuple[float, float]:
    """`min_confidence` and `min_share`, chosen together on these (training) prompts, each
    scored out of fold (`out_of_fold`): the objective's mean over the groups (kinds of
    store), so that one threshold holds on each kind rather than on the largest."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(prompts):
        groups.setdefault(p.group, []).append(i)

    def metrics(ts: tuple[float, float]) -> list[dict[str, float]]:
        chosen = model_choice(prompts, scored, ts[0], 3, ts[1])
        return [policy_metrics([prompts[i] for i in idx], [chosen[i] for i in idx]) for idx in groups.values()]

    grid = [(t / 100, s / 10) for t in range(5, 96) for s in range(0, 10)]
    scored_grid = [(ts, metrics(ts)) for ts in grid]
    return max(scored_grid, key=lambda x: (sum(objective(m) for m in x[1]) / len(x[1]), x[0]))[0]


def calibration(prompts: list[Prompt], scored: list[list[tuple[str, float]]],
                bins: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.01)) -> list[list[object]]:
    """Predicted against observed relevance by probability bin (every candidate counts)."""
    pairs = []
    for p, s in zip(prompts, scored):
        for path, prob in s:
            pairs.append((prob, p.judgments.get(path, 0) >= 1))
    rows = []
    for lo, hi in zip(bins, bins[1:]):
        inside = [(pr, rel) for pr, rel in pairs if lo <= pr < hi]
        if inside:
            rows.append([f"{lo:.1f}-{min(hi, 1.0):.1f}", len(inside), sum(pr for pr, _ in inside) / len(inside),
                         sum(rel for _, rel in inside) / len(inside)])
    return rows
