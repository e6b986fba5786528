#!/usr/bin/env python3
"""`memindex ui` at scale: each page's server time (the `Server-Timing` the page sends: from
the request's arrival to its answer, every page's freshness check included) and round trip,
against `memindex search --no-sync` as a process, and the start-up (spawn to the printed
address).

    python scripts/bench_ui.py [--size 10000] [--runs 30] [--starts 7]

The store is generated (memindex_dev.evaluation.genstore), committed to a git repository (the
memory page runs `git log` of its file), given a use log of 60 sessions and one review
check. This tree is installed (not editable: an editable install's import hooks slow
every start) into a throwaway virtualenv that reads its dependencies (Starlette, uvicorn,
Jinja2) from this interpreter's site-packages, as scripts/bench_mcp.py does. Pages and the
CLI run interleaved in one series; the machine's load is printed before and after.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import signal
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex import usage  # noqa: E402
from memindex.config import Config  # noqa: E402
from memindex_dev.evaluation.bench import percentiles, time_process  # noqa: E402
from memindex_dev.evaluation.genstore import generate  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
QUERIES = ["flaky integration tests in CI", "stripe webhook signature 400", "how do we deploy the api"]
PROMPTS = ["Our CI is flaky: integration tests fail before Postgres is ready. What did we do last time?",
           "why do the stripe webhooks fail with 400?", "how do we roll back a bad deploy of the api?"]


def install(tmp: Path) -> Path:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(REPO)], check=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "zz_deps.pth").write_text("".join(p + "\n" for p in site.getsitepackages()))
    return venv


def store(tmp: Path, size: int) -> tuple[Path, list[str]]:
    project = tmp / "p"
    generate(project, size, seed=size)
    root = project / ".claude" / "memory"
    sync(root, Config())
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the memories"]):
        subprocess.run(["git", *cmd], cwd=project, env=env, check=True, capture_output=True)
    rels = sorted(str(p.relative_to(root)) for p in root.glob("*/*.json"))
    rng = random.Random(size)
    for s in range(60):  # a use log: what 60 sessions' hooks injected and dropped
        for _ in range(10):
            kept = [(r, "P(relevant) 0.9") for r in rng.sample(rels, 2)]
            dropped = [(r, "P(relevant) 0.1, under min_confidence 0.50") for r in rng.sample(rels, 6)]
            usage.record_prompt(root, f"bench-{s}", "a prompt", kept, dropped)
        usage.record_opens(root, f"bench-{s}", [(f"t{s}-{i}", "read", rng.choice(rels)) for i in range(3)])
    from memindex.review.queue import refresh

    refresh(str(root), Config())
    return root, rels


def start(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline().strip()
    return proc, line, time.perf_counter() - started


class Page:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.port = parts.port
        status, headers, _ = self.get(f"/?{parts.query}", cookie=None)
        assert status == 303, status
        self.cookie = headers["set-cookie"].split(";")[0]

    def get(self, path: str, cookie: str | None = "") -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request("GET", path, headers={"Cookie": self.cookie if cookie == "" else (cookie or "")})
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body

    def timed(self, path: str) -> tuple[float, float]:
        """(server seconds, round-trip seconds)."""
        started = time.perf_counter()
        status, headers, _ = self.get(path)
        trip = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"{path}: {status}")
        return float(headers["server-timing"].split("dur=")[1]) / 1000, trip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--starts", type=int, default=7)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="memindex-uibench-") as tmp_s:
        tmp = Path(tmp_s)
        root, rels = store(tmp, args.size)
        venv = install(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        cli = str(venv / "bin" / "memindex")
        python = str(venv / "bin" / "python")
        serve = [cli, "--root", str(root), "ui", "--no-open"]
        os.sync()

        starts, firsts = [], []
        for _ in range(args.starts):
            proc, line, took = start(serve, env)
            t0 = time.perf_counter()
            Page(line).timed("/")
            firsts.append(took + time.perf_counter() - t0)
            starts.append(took)
            proc.send_signal(signal.SIGINT)
            proc.wait(20)

        proc, line, _ = start(serve, env)
        page = Page(line)
        rng = random.Random(1)
        sample = rng.sample(rels, 40)
        session = "s-" + usage.name_hash(b"bench-0")
        pages = {
            "memories (browse, page 1)": lambda i: "/",
            "memories, filtered (category + tag)": lambda i: "/?category=runbook&tag=ci",
            "memories, by provenance": lambda i: "/?source=none&page=3",
            "search": lambda i: "/?q=" + quote(QUERIES[i % 3]),
            "a memory (git log included)": lambda i: "/memory?path=" + quote(sample[i % len(sample)], safe=""),
            "what was shown (sessions)": lambda i: "/shown",
            "try a prompt (explain)": lambda i: "/shown?prompt=" + quote(PROMPTS[i % 3]),
            "one session": lambda i: "/shown/session?name=" + session,
            "sessions (timeline)": lambda i: "/sessions",
            "health and review": lambda i: "/health",
            "pictures": lambda i: "/pictures",
        }
        time.sleep(3)  # the page's background start-up work (provenance of every file, doctor) ends
        for make in pages.values():
            for i in range(3):
                page.timed(make(i))
        server: dict[str, list[float]] = {k: [] for k in pages}
        trip: dict[str, list[float]] = {k: [] for k in pages}
        floor, cli_times = [], []
        for i in range(args.runs):
            floor.append(time_process([python, "-c", "import sqlite3, json"], b"", env))
            cli_times.append(time_process([cli, "--root", str(root), "search", "--no-sync", QUERIES[i % 3]], b"", env))
            for name, make in pages.items():
                s, t = page.timed(make(i))
                server[name].append(s)
                trip[name].append(t)
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
    load_after = os.getloadavg()

    cli50, cli95 = percentiles(cli_times)
    rows = []
    for name in pages:
        s50, s95 = percentiles(server[name])
        t50, _ = percentiles(trip[name])
        rows.append([name, f"{s50 * 1000:.1f}", f"{s95 * 1000:.1f}", f"{t50 * 1000:.1f}", f"{s50 / cli50:.2f}x"])
    f50, f95 = percentiles(floor)
    rows.append(["floor: python -c 'import sqlite3, json' (process)", f"{f50 * 1000:.1f}", f"{f95 * 1000:.1f}", "", f"{f50 / cli50:.2f}x"])
    rows.append(["memindex search --no-sync (process)", f"{cli50 * 1000:.1f}", f"{cli95 * 1000:.1f}", "", "1.00x"])
    print(table(["page", "server p50 ms", "server p95 ms", "round trip p50 ms", "p50 / CLI search"], rows))
    s50, s95 = percentiles(starts)
    p50, p95 = percentiles(firsts)
    print()
    print(table(["start-up", "p50 ms", "p95 ms"], [
        ["spawn to the printed address", f"{s50 * 1000:.0f}", f"{s95 * 1000:.0f}"],
        ["spawn to the first page answered (sign-in and /)", f"{p50 * 1000:.0f}", f"{p95 * 1000:.0f}"],
    ]))
    print(f"\n{args.size:,} memories in git; {args.runs} runs per row, interleaved; {args.starts} starts; "
          f"load average (1, 5, 15 min) before {', '.join(f'{x:.1f}' for x in load_before)}, "
          f"after {', '.join(f'{x:.1f}' for x in load_after)}; {os.cpu_count()} cores; interpreter {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
