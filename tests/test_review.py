"""The review queue (memindex/review): its items and JSON shape, acknowledgments that hold
until the memory or its evidence changes, the actions through the write path, what the
index keeps for the hooks, and SessionStart's line to the user."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli, write_mem
from memindex import review, usage
from memindex.config import Config
from memindex.errors import UsageError
from memindex.index.sync import sync

HOOK = REPO / "hooks" / "memindex_hook.py"


@pytest.fixture()
def store(memory_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(usage.SESSION_ENV, raising=False)
    write_mem(memory_root, "constraint", "freeze-until-march", "Deploy freeze until March", ["deploy"],
              {"rule": "No deploys to production during the freeze.", "expires": "2026-03-01"})
    write_mem(memory_root, "constraint", "no-expiry", "Payments need two reviewers", ["payments"],
              {"rule": "Every change to payments/ needs two approving reviews.", "expires": None})
    write_mem(memory_root, "decision", "old-queue", "Use RabbitMQ for jobs", ["queue"],
              {"status": "superseded", "context": "jobs", "decision": "RabbitMQ for background jobs."})
    write_mem(memory_root, "tech_debt", "paid-debt", "Duplicated geocoding clients", ["geo"],
              {"status": "resolved", "priority": "low", "description": "Two geocoding clients."})
    write_mem(memory_root, "runbook", "restart-worker", "Restart the ETA worker", ["worker", "eta"],
              {"trigger": "ETA lag", "steps": ["kubectl rollout restart deploy/eta-worker"]},
              questions=["how do I restart the eta worker?"], related_files=["deploy/eta.yaml"])
    write_mem(memory_root, "runbook", "restart-worker-2", "Restart the ETA worker deployment", ["worker", "k8s"],
              {"trigger": "ETA lag", "steps": ["kubectl rollout restart deploy/eta-worker"]},
              questions=["eta worker is stuck"], related_files=["deploy/eta-worker.yaml"])
    sync(memory_root, Config())
    return memory_root


def kinds(items) -> dict[str, str]:
    return {i.path: i.kind for i in items}


def test_expired_items_and_the_json_shape(store: Path) -> None:
    items = review.queue(store, Config())
    assert kinds(items) == {"constraints/freeze-until-march.json": "expired", "decisions/old-queue.json": "expired",
                            "tech-debt/paid-debt.json": "expired", "runbooks/restart-worker-2.json": "duplicate"}
    out = json.loads(run_cli("--root", str(store), "review", "--json").stdout)
    [freeze] = [i for i in out["items"] if i["path"].endswith("freeze-until-march.json")]
    assert freeze == {"kind": "expired", "path": ".claude/memory/constraints/freeze-until-march.json",
                      "reason": "the constraint expired on 2026-03-01", "evidence": {"expires": "2026-03-01"},
                      "suggested": "retire"}
    assert {i["suggested"] for i in out["items"]} == {"retire", "archive", "merge"}
    [dup] = [i for i in out["items"] if i["kind"] == "duplicate"]
    assert dup["path"] == ".claude/memory/runbooks/restart-worker-2.json"  # the older (same date: by path)
    assert dup["other_path"] == ".claude/memory/runbooks/restart-worker.json"
    text = run_cli("--root", str(store), "review").stdout
    assert "EXPIRED   .claude/memory/constraints/freeze-until-march.json" in text
    assert "suggested: retire (`memindex retire .claude/memory/constraints/freeze-until-march.json`)" in text


def shown(root: Path, path: str, sessions: int, times: int) -> None:
    for s in range(sessions):
        for _ in range(times):
            usage.record_shown(root, f"session-{s}", "hook", [path])


def test_shown_again_and_again_and_never_opened_is_unused(store: Path) -> None:
    cfg = Config()
    shown(store, "runbooks/restart-worker.json", sessions=3, times=2)
    shown(store, "runbooks/restart-worker-2.json", sessions=1, times=9)  # one session only: not yet
    [item] = [i for i in review.queue(store, cfg) if i.kind == "unused"]
    assert item.path == "runbooks/restart-worker.json" and item.suggested == "update"
    assert item.reason == "shown 6 times in 3 sessions, never opened"
    assert item.evidence["opened"] == 0 and item.evidence["shown_by"] == {"hook": 6}
    usage.record_opens(store, "session-0", [("toolu_1", "read", "runbooks/restart-worker.json")])
    assert not [i for i in review.queue(store, cfg) if i.kind == "unused"]


def test_keep_holds_until_the_memory_changes(store: Path) -> None:
    cfg = Config()
    path = ".claude/memory/constraints/freeze-until-march.json"
    out = run_cli("--root", str(store), "review", "--keep", path)
    assert out.returncode == 0 and "kept .claude/memory/constraints/freeze-until-march.json (expired)" in out.stdout
    assert "constraints/freeze-until-march.json" not in kinds(review.queue(store, cfg))
    assert "constraints/freeze-until-march.json" in kinds(review.queue(store, cfg, include_kept=True))
    review.update(store, cfg, path, {"content": {"expires": "2026-02-01"}, "change_summary": "earlier end"})
    assert kinds(review.queue(store, cfg))["constraints/freeze-until-march.json"] == "expired"  # back: it changed


def test_keep_holds_until_the_evidence_changes(store: Path) -> None:
    cfg = Config()
    shown(store, "runbooks/restart-worker.json", sessions=3, times=2)
    review.keep(store, cfg, "runbooks/restart-worker.json", kind="unused")
    assert "runbooks/restart-worker.json" not in kinds(review.queue(store, cfg))
    shown(store, "runbooks/restart-worker.json", sessions=4, times=1)  # more showings alone: still kept
    assert "runbooks/restart-worker.json" not in kinds(review.queue(store, cfg))
    with pytest.raises(UsageError, match="no review item for runbooks/restart-worker.json of kind stale"):
        review.keep(store, cfg, "runbooks/restart-worker.json", kind="stale")


def test_actions_go_through_the_write_path(store: Path) -> None:
    cfg = Config()
    answer = review.retire(store, cfg, "decisions/old-queue.json", replaced_by=None)
    assert answer["record_status"] == "retired"
    review.archive(store, cfg, "tech-debt/paid-debt.json")
    assert json.loads((store / "tech-debt/paid-debt.json").read_text())["record_status"] == "archived"
    merged = review.merge(store, cfg, "runbooks/restart-worker-2.json", "runbooks/restart-worker.json")
    assert merged["status"] == "merged"
    kept = json.loads((store / "runbooks/restart-worker.json").read_text())
    assert kept["tags"] == ["worker", "eta", "k8s"]
    assert kept["questions"] == ["how do I restart the eta worker?", "eta worker is stuck"]
    assert kept["related_files"] == ["deploy/eta.yaml", "deploy/eta-worker.yaml"]
    assert "merged .claude/memory/runbooks/restart-worker-2.json" in kept["changes"][-1]["summary"]
    gone = json.loads((store / "runbooks/restart-worker-2.json").read_text())
    assert gone["record_status"] == "retired" and "replaced by runbooks/restart-worker" in gone["retired_reason"]
    assert kinds(review.queue(store, cfg)) == {"constraints/freeze-until-march.json": "expired"}
    with pytest.raises(UsageError, match="a memory cannot be merged into itself"):
        review.merge(store, cfg, "runbooks/restart-worker.json", ".claude/memory/runbooks/restart-worker.json")


def test_a_document_indexed_in_place_is_edited_not_acted_on(store: Path) -> None:
    for act in (lambda p: review.retire(store, Config(), p), lambda p: review.archive(store, Config(), p),
                lambda p: review.update(store, Config(), p, {"title": "x"})):
        with pytest.raises(UsageError, match="docs/adr/0007-queue.md is a document indexed in place.*edit the file"):
            act("docs/adr/0007-queue.md#decision")
    out = run_cli("--root", str(store), "review", "--merge", "@docs/adr/0007-queue.md#decision", "--into", "runbooks/restart-worker.json")
    assert out.returncode == 2 and "edit the file" in out.stderr


def test_the_index_keeps_the_findings_and_session_start_says_so(store: Path) -> None:
    report = review.refresh(store, Config())
    assert report["stored"] and report["by_kind"] == {"expired": 3, "duplicate": 1}
    cached = review.queue(store, Config(), fresh=False)
    assert kinds(cached) == kinds(review.queue(store, Config()))
    proc = subprocess.run([sys.executable, "-I", "-S", str(HOOK), "session-start"],
                          input=json.dumps({"cwd": str(store.parent.parent), "source": "startup"}).encode(),
                          capture_output=True, timeout=30)
    out = json.loads(proc.stdout)
    assert out["systemMessage"] == "memindex: 4 memories to review (3 expired, 1 duplicate): run `memindex review`"
    assert "hookSpecificOutput" not in out  # the user's message, never the model's context
    review.keep(store, Config(), "constraints/freeze-until-march.json")
    from memindex import index
    from memindex.review import pending

    conn = index.open_reader(store)
    try:
        assert pending.counts(conn, store) == {"expired": 2, "duplicate": 1}
    finally:
        conn.close()
    # a memory changed since the check: its stored item is not used
    review.update(store, Config(), "decisions/old-queue.json", {"content": {"status": "accepted"}, "change_summary": "back"})
    assert "decisions/old-queue.json" not in kinds(review.queue(store, Config(), fresh=False))


def test_the_background_refresh_reads_the_index_as_it_is(memory_root: Path) -> None:
    """SessionStart starts `review --refresh --no-sync` beside its own sync: the review does
    not walk the files a second time (a memory written meanwhile is left to that sync), while
    a user's plain `review --refresh` syncs first."""
    write_mem(memory_root, "decision", "alpha-store", "Alpha store keeps orders", ["orders"])
    sync(memory_root)
    write_mem(memory_root, "constraint", "numbat-quota", "Numbat quota is 40 calls a minute", ["numbat"])
    done = run_cli("--root", str(memory_root), "review", "--refresh", "--no-sync", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["memories"] == 1
    from conftest import search_paths

    assert search_paths(memory_root, "numbat") == []
    done = run_cli("--root", str(memory_root), "review", "--refresh", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["memories"] == 2
    assert search_paths(memory_root, "numbat") == ["constraints/numbat-quota.json"]
