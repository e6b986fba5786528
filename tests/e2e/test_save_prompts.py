"""End-to-end: the Stop hook's save prompts with the real Claude Code CLI and the fake API.

A session where the user makes a decision gets exactly one save prompt (Claude Code sends
the hook's block reason to the model as a new user turn, "Stop hook feedback:\\n..."),
the stop after it is never blocked (`stop_hook_active`), the same topic in a continued
session is not asked about again, and a bland session gets none.
"""

from __future__ import annotations

import json

from fake_api import last_user_texts, text, tool_use, user_texts

DECISION = "Let's go with Postgres over MySQL for the events store."
FEEDBACK = "Stop hook feedback:\n"


def say(value: str) -> list[dict]:
    return [text(value)]


def save_prompts(body: dict) -> list[str]:
    """The memindex save prompts among the user turns the model was sent."""
    return [t for t in user_texts(body) if t.startswith(FEEDBACK + "memindex:")]


def stop_outputs(run) -> list[str]:
    return [h.get("stdout", "") for h in run.hook("Stop")]


def test_a_decision_gets_exactly_one_save_prompt_and_the_model_can_save_it(claude, demo_project):
    save = ("memindex save --category decision --data '{\"title\": \"Postgres for the events store\", \"tags\": [\"postgres\", \"events\"], "
            "\"content\": {\"status\": \"accepted\", \"context\": \"Events store choice\", \"decision\": \"Postgres over MySQL\"}}'")
    run = claude(demo_project, DECISION, "--allowedTools=Bash(memindex save:*)",
                 script=[say("Postgres it is."), [tool_use("Bash", {"command": save, "description": "Save the decision"})], say("Saved.")])
    # the model's second request is the save prompt, as a user turn after its answer
    assert len(run.main_requests) == 3, [r["body"]["messages"][-1] for r in run.main_requests]
    second = run.main_requests[1]["body"]
    [prompt] = last_user_texts(second)
    assert prompt.startswith(FEEDBACK + "memindex: in this turn a decision was made or reversed")
    assert f'("{DECISION}")' in prompt and "memory-save skill" in prompt and "--category decision" in prompt
    assert len(save_prompts(run.last_body)) == 1
    # the hook blocked once; the stop after the save went through (stop_hook_active)
    outputs = stop_outputs(run)
    assert len(outputs) == 2 and json.loads(outputs[0])["decision"] == "block" and outputs[1] == "", outputs
    # the model's save worked under its rule, and the memory is there
    saved = list((demo_project / ".claude" / "memory" / "decisions").glob("postgres-for-the-events-store*.json"))
    assert len(saved) == 1, run.tool_results()
    # Claude Code keeps the prompt in the transcript as a meta user entry: not the user's words
    meta = [e for e in run.transcript_entries() if e.get("type") == "user" and e.get("isMeta")
            and str(e.get("message", {}).get("content", "")).startswith(FEEDBACK)]
    assert len(meta) == 1

    # the same topic again in the continued session: no second prompt
    again = claude(demo_project, "ok so we're going with Postgres for events, final.", "-c", script=[say("Yes, Postgres.")])
    assert len(again.main_requests) == 1 and stop_outputs(again) == [""]
    assert len(save_prompts(again.last_body)) == 1  # only the first turn's, replayed


def test_the_model_may_decline_and_is_not_asked_again(claude, demo_project):
    run = claude(demo_project, DECISION, script=[say("Postgres it is."), say("Nothing durable to save here.")])
    assert len(run.main_requests) == 2 and len(save_prompts(run.last_body)) == 1
    assert [o != "" for o in stop_outputs(run)] == [True, False]


def test_a_bland_session_gets_no_save_prompt(claude, demo_project):
    run = claude(demo_project, "Write a haiku about autumn leaves falling in the park", script=[say("Leaves drift and fall.")])
    assert len(run.main_requests) == 1
    assert stop_outputs(run) == [""] and save_prompts(run.last_body) == []
    follow = claude(demo_project, "Do you remember what we decided about caching?", "-c", script=[say("Redis, in March.")])
    assert len(follow.main_requests) == 1 and stop_outputs(follow) == [""]


def test_save_prompts_off_in_the_config(claude, demo_project):
    (demo_project / ".claude" / "memory" / "memory-config.json").write_text('{"capture": {"save_prompts": false}}')
    run = claude(demo_project, DECISION, script=[say("Postgres it is.")])
    assert len(run.main_requests) == 1 and stop_outputs(run) == [""]
