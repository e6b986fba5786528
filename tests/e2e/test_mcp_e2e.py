"""The plugin's MCP server in the real Claude Code CLI: `.mcp.json` starts
`python3 -I hooks/memindex_mcp.py` with the plugin, the scripted model calls its `search`
tool and receives the memory the project holds."""

from __future__ import annotations

import json

from fake_api import tool_use
from scenario import FLAKY_PROMPT, RUNBOOK, allow, result_for, say

SEARCH = "mcp__plugin_memindex_memindex__search"  # Claude Code's name: plugin, server, tool
GET = "mcp__plugin_memindex_memindex__get"


def test_model_calls_the_plugin_mcp_search_tool_and_gets_the_memory(claude, demo_project):
    seen: dict[str, list[str]] = {}

    def search(body: dict) -> list[dict]:
        seen["tools"] = [t["name"] for t in body["tools"]]
        return [tool_use(SEARCH, {"query": "flaky CI integration tests postgres", "limit": 3})]

    run = claude(demo_project, FLAKY_PROMPT, allow(SEARCH, GET),
                 script=[search, [tool_use(GET, {"path": RUNBOOK})], say("Found the runbook.")])
    ours = sorted(n for n in seen["tools"] if n.startswith("mcp__plugin_memindex_memindex__"))
    assert ours == sorted(f"mcp__plugin_memindex_memindex__{t}" for t in
                          ("search", "get", "recent_sessions", "explain", "review", "save", "update", "retire", "keep", "merge")), seen["tools"]
    [result] = result_for(run, SEARCH)
    assert not result.get("is_error"), result
    first = result["text"].splitlines()[0]
    assert first.startswith("1. [RUNBOOK] ") and first.endswith(f"| {RUNBOOK}"), result["text"]
    [opened] = result_for(run, GET)
    memory = json.loads(opened["text"])
    on_disk = json.loads((demo_project / RUNBOOK).read_text())
    assert memory["path"] == RUNBOOK and memory["memory"] == on_disk
    assert run.denials == []
