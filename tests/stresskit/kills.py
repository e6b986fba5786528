"""Scenario "kills": kill -9 of sync, rebuild and watch at random moments, with a reader hammering the hook."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from memindex.defaults import INDEX_FILE

from .faults import fault_targets
from .harness import Context, Project, Row, pct
from .judge import cli_problems, hook_problems, read_jsonl
from .memories import dump, filler, write_atomic


def scenario_kills(ctx: Context) -> None:
    """kill -9 of sync, rebuild and watch at random moments, with a reader hammering the
    hook the whole time; after each kill: hook, status, sync, compare with a rebuild."""
    rng = random.Random(ctx.seed + 60)
    targets = fault_targets(ctx, ctx.seed + 60)
    t = targets[1]
    proj = Project(ctx, "kills", n_fill=700, targets=targets, seed=ctx.seed)
    assert proj.cli("sync").rc == 0
    durations = {}
    for mode in ("sync", "rebuild"):
        if mode == "sync":
            mutate(proj.root, rng, 40)
        durations[mode] = proj.cli(mode).elapsed
    durations["watch"] = 3.0

    stop = threading.Event()
    reader = {"calls": 0, "problems": []}

    def hammer() -> None:
        while not stop.is_set():
            res = proj.hook(t.prompt)
            reader["calls"] += 1
            found = hook_problems(res, proj.root, expect=t.shown, name="concurrent hook")
            if found:
                reader["problems"].extend(found)

    th = threading.Thread(target=hammer, daemon=True)
    th.start()
    per_mode: dict[str, dict[str, Any]] = {m: {"kills": 0, "alive": 0, "writing": 0, "bad": 0, "docs_ok": 0, "md_ok": 0, "problems": [], "recover": []} for m in durations}
    leftovers = 0
    try:
        for i in range(ctx.kills):
            mode = ("sync", "rebuild", "watch")[i % 3]
            stats = per_mode[mode]
            mutate(proj.root, rng, rng.randint(5, 60))
            delay = rng.uniform(0.0, durations[mode] * 1.2)
            log = proj.dir / f"kill-{i}.log"
            wal = Path(f"{proj.root / INDEX_FILE}-wal")
            wal_before = wal.stat().st_size if wal.exists() else 0
            # Half of the sync/rebuild kills wait for the write itself (the WAL growing) and
            # land 0-40 ms later: inside the transaction, at COMMIT, or in the index.md write.
            at_write = mode != "watch" and (i // 3) % 2 == 1
            with open(log, "wb") as out:
                proc = proj.popen(*((mode, "--json") if mode == "watch" else (mode,)), stdout=out)
                if at_write:
                    end = time.monotonic() + 30
                    while proc.poll() is None and time.monotonic() < end:
                        if wal.exists() and wal.stat().st_size > wal_before:
                            break
                        time.sleep(0.001)
                    delay = rng.uniform(0.0, 0.04)
                end = time.monotonic() + delay
                while time.monotonic() < end:
                    if mode == "watch":
                        mutate(proj.root, rng, 3)
                    time.sleep(min(0.05, max(0.0, end - time.monotonic())))
                alive = proc.poll() is None
                writing = alive and wal.exists() and wal.stat().st_size > wal_before
                proc.kill()
                proc.wait()
                if proc.stderr is not None:
                    proc.stderr.close()
            stats["kills"] += 1
            stats["alive"] += int(alive)
            stats["writing"] += int(writing)
            problems = []
            res = proj.hook(t.prompt)
            problems += hook_problems(res, proj.root, expect=t.shown, name="hook right after the kill")
            res = proj.cli("status")
            problems += cli_problems(res, "status after the kill", ok=(0,), fail=(4,))
            if mode == "watch" and "watcher:  not running" not in res.out and res.rc == 0:
                problems.append(f"status after kill -9 of watch does not say 'not running': {res.out[:200]!r}")
            if mode == "watch" and stats["kills"] <= (3 if ctx.quick else 8):
                problems += watch_restarts(proj)
            started = time.monotonic()
            res = proj.cli("sync")
            stats["recover"].append(time.monotonic() - started)
            problems += cli_problems(res, "sync after the kill")
            if res.rc == 0:
                problems += proj.compare()
            leftovers = len([n for n in os.listdir(proj.root) if n.endswith(".tmp")])
            if not any("index.md" not in p for p in problems):
                stats["docs_ok"] += 1
            if not any("index.md" in p for p in problems):
                stats["md_ok"] += 1
            if problems:
                stats["bad"] += 1
                stats["problems"] += [f"kill {i} ({mode}, after {delay:.2f} s, {'running' if alive else 'already done'}): {p}" for p in problems]
    finally:
        stop.set()
        th.join(timeout=30)
    for mode, stats in per_mode.items():
        rec = stats["recover"]
        title = f"kill -9 of {mode} " + ("(random moments while files change)" if mode == "watch"
                                         else "(random moments; every other one once its write has begun)")
        n = stats["kills"]
        ctx.add(Row(
            title, runs=n, failures=stats["bad"],
            figures=(f"killed while running {stats['alive']}/{n} (after its write had begun: {stats['writing']}); "
                     f"then: hook, status, sync; documents + searches = clean rebuild {stats['docs_ok']}/{n}, "
                     f"index.md = clean rebuild's {stats['md_ok']}/{n}; recovery sync p50 {pct(rec, .5) * 1000:.0f} ms"
                     + ("; a new watcher starts after the kill" if mode == "watch" else "")),
            problems=stats["problems"],
        ))
    ctx.add(Row(
        "kill -9 series: hook reading concurrently", runs=reader["calls"], failures=len(reader["problems"]),
        note=f"weakness: {leftovers} temp files left in the memory root" if leftovers else "",
        figures=f"every call had to inject the same untouched memory; `.index.md.*.tmp` files left behind by killed writers: {leftovers}",
        problems=reader["problems"],
    ))


def mutate(root: Path, rng: random.Random, n: int) -> None:
    """Edit, create and delete some filler memories (never the targets)."""
    for _ in range(n):
        r = rng.random()
        i = rng.randrange(900)
        rel, doc = filler(i, rng, marker=f"m{rng.randrange(10_000)}")
        path = root / rel
        if r < 0.2 and path.exists():
            path.unlink()
        else:
            write_atomic(path, dump(doc))


def watch_restarts(proj: Project) -> list[str]:
    """After kill -9, a new watcher must start (the stale marker does not block it) and
    stop cleanly on SIGTERM."""
    log = proj.dir / "watch-restart.jsonl"
    with open(log, "wb") as out:
        proc = proj.popen("watch", "--json", stdout=out)
        deadline = time.monotonic() + 20
        ok = False
        while time.monotonic() < deadline and proc.poll() is None:
            if any(e.get("event") == "sync" for e in read_jsonl(log)):
                ok = True
                break
            time.sleep(0.05)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    if not ok:
        return [f"watch did not start after kill -9 of the previous one (exit {rc}): {(err or log.read_text())[-300:]!r}"]
    if rc != 0:
        return [f"restarted watch exited {rc} on SIGTERM: {err[-200:]!r}"]
    return []
