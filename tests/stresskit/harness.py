"""The run's context, its result rows and table, and a temporary project to run memindex against."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memindex.defaults import LOCK_FILE

from .judge import compare_with_rebuild, prompt_payload
from .memories import GENERIC_QUERIES, Target, build_store
from .procs import ENV, HANG_S, PY, UNPRIV, Result, chown_tree, hook_argv, preexec, run


@dataclass
class Row:
    scenario: str
    runs: int = 0
    failures: int = 0
    figures: str = ""
    problems: list[str] = field(default_factory=list)
    note: str = ""
    skipped: str = ""

    @property
    def outcome(self) -> str:
        if self.skipped:
            return f"SKIP ({self.skipped})"
        if self.failures:
            return "FAIL: " + (self.problems[0][:140] if self.problems else "see details")
        return "PASS" + (f" ({self.note})" if self.note else "")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(q * (len(values) - 1)))))
    return values[k]


def md_cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def print_table(rows: list[Row], out: Any = sys.stdout) -> None:
    print("| scenario | runs | failures | figures | outcome |", file=out)
    print("|---|---:|---:|---|---|", file=out)
    for r in rows:
        print(f"| {md_cell(r.scenario)} | {r.runs} | {r.failures} | {md_cell(r.figures)} | {md_cell(r.outcome)} |", file=out)


# seconds of generated inputs per fuzzer in the full run (--quick: a tenth, at least 4 s)
FUZZ_SECONDS = {"hook": 75.0, "queries": 60.0, "config": 40.0, "files": 100.0}


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.quick = args.quick
        self.seed = args.seed
        self.base = Path(tempfile.mkdtemp(prefix="memindex-stress-"))
        os.chmod(self.base, 0o755)  # uid 65534 must be able to reach the projects
        self.scratch = self.base / "scratch"
        self.scratch.mkdir()
        self.rows: list[Row] = []
        self.fuzz_runs = 0
        self.fuzz_seconds = 0.0
        self.special_runs = 0
        self.workers = args.workers or (4 if args.quick else 8)
        self.duration = args.duration or (15.0 if args.quick else 60.0)
        self.kills = args.kills or (9 if args.quick else 60)
        self.fuzz_scale = args.fuzz_scale or (0.1 if args.quick else 1.0)

    def fuzz_seconds_for(self, name: str) -> float:
        return max(4.0, FUZZ_SECONDS[name] * self.fuzz_scale)

    def log(self, message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        self.log(f"{row.scenario}: {row.outcome} ({row.runs} runs, {row.failures} failures) {row.figures}")
        return row


class Project:
    """A temporary project with a memory store; runs memindex against it as root or as
    uid 65534 (`user=True`)."""

    def __init__(self, ctx: Context, name: str, n_fill: int = 120, targets: list[Target] | None = None,
                 seed: int = 0, user: bool = False) -> None:
        self.ctx = ctx
        self.dir = ctx.base / name
        self.project = self.dir / "proj"
        self.root = self.project / ".claude" / "memory"
        self.root.mkdir(parents=True)
        self.targets = targets or []
        build_store(self.root, n_fill, self.targets, seed)
        self.user = user
        if user:
            if not UNPRIV.ready():
                raise RuntimeError(UNPRIV.why)
            chown_tree(self.dir)
        self.python = UNPRIV.python if user else PY
        self.env = UNPRIV.env if user else ENV

    def argv(self, *args: str) -> list[str]:
        return [self.python, "-m", "memindex", "--root", str(self.project), *args]

    def cli(self, *args: str, timeout: float = 90, fsize: int | None = None) -> Result:
        return run(self.argv(*args), timeout=timeout, user=self.user, fsize=fsize, env=self.env, cwd=self.project)

    def hook(self, prompt: str, timeout: float = HANG_S + 10, **extra: Any) -> Result:
        return run(hook_argv("prompt", self.python), input=prompt_payload(self.project, prompt, **extra),
                   timeout=timeout, user=self.user, env=self.env, cwd=self.project)

    def popen(self, *args: str, stdout: Any = subprocess.DEVNULL) -> subprocess.Popen:
        return subprocess.Popen(self.argv(*args), stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE,
                                preexec_fn=preexec(self.user, None), env=self.env, cwd=self.project)

    def queries(self) -> list[str]:
        return [t.prompt for t in self.targets[:4]] + GENERIC_QUERIES

    def compare(self, index_md: bool = True) -> list[str]:
        return compare_with_rebuild(self.root, self.queries(), self.ctx.scratch, index_md=index_md)

    def wait_background(self, limit: float = 10.0) -> None:
        """Let syncs the hook started in the background finish (they hold the lock)."""
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.root / LOCK_FILE), timeout=limit)
        try:
            with lock:
                pass
        except (Timeout, OSError):
            pass
