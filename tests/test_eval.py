"""The evaluation code on tiny sets, so that it cannot rot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memindex_dev.evaluation import beir, checkset, genstore
from memindex_dev.evaluation import memory as eval_memory
from memindex_dev.evaluation.memory import RULES_NAME
from memindex.store.schema import validate_memory

HARBOR = Path(__file__).resolve().parent.parent / "evalsets" / "harbor"


def memory(category: str, folder: str, mem_id: str, title: str, tags: list[str], content: dict, status: str = "active") -> tuple[str, dict]:
    return f"{folder}/{mem_id}.json", {
        "schema_version": "1.0", "category": category, "id": mem_id, "title": title,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-10-01T00:00:00Z", "tags": tags,
        "content": content, "related_files": [], "confidence": 1.0, "record_status": status,
        "changes": [], "times_updated": 0, "retired_at": None, "retired_reason": None,
        "archived_at": None, "archived_reason": None,
    }


@pytest.fixture()
def tiny_set(tmp_path: Path) -> Path:
    root = tmp_path / ".claude" / "memory"
    mems = [
        memory("runbook", "runbooks", "stripe-webhook-400", "Stripe webhook returns 400", ["stripe", "webhooks"],
               {"trigger": "webhook signature verification fails", "steps": ["rotate STRIPE_WEBHOOK_SECRET"]}),
        memory("decision", "decisions", "pgbouncer-pooling", "Pool connections with PgBouncer", ["postgres"],
               {"status": "accepted", "context": "RDS max_connections is 400", "decision": "transaction pooling"}),
        memory("preference", "preferences", "named-exports", "Named exports in TypeScript", ["typescript"],
               {"topic": "exports", "value": "prefer named exports for React components"}),
        memory("decision", "decisions", "celery-beat", "Use Celery beat for scheduled jobs", ["celery"],
               {"status": "superseded", "context": "cron", "decision": "celery beat"}, status="retired"),
        memory("decision", "decisions", "k8s-cronjobs", "Scheduled jobs run as k8s CronJobs", ["k8s", "cron"],
               {"status": "accepted", "context": "replaces celery beat scheduling", "decision": "CronJob per job"}),
    ]
    for rel, data in mems:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(data))
    queries = [
        {"id": "q1", "kind": "specific", "query": "our stripe webhook keeps returning 400 on signature verification",
         "transcript": [], "judgments": {"runbooks/stripe-webhook-400.json": 2}},
        {"id": "q2", "kind": "follow-up", "query": "what's the ceiling there?",
         "transcript": ["postgres on RDS refuses connections, max_connections reached"],
         "judgments": {"decisions/pgbouncer-pooling.json": 2}},
        {"id": "q3", "kind": "negative", "query": "explain how exports work in the tax office paperwork",
         "transcript": [], "judgments": {}},
        {"id": "q4", "kind": "retired-trap", "query": "how are scheduled jobs configured with celery beat now?",
         "transcript": [], "judgments": {"decisions/k8s-cronjobs.json": 2}},
    ]
    (tmp_path / "queries.json").write_text(json.dumps(queries))
    return tmp_path


def test_inject_metrics_arithmetic() -> None:
    queries = [
        {"id": "a", "judgments": {"x": 2, "y": 1, "z": 2}},
        {"id": "b", "judgments": {"w": 2}},
        {"id": "n1", "judgments": {}},
        {"id": "n2", "judgments": {}},
    ]
    results = {"a": {"inject": ["x", "y", "q"]}, "b": {"inject": []}, "n1": {"inject": ["x"]}, "n2": {"inject": []}}
    m = eval_memory.inject_metrics(queries, results)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall_g2"] == pytest.approx(1 / 3)
    assert m["false_inject"] == pytest.approx(0.5)
    assert m["silent"] == pytest.approx(0.5)


def test_search_metrics_use_graded_judgements() -> None:
    queries = [{"id": "a", "judgments": {"x": 2, "y": 1}}, {"id": "n", "judgments": {}}]
    perfect = eval_memory.search_metrics(queries, {"a": {"rank": [("x", 2.0), ("y", 1.0)]}, "n": {"rank": []}})
    assert perfect["nDCG@10"] == pytest.approx(1.0) and perfect["MRR"] == 1.0 and perfect["R@10"] == 1.0
    swapped = eval_memory.search_metrics(queries, {"a": {"rank": [("q", 3.0), ("y", 2.0)]}, "n": {"rank": []}})
    assert swapped["MRR"] == pytest.approx(0.5) and swapped["R@10"] == pytest.approx(0.5)
    assert 0 < swapped["nDCG@10"] < 1


def test_evaluate_set_compares_the_old_matcher_and_fts5(tiny_set: Path) -> None:
    printed: list[str] = []
    summary = eval_memory.evaluate_set(tiny_set, out=printed.append)
    fts = summary[RULES_NAME]
    old = summary["old matcher (baseline, max_inject 5)"]
    assert fts["precision"] == 1.0 and fts["false_inject"] == 0.0
    assert fts["recall_g2"] == 1.0  # the follow-up needs the transcript, the trap its replacement
    assert old["false_inject"] == 1.0  # "exports" in a title is enough for the old matcher
    assert fts["R@10"] > old["R@10"]
    assert any("inject precision" in line for line in printed)


def test_evaluate_set_takes_a_set_laid_out_flat(tiny_set: Path, tmp_path: Path) -> None:
    """cedar and fjord keep their category folders beside queries.json and README.md."""
    flat = tmp_path / "flat"
    shutil.copytree(tiny_set / ".claude" / "memory", flat)
    shutil.copy(tiny_set / "queries.json", flat / "queries.json")
    (flat / "README.md").write_text("# not a memory\n")
    printed: list[str] = []
    summary = eval_memory.evaluate_set(flat, out=printed.append)
    assert printed[0].startswith("judged set: 5 memories, 4 queries")  # README.md and queries.json not indexed
    assert summary[RULES_NAME]["recall_g2"] == 1.0


def test_eval_beir_runs_end_to_end_on_a_tiny_collection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = [("d1", "Vitamin D and bone density", "Vitamin D supplementation increases bone mineral density in older adults."),
            ("d2", "Statins and muscle pain", "Statin therapy is associated with myalgia in a minority of patients."),
            ("d3", "Sleep and memory", "Sleep deprivation impairs memory consolidation.")]
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in docs))
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps({"_id": q, "text": t}) for q, t in
                                                      [("1", "statins cause muscle pain"), ("2", "vitamin D bone density")]))
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td2\t1\n2\td1\t1\n")
    beir.evaluate_collection(tmp_path)
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| memindex"))
    assert row.split("|")[2].strip() == "1.000"  # nDCG@10 of the product's engine
    assert any(line.startswith("| bm25s") for line in out.splitlines())


def test_the_committed_judged_set_passes_its_checker() -> None:
    printed: list[str] = []
    assert checkset.check_set(HARBOR, out=printed.append) == 0, "\n".join(printed)
    assert printed[-1] == "\nOK"


def test_the_checker_reports_schema_and_convention_problems(tmp_path: Path) -> None:
    shutil.copytree(HARBOR, tmp_path / "set")
    first = sorted((tmp_path / "set" / ".claude" / "memory" / "decisions").glob("*.json"))[:2]
    bad_enum = json.loads(first[0].read_text())
    bad_enum["content"]["status"] = "maybe"
    first[0].write_text(json.dumps(bad_enum))
    one_tag = json.loads(first[1].read_text())
    one_tag["tags"] = one_tag["tags"][:1]
    first[1].write_text(json.dumps(one_tag))
    printed: list[str] = []
    assert checkset.check_set(tmp_path / "set", out=printed.append) == 2
    assert any("'content.status'" in line for line in printed)  # memindex.store.schema's own message
    assert any("set convention: 2-6 tags, found 1" in line for line in printed)


def test_generated_stores_are_valid_and_deterministic(tmp_path: Path) -> None:
    a = genstore.generate(tmp_path / "a", 60, seed=4)
    b = genstore.generate(tmp_path / "b", 60, seed=4)
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    root = tmp_path / "a" / ".claude" / "memory"
    for path in a:
        assert validate_memory(json.loads(path.read_text()), path.relative_to(root).as_posix()) == []
    before = a[0].read_bytes()
    genstore.modify_one(a[0], seed=1)
    assert a[0].read_bytes() != before and validate_memory(json.loads(a[0].read_text()), a[0].relative_to(root).as_posix()) == []


def test_session_replay_counts_what_session_awareness_saves(tiny_set: Path, tmp_path: Path) -> None:
    """The sessions evaluation replays turns through a real transcript: without
    skip_injected the PgBouncer decision comes back on the follow-up, with it it does not."""
    from memindex import index
    from memindex.config import Config, parse_config
    from memindex_dev.evaluation.sessions import replay
    from memindex.index.sync import sync

    root = tiny_set / ".claude" / "memory"
    sync(root, Config())
    turns = ["postgres on RDS refuses connections, max_connections reached, pgbouncer?",
             "so is pgbouncer pooling what caps the RDS connections?"]
    conn = index.open_reader(root)
    try:
        off = replay(conn, turns, parse_config({"retrieval": {"skip_injected": False}}), tmp_path / "off.jsonl")
        on = replay(conn, turns, parse_config({}), tmp_path / "on.jsonl")
    finally:
        conn.close()
    assert off[1] == 2 and off[2] == 1  # injected on both turns: once again
    assert on[1] == 1 and on[2] == 0 and on[0] < off[0]
    assert '"hook_success"' in (tmp_path / "on.jsonl").read_text()


def _through_hook(tiny_set: Path, semantic: bool) -> tuple[dict[str, dict], list[str]]:
    from memindex_dev.evaluation.hookrun import run_hook_suite
    from memindex_dev.evaluation.sets import local_set

    printed: list[str] = []
    summary = run_hook_suite(sets_from=lambda tmp: local_set("tiny", tiny_set, tmp), semantic=semantic, out=printed.append)
    return summary, printed


def test_the_sets_run_through_the_real_hook_command(tiny_set: Path) -> None:
    """Every prompt goes through `hooks/hooks.json`'s command in a subprocess, and the
    memories read back from its block are the in-process policy's: a block the parser
    misreads, a hook that fails or a policy the hook does not share would show."""
    summary, printed = _through_hook(tiny_set, semantic=False)
    both = {k: v for k, v in summary.items() if k[0] == "tiny"}
    assert ("tiny", "worker") not in summary  # lexical: no worker
    assert both and all(m["same"] == 1.0 for m in both.values()), "\n".join(printed)
    injected = sum(m["per_prompt"] for m in both.values())
    assert injected > 0  # the stripe runbook, the PgBouncer decision, the CronJob decision
    assert "differ, or the hook failed: 0" in "\n".join(printed)


def test_the_calibrated_model_runs_through_the_real_hook_beside_the_rules(tiny_set: Path) -> None:
    """`--through-hook --calibrated`: the same prompts through the hook under each policy
    (the user's config turning the model on), each equal to its in-process policy; a hook
    that ignored the setting, or could not load the weights, would differ or inject nothing."""
    from memindex_dev.evaluation.hookrun import compare_policies
    from memindex_dev.evaluation.sets import local_set

    printed: list[str] = []
    summary = compare_policies(sets_from=lambda tmp: local_set("tiny", tiny_set, tmp), out=printed.append)
    assert {k[2] for k in summary} == {"rules", "calibrated"}
    assert all(m["same"] == 1.0 for m in summary.values()), "\n".join(printed)
    assert summary[("tiny", "whole", "calibrated")]["per_prompt"] > 0
    assert 'retrieval {"match_strategy": "calibrated"}' in "\n".join(printed)


def test_block_paths_reads_escaped_paths_and_tags() -> None:
    from memindex_dev.evaluation.hookrun import block_paths

    block = ('<memory-context source=".claude/memory/">\n'
             "- [RUNBOOK] A &amp; B -> .claude/memory/runbooks/a&amp;b.json #tags:x,y\n"
             "- [DECISION] t -> .claude/memory/decisions/d.json\n</memory-context>\n")
    assert block_paths(block, ".claude/memory/") == ["runbooks/a&b.json", "decisions/d.json"]


@pytest.mark.model
def test_the_real_worker_answers_the_hook_as_in_process(tiny_set: Path) -> None:
    """With the semantic channel on, the real `memindex serve` is started, answers each
    hook within its budget (the hook's picks equal the in-process policy's with the same
    model), and is stopped afterwards."""
    pytest.importorskip("numpy")
    from memindex.errors import ModelNotFound
    from memindex.semantic.vectors import get_embedder

    try:
        get_embedder("sentence-transformers/all-MiniLM-L6-v2")
    except (ModelNotFound, ImportError) as exc:
        pytest.skip(f"the real model is not available: {exc}")
    summary, printed = _through_hook(tiny_set, semantic=True)
    assert all(m["same"] == 1.0 for k, m in summary.items() if k[1] != "worker"), "\n".join(printed)
    assert summary[("tiny", "worker")] == {"queries": 4, "prompts": 4}, "\n".join(printed)
    assert "real `memindex serve`" in printed[0]
