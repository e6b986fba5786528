"""End-to-end: the real Claude Code CLI, with this checkout installed as a plugin, against a
fake Anthropic Messages API on 127.0.0.1 (fake_api.py). Each test asserts on what the fake
model was sent (request bodies), on the CLI's hook events, or on what landed on disk.

Run: python -m pytest -m e2e   (see conftest.py; tests/e2e/run.sh adds a network namespace)
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from e2e_support import (
    copy_demo, found_within, memindex, memory_contexts, message_texts, quiet_since, search_paths, wait_for,
)
from fake_api import tool_use
from scenario import FLAKY_PROMPT, FOLLOW_UP, PLAIN_PREFIX, RUNBOOK, UNRELATED_PROMPT, allow, bash, result_for, say


def attachments(run, kind: str) -> list[dict]:
    return [e["attachment"] for e in run.transcript_entries()
            if e.get("type") == "attachment" and e.get("attachment", {}).get("type") == kind]


# --- install ----------------------------------------------------------------------------------


def test_plugin_and_marketplace_validate(validation):
    for proc in (validation.marketplace, validation.manifest, validation.strict):
        assert proc.returncode == 0, f"{proc.args}\n{proc.stdout}{proc.stderr}"
        assert "Validation passed" in proc.stdout, proc.stdout


def test_plugin_installs_and_lists_hooks_and_skills(installed):
    entry = next(p for p in installed.listing if p["id"] == "memindex@memindex")
    assert entry["enabled"] is True and entry["scope"] == "user"

    details = installed.details.stdout
    assert installed.details.returncode == 0, details + installed.details.stderr
    assert re.search(r"Skills \(2\)\s+memory-save, memory-search", details), details
    assert re.search(r"Hooks \(6\)\s+UserPromptSubmit, PreToolUse, PostToolUse, SessionStart, Stop, SessionEnd", details), details


# --- the prompt hook ---------------------------------------------------------------------------


def test_relevant_prompt_gets_memory_context(claude, demo_project, installed):
    run = claude(demo_project, FLAKY_PROMPT, script=[say("Wait for Postgres with pg_isready.")])
    # a directory marketplace's plugin runs in place, from that directory (not from the
    # copy `plugin install` makes under ~/.claude/plugins/cache)
    [init] = [e for e in run.events if e.get("subtype") == "init"]
    [plugin] = [p for p in init["plugins"] if p["name"] == "memindex"]
    assert Path(plugin["path"]).resolve() == installed.source and plugin["source"] == "memindex@memindex"

    blocks = memory_contexts(run.last_body, since_last_prompt=True)
    assert len(blocks) == 1, blocks
    role, block = blocks[0]
    assert RUNBOOK in block
    # How it reaches the model: the hook's plain stdout, in a `system` role message of the
    # messages array that follows the user prompt, after the label Claude Code gives it.
    assert role == "system"
    assert block.startswith(PLAIN_PREFIX + '<memory-context source=".claude/memory/">')
    # the user prompt itself is sent unchanged
    assert any(role == "user" and t == FLAKY_PROMPT for _, role, t in message_texts(run.last_body))

    hook = run.hook("UserPromptSubmit")
    assert len(hook) == 1 and hook[0]["exit_code"] == 0
    assert hook[0]["stdout"].strip() == block[len(PLAIN_PREFIX):]

    # The transcript keeps it as an attachment of type hook_success (what -c replays).
    success = [a for a in attachments(run, "hook_success") if a["hookEvent"] == "UserPromptSubmit"]
    assert len(success) == 1 and RUNBOOK in success[0]["content"] and success[0]["exitCode"] == 0


def test_unrelated_prompt_gets_no_memory_context(claude, demo_project):
    run = claude(demo_project, UNRELATED_PROMPT, script=[say("Leaves drift and fall.")])
    assert memory_contexts(run.last_body) == []
    assert [h["stdout"] for h in run.hook("UserPromptSubmit")] == [""]


def test_json_additional_context_and_plain_stdout_reach_the_model_alike(claude, demo_project):
    """A second UserPromptSubmit hook (project settings) answers in the JSON form
    hookSpecificOutput.additionalContext: both end up in the same `system` message."""
    probe = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "<probe-json>from JSON</probe-json>"}}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"printf '%s' '{json.dumps(probe)}'"}]}]}}
    (demo_project / ".claude" / "settings.json").write_text(json.dumps(settings))

    run = claude(demo_project, FLAKY_PROMPT, script=[say("ok")])
    system = [t for _, role, t in message_texts(run.last_body) if role == "system"]
    joined = "\n".join(system)
    assert "UserPromptSubmit hook additional context: <probe-json>from JSON</probe-json>" in joined
    assert PLAIN_PREFIX + '<memory-context source=".claude/memory/">' in joined
    assert attachments(run, "hook_additional_context")[0]["content"] == ["<probe-json>from JSON</probe-json>"]
    assert RUNBOOK in attachments(run, "hook_success")[0]["content"]


def test_follow_up_in_continued_session_is_enriched_from_the_transcript(claude, demo_project):
    # Rule 5 of the injection policy would drop the runbook in turn 2 (already injected in
    # turn 1, unchanged): turned off here to see enrichment alone (see the next test).
    # (the user's own setting: a project's config may not make the hook inject more)
    keep_repeats = {"MEMINDEX_CONFIG_JSON": '{"retrieval": {"skip_injected": false}}'}
    # a second hook records what Claude Code gives the UserPromptSubmit hooks on stdin
    inputs = demo_project / "hook-inputs.jsonl"
    record = 'cat >> "$CLAUDE_PROJECT_DIR/hook-inputs.jsonl"; echo >> "$CLAUDE_PROJECT_DIR/hook-inputs.jsonl"'
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": record}]}]}}
    (demo_project / ".claude" / "settings.json").write_text(json.dumps(settings))

    first = claude(demo_project, FLAKY_PROMPT, script=[say("Wait for Postgres with pg_isready before the tests.")], env=keep_repeats)
    second = claude(demo_project, FOLLOW_UP, "-c", script=[say("The service container was not ready.")], env=keep_repeats)

    hook_inputs = [json.loads(line) for line in inputs.read_text().splitlines() if line.strip()]
    assert [h["prompt"] for h in hook_inputs] == [FLAKY_PROMPT, FOLLOW_UP]
    transcript = hook_inputs[1]["transcript_path"]
    assert transcript == str(first.transcript), "the continued session writes on in the first session's transcript"
    assert FLAKY_PROMPT in Path(transcript).read_text()

    # the continued conversation: both prompts, the old block replayed, a new one for the follow-up
    texts = message_texts(second.last_body)
    assert any(t == FLAKY_PROMPT for _, _, t in texts) and any(t == FOLLOW_UP for _, _, t in texts)
    now = memory_contexts(second.last_body, since_last_prompt=True)
    assert len(now) == 1 and RUNBOOK in now[0][1], now
    assert len(memory_contexts(second.last_body)) == 2  # turn 1's block is sent again

    # control: the same follow-up in a new session (no transcript to enrich it) gets nothing
    alone = claude(demo_project, FOLLOW_UP, script=[say("What broke?")])
    assert memory_contexts(alone.last_body) == []


def test_continued_session_does_not_repeat_a_memory_until_it_changes(claude, demo_project):
    """Rule 5: the hook reads its own earlier blocks from the transcript (hook_success
    attachments) and does not inject the same memory twice in a session, unless its file
    changed since."""
    first = claude(demo_project, FLAKY_PROMPT, script=[say("Wait for Postgres with pg_isready.")])
    assert RUNBOOK in memory_contexts(first.last_body, since_last_prompt=True)[0][1]

    again = claude(demo_project, FLAKY_PROMPT, "-c", script=[say("Same as before.")])
    assert memory_contexts(again.last_body, since_last_prompt=True) == []
    assert len(memory_contexts(again.last_body)) == 1  # turn 1's block, sent again

    patch = '{"content": {"verification": "The integration job passes ten times in a row."}, "change_summary": "stricter check"}'
    assert json.loads(memindex(demo_project, "update", RUNBOOK, "--data", patch).stdout)["status"] == "updated"
    changed = claude(demo_project, FLAKY_PROMPT, "-c", script=[say("Updated runbook.")])
    now = memory_contexts(changed.last_body, since_last_prompt=True)
    assert len(now) == 1 and RUNBOOK in now[0][1], now


# --- the skills: memindex through the Bash tool ------------------------------------------------


def skill_search_command(source: Path, query: str = "flaky CI") -> str:
    """The search command skills/memory-search/SKILL.md teaches (its first bash block), with
    our query in place of its example's."""
    _, body = _skill_md(source, "memory-search")
    command = re.search(r"```bash\n(.*?)```", body, re.S).group(1).strip()
    assert command.startswith("memindex "), command
    return re.sub(r'"[^"]*"', json.dumps(query), command, count=1)


def test_model_runs_memindex_search_through_bash(claude, demo_project, installed):
    run = claude(demo_project, "search memories for flaky CI", allow("Bash(memindex search:*)"),
                 script=[bash(skill_search_command(installed.source), "Search project memories"), say("Found the runbook.")])
    [result] = result_for(run, "Bash")
    assert not result.get("is_error"), result
    assert RUNBOOK in result["text"]
    assert run.denials == []


def test_memindex_through_bash_needs_an_allow_rule_in_print_mode(claude, demo_project):
    run = claude(demo_project, "search memories for flaky CI",
                 script=[bash('memindex search "flaky CI"', "Search project memories"), say("I could not search.")])
    [result] = result_for(run, "Bash")
    assert result.get("is_error") and "requires approval" in result["text"], result
    assert [d["tool_name"] for d in run.denials] == ["Bash"]


def test_memory_search_skill_through_the_skill_tool(claude, demo_project, installed):
    """What a model-invoked skill needs in -p mode: an allow rule for the Skill itself and
    one for its Bash command."""
    script = [[tool_use("Skill", {"skill": "memindex:memory-search"})],
              bash(skill_search_command(installed.source), "Search project memories"),
              say("Found the runbook.")]
    run = claude(demo_project, "what do we know about flaky CI?",
                 allow("Skill(memindex:memory-search)", "Bash(memindex search:*)"), script=script)
    [launched] = result_for(run, "Skill")
    assert not launched.get("is_error"), launched
    skill_text = [t for _, role, t in message_texts(run.last_body) if role == "user" and "# Searching project memories" in t]
    assert len(skill_text) == 1
    assert skill_text[0].startswith(f"Base directory for this skill: {installed.source}/skills/memory-search")
    [searched] = result_for(run, "Bash")
    assert not searched.get("is_error") and RUNBOOK in searched["text"], searched
    assert run.denials == []


def test_skill_allowed_tools_cover_a_typed_slash_command_not_the_skill_tool(claude, demo_project, installed):
    search = bash(skill_search_command(installed.source), "Search project memories")
    # typed by the user: SKILL.md's `allowed-tools: Bash(memindex search:*)` applies, no rule needed
    typed = claude(demo_project, "/memindex:memory-search flaky CI", script=[search, say("Found it.")])
    [result] = result_for(typed, "Bash")
    assert not result.get("is_error") and RUNBOOK in result["text"], result
    assert typed.denials == []

    # invoked by the model through the Skill tool: the Skill needs a rule, and its
    # allowed-tools do not approve the Bash command that follows
    invoked = claude(demo_project, "what do we know about flaky CI?", allow("Skill(memindex:memory-search)"),
                     script=[[tool_use("Skill", {"skill": "memindex:memory-search"})], search, say("Denied.")])
    [result] = result_for(invoked, "Bash")
    assert result.get("is_error") and "requires approval" in result["text"], result
    assert [d["tool_name"] for d in invoked.denials] == ["Bash"]

    denied = claude(demo_project, "what do we know about flaky CI?",
                    script=[[tool_use("Skill", {"skill": "memindex:memory-search"})], say("Denied.")])
    [result] = result_for(denied, "Skill")
    assert result.get("is_error"), result
    assert [d["tool_name"] for d in denied.denials] == ["Skill"]


class SkillSaveRefused(AssertionError):
    """The save command written in skills/memory-save/SKILL.md is refused by Claude Code."""


def _skill_md(source: Path, name: str) -> tuple[list[str], str]:
    """(allowed-tools rules, body) of a plugin skill."""
    raw = (source / "skills" / name / "SKILL.md").read_text()
    front, body = raw.split("\n---\n", 1)
    tools = re.search(r"^allowed-tools:\s*(.+)$", front, re.M)
    return ([r.strip() for r in re.split(r",\s*(?=[A-Z])", tools.group(1))] if tools else []), body


def test_save_command_of_the_skill_runs_under_its_own_rules(claude, demo_project, installed):
    rules, body = _skill_md(installed.source, "memory-save")
    section = body[body.index("## 3."):]
    command = re.search(r"```bash\n(.*?)```", section, re.S).group(1).strip()
    assert command.startswith("memindex save")
    run = claude(demo_project, "remember this decision about JWT access tokens", allow(*rules),
                 script=[bash(command, "Save the decision as a memory"), say("Saved.")])
    [result] = result_for(run, "Bash")
    if result.get("is_error") or any(d["tool_name"] == "Bash" for d in run.denials):
        raise SkillSaveRefused(result["text"])
    assert json.loads(result["text"])["status"] == "created"


def trust(home: Path, project: Path) -> None:
    """What accepting the trust dialog of an interactive `claude` in `project` records."""
    config = home / ".claude.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    data.setdefault("projects", {}).setdefault(str(project), {})["hasTrustDialogAccepted"] = True
    config.write_text(json.dumps(data, indent=2))


def test_rules_of_memindex_init_let_the_model_use_both_skills(claude, fresh_demo_project, installed):
    """After `memindex init --write-settings` (the README's step 3), no --allowedTools: the
    model invokes both skills and runs the commands their SKILL.md teach, nothing refused.
    Claude Code applies a project's own permission rules only in a trusted folder: `-p` in
    a folder never trusted ignores them (its hooks still run)."""
    project = fresh_demo_project
    memindex(project, "init", "--write-settings")
    untrusted = claude(project, "what do we know about flaky CI?",
                       script=[[tool_use("Skill", {"skill": "memindex:memory-search"})], say("Denied.")])
    assert [d["tool_name"] for d in untrusted.denials] == ["Skill"]
    passed = claude(project, "what do we know about flaky CI?", "--settings", ".claude/settings.json",
                    script=[[tool_use("Skill", {"skill": "memindex:memory-search"})], say("Allowed.")])
    assert passed.denials == []

    trust(installed.home, project)
    _, save_body = _skill_md(installed.source, "memory-save")
    save = re.search(r"```bash\n(.*?)```", save_body[save_body.index("## 3."):], re.S).group(1).strip()
    script = [
        [tool_use("Skill", {"skill": "memindex:memory-search"})],
        bash(skill_search_command(installed.source), "Search project memories"),
        [tool_use("Skill", {"skill": "memindex:memory-save"})],
        bash(save, "Save the decision as a memory"),
        say("Searched and saved."),
    ]
    run = claude(project, "what do we know about flaky CI? and remember the JWT decision", script=script)
    assert run.denials == [], run.denials
    assert not any(r.get("is_error") for r in run.tool_results()), run.tool_results()
    searched, saved = result_for(run, "Bash")
    assert RUNBOOK in searched["text"]
    answer = json.loads(saved["text"])
    assert answer["status"] == "created" and (project / answer["path"]).is_file(), answer


def test_model_saves_memory_from_a_file_and_it_is_searchable_at_once(claude, demo_project):
    memory = {
        "title": "Kafka consumer rebalance storm after deploy",
        "tags": ["kafka", "consumers", "deploy"],
        "content": {"trigger": "Consumers of the zephyrqueue topic rebalance in a loop after each deploy",
                    "steps": ["Set session.timeout.ms to 45000", "Roll the consumers one at a time"],
                    "verification": "No rebalance in the consumer group log for ten minutes"},
        "confidence": 0.8,
    }
    draft = demo_project / "new-memory.json"
    script = [
        [tool_use("Write", {"file_path": str(draft), "content": json.dumps(memory, indent=2)})],
        bash("memindex save --category runbook --file new-memory.json", "Save the runbook memory"),
        bash('memindex search --no-sync "zephyrqueue rebalance"', "Search project memories"),
        say("Saved."),
    ]
    run = claude(demo_project, "remember how we fixed the kafka rebalance storm",
                 "--permission-mode", "acceptEdits", allow("Bash(memindex save:*)", "Bash(memindex search:*)"), script=script)
    assert run.denials == []
    saved, found = result_for(run, "Bash")
    answer = json.loads(saved["text"])
    assert answer["status"] == "created", answer
    assert answer["path"] == ".claude/memory/runbooks/kafka-consumer-rebalance-storm-after-deploy.json"
    assert (demo_project / answer["path"]).is_file()
    assert answer["path"] in found["text"]  # `search --no-sync`: the save indexed it
    assert search_paths(demo_project, "zephyrqueue rebalance")[:1] == [answer["path"]]


# --- the PreToolUse hook: memories of the file at hand ------------------------------------------

RATE_LIMITS = ".claude/memory/constraints/carrier-api-rate-limits.json"  # related_files: internal/carrier/ratelimit.go


# the PreToolUse hook on, as the user's own setting (a project's config may not turn it on)
TOOL_ANCHORS = {"MEMINDEX_CONFIG_JSON": json.dumps({"retrieval": {"tool_anchors": True}})}


def test_reading_an_anchored_file_brings_its_memory_to_the_model(claude, demo_project):
    """The prompt alone is too vague for the prompt hook (a prompt naming FedEx tracking
    gets the constraint at prompt time: it holds FedEx's tracking quota); when the model opens the rate
    limiter, the PreToolUse hook adds the carrier rate-limit constraint anchored to it, and
    the model receives it with the file's contents."""
    source = demo_project / "internal" / "carrier" / "ratelimit.go"
    source.parent.mkdir(parents=True)
    source.write_text("package carrier\n\n// Limiter is a token bucket shared through Redis.\ntype Limiter struct{}\n")
    run = claude(demo_project, "speed up the tracking requests poller",
                 script=[[tool_use("Read", {"file_path": str(source)})], say("Careful with the rate limits.")], env=TOOL_ANCHORS)
    assert [h["stdout"] for h in run.hook("UserPromptSubmit")] == [""]  # nothing at prompt time
    [pre] = run.hook("PreToolUse")
    assert pre["exit_code"] == 0
    spec = json.loads(pre["stdout"])["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse" and RATE_LIMITS in spec["additionalContext"]
    [added] = [a for a in attachments(run, "hook_additional_context") if a.get("hookName") == "PreToolUse:Read"]
    assert RATE_LIMITS in "".join(added["content"])
    blocks = memory_contexts(run.last_body)
    assert len(blocks) == 1 and RATE_LIMITS in blocks[0][1], blocks
    assert not any(r.get("is_error") for r in run.tool_results())  # the Read itself ran


def test_a_memory_the_prompt_hook_showed_is_not_repeated_when_its_file_is_opened(claude, demo_project):
    """The flaky-CI runbook names .github/workflows/ci.yml: injected for the prompt, it is
    not injected again when the model opens that file (the real transcript's hook_success)."""
    workflow = demo_project / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("name: ci\non: [push]\n")
    run = claude(demo_project, FLAKY_PROMPT, script=[[tool_use("Read", {"file_path": str(workflow)})], say("ok")], env=TOOL_ANCHORS)
    assert RUNBOOK in run.hook("UserPromptSubmit")[0]["stdout"]
    [pre] = run.hook("PreToolUse")
    assert pre["exit_code"] == 0 and RUNBOOK not in pre["stdout"]
    assert sum(RUNBOOK in text for _, text in memory_contexts(run.last_body)) == 1


# --- the PostToolUse hook ----------------------------------------------------------------------


def test_write_under_claude_memory_is_refused_in_print_mode(claude, demo_project):
    target = demo_project / ".claude" / "memory" / "runbooks" / "quokka-cache-warmup.json"
    run = claude(demo_project, "add a runbook", "--permission-mode", "acceptEdits",
                 allow("Write(/.claude/memory/**)", "Edit(/.claude/memory/**)"),
                 script=[[tool_use("Write", {"file_path": str(target), "content": "{}"})], say("Refused.")])
    [result] = result_for(run, "Write")
    assert result.get("is_error") and "sensitive file" in result["text"], result
    assert [d["tool_name"] for d in run.denials] == ["Write"]
    assert not target.exists()
    assert run.hook("PostToolUse") == []


def test_post_tool_use_reindexes_memory_files_written_by_the_model(claude, demo_project, tools):
    """The model writes a new memory (Write) and edits one in place (Read, Edit): each is
    found by `search --no-sync` within 2 s of its tool result, while a memory written at the
    same time outside Claude Code (a plain file write, no tool, so no hook) is not: the
    PostToolUse hook's sync indexed the model's files, not some other sync (issue 36, 8:
    this test once passed because SessionStart's full sync, racing the scripted model's
    first Write, or the Edit's full sync indexed the new file; the hook's own sync was a
    full walk too, and indexed the control file)."""
    root = demo_project / ".claude" / "memory"
    edited = demo_project / RUNBOOK
    old_title = json.loads(edited.read_text())["title"]
    new_rel = ".claude/memory/runbooks/quokka-cache-warmup.json"
    new_doc = json.loads(edited.read_text()) | {"id": "quokka-cache-warmup", "title": "Quokka cache warmup after restart",
                                                "tags": ["cache", "quokka"]}
    control = root / "constraints" / "numbat-quota.json"
    control_doc = json.loads((root / "constraints" / "cloud-sql-connection-limit.json").read_text()) | {
        "id": "numbat-quota", "title": "Numbat API quota is 40 calls a minute", "tags": ["numbat"]}
    seen: dict[str, object] = {}
    started_ns = time.time_ns()

    def write_new(body):
        # SessionStart's background full sync is done (else it could take the control file)
        seen["quiet"] = wait_for(lambda: quiet_since(root, started_ns), timeout=20)
        control.write_text(json.dumps(control_doc, indent=2))  # outside Claude Code: no tool, no hook
        return [tool_use("Write", {"file_path": str(demo_project / new_rel), "content": json.dumps(new_doc, indent=2)})]

    def after_write(body):  # the request that brings the Write's result
        started = time.monotonic()
        seen["write"] = found_within(demo_project, "quokka", new_rel, 2.0)
        time.sleep(max(0.0, 2.0 - (time.monotonic() - started)))
        seen["control"] = search_paths(demo_project, "numbat")  # 2 s after the Write's result
        return [tool_use("Read", {"file_path": str(edited)})]

    def edit(body):
        return [tool_use("Edit", {"file_path": str(edited), "old_string": old_title, "new_string": old_title + " (wombat)"})]

    def after_edit(body):
        seen["edit"] = found_within(demo_project, "wombat", RUNBOOK, 2.0)
        seen["control_later"] = search_paths(demo_project, "numbat")
        return say("Updated.")

    # Only bypassPermissions lets Write/Edit touch .claude/ in -p mode (see the test above);
    # as root the CLI accepts it only with IS_SANDBOX=1.
    env = {"IS_SANDBOX": "1"} if tools.root_user else {}
    run = claude(demo_project, "add a quokka runbook and retitle the flaky CI runbook",
                 "--permission-mode", "bypassPermissions", script=[write_new, after_write, edit, after_edit], env=env)
    assert not any(r.get("is_error") for r in run.tool_results()), run.tool_results()
    post = run.hook("PostToolUse")
    assert sorted(h["hook_name"] for h in post) == ["PostToolUse:Edit", "PostToolUse:Write"], post
    assert all(h["exit_code"] == 0 and h["stdout"] == "" and h["stderr"] == "" for h in post), post
    assert seen["quiet"], "SessionStart's background sync did not finish"
    assert seen["write"] is not None, f"the memory the model wrote was not searchable within 2 s of the Write's result: {seen}"
    assert seen["edit"] is not None, f"the memory the model edited was not re-indexed within 2 s of the Edit's result: {seen}"
    # the control file, written just before the Write, is not indexed 2 s after the Write's result, nor later
    assert seen["control"] == [] and seen["control_later"] == [], seen
    # (once the session ends, its capture's sync may walk the store and take the control file)
    memindex(demo_project, "sync", "--quiet")
    assert search_paths(demo_project, "numbat") == [".claude/memory/constraints/numbat-quota.json"]  # a valid memory


# --- SessionStart, hook exits, cold start --------------------------------------------------------


def test_session_start_indexes_a_fresh_project(claude, fresh_demo_project):
    root = fresh_demo_project / ".claude" / "memory"
    assert not (root / ".index.db").exists()
    count = len(list(root.glob("*/*.json")))
    run = claude(fresh_demo_project, "hi", script=[say("Hello.")])  # under 10 characters: no injection
    [start] = run.hook("SessionStart")
    assert start["hook_name"] == "SessionStart:startup" and start["exit_code"] == 0
    assert start["stdout"] == "" and start["stderr"] == ""
    # the Stop hook's background capture adds the session's own summary (sessions-local/)
    assert wait_for(lambda: (root / "sessions-local" / f"session-{run.session_id}.json").exists(), timeout=30)
    status = wait_for(lambda: (root / ".index.db").exists() and json.loads(memindex(fresh_demo_project, "status", "--json").stdout))
    assert status and status["memories"] == count + 1 and not status["stale"], status


def test_hooks_exit_0_and_say_nothing_without_a_memory_folder(claude, tmp_path):
    project = tmp_path / "no-memories"
    project.mkdir()
    run = claude(project, FLAKY_PROMPT, script=[say("No memories here.")])  # checks every hook exits 0
    assert {h["hook_event"] for h in run.hooks} == {"SessionStart", "UserPromptSubmit", "Stop"}
    assert all(h["stdout"] == "" and "no .claude/memory above" in h["stderr"] for h in run.hooks)
    assert memory_contexts(run.last_body) == []
    assert not any("memindex hook" in t for _, _, t in message_texts(run.last_body))  # stderr stays out
    assert not (project / ".claude").exists()


class ColdStartGap(AssertionError):
    """The first prompt in a project without an index got no memory-context."""


def assert_as_cloned(project: Path) -> None:
    """Memories only: no index, no index.md, no config, no settings, no session yet."""
    root = project / ".claude" / "memory"
    derived = [p.name for p in root.iterdir() if p.is_file()]
    assert derived == [], derived
    assert sorted(p.name for p in (project / ".claude").iterdir()) == ["memory"]


def test_first_prompt_of_the_first_session_in_the_demo_project_gets_memory_context(claude, fresh_demo_project):
    """examples/demo-project as cloned (30 memories), plugin installed, nothing run by
    hand: the very first prompt of the very first session gets its block."""
    assert_as_cloned(fresh_demo_project)
    assert len(list((fresh_demo_project / ".claude" / "memory").glob("*/*.json"))) == 30
    run = claude(fresh_demo_project, FLAKY_PROMPT, script=[say("ok")])
    assert len(run.main_requests) == 1  # the first prompt of the session
    blocks = memory_contexts(run.last_body, since_last_prompt=True)
    if not blocks:
        raise ColdStartGap("; ".join(h["stderr"].strip() for h in run.hooks))
    assert len(blocks) == 1 and RUNBOOK in blocks[0][1], blocks


def test_first_prompt_in_a_project_without_index_gets_memory_context(claude, tmp_path, installed):
    """The same with 4,000 more memories (under COLD_SYNC_MAX_FILES, 5,000): the hooks build
    the index in the foreground within their budget."""
    project = copy_demo(installed.source, tmp_path / "big-project")
    _add_fillers(project / ".claude" / "memory", 4000)
    assert_as_cloned(project)

    cold = claude(project, FLAKY_PROMPT, script=[say("ok")])
    cold_blocks = memory_contexts(cold.last_body)

    # control: once the index exists the same prompt gets the runbook (a real failure if not)
    assert wait_for(lambda: not json.loads(memindex(project, "status", "--json", check=False).stdout or "{}").get("stale", True),
                    timeout=30)
    warm = claude(project, FLAKY_PROMPT, script=[say("ok")])
    warm_blocks = memory_contexts(warm.last_body)
    assert len(warm_blocks) == 1 and RUNBOOK in warm_blocks[0][1], warm_blocks

    if not cold_blocks:
        raise ColdStartGap("; ".join(h["stderr"].strip() for h in cold.hook("UserPromptSubmit")))
    assert RUNBOOK in cold_blocks[0][1]


def _add_fillers(root: Path, n: int) -> None:
    """n valid decisions whose words are unrelated to the demo store."""
    words = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar "
             "papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
    folder = root / "decisions"
    for i in range(n):
        w = [words[(i * k + k) % len(words)] for k in (1, 3, 5, 7, 11, 13)]
        doc = {
            "schema_version": "1.0", "category": "decision", "id": f"filler-{i:05d}",
            "title": f"Filler decision {i} about {w[0]} {w[1]}",
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z", "tags": ["filler", w[2]],
            "content": {"status": "accepted", "context": " ".join(w * 5), "decision": f"Use {w[3]} for {w[4]} {w[5]}."},
            "related_files": [], "confidence": 0.5, "record_status": "active", "changes": [], "times_updated": 0,
            "retired_at": None, "retired_reason": None, "archived_at": None, "archived_reason": None,
        }
        (folder / f"filler-{i:05d}.json").write_text(json.dumps(doc))


def test_session_start_tells_the_user_about_broken_memories_not_the_model(claude, demo_project):
    """Issue 26, finding 7: a memory with a JSON typo vanished without a word. The
    SessionStart hook's `systemMessage` (Claude Code's "Warning message shown to the
    user") names it; the model's request does not carry it."""
    broken = demo_project / ".claude" / "memory" / "decisions" / "typo.json"
    broken.write_text('{"category": "decision", "title": "Broken",')
    memindex(demo_project, "sync", "--quiet")
    run = claude(demo_project, "hi", script=[say("Hello.")])
    [start] = run.hook("SessionStart")
    assert start["exit_code"] == 0
    said = json.loads(start["stdout"])
    assert "decisions/typo.json" in said["systemMessage"] and "memindex doctor" in said["systemMessage"]
    # Read as JSON, not plain stdout: plain SessionStart stdout would reach the model as context.
    assert not any("typo.json" in t for _, _, t in message_texts(run.last_body))
    # `claude -p --output-format stream-json` emits no event of its own for it (2.1.197): the
    # message is for the interactive UI, which this suite does not drive.
