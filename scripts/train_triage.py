"""Train the Stop-hook triage's scorer (memindex/capture/score.py) and print its evaluation.

    python scripts/train_triage.py            # cross-validate and report, no write
    python scripts/train_triage.py --write    # also write memindex/data/triage_model.json
    python scripts/train_triage.py --check    # exit 1 if the shipped file differs

Training items: the dev slices of evalsets/triage (ids sorted, every third held out),
evalsets/triage2 (split.json `sha1_quarter`: sha1 of the id, first hex digit below 4 held
out; a sequence's stops go with their sequence), evalsets/triage3 and evalsets/triage4
(every third held out), evalsets/triage_written (50 endings of a helper, all dev), and LoCoMo's
conversations 0-4 replayed as sessions (../shared/data/locomo: chat between friends, every
stop a negative; 5-9 held out; without the data the model differs, and the shipped file's
check says so). Each item becomes the Claude Code transcript eval_triage.py writes, read
back by the hook's own `latest_turn`, so the features are the ones the hook computes. Only
the turns that show software work (score.at_work) are scored by the hook, so only they
are fitted. A logistic regression with an L2 penalty, full-batch gradient descent from zero
(deterministic); the threshold is the one that maximises recall at out-of-fold precision
>= TARGET_PRECISION over 5 fixed folds of the training items (by a hash of the ending's,
sequence's or conversation's id), counted on the sets the rules were not tuned on (on
evalsets/triage's dev slice the rules, features here, are perfect by construction), never
looking at the held-out slices. The kind: one-vs-rest regressions over the training
positives. Prints the cross-validated figures (`--held-out`: also the final model's on the
held-out items, without the once-per-topic guard); the held-out figures that count come
from eval_triage.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from eval_triage import LOCOMO_TRAIN, append, entries, split, split_rule  # noqa: E402
from memindex.capture import score  # noqa: E402
from memindex_dev.evaluation.sets import LOCOMO_JSON  # noqa: E402
from memindex.capture.triage import findings  # noqa: E402
from memindex.capture.turn import latest_turn  # noqa: E402

SETS = ("triage", "triage2", "triage3", "triage4", "triage_written")
RULES_TUNED_ON = ("triage",)  # the rules (features here) were written on its dev slice: its out-of-fold precision flatters
FOLDS = 5
TARGET_PRECISION = 0.85  # out of fold: the held-out sets are expected to come out lower
L2 = 0.02
STEPS = 3000
RATE = 0.5


def fold(group: str) -> int:
    return int(hashlib.sha1(group.encode()).hexdigest(), 16) % FOLDS


def items(tmp: Path) -> list[dict]:
    """Every ending and sequence stop of the sets: features, label, kind, set, slice, group."""
    out = []
    for name in SETS:
        d = REPO / "evalsets" / name
        endings = json.loads((d / "endings.json").read_text())
        seqs = json.loads((d / "sequences.json").read_text()) if (d / "sequences.json").exists() else []
        rule = split_rule(d)
        es, ss = split([e["id"] for e in endings], rule), split([s["id"] for s in seqs], rule)
        for n, e in enumerate(endings):
            path = tmp / f"{name}-{e['id']}.jsonl"
            append(path, entries(e["turns"], e.get("tools"), n))
            out.append(_item(path, e, name, es[e["id"]], f"{name}/{e['id']}"))
        for n, s in enumerate(seqs):
            path = tmp / f"{name}-{s['id']}.jsonl"
            for k, stop in enumerate(s["stops"]):
                append(path, entries(stop["turns"], stop.get("tools"), 1000 * n + k))
                out.append(_item(path, stop, name, ss[s["id"]], f"{name}/{s['id']}"))
                if stop.get("save"):  # as the eval appends after an ask
                    append(path, [{"type": "user", "isMeta": True, "message": {"role": "user", "content": "Stop hook feedback:\nmemindex: ..."}},
                                  {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Saved it with memindex."}]}}])
    return out + locomo_items(tmp)


def locomo_items(tmp: Path) -> list[dict]:
    """LoCoMo's conversations as sessions (eval_triage.py --locomo): every stop a negative,
    conversations 0-4 dev, 5-9 held-out. None when the data is not beside the repository."""
    if not LOCOMO_JSON.exists():
        return []
    from memindex_dev.evaluation.locomo import replay

    return [_item(path, {"save": False}, "locomo", "dev" if c in LOCOMO_TRAIN else "held-out", f"locomo/c{c}")
            for c, _, path, _ in replay(LOCOMO_JSON, tmp)]


def _item(path: Path, item: dict, name: str, part: str, group: str) -> dict:
    turn = latest_turn(str(path))
    rules = [f.category.name for f in findings(turn.user, turn.assistant, turn.tools, turn.before, turn.earlier)]
    signs = score.work_signs(turn.user, turn.assistant, turn.before, turn.earlier, turn.calls, turn.calls_before)
    feats = score.features(turn.user, turn.assistant, turn.tools, turn.before, turn.earlier, rules, turn.calls,
                           turn.calls_before, signs)
    work = turn.worked or score.at_work(signs)  # as triage.scored
    return {"x": feats, "y": 1.0 if item.get("save") else 0.0, "kind": item.get("category"), "set": name,
            "part": part, "group": group, "rules": bool(rules), "work": work}


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = p - y
        w -= RATE * (x.T @ g / len(y) + L2 * w)
        b -= RATE * float(g.mean())
    return w, b


def predict(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1 / (1 + np.exp(-(x @ w + b)))


def threshold(p: np.ndarray, y: np.ndarray) -> float:
    """The lowest threshold (most recall) whose precision is >= TARGET_PRECISION; else the best F1."""
    best = None
    for t in np.round(np.arange(0.30, 0.91, 0.01), 2):
        ask = p >= t
        if not ask.any():
            continue
        prec = (y[ask] == 1).mean()
        if prec >= TARGET_PRECISION:
            return float(t)
        f1 = 2 * (y[ask] == 1).sum() / (ask.sum() + (y == 1).sum())
        if best is None or f1 > best[0]:
            best = (f1, float(t))
    return best[1] if best else 0.5


def pr(ask: np.ndarray, y: np.ndarray) -> str:
    hits = int((ask & (y == 1)).sum())
    return f"P {hits / max(1, ask.sum()):.2f} ({hits}/{int(ask.sum())})  R {hits / max(1, (y == 1).sum()):.2f} ({hits}/{int((y == 1).sum())})"


def train(rows: list[dict], names: list[str]) -> dict:
    x = np.array([[r["x"][k] for k in names] for r in rows])
    y = np.array([r["y"] for r in rows])
    oof = np.zeros(len(rows))
    folds = np.array([fold(r["group"]) for r in rows])
    for k in range(FOLDS):
        w, b = fit(x[folds != k], y[folds != k])
        oof[folds == k] = predict(x[folds == k], w, b)
    untuned = np.array([r["set"] not in RULES_TUNED_ON for r in rows])
    t = threshold(oof[untuned], y[untuned])
    w, b = fit(x, y)
    kinds = {}
    pos = np.array([r["y"] == 1 and r["kind"] in score.KINDS for r in rows])
    for kind in score.KINDS:
        yk = np.array([1.0 if r["kind"] == kind else 0.0 for r in rows])[pos]
        wk, bk = fit(x[pos], yk)
        kinds[kind] = {"weights": {n: round(float(v), 6) for n, v in zip(names, wk)}, "bias": round(float(bk), 6)}
    return {"oof": oof, "threshold": t, "weights": {n: round(float(v), 6) for n, v in zip(names, w)}, "bias": round(float(b), 6),
            "kinds": kinds}


def build() -> tuple[dict, list[dict], dict]:
    with tempfile.TemporaryDirectory() as tmp:
        rows = items(Path(tmp))
    names = sorted(rows[0]["x"])
    train_rows = [r for r in rows if r["part"] == "dev" and r["work"]]  # the scorer sees only turns that show work
    m = train(train_rows, names)
    shipped = {"_comment": "Written by scripts/train_triage.py (do not edit by hand): the Stop-hook triage's logistic "
                           "regression (memindex/capture/score.py); trained on the dev slices of evalsets/triage, triage2, "
                           "triage3 and triage4, evalsets/triage_written and LoCoMo's conversations 0-4 as sessions (the turns that "
                           "show software work), threshold by 5-fold cross-validation on those.",
               "enabled": True, "threshold": m["threshold"], "bias": m["bias"], "weights": m["weights"], "kinds": m["kinds"]}
    return shipped, rows, m


def asks(rows: list[dict], shipped: dict) -> np.ndarray:
    """Whether the shipped model asks at each row (no ask where the turn shows no work)."""
    return np.array([r["work"] and score.probability(r["x"], shipped) >= shipped["threshold"] for r in rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--held-out", action="store_true", help="also print the final model on the held-out slices")
    args = parser.parse_args(argv)
    shipped, rows, m = build()
    text = json.dumps(shipped, indent=1, sort_keys=True) + "\n"
    if args.check:
        same = Path(score.MODEL_FILE).read_text() == text
        print("shipped model is what the script produces" if same else "shipped model differs: run --write")
        return 0 if same else 1
    train_rows = [r for r in rows if r["part"] == "dev" and r["work"]]
    print(f"threshold {m['threshold']:.2f} (out-of-fold precision >= {TARGET_PRECISION}); training items {len(train_rows)} "
          f"(of {sum(r['part'] == 'dev' for r in rows)} dev items; the rest show no work)")
    for r, p in zip(train_rows, m["oof"]):
        r["oof"] = p
    train_rows = [r for r in rows if r["part"] == "dev"]  # figures over every dev item: one without work gets no ask
    m["oof"] = np.array([r.get("oof", 0.0) for r in train_rows])
    y = np.array([r["y"] for r in train_rows])
    t = m["threshold"]
    for name in (*SETS, "locomo"):
        sel = np.array([r["set"] == name for r in train_rows])
        if not sel.any():
            continue
        ask = m["oof"][sel] >= t
        rules = np.array([r["rules"] for r in train_rows])[sel]  # the rules alone (no work gate)
        if name == "locomo":
            print(f"locomo conversations 0-4, out of fold: asks {int(ask.sum())} of {int(sel.sum())} stops "
                  f"({ask.mean():.3f}); rules alone {int(rules.sum())}")
            continue
        print(f"{name} training folds, out of fold: scorer {pr(ask, y[sel])} | rules {pr(rules, y[sel])}")
    if args.held_out:
        for name in (*SETS, "locomo"):
            held = [r for r in rows if r["set"] == name and r["part"] == "held-out"]
            if not held:
                continue
            ask = asks(held, shipped)
            yh = np.array([r["y"] for r in held])
            if name == "locomo":
                print(f"locomo conversations 5-9 (held-out): asks {int(ask.sum())} of {len(held)} stops ({ask.mean():.3f})")
            else:
                print(f"{name} held-out (endings and stops, no once-per-topic guard): {pr(ask, yh)}")
    top = sorted(m["weights"].items(), key=lambda kv: -abs(kv[1]))[:15]
    print("largest weights: " + ", ".join(f"{k} {v:+.2f}" for k, v in top))
    if args.write:
        Path(score.MODEL_FILE).write_text(text)
        print(f"wrote {score.MODEL_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
