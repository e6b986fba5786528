"""End-to-end: session capture with the real Claude Code CLI. The Stop hook (after the
turn) and SessionEnd hook hand the transcript to a background `memindex capture`; the
session's summary appears in `sessions-local/` with its session id; `memindex import
transcripts` then reads the same CLI-written transcripts from Claude Code's own folder."""

from __future__ import annotations

import json

from e2e_support import base_env, memindex_command, run_bounded, wait_for
from fake_api import text, tool_use

PROMPT = "Let's decide: webhook deliveries retry with exponential backoff, at most 5 tries"
CLOSING = "Decided and written down.\n\nNext steps:\n- implement the backoff in the webhook worker"


def test_a_session_summary_appears_after_the_session_and_import_finds_the_same_transcript(claude, demo_project, installed):
    root = demo_project / ".claude" / "memory"
    config = root / "memory-config.json"  # this test is about capture: no save prompt after the decision
    settings = json.loads(config.read_text()) if config.exists() else {}
    settings.setdefault("capture", {})["save_prompts"] = False
    settings["capture"]["min_interval_s"] = 0  # the SessionEnd capture need not wait behind the Stop one
    config.write_text(json.dumps(settings))
    script = [[tool_use("Bash", {"command": "python3 -m pytest --version || true", "description": "check pytest"})],
              [text(CLOSING)]]
    run = claude(demo_project, PROMPT, "--allowedTools=Bash(python3:*)", script=script)
    sid = run.session_id
    assert [h["exit_code"] for h in run.hook("Stop")] == [0], run.hooks
    assert all(h["stdout"] == "" for h in run.hook("Stop") + run.hook("SessionEnd"))
    target = root / "sessions-local" / f"session-{sid}.json"
    assert wait_for(target.exists, timeout=30), f"no summary; log: {(root / '.memindex.log').read_text() if (root / '.memindex.log').exists() else ''}"
    # Claude Code writes the transcript lazily: the Stop hook's job may summarise it before
    # the closing text is in it; the SessionEnd job (in the background) brings it up to date
    assert wait_for(lambda: "closing_summary" in json.loads(target.read_text())["content"], timeout=30), target.read_text()
    summary = json.loads(target.read_text())
    assert summary["content"]["goal"] == PROMPT
    assert summary["content"]["closing_summary"] == CLOSING
    assert summary["content"]["next_actions"] == ["implement the backoff in the webhook worker"]
    assert summary["source"] == {"kind": "transcript", "path": "~/" + str(run.transcript.relative_to(installed.home)),
                                 "session_id": sid}

    def import_json(*args: str) -> dict:
        proc = run_bounded([str(memindex_command()), "import", "transcripts", "--json", *args],
                           base_env(installed.home), cwd=demo_project)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    # the default folder is Claude Code's folder of this project; capture already wrote it
    first = import_json()
    assert first["folder"] == str(run.transcript.parent)
    assert first["counts"] == {"created": 0, "updated": 0, "unchanged": 1, "skipped": 0, "failed": 0}, first
    target.unlink()
    assert import_json()["counts"]["created"] == 1
    assert json.loads(target.read_text())["content"]["goal"] == PROMPT
    assert import_json()["counts"]["unchanged"] == 1
