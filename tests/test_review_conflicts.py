"""Duplicates and contradictions across the store (memindex/review/conflicts.py): same topic
by the save path's own test (write/candidate.py), in both of its ways of matching; the
signs of disagreement; the pairs measured within a budget and remembered."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import write_mem
from memindex import index, review, usage
from memindex.config import Config
from memindex.index import reads
from memindex.index.sync import sync
from memindex.retrieval.hits import Hit
from memindex.retrieval.query import Params
from memindex.review.conflicts import disagreement, quantities
from memindex.review.items import Entry
from memindex.write.candidate import StoreWide, Topic, find_candidate

KESTREL = Path(__file__).resolve().parent.parent / "evalsets" / "kestrel" / "store"


def entry(title: str, text: str, updated: str = "2026-01-01T00:00:00Z") -> Entry:
    return Entry("decisions/x.json", 1, 0, "decision", title, [], updated, updated, [], {}, "", f"{title}\n{text}")


def test_quantities_of_one_kind_and_their_values() -> None:
    q = quantities("Timeout 30 seconds, connect 2 s; at most 20 players; `traces_sample_rate = 0.1`; 10% of 5 MB")
    assert q["time"] == {30.0, 2.0} and q["#player"] == {20.0} and q["=traces_sample_rate"] == {0.1}
    assert q["percent"] == {10.0} and q["size"] == {5_000_000.0}
    assert quantities("publish 7 days ahead")["time"] == {604_800.0} == quantities("publish a week, 168 hours ahead")["time"]


@pytest.mark.parametrize("old, new, sign", [
    (("Shared HTTP client with 30 s timeout", "timeout=30 seconds"), ("HTTP calls time out at 5 seconds", "at most 5 s"),
     "different values (time: 30 against 5)"),
    (("Periodic jobs run from Celery beat", "beat service"), ("EventBridge replaces Celery beat", "schedules in terraform"),
     'the newer says "replaces celery"'),
    (("Redux Toolkit for web state", "slices"), ("Server data via TanStack Query, not Redux", "useQuery"),
     'the newer says "not redux"'),
    (("Referees cannot assign themselves", "assignor only"), ("Referees can claim open slots", "open games list"),
     '"cannot" against "can"'),
])
def test_signs_of_disagreement(old, new, sign) -> None:
    assert sign in disagreement(entry(*old), entry(*new))


def test_restating_is_no_disagreement() -> None:
    a = entry("No SMS between 21:00 and 08:00 recipient local time", "held until 08:00; exception within 3 hours")
    b = entry("SMS are not sent overnight (9pm to 8am local)", "they wait in the queue; same-day cancellation within 3 hours")
    assert disagreement(a, b) == []


def test_the_store_wide_measure_is_the_save_paths_measure(tmp_path: Path) -> None:
    """StoreWide matching gives exactly what the one-at-a-time path gives."""
    import shutil

    root = tmp_path / "k" / ".claude" / "memory"
    shutil.copytree(KESTREL, root)
    sync(root, Config())
    conn = index.open_reader(root)
    try:
        rows = {p: r for r, p in conn.execute("SELECT rowid, path FROM documents WHERE record_status = 'active'")}
        params = Params.from_config(Config())
        store = StoreWide(conn)
        rng = random.Random(7)
        paths = sorted(rows)
        for _ in range(120):
            a, b = rng.sample(paths, 2)
            text = json.loads((root / a).read_text())["title"] + " " + json.dumps(json.loads((root / a).read_text())["content"])
            hit = lambda: Hit.from_row(reads.documents(conn, [rows[b]])[0], 0.0)  # noqa: E731
            one = Topic(conn, text, params).measure(conn, hit())
            many = Topic(conn, text, params, store, rows[a]).measure(conn, hit())
            assert (one.containment, one.title_overlap, one.exact_containment) == pytest.approx(
                (many.containment, many.title_overlap, many.exact_containment), abs=1e-12), (a, b)
        store.close()
    finally:
        conn.close()


@pytest.fixture()
def store(memory_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(usage.SESSION_ENV, raising=False)
    r = memory_root
    write_mem(r, "decision", "http-timeout-30", "Shared HTTP client with a 30 second timeout", ["http", "timeout"],
              {"status": "accepted", "context": "integrations built their own requests calls",
               "decision": "All outbound HTTP goes through kestrel.http.session() with timeout 30 seconds and 3 retries."},
              updated_at="2025-01-10T00:00:00Z", created_at="2025-01-10T00:00:00Z")
    write_mem(r, "constraint", "http-timeout-5", "Outbound HTTP calls time out at 5 seconds", ["http", "timeout"],
              {"rule": "Every outbound HTTP call through kestrel.http.session() uses a timeout of at most 5 seconds.",
               "severity": "high"}, updated_at="2025-06-01T00:00:00Z", created_at="2025-06-01T00:00:00Z")
    write_mem(r, "runbook", "rotate-webhook-secret", "Rotate the Stripe webhook signing secret", ["stripe", "webhooks"],
              {"trigger": "yearly rotation or the whsec secret leaked",
               "steps": ["Stripe Dashboard > Developers > Webhooks: roll the signing secret", "put the new whsec value in SSM",
                         "restart the api service"]}, updated_at="2025-02-01T00:00:00Z", created_at="2025-02-01T00:00:00Z")
    write_mem(r, "runbook", "webhook-secret-rotation", "Stripe webhook secret rotation", ["stripe", "secrets"],
              {"trigger": "the yearly rotation, or a leaked whsec signing secret",
               "steps": ["In the Stripe Dashboard, Developers > Webhooks, roll the signing secret",
                         "store the new whsec value in SSM", "restart the api service"]},
              updated_at="2025-03-01T00:00:00Z", created_at="2025-03-01T00:00:00Z")
    write_mem(r, "preference", "ruff", "Python: ruff for lint and format", ["python"],
              {"topic": "python style", "value": "ruff check and ruff format, line length 100"})
    sync(r, Config())
    return r


def test_a_contradiction_and_a_duplicate_across_categories(store: Path) -> None:
    items = {(i.kind, i.path, i.other_path): i for i in review.queue(store, Config()) if i.kind in ("conflict", "duplicate")}
    conflict = items[("conflict", "decisions/http-timeout-30.json", "constraints/http-timeout-5.json")]
    assert conflict.suggested == "retire" and conflict.evidence["newer"] == ".claude/memory/constraints/http-timeout-5.json"
    assert "different values (time: 30 against 5)" in conflict.evidence["signals"]
    assert conflict.to_json()["other_path"] == ".claude/memory/constraints/http-timeout-5.json"
    dup = items[("duplicate", "runbooks/rotate-webhook-secret.json", "runbooks/webhook-secret-rotation.json")]
    assert dup.suggested == "merge" and dup.evidence["both_ways"] >= 0.7
    assert len(items) == 2  # the ruff preference shares no topic


def test_the_same_function_decides_at_save_time(store: Path) -> None:
    """The save path's candidate finds the same pair (within its category)."""
    answer = find_candidate(store, Config(), "runbook", "Stripe webhook secret rotation: roll the signing secret in the "
                            "Stripe Dashboard, store the new whsec value in SSM, restart the api service")
    assert answer["recommendation"] in ("UPDATE_OR_DELETE", "NOOP") and answer["candidate"]["id"] in (
        "rotate-webhook-secret", "webhook-secret-rotation")


def test_pairs_are_measured_within_the_budget_and_remembered(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = Topic.measure

    def counting(self, conn, hit, exact=True):
        calls.append(hit.path)
        return real(self, conn, hit, exact)

    monkeypatch.setattr(Topic, "measure", counting)
    first = review.refresh(store, Config())
    assert calls and first["conflicts"]["measured"] >= 2 and first["conflicts"]["pending"] == 0
    calls.clear()
    again = review.refresh(store, Config())
    assert calls == [] and again["conflicts"]["known"] == first["conflicts"]["measured"]  # nothing measured twice
    assert again["by_kind"] == first["by_kind"]
    from memindex.review import cache

    real_load = cache.load
    monkeypatch.setattr(cache, "load", lambda root, name: {} if name == "pairs" else real_load(root, name))  # nothing remembered
    cfg = Config()
    cfg.values["review.conflict_budget_s"] = 0.0
    starved = review.refresh(store, cfg)
    assert starved["conflicts"]["pending"] == first["conflicts"]["measured"] and starved["by_kind"] == {}
    # out of time: the rest waits for the next run, nothing is made up
