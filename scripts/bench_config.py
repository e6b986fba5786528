#!/usr/bin/env python3
"""What reading the layered config (the user's file, the environment, the project's file
and its trust) costs the prompt hook: this checkout's hook against another checkout's
(`--baseline`, e.g. main) and the interpreter's floor `python -c "import sqlite3, json"`,
all interleaved run by run in one series, on one generated store.

    python scripts/bench_config.py --baseline /work/main [--size 10000] [--runs 40]

Configs: none; a project config that only tightens; a project config that asks for more
(untrusted: its SHA-256 is computed and the trust record read on every prompt, the worst
case) in settings the baseline does nothing with (the semantic channel stays off).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex.config import Config  # noqa: E402
from memindex_dev.evaluation import genstore  # noqa: E402
from memindex_dev.evaluation.bench import hook_command  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROMPTS = [p.strip() for p in (HERE / "prompts.txt").read_text().splitlines() if p.strip()]
CONFIGS = {
    "no config": None,
    "project tightens": {"retrieval": {"max_inject": 2}},
    # a model and a looser semantic rule with the channel off: the baseline does the same work
    # as with no config, this checkout finds the file asks for more (its SHA-256, the trust
    # record read on every prompt: the worst case of the check)
    "project asks for more (untrusted)": {"semantic": {"model": "attacker-org/beacon-model", "max_cosine_gap": 2.0}},
}


def run_once(cmd: list[str], stdin: bytes, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system) of one process: CPU time is what the hook
    itself costs, whatever else the machine runs meanwhile."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def series_cpu(jobs: list[tuple[list[str], list[bytes]]], env: dict, runs: int) -> list[tuple[float, float]]:
    """Median wall and median CPU seconds of each (command, payloads), interleaved run by run."""
    walls: list[list[float]] = [[] for _ in jobs]
    cpus: list[list[float]] = [[] for _ in jobs]
    for i in range(runs):
        for j, (cmd, payloads) in enumerate(jobs):
            wall, cpu = run_once(cmd, payloads[i % len(payloads)], env)
            walls[j].append(wall)
            cpus[j].append(cpu)
    return [(statistics.median(w), statistics.median(c)) for w, c in zip(walls, cpus)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout (its hooks/ and memindex/)")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args(argv)
    for repo in (REPO, args.baseline):
        compileall.compile_dir(str(repo / "memindex"), quiet=1)
    floor = [sys.executable, "-c", "import sqlite3, json"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="memindex-configbench-") as tmp:
        env = dict(os.environ, XDG_CONFIG_HOME=str(Path(tmp) / "config"), XDG_STATE_HOME=str(Path(tmp) / "state"),
                   HF_HUB_OFFLINE="1")  # nothing may reach a hub, whatever a config says
        env.pop("MEMINDEX_CONFIG_JSON", None)
        project = Path(tmp) / "p"
        genstore.generate(project, args.size, seed=args.size)
        root = project / ".claude" / "memory"
        sync(root, Config())
        payloads = [json.dumps({"prompt": p, "cwd": str(project), "session_id": "b", "hook_event_name": "UserPromptSubmit"}).encode()
                    for p in PROMPTS]
        for name, config in CONFIGS.items():
            path = root / "memory-config.json"
            if config is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(json.dumps(config))
            os.sync()
            time.sleep(1)
            jobs = [(floor, payloads), (hook_command(args.baseline), payloads), (hook_command(REPO), payloads)]
            (fw, fc), (bw, bc), (hw, hc) = series_cpu(jobs, env, args.runs)
            rows.append([name, f"{fw * 1000:.1f} / {fc * 1000:.1f}", f"{bw * 1000:.1f} / {bc * 1000:.1f}",
                         f"{hw * 1000:.1f} / {hc * 1000:.1f}", f"{bw / fw:.2f}x / {bc / fc:.2f}x",
                         f"{hw / fw:.2f}x / {hc / fc:.2f}x", f"{hw / bw:.3f} / {hc / bc:.3f}"])
    print(table(["config", "floor wall / CPU ms", "baseline hook wall / CPU ms", "this hook wall / CPU ms",
                 "baseline / floor (wall / CPU)", "this / floor (wall / CPU)", "this / baseline (wall / CPU)"], rows))
    print("\nmedians; CPU = user + system time of the process (os.wait4), what it costs whatever else runs")
    print(f"\n{args.size:,} memories; {args.runs} runs per cell, floor and both hooks interleaved run by run;"
          f" baseline {args.baseline}; interpreter {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
