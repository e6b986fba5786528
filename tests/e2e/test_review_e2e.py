"""Use, measured, with the real Claude Code CLI: the prompt hook injects a memory, the
scripted model opens it with the Read tool, a later prompt injects another memory the model
never opens; after the session the capture job has read the transcript, and `memindex
explain` and `status` count the first as shown and opened, the second as shown only."""

from __future__ import annotations

import json

from e2e_support import base_env, memindex_command, memory_contexts, run_bounded, wait_for
from fake_api import tool_use
from scenario import FLAKY_PROMPT, RUNBOOK, allow, say

DEPLOY_PROMPT = "How do we deploy to staging with Argo CD?"
DEPLOY = ".claude/memory/runbooks/deploy-to-staging-with-argocd.json"


def test_an_opened_memory_counts_as_opened_and_one_never_opened_as_shown(claude, demo_project, installed):
    root = demo_project / ".claude" / "memory"
    config = root / "memory-config.json"
    settings = json.loads(config.read_text()) if config.exists() else {}
    settings.setdefault("capture", {}).update(save_prompts=False, min_interval_s=0)
    config.write_text(json.dumps(settings))
    first = claude(demo_project, FLAKY_PROMPT, allow("Read"),
                   script=[[tool_use("Read", {"file_path": str(demo_project / RUNBOOK)})],
                           say("Wait for Postgres with pg_isready before the tests.")])
    assert not first.denials
    second = claude(demo_project, DEPLOY_PROMPT, "-c", script=[say("Argo CD syncs the staging app from main.")])
    [(_, block)] = memory_contexts(second.last_body, since_last_prompt=True)
    assert DEPLOY in block and RUNBOOK not in block
    env = base_env(installed.home)

    def explain(prompt: str) -> dict[str, dict]:
        proc = run_bounded([str(memindex_command()), "explain", "--json", prompt], env, cwd=demo_project)
        assert proc.returncode == 0, proc.stderr
        return {d["path"]: d["use"] for d in json.loads(proc.stdout)["considered"]}

    # the Stop and SessionEnd hooks' background capture reads the opens from the transcript
    assert wait_for(lambda: (explain(FLAKY_PROMPT).get(RUNBOOK) or {}).get("opened") == 1, timeout=40), \
        (root / ".memindex.log").read_text() if (root / ".memindex.log").exists() else "no log"
    assert explain(FLAKY_PROMPT)[RUNBOOK] == {"shown": 1, "opened": 1}
    assert explain(DEPLOY_PROMPT)[DEPLOY] == {"shown": 1, "opened": 0}
    proc = run_bounded([str(memindex_command()), "status", "--json"], env, cwd=demo_project)
    use = json.loads(proc.stdout)["use"]
    assert use["memories_shown"] == 2 and use["memories_opened"] == 1 and use["shown_never_opened"] == 1, use
    assert not use["folder"].startswith(str(demo_project))  # per user (the state folder), outside the repository
