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

`--watch` adds a third copy of the store with `memindex watch` running on it (this tree's):
`search` and `status` there ask the watcher instead of stat-ing every file
(memindex/index/watched.py). The run stops if the watcher did not answer them. The
watcher's resident memory and its CPU while idle (`--idle-s`, after the series) and over
the series are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex.defaults import INDEX_FILE, RACY_WINDOW_NS  # noqa: E402
from memindex_dev.evaluation.bench import percentiles, time_process  # noqa: E402
from memindex_dev.evaluation.genstore import generate  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402

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
    parser.add_argument("--watch", action="store_true", help="also time this tree with `memindex watch` running")
    parser.add_argument("--idle-s", type=float, default=10.0, help="the watcher's idle window after the series (--watch)")
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
        if args.watch:  # this tree again, on its own copy, with its watcher
            subprocess.run([str(setups[0][1].parent / "pip"), "install", "-q", "--no-deps", "watchdog"], check=True)  # watch's one dependency
            project = Path(tmp) / "pw"
            shutil.copytree(template, project, symlinks=True)
            root = project / ".claude" / "memory"
            subprocess.run([str(setups[0][1]), "--root", str(root), "sync", "--quiet"], env=env, check=True)
            setups.insert(1, ("this tree, watch running", setups[0][1], root))
        time.sleep(RACY_WINDOW_NS / 1e9 + 0.5)  # every file now older than the window: the next sync stores real stats
        jobs: list[tuple[str, list[list[str]]]] = []
        watcher = None
        for i, (label, cli, root) in enumerate(setups):
            subprocess.run([str(cli), "--root", str(root), "sync", "--quiet"], env=env, check=True)
            _fresh(cli, root, env)
            if "watch" in label:
                watcher = _start_watcher(cli, root, env, Path(tmp) / "watch.log")
            if i == 0:
                python = str(cli.parent / "python")
                jobs.append(("floor: python -c 'import sqlite3, json'", [[python, "-c", "import sqlite3, json"]]))
            search = [[str(cli), "--root", str(root), "search", q] for q in QUERIES]
            for cmd in search:
                _check(cmd, env, f"search ({label})", want_output=True)
            status = [str(cli), "--root", str(root), "status"]
            _check(status, env, f"status ({label})", want_output=True)
            jobs.append((f"memindex search ({label})", search))
            if watcher is None or "watch" not in label:
                jobs.append((f"memindex search --no-sync ({label})", [c[:4] + ["--no-sync"] + c[4:] for c in search]))
                jobs.append((f"memindex --help ({label})", [[str(cli), "--help"]]))
            jobs.append((f"memindex status ({label})", [status]))
        synced = [_last_sync(root) for _, _, root in setups]
        os.sync()
        load_before = os.getloadavg()
        cpu_before = _cpu_s(watcher.pid) if watcher else 0.0
        samples: list[list[float]] = [[] for _ in jobs]
        started = time.perf_counter()
        for i in range(args.runs):
            for (_, cmds), out in zip(jobs, samples):
                out.append(time_process(cmds[i % len(cmds)], b"", env))
        series_s = time.perf_counter() - started
        load_after = os.getloadavg()
        for (label, _, root), before in zip(setups, synced):
            if _last_sync(root) != before:
                raise SystemExit(f"{label}: a timed command synced the index (it timed a sync, not a search)")
        if watcher is not None:
            watched_line = _watcher_report(watcher, cpu_before, series_s, args.idle_s, args.runs)
    floor = percentiles(samples[0])[0]
    rows = []
    for (label, _), times in zip(jobs, samples):
        p50, p95 = percentiles(times)
        rows.append([label, f"{p50 * 1000:.1f}", f"{p95 * 1000:.1f}", f"{p50 / floor:.2f}x"])
    print(table(["command", "p50 ms", "p95 ms", "p50 / floor"], rows))
    print(f"\n{args.size:,} memories; {args.runs} runs per row, interleaved; interpreter {sys.executable}; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    if args.watch:
        print(watched_line)
    return 0


def _start_watcher(cli: Path, root: Path, env: dict, log: Path) -> subprocess.Popen:
    """`memindex watch --json` on `root` (its records in `log`), once it answers readers."""
    from memindex import index
    from memindex.index import watched

    with open(log, "wb") as out:
        proc = subprocess.Popen([str(cli), "--root", str(root), "watch", "--json"], env=env,
                                stdout=out, stderr=subprocess.DEVNULL)
    proc.log = log  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        conn = index.open_reader(root)
        try:
            gen = watched.generation(conn)
        finally:
            conn.close()
        reply = watched.ask(root, gen, wait=False)
        if reply and reply.get("fresh") and reply.get("gen") == gen:
            return proc
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the watcher never answered")


def _cpu_s(pid: int) -> float:
    """utime + stime of a process, in seconds (/proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _watcher_report(proc: subprocess.Popen, cpu_before: float, series_s: float, idle_s: float, runs: int) -> str:
    """The watcher's CPU over the series (answering) and while idle, and its memory; stops it."""
    during = _cpu_s(proc.pid) - cpu_before
    idle0 = _cpu_s(proc.pid)
    time.sleep(idle_s)
    idle = _cpu_s(proc.pid) - idle0
    with open(f"/proc/{proc.pid}/status") as fh:
        rss = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) / 1024
    proc.terminate()
    proc.wait(20)
    records = [json.loads(line) for line in proc.log.read_text().splitlines() if line.startswith("{")]  # type: ignore[attr-defined]
    answers = next((r.get("answers") for r in records if r["event"] == "stop"), None) or {}
    if answers.get("fresh", 0) < runs * 2:  # each timed search and status, and the checks before
        raise SystemExit(f"the watcher did not answer the timed commands: {answers}")
    return (f"watcher: {rss:.1f} MiB resident; CPU {during:.2f} s over the {series_s:.0f} s series "
            f"({100 * during / series_s:.2f}% of a core), {100 * idle / idle_s:.3f}% of a core over {idle_s:g} s idle; "
            f"answers {answers}")


if __name__ == "__main__":
    sys.exit(main())
