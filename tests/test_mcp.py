"""`memindex mcp` through the official SDK's own client over stdio: each tool, the errors
a model can cause (the server answers them and lives on), read-only mode, the index kept
fresh while the server runs, and a project that has no memory root yet."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcpkit import call, run_session  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo-project"
WRITE_TOOLS = {"save", "update", "retire", "keep", "merge"}
READ_TOOLS = {"search", "get", "recent_sessions", "explain", "review"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    shutil.copytree(DEMO, proj, ignore=shutil.ignore_patterns(".index.db*", ".index.lock", "*.log*"))
    return proj


def test_read_tools_answer_and_errors_leave_the_server_alive(project: Path) -> None:
    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await s.list_tools()).tools}}
        out["search"] = await call(s, "search", query="deploy staging argo", limit=3)
        out["runbooks_only"] = await call(s, "search", query="postgres", category="runbook")
        out["get"] = await call(s, "get", path=".claude/memory/decisions/ulid-shipment-ids.json")
        out["get_short"] = await call(s, "get", path="decisions/ulid-shipment-ids")
        out["recent"] = await call(s, "recent_sessions", limit=2)
        out["explain"] = await call(s, "explain", prompt="how do we deploy to staging with argo cd?")
        out["escape"] = await call(s, "get", path="../../../../etc/passwd")
        out["absolute"] = await call(s, "get", path="/etc/passwd")
        out["missing"] = await call(s, "get", path="decisions/no-such-memory.json")
        out["limit0"] = await call(s, "search", query="deploy", limit=0)
        out["bad_category"] = await call(s, "search", query="deploy", category="recipes")
        out["no_query"] = await call(s, "search")
        unknown = await s.call_tool("no_such_tool", {})
        out["unknown"] = unknown.is_error
        out["after"] = await call(s, "search", query="ULID shipment ids", limit=1)
        return out

    out = run_session(["--root", str(project), "mcp"], body)
    assert out["tools"] == READ_TOOLS | WRITE_TOOLS
    error, text = out["search"]
    lines = text.splitlines()
    assert not error and len(lines) == 3
    assert lines[0].startswith("1. [RUNBOOK] Deploy to staging with Argo CD | #")
    assert lines[0].endswith("| .claude/memory/runbooks/deploy-to-staging-with-argocd.json")
    error, text = out["runbooks_only"]
    assert not error and text and all("[RUNBOOK" in line for line in text.splitlines())
    on_disk = (project / ".claude/memory/decisions/ulid-shipment-ids.json").read_bytes()
    for key in ("get", "get_short"):
        error, text = out[key]
        answer = json.loads(text)
        assert not error and answer["path"] == ".claude/memory/decisions/ulid-shipment-ids.json"
        assert answer["memory"] == json.loads(on_disk)
        import hashlib

        assert answer["sha256"] == hashlib.sha256(on_disk).hexdigest()
    error, text = out["recent"]
    assert not error and len(text.splitlines()) == 2 and all("[SESSION_SUMMARY]" in l for l in text.splitlines())
    error, text = out["explain"]
    assert not error and ".claude/memory/runbooks/deploy-to-staging-with-argocd.json" in json.loads(text)["injected"]
    for key in ("escape", "absolute", "missing"):
        error, text = out[key]
        assert error and "passwd" not in text.replace("/etc/passwd", "") and "root:" not in text, (key, text)
    assert "no memory at .claude/memory/decisions/no-such-memory.json" in out["missing"][1]
    for key in ("limit0", "bad_category", "no_query"):
        assert out[key][0], key
    assert "greater than or equal to 1" in out["limit0"][1]
    assert out["unknown"]
    assert out["after"] == (False, out["after"][1]) and "ulid-shipment-ids.json" in out["after"][1]


def test_write_tools_go_through_the_candidate_flow_and_the_write_path(project: Path) -> None:
    memory = {
        "title": "Carrier webhooks retry with exponential backoff",
        "tags": ["webhooks", "carriers"],
        "content": {"status": "accepted", "context": "Carrier webhooks time out under load.",
                    "decision": "Retry failed carrier webhook deliveries with exponential backoff, at most 8 times."},
    }

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["created"] = json.loads((await call(s, "save", category="decision", data=memory))[1])
        out["again"] = json.loads((await call(s, "save", category="decision", data=memory))[1])
        out["found"] = await call(s, "search", query="carrier webhook backoff", limit=1)
        path, sha = out["created"]["path"], out["created"]["sha256"]
        out["invalid"] = await call(s, "save", category="decision", data={"title": "x" * 300, "tags": ["a"], "content": {}})
        out["stale_hash"] = await call(s, "update", path=path, data={"change_summary": "x"}, expect_hash="0" * 64)
        out["updated"] = json.loads((await call(
            s, "update", path=path, expect_hash=sha,
            data={"content": {"decision": "Retry with exponential backoff, at most 5 times."}, "change_summary": "8 to 5"},
        ))[1])
        out["outside"] = await call(s, "retire", path="../../README.md", reason="x")
        out["retired"] = json.loads((await call(s, "retire", path=path, reason="replaced by the queue"))[1])
        out["gone"] = await call(s, "search", query="carrier webhook backoff", limit=3)
        return out

    out = run_session(["--root", str(project), "mcp"], body)
    created = out["created"]
    assert created["status"] == "created"
    assert created["path"] == ".claude/memory/decisions/carrier-webhooks-retry-with-exponential-backoff.json"
    assert out["again"]["status"] == "not_saved"
    assert out["again"]["candidate"]["recommendation"] in ("NOOP", "UPDATE")
    assert out["again"]["candidate"]["candidate"]["path"] == created["path"]
    assert created["path"] in out["found"][1]
    error, text = out["invalid"]
    assert error and "title" in text
    error, text = out["stale_hash"]
    assert error and "changed" in text
    assert out["updated"]["status"] == "updated" and out["updated"]["changed"] == ["content.decision"]
    assert out["outside"][0]
    assert out["retired"]["record_status"] == "retired"
    assert created["path"] not in out["gone"][1]
    saved = json.loads((project / created["path"]).read_text())
    assert saved["record_status"] == "retired" and "at most 5 times" in saved["content"]["decision"]
    assert len(list((project / ".claude/memory/decisions").glob("carrier-*.json"))) == 1


def test_read_only_lists_and_runs_no_write_tool(project: Path) -> None:
    async def body(s: ClientSession) -> dict[str, Any]:
        return {
            "tools": {t.name for t in (await s.list_tools()).tools},
            "save": await call(s, "save", category="decision", data={"title": "t", "tags": ["a"], "content": {}}),
            "search": await call(s, "search", query="ULID", limit=1),
        }

    before = sorted(p.name for p in (project / ".claude/memory/decisions").iterdir())
    out = run_session(["--root", str(project), "mcp", "--read-only"], body)
    assert out["tools"] == READ_TOOLS
    assert out["save"][0] and "save" in out["save"][1]
    assert not out["search"][0] and "ulid-shipment-ids" in out["search"][1]
    assert sorted(p.name for p in (project / ".claude/memory/decisions").iterdir()) == before


def test_the_index_follows_the_files_while_the_server_runs(project: Path) -> None:
    """A memory written by hand (or by git pull) after the server started is found by the
    next search: the CLI's sync-before-search rule, applied per call."""
    note = project / ".claude/memory/constraints/quokka-quota.json"

    async def body(s: ClientSession) -> tuple[str, str]:
        first = (await call(s, "search", query="quokka quota", limit=3))[1]
        data = json.loads((project / ".claude/memory/constraints/carrier-api-rate-limits.json").read_text())
        data.update(id="quokka-quota", title="Quokka API quota is 40 calls a minute", tags=["quokka"])
        note.write_text(json.dumps(data))
        second = (await call(s, "search", query="quokka quota", limit=3))[1]
        return first, second

    first, second = run_session(["--root", str(project), "mcp"], body)
    assert "quokka" not in first
    assert second.startswith("1. [CONSTRAINT] Quokka API quota is 40 calls a minute")


def test_a_project_without_memories_gets_a_server_that_says_what_to_do(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()

    async def body(s: ClientSession) -> tuple[tuple[bool, str], tuple[bool, str]]:
        before = await call(s, "search", query="anything")
        subprocess.run([sys.executable, "-m", "memindex", "init"], cwd=bare, check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
        return before, await call(s, "recent_sessions")

    before, after = run_session(["mcp"], body, cwd=bare)
    assert before[0] and "memindex init" in before[1]
    assert after == (False, "no session summary yet")


def test_the_plugin_starts_the_server_isolated_from_the_project(project: Path) -> None:
    """.mcp.json's command as Claude Code runs it (`python3 -I <plugin>/hooks/memindex_mcp.py`,
    here with this interpreter): the plugin's package, never a `memindex` of the project's."""
    config = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["memindex"]
    assert config["command"] == "python3" and config["args"][0] == "-I" and config["alwaysLoad"] is True
    script = Path(config["args"][1].replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)))
    assert script.is_file()
    shadow = project / "memindex"  # a package of the project's that must not shadow ours
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise SystemExit('the project shadowed memindex')\n")
    async def body(s: ClientSession) -> str:
        return (await call(s, "search", query="ULID shipment", limit=1))[1]

    found = run_session(["-I", str(script)], body, cwd=project, env={"PYTHONPATH": str(project)})
    assert found.startswith("1. [DECISION] Use ULIDs for shipment_id")


def test_the_review_tool_gives_the_queue_and_keep_acknowledges(project: Path) -> None:
    """The same queue as `memindex review --json`, and `keep` through the server."""
    def cli_items() -> list[dict]:
        out = subprocess.run([sys.executable, "-m", "memindex", "--root", str(project), "review", "--json"],
                             capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout)["items"]

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"review": json.loads((await call(s, "review"))[1])}
        items = out["review"]["items"]
        if items:
            out["keep"] = json.loads((await call(s, "keep", path=items[0]["path"]))[1])
            out["after"] = json.loads((await call(s, "review", fresh=False))[1])
        out["bad_kind"] = await call(s, "review", kind=["nonsense"])
        return out

    expected = cli_items()
    out = run_session(["--root", str(project), "mcp"], body)
    items = out["review"]["items"]
    assert items == expected and items, "the demo project holds at least one item (its Redux and TanStack decisions)"
    assert all(set(i) - {"other_path"} == {"kind", "path", "reason", "evidence", "suggested"} for i in items)
    assert out["keep"]["status"] == "kept" and out["keep"]["path"] == items[0]["path"]
    assert items[0] not in out["after"]["items"]
    assert out["bad_kind"][0]  # the SDK's validation: one of the five kinds
