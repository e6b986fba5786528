#!/usr/bin/env python3
"""CLI start-up benchmark: `memindex search` and `memindex --help`, process start to exit,
against the interpreter's floor `python -c "import sqlite3, json"` in the same run.

    python scripts/bench_cli.py [--size 10000] [--runs 30] [--compare-tree DIR]

The floor and every command are interleaved run by run, so drift hits all alike. Each tree
is installed (not editable: an editable install's import hooks load pathlib and more into
every process, floor included, and flatter the ratio) into a throwaway virtualenv of this
interpreter, and its `memindex` console script is timed against that venv's
`python -c "import sqlite3, json"`. `--compare-tree` times another checkout of memindex
the same way (e.g. the commit before a change) in the same series.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from memindex.config import Config
from memindex.evaluation.bench import percentiles, time_process
from memindex.evaluation.genstore import generate
from memindex.evaluation.metrics import table
from memindex.index.sync import sync

REPO = Path(__file__).resolve().parent.parent
QUERIES = ["flaky integration tests in CI", "stripe webhook signature 400", "how do we deploy the api"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--compare-tree", metavar="DIR", help="another memindex checkout to time alongside")
    args = parser.parse_args(argv)
    trees = [("this tree", REPO)] + ([("compare", Path(args.compare_tree).resolve())] if args.compare_tree else [])
    with tempfile.TemporaryDirectory(prefix="memindex-clibench-") as tmp:
        project = Path(tmp) / "p"
        generate(project, args.size, seed=args.size)
        root = project / ".claude" / "memory"
        sync(root, Config())
        jobs: list[tuple[str, list[list[str]]]] = []
        for i, (label, tree) in enumerate(trees):
            venv = Path(tmp) / f"venv{i}"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(tree)], check=True)
            if i == 0:
                jobs.append(("floor: python -c 'import sqlite3, json'", [[str(venv / "bin" / "python"), "-c", "import sqlite3, json"]]))
            cli = str(venv / "bin" / "memindex")
            jobs.append((f"memindex search ({label})", [[cli, "--root", str(root), "search", "--no-sync", q] for q in QUERIES]))
            jobs.append((f"memindex --help ({label})", [[cli, "--help"]]))
            jobs.append((f"memindex status ({label})", [[cli, "--root", str(root), "status"]]))
        os.sync()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        samples: list[list[float]] = [[] for _ in jobs]
        for i in range(args.runs):
            for (_, cmds), out in zip(jobs, samples):
                out.append(time_process(cmds[i % len(cmds)], b"", env))
    floor = percentiles(samples[0])[0]
    rows = []
    for (label, _), times in zip(jobs, samples):
        p50, p95 = percentiles(times)
        rows.append([label, f"{p50 * 1000:.1f}", f"{p95 * 1000:.1f}", f"{p50 / floor:.2f}x"])
    print(table(["command", "p50 ms", "p95 ms", "p50 / floor"], rows))
    print(f"\n{args.size:,} memories; {args.runs} runs per row, interleaved; interpreter {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
