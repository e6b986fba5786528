"""The scenarios by name and one whole run (scripts/stress.py): scenarios, table, failures, exit status."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

from .faults import (
    scenario_commit_crash,
    scenario_disk_full,
    scenario_index_faults,
    scenario_lock_faults,
    scenario_permission_faults,
)
from .freshness import scenario_freshness
from .harness import Context, Row, print_table
from .hostile import scenario_hostile
from .kills import scenario_kills
from .load import scenario_load
from .procs import remove_tree
from .semantic import scenario_semantic
from .special import scenario_fuzz

SCENARIOS: dict[str, Callable[[Context], None]] = {
    "load": scenario_load,
    "kills": scenario_kills,
    "disk": scenario_disk_full,
    "index": scenario_index_faults,
    "locks": scenario_lock_faults,
    "perms": scenario_permission_faults,
    "commit": scenario_commit_crash,
    "fuzz": scenario_fuzz,
    "hostile": scenario_hostile,
    "semantic": scenario_semantic,
    "freshness": scenario_freshness,
}
GROUPS = {"faults": ["kills", "disk", "index", "locks", "perms", "commit"]}


def scenario_names(only: str | None) -> list[str]:
    """The scenarios an `--only` value names (groups expanded); ValueError on unknown ones."""
    names: list[str] = []
    for part in (only or "load,faults,fuzz,hostile,semantic,freshness").split(","):
        names += GROUPS.get(part.strip(), [part.strip()])
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenario(s): {', '.join(unknown)}")
    return names


def run_all(args: argparse.Namespace) -> int:
    """One whole run as scripts/stress.py's options describe it; prints the table and the
    failures; 1 when any target is missed, else 0."""
    names = scenario_names(args.only)
    ctx = Context(args)
    started = time.monotonic()
    ctx.log(f"memindex stress ({'quick' if ctx.quick else 'full'}), seed {ctx.seed}, in {ctx.base}")
    try:
        for name in names:
            try:
                SCENARIOS[name](ctx)
            except Exception as exc:  # noqa: BLE001  (a broken scenario is a failure, not a crash of the run)
                ctx.add(Row(f"{name}: harness error", failures=1, problems=[f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"]))
    finally:
        if not args.keep:
            remove_tree(ctx.base)
    total = time.monotonic() - started
    print()
    print(f"memindex stress, {'quick' if ctx.quick else 'full'} run, seed {ctx.seed}, {total / 60:.1f} min, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}")
    print()
    print_table(ctx.rows)
    print()
    print(f"Fuzzing budget: {ctx.fuzz_runs} generated inputs in {ctx.fuzz_seconds / 60:.1f} min (hypothesis), "
          f"plus {ctx.special_runs} hand-written hostile inputs run as real processes.")
    failed = [r for r in ctx.rows if r.failures]
    if failed:
        print()
        print("Failures:")
        for r in failed:
            print(f"- {r.scenario}:")
            for p in dict.fromkeys(r.problems[:8]):
                print(f"    - {p[:400]}")
            if len(r.problems) > 8:
                print(f"    - ... and {len(r.problems) - 8} more")
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ | {"outcome": r.outcome} for r in ctx.rows], indent=1))
    print()
    print("TARGETS MISSED" if failed else "ALL TARGETS MET")
    return 1 if failed else 0
