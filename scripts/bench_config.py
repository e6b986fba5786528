#!/usr/bin/env python3
"""What reading the layered config (the user's file, the environment, the project's file
and its trust) costs the prompt hook: this checkout's hook against another checkout's
(`--baseline`, e.g. main) and the interpreter's floor `python -c "import sqlite3, json"`,
all interleaved run by run in one series, on one generated store.

    python scripts/bench_config.py --baseline /work/main [--size 10000] [--runs 40]

Configs: none; a project config that only tightens; a project config that asks for more
(untrusted: its SHA-256 is computed and the trust record read on every prompt, the worst
case); the same with a user config beside it.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from memindex.config import Config
from memindex.evaluation import genstore
from memindex.evaluation.bench import hook_command, series
from memindex.evaluation.metrics import table
from memindex.sync import sync

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROMPTS = [p.strip() for p in (HERE / "prompts.txt").read_text().splitlines() if p.strip()]
CONFIGS = {
    "no config": None,
    "project tightens": {"retrieval": {"max_inject": 2}},
    "project asks for more (untrusted)": {"semantic": {"enabled": True, "model": "attacker-org/beacon-model"},
                                          "retrieval": {"min_coverage": 0.0}},
}


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
        env = dict(os.environ, XDG_CONFIG_HOME=str(Path(tmp) / "config"), XDG_STATE_HOME=str(Path(tmp) / "state"))
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
            (f50, f95), (b50, b95), (h50, h95) = series(jobs, env, args.runs)
            rows.append([name, f"{f50 * 1000:.1f} / {f95 * 1000:.1f}", f"{b50 * 1000:.1f} / {b95 * 1000:.1f}",
                         f"{h50 * 1000:.1f} / {h95 * 1000:.1f}", f"{b50 / f50:.2f}x", f"{h50 / f50:.2f}x", f"{h50 / b50:.3f}"])
    print(table(["config", "floor p50/p95 ms", "baseline hook p50/p95 ms", "this hook p50/p95 ms",
                 "baseline / floor", "this / floor", "this / baseline (p50)"], rows))
    print(f"\n{args.size:,} memories; {args.runs} runs per cell, floor and both hooks interleaved run by run;"
          f" baseline {args.baseline}; interpreter {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
