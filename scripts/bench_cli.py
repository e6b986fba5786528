#!/usr/bin/env python3
"""CLI start-up benchmark: `memindex search`, `status` and `--help`, process start to exit,
against the interpreter's floor `python -c "import sqlite3, json"` in the same run.

    python scripts/bench_cli.py [--size 10000] [--runs 30] [--compare-tree DIR]

The floor and every command are interleaved run by run, so drift hits all alike. Each tree
is installed (not editable: an editable install's import hooks load pathlib and more into
every process, floor included, and flatter the ratio) into a throwaway virtualenv of this
interpreter, and its `memindex` console script is timed against that venv's
`python -c "import sqlite3, json"`. `--compare-tree` times another checkout of memindex
the same way (e.g. the commit before a change) in the same series.

What is timed is the state a user meets: each tree gets its own copy of the store, indexed
by its own `memindex sync` (an index built by another version is refused, and a refusal is
fast), synced again once the racy-timestamp window has passed, so that `search` makes the
freshness check it makes every day (one stat per memory file) and finds nothing to sync.
A command that fails, prints no result, or would sync first stops the run: it would be
timed doing something else. The load average is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memindex.defaults import INDEX_FILE, RACY_WINDOW_NS
from memindex.evaluation.bench import percentiles, time_process
from memindex.evaluation.genstore import generate
from memindex.evaluation.metrics import table

REPO = Path(__file__).resolve().parent.parent
QUERIES = ["flaky integration tests in CI", "stripe webhook signature 400", "how do we deploy the api"]


def _install(tree: Path, venv: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(tree)], check=True)
    return venv / "bin" / "memindex"


def _check(cmd: list[str], env: dict, label: str, want_output: bool) -> None:
    """The command works as timed: exit 0, a result on stdout, no sync on the way."""
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0 or (want_output and not out.stdout.strip()):
        raise SystemExit(f"{label}: exit {out.returncode}, stdout {out.stdout[:200]!r}, stderr {out.stderr[:300]!r}")


def _fresh(cli: Path, root: Path, env: dict) -> None:
    """Synced with nothing left to do: `status` says up to date and a second sync reads nothing."""
    out = subprocess.run([str(cli), "--root", str(root), "sync", "--json"], capture_output=True, text=True, env=env, check=True)
    if '"added": 0' not in out.stdout or '"updated": 0' not in out.stdout:
        raise SystemExit(f"{cli}: the store still changes between syncs: {out.stdout[:300]}")


def _last_sync(root: Path) -> str:
    """The index's `last_sync_ns`: moves when a sync runs (a timed search that synced)."""
    conn = sqlite3.connect(f"file:{root / INDEX_FILE}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT value FROM meta WHERE key = 'last_sync_ns'").fetchone()[0]
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--compare-tree", metavar="DIR", help="another memindex checkout to time alongside")
    args = parser.parse_args(argv)
    trees = [("this tree", REPO)] + ([("compare", Path(args.compare_tree).resolve())] if args.compare_tree else [])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    with tempfile.TemporaryDirectory(prefix="memindex-clibench-") as tmp:
        template = Path(tmp) / "template"
        generate(template, args.size, seed=args.size)
        setups = []
        for i, (label, tree) in enumerate(trees):
            cli = _install(tree, Path(tmp) / f"venv{i}")
            project = Path(tmp) / f"p{i}"
            shutil.copytree(template, project, symlinks=True)
            root = project / ".claude" / "memory"
            subprocess.run([str(cli), "--root", str(root), "sync", "--quiet"], env=env, check=True)
            setups.append((label, cli, root))
        time.sleep(RACY_WINDOW_NS / 1e9 + 0.5)  # every file now older than the window: the next sync stores real stats
        jobs: list[tuple[str, list[list[str]]]] = []
        for i, (label, cli, root) in enumerate(setups):
            subprocess.run([str(cli), "--root", str(root), "sync", "--quiet"], env=env, check=True)
            _fresh(cli, root, env)
            if i == 0:
                python = str(cli.parent / "python")
                jobs.append(("floor: python -c 'import sqlite3, json'", [[python, "-c", "import sqlite3, json"]]))
            search = [[str(cli), "--root", str(root), "search", q] for q in QUERIES]
            for cmd in search:
                _check(cmd, env, f"search ({label})", want_output=True)
            status = [str(cli), "--root", str(root), "status"]
            _check(status, env, f"status ({label})", want_output=True)
            jobs.append((f"memindex search ({label})", search))
            jobs.append((f"memindex search --no-sync ({label})", [c[:4] + ["--no-sync"] + c[4:] for c in search]))
            jobs.append((f"memindex --help ({label})", [[str(cli), "--help"]]))
            jobs.append((f"memindex status ({label})", [status]))
        synced = [_last_sync(root) for _, _, root in setups]
        os.sync()
        load_before = os.getloadavg()
        samples: list[list[float]] = [[] for _ in jobs]
        for i in range(args.runs):
            for (_, cmds), out in zip(jobs, samples):
                out.append(time_process(cmds[i % len(cmds)], b"", env))
        load_after = os.getloadavg()
        for (label, _, root), before in zip(setups, synced):
            if _last_sync(root) != before:
                raise SystemExit(f"{label}: a timed command synced the index (it timed a sync, not a search)")
    floor = percentiles(samples[0])[0]
    rows = []
    for (label, _), times in zip(jobs, samples):
        p50, p95 = percentiles(times)
        rows.append([label, f"{p50 * 1000:.1f}", f"{p95 * 1000:.1f}", f"{p50 / floor:.2f}x"])
    print(table(["command", "p50 ms", "p95 ms", "p50 / floor"], rows))
    print(f"\n{args.size:,} memories; {args.runs} runs per row, interleaved; interpreter {sys.executable}; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
