"""Session capture (memindex.capture): transcript -> one bounded session_summary per
session, written through the write path, from the Stop hook in the background, and by
`memindex import transcripts`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import REPO, cli_env, run_cli, search_paths
from memindex.capture.importer import default_folder
from memindex.importers.claude_memory import project_key
from memindex.capture.job import capture_transcript
from memindex.capture.parse import read_transcript
from memindex.capture.summary import memory_id, summarise
from memindex.config import parse_config
from memindex.defaults import CAPTURE_FOLDER, SUMMARY_MAX_BYTES
from memindex_dev.evaluation.transcripts import TranscriptWriter, write_sessions
from memindex.store.schema import validate_memory

SID = "0b7c2d1e-1111-4aaa-8bbb-123456789abc"
CWD = "/home/dev/shop"
START = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)


def session(sid: str = SID) -> TranscriptWriter:
    """A session with every kind of noise beside the work the summary should keep."""
    w = TranscriptWriter(sid, CWD, START)
    w.attachment("skill_listing", "- SKILLLISTINGNOISE: a skill")
    w.meta("<local-command-caveat>METANOISE caveat</local-command-caveat>")
    w.command("model", "COMMANDWRAPPERNOISE")
    w.prompt("Make the invoice export skip cancelled orders; customers see them twice")
    w.attachment("hook_success", "<memory-context>HOOKNOISE</memory-context>")
    w.thinking("THINKINGNOISE the user wants the export fixed")
    w.todos([("Find the export query", "completed"), ("Filter cancelled orders", "in_progress"), ("Add a regression test", "pending")])
    w.read(f"{CWD}/billing/export.py", "def export():\n    FILEDUMPNOISE = query_orders()\n")
    w.bash("grep -rn cancelled billing/", "billing/export.py:3: GREPOUTPUTNOISE")
    w.text("The export query does not filter on status; I'll add the filter.")
    w.edit(f"{CWD}/billing/export.py", "query_orders()", "query_orders(exclude_status='cancelled')")
    w.tool("Edit", {"file_path": f"{CWD}/billing/broken.py", "old_string": "x", "new_string": "y"}, "String not found", is_error=True)
    w.sidechain("SIDECHAINNOISE subagent text")
    w.bash("python -m pytest -q tests/billing", "F.\nFAILED tests/billing/test_export.py::test_skip\n1 failed, 7 passed in 0.5s", 1)
    w.edit(f"{CWD}/tests/billing/test_export.py", "assert a", "assert b")
    w.bash("python -m pytest -q tests/billing", "........\n8 passed in 0.4s")
    w.bash('git commit -am "Skip cancelled orders in the invoice export"', "[main 4f2a9c1] Skip cancelled orders in the invoice export\n 2 files changed")
    w.prompt("Thanks. Does the PDF export need the same fix?")
    w.text("Yes, the PDF export reads the same query, so it is fixed too.\n\nNext steps:\n- backfill last month's invoices\n- tell support")
    return w


def summary_of(w: TranscriptWriter, tmp_path: Path, budget: int = SUMMARY_MAX_BYTES) -> dict:
    path = w.write(tmp_path / f"{w.session_id}.jsonl")
    return summarise(read_transcript(str(path)), str(path), budget)


def test_summary_keeps_the_work_and_leaves_the_noise_out(tmp_path: Path) -> None:
    mem = summary_of(session(), tmp_path)
    text = json.dumps(mem)
    for noise in ("SKILLLISTINGNOISE", "METANOISE", "COMMANDWRAPPERNOISE", "HOOKNOISE", "THINKINGNOISE",
                  "FILEDUMPNOISE", "GREPOUTPUTNOISE", "SIDECHAINNOISE", "grep -rn"):
        assert noise not in text
    c = mem["content"]
    assert c["goal"] == "Make the invoice export skip cancelled orders; customers see them twice"
    assert mem["title"] == "Session: " + c["goal"]
    assert c["requests"] == ["Thanks. Does the PDF export need the same fix?"]
    assert c["key_changes"] == ["billing/export.py", "tests/billing/test_export.py"]  # the failed edit is not a change
    assert "Ran `python -m pytest -q tests/billing`: 8 passed" in c["completed"]
    assert "Committed 4f2a9c1 Skip cancelled orders in the invoice export" in c["completed"]
    assert "Find the export query" in c["completed"]
    assert c["in_progress"] == ["Filter cancelled orders"]
    assert c["next_actions"] == ["Add a regression test", "backfill last month's invoices", "tell support"]
    assert c["outcome"] == "partial"
    assert c["closing_summary"].startswith("Yes, the PDF export reads the same query")
    assert c["assistant_notes"] == ["The export query does not filter on status; I'll add the filter."]
    assert mem["source"] == {"kind": "transcript", "path": str(tmp_path / f"{SID}.jsonl"), "session_id": SID}
    assert mem["id"] == f"session-{SID}" and mem["created_at"] == "2026-03-02T10:00:03Z"
    assert summary_of(session(), tmp_path) == mem  # deterministic


def test_a_failing_last_test_run_is_work_in_progress(tmp_path: Path) -> None:
    w = TranscriptWriter(SID, CWD, START)
    w.prompt("fix the flaky login test")
    w.bash("npm test", "Tests: 1 failed, 20 passed", 1)
    w.text("The test still fails on CI timing.")
    c = summary_of(w, tmp_path)["content"]
    assert c["outcome"] == "partial"
    assert c["in_progress"] == ["Tests failing: Ran `npm test`: 20 passed, 1 failed"]


def test_a_session_without_a_prompt_has_no_summary(tmp_path: Path) -> None:
    w = TranscriptWriter(SID, CWD, START)
    w.meta("only meta")
    w.command("clear")
    assert summary_of(w, tmp_path) is None


def test_summary_stays_within_its_budget_and_cuts_notes_first(tmp_path: Path) -> None:
    w = session()
    for i in range(300):
        w.prompt(f"request number {i} " + "please look at this too " * 20)
        w.text(f"note number {i} " + "I looked at it carefully " * 30)
        w.bash(f"make build-{i}", "ok")
    w.text("CLOSING all done")
    mem = summary_of(w, tmp_path)
    size = len(json.dumps(mem, ensure_ascii=False, indent=2).encode())
    assert size <= SUMMARY_MAX_BYTES
    c = mem["content"]
    assert "assistant_notes" not in c  # cut first
    assert c["requests"][-1].startswith("request number 299")  # the latest requests are kept longest
    assert c["goal"].startswith("Make the invoice export")
    assert "Committed 4f2a9c1 Skip cancelled orders in the invoice export" in c["completed"]
    assert c["closing_summary"] == "CLOSING all done"
    small = summary_of(w, tmp_path, budget=2048)
    assert len(json.dumps(small, ensure_ascii=False, indent=2).encode()) <= 2048
    assert small["content"]["goal"].startswith("Make the invoice export")


def test_a_bad_line_or_a_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    path = session().write(tmp_path / "t.jsonl")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type": "user", "message": {"role": "user", "content": "half a li')
    lines = path.read_text().splitlines()
    lines.insert(3, "not json at all")
    path.write_text("\n".join(lines))
    mem = summarise(read_transcript(str(path)), str(path))
    assert mem["content"]["goal"].startswith("Make the invoice export")
    with pytest.raises(OSError):
        read_transcript(str(tmp_path))  # a folder is not a transcript


def test_captured_summary_is_written_indexed_git_ignored_and_updated_in_place(memory_root: Path, tmp_path: Path) -> None:
    cfg = parse_config({})
    w = session()
    path = w.write(tmp_path / f"{SID}.jsonl")
    first = capture_transcript(str(memory_root), cfg, str(path))
    assert first["status"] == "created" and first["indexed"]
    rel = f"{CAPTURE_FOLDER}/session-{SID}.json"
    assert first["path"].endswith(rel)
    assert (memory_root / CAPTURE_FOLDER / ".gitignore").read_text().splitlines()[-1] == "*"
    data = json.loads((memory_root / rel).read_text())
    assert validate_memory(data, rel) == []
    assert data["source"]["session_id"] == SID
    assert search_paths(memory_root, "cancelled orders invoice export")[0].endswith(rel)
    assert capture_transcript(str(memory_root), cfg, str(path))["status"] == "unchanged"
    w.prompt("one more thing: rename the CSV column to amount_due")
    w.write(path)
    again = capture_transcript(str(memory_root), cfg, str(path))
    assert again["status"] == "updated"
    data = json.loads((memory_root / rel).read_text())
    assert data["content"]["requests"][-1] == "one more thing: rename the CSV column to amount_due"
    assert data["times_updated"] == 1
    assert sorted(p.name for p in (memory_root / CAPTURE_FOLDER).iterdir()) == [".gitignore", f"session-{SID}.json"]


def test_one_unreadable_summary_fails_alone(memory_root: Path, tmp_path: Path) -> None:
    """A summary file broken by hand is reported and left as it is; the other sessions of
    the same batch are written."""
    from memindex.capture.store import write_summaries

    cfg = parse_config({})
    memories = [summary_of(session(sid), tmp_path) for sid in ("aaaa-1111", "bbbb-2222")]
    folder = memory_root / CAPTURE_FOLDER
    folder.mkdir(exist_ok=True)
    (folder / f"{memories[1]['id']}.json").write_text("{ not json")
    answers = write_summaries(str(memory_root), cfg, memories)
    assert [a["status"] for a in answers] == ["created", "failed"]
    assert "not a readable memory" in answers[1]["error"]
    assert (folder / f"{memories[1]['id']}.json").read_text() == "{ not json"
    assert json.loads((folder / f"{memories[0]['id']}.json").read_text())["source"]["session_id"] == "aaaa-1111"


def test_git_does_not_see_the_local_folder(memory_root: Path, tmp_path: Path) -> None:
    project = memory_root.parent.parent
    if subprocess.run(["git", "init", "-q", str(project)], capture_output=True).returncode != 0:
        pytest.skip("no git")
    capture_transcript(str(memory_root), parse_config({}), str(session().write(tmp_path / f"{SID}.jsonl")))
    status = subprocess.run(["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True).stdout
    assert "sessions-local" not in status


def test_shared_location_writes_to_sessions_and_a_retired_summary_stays_retired(memory_root: Path, tmp_path: Path) -> None:
    cfg = parse_config({"capture": {"location": "shared"}})
    path = session().write(tmp_path / f"{SID}.jsonl")
    first = capture_transcript(str(memory_root), cfg, str(path))
    assert first["path"].endswith(f"sessions/session-{SID}.json")
    assert run_cli("--root", str(memory_root), "retire", f"sessions/session-{SID}.json", "--reason", "noise").returncode == 0
    w = session()
    w.prompt("and another request")
    w.write(path)
    assert capture_transcript(str(memory_root), cfg, str(path))["status"] == "skipped"
    assert json.loads((memory_root / f"sessions/session-{SID}.json").read_text())["record_status"] == "retired"


def test_bad_config_values_fall_back_with_a_warning() -> None:
    cfg = parse_config({"capture": {"location": "cloud", "enabled": "yes"}})
    assert cfg["capture.location"] == "local" and cfg["capture.enabled"] is True
    assert len(cfg.warnings) == 2


def test_claude_code_project_folder_names() -> None:
    # Expected values computed by Claude Code 2.1.197's own function (node); the e2e folder below is the real CLI's.
    assert project_key("/tmp/capture-e2e/test_post_tool_use_reindexes_m0/demo-project") == \
        "-tmp-capture-e2e-test-post-tool-use-reindexes-m0-demo-project"
    assert project_key("/tmp/\u00e9\U0001F600") == "-tmp----"
    assert project_key("/home/\u00fc/" + "ab\U0001F600" * 80)[-12:] == "-ab---t8qyac"


def test_default_folder_is_claude_codes_folder_of_the_project(memory_root: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    project = memory_root.parent.parent
    expected = tmp_path / "cc" / "projects" / project_key(str(project.resolve()))
    expected.mkdir(parents=True)
    assert default_folder(memory_root) == expected


def test_import_transcripts_is_idempotent_with_dry_run_and_json(memory_root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    paths = write_sessions(folder, 4, CWD, seed=3)
    empty = TranscriptWriter("ffffffff-0000-4000-8000-000000000000", CWD, START)
    empty.meta("nothing")
    empty.write(folder / "ffffffff-0000-4000-8000-000000000000.jsonl")
    root = str(memory_root)
    dry = run_cli("--root", root, "import", "transcripts", "--from", str(folder), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["counts"] == {"created": 4, "updated": 0, "unchanged": 0, "skipped": 1, "failed": 0}
    assert not list((memory_root / CAPTURE_FOLDER).iterdir())
    first = json.loads(run_cli("--root", root, "import", "transcripts", "--from", str(folder), "--json").stdout)
    assert first["counts"]["created"] == 4
    files = sorted((memory_root / CAPTURE_FOLDER).glob("*.json"))
    assert len(files) == 4
    for f in files:
        data = json.loads(f.read_text())
        assert data["source"]["kind"] == "transcript" and f"{data['source']['session_id']}.jsonl" in data["source"]["path"]
    second = json.loads(run_cli("--root", root, "import", "transcripts", "--from", str(folder), "--json").stdout)
    assert second["counts"] == {"created": 0, "updated": 0, "unchanged": 4, "skipped": 1, "failed": 0}
    with open(paths[0], "a", encoding="utf-8") as fh:  # a session that went on since
        w = TranscriptWriter(paths[0].stem, CWD, START)
        w.prompt("later: also rotate the API key")
        fh.write("\n".join(w.lines()) + "\n")
    third = run_cli("--root", root, "import", "transcripts", "--from", str(folder))
    assert third.returncode == 0 and "1 updated" in third.stdout and "3 unchanged" in third.stdout
    missing = run_cli("--root", root, "import", "transcripts", "--from", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no transcript folder" in missing.stderr


# --- the Stop hook and its background job ------------------------------------------------


def hook(event: str, payload: dict, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "memindex_hook.py"), event],
        input=json.dumps(payload), capture_output=True, text=True, timeout=30, env=env or cli_env(),
    )
    return proc, time.perf_counter() - start


def wait_for(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def _config(memory_root: Path, **capture) -> None:
    (memory_root / "memory-config.json").write_text(json.dumps({"capture": capture}))


def test_stop_hook_captures_in_the_background(memory_root: Path, tmp_path: Path) -> None:
    _config(memory_root, min_interval_s=0)
    path = session().write(tmp_path / f"{SID}.jsonl")
    payload = {"cwd": str(memory_root.parent.parent), "transcript_path": str(path), "session_id": SID,
               "hook_event_name": "Stop", "stop_hook_active": False}
    proc, _ = hook("stop", payload)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    target = memory_root / CAPTURE_FOLDER / f"session-{SID}.json"
    assert wait_for(target.exists)
    assert json.loads(target.read_text())["content"]["goal"].startswith("Make the invoice export")
    w = session()
    w.prompt("SessionEnd: last words about refunds")
    w.write(path)
    hook("session-end", {**payload, "hook_event_name": "SessionEnd", "reason": "exit"})
    assert wait_for(lambda: "refunds" in target.read_text())


def test_capture_off_writes_nothing(memory_root: Path, tmp_path: Path) -> None:
    _config(memory_root, enabled=False)
    path = session().write(tmp_path / f"{SID}.jsonl")
    proc, _ = hook("stop", {"cwd": str(memory_root.parent.parent), "transcript_path": str(path), "session_id": SID})
    assert proc.returncode == 0
    time.sleep(0.5)
    assert not list((memory_root / CAPTURE_FOLDER).iterdir())


def test_hook_without_a_transcript_or_memory_root_is_silent(tmp_path: Path, memory_root: Path) -> None:
    proc, _ = hook("stop", {"cwd": str(memory_root.parent.parent), "session_id": SID})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    proc, _ = hook("stop", {"cwd": str(tmp_path / "elsewhere"), "transcript_path": "/x.jsonl", "session_id": SID})
    assert proc.returncode == 0 and proc.stdout == ""


def test_concurrent_stops_of_one_session_coalesce(memory_root: Path, tmp_path: Path) -> None:
    """Eight jobs started at once for one session: one file, valid, with the last turn;
    most jobs find the lock held and leave the work to the one that has it."""
    _config(memory_root, min_interval_s=0)
    path = session().write(tmp_path / f"{SID}.jsonl")
    cmd = [sys.executable, "-m", "memindex", "--root", str(memory_root), "capture", "--json",
           "--transcript", str(path), "--session-id", SID]
    procs = [subprocess.Popen(cmd, env=cli_env(), stdout=subprocess.PIPE, text=True) for _ in range(8)]
    statuses = [json.loads(p.communicate(timeout=60)[0])["status"] for p in procs]
    assert statuses.count("created") == 1, statuses
    assert set(statuses) <= {"created", "unchanged", "coalesced"}
    files = list((memory_root / CAPTURE_FOLDER).glob("*.json"))
    assert [f.name for f in files] == [f"session-{SID}.json"]
    assert validate_memory(json.loads(files[0].read_text()), f"{CAPTURE_FOLDER}/{files[0].name}") == []


def test_killing_the_job_mid_run_loses_nothing(memory_root: Path, tmp_path: Path) -> None:
    """SIGKILL at spread-out moments of a capture of a large transcript: the summary file is
    always absent or whole and valid (the previous one or the new one), and the next run
    writes it."""
    _config(memory_root, min_interval_s=0)
    w = session()
    for i in range(400):  # a long session: about 2 MB of transcript
        w.read(f"{CWD}/src/mod{i}.py", "x = 1\n" * 600)
        w.prompt(f"step {i}: keep going with module {i}")
    path = w.write(tmp_path / f"{SID}.jsonl")
    target = memory_root / CAPTURE_FOLDER / f"session-{SID}.json"
    cmd = [sys.executable, "-m", "memindex", "--root", str(memory_root), "capture", "--quiet",
           "--transcript", str(path), "--session-id", SID]
    for delay in (0.05, 0.15, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3):
        proc = subprocess.Popen(cmd, env=cli_env(), start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if target.exists():
            rel = f"{CAPTURE_FOLDER}/{target.name}"
            assert validate_memory(json.loads(target.read_text()), rel) == []
        with open(path, "a", encoding="utf-8") as fh:  # the session goes on
            more = TranscriptWriter(SID, CWD, START)
            more.prompt(f"after kill {delay}")
            fh.write("\n".join(more.lines()) + "\n")
    done = subprocess.run(cmd[:-4] + ["--json", "--transcript", str(path), "--session-id", SID],
                          env=cli_env(), capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout)["status"] in ("created", "updated"), done.stderr
    assert json.loads(target.read_text())["content"]["requests"][-1] == "after kill 1.3"


def test_captured_summaries_are_found_by_search_and_resume_not_injected_on_words(memory_root: Path, tmp_path: Path) -> None:
    """A later session asking the same question again: the runbook that answers it is
    injected, not the earlier session's summary that only restates the question."""
    from conftest import write_mem
    from memindex import index
    from memindex.policy.inject import decide

    question = "integration tests fail before Postgres is ready in CI, what did we do"
    write_mem(memory_root, "runbook", "postgres-ready", "Integration tests fail before Postgres is ready",
              ["ci", "postgres"], content={"trigger": "CI integration tests fail before Postgres is ready",
                                           "steps": ["wait for pg_isready before the tests"]})
    w = TranscriptWriter(SID, CWD, START)
    w.prompt(question)
    w.text("ok")
    capture_transcript(str(memory_root), parse_config({}), str(w.write(tmp_path / f"{SID}.jsonl")))
    cfg = parse_config({})
    assert any(CAPTURE_FOLDER in p for p in search_paths(memory_root, question))
    with index.open_reader(memory_root) as conn:
        injected = [h.path for h in decide(conn, question, cfg).hits]
        resumed = [h.path for h in decide(conn, "where did we leave off?", cfg).hits]
    assert injected == ["runbooks/postgres-ready.json"]
    assert resumed == [f"{CAPTURE_FOLDER}/session-{SID}.json"]


def test_batches_check_each_item_as_save_and_update_do_and_fail_one_alone(memory_root: Path) -> None:
    from memindex.errors import InvalidMemory, MemoryExists
    from memindex.write import save_memories, update_memories

    cfg = parse_config({})
    good = {"id": "session-a", "title": "Session A", "tags": ["x"], "content": {"goal": "a", "outcome": "success"}}
    bad = {"id": "session-b", "title": "Session B", "tags": ["x"], "content": {"goal": "b", "outcome": "won"}}
    answers = save_memories(memory_root, cfg, [("session_summary", good), ("session_summary", bad),
                                               ("session_summary", good, CAPTURE_FOLDER)])
    assert [a["status"] if isinstance(a, dict) else type(a) for a in answers] == ["created", InvalidMemory, "created"]
    assert answers[2]["path"].endswith(f"{CAPTURE_FOLDER}/session-a.json") and answers[0]["indexed"]
    assert not (memory_root / "sessions" / "session-b.json").exists()
    again = update_memories(memory_root, cfg, [("sessions/session-a.json", {"content": {"goal": "a2"}}),
                                               ("sessions/session-a.json", {"content": {"outcome": "won"}}),
                                               (f"{CAPTURE_FOLDER}/session-a.json", {"content": {"goal": "a"}})])
    assert [a["status"] if isinstance(a, dict) else type(a) for a in again] == ["updated", InvalidMemory, "unchanged"]
    assert json.loads((memory_root / "sessions" / "session-a.json").read_text())["content"]["goal"] == "a2"
    assert search_paths(memory_root, "a2")[0].endswith("sessions/session-a.json")
    assert isinstance(save_memories(memory_root, cfg, [("session_summary", good)])[0], MemoryExists)


def test_a_linked_local_folder_leaving_the_root_is_refused(memory_root: Path, tmp_path: Path) -> None:
    from memindex.errors import WriteError

    outside = tmp_path / "outside"
    outside.mkdir()
    (memory_root / CAPTURE_FOLDER).rmdir()
    (memory_root / CAPTURE_FOLDER).symlink_to(outside)
    with pytest.raises(WriteError, match="leaves the memory root"):
        capture_transcript(str(memory_root), parse_config({}), str(session().write(tmp_path / f"{SID}.jsonl")))
    assert list(outside.iterdir()) == []


def test_the_session_id_is_the_transcript_name(tmp_path: Path) -> None:
    w = TranscriptWriter("x" * 300, CWD, START)  # an id in the entries no session has
    w.prompt("hello there, fix the build")
    path = w.write(tmp_path / f"{SID}.jsonl")
    assert read_transcript(str(path)).session_id == SID
    assert memory_id(SID) == f"session-{SID}" and memory_id("\u00e9\u00e9").startswith("session-")


def test_where_did_we_leave_off_never_answers_with_this_very_session(memory_root: Path, tmp_path: Path) -> None:
    """A session that began with a greeting is captured after its first turn; asked
    "where did we leave off?" next, the hook offers the previous session, not this one."""
    earlier, now_sid = "11111111-2222-4333-8444-555555555555", "66666666-7777-4888-8999-aaaaaaaaaaaa"
    old = TranscriptWriter(earlier, CWD, START)
    old.prompt("migrate the billing cron jobs to Kubernetes CronJobs")
    old.text("Half done: two jobs moved.")
    capture_transcript(str(memory_root), parse_config({}), str(old.write(tmp_path / f"{earlier}.jsonl")))
    current = TranscriptWriter(now_sid, CWD, datetime(2026, 3, 3, 9, 0, tzinfo=timezone.utc))
    current.prompt("hi")
    current.text("Hello!")
    path = current.write(tmp_path / f"{now_sid}.jsonl")
    capture_transcript(str(memory_root), parse_config({}), str(path))
    payload = {"prompt": "where did we leave off?", "cwd": str(memory_root.parent.parent), "session_id": now_sid,
               "transcript_path": str(path), "hook_event_name": "UserPromptSubmit"}
    proc, _ = hook("prompt", payload)
    assert f"session-{earlier}.json" in proc.stdout and now_sid not in proc.stdout, proc.stdout + proc.stderr
    other, _ = hook("prompt", {**payload, "session_id": "another-session"})
    assert f"session-{now_sid}.json" in other.stdout  # the latest, for any other session


def test_search_lists_captured_summaries_after_memories_written_on_purpose(memory_root: Path, tmp_path: Path) -> None:
    """A captured summary repeats the session's own prompts, so it is the best word match
    for them; `memindex search` (and the MCP search tool) list it after the others."""
    from memindex.policy.recall import search_hits

    cfg = parse_config({})
    capture_transcript(str(memory_root), cfg, str(session().write(tmp_path / f"{SID}.jsonl")))
    prompt = "make the invoice export skip cancelled orders, customers see them twice"
    runbook = {"title": "PDF export duplicates", "tags": ["pdf"],
               "content": {"trigger": "customers see an order twice in the PDF export",
                           "steps": ["dedupe the rows"], "verification": "count rows"}}
    assert run_cli("--root", str(memory_root), "save", "--category", "runbook", "--data", json.dumps(runbook)).returncode == 0
    from memindex.retrieval.query import search
    from memindex import index

    with index.open_reader(memory_root) as conn:  # by words alone the summary wins: it holds the prompt
        assert search(conn, prompt, limit=5)[0].path == f"{CAPTURE_FOLDER}/session-{SID}.json"
    ranked = [h.path for h in search_hits(str(memory_root), cfg, prompt)]
    assert ranked == ["runbooks/pdf-export-duplicates.json", f"{CAPTURE_FOLDER}/session-{SID}.json"]


# --- summaries do not pile up (capture/fold.py); what became durable (saved_memories) -----


def _captured(root: Path, n: int, day: str, **extra) -> None:
    from conftest import write_mem

    write_mem(root, "session_summary", f"session-{day}-{n}", f"Session: work {n} of {day}", ["captured-session", "api"],
              {"goal": f"work item {n} of {day}", "outcome": "success", "completed": [f"did {n}"], **extra},
              folder="sessions-local", created_at=f"{day}T10:00:00Z", updated_at=f"{day}T1{n}:00:00Z",
              related_files=[f"src/f{n}.py"])


def test_older_captured_summaries_are_folded_into_a_digest_a_month(memory_root: Path) -> None:
    from conftest import write_mem
    from memindex.capture.fold import fold
    from memindex.index.sync import sync

    for n in range(3):
        _captured(memory_root, n, "2026-01-10", saved_memories=["decisions/x.json"] if n == 0 else [])
    for n in range(3):
        _captured(memory_root, n, "2026-02-10")
    write_mem(memory_root, "session_summary", "hand-written", "A session someone wrote", ["sessions"],
              {"goal": "by hand", "outcome": "success"}, created_at="2025-01-01T00:00:00Z", updated_at="2025-01-01T00:00:00Z")
    cfg = parse_config({"capture": {"keep_sessions": 2, "keep_days": 0}})
    sync(memory_root, cfg)
    done = fold(str(memory_root), cfg)
    assert done["folded"] == 4 and done["failed"] == []
    assert done["digests"] == [".claude/memory/sessions-local/sessions-digest-2026-01.json",
                               ".claude/memory/sessions-local/sessions-digest-2026-02.json"]
    jan = json.loads((memory_root / "sessions-local/sessions-digest-2026-01.json").read_text())
    assert jan["content"]["completed"][0] == "2026-01-10: work item 0 of 2026-01-10 (success; saved decisions/x.json)"
    assert len(jan["content"]["completed"]) == 3 and jan["content"]["saved_memories"] == ["decisions/x.json"]
    assert set(jan["related_files"]) == {"src/f0.py", "src/f1.py", "src/f2.py"} and "session-digest" in jan["tags"]
    old = json.loads((memory_root / "sessions-local/session-2026-01-10-0.json").read_text())
    assert old["record_status"] == "archived" and old["archived_reason"] == (
        "folded into .claude/memory/sessions-local/sessions-digest-2026-01.json")
    kept = [p.name for p in (memory_root / "sessions-local").glob("session-2026-02-10-*.json")
            if json.loads(p.read_text())["record_status"] == "active"]
    assert sorted(kept) == ["session-2026-02-10-1.json", "session-2026-02-10-2.json"]  # the newest two
    assert json.loads((memory_root / "sessions/hand-written.json").read_text())["record_status"] == "active"
    assert fold(str(memory_root), cfg)["folded"] == 0  # nothing more: the digests are not folded


def test_older_captured_summaries_can_be_archived_instead(memory_root: Path) -> None:
    from memindex.capture.fold import fold
    from memindex.index.sync import sync

    for n in range(3):
        _captured(memory_root, n, "2026-01-10")
    cfg = parse_config({"capture": {"keep_sessions": 1, "keep_days": 0, "older": "archive"}})
    sync(memory_root, cfg)
    done = fold(str(memory_root), cfg)
    assert done["archived"] == 2 and done["digests"] == []
    assert not list((memory_root / "sessions-local").glob("sessions-digest-*"))


def test_a_summary_says_what_became_a_durable_memory(tmp_path: Path) -> None:
    w = TranscriptWriter(SID, CWD, START)
    w.prompt("We chose Postgres over MySQL for events; save that")
    w.bash("memindex save --category decision --data '{...}'",
           '{"status": "created", "path": ".claude/memory/decisions/postgres-for-events.json", "id": "postgres-for-events"}')
    w.tool("mcp__plugin_memindex_memindex__update", {"path": "x"},
           '{"status": "updated", "path": ".claude/memory/runbooks/events-backfill.json", "id": "events-backfill"}')
    w.bash("memindex save --category decision --data '{...}'", "memindex: a memory already exists", 1)
    c = summary_of(w, tmp_path)["content"]
    assert c["saved_memories"] == [".claude/memory/decisions/postgres-for-events.json",
                                   ".claude/memory/runbooks/events-backfill.json"]
    assert ("Saved as memories: .claude/memory/decisions/postgres-for-events.json, "
            ".claude/memory/runbooks/events-backfill.json") in c["completed"]
