"""The use log (memindex/usage.py): what the hook injected and dropped per prompt, what
search and MCP listed, what the model opened (from the transcript, once per tool call),
kept per user outside the repository, bounded; `status` and `explain` show it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import REPO, cli_env, run_cli
from memindex import usage
from memindex.capture.job import capture_transcript
from memindex.config import Config, parse_config
from memindex_dev.evaluation.transcripts import TranscriptWriter
from memindex.index.sync import sync

HOOK = REPO / "hooks" / "memindex_hook.py"
DEMO = REPO / "examples" / "demo-project"
SID = "5d1c7a52-2222-4bbb-8ccc-0123456789ab"
RUNBOOK = "runbooks/flaky-ci-integration-tests-postgres.json"
PROMPT = "Our CI is flaky: integration tests fail before Postgres is ready. What did we do last time?"


@pytest.fixture()
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the demo project, indexed; no assistant session in the environment."""
    monkeypatch.delenv(usage.SESSION_ENV, raising=False)
    proj = tmp_path / "demo"
    shutil.copytree(DEMO, proj, ignore=shutil.ignore_patterns(".index.db*", "index.md"))
    sync(proj / ".claude" / "memory", Config())
    return proj


def hook(event: str, payload: dict, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-S", str(HOOK), event], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=30, env=env)


def test_the_hook_logs_what_it_injected_and_dropped_with_reasons(demo: Path) -> None:
    root = demo / ".claude" / "memory"
    out = hook("prompt", {"prompt": PROMPT, "cwd": str(demo), "session_id": SID})
    assert RUNBOOK in out.stdout.decode(), out.stderr
    [log] = usage.sessions(root)
    [event] = [e for e in log.events if e["e"] == "prompt"]
    assert [p for p, _ in event["k"]] == [RUNBOOK]
    assert event["k"][0][1].startswith("P(relevant) ")  # the relevance model's decision, not worded
    assert event["d"], "the candidates it dropped are logged too"
    assert all(why for _, why in event["d"]) and RUNBOOK not in [p for p, _ in event["d"]]
    assert PROMPT not in json.dumps(log.events) and event["h"] == usage.name_hash(PROMPT.encode())  # never the prompt
    assert log.name == "s-" + usage.name_hash(SID.encode())
    # outside the repository, in a folder only this user may enter
    where = Path(usage.folder(root))
    assert not str(where).startswith(str(demo)) and stat.S_IMODE(where.stat().st_mode) == 0o700
    assert usage.counts(root)[RUNBOOK].shown == 1 and usage.counts(root)[RUNBOOK].shown_by == {"hook": 1}


def test_the_hook_logs_nothing_when_review_usage_is_off(demo: Path) -> None:
    root = demo / ".claude" / "memory"
    (root / "memory-config.json").write_text(json.dumps({"review": {"usage": False}}))
    out = hook("prompt", {"prompt": PROMPT, "cwd": str(demo), "session_id": SID})
    assert RUNBOOK in out.stdout.decode()
    assert usage.sessions(root) == []


def transcript(tmp_path: Path, proj: Path) -> Path:
    w = TranscriptWriter(SID, str(proj), datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc))
    w.prompt(PROMPT)
    w.read(str(proj / ".claude" / "memory" / RUNBOOK), "{...}")  # a Read of the memory's file
    w.read(str(proj / "README.md"), "# not a memory")
    w.bash("memindex get .claude/memory/decisions/monthly-partitions-for-tracking-events.json", "{}")
    w.bash("cat .claude/memory/constraints/no-new-redis-clusters.json | jq .content", "{}")
    w.bash("grep -rn postgres src/", "nothing")
    w.tool("mcp__plugin_memindex_memindex__get", {"path": ".claude/memory/preferences/ruff-format.json"}, "{}")
    w.tool("mcp__other__get", {"path": ".claude/memory/preferences/ruff-format.json"}, "{}")  # another server
    w.text("The runbook says to wait for pg_isready.")
    return w.write(tmp_path / f"{SID}.jsonl")


def test_opens_come_from_the_transcript_once_per_tool_call(demo: Path, tmp_path: Path) -> None:
    root = demo / ".claude" / "memory"
    path = transcript(tmp_path, demo)
    cfg = parse_config({})
    capture_transcript(str(root), cfg, str(path))
    capture_transcript(str(root), cfg, str(path))  # every Stop re-reads the transcript: counted once
    uses = usage.counts(root)
    assert uses[RUNBOOK].opened == 1 and uses[RUNBOOK].opened_by == {"read": 1}
    assert uses["decisions/monthly-partitions-for-tracking-events.json"].opened_by == {"get": 1}
    assert uses["constraints/no-new-redis-clusters.json"].opened_by == {"bash": 1}
    assert uses["preferences/ruff-format.json"].opened_by == {"mcp-get": 1}
    assert uses["@README.md"].opened_by == {"read": 1}  # a document's file: counts for its sections, if indexed
    assert sum(u.opened for u in uses.values()) == 5  # not the grep, not another server's get


def test_opens_are_counted_with_capture_turned_off(demo: Path, tmp_path: Path) -> None:
    root = demo / ".claude" / "memory"
    path = transcript(tmp_path, demo)
    result = capture_transcript(str(root), parse_config({"capture": {"enabled": False}}), str(path))
    assert result["status"] == "skipped" and not (root / "sessions-local").exists()
    assert usage.counts(root)[RUNBOOK].opened == 1


def test_search_counts_as_shown_only_inside_an_assistant_session(demo: Path) -> None:
    root = demo / ".claude" / "memory"
    assert run_cli("--root", str(demo), "search", "flaky CI postgres").returncode == 0
    assert usage.counts(root) == {}  # a person at a terminal: the model saw nothing
    env = {**cli_env(), usage.SESSION_ENV: SID}
    out = subprocess.run([sys.executable, "-m", "memindex", "--root", str(demo), "search", "flaky CI postgres"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert RUNBOOK in out.stdout
    use = usage.counts(root)[RUNBOOK]
    assert use.shown_by == {"search": 1}
    [log] = usage.sessions(root)
    assert log.name == "s-" + usage.name_hash(SID.encode())  # the session Claude Code named


def test_status_and_explain_show_the_use(demo: Path, tmp_path: Path) -> None:
    root = demo / ".claude" / "memory"
    hook("prompt", {"prompt": PROMPT, "cwd": str(demo), "session_id": SID})
    capture_transcript(str(root), parse_config({}), str(transcript(tmp_path, demo)))
    status = json.loads(run_cli("--root", str(demo), "status", "--json").stdout)
    assert status["use"]["memories_shown"] == 1 and status["use"]["memories_opened"] == 5
    assert status["use"]["shown_never_opened"] == 0
    text = run_cli("--root", str(demo), "status").stdout
    assert "use:      1 memories shown to the model, 5 opened, 0 shown and never opened" in text
    answer = json.loads(run_cli("--root", str(demo), "explain", "--json", PROMPT).stdout)
    [runbook] = [d for d in answer["considered"] if d["path"].endswith(RUNBOOK)]
    assert runbook["use"] == {"shown": 1, "opened": 1}
    assert "use: shown 1, opened 1 (your sessions)" in run_cli("--root", str(demo), "explain", PROMPT).stdout


def test_a_session_log_is_bounded_and_old_ones_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "p" / ".claude" / "memory"
    root.mkdir(parents=True)
    monkeypatch.setattr(usage, "USAGE_SESSION_MAX_BYTES", 600)
    for i in range(50):
        usage.record_shown(root, "one", "mcp", [f"decisions/d{i}.json"])
    size = os.path.getsize(usage.session_file(root, "one"))
    assert 400 < size <= 600  # it stopped growing
    assert usage.counts(root)["decisions/d0.json"].shown == 1
    monkeypatch.setattr(usage, "USAGE_MAX_SESSIONS", 3)
    for i in range(5):
        usage.record_shown(root, f"s{i}", "mcp", ["decisions/x.json"])
        os.utime(usage.session_file(root, f"s{i}"), (1_000_000 + i, 1_000_000 + i) if i < 2 else None)
    usage.record_shown(root, "newest", "mcp", ["decisions/x.json"])  # a new session file prunes
    names = sorted(os.listdir(usage.folder(root)))
    assert len(names) == 3  # the two long untouched went by age, the oldest of the rest by count
    assert usage.session_file(root, "newest").rsplit("/", 1)[1] in names


def test_a_garbled_log_line_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "p" / ".claude" / "memory"
    root.mkdir(parents=True)
    usage.record_shown(root, "one", "mcp", ["decisions/a.json"])
    with open(usage.session_file(root, "one"), "ab") as fh:
        fh.write(b'{"t": 1, "e": "shown", "k": ["decisions/b.js\nnot json\n')
    usage.record_shown(root, "one", "mcp", ["decisions/c.json"])
    assert sorted(usage.counts(root)) == ["decisions/a.json", "decisions/c.json"]


def test_a_repository_may_turn_the_use_log_off_but_not_on(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memindex.config import load_config

    root = demo / ".claude" / "memory"
    (root / "memory-config.json").write_text(json.dumps({"review": {"usage": True, "code": True}}))
    from memindex.config import user_config_path

    user = Path(user_config_path())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"review": {"usage": False, "code": False}}))
    cfg = load_config(root)
    assert cfg["review.usage"] is False and cfg["review.code"] is False  # the user said no: the repository cannot say yes
    assert cfg.ignored == []  # both equal the defaults: no request for more, left out without a warning (config.py)
    user.unlink()
    (root / "memory-config.json").write_text(json.dumps({"review": {"usage": False, "background": False}}))
    cfg = load_config(root)
    assert cfg["review.usage"] is False and cfg["review.background"] is False  # less is always allowed
