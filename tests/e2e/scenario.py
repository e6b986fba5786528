"""The demo project's scenario, shared by the end-to-end tests: the prompts, the runbook the
flaky-CI prompt must recall, and the fake model's building blocks (a text answer, a Bash call,
the --allowedTools argument, the results a tool call got back)."""

from __future__ import annotations

from fake_api import text, tool_use

RUNBOOK = ".claude/memory/runbooks/flaky-ci-integration-tests-postgres.json"
FLAKY_PROMPT = "Our CI is flaky: integration tests fail before Postgres is ready. What did we do last time?"
FOLLOW_UP = "why did that break again?"
UNRELATED_PROMPT = "Write a haiku about autumn leaves falling in the park"
PLAIN_PREFIX = "UserPromptSubmit hook success: "  # how Claude Code 2.1.x labels a hook's plain stdout


def bash(command: str, description: str = "Run a command") -> list[dict]:
    return [tool_use("Bash", {"command": command, "description": description})]


def say(value: str) -> list[dict]:
    return [text(value)]


def allow(*rules: str) -> str:
    # one argument: --allowedTools is variadic and would swallow a following prompt
    return "--allowedTools=" + ",".join(rules)


def result_for(run, tool_name: str) -> list[dict]:
    """tool_result blocks answering the fake model's calls of one tool, in order."""
    body = run.last_body
    ids = [b["id"] for m in body["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)
           for b in m["content"] if b.get("type") == "tool_use" and b.get("name") == tool_name]
    return [r for r in run.tool_results() if r["tool_use_id"] in ids]
