"""One door decides a prompt (memindex/policy/door.py): `memindex explain --hook-input`
names exactly the memories the real prompt hook injects for the same input, for every
follow-up prompt of the judged sets (their earlier turns written as the transcript Claude
Code writes), and for the PreToolUse hook's input."""

from __future__ import annotations

import json
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

from memindex import hook
from memindex.cli.main import main as cli
from memindex.config import Config
from memindex_dev.evaluation.transcripts import TranscriptWriter
from memindex_dev.evaluation.sets import REPO, local_set
from memindex.index.sync import sync
from memindex.policy.transcript import injected_paths

SETS = sorted(p.parent.name for p in (REPO / "evalsets").glob("*/queries.json")
              if any(q.get("transcript") for q in json.loads(p.read_text(encoding="utf-8"))))
SUBPROCESS_RUNS = 2  # per set, through the real `python3 -I -S` hook command


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[dict]]]:
    """Each set with follow-ups copied and synced once: (project folder, its follow-ups)."""
    tmp = tmp_path_factory.mktemp("door")
    out = {}
    for name in SETS:
        store = local_set(name, REPO / "evalsets" / name, tmp)[0]
        sync(store.root, Config())
        out[name] = (store.root.parent.parent, [q for q in store.queries if q.get("transcript")])
    return out


def write_transcript(path: Path, turns: list) -> None:
    """The earlier turns as Claude Code writes them (evaluation.transcripts): a string is the
    user's turn, answered; a {role, content} turn is the user's or the assistant's (seven
    sets write their turns so)."""
    session = TranscriptWriter(path.stem, str(path.parent))
    for turn in turns:
        role, text = ("user", turn) if isinstance(turn, str) else (turn["role"], turn["content"])
        if role == "user":
            session.prompt(text)
            if isinstance(turn, str):
                session.text("Looking into it.")
        else:
            session.text(text)
    session.write(path)


def _payload(project: Path, transcript: Path, q: dict, name: str) -> dict:
    return {"session_id": f"door-{name}-{q['id']}", "transcript_path": str(transcript), "cwd": str(project),
            "hook_event_name": "UserPromptSubmit", "prompt": q["query"]}


def _block_paths(block: str) -> list[str]:
    return [unescape(p) for p in injected_paths(block)]


def _explain(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    code = cli(["explain", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_the_sets_have_follow_ups() -> None:
    assert len(SETS) >= 10 and "atlas" in SETS


@pytest.mark.parametrize("name", SETS)
def test_explain_names_what_the_hook_injects_for_every_follow_up(
    name: str, stores: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    project, follow_ups = stores[name]
    monkeypatch.chdir(project)
    injected = context_mattered = turns_read = 0
    for n, q in enumerate(follow_ups):
        transcript = tmp_path / f"{q['id']}.jsonl"
        write_transcript(transcript, q["transcript"])
        payload = _payload(project, transcript, q, name)
        raw = json.dumps(payload).encode()
        hook_paths = _block_paths(hook.run("prompt", raw))
        if n < SUBPROCESS_RUNS:  # the hook as Claude Code runs it
            proc = subprocess.run([sys.executable, "-I", "-S", str(REPO / "hooks" / "memindex_hook.py"), "prompt"],
                                  input=raw, capture_output=True, cwd=project, timeout=60)
            assert proc.returncode == 0
            assert _block_paths(proc.stdout.decode()) == hook_paths, (q["id"], proc.stderr)
        hook_input = tmp_path / f"{q['id']}.json"
        hook_input.write_text(json.dumps(payload))
        answer = _explain(capsys, "--hook-input", str(hook_input))
        assert answer["injected"] == hook_paths, (q["id"], q["query"])
        assert answer["prompt"] == q["query"]
        turns_read += bool(answer["turns"])
        injected += bool(hook_paths)
        if hook_paths:  # the prompt alone: explain as before, without the transcript
            context_mattered += _explain(capsys, q["query"])["injected"] != hook_paths
    assert turns_read, "explain read no earlier turn from any transcript"
    assert injected, "no follow-up of the set injects anything: the comparison says nothing"
    if name == "atlas":  # the follow-ups need their transcript: the prompt alone gets other memories
        assert context_mattered


def test_explain_reads_the_hook_input_from_stdin(stores: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    project, follow_ups = stores["atlas"]
    q = next(q for q in follow_ups if q["id"] == "a034")
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, q["transcript"])
    payload = _payload(project, transcript, q, "stdin")
    hook_paths = _block_paths(hook.run("prompt", json.dumps(payload).encode()))
    assert hook_paths
    monkeypatch.chdir(tmp_path)  # no project here: the root is looked for from the payload's cwd, as the hook does
    monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": __import__("io").BytesIO(json.dumps(payload).encode())})())
    assert _explain(capsys, "--hook-input", "-")["injected"] == hook_paths


@pytest.mark.parametrize("bad, says", [
    (b"{broken", "not valid JSON"), (b"[1]", "not a JSON object"), (b'{"cwd": "/"}', "no prompt"),
])
def test_bad_hook_input_is_a_clear_error(stores: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch, bad: bytes, says: str) -> None:
    project, _ = stores["atlas"]
    monkeypatch.chdir(project)
    path = tmp_path / "in.json"
    path.write_bytes(bad)
    with pytest.raises(SystemExit) as exit_:
        cli(["explain", "--hook-input", str(path)])
    assert exit_.value.code == 2 and says in capsys.readouterr().err


def test_explain_names_what_the_pre_tool_use_hook_adds(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The file at hand: the prompt from the transcript's latest user turn, as the hook."""
    store = local_set("atlas", REPO / "evalsets" / "atlas", tmp_path)[0]
    root, project = store.root, store.root.parent.parent
    from conftest import trust_config

    (root / "memory-config.json").write_text(json.dumps({"retrieval": {"tool_anchors": True}}))
    trust_config(root)
    memory = next(p for p in sorted((root / "runbooks").glob("*.json")))
    data = json.loads(memory.read_text())
    data["related_files"] = ["src/offline/sync.py"]
    memory.write_text(json.dumps(data))
    sync(root, Config())
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, [data["title"]])
    payload = {"session_id": "door-file", "transcript_path": str(transcript), "cwd": str(project),
               "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "src/offline/sync.py"}}
    out = hook.run("pre-tool-use", json.dumps(payload).encode())
    hook_paths = _block_paths(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else []
    assert hook_paths == [f".claude/memory/runbooks/{memory.name}"]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(payload))
    monkeypatch.chdir(project)
    answer = _explain(capsys, "--hook-input", str(path))
    assert answer["injected"] == hook_paths and answer["file"] == str(project / "src/offline/sync.py")


@pytest.mark.parametrize("event", ["prompt", "pre-tool-use", "session-start", "stop", "session-end"])
def test_every_hook_reports_config_warnings_on_stderr(event: str, tmp_path: Path) -> None:
    """One way for all (hook.config_for): the warning on the hook's one stderr line, exit 0."""
    import os

    project = tmp_path / "proj"
    (project / ".claude" / "memory" / "decisions").mkdir(parents=True)
    env = {**os.environ, "MEMINDEX_CONFIG_JSON": json.dumps({"retrieval": {"max_inject": "many"}})}
    payload = {"session_id": "w", "cwd": str(project), "prompt": "how do we deploy the api service?",
               "tool_name": "Read", "tool_input": {"file_path": str(project / "src" / "app.py")}}
    proc = subprocess.run([sys.executable, "-I", "-S", str(REPO / "hooks" / "memindex_hook.py"), event],
                          input=json.dumps(payload).encode(), capture_output=True, cwd=project, env=env, timeout=60)
    assert proc.returncode == 0
    assert "config: $MEMINDEX_CONFIG_JSON: retrieval.max_inject" in proc.stderr.decode(), proc.stderr


def test_explain_hook_input_with_a_lone_surrogate_escape_answers(memory_root: Path, tmp_path: Path) -> None:
    """A lone surrogate escape is valid JSON the hook takes; `explain --hook-input --json`
    prints it as U+FFFD instead of failing to encode it."""
    from conftest import run_cli, write_mem
    from memindex.index.sync import sync

    write_mem(memory_root, "runbook", "flaky-ci", "Flaky CI integration tests", ["ci", "flaky"])
    sync(memory_root)
    payload = tmp_path / "hook.json"
    payload.write_text('{"prompt": "\\udc00 the integration tests are flaky in CI", "cwd": "%s"}' % memory_root.parent.parent)
    done = run_cli("--root", str(memory_root), "explain", "--hook-input", str(payload), "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["prompt"].startswith("\ufffd") and "flaky" in answer["prompt"]


def test_the_hook_answers_a_prompt_with_a_lone_surrogate_escape(memory_root: Path) -> None:
    """The prompt's lone surrogate escape does not break the hook's memo and use log: the
    rest of the prompt gets its memory (it once failed with a UnicodeEncodeError, silently)."""
    from conftest import write_mem
    from memindex import hook
    from memindex.index.sync import sync

    write_mem(memory_root, "runbook", "flaky-ci", "Flaky CI integration tests", ["ci", "flaky"])
    sync(memory_root)
    raw = ('{"prompt": "\\udc00 the integration tests are flaky in CI", "session_id": "s1", "cwd": "%s"}'
           % memory_root.parent.parent).encode()
    assert "runbooks/flaky-ci.json" in hook.run("prompt", raw)
