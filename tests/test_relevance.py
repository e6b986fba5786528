"""The calibrated injection policy (`retrieval.match_strategy: calibrated`): the relevance
model's features, its one knob (`retrieval.min_confidence`), what `explain` says of it, and
the shipped weights being what the training script produces from the sets in the
repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import trust_config

from memindex import index, relevance
from memindex.config import Config, parse_config
from memindex.policy.inject import candidate_pool, decide
from memindex.index.sync import sync
from test_hook import put
from test_inject import project  # noqa: F401 (the fixture)

REPO = Path(__file__).resolve().parent.parent
CALIBRATED = {"retrieval": {"match_strategy": "calibrated"}}


@pytest.fixture()
def root(project: Path) -> Path:
    """test_inject's store, with more session summaries (a store of a few kinds)."""
    root = project / ".claude" / "memory"
    for i, topic in enumerate(["search ranking", "image resizing", "email digests"]):
        put(root, "session_summary", f"2026-10-0{i + 5}-s", f"Session: {topic} cleanup", [topic.split()[0]],
            f"Cleaned up the {topic} code and its tests.")
    sync(root, Config())
    return root


def test_every_feature_the_shipped_models_weigh_is_computed(root: Path) -> None:
    with index.open_reader(root) as conn:
        pool = candidate_pool(conn, "stripe webhooks fail with a 400 signature error", Config())
        feats = relevance.features(conn, pool)
    assert feats and all(h.coverage is not None for h, _ in feats)
    data = json.loads(Path(relevance.WEIGHTS_FILE).read_text())
    lexical = data["models"]["lexical"]
    assert set(lexical["weights"]) == set(lexical["features"]) <= set(feats[0][1])
    assert set(lexical["weights"]) <= set(relevance.DESCRIBE)  # explain can word every one


def test_each_column_s_coverage_and_the_questions_a_memory_lists(project: Path) -> None:
    """The per-column features: words found only in a memory's `questions` count there (and
    in its whole coverage), and a memory saved without questions says so rather than
    looking like one whose questions miss the prompt."""
    root = project / ".claude" / "memory"
    asked = put(root, "runbook", "cache-warmup", "Warm the cache after deploys", ["cache"], "Run the warmup job.")
    data = json.loads(asked.read_text())
    data["questions"] = ["why are latencies spiking right after a rollout?"]
    asked.write_text(json.dumps(data))
    put(root, "decision", "rollout-window", "Rollout window", ["deploys"], "Rollouts happen on Tuesdays after latencies settle.")
    sync(root, Config())
    with index.open_reader(root) as conn:
        pool = candidate_pool(conn, "latencies spiking after the rollout", Config())
        feats = {h.path: f for h, f in relevance.features(conn, pool)}
    warm, window = feats["runbooks/cache-warmup.json"], feats["decisions/rollout-window.json"]
    assert warm["has_questions"] == 1.0 and window["has_questions"] == 0.0
    assert warm["questions_coverage"] > 0.9 and warm["body_coverage"] == 0.0 and warm["title_coverage"] == 0.0
    assert window["questions_coverage"] == 0.0 and window["body_coverage"] > 0.5
    assert warm["coverage"] >= warm["questions_coverage"]


def test_a_clear_match_is_likely_and_an_incidental_one_is_not(root: Path) -> None:
    with index.open_reader(root) as conn:
        outcome = decide(conn, "stripe webhooks keep failing with a 400 signature error in staging", parse_config(CALIBRATED))
    probs = {d.path: d.probability for d in outcome.decisions}
    assert [h.path for h in outcome.hits] == ["runbooks/stripe-webhook-signature.json"]
    assert probs["runbooks/stripe-webhook-signature.json"] > 0.6
    assert all(p < 0.3 for path, p in probs.items() if path != "runbooks/stripe-webhook-signature.json")


@pytest.mark.parametrize(("floor", "most"), [(1.0, 0), (0.0, 3)])
def test_min_confidence_is_the_one_knob(root: Path, floor: float, most: int) -> None:
    cfg = parse_config({"retrieval": {"match_strategy": "calibrated", "min_confidence": floor}})
    with index.open_reader(root) as conn:
        outcome = decide(conn, "which session cleaned up the billing export and the booking widget tests?", cfg)
    assert len(outcome.hits) == min(most, sum(1 for d in outcome.decisions))
    assert all(d.probability is not None for d in outcome.decisions)


def test_an_unrelated_prompt_gets_nothing(root: Path) -> None:
    with index.open_reader(root) as conn:
        outcome = decide(conn, "write a haiku about the session of autumn leaves", parse_config(CALIBRATED))
    assert outcome.hits == []


def test_old_threshold_keys_with_the_calibrated_policy_get_a_clear_warning() -> None:
    cfg = parse_config({"retrieval": {"match_strategy": "calibrated", "min_coverage": 0.2}})
    assert any("retrieval.min_coverage" in w and "min_confidence" in w for w in cfg.warnings)
    rules = parse_config({"retrieval": {"match_strategy": "fts5_bm25", "min_coverage": 0.2}})
    assert rules["retrieval.min_coverage"] == 0.2 and not rules.warnings


def test_explain_shows_each_candidate_s_probability_and_what_moved_it(root: Path) -> None:
    (root / "memory-config.json").write_text(json.dumps(CALIBRATED))
    trust_config(root)  # another policy than the user's: a project's config needs trust for it
    out = subprocess.run([sys.executable, "-m", "memindex", "--root", str(root), "explain",
                          "stripe webhooks keep failing with a 400 signature error in staging"],
                         capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "retrieval.min_confidence=" in out.stdout
    inject = [line for line in out.stdout.splitlines() if line.startswith("INJECT")]
    assert len(inject) == 1 and "P 0." in inject[0] and "stripe-webhook-signature" in inject[0]
    assert "P(relevant)" in out.stdout and ("+" in out.stdout)
    js = subprocess.run([sys.executable, "-m", "memindex", "--root", str(root), "explain", "--json",
                         "stripe webhooks keep failing with a 400 signature error in staging"],
                        capture_output=True, text=True, cwd=REPO, timeout=60)
    considered = json.loads(js.stdout)["considered"]
    assert all(0.0 <= c["probability"] <= 1.0 for c in considered)


def test_the_shipped_lexical_model_is_what_training_produces() -> None:
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "train_relevance.py"), "--check"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.model
@pytest.mark.slow  # retrains on every set's vectors: about 3 minutes; not in CI (.ci/run)
def test_the_shipped_semantic_model_is_what_training_produces() -> None:
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "train_relevance.py"), "--check", "--semantic"],
                         capture_output=True, text=True, cwd=REPO, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
