#!/usr/bin/env python3
"""Freshness benchmark (issue 26): what answering from the files as they are costs.

    python scripts/bench_fresh.py [--sizes 10000 100000] [--runs 40] [--compare-tree DIR] [--python PY]

In-process, per store size: the stat fingerprint `search` and `explain` now take before
answering (`index.stat_fingerprint`), against the bare walk (`scandir` + `stat`) and a
no-change sync. Then, process start to exit and interleaved run by run: the floor
`python -c "import sqlite3, json"`, this tree's prompt hook and (with --compare-tree) another
tree's, at every size, all against the same stores. The hook of this tree starts a
background sync when the last one is older than max(3 s, 10 x its duration): the series
runs with that on, and the table says how many syncs the prompts started and what one
costs in CPU (user + system of a `memindex sync` process that finds nothing to do), so the
machine cost per hour of prompting is their product.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex import index  # noqa: E402
from memindex.config import Config  # noqa: E402
from memindex_dev.evaluation import genstore  # noqa: E402
from memindex_dev.evaluation.bench import hook_command, series, timed  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROMPTS = [p.strip() for p in (HERE / "prompts.txt").read_text().splitlines() if p.strip()]


def bare_walk(root: Path) -> int:
    n = 0
    for folder in os.scandir(root):
        if folder.is_dir() and not folder.name.startswith("."):
            with os.scandir(folder.path) as entries:
                for entry in entries:
                    entry.stat()
                    n += 1
    return n


def sync_cpu(root: Path, env: dict, python: str, *extra: str) -> tuple[float, float]:
    """(wall s, user + system CPU s) of one `memindex sync` process with nothing to do."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([python, "-m", "memindex", "--root", str(root), "sync", "--quiet", *extra], env=env, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def spawns(root: Path) -> float:
    try:
        return (root / ".sync.spawned").stat().st_mtime
    except OSError:
        return 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--compare-tree", metavar="DIR", help="another memindex checkout whose hook is timed alongside")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter of the floor and the hooks (one without an editable install, as docs/benchmarks.md)")
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    rows, hook_rows = [], []
    with tempfile.TemporaryDirectory(prefix="memindex-freshbench-") as tmp:
        roots = {}
        for n in args.sizes:
            project = Path(tmp) / f"p{n}"
            genstore.generate(project, n, seed=n)
            root = project / ".claude" / "memory"
            sync(root, Config())
            roots[n] = root
            print(f"{n}: store ready", file=sys.stderr)
        time.sleep(2.5)  # past the racy window: the next sync stores every real stat
        for n, root in roots.items():
            sync(root, Config())
            walk_s = timed(lambda: bare_walk(root), 5)
            fp_s = timed(lambda: index.stat_fingerprint(root), 5)
            conn = index.open_reader(root)
            current_s = timed(lambda: index.is_current(conn, root), 5)
            assert index.is_current(conn, root)
            conn.close()
            nochange_s = timed(lambda: sync(root, Config()), 3)
            wall, cpu = sync_cpu(root, env, args.python)
            check_wall, check_cpu = sync_cpu(root, env, args.python, "--if-changed")
            interval = max(3.0, 10 * nochange_s)
            rows.append([f"{n:,}", f"{walk_s * 1000:.1f} ms", f"{fp_s * 1000:.1f} ms ({fp_s / walk_s:.2f}x walk)",
                         f"{current_s * 1000:.1f} ms", f"{nochange_s * 1000:.0f} ms", f"{wall:.2f} s / {cpu:.2f} s",
                         f"{check_wall:.2f} s / {check_cpu:.2f} s", f"{interval:.0f} s",
                         f"{check_cpu / interval * 100:.1f}% of a core"])
        print(table(["memories", "bare walk", "stat fingerprint", "is_current (search's check)", "no-change sync (in-process)",
                     "`sync` process wall / CPU", "`sync --if-changed` (the hook's check) wall / CPU",
                     "hook's check interval", "its CPU while prompting, at most"], rows))
        os.sync()
        floor = [args.python, "-c", "import sqlite3, json"]
        trees = [("this tree", REPO)] + ([("compare", Path(args.compare_tree).resolve())] if args.compare_tree else [])
        payloads = {n: [json.dumps({"prompt": p, "cwd": str(roots[n].parent.parent), "session_id": "b"}).encode()
                        for p in PROMPTS] for n in args.sizes}
        jobs = [(floor, payloads[args.sizes[0]])]
        labels = []
        for label, tree in trees:
            for n in args.sizes:
                jobs.append((hook_command(tree, python=args.python), payloads[n]))
                labels.append((label, n))
        marks = {n: spawns(root) for n, root in roots.items()}
        started = time.time()
        (f50, f95), *timed_hooks = series(jobs, env, args.runs)
        elapsed = time.time() - started
        for (label, n), (h50, h95) in zip(labels, timed_hooks):
            hook_rows.append([label, f"{n:,}", f"{f50 * 1000:.1f} / {f95 * 1000:.1f} ms", f"{h50 * 1000:.1f} / {h95 * 1000:.1f} ms",
                              f"{h50 / f50:.2f}x"])
        print()
        print(table(["hook", "memories", "floor p50/p95", "hook p50/p95", "hook / floor"], hook_rows))
        moved = {n: spawns(root) != marks[n] for n, root in roots.items()}
        print(f"\n{args.runs} runs per cell, interleaved, {elapsed:.0f} s in all; background syncs were started during the "
              f"series: {', '.join(f'{n:,}: {moved[n]}' for n in args.sizes)} (the spawn guard's mtime moved)")
        print(f"interpreter {args.python}; prompts from scripts/prompts.txt")
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
