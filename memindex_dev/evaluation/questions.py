"""Questions at save time: the judged sets with and without each memory's `questions`.

Each local set's `questions.json` holds, for every memory, the questions a model would
write when saving it, written by a helper that never saw the set's prompts. The same
judged prompts run against two copies of each store: as committed, and with the questions
added before indexing (`sets.add_questions`), the latter at several weights of the
questions column. Per set and slice (dev: the weight may be chosen on it; holdout: never
looked at while choosing): paraphrase Recall@10, Recall@10 over every positive prompt,
and the injection policy's precision and grade-2 recall (`retrieval.match_strategy`
fts5_bm25, the rules, whatever the default). `python scripts/eval_memory.py --questions-compare`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from .memory import Strategy
from .metrics import table
from .sets import QUESTIONS_FILE, REPO, SETS
from .suite import run_suite

LOCAL_SETS = tuple(s for s in SETS if (REPO / "evalsets" / s / QUESTIONS_FILE).is_file())  # not LoCoMo, not jetty
WEIGHTS = (1.0, 2.0, 3.0, 5.0)
KIND = "paraphrase"
WITHOUT = "without questions"


def _variants(weights: Sequence[float], semantic: bool) -> list[Strategy]:
    out = [Strategy(f"questions x{w:g}", _config(w)) for w in weights]
    if semantic:
        out += [Strategy(f"semantic, questions x{w:g}", _config(w), semantic=True) for w in weights]
    return out


def _config(weight: float | None = None) -> dict:
    """The rules (fts5_bm25), with this questions weight if given."""
    retrieval: dict = {"match_strategy": "fts5_bm25"}
    if weight is not None:
        retrieval["column_weights"] = {"questions": weight}
    return {"retrieval": retrieval}


def compare(
    names: tuple[str, ...] = LOCAL_SETS, weights: Sequence[float] = WEIGHTS, semantic: bool = False,
) -> dict[tuple[str, str, str], dict[str, float]]:
    """(set, slice, variant) -> metrics; slices dev, holdout and each with ` paraphrase`."""
    base = [Strategy(WITHOUT, _config())] + ([Strategy(f"semantic, {WITHOUT}", _config(), semantic=True)] if semantic else [])
    summary = run_suite(base, names, kinds=(KIND,))
    summary.update(run_suite(_variants(weights, semantic), names, questions=True, kinds=(KIND,)))
    return summary


def pooled(summary: dict[tuple[str, str, str], dict[str, float]]) -> dict[tuple[str, str], float]:
    """(slice, variant) -> paraphrase Recall@10 over the paraphrase prompts of every set."""
    total: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (_, slice_name, variant), m in summary.items():
        if slice_name.endswith(KIND):
            acc = total[(slice_name.split()[0], variant)]
            acc[0] += m["R@10"] * m["positives"]
            acc[1] += m["positives"]
    return {key: got / n if n else 0.0 for key, (got, n) in total.items()}


def print_compare(summary: dict[tuple[str, str, str], dict[str, float]], out: Callable[[str], None] = print) -> None:
    rows = []
    for (set_name, slice_name, variant), m in summary.items():
        if slice_name.endswith(KIND):
            continue
        para = summary[(set_name, f"{slice_name} {KIND}", variant)]
        rows.append([set_name, slice_name, variant, int(para["positives"]), para["R@10"], m["R@10"],
                     m["precision"], m["recall_g2"], m["false_inject"]])
    rows.sort(key=lambda r: (LOCAL_SETS.index(r[0]) if r[0] in LOCAL_SETS else 99, r[1]))
    out(table(["set", "slice", "variant", "paraphrase prompts", "paraphrase R@10", "Recall@10",
               "inject precision", "grade-2 recall", "negatives injected"], rows))
    out("\nparaphrase Recall@10, every set's paraphrase prompts pooled:")
    out(table(["slice", "variant", "paraphrase R@10"], [[s, v, r] for (s, v), r in sorted(pooled(summary).items())]))
