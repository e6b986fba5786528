#!/usr/bin/env python3
"""Session capture benchmark: what the Stop hook costs a session, and how fast
`memindex import transcripts` goes.

    python scripts/bench_capture.py [--runs 60] [--transcripts 1000]

1. The Stop hook (`hooks/memindex_hook.py stop`, as hooks.json runs it, JSON on stdin),
   process start to exit, p50/p95 against the floor `python -c "import sqlite3, json"`
   (and the same with `-I -S`, as the hooks start python) measured in the same run,
   interleaved run by run:
   - "coalesced": a capture job of the session holds its lock (the hook only leaves its
     request and returns: every Stop while a capture runs);
   - "starts a job": no job runs, the hook starts one (detached) and returns; the bench
     waits for that job to finish before the next run, so jobs never overlap a timing.
   Capture alone (`capture.save_prompts: false`), or with `--save-prompts` the whole Stop
   hook (the triage's save prompts read the transcript's end as well).
2. `memindex import transcripts --from DIR` (the CLI, a new process) over N generated
   coding sessions (memindex_dev.evaluation.transcripts: prompts, file dumps, edits, commands,
   failing then passing tests, thinking, hook attachments, todo lists, commits), into an
   empty store: the first run (all created), then a second (nothing changes).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex.capture.schedule import Markers  # noqa: E402
from memindex.defaults import CAPTURE_FOLDER, FOLDERS  # noqa: E402
from memindex_dev.evaluation.bench import hook_command, percentiles, time_process, wait_for  # noqa: E402
from memindex_dev.evaluation.transcripts import write_sessions  # noqa: E402

SID = "7d9f3c2a-0000-4000-8000-00000000b001"


def project(base: Path, save_prompts: bool = False) -> Path:
    root = base / ".claude" / "memory"
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    capture = {"min_interval_s": 0.0, "save_prompts": save_prompts}
    (root / "memory-config.json").write_text(json.dumps({"capture": capture}))
    return root


def env_for(runtime: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


def job_done(root: Path, marks: Markers) -> bool:
    if os.path.exists(marks.again):
        return False
    fd = os.open(marks.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def bench_hook(tmp: Path, runs: int, save_prompts: bool) -> None:
    runtime = tmp / "rt"
    runtime.mkdir(mode=0o700)
    env = env_for(runtime)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    base = tmp / "proj"
    root = project(base, save_prompts)
    [transcript] = write_sessions(tmp / "t", 1, str(base), seed=7)
    payload = json.dumps({"session_id": SID, "transcript_path": str(transcript), "cwd": str(base),
                          "hook_event_name": "Stop", "stop_hook_active": False}).encode()
    floor_cmd = [sys.executable, "-c", "import sqlite3, json"]
    hook_cmd = hook_command(REPO, "stop")
    marks = Markers(str(root), SID, create=True)
    isolated_cmd = [sys.executable, "-I", "-S", "-c", "import sqlite3, json"]  # as the hooks start python
    samples: dict[str, list[float]] = {"floor": [], "floor -I -S": [], "coalesced": [], "starts a job": []}
    for i in range(runs):
        samples["floor"].append(time_process(floor_cmd, b"", env))
        samples["floor -I -S"].append(time_process(isolated_cmd, b"", env))
        fd = os.open(marks.lock, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # a job holds the session's lock
        samples["coalesced"].append(time_process(hook_cmd, payload, env))
        os.unlink(marks.again)
        os.close(fd)
        if i % 3 == 0:  # the spawning path, a third as often (each run waits for its job)
            samples["starts a job"].append(time_process(hook_cmd, payload, env))
            wait_for(lambda: job_done(root, marks), timeout=60, what="the capture job")
    assert list((root / CAPTURE_FOLDER).glob("session-*.json")), "the hook's job wrote no summary"
    floor = percentiles(samples["floor"])[0]
    print(f"Stop hook, save prompts {'on' if save_prompts else 'off (capture alone)'}, "
          f"{runs} runs (the job path {len(samples['starts a job'])}), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| what | p50 ms | p95 ms | p50 / floor |")
    print("|---|---|---|---|")
    for name, values in samples.items():
        p50, p95 = percentiles(values)
        print(f"| {name} | {p50 * 1000:.1f} | {p95 * 1000:.1f} | {p50 / floor:.2f}x |")


def bench_import(tmp: Path, count: int) -> None:
    folder = tmp / "transcripts"
    started = time.perf_counter()
    paths = write_sessions(folder, count, "/home/dev/app", seed=11)
    made = time.perf_counter() - started
    sizes = [p.stat().st_size for p in paths]
    root = project(tmp / "import-proj")
    env = env_for(tmp / "rt")
    cmd = [sys.executable, "-m", "memindex", "--root", str(root), "import", "transcripts", "--from", str(folder), "--json"]
    print()
    print(f"import transcripts: {count} generated sessions ({made:.1f} s to write), {sum(sizes) / 1e6:.0f} MB, "
          f"median {statistics.median(sizes) / 1e3:.0f} KB, max {max(sizes) / 1e6:.1f} MB; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("| run | seconds | per transcript ms | created | updated | unchanged | skipped | failed |")
    print("|---|---|---|---|---|---|---|---|")
    for run in ("first (empty store)", "second (nothing new)"):
        start = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        took = time.perf_counter() - start
        c = json.loads(out.stdout)["counts"]
        print(f"| {run} | {took:.1f} | {took / count * 1000:.1f} | {c['created']} | {c['updated']} | "
              f"{c['unchanged']} | {c['skipped']} | {c['failed']} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--transcripts", type=int, default=1000)
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--save-prompts", action="store_true", help="the Stop hook with the triage's save prompts on too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-capture-", dir="/tmp") as tmp:
        bench_hook(Path(tmp), args.runs, args.save_prompts)
        if not args.skip_import:
            bench_import(Path(tmp), args.transcripts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
