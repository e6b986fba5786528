"""Issue 24, finding 5: secrets stay out. The write path's save and update refuse
token-shaped strings (memindex/store/secrets.py) naming the field and the kind, or redact
them with --redact; `<private>` spans are never stored; a hand-written secret is flagged
by sync and never reaches the index, index.md or the hook's line; derived files are no
more readable than the memory files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import write_mem
from memindex.config import Config
from memindex.errors import SecretFound
from memindex.index.sync import sync
from memindex.write import save_memory, update_memory
from memindex.store.secrets import find, redact_text, scrub
from stresskit.hostile_trust import SECRETS as SAMPLES, secret
from hookkit import prompt_json, run_hook
from writekit import memory, run

REPO = Path(__file__).resolve().parent.parent
NOBODY = 65534

@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "proj" / ".claude" / "memory"
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_save_refuses_each_kind_naming_field_and_kind(root: Path, monkeypatch, capsys, kind: str) -> None:
    data = memory("runbook", "Rotate the billing credentials")
    data["content"]["steps"] = ["open the dashboard", f"use {SAMPLES[kind]} for the call"]
    rc, out, err = run(monkeypatch, capsys, root, "save", "--category", "runbook", "--json", "--data", json.dumps(data))
    assert rc == 1
    assert "content.steps[1]" in err and f"({kind})" in err and "--redact" in err
    assert secret(kind) not in err + out  # the error never repeats the secret
    assert json.loads(out)["secrets"] == [{"field": "content.steps[1]", "kind": kind}]
    assert not list(root.glob("*/*.json"))  # nothing written


def test_redact_replaces_with_a_marker_and_says_so(root: Path, monkeypatch, capsys) -> None:
    data = memory("decision", "Billing keys", tags=["billing"])
    data["content"]["decision"] = f"call the API with {SAMPLES['stripe-key']}; the token {SAMPLES['github-token']} deploys"
    rc, out, err = run(monkeypatch, capsys, root, "save", "--category", "decision", "--redact", "--data", json.dumps(data))
    assert rc == 0, err
    answer = json.loads(out)
    assert answer["redacted"] == [{"field": "content.decision", "kind": "stripe-key"}, {"field": "content.decision", "kind": "github-token"}]
    text = (root / "decisions" / "billing-keys.json").read_text()
    assert "[REDACTED:stripe-key]" in text and "[REDACTED:github-token]" in text
    assert SAMPLES["stripe-key"] not in text and SAMPLES["github-token"] not in text
    assert "redacted stripe-key in content.decision" in err


def test_update_refuses_or_redacts_through_the_library(root: Path) -> None:
    """Every writer (capture, importers) goes through save_memory/update_memory."""
    cfg = Config()
    with pytest.raises(SecretFound) as caught:
        save_memory(root, cfg, "decision", memory("decision", "Key in the title " + SAMPLES["aws-access-key"]))
    assert caught.value.secrets == [{"field": "title", "kind": "aws-access-key"}]
    made = save_memory(root, cfg, "decision", memory("decision", "Use JWT access tokens"))
    with pytest.raises(SecretFound, match="tags\\[1\\]"):
        update_memory(root, cfg, made["path"], {"tags": ["auth", SAMPLES["slack-token"]]})
    done = update_memory(root, cfg, made["path"], {"content": {"rationale": [f"signed with {SAMPLES['jwt']}"]}}, redact=True)
    assert done["redacted"] == [{"field": "content.rationale[0]", "kind": "jwt"}]
    assert "[REDACTED:jwt]" in (root / "decisions" / "use-jwt-access-tokens.json").read_text()


def test_a_lifecycle_reason_never_stores_a_secret(root: Path) -> None:
    from memindex.write import set_status

    cfg = Config()
    made = save_memory(root, cfg, "decision", memory("decision", "Use JWT access tokens"))
    set_status(root, cfg, made["path"], "retire", reason=f"the key {SAMPLES['stripe-key']} leaked <private>by bob</private>")
    text = (root / "decisions" / "use-jwt-access-tokens.json").read_text()
    assert SAMPLES["stripe-key"] not in text and "[REDACTED:stripe-key]" in text and "bob" not in text


def test_private_spans_are_never_stored(root: Path) -> None:
    cfg = Config()
    data = memory("runbook", "Restart the <private>10.0.0.7 bastion</private>worker")
    data["content"]["steps"] = ["ssh in <PRIVATE>as alice with key ~/.ssh/alice</PRIVATE>", "restart <private>unclosed to the end"]
    made = save_memory(root, cfg, "runbook", data)
    text = (root / made["path"].split(".claude/memory/")[1]).read_text()
    assert "10.0.0.7" not in text and "alice" not in text and "unclosed" not in text and "private>" not in text.lower()
    assert made["id"] == "restart-the-worker"  # the id is derived after the span is gone
    update_memory(root, cfg, made["path"], {"content": {"verification": "ping <private>the secret host</private>ok"}})
    assert "secret host" not in (root / "runbooks" / "restart-the-worker.json").read_text()


def test_ordinary_memories_are_not_flagged() -> None:
    """No false alarm on the judged sets' memories (hundreds, written without secrets)."""
    flagged = []
    for path in sorted((REPO / "evalsets").glob("*/*/*.json")):
        _, found = scrub(json.loads(path.read_text()), redact=True)
        if found:
            flagged.append((path.name, found))
    assert flagged == []
    for text in ("password: required", "api_key: ${API_KEY}", "token=abc", "STRIPE_WEBHOOK_SECRET differs between staging and prod",
                 "postgres://user:password@localhost/db", "the secret: keep-it-simple-stupid",
                 "a fare token: version(1) | account_id(8) | nonce(4)", "token=items[0]", "secret: get(key)"):
        assert find(text) == [], text
    for text in ("password: Summer(2024)", "api_key=pass(Xy9kL2q)"):  # a password with brackets is no notation
        assert find(text), text
    assert redact_text("a <private>b</private>c")[0] == "a c"


def test_a_hand_written_secret_is_flagged_and_never_shown(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    root = project / ".claude" / "memory"
    key = SAMPLES["stripe-key"]
    write_mem(root, "runbook", "stripe-rotate", f"Stripe webhook signature rotate {key}", ["stripe", "webhooks"],
              {"trigger": f"webhook 400 after rotating {key}", "steps": ["rotate the stripe webhook secret"]})
    report = sync(root, Config())
    assert any("stripe-key" in p for p in json.loads(sqlite_problems(root))), report
    out = run_hook(prompt_json(project, "stripe webhook signature rotate fails with 400")).stdout.decode()
    assert "stripe-rotate.json" in out and "[REDACTED:stripe-key]" in out
    assert key not in out
    assert key not in (root / "index.md").read_text()
    assert key not in (root / ".index.db").read_bytes().decode("latin-1")


def sqlite_problems(root: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(root / ".index.db")
    try:
        return conn.execute("SELECT problems FROM documents").fetchone()[0] or "[]"
    finally:
        conn.close()


# --- derived files are no more readable than the memory files ---------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def derived(root: Path) -> list[Path]:
    return [p for p in (root / ".index.db", root / ".index.db-wal", root / ".index.db-shm", root / "index.md", root / ".memindex.log") if p.exists()]


def test_derived_files_follow_the_most_private_memory_file(root: Path) -> None:
    os.chmod(root, 0o755)
    write_mem(root, "decision", "open", "Open decision", ["a"], {"decision": "x"})
    secret_file = write_mem(root, "decision", "closed", "Closed decision", ["a"], {"decision": "y"})
    for p in root.glob("*/*.json"):
        os.chmod(p, 0o644)
    (root / ".memindex.log").write_text("log\n")
    sync(root, Config())
    assert {p.name: _mode(p) for p in derived(root)} == {p.name: 0o644 for p in derived(root)}
    os.chmod(secret_file, 0o600)
    sync(root, Config())
    modes = {p.name: _mode(p) for p in derived(root)}
    assert modes and set(modes.values()) == {0o600}, modes
    assert {".index.db", "index.md", ".memindex.log"} <= set(modes)
    os.chmod(secret_file, 0o644)  # loosened again by the user: the derived files follow
    sync(root, Config())
    assert set(_mode(p) for p in derived(root)) == {0o644}


def test_a_private_category_folder_makes_the_derived_files_private(root: Path) -> None:
    os.chmod(root, 0o755)
    write_mem(root, "decision", "open", "Open decision", ["a"], {"decision": "x"})
    write_mem(root, "runbook", "closed", "Closed runbook", ["a"], {"steps": ["y"]})
    for p in root.glob("*/*.json"):
        os.chmod(p, 0o644)
    os.chmod(root / "runbooks", 0o700)
    sync(root, Config())
    assert set(_mode(p) for p in derived(root)) == {0o600}


def test_a_new_index_is_created_private_when_the_files_are(root: Path) -> None:
    os.chmod(root, 0o700)
    write_mem(root, "decision", "d", "A decision", ["a"], {"decision": "x"})
    sync(root, Config())
    assert {p.name: _mode(p) for p in derived(root)} == {p.name: 0o600 for p in derived(root)}


@pytest.mark.skipif(os.geteuid() != 0, reason="reading as another user (uid 65534) needs root")
def test_another_user_cannot_read_the_index_of_a_private_memory() -> None:
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="mi-modes-", dir="/tmp"))
    try:
        root = base / "proj" / ".claude" / "memory"
        root.mkdir(parents=True)
        for p in (base, base / "proj", base / "proj" / ".claude", root):
            os.chmod(p, 0o755)
        path = write_mem(root, "decision", "d", "A secret decision", ["a"], {"decision": "x"})
        os.chmod(path.parent, 0o755)
        os.chmod(path, 0o644)
        sync(root, Config())
        control = subprocess.run(["cat", str(root / "index.md")], user=NOBODY, capture_output=True)
        assert control.returncode == 0 and b"A secret decision" in control.stdout  # the test can see a read
        os.chmod(path, 0o600)
        sync(root, Config())
        for target in (root / ".index.db", root / "index.md"):
            proc = subprocess.run(["cat", str(target)], user=NOBODY, capture_output=True)
            assert proc.returncode != 0 and b"Permission denied" in proc.stderr, target
    finally:
        shutil.rmtree(base, ignore_errors=True)
