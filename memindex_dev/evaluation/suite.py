"""Every judged set side by side: the injection policy and on-demand search, per set and per
slice (dev: settings may be chosen on it; holdout: never looked at while choosing).

`python scripts/eval_memory.py` prints this table; `--set DIR` runs one set with the
variants table of `memory.evaluate_set` instead.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from memindex import index
from memindex.config import Config
from memindex.index.sync import sync

from .memory import SEMANTIC_CFG, Strategy, inject_metrics, run, search_metrics
from .metrics import table
from .sets import SETS, Store, all_sets, is_holdout

CHARS_PER_TOKEN = 4  # the usual estimate for English text; the block is mostly paths and titles


def _metrics(queries: list[dict], results: dict[str, dict]) -> dict[str, float]:
    im = inject_metrics(queries, results)
    positives = [q for q in queries if q["judgments"]]
    sm = search_metrics(positives, results) if positives else {"R@10": 0.0, "nDCG@10": 0.0}
    prompts = len(queries) or 1
    im["tokens"] = sum(results[q["id"]]["chars"] for q in queries) / CHARS_PER_TOKEN / prompts
    im["silent_all"] = sum(1 for q in queries if not results[q["id"]]["inject"]) / prompts
    im["positives"] = len(positives)
    return {**im, **sm}


def run_suite(
    strategies: Sequence[Strategy],
    names: tuple[str, ...] = SETS,
    prepare: Callable[[Store], None] | None = None,
    questions: bool = False,
    kinds: tuple[str, ...] = (),
) -> dict[tuple[str, str, str], dict[str, float]]:
    """(set, slice, strategy) -> metrics, over every store of every set. With `questions`
    each memory carries its blind questions (`sets.add_questions`); each of `kinds` adds
    the slices `<slice> <kind>` (that kind's queries only)."""
    per: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)  # (set, strategy) -> qid -> result
    queries_of: dict[str, list[dict]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="memindex-suite-") as tmp_name:
        tmp = Path(tmp_name)
        for store in all_sets(tmp, names, questions):
            # a semantic strategy needs the store's vectors: the product's sync embeds it once
            sync(store.root, SEMANTIC_CFG if any(s.semantic for s in strategies) else Config())
            if prepare is not None:
                prepare(store)
            scratch = tmp / "transcripts" / store.name
            scratch.mkdir(parents=True, exist_ok=True)
            conn = index.open_reader(store.root)
            try:
                for strategy in strategies:
                    results = run(conn, store.queries, strategy, scratch)
                    per[(store.set_name, strategy.name)].update(
                        {f"{store.name}/{qid}": r for qid, r in results.items()}
                    )
            finally:
                conn.close()
            queries_of[store.set_name] += [{**q, "id": f"{store.name}/{q['id']}"} for q in store.queries]
    out: dict[tuple[str, str, str], dict[str, float]] = {}
    for set_name, queries in queries_of.items():
        slices = {
            "dev": [q for q in queries if not is_holdout(set_name, q["id"])],
            "holdout": [q for q in queries if is_holdout(set_name, q["id"])],
        }
        for kind in kinds:
            slices.update({f"{name} {kind}": [q for q in slices[name] if q["kind"] == kind] for name in ("dev", "holdout")})
        for strategy in strategies:
            results = per[(set_name, strategy.name)]
            for slice_name, qs in slices.items():
                out[(set_name, slice_name, strategy.name)] = _metrics(qs, results)
    return out


def print_suite(summary: dict[tuple[str, str, str], dict[str, float]], out: Callable[[str], None] = print) -> None:
    rows = []
    for (set_name, slice_name, strategy), m in summary.items():
        rows.append([
            set_name, slice_name, strategy, m["precision"], m["recall_g2"], m["false_inject"], m["silent"],
            m["per_prompt"], f"{m['tokens']:.0f}", m["R@10"], m["nDCG@10"],
        ])
    out(table(["set", "slice", "strategy", "inject precision", "grade-2 recall", "negatives injected",
               "silent (positives)", "injected/prompt", "tokens/prompt", "Recall@10", "nDCG@10"], rows))
