"""The MCP server's own watch on the memory root (memindex/watch/resident.py), through the
official SDK's client connected in process: while nothing changed the server answers
without checking every memory file, and every change is in the next answer, including
those the watch cannot see (a memory file edited through a hard link outside the root,
no inotify at all): then it makes the CLI's own check."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

pytest.importorskip("mcp")
import anyio  # noqa: E402
from mcp import Client  # noqa: E402

from memindex.mcp.server import Project, build  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo-project"
TEMPLATE = "constraints/carrier-api-rate-limits.json"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    shutil.copytree(DEMO, proj, ignore=shutil.ignore_patterns(".index.db*", ".index.lock", "*.log*"))
    return proj


def serve(project: Path, body: Callable[[Client, Project], Awaitable[Any]]) -> Any:
    """`body(client, project)` against a server of this project, in this process."""
    served = Project(str(project / ".claude" / "memory"), str(project), explicit=True)
    result: list[Any] = []

    async def main() -> None:
        async with Client(build(served)) as client:
            result.append(await body(client, served))

    anyio.run(main)
    return result[0]


async def search(client: Client, query: str) -> str:
    answer = await client.call_tool("search", {"query": query, "limit": 3})
    assert not answer.is_error, answer
    return "".join(getattr(c, "text", "") for c in answer.content)


def memory(root: Path, mem_id: str, title: str) -> bytes:
    data = json.loads((root / TEMPLATE).read_text())
    data.update(id=mem_id, title=title, tags=[mem_id.split("-")[0]])
    return json.dumps(data).encode()


def test_the_watch_spares_the_check_and_every_change_is_in_the_next_answer(project: Path, tmp_path: Path) -> None:
    root = project / ".claude" / "memory"
    note = root / "constraints" / "quokka-quota.json"
    outside = tmp_path / "elsewhere.json"

    async def body(client: Client, served: Project) -> dict[str, Any]:
        watch = served.watch
        out: dict[str, Any] = {"why": watch.why}
        out["before"] = await search(client, "quokka quota")
        await search(client, "quokka quota")
        out["vouched_quiet"] = watch.checks["vouched"]

        note.write_bytes(memory(root, "quokka-quota", "Quokka API quota is 40 calls a minute"))
        out["created"] = await search(client, "quokka quota")

        st = os.stat(note)  # an edit in place that keeps the size and the mtime
        note.write_bytes(memory(root, "quokka-quota", "Quokka API quota is 90 calls a minute"))
        os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.stat(note).st_size == st.st_size
        out["edited"] = await search(client, "quokka quota")
        out["vouched_after"] = (await search(client, "quokka quota"), watch.checks["vouched"])

        note.unlink()
        out["deleted"] = await search(client, "quokka quota")

        # a memory file with another name outside the root: edits there raise no event here
        outside.write_bytes(memory(root, "wombat-limits", "Wombat limits are 10 a second"))
        os.link(outside, root / "constraints" / "wombat-limits.json")
        out["linked"] = await search(client, "wombat limits")
        vouched = watch.checks["vouched"]
        with open(outside, "r+b") as fh:  # in place, same size, through the other name
            fh.write(memory(root, "wombat-limits", "Wombat limits are 99 a second"))
        out["linked_edit"] = await search(client, "wombat limits")
        out["linked_edit_again"] = await search(client, "wombat limits")
        out["vouched_while_linked"] = watch.checks["vouched"] - vouched
        return out

    out = serve(project, body)
    assert out["why"] == ""  # inotify here: the watch runs
    assert "quokka" not in out["before"].lower()
    assert out["vouched_quiet"] >= 1  # nothing changed: answered without the stat pass
    assert out["created"].startswith("1. [CONSTRAINT] Quokka API quota is 40 calls a minute")
    assert out["edited"].startswith("1. [CONSTRAINT] Quokka API quota is 90 calls a minute")
    again, vouched = out["vouched_after"]
    assert again == out["edited"] and vouched > out["vouched_quiet"]  # settled again after one check
    assert "quokka" not in out["deleted"].lower()
    assert out["linked"].startswith("1. [CONSTRAINT] Wombat limits are 10 a second")
    assert out["linked_edit"].startswith("1. [CONSTRAINT] Wombat limits are 99 a second")
    assert out["linked_edit_again"] == out["linked_edit"]
    assert out["vouched_while_linked"] == 0  # a hard link it cannot see through: the stat pass each time


def test_without_inotify_each_call_checks_the_files(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The observer cannot start (the inotify watch limit, ENOSPC): the server says so
    once and makes the CLI's check on every call, so an edit in place is still seen."""
    from watchdog.observers.api import BaseObserver

    def no_inotify(self: object) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(BaseObserver, "start", no_inotify)
    root = project / ".claude" / "memory"
    note = root / "constraints" / "quokka-quota.json"

    async def body(client: Client, served: Project) -> dict[str, Any]:
        out: dict[str, Any] = {"why": served.watch.why}
        note.write_bytes(memory(root, "quokka-quota", "Quokka API quota is 40 calls a minute"))
        out["created"] = await search(client, "quokka quota")
        st = os.stat(note)
        note.write_bytes(memory(root, "quokka-quota", "Quokka API quota is 90 calls a minute"))
        os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
        out["edited"] = await search(client, "quokka quota")
        out["checks"] = dict(served.watch.checks)
        return out

    out = serve(project, body)
    assert "inotify watch limit reached" in out["why"]
    assert out["created"].startswith("1. [CONSTRAINT] Quokka API quota is 40 calls a minute")
    assert out["edited"].startswith("1. [CONSTRAINT] Quokka API quota is 90 calls a minute")
    assert out["checks"]["vouched"] == 0


def test_the_server_process_answers_each_change_next(project: Path) -> None:
    """The same through `memindex mcp` over stdio (the SDK's stdio client): create, an edit
    in place that keeps the size and the mtime, delete; each is in the next answer."""
    from mcpkit import call, run_session

    root = project / ".claude" / "memory"
    note = root / "constraints" / "quokka-quota.json"

    async def body(s: Any) -> list[str]:
        out = [(await call(s, "search", query="quokka quota", limit=3))[1]]
        note.write_bytes(memory(root, "quokka-quota", "Quokka API quota is 40 calls a minute"))
        out.append((await call(s, "search", query="quokka quota", limit=3))[1])
        st = os.stat(note)
        note.write_bytes(memory(root, "quokka-quota", "Quokka API quota is 90 calls a minute"))
        os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
        out.append((await call(s, "search", query="quokka quota", limit=3))[1])
        note.unlink()
        out.append((await call(s, "search", query="quokka quota", limit=3))[1])
        return out

    before, created, edited, deleted = run_session(["--root", str(project), "mcp"], body)
    assert "quokka" not in before.lower()
    assert created.startswith("1. [CONSTRAINT] Quokka API quota is 40 calls a minute")
    assert edited.startswith("1. [CONSTRAINT] Quokka API quota is 90 calls a minute")
    assert "quokka" not in deleted.lower()
