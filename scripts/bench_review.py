#!/usr/bin/env python3
"""`memindex review` at scale: a store of generated memories (scripts/gen_store.py's
generator) in a synthetic git repository of many tracked files, whose second commit
deletes, renames and rewrites some of the files the memories name.

    python scripts/bench_review.py [--memories 10000] [--files 50000] [--runs 2]

Prints, per run (the first cold, the next ones with the pairs the conflict check measured
before): the wall time of `memindex review --refresh --json` as a process, each
detector's share (its report), the items by kind, the conflict pairs measured, remembered
and left for the next run, and the process's peak memory (RSS); against, in the same run,
the interpreter's floor and `memindex status --json` (one stat per memory file).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex_dev.evaluation import genstore  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402

T0, T1 = "2025-01-01T12:00:00Z", "2025-06-01T12:00:00Z"
MEMORY_DATE = "2025-02-01T12:00:00Z"


def git(repo: Path, *args: str, date: str = T0) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "b",
           "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=repo, env=env, check=True, capture_output=True)


def source(rng: random.Random, d: int, f: int) -> str:
    lines = [f"package pkg{d}", ""]
    for k in range(rng.randint(8, 30)):
        lines.append(f"func Handle{d}x{f}Step{k}(req Request{d}) error {{ return process_item_{d}_{f}_{k}(req) }}")
    return "\n".join(lines) + "\n"


def build(tmp: Path, n_files: int, n_memories: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    dirs = max(1, n_files // 100)
    files = []
    for d in range(dirs):
        folder = repo / "src" / f"pkg{d:04d}"
        folder.mkdir(parents=True)
        for f in range(n_files // dirs):
            rel = f"src/pkg{d:04d}/file{f:03d}.go"
            (repo / rel).write_text(source(rng, d, f))
            files.append((rel, d, f))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    genstore.generate(repo, n_memories, seed=seed)
    root = repo / ".claude" / "memory"
    for path in sorted(root.glob("*/*.json")):
        mem = json.loads(path.read_text())
        if mem.get("category") == "session_summary":
            continue
        named = rng.sample(files, 2)
        mem["related_files"] = [rel for rel, _, _ in named]
        _, d, f = named[0]
        note = f" See `Handle{d}x{f}Step0` and `process_item_{d}_{f}_1`."
        content = mem.get("content") or {}
        key = next((k for k in ("rule", "decision", "description", "value", "trigger", "goal") if isinstance(content.get(k), str)), None)
        if key:
            content[key] += note
        mem["updated_at"] = mem["created_at"] = MEMORY_DATE
        path.write_text(json.dumps(mem, indent=2))
    # the code moves on: 2% of the files deleted, 1% renamed, 1% rewritten
    rng.shuffle(files)
    cut = len(files) // 100
    for rel, _, _ in files[: 2 * cut]:
        (repo / rel).unlink()
    for rel, _, _ in files[2 * cut : 3 * cut]:
        (repo / rel).rename(repo / (rel[:-3] + "_v2.go"))
    for rel, d, f in files[3 * cut : 4 * cut]:
        (repo / rel).write_text(source(random.Random(rel), d + 1, f + 1))
    git(repo, "add", "-A", "--", "src")
    git(repo, "commit", "-qm", "second", date=T1)
    return repo


RSS = ("import resource, sys; from memindex.cli.main import main; code = main(sys.argv[1:]); "
       "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)")


def timed(cmd: list[str], env: dict, cwd: str) -> tuple[float, int, str]:
    """(seconds, peak RSS in KiB or 0, stdout) of one process."""
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    rss = int(proc.stderr.rsplit("RSS ", 1)[1].split()[0]) if "RSS " in proc.stderr else 0
    return seconds, rss, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory(prefix="memindex-reviewbench-") as tmp:
        env["XDG_STATE_HOME"] = os.path.join(tmp, "state")  # its own use log, acknowledgments and pair measures
        started = time.perf_counter()
        repo = build(Path(tmp), args.files, args.memories)
        mi = [sys.executable, "-m", "memindex", "--root", str(repo)]
        subprocess.run([*mi, "sync", "--quiet"], env=env, check=True, cwd="/")
        print(f"built: {args.files:,} tracked files, {args.memories:,} memories in {time.perf_counter() - started:.0f} s",
              file=sys.stderr)
        os.sync()
        rows = []
        for run in range(args.runs):
            floor, _, _ = timed([sys.executable, "-c", "import sqlite3, json"], env, "/")
            status, _, _ = timed([*mi, "status", "--json"], env, "/")
            wall, rss, out = timed([sys.executable, "-c", RSS, "--root", str(repo), "review", "--refresh", "--json"], env, "/")
            report = json.loads(out)
            c = report.get("conflicts", {})
            ms = report.get("ms", {})
            rows.append([
                "cold" if run == 0 else f"again ({run})", f"{wall:.2f} s", f"{wall / status:.1f}x", f"{floor * 1000:.0f} ms",
                ", ".join(f"{k} {v / 1000:.2f} s" for k, v in ms.items()),
                ", ".join(f"{v} {k}" for k, v in sorted(report["by_kind"].items())),
                f"{c.get('measured', 0)} / {c.get('known', 0)} / {c.get('pending', 0)}", f"{rss / 1024:.0f} MiB",
            ])
    print(table(["run", "review --refresh (wall)", "/ status", "floor", "detectors", "items",
                 "pairs measured / remembered / left", "peak RSS"], rows))
    print(f"{args.memories:,} generated memories (seed 1), {args.files:,} tracked files; {os.cpu_count()} cores; "
          f"review.conflict_budget_s and review.git_timeout_s at their defaults")
    return 0


if __name__ == "__main__":
    sys.exit(main())
