#!/usr/bin/env python3
"""MCP server costs: `search` round trip on a running `memindex mcp` against the process
time of `memindex search --no-sync` (same queries, same store, runs interleaved in one
series, with the interpreter's floor `python -c 'import sqlite3, json'`), the same server
with `--no-watch` (every call checks every memory file, as before the server's own
watch), the time inside the server (the search tool through the SDK's client in this
process, and its engine call alone), the server's start (spawn to the `initialize`
answer) and its memory, and the tokens of the tool list a client puts in context.

    python scripts/bench_mcp.py [--size 10000] [--runs 30] [--starts 7]

This tree is installed (not editable: an editable install's import hooks slow every
process start, and would flatter the resident server) into a throwaway virtualenv that
reads its dependencies (the MCP SDK) from this interpreter's site-packages. The server is
driven over its stdin/stdout with plain JSON-RPC lines, so the figure is the server's
and the pipe's, not a client library's. Tokens are counted as characters / 4 of the
compact `tools/list` JSON (no tokenizer is downloaded). The machine's load average is
printed before and after: quote the ratios, measured in one run, not the milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex.config import Config  # noqa: E402
from memindex_dev.evaluation.bench import percentiles, time_process  # noqa: E402
from memindex_dev.evaluation.genstore import generate  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
QUERIES = ["flaky integration tests in CI", "stripe webhook signature 400", "how do we deploy the api"]
PROTOCOL = "2025-06-18"


class Server:
    """One `memindex mcp` process spoken to in JSON-RPC lines."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "bench_mcp", "version": "0"}})
        self.start_s = time.perf_counter() - started
        self.notify("notifications/initialized")

    def notify(self, method: str) -> None:
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed its output during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def rss_mib(self) -> tuple[float, float]:
        """(resident now, peak) in MiB, from /proc."""
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines() if ":" in line)
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def tool_list_tokens(server: Server) -> tuple[int, int, int]:
    """(tools, characters, characters / 4) of the compact tools/list JSON."""
    tools = server.request("tools/list", {})["tools"]
    text = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    return len(tools), len(text), round(len(text) / 4)


def _load(avg: tuple[float, float, float]) -> str:
    return " / ".join(f"{v:.2f}" for v in avg)


def in_process(root: Path, runs: int) -> list[tuple[str, list[float]]]:
    """Inside the server: the search tool through the SDK's own client connected in this
    process (the server's dispatch, no pipe), and the engine call it makes (with the
    server's watch, and with the stat pass it spares)."""
    import anyio
    from mcp import Client

    from memindex.config import load_config
    from memindex.mcp.server import Project, build
    from memindex.policy.recall import format_hits, search_hits

    project = Project(str(root), str(root), explicit=True)
    tool, engine, checked = [], [], []

    async def main() -> None:
        async with Client(build(project)) as client:
            for i in range(runs + len(QUERIES)):
                started = time.perf_counter()
                answer = await client.call_tool("search", {"query": QUERIES[i % len(QUERIES)]})
                if i >= len(QUERIES):  # (warm first)
                    tool.append(time.perf_counter() - started)
                if answer.is_error:
                    raise RuntimeError(answer)
            cfg = load_config(str(root))
            for i in range(runs):
                for watch, times in ((project.watch, engine), (None, checked)):
                    started = time.perf_counter()
                    format_hits(search_hits(str(root), cfg, QUERIES[i % len(QUERIES)], watch=watch), "")
                    times.append(time.perf_counter() - started)

    anyio.run(main)
    return [("inside: the search tool via the SDK's client, in process", tool),
            ("inside: its engine call (search_hits with the watch)", engine),
            ("inside: the same, checking every file (no watch)", checked)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--starts", type=int, default=7, help="server starts timed")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="memindex-mcpbench-") as tmp:
        project = Path(tmp) / "p"
        generate(project, args.size, seed=args.size)
        root = project / ".claude" / "memory"
        sync(root, Config())
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(REPO)], check=True)
        purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        # plain path lines: the SDK and its dependencies, after the venv's own memindex
        # (no .pth of theirs is run, so no editable memindex of theirs is loaded)
        Path(purelib, "zz_deps.pth").write_text("".join(p + "\n" for p in site.getsitepackages()))
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        cli = str(venv / "bin" / "memindex")
        python = str(venv / "bin" / "python")
        serve = [cli, "--root", str(root), "mcp"]
        os.sync()

        starts, rss = [], []
        for _ in range(args.starts):
            server = Server(serve, env)
            starts.append(server.start_s)
            server.request("tools/call", {"name": "search", "arguments": {"query": QUERIES[0]}})
            rss.append(server.rss_mib())
            server.close()
        server = Server(serve, env)
        tools, chars, tokens = tool_list_tokens(server)
        ro = Server(serve + ["--read-only"], env)
        ro_tools, ro_chars, ro_tokens = tool_list_tokens(ro)
        ro.close()
        bare = Server(serve + ["--no-watch"], env)
        for q in QUERIES:  # warm: the first call loads the query modules
            for each in (server, bare):
                each.request("tools/call", {"name": "search", "arguments": {"query": q}})
        floor, cli_times, mcp_times, bare_times = [], [], [], []
        for i in range(args.runs):
            q = QUERIES[i % len(QUERIES)]
            floor.append(time_process([python, "-c", "import sqlite3, json"], b"", env))
            cli_times.append(time_process([cli, "--root", str(root), "search", "--no-sync", q], b"", env))
            for each, times in ((server, mcp_times), (bare, bare_times)):
                started = time.perf_counter()
                answer = each.request("tools/call", {"name": "search", "arguments": {"query": q}})
                times.append(time.perf_counter() - started)
                if answer.get("isError"):
                    raise RuntimeError(answer)
        server.close()
        bare.close()
        inside = in_process(root, args.runs)
        load_after = os.getloadavg()

    cli50, cli95 = percentiles(cli_times)
    rows = []
    for label, times in (("floor: python -c 'import sqlite3, json'", floor),
                         ("memindex search --no-sync (process)", cli_times),
                         ("MCP search (round trip, resident server)", mcp_times),
                         ("MCP search, --no-watch (every call checks every file)", bare_times)):
        p50, p95 = percentiles(times)
        rows.append([label, f"{p50 * 1000:.1f}", f"{p95 * 1000:.1f}", f"{p50 / cli50:.2f}x"])
    print(table(["search", "p50 ms", "p95 ms", "p50 / CLI"], rows))
    base = percentiles(inside[-1][1])[0]
    rows = [[label, f"{percentiles(t)[0] * 1000:.1f}", f"{percentiles(t)[1] * 1000:.1f}", f"{percentiles(t)[0] / base:.2f}x"]
            for label, t in inside]
    print()
    print(table(["inside the server (after the series above)", "p50 ms", "p95 ms", "p50 / no watch"], rows))
    s50, s95 = percentiles(starts)
    now = sorted(r[0] for r in rss)[len(rss) // 2]
    peak = sorted(r[1] for r in rss)[len(rss) // 2]
    print()
    print(table(["server", "value"], [
        ["start to initialize answer, p50 / p95 ms", f"{s50 * 1000:.0f} / {s95 * 1000:.0f}"],
        ["RSS after a search, median MiB (peak)", f"{now:.1f} ({peak:.1f})"],
        [f"tool list: {tools} tools, chars / tokens (chars/4)", f"{chars} / {tokens}"],
        [f"tool list --read-only: {ro_tools} tools, chars / tokens", f"{ro_chars} / {ro_tokens}"],
    ]))
    print(f"\n{args.size:,} memories; {args.runs} runs per search row, interleaved; {args.starts} server starts; "
          f"{os.cpu_count()} CPUs, load average (1, 5, 15 min) before {_load(load_before)}, after {_load(load_after)}; "
          f"interpreter {sys.executable}")
    print(f"MCP search p50 / CLI process p50: {percentiles(mcp_times)[0] / cli50:.2f}x (target <= 0.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
