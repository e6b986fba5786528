"""The injection policy's rules (memindex/policy/inject.py), through the hook as Claude Code runs it
and through `decide`: session awareness from a real transcript, resume intent, file
anchors, relative coverage, small stores, and `memindex explain`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memindex import index
from memindex.config import Config, parse_config
from memindex.policy.inject import Outcome, decide
from memindex.policy.prompt import category_asked, intents_of, without_intent
from memindex.index.sync import sync
from memindex.policy.transcript import read_session
from hookkit import prompt_json, put, run_hook

pytestmark = pytest.mark.usefixtures("rules_policy")  # these test the hand-set rules themselves

STRIPE = "stripe webhooks keep failing with a 400 signature error in staging"


def transcript(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def hook_block_record(block: str, when: str) -> dict:
    """An injection as Claude Code 2.1 records it (see tests/e2e/README.md)."""
    return {
        "type": "attachment", "timestamp": when,
        "attachment": {"type": "hook_success", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
                       "content": block.rstrip("\n"), "stdout": block, "stderr": "", "exitCode": 0},
    }


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch))


def test_a_memory_injected_earlier_in_the_session_is_not_injected_again(inject_project: Path, tmp_path: Path) -> None:
    first = run_hook(prompt_json(inject_project, STRIPE)).stdout.decode()
    assert "stripe-webhook-signature.json" in first
    t = transcript(tmp_path / "t.jsonl", [
        {"type": "user", "message": {"role": "user", "content": STRIPE}, "timestamp": iso(time.time())},
        hook_block_record(first, iso(time.time() + 1)),
    ])
    again = run_hook(prompt_json(inject_project, STRIPE + " again", transcript_path=str(t)))
    assert again.returncode == 0 and again.stdout == b""
    # Another session (no transcript) gets it as before.
    assert "stripe-webhook-signature.json" in run_hook(prompt_json(inject_project, STRIPE)).stdout.decode()


def test_a_memory_that_changed_since_it_was_injected_is_injected_again(inject_project: Path, tmp_path: Path) -> None:
    first = run_hook(prompt_json(inject_project, STRIPE)).stdout.decode()
    t = transcript(tmp_path / "t.jsonl", [hook_block_record(first, iso(time.time() - 60))])
    path = inject_project / ".claude" / "memory" / "runbooks" / "stripe-webhook-signature.json"
    os.utime(path)  # edited a minute after the block was shown
    sync(inject_project / ".claude" / "memory", Config())
    out = run_hook(prompt_json(inject_project, STRIPE, transcript_path=str(t))).stdout.decode()
    assert "stripe-webhook-signature.json" in out


def test_read_session_finds_blocks_and_touched_files(tmp_path: Path) -> None:
    block = '<memory-context source=".claude/memory/">\n- [RUNBOOK] X -> .claude/memory/runbooks/x.json #tags:a\n- [DECISION] Y -> .claude/memory/decisions/y.json\n</memory-context>\n'
    t = transcript(tmp_path / "t.jsonl", [
        hook_block_record(block, "2026-11-20T10:00:00.000Z"),
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "name": "Read", "input": {"file_path": "/work/app/api/auth.py"}},
            {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "x" * 5000}]}},
    ])
    session = read_session(str(t), 1 << 20, 65536)
    assert set(session.injected) == {".claude/memory/runbooks/x.json", ".claude/memory/decisions/y.json"}
    assert session.files == ["/work/app/api/auth.py"]
    assert read_session(str(tmp_path / "missing.jsonl"), 1 << 20, 65536).injected == {}


@pytest.mark.parametrize("prompt", [
    "where did we leave off?", "what was I working on yesterday", "ok, pick it back up", "catch me up on the last session",
    "where were we?", "ok where was I",
])
def test_resume_prompts_get_the_latest_session_summary(inject_project: Path, prompt: str) -> None:
    assert intents_of(prompt) == ["resume"]
    out = run_hook(prompt_json(inject_project, prompt)).stdout.decode()
    assert "sessions/2026-11-03-booking.json" in out and "billing" not in out


@pytest.mark.parametrize("prompt", [
    "where did we leave the billing CSV export?", "pick the billing CSV export back up",
])
def test_a_resume_prompt_on_a_topic_gets_that_topic_s_session(inject_project: Path, prompt: str) -> None:
    root = inject_project / ".claude" / "memory"
    with index.open_reader(root) as conn:
        outcome = decide(conn, prompt, Config())
    assert outcome.intent == "resume"
    assert [h.path for h in outcome.hits] == ["sessions/2026-10-01-billing.json"]


@pytest.mark.parametrize("prompt", [
    "where were we storing the upload logs?", "pick up the latest changes from main", "pick up the phone integration",
])
def test_prompts_that_only_look_like_resuming_are_not(prompt: str) -> None:
    assert "resume" not in intents_of(prompt)


def _dated(root: Path, category: str, mem_id: str, title: str, tags: list[str], text: str, when: str) -> None:
    put(root, category, mem_id, title, tags, text)
    path = next(root.glob(f"*/{mem_id}.json"))
    data = json.loads(path.read_text())
    data["updated_at"] = when
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("prompt", [
    "where did we leave off?", "ok, pick up where we stopped yesterday", "what was I doing last time",
])
def test_the_words_of_a_resume_request_are_no_topic(inject_project: Path, prompt: str) -> None:
    # an older session whose text happens to hold the request's own words
    root = inject_project / ".claude" / "memory"
    _dated(root, "session_summary", "2026-09-01-kill-switch", "Session: kill switch left off in staging", ["flags"],
           "We stopped yesterday with the kill switch left off; last time the doing of it took an hour.",
           "2026-09-01T00:00:00Z")
    sync(root, Config())
    with index.open_reader(root) as conn:
        outcome = decide(conn, prompt, Config())
    assert outcome.intent == "resume"
    assert [h.path for h in outcome.hits] == ["sessions/2026-11-03-booking.json"]  # the latest


def test_a_resume_prompt_on_a_topic_gets_the_latest_session_on_it(inject_project: Path) -> None:
    root = inject_project / ".claude" / "memory"
    _dated(root, "session_summary", "2026-10-15-billing-tax", "Session: billing CSV export tax columns", ["billing"],
           "Added the tax columns to the billing CSV export; next: rounding.", "2026-11-10T00:00:00Z")
    sync(root, Config())
    with index.open_reader(root) as conn:
        outcome = decide(conn, "where did we leave the billing CSV export?", Config())
    assert [h.path for h in outcome.hits] == ["sessions/2026-10-15-billing-tax.json"]  # not the older billing one (11-01)


# A decision, two runbooks and a constraint about the payout batch, and a runbook that
# shares only the word "batch": (category, id, title, tags, text).
PAYOUT_KINDS = (
    ("decision", "payout-batch-nightly", "Payout batch runs nightly", ["payouts", "batch"],
     "The payout batch settles host payouts nightly at 02:00 UTC instead of per booking."),
    ("runbook", "payout-batch-stuck", "Payout batch stuck in pending", ["payouts", "batch"],
     "When the payout batch stays pending, re-queue it with `payouts requeue`; check the ledger lock."),
    ("runbook", "payout-batch-partial", "Payout batch settled only some hosts", ["payouts"],
     "A payout batch that settled some hosts: rerun it for the rest; it skips settled lines."),
    ("runbook", "backup-batch-sunday", "Backup batch fails on Sundays", ["backups", "batch"],
     "The backup batch fails on Sundays when the snapshot window overlaps maintenance; rerun it."),
    ("constraint", "payout-weekend-bank-cutoff", "Banks reject payouts on weekends", ["payouts", "bank"],
     "Bank transfers for payouts are rejected on weekends; the batch must hold them until Monday."),
)


def _kinds_on_one_topic(root: Path) -> None:
    for memory in PAYOUT_KINDS:
        put(root, *memory)
    sync(root, Config())


@pytest.mark.parametrize(("prompt", "kind", "expected"), [
    ("is there a runbook for the payout batch?", "runbook",
     {"runbooks/payout-batch-stuck.json", "runbooks/payout-batch-partial.json"}),
    ("any constraints on the payout batch?", "constraint", {"constraints/payout-weekend-bank-cutoff.json"}),
    ("what did we decide about the payout batch?", "decision", {"decisions/payout-batch-nightly.json"}),
])
def test_a_request_for_a_kind_of_memory_gets_that_kind_on_its_topic(
    inject_project: Path, prompt: str, kind: str, expected: set[str]
) -> None:
    root = inject_project / ".claude" / "memory"
    _kinds_on_one_topic(root)
    with index.open_reader(root) as conn:
        outcome = decide(conn, prompt, Config())
        plain = decide(conn, "the payout batch?", Config())
    assert outcome.intent == kind
    assert {h.path for h in outcome.hits} == expected
    assert {h.path for h in plain.hits} != expected  # the words alone pick other kinds too


def test_a_request_for_a_kind_with_none_on_its_topic_injects_nothing(inject_project: Path) -> None:
    root = inject_project / ".claude" / "memory"
    _kinds_on_one_topic(root)
    put(root, "decision", "payout-currency-eur", "Payout currency is EUR", ["payouts", "currency"],
        "Host payouts are converted to EUR before the payout batch runs.")
    sync(root, Config())
    with index.open_reader(root) as conn:
        assert decide(conn, "payout currency conversion?", Config()).hits  # the words find the decision
        outcome = decide(conn, "any tech debt in payout currency conversion?", Config())
    assert outcome.intent == "tech_debt" and outcome.hits == []


@pytest.mark.parametrize("prompt", [
    "can I just add a NOT NULL constraint?", "what's the difference between a unique constraint and an index",
    "the decision tree classifier overfits", "help me pick a name for this function",
])
def test_a_kind_named_in_passing_is_no_request_for_it(prompt: str) -> None:
    assert category_asked(intents_of(prompt)) is None


def test_a_prompt_naming_several_kinds_asks_for_none(inject_project: Path) -> None:
    # "limits, conventions, known problems": a list of kinds, no request for one of them
    assert intents_of("what should I know about our workers: limits, conventions, known problems?") == []
    prompt = "any runbooks or conventions for the payout batch?"
    assert set(intents_of(prompt)) == {"runbook", "preference"}
    assert category_asked(intents_of(prompt)) is None
    root = inject_project / ".claude" / "memory"
    _kinds_on_one_topic(root)
    with index.open_reader(root) as conn:
        outcome = decide(conn, prompt, Config())
    assert outcome.intent is None and outcome.hits  # the general rules, not one kind


def test_the_words_between_a_request_and_its_kind_stay_its_topic() -> None:
    assert without_intent("remind me of our git/PR conventions before I open this", "preference").split() == [
        "our", "git/PR", "before", "I", "open", "this"]
    assert "redis" in without_intent("which architecture decisions involve redis?", "decision")


@pytest.mark.parametrize("prompt", ["fix the webhook handler", "what does git rebase -i do", "where is the config file"])
def test_ordinary_prompts_have_no_intent(prompt: str) -> None:
    assert intents_of(prompt) == []


@pytest.mark.parametrize(("prompt", "general"), [
    ("what's the difference between LRU and LFU eviction?", True),
    ("how does Redis eviction work, LRU vs LFU?", True),
    ("explain how a token bucket rate limiter works", True),
    ("kafka consumer rebalancing in general", True),
    ("how does our deploy work?", False),  # a word pointing at the project
    ("login stuff for the dashboard, how does it work?", False),  # ... or at the conversation
    ("how do deploys work here again?", False),
    ("how do I rotate the stripe keys?", False),  # no question about how something works
])
def test_a_question_about_the_world_is_told_by_its_form(prompt: str, general: bool) -> None:
    assert ("general" in intents_of(prompt)) is general


def test_a_question_about_the_world_needs_a_memory_holding_all_its_words(inject_project: Path) -> None:
    """The RDS constraint shares "pgbouncer", "transaction" and "connections" with a
    textbook question: enough for a prompt about the project, not for one about the world."""
    root = inject_project / ".claude" / "memory"
    rds = "constraints/rds-max-connections.json"
    with index.open_reader(root) as conn:
        words = decide(conn, "pgbouncer transaction pooling vs session pooling, connections", Config())
        world = decide(conn, "how does pgbouncer transaction pooling work vs session pooling, connections?", Config())
        ours = decide(conn, "how does our pgbouncer transaction pooling work vs session pooling, connections?", Config())
        whole = decide(conn, "how does the RDS max_connections work?", Config())
    assert [h.path for h in words.hits] == [rds] == [h.path for h in ours.hits]
    assert world.intent == "general" and world.hits == []
    assert [d.rule.split(", under ")[1] for d in world.decisions if d.path == rds] == [
        "1: a general question needs all its words"]
    assert whole.intent == "general" and [h.path for h in whole.hits] == [rds]


def _invoice_note(root: Path, title: str, text: str) -> None:
    """A tech-debt note whose related_files name billing/invoice_totals.py."""
    path = put(root, "tech_debt", "invoice-rounding", title, ["billing"], text)
    data = json.loads(path.read_text())
    data["related_files"] = ["billing/invoice_totals.py"]
    path.write_text(json.dumps(data))


def _plain_and_after_editing(tmp_path: Path, root: Path, prompt: str) -> tuple[Outcome, Outcome]:
    """The policy's outcome for the prompt alone, and in a session whose transcript shows
    an Edit of billing/invoice_totals.py (the store synced first)."""
    sync(root, Config())
    t = transcript(tmp_path / "t.jsonl", [{"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "name": "Edit", "input": {"file_path": str(tmp_path / "p" / "billing" / "invoice_totals.py")}}]}}])
    with index.open_reader(root) as conn:
        return decide(conn, prompt, Config()), decide(conn, prompt, Config(), session=read_session(str(t), 1 << 20, 65536))


def test_a_file_the_session_touched_lowers_the_bar_for_its_memories(tmp_path: Path) -> None:
    root = tmp_path / "p" / ".claude" / "memory"
    _invoice_note(root, "Invoice totals rounded per line",
                  "Totals are rounded per line instead of per invoice; off by a cent on large invoices with many lines.")
    for i in range(8):
        put(root, "decision", f"d{i}", f"Decision {i} about caching", ["cache"], f"Cache layer number {i} uses redis keys.")
    prompt = "why are the totals wrong for some customers with many lines after the redis cache change"
    plain, touched = _plain_and_after_editing(tmp_path, root, prompt)
    assert "tech-debt/invoice-rounding.json" not in [h.path for h in plain.hits]
    assert "tech-debt/invoice-rounding.json" in [h.path for h in touched.hits]


def test_a_memory_anchored_to_a_touched_file_is_a_candidate_wherever_it_ranks(tmp_path: Path) -> None:
    """Four decisions outscore the anchored note on the prompt's words (it is long, its
    words diluted) but cover too little of it; the note covers the prompt, and the file
    the session edited makes it a candidate although its score is under 0.7 of the best."""
    root = tmp_path / "p" / ".claude" / "memory"
    _invoice_note(root, "Billing module notes",
                  "Notes on the billing module. " + "It has grown over the years and holds many helpers. " * 40
                  + "Totals drift by a cent.")
    for i in range(4):
        put(root, "decision", f"d{i}", f"Totals on long invoices {i}", ["totals", "invoices"], f"Totals of long invoices are shown per page {i}.")
    for i in range(6):
        put(root, "runbook", f"r{i}", f"Runbook {i}", ["ops"], f"Other topic {i}.")
    plain, touched = _plain_and_after_editing(tmp_path, root, "why do totals drift by a cent on long invoices")
    assert plain.hits == []
    assert [d.rule for d in plain.decisions if d.path == "tech-debt/invoice-rounding.json"] == ["score below 0.7 of the best"]
    assert [h.path for h in touched.hits] == ["tech-debt/invoice-rounding.json"]


def test_a_pick_that_covers_much_less_than_the_best_one_is_dropped(inject_project: Path) -> None:
    """The runbook explains the prompt (0.96 of its IDF mass); the RDS constraint matches
    "400" and "rds" (0.46): enough for min_coverage, not next to the best pick."""
    root = inject_project / ".claude" / "memory"
    prompt = "stripe webhook signature fails with 400 on staging, also rds connections"
    every_candidate = {"relative_cutoff": 0.0}  # isolate the coverage rules from the score rule
    with index.open_reader(root) as conn:
        strict = decide(conn, prompt, parse_config({"retrieval": every_candidate}))
        lenient = decide(conn, prompt, parse_config({"retrieval": {**every_candidate, "min_relative_coverage": 0.0}}))
    assert [h.path for h in strict.hits] == ["runbooks/stripe-webhook-signature.json"]
    assert "constraints/rds-max-connections.json" in [h.path for h in lenient.hits]
    dropped = [d for d in strict.decisions if d.path == "constraints/rds-max-connections.json"]
    assert dropped and not dropped[0].kept and "best pick" in dropped[0].rule


def test_small_stores_keep_their_common_terms(tmp_path: Path) -> None:
    """In a store of 8, a term in 3 memories is not 'common' (a quarter would drop it)."""
    from memindex.retrieval.query import Params, plan_query

    root = tmp_path / "p" / ".claude" / "memory"
    for i in range(8):
        put(root, "runbook", f"r{i}", f"Runbook {i}", ["ops"], "deploy the api" if i < 3 else f"other topic {i}")
    sync(root, Config())
    with index.open_reader(root) as conn:
        kept = plan_query(conn, "deploy the api topic", Params())
        starved = plan_query(conn, "deploy the api topic", Params(df_floor=1))
    assert sorted(t.text for t in kept.used) == ["api", "deploy", "topic"]
    assert len(starved.used) == 1  # the old rule: every term "common", one kept as a last resort


def test_explain_names_the_rule_for_each_memory(inject_project: Path) -> None:
    from memindex.cli import main

    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--root", str(inject_project), "explain", "--json", STRIPE])
    assert code == 0
    report = json.loads(out.getvalue())
    assert report["injected"] == [".claude/memory/runbooks/stripe-webhook-signature.json"]
    assert report["settings"]["min_coverage"] == 0.4
    assert all(c["rule"] for c in report["considered"])
    kept = [c for c in report["considered"] if c["kept"]]
    assert kept and kept[0]["coverage"] >= 0.4


def test_explain_says_which_kind_the_prompt_asks_for_and_when_none_fits(inject_project: Path) -> None:
    from memindex.cli import main

    import contextlib
    import io

    _kinds_on_one_topic(inject_project / ".claude" / "memory")
    for prompt, expected in [
        ("any constraints on the payout batch?", ["intent:   constraint (the prompt asks for this kind: only constraints/ is considered)", "INJECT"]),
        ("any tech debt in the payout batch?", ["intent:   tech_debt", "nothing considered: no memory in tech-debt/ shares"]),
        ("how does a bank batch work in general, with retries?", ["intent:   general (a question about the world",
                                                                "a general question needs all its words", "injected: 0"]),
    ]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["--root", str(inject_project), "explain", prompt]) == 0
        for line in expected:
            assert line in out.getvalue(), (prompt, out.getvalue())


def test_explain_with_a_file_shows_what_the_pre_tool_use_hook_would_add(tmp_path: Path) -> None:
    """`explain --file PATH "prompt"`: rule 10's decision for each memory anchored to the
    file, with the coverage of the prompt, and a word when the hook is off."""
    from memindex.cli import main

    import contextlib
    import io

    root = tmp_path / "p" / ".claude" / "memory"
    _invoice_note(root, "Invoice totals rounded per line",
                  "Totals are rounded per line instead of per invoice; off by a cent on large invoices with many lines.")
    sync(root, Config())

    def explain(*args: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["--root", str(root), "explain", *args]) == 0
        return out.getvalue()

    fits = explain("--file", "billing/invoice_totals.py", "invoice totals are off by a cent again")
    assert "hook:     off (retrieval.tool_anchors is false)" in fits
    assert "INJECT" in fits and "which the assistant is about to open" in fits and "injected: 1" in fits
    beside = explain("--file", "billing/invoice_totals.py", "rename the logger in every module")
    assert "drop" in beside and "under half min_coverage (0.2)" in beside and "injected: 0" in beside
    unanchored = explain("--file", "billing/other.py", "invoice totals are off by a cent again")
    assert "nothing considered: no active memory's related_files name billing/other.py" in unanchored
    report = json.loads(explain("--json", "--file", "billing/invoice_totals.py", "invoice totals are off by a cent"))
    assert report["file"] == "billing/invoice_totals.py" and report["settings"]["tool_anchors"] is False
    assert report["injected"] == [".claude/memory/tech-debt/invoice-rounding.json"]
