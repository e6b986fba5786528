"""`questions`: the phrasings a memory answers, written at save time (issue 25, part 5).

Validated on save and update, indexed in their own FTS5 column with their own weight,
counted by the coverage rule, embedded with the memory, and measured by the evaluation
(`--questions`)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memindex import cli, index
from memindex.config import Config, parse_config
from memindex.errors import InvalidMemory
from memindex.retrieval.query import Params, coverage, plan_query, search
from memindex.store.schema import validate_memory
from memindex.store.files import to_memory
from memindex.index.sync import sync
from memindex.write import save_memory, update_memory

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "memindex_hook.py"

# The runbook's own words never say "dropped", "silently", "mobile" or "phone": only its questions do.
RUNBOOK = {
    "title": "APNs certificate expiry",
    "tags": ["apns", "ios"],
    "content": {"trigger": "APNs rejects the provider certificate after its yearly expiry",
                "steps": ["Renew the certificate in the Apple developer portal", "Upload it to the notification service"]},
    "questions": ["why are push notifications silently dropped on iPhones?",
                  "mobile phone alerts stopped arriving overnight"],
}
FILLER = [
    ("decision", "Use PgBouncer transaction pooling", ["postgres"],
     {"status": "accepted", "context": "RDS allows 400 connections", "decision": "Pool with PgBouncer"}),
    ("preference", "Named exports in TypeScript", ["typescript"], {"topic": "exports", "value": "Prefer named exports"}),
    ("constraint", "Customer data stays in the EU", ["gdpr"], {"kind": "policy", "rule": "EU regions only", "severity": "high"}),
    ("runbook", "Stripe webhook returns 400", ["stripe"],
     {"trigger": "signature verification fails", "steps": ["Rotate STRIPE_WEBHOOK_SECRET"]}),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / ".claude" / "memory"
    root.mkdir(parents=True)
    cfg = Config()
    for category, title, tags, content in FILLER:
        save_memory(root, cfg, category, {"title": title, "tags": tags, "content": content})
    return tmp_path


@pytest.fixture
def root(project: Path) -> Path:
    return project / ".claude" / "memory"


def paths(root: Path, text: str, params: Params | None = None) -> list[str]:
    conn = index.open_reader(root)
    try:
        return [h.path for h in search(conn, text, params=params)]
    finally:
        conn.close()


def cli_run(monkeypatch, capsys, root: Path, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8"))
    capsys.readouterr()
    rc = cli.main(["--root", str(root), *argv])
    out, err = capsys.readouterr()
    return rc, out, err


# --- validation -----------------------------------------------------------------------


def test_save_keeps_cleaned_questions_in_the_file(root: Path) -> None:
    data = dict(RUNBOOK, questions=["  why are pushes\n dropped?  ", "why are pushes dropped?", "", "renew the APNs cert?"])
    result = save_memory(root, Config(), "runbook", data)
    saved = json.loads((root / "runbooks" / "apns-certificate-expiry.json").read_text())
    assert saved["questions"] == ["why are pushes dropped?", "renew the APNs cert?"]
    assert list(saved).index("questions") == list(saved).index("tags") + 1  # written beside the tags
    assert any("duplicate" in f for f in result["fixes"]) and any("empty" in f for f in result["fixes"])
    assert validate_memory(saved, "runbooks/apns-certificate-expiry.json") == []


def test_a_lone_string_is_wrapped(root: Path) -> None:
    result = save_memory(root, Config(), "runbook", dict(RUNBOOK, questions="why are pushes dropped?"))
    assert json.loads((root / "runbooks" / "apns-certificate-expiry.json").read_text())["questions"] == ["why are pushes dropped?"]
    assert "questions: wrapped a string in a list" in result["fixes"]


def test_questions_are_optional(root: Path) -> None:
    data = {k: v for k, v in RUNBOOK.items() if k != "questions"}
    save_memory(root, Config(), "runbook", data)
    assert "questions" not in json.loads((root / "runbooks" / "apns-certificate-expiry.json").read_text())


BAD = [
    ({"why": "dropped"}, "'questions' must be a list of strings, got dict"),
    (["fine", 3], "'questions[1]' must be a string, got int"),
    ([f"question {i}?" for i in range(9)], "'questions' has 9 items; the limit is 8"),
    (["x" * 201], "'questions[0]' is 201 characters; the limit is 200"),
]


@pytest.mark.parametrize("questions,message", BAD, ids=[m[:30] for _, m in BAD])
def test_bad_questions_are_refused_and_nothing_is_written(root: Path, questions: object, message: str) -> None:
    with pytest.raises(InvalidMemory) as info:
        save_memory(root, Config(), "runbook", dict(RUNBOOK, questions=questions))
    text = str(info.value)
    assert message in text and text.count("questions") == 1  # one problem, named once
    assert not (root / "runbooks" / "apns-certificate-expiry.json").exists()


def test_the_bounds_are_exactly_eight_of_two_hundred(root: Path) -> None:
    save_memory(root, Config(), "runbook", dict(RUNBOOK, questions=[f"{i} " + "y" * 197 for i in range(8)]))
    assert len(json.loads((root / "runbooks" / "apns-certificate-expiry.json").read_text())["questions"]) == 8


def test_the_schema_names_the_field() -> None:
    doc = {
        "schema_version": "1.0", "category": "preference", "id": "x", "title": "X", "tags": ["t"],
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z", "record_status": "active",
        "content": {"topic": "a", "value": "b"},
    }
    assert validate_memory({**doc, "questions": ["ok?"]}, "preferences/x.json") == []
    assert any("'questions'" in p for p in validate_memory({**doc, "questions": ["q"] * 9}, "preferences/x.json"))
    assert any("'questions.0'" in p for p in validate_memory({**doc, "questions": [1]}, "preferences/x.json"))


def test_a_hand_written_file_over_the_bounds_is_indexed_within_them() -> None:
    mem = to_memory("runbooks/x.json", {"category": "runbook", "title": "X", "questions": ["q" * 300] + [f"q{i}" for i in range(12)]})
    assert len(mem.questions) == 8 and len(mem.questions[0]) == 200
    assert any("questions" in p for p in mem.problems)


# --- update ---------------------------------------------------------------------------


def test_update_sets_replaces_and_removes_questions(root: Path) -> None:
    save_memory(root, Config(), "runbook", {k: v for k, v in RUNBOOK.items() if k != "questions"})
    rel = "runbooks/apns-certificate-expiry.json"
    assert update_memory(root, Config(), rel, {"questions": RUNBOOK["questions"]})["status"] == "updated"
    doc = json.loads((root / rel).read_text())
    assert doc["questions"] == RUNBOOK["questions"] and doc["times_updated"] == 1
    assert doc["changes"][-1]["summary"] == "Updated questions"
    assert paths(root, "silently dropped")[0] == rel
    assert update_memory(root, Config(), rel, {"questions": RUNBOOK["questions"]})["status"] == "unchanged"
    update_memory(root, Config(), rel, {"questions": None})
    assert "questions" not in json.loads((root / rel).read_text())
    assert rel not in paths(root, "silently dropped")


def test_a_bad_update_changes_nothing(root: Path) -> None:
    save_memory(root, Config(), "runbook", RUNBOOK)
    rel = "runbooks/apns-certificate-expiry.json"
    before = (root / rel).read_bytes()
    with pytest.raises(InvalidMemory, match=r"'questions\[0\]' must be a string"):
        update_memory(root, Config(), rel, {"questions": [None]})
    assert (root / rel).read_bytes() == before


def test_cli_save_and_update_take_questions(root: Path, monkeypatch, capsys) -> None:
    data = {k: v for k, v in RUNBOOK.items() if k != "questions"}
    rc, out, _ = cli_run(monkeypatch, capsys, root, "save", "--category", "runbook", "--data", json.dumps(data))
    assert rc == 0
    rc, out, _ = cli_run(monkeypatch, capsys, root, "search", "--json", "phone alerts stopped arriving")
    assert "apns-certificate-expiry" not in out
    rc, _, err = cli_run(monkeypatch, capsys, root, "update", "runbooks/apns-certificate-expiry.json",
                         "--data", json.dumps({"questions": RUNBOOK["questions"]}))
    assert rc == 0, err
    rc, out, _ = cli_run(monkeypatch, capsys, root, "search", "--json", "phone alerts stopped arriving")
    assert json.loads(out)[0]["path"].endswith("runbooks/apns-certificate-expiry.json")
    rc, _, err = cli_run(monkeypatch, capsys, root, "update", "runbooks/apns-certificate-expiry.json",
                         "--data", json.dumps({"questions": [f"q{i}" for i in range(9)]}))
    assert rc != 0 and "'questions' has 9 items" in err


# --- retrieval ------------------------------------------------------------------------


def test_a_prompt_sharing_words_only_with_the_questions_finds_the_memory(root: Path) -> None:
    save_memory(root, Config(), "runbook", RUNBOOK)
    assert paths(root, "push notifications silently dropped on the phone")[0] == "runbooks/apns-certificate-expiry.json"


def test_coverage_counts_matches_in_the_questions(root: Path) -> None:
    save_memory(root, Config(), "runbook", RUNBOOK)
    conn = index.open_reader(root)
    try:
        plan = plan_query(conn, "notifications silently dropped", Params())
        hits = search(conn, "notifications silently dropped", plan=plan)
        coverage(conn, plan, hits)
    finally:
        conn.close()
    assert hits[0].id == "apns-certificate-expiry" and hits[0].coverage == pytest.approx(1.0)


def test_the_questions_weight_is_configurable(root: Path) -> None:
    cfg = Config()
    save_memory(root, cfg, "runbook", {"title": "Renew certificates", "tags": ["tls"],
                                       "content": {"trigger": "expiry", "steps": ["renew"]},
                                       "questions": ["why does pgbouncer refuse clients?"]})
    both = [p for p in paths(root, "pgbouncer") if p.startswith(("runbooks/renew", "decisions/use-pgbouncer"))]
    assert len(both) == 2
    heavy = Params.from_config(parse_config({"retrieval": {"column_weights": {"questions": 50.0, "title": 1.0}}}))
    light = Params.from_config(parse_config({"retrieval": {"column_weights": {"questions": 0.0}}}))
    assert heavy.questions_weight == 50.0
    assert paths(root, "pgbouncer", heavy)[0] == "runbooks/renew-certificates.json"
    assert paths(root, "pgbouncer", light)[0] == "decisions/use-pgbouncer-transaction-pooling.json"
    assert parse_config({"retrieval": {"column_weights": {"questions": -1}}}).warnings


def test_cjk_questions_are_searchable(root: Path) -> None:
    save_memory(root, Config(), "runbook", dict(RUNBOOK, questions=["推送通知为什么丢失"]))
    assert paths(root, "推送通知丢失")[0] == "runbooks/apns-certificate-expiry.json"


def test_the_hook_injects_a_memory_found_by_its_questions(project: Path, root: Path) -> None:
    save_memory(root, Config(), "runbook", RUNBOOK)
    sync(root, Config())
    payload = json.dumps({"prompt": "push notifications are silently dropped on iPhones again",
                          "cwd": str(project), "session_id": "s1", "hook_event_name": "UserPromptSubmit"})
    out = subprocess.run([sys.executable, str(HOOK), "prompt"], input=payload.encode(), capture_output=True, timeout=30)
    assert out.returncode == 0
    assert "runbooks/apns-certificate-expiry.json" in out.stdout.decode()
    assert "silently" not in out.stdout.decode()  # titles and paths only, never the questions


def test_the_embedded_text_has_the_questions_before_the_body(root: Path) -> None:
    from memindex.semantic.vectors import embed_text

    text = embed_text("Title", '["a", "b"]', "body " * 1000, "why?\nhow?")
    assert text.startswith("Title\na, b\nwhy?\nhow?\nbody")
    assert embed_text("Title", '["a"]', "body") == "Title\na\nbody"


def test_changed_questions_are_re_embedded(root: Path) -> None:
    hashing = parse_config({"semantic": {"enabled": True, "model": "builtin:hashing"}})
    save_memory(root, Config(), "runbook", RUNBOOK)
    sync(root, hashing)
    conn = index.open_reader(root)
    rowid, before = conn.execute("SELECT v.doc, v.vec FROM vectors v JOIN documents d ON d.rowid = v.doc"
                                 " WHERE d.id = 'apns-certificate-expiry'").fetchone()
    conn.close()
    update_memory(root, Config(), "runbooks/apns-certificate-expiry.json", {"questions": ["a different question?"]})
    report = sync(root, hashing)
    assert "embedded 1" in str(report.semantic)
    conn = index.open_reader(root)
    after = conn.execute("SELECT vec FROM vectors WHERE doc = ?", (rowid,)).fetchone()[0]
    conn.close()
    assert after != before


# --- the evaluation -------------------------------------------------------------------


def test_the_evaluation_adds_the_blind_questions_to_its_copy(tmp_path: Path) -> None:
    from memindex_dev.evaluation.memory import RULES_NAME, evaluate_set
    from memindex_dev.evaluation.sets import add_questions, copy_store

    folder = tmp_path / "set"
    root = folder / ".claude" / "memory"
    cfg = Config()
    root.mkdir(parents=True)
    save_memory(root, cfg, "runbook", {k: v for k, v in RUNBOOK.items() if k != "questions"})
    for category, title, tags, content in FILLER:
        save_memory(root, cfg, category, {"title": title, "tags": tags, "content": content})
    for p in root.glob(".index*"):
        p.unlink()
    rel = "runbooks/apns-certificate-expiry.json"
    (folder / "questions.json").write_text(json.dumps({".claude/memory/" + rel: RUNBOOK["questions"]}))
    (folder / "queries.json").write_text(json.dumps([
        {"id": "p1", "kind": "paraphrase", "query": "mobile alerts silently dropped overnight", "transcript": [],
         "judgments": {rel: 2}},
    ]))
    copy = copy_store(folder, tmp_path / "copy")
    assert not (copy / "questions.json").exists()
    assert add_questions(folder, copy) == 1
    assert json.loads((copy / rel).read_text())["questions"] == RUNBOOK["questions"]
    assert "questions" not in json.loads((root / rel).read_text())  # the set itself is untouched
    without = evaluate_set(folder, out=lambda _: None)[RULES_NAME]
    with_questions = evaluate_set(folder, out=lambda _: None, questions=True)[RULES_NAME]
    assert without["R@10"] == 0.0 and with_questions["R@10"] == 1.0


def test_every_judged_set_has_questions_for_each_memory() -> None:
    from memindex_dev.evaluation.questions import LOCAL_SETS

    for name in LOCAL_SETS:
        folder = REPO / "evalsets" / name
        mem = folder / ".claude" / "memory" if (folder / ".claude" / "memory").is_dir() else folder
        given = json.loads((folder / "questions.json").read_text())
        files = {str(p.relative_to(mem)) for p in mem.glob("*/*.json")}
        assert set(given) == files, name
        assert all(1 <= len(q) <= 8 and all(0 < len(x) <= 200 for x in q) for q in given.values()), name


def test_pooled_paraphrase_recall_weighs_each_set_by_its_prompts() -> None:
    from memindex_dev.evaluation.questions import pooled

    summary = {
        ("a", "dev paraphrase", "v"): {"R@10": 1.0, "positives": 3},
        ("b", "dev paraphrase", "v"): {"R@10": 0.0, "positives": 1},
        ("a", "dev", "v"): {"R@10": 0.5, "positives": 10},
    }
    assert pooled(summary) == {("dev", "v"): 0.75}


def test_a_secret_in_a_question_is_refused(root: Path) -> None:
    """The write path's secret refusal covers the questions as every other field."""
    from memindex.errors import SecretFound

    key = "AKIA" + "Z7QW3RT5YU2IO4PL"  # an AWS access key id shape
    with pytest.raises(SecretFound, match="questions"):
        save_memory(root, Config(), "runbook", dict(RUNBOOK, questions=[f"why is {key} rejected?"]))
    assert not (root / "runbooks" / "apns-certificate-expiry.json").exists()
