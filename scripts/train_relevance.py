"""Train the injection policy's relevance model and print its evaluation.

    python scripts/train_relevance.py                 # evaluate (leave one kind out, one set out), no write
    python scripts/train_relevance.py --write         # also write memindex/data/relevance.json
    python scripts/train_relevance.py --check         # exit 1 if the shipped file differs (3: data missing here)
    python scripts/train_relevance.py --semantic ...  # the model with the worker's evidence too
                                                      # (needs the real embedding model)

Training uses the dev slices of every kind of store (evaluation/kinds.py): short JSON
memories (the TRAINED sets, each with and without its blind questions), conversational ones
(LoCoMo's facts, wren's captured sessions), and the project's own documents indexed in
place (public ADR and runbook collections with blind prompts). Each kind weighs alike in the
fit and in the choice of the threshold (`rel.group_weights`, `rel.choose_threshold`); the
threshold and share are chosen on training prompts scored out of fold (each set by a model
fitted on the others). The held-out slice of every set is never trained on, nor are the json
kind's UNSEEN sets and the FINAL document collections at all.

The report: leave one KIND out (a model trained on the other kinds, judged on the one it never
saw: its held-out slice and whole), the kinds and sets never trained on and small stores cut
from the json sets by the shipped model, and with `--loso` each set judged by a model that
never saw it (pooled per kind) with the calibration per kind; each beside the hand-set rules
on the same prompts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex_dev.evaluation import kinds as K  # noqa: E402
from memindex_dev.evaluation import relevance as rel  # noqa: E402
from memindex_dev.evaluation.questions import LOCAL_SETS  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex_dev.evaluation.sets import SMALL_SIZES, small_stores  # noqa: E402
from memindex.relevance import WEIGHTS_FILE, Bar, Model  # noqa: E402

WITH_QUESTIONS = tuple(s for s in K.TRAINED if s in LOCAL_SETS)  # the json sets with blind questions
LEXICAL = [
    "rel_score", "norm_score", "top", "rank", "gap_next", "coverage", "coverage_rel", "coverage_top",
    "title_coverage", "tags_coverage", "body_coverage", "questions_coverage", "has_questions", "known_coverage",
    "identifier", "has_identifier",
    "n_terms", "rarity", "unknown", "anchored", "asked", "general",
    "general_gap", "age_session", "replacement", "document", "sections",
    "cat_decision", "cat_constraint", "cat_preference", "cat_runbook", "cat_tech_debt", "cat_session_summary",
]
SEMANTIC = LEXICAL + ["best_coverage", "coverage_rank", "cos", "cos_gap", "standout", "is_nearest", "cos_rank",
                      "cos_x_coverage",
                      # the nearest memories no word found: their meaning evidence weighed apart
                      "meaning_only", "mo_cos", "mo_standout", "mo_is_nearest", "mo_cos_gap", "mo_cos_rank",
                      "mo_standout_nearest"]
L2 = 1.0
MAX_INJECT = 3


def as_model(name: str, fitted: dict, threshold: float) -> Model:
    return Model(name, fitted["bias"], fitted["weights"], fitted["means"], threshold)


def bar(model: Model, which: str) -> tuple[float, float]:
    b = model.documents if which == "documents" else model.memories
    return b.min_confidence, b.min_share


def train(prompts: list[rel.Prompt], names: list[str], kind: str) -> Model:
    """A model on these prompts' training part (`trained_on`), its threshold and share of the
    best chosen on the same prompts scored out of fold, each set by a model fitted on the
    others (`rel.out_of_fold`), each kind of store weighing alike."""
    dev = [p for p in prompts if trained_on(p)]

    def fit(part: list[rel.Prompt]) -> Model:
        return as_model(kind, rel.fit(part, names, L2), 0.5)

    model = fit(dev)
    for population, kinds in (("memories", K.MEMORY_KINDS), ("documents", K.DOCUMENT_KINDS)):
        part = [p for p in dev if p.group in kinds]
        if part:
            setattr(model, population, Bar(*rel.choose_threshold(*rel.out_of_fold(part, fit))))
    return model


def choice(model: Model, prompts: list[rel.Prompt], scored: list[list[tuple[str, float]]]) -> list[list[str]]:
    return rel.model_choice(prompts, scored, model.min_confidence, MAX_INJECT, model.min_share, bar(model, "documents"))


def row(label: str, prompts: list[rel.Prompt], chosen: list[list[str]]) -> list[object]:
    m = rel.policy_metrics(prompts, chosen)
    return [label, len(prompts), m["precision"], m["recall_g2"], f"{m['neg_injected']}/{m['negatives']}"]


HEAD = ["set / policy", "prompts", "precision", "grade-2 recall", "negatives injected"]
VARIANTS = (("as committed", False), ("with questions", True))


def trained_on(p: rel.Prompt) -> bool:
    """A training prompt: a dev slice's, of a set and a kind training may see, not a small store's."""
    return not p.holdout and not p.small and p.set_name not in K.UNSEEN and p.group not in K.NEVER_TRAINED


def judged(model: Model, prompts: list[rel.Prompt]) -> list[list[str]]:
    return choice(model, prompts, rel.probabilities(model, prompts))


def leave_one_kind_out(prompts: list[rel.Prompt], names: list[str], kind: str) -> None:
    """For each kind, a model trained on the other kinds alone (threshold chosen there),
    judged on that kind's held-out slice and whole sets: how it does on a kind it never saw."""
    rows = []
    for left in sorted({p.group for p in prompts}):
        model = train([p for p in prompts if p.group != left and trained_on(p)], names, kind)
        for label, keep in (("held-out", lambda p: p.holdout), ("whole", lambda p: True)):
            ps = [p for p in prompts if p.group == left and keep(p) and not p.small and p.set_name not in K.UNSEEN]
            t = f"bars {bar(model, 'memories')} / documents {bar(model, 'documents')}"
            rows.append(row(f"{left}, {label}: rules", ps, [p.rules for p in ps]))
            rows.append(row(f"{left}, {label}: model never trained on {left} ({t})", ps, judged(model, ps)))
    print("\nleave one kind out (a model trained on the other kinds' dev slices; threshold chosen there)\n")
    print(table(HEAD, rows))


def leave_one_set_out(prompts: list[rel.Prompt], names: list[str], kind: str) -> dict[str, Model]:
    """Each trained set judged by a model trained on every other set's dev slice, pooled per
    kind (held-out slices and whole sets), with the calibration per kind."""
    models: dict[str, Model] = {}
    everything = []
    train_sets = sorted({p.set_name for p in prompts if trained_on(p)})
    for left in train_sets:
        model = models[left] = train([p for p in prompts if p.set_name != left and trained_on(p)], names, kind)
        test = [p for p in prompts if p.set_name == left and not p.small]
        scored = rel.probabilities(model, test)
        everything += [(p, sc, got) for p, sc, got in zip(test, scored, choice(model, test, scored))]
    rows = []
    for group in sorted({p.group for p, _, _ in everything}):
        part = [j for j in everything if j[0].group == group]
        for label, keep in (("held-out slices", lambda p: p.holdout), ("whole sets", lambda p: True)):
            sub = [j for j in part if keep(j[0])]
            ps = [j[0] for j in sub]
            rows.append(row(f"{group}, {label}: rules", ps, [p.rules for p in ps]))
            rows.append(row(f"{group}, {label}: model", ps, [j[2] for j in sub]))
    print("\neach set judged by a model trained on the other sets' dev slices, pooled per kind\n")
    print(table(HEAD, rows))
    for group in sorted({p.group for p, _, _ in everything}):
        sub = [j for j in everything if j[0].group == group]
        print(f"\ncalibration, {group} (left-out sets: every candidate's predicted P against the share relevant)\n")
        print(table(["P bin", "candidates", "mean predicted", "observed relevant"], rel.calibration([j[0] for j in sub], [j[1] for j in sub])))
        injected = [(prob, j[0].judgments.get(path, 0) >= 1) for j in sub for path, prob in j[1] if path in j[2]]
        if injected:
            print(f"\ninjected: {len(injected)}, mean P {sum(x for x, _ in injected) / len(injected):.3f}, "
                  f"observed precision {sum(r for _, r in injected) / len(injected):.3f}")
    return models


def unseen(final: Model, prompts: list[rel.Prompt]) -> None:
    """The kinds never trained on (LoCoMo), the json kind's UNSEEN sets and the small
    stores, by the shipped model."""
    rows = []
    for group in sorted({p.group for p in prompts} - set(K.NEVER_TRAINED)):
        ps = [p for p in prompts if p.group == group and p.holdout and not p.small and p.set_name not in K.UNSEEN]
        if ps:
            rows.append(row(f"{group}, held-out slices: rules", ps, [p.rules for p in ps]))
            rows.append(row(f"{group}, held-out slices: model", ps, judged(final, ps)))
    for group in K.NEVER_TRAINED:
        ps = [p for p in prompts if p.group == group]
        if ps:
            rows.append(row(f"{group} (a kind never trained on), whole: rules", ps, [p.rules for p in ps]))
            rows.append(row(f"{group} (a kind never trained on), whole: model", ps, judged(final, ps)))
    for name in K.UNSEEN:
        ps = [p for p in prompts if p.set_name == name and not p.small]
        if ps:
            rows.append(row(f"{name} (never trained on): rules", ps, [p.rules for p in ps]))
            rows.append(row(f"{name} (never trained on): model", ps, judged(final, ps)))
    for variant, with_q in VARIANTS:
        for n, others in SMALL_SIZES:
            ps = [p for p in prompts if p.small and p.questions == with_q and f"-small{n}-" in p.store]
            if ps:
                label = f"small stores, {variant}, {n} prompts' memories and {others} others"
                rows.append(row(f"{label}: rules", ps, [p.rules for p in ps]))
                rows.append(row(f"{label}: model", ps, judged(final, ps)))
    print("\nthe shipped model on what it never trained on: each kind's held-out slices, LoCoMo, the UNSEEN json sets, small stores\n")
    print(table(HEAD, rows))


def ranking(prompts: list[rel.Prompt], models: dict[str, Model]) -> None:
    """Search ranking: `memindex search`'s fixed fusion of BM25 and the dense channel against
    each channel alone and against the union of the word matches and the nearest memories
    by meaning ranked by P(relevant) (each set by the model that never saw it): Recall@10
    of the judged memories, every judged prompt and the paraphrase prompts apart."""
    runs = ("bm25", "dense", "fused", "model")
    rows = []
    for variant, with_q in VARIANTS:
        for left in K.TRAINED + ("pooled",):
            for kinds in ("every judged prompt", "paraphrase"):
                ps = [p for p in prompts if p.search and p.questions == with_q and left in ("pooled", p.set_name)
                      and (kinds != "paraphrase" or p.kind == "paraphrase")]
                if not ps:
                    continue
                got = {name: [p.search.get(name) or [] for p in ps] for name in runs[:3]}
                got["model"] = [[path for path, _ in sorted(((path, models[p.set_name].prob(f)) for path, f in p.ranked),
                                                             key=lambda s: -s[1])] for p in ps]
                rows.append([f"{left}, {variant}", kinds, len(ps), *(rel.recall_at(ps, got[name]) for name in runs)])
    print("\nsearch ranking: Recall@10 of the judged memories (each set ranked by the model that never saw it)\n")
    print(table(["set", "prompt kind", "prompts", "BM25 alone", "dense alone", "fused (memindex search)", "by P(relevant)"], rows))


def gather(semantic: bool, rankings: bool = False, small: bool = True) -> list[rel.Prompt]:
    """Every kind's prompts with their candidates' features (`rel.Prompt.group` = the kind):
    the json sets as committed and (those that have them) with their blind questions, the
    UNSEEN ones too (judged, never trained on), and each json store cut into small ones
    (`sets.small_stores`; `small`), judged apart and never trained on."""
    prompts: list[rel.Prompt] = []
    with tempfile.TemporaryDirectory(prefix="memindex-train-") as tmp:
        by_kind = K.stores(Path(tmp), unseen=True)
        for kind, stores in by_kind.items():
            got = rel.collect(stores, semantic, False, rankings and kind == "json")
            if kind == "json" and small:
                cut = [s for store in stores for n, others in SMALL_SIZES
                       for s in small_stores(store, Path(tmp) / "small", n, others)]
                got += rel.collect(cut, semantic, False, small=True)
            for p in got:
                p.group = kind
            prompts += got
        with_q = K.stores(Path(tmp) / "q", ("json",), questions=True)["json"]
        with_q = [s for s in with_q if s.set_name in WITH_QUESTIONS]
        got = rel.collect(with_q, semantic, True, rankings)
        if small:
            cut = [s for store in with_q for n, others in SMALL_SIZES for s in small_stores(store, Path(tmp) / "qsmall", n, others)]
            got += rel.collect(cut, semantic, True, small=True)
        for p in got:
            p.group = "json"
        prompts += got
    return prompts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write memindex/data/relevance.json")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped weights differ from a fresh training")
    ap.add_argument("--semantic", action="store_true", help="also the model with the worker's evidence (the real model)")
    ap.add_argument("--quiet", action="store_true", help="no evaluation tables")
    ap.add_argument("--loso", action="store_true", help="also each set judged by a model trained on the others (slow)")
    ap.add_argument("--ranking", action="store_true", help="with --semantic: also the search ranking by P(relevant)")
    args = ap.parse_args()

    path = Path(WEIGHTS_FILE)
    shipped = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"models": {}}
    data = {"_comment": "written by scripts/train_relevance.py from the dev slices of evalsets/*; do not edit",
            "models": dict(shipped.get("models", {}))}
    kinds = [("lexical", LEXICAL, False)] + ([("semantic", SEMANTIC, True)] if args.semantic else [])
    for kind, names, semantic in kinds:
        prompts = gather(semantic, args.ranking and semantic, small=not (args.check or args.quiet))
        final = train(prompts, names, kind)
        data["models"][kind] = {
            "features": names, "bias": round(final.bias, 6), "min_confidence": final.min_confidence,
            "min_share": final.min_share,
            "documents": {"min_confidence": final.documents.min_confidence, "min_share": final.documents.min_share},
            "weights": {k: round(v, 6) for k, v in final.weights.items()},
            "means": {k: round(v, 6) for k, v in final.means.items()},
        }
        if args.check:
            if K.missing():
                print("cannot reproduce the training here, it needs: " + "; ".join(K.missing()), file=sys.stderr)
                return 3
            if shipped.get("models", {}).get(kind) != json.loads(json.dumps(data["models"][kind])):
                print(f"the shipped {kind} relevance model differs from a fresh training run", file=sys.stderr)
                return 1
            print(f"the shipped {kind} relevance model is what training produces")
            continue
        if not args.quiet:
            print(f"\n## {kind}: {len(prompts)} prompts, {sum(len(p.cands) for p in prompts)} candidates, {len(names)} features")
            leave_one_kind_out(prompts, names, kind)
            models = leave_one_set_out(prompts, names, kind) if args.loso or args.ranking else {}
            unseen(final, prompts)
            if args.ranking and semantic:
                ranking(prompts, models)
        print(f"\nshipped {kind} model: memories' bar {bar(final, 'memories')}, documents' bar {bar(final, 'documents')}; weights (raw units), largest first:")
        for k, v in sorted(final.weights.items(), key=lambda kv: -abs(kv[1])):
            print(f"  {k:16s} {v:+.3f}")
    if args.write and not args.check:
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
