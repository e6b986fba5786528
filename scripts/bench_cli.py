#!/usr/bin/env python3
"""CLI start-up benchmark: `memindex search` and `memindex --help`, process start to exit,
against the interpreter's floor `python -c "import sqlite3, json"` in the same run.

    python scripts/bench_cli.py [--size 10000] [--runs 30] [--compare-tree DIR]

The floor and every command are interleaved run by run, so drift hits all alike. Each
command runs as `python -m memindex` with the package found on PYTHONPATH (the floor sees
the same environment); `--compare-tree` times another checkout of memindex the same way
(e.g. the commit before a change) in the same series.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memindex.config import Config
from memindex.evaluation.genstore import generate
from memindex.evaluation.metrics import table
from memindex.sync import sync

REPO = Path(__file__).resolve().parent.parent
QUERIES = ["flaky integration tests in CI", "stripe webhook signature 400", "how do we deploy the api"]


def _time(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--compare-tree", metavar="DIR", help="another memindex checkout to time alongside")
    args = parser.parse_args(argv)
    trees = [("this tree", REPO)] + ([("compare", Path(args.compare_tree).resolve())] if args.compare_tree else [])
    for _, tree in trees:
        compileall.compile_dir(str(tree / "memindex"), quiet=1)
    with tempfile.TemporaryDirectory(prefix="memindex-clibench-") as tmp:
        project = Path(tmp) / "p"
        generate(project, args.size, seed=args.size)
        root = project / ".claude" / "memory"
        sync(root, Config())
        os.sync()
        floor_env = dict(os.environ)
        jobs: list[tuple[str, list[list[str]], dict[str, str]]] = [
            ("floor: python -c 'import sqlite3, json'", [[sys.executable, "-c", "import sqlite3, json"]], floor_env)
        ]
        for label, tree in trees:
            env = dict(os.environ, PYTHONPATH=str(tree))
            base = [sys.executable, "-m", "memindex"]
            searches = [base + ["--root", str(root), "search", "--no-sync", q] for q in QUERIES]
            jobs.append((f"memindex search ({label})", searches, env))
            jobs.append((f"memindex --help ({label})", [base + ["--help"]], env))
            jobs.append((f"memindex status ({label})", [base + ["--root", str(root), "status"]], env))
        samples: list[list[float]] = [[] for _ in jobs]
        for i in range(args.runs):
            for (_, cmds, env), out in zip(jobs, samples):
                out.append(_time(cmds[i % len(cmds)], env))
    floor = statistics.median(samples[0])
    rows = []
    for (label, _, _), times in zip(jobs, samples):
        p50 = statistics.median(times)
        p95 = sorted(times)[min(len(times) - 1, int(len(times) * 0.95))]
        rows.append([label, f"{p50 * 1000:.1f}", f"{p95 * 1000:.1f}", f"{p50 / floor:.2f}x"])
    print(table(["command", "p50 ms", "p95 ms", "p50 / floor"], rows))
    print(f"\n{args.size:,} memories; {args.runs} runs per row, interleaved; interpreter {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
