"""Shared pieces of the benchmarks (scripts/bench_*.py) and the stress run: timing helpers
and the prompt hook's command line."""

from __future__ import annotations

import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

HOOK_EVENTS = {
    "prompt": "UserPromptSubmit", "pre-tool-use": "PreToolUse", "post-tool-use": "PostToolUse", "session-start": "SessionStart",
    "stop": "Stop", "session-end": "SessionEnd",
}


def hook_command(repo: Path, event: str = "prompt", python: str = sys.executable) -> list[str]:
    """The command exactly as `<repo>/hooks/hooks.json` gives it to Claude Code, `python3`
    being `python` (the interpreter memindex is installed for)."""
    hooks = json.loads((repo / "hooks" / "hooks.json").read_text())["hooks"]
    command = hooks[HOOK_EVENTS[event]][0]["hooks"][0]["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(repo))
    argv = shlex.split(command)
    return [python, *argv[1:]]


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    """Median seconds of `repeat` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 (nearest rank)."""
    samples = sorted(samples)
    return samples[len(samples) // 2], samples[min(len(samples) - 1, int(len(samples) * 0.95))]


def time_process(cmd: list[str], stdin: bytes, env: dict) -> float:
    """Seconds from the start of a process to its exit (its output discarded)."""
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def series(jobs: list[tuple], env: dict, runs: int) -> list[tuple[float, float]]:
    """p50/p95 of each (command, payloads[, environment of its own]), their runs interleaved
    so that drift hits all alike."""
    times: list[list[float]] = [[] for _ in jobs]
    for i in range(runs):
        for (cmd, payloads, *own), samples in zip(jobs, times):
            samples.append(time_process(cmd, payloads[i % len(payloads)], own[0] if own else env))
    return [(statistics.median(t), sorted(t)[min(len(t) - 1, int(len(t) * 0.95))]) for t in times]


def wait_for(predicate: Callable[[], object], timeout: float = 10.0, what: str = "condition", step: float = 0.02) -> object:
    """Poll until `predicate()` is truthy (its value) or raise AssertionError after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)


def settle(folder: Path, budget_s: float = 20.0) -> list[int]:
    """Wait until no process names `folder` on its command line (the hooks' detached
    syncs and capture jobs), so the caller can delete it; the pids still running after
    `budget_s` (left alone). Reads /proc: elsewhere it returns at once."""
    import os

    want = str(folder).encode()
    deadline = time.monotonic() + budget_s
    while True:
        busy = []
        if os.path.isdir("/proc"):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit() and int(entry.name) != os.getpid():
                    try:
                        with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                            if want in fh.read():
                                busy.append(int(entry.name))
                    except OSError:
                        continue
        if not busy or time.monotonic() > deadline:
            return busy
        time.sleep(0.1)
