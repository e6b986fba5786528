"""Train the injection policy's relevance model and print its evaluation.

    python scripts/train_relevance.py                 # evaluate (leave one set out), no write
    python scripts/train_relevance.py --write         # also write memindex/data/relevance.json
    python scripts/train_relevance.py --check         # exit 1 if the shipped file differs
    python scripts/train_relevance.py --semantic ...  # the model with the worker's evidence too
                                                      # (needs the real embedding model)
    python scripts/train_relevance.py --semantic --ranking   # also search ranked by P(relevant)
                                                      # against memindex search's fixed fusion

Training uses the dev slices of the judged sets in the repository (`ENGINEERING`: the nine
engineering sets and four stores written blind, each joined after it was measured once):
the held-out slice of every set (`sets.is_holdout`) is never trained on. Each set with blind
questions (`questions.json`) is seen twice, its memories as committed and with their
questions (`sets.add_questions`, as the write path stores them), so the model knows stores
of both kinds. The threshold and share are chosen on the training prompts scored out of
fold (each set by a model fitted on the others: `rel.out_of_fold`), where the model stands
as on a new store. Leave-one-set-out: for each set, a model trained on the other sets' dev
slices, its threshold chosen among them the same way, judged on the left-out set's
held-out slice and on the whole set, beside the hand-set rules on the same prompts, and on
small stores cut from it (a few of its prompts' memories and a few others:
`sets.small_stores`; judged, never trained on: a user's store starts small). LoCoMo
(conversational, never trained on) is judged by the shipped model when its data file is
present.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex.evaluation import relevance as rel  # noqa: E402
from memindex.evaluation.questions import LOCAL_SETS  # noqa: E402
from memindex.evaluation.metrics import table  # noqa: E402
from memindex.evaluation.sets import LOCOMO_JSON, SMALL_SIZES, all_sets, small_stores  # noqa: E402
from memindex.relevance import WEIGHTS_FILE, Model  # noqa: E402

# the sets trained on (their dev slices); jetty, lumen, mesa, nectar and onyx, each written
# blind and measured once whole, joined after
ENGINEERING = ("harbor", "atlas", "cedar", "fjord", "quarry", "sedge", "heron", "ibis", "jetty",
               "lumen", "mesa", "nectar", "onyx")
WITH_QUESTIONS = tuple(s for s in ENGINEERING if s in LOCAL_SETS)  # the sets with blind questions
LEXICAL = [
    "rel_score", "norm_score", "top", "rank", "gap_next", "coverage", "coverage_rel", "coverage_top",
    "title_coverage", "tags_coverage", "body_coverage", "questions_coverage", "has_questions", "known_coverage",
    "identifier", "has_identifier",
    "n_terms", "rarity", "unknown", "anchored", "asked", "general",
    "general_gap", "age", "replacement",
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


def train(prompts: list[rel.Prompt], names: list[str], kind: str) -> Model:
    """A model on these prompts' dev slices, its threshold and share of the best chosen on
    the same prompts scored out of fold, each set by a model fitted on the others
    (`rel.out_of_fold`; the small stores are judged, never trained on)."""
    dev = [p for p in prompts if not p.holdout and not p.small]

    def fit(part: list[rel.Prompt]) -> Model:
        return as_model(kind, rel.fit(part, names, L2), 0.5)

    model = fit(dev)
    model.min_confidence, model.min_share = rel.choose_threshold(*rel.out_of_fold(dev, fit))
    return model


def choice(model: Model, prompts: list[rel.Prompt], scored: list[list[tuple[str, float]]]) -> list[list[str]]:
    return rel.model_choice(prompts, scored, model.min_confidence, MAX_INJECT, model.min_share)


def row(label: str, prompts: list[rel.Prompt], chosen: list[list[str]]) -> list[object]:
    m = rel.policy_metrics(prompts, chosen)
    return [label, len(prompts), m["precision"], m["recall_g2"], f"{m['neg_injected']}/{m['negatives']}"]


HEAD = ["set / policy", "prompts", "precision", "grade-2 recall", "negatives injected"]
VARIANTS = (("as committed", False), ("with questions", True))


def leave_one_out(prompts: list[rel.Prompt], names: list[str], kind: str, models: dict | None = None):
    """Each set's prompts (both variants) judged by a model trained on the other sets' dev
    slices: (prompt, scored candidates, injected paths, threshold) per prompt (`models`
    gets each set's model)."""
    out = []
    for left in ENGINEERING:
        model = train([p for p in prompts if p.set_name != left], names, kind)
        if models is not None:
            models[left] = model
        test = [p for p in prompts if p.set_name == left]
        scored = rel.probabilities(model, test)
        picks = choice(model, test, scored)
        out += [(p, sc, got, model) for p, sc, got in zip(test, scored, picks)]
    return out


def report(prompts: list[rel.Prompt], names: list[str], kind: str) -> dict[str, Model]:
    """Leave one set out, per set and variant, pooled, and the calibration on left-out sets;
    returns the model each set was judged by."""
    print(f"\n## {kind}: {len(prompts)} prompts, {sum(len(p.cands) for p in prompts)} candidates, {len(names)} features")
    models: dict[str, Model] = {}
    everything = leave_one_out(prompts, names, kind, models)
    judged = [j for j in everything if not j[0].small]
    print("\nleave one set out (model trained on the other sets' dev slices, both variants; threshold chosen there)\n")
    rows, worse = [], []
    for left in ENGINEERING:
        for variant, with_q in VARIANTS:
            part = [j for j in judged if j[0].set_name == left and j[0].questions == with_q]
            if not part:
                continue
            t = f"t={part[0][3].min_confidence:.2f}, share {part[0][3].min_share:g}"
            for label, keep in (("held-out", lambda p: p.holdout), ("whole", lambda p: True)):
                sub = [j for j in part if keep(j[0])]
                ps = [j[0] for j in sub]
                rows.append(row(f"{left}, {variant}, {label}: rules", ps, [p.rules for p in ps]))
                rows.append(row(f"{left}, {variant}, {label}: model ({t})", ps, [j[2] for j in sub]))
            ps = [j[0] for j in part]
            r, m = rel.policy_metrics(ps, [p.rules for p in ps]), rel.policy_metrics(ps, [j[2] for j in part])
            if m["recall_g2"] < r["recall_g2"]:
                worse.append(f"{left} ({variant}) {m['recall_g2']:.3f} < {r['recall_g2']:.3f}")
    print(table(HEAD, rows))
    ceiling(judged)
    print("\nsets (whole) where the model's grade-2 recall is below the rules': " + ("; ".join(worse) or "none"))
    for variant, with_q in VARIANTS:
        sub = [j for j in judged if j[0].questions == with_q]
        ps, ho = [j[0] for j in sub], [j for j in sub if j[0].holdout]
        sets = sorted({p.set_name for p in ps}, key=ENGINEERING.index)
        print(f"\npooled over the left-out sets, {variant} ({', '.join(sets)}; each judged by the model that never saw it)\n")
        print(table(HEAD, [
            row("rules, held-out slices", [j[0] for j in ho], [j[0].rules for j in ho]),
            row("model, held-out slices", [j[0] for j in ho], [j[2] for j in ho]),
            row("rules, whole sets", ps, [p.rules for p in ps]),
            row("model, whole sets", ps, [j[2] for j in sub]),
        ]))
        print(f"\ncalibration on the left-out sets, {variant} (every candidate: mean predicted P against the share relevant)\n")
        print(table(["P bin", "candidates", "mean predicted", "observed relevant"], rel.calibration(ps, [j[1] for j in sub])))
        injected = [(prob, j[0].judgments.get(path, 0) >= 1) for j in sub for path, prob in j[1] if path in j[2]]
        if injected:
            print(f"\ninjected candidates on the left-out sets: {len(injected)}, mean P "
                  f"{sum(x for x, _ in injected) / len(injected):.3f}, observed precision "
                  f"{sum(r for _, r in injected) / len(injected):.3f}")
    smalls(everything)
    return models


def smalls(judged: list) -> None:
    """The small stores cut from each left-out set, pooled by size and variant: rules
    against the model that never saw the set."""
    rows = []
    for variant, with_q in VARIANTS:
        for n, others in SMALL_SIZES:
            sub = [j for j in judged if j[0].small and j[0].questions == with_q and f"-small{n}-" in j[0].store]
            if sub:
                ps = [j[0] for j in sub]
                label = f"{variant}, {n} prompts' memories and {others} others"
                rows.append(row(f"{label}: rules", ps, [p.rules for p in ps]))
                rows.append(row(f"{label}: model", ps, [j[2] for j in sub]))
    print("\nsmall stores cut from the left-out sets (sets.small_stores), pooled\n")
    print(table(HEAD, rows))


def ceiling(judged: list) -> None:
    """Where the misses are: per left-out set and per prompt kind (as committed), the grade-2
    memories among the candidates at all (the most any choice among them can reach: a
    resume prompt's are what rule 3 found), and the share the rules and the model inject."""
    def counts(part):
        total = pooled = rules = model = 0
        for p, _, got, _ in part:
            must = {path for path, g in p.judgments.items() if g >= 2}
            total += len(must)
            pooled += len(must & (set(p.rules) if p.resume else {path for path, _ in p.cands}))
            rules += len(must & set(p.rules))
            model += len(must & set(got))
        return [len(part), total, pooled / total, rules / total, model / total] if total else None
    plain = [j for j in judged if not j[0].questions]
    for label, key, order in (("left-out set", lambda p: p.set_name, ENGINEERING),
                              ("prompt kind", lambda p: p.kind, sorted({j[0].kind for j in plain}))):
        rows = []
        for k in order:
            c = counts([j for j in plain if key(j[0]) == k])
            if c:
                rows.append([k, *c])
        rows.append(["all", *counts(plain)])
        print(f"\ngrade-2 memories per {label} (as committed): among the candidates, injected by the rules, by the model\n")
        print(table([label, "prompts", "grade-2", "among candidates", "rules", "model"], rows))


def ranking(prompts: list[rel.Prompt], models: dict[str, Model]) -> None:
    """Search ranking: `memindex search`'s fixed fusion of BM25 and the dense channel against
    each channel alone and against the union of the word matches and the nearest memories
    by meaning ranked by P(relevant) (each set by the model that never saw it): Recall@10
    of the judged memories, every judged prompt and the paraphrase prompts apart."""
    runs = ("bm25", "dense", "fused", "model")
    rows = []
    for variant, with_q in VARIANTS:
        for left in ENGINEERING + ("pooled",):
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


def locomo(final: Model, semantic: bool) -> None:
    if not LOCOMO_JSON.exists():
        return
    with tempfile.TemporaryDirectory(prefix="memindex-train-") as tmp:
        loco = rel.collect(all_sets(Path(tmp), ("locomo",)), semantic=semantic)
    scored = rel.probabilities(final, loco)
    print(f"\nLoCoMo (conversational; never trained on), the shipped {final.name} model\n")
    print(table(HEAD, [
        row("rules", loco, [p.rules for p in loco]),
        row(f"model (t={final.min_confidence:.2f}, share {final.min_share:g})", loco, choice(final, loco, scored)),
    ]))
    print()
    print(table(["P bin", "candidates", "mean predicted", "observed relevant"], rel.calibration(loco, scored)))


def gather(semantic: bool, rankings: bool = False, small: bool = True) -> list[rel.Prompt]:
    """Every engineering set's prompts with their candidates' features: the stores as
    committed, and (the sets that have them) with their blind questions; and each store cut
    into small ones (`sets.small_stores`, `SMALL_SIZES`; `small`), judged apart and never
    trained on: a user's store starts with a handful of memories, and the model must hold
    on stores of sizes it never saw."""
    prompts: list[rel.Prompt] = []
    for names, with_q in ((ENGINEERING, False), (WITH_QUESTIONS, True)):
        with tempfile.TemporaryDirectory(prefix="memindex-train-") as tmp:
            stores = all_sets(Path(tmp), names, questions=with_q)
            prompts += rel.collect(stores, semantic, with_q, rankings)
            if small:
                cut = [s for store in stores for n, others in SMALL_SIZES
                       for s in small_stores(store, Path(tmp) / "small", n, others)]
                prompts += rel.collect(cut, semantic, with_q, small=True)
    return prompts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="write memindex/data/relevance.json")
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped weights differ from a fresh training")
    ap.add_argument("--semantic", action="store_true", help="also the model with the worker's evidence (the real model)")
    ap.add_argument("--quiet", action="store_true", help="no evaluation tables")
    ap.add_argument("--ranking", action="store_true", help="with --semantic: also the search ranking by P(relevant)")
    ap.add_argument("--no-locomo", action="store_true", help="leave LoCoMo out of the tables (it takes minutes)")
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
            "weights": {k: round(v, 6) for k, v in final.weights.items()},
            "means": {k: round(v, 6) for k, v in final.means.items()},
        }
        if args.check:
            if shipped.get("models", {}).get(kind) != json.loads(json.dumps(data["models"][kind])):
                print(f"the shipped {kind} relevance model differs from a fresh training run", file=sys.stderr)
                return 1
            print(f"the shipped {kind} relevance model is what training produces")
            continue
        if not args.quiet:
            models = report(prompts, names, kind)
            if args.ranking and semantic:
                ranking(prompts, models)
            if not args.no_locomo:
                locomo(final, semantic)
        print(f"\nshipped {kind} model: min_confidence {final.min_confidence:.2f}, min_share {final.min_share:g}; weights (raw units), largest first:")
        for k, v in sorted(final.weights.items(), key=lambda kv: -abs(kv[1])):
            print(f"  {k:16s} {v:+.3f}")
    if args.write and not args.check:
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
