"""Scenario "load": hook processes in a loop while files change, sync and watch run; every answer judged."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
import time
from bisect import bisect_left
from dataclasses import dataclass

from memindex.defaults import FOLDERS

from .harness import Context, Project, Row, pct
from .judge import (
    cli_problems,
    hook_problems,
    parse_block,
    prompt_payload,
    read_docs,
    read_jsonl,
)
from .memories import (
    DEFAULT_CONTENT,
    TEXT_FIELD,
    VOCAB,
    NonceWords,
    Target,
    dump,
    filler,
    new_target,
    walk_rels,
    write_atomic,
)
from .procs import BUDGET_S, DISPLAY, ENV, HANG_S, Result, hook_argv

INF = float("inf")


@dataclass
class Call:
    worker: int
    target: Target | None
    h0: float
    h1: float
    rc: int | None
    out: str
    err: str
    timed_out: bool


def scenario_load(ctx: Context) -> None:
    rng = random.Random(ctx.seed)
    words = NonceWords(rng)
    initial = [new_target(words, rng) for _ in range(40)]
    proj = Project(ctx, "load", n_fill=300, targets=initial, seed=ctx.seed)
    root = proj.root
    first = proj.cli("sync")
    if first.rc != 0:
        ctx.add(Row("load", failures=1, problems=[f"initial sync failed: {first.err[-300:]}"]))
        return
    # The prompts must single out their memory before anything else is measured.
    design = []
    for t in initial[:4]:
        design += hook_problems(proj.hook(t.prompt), root, expect=t.shown, name=f"baseline {t.id}")
    if design:
        ctx.add(Row("load: prompt design", runs=4, failures=len(design), problems=design))
        return

    lock = threading.Lock()
    intervals: dict[str, list[list[float]]] = {}
    for t in initial:
        intervals[t.rel] = [[-INF, -INF, INF, INF]]
    for rel in walk_rels(root):
        intervals.setdefault(rel, [[-INF, -INF, INF, INF]])
    syncs: list[tuple[float, float, int | None, str]] = [(-INF, -INF, 0, "")]
    live: dict[str, Target] = {t.rel: t for t in initial}
    deleted: list[Target] = []
    fillers = [r for r in intervals if r.split("/")[1].startswith("f")]
    calls: list[Call] = []
    ops = {"create": 0, "delete": 0, "edit-atomic": 0, "edit-in-place": 0}
    stop = threading.Event()
    failures_in_threads: list[str] = []

    def mutator() -> None:
        mrng = random.Random(ctx.seed + 1)
        next_fill = 100_000
        rev = 0
        try:
            while not stop.is_set():
                r = mrng.random()
                with lock:
                    live_targets = list(live.values())
                if r < 0.15 or len(live_targets) < 20:  # create a target
                    t = new_target(words, mrng)
                    t0 = time.monotonic()
                    write_atomic(root / t.rel, dump(t.doc()))
                    t1 = time.monotonic()
                    with lock:
                        intervals.setdefault(t.rel, []).append([t0, t1, INF, INF])
                        live[t.rel] = t
                    ops["create"] += 1
                elif r < 0.25:  # delete a target
                    t = mrng.choice(live_targets)
                    with lock:
                        live.pop(t.rel, None)
                    t0 = time.monotonic()
                    os.unlink(root / t.rel)
                    t1 = time.monotonic()
                    with lock:
                        intervals[t.rel][-1][2:] = [t0, t1]
                        deleted.append(t)
                    ops["delete"] += 1
                elif r < 0.40:  # edit a target atomically (it never stops existing)
                    t = mrng.choice(live_targets)
                    rev += 1
                    with lock:
                        if t.rel in live:
                            write_atomic(root / t.rel, dump(t.doc(rev)))
                    ops["edit-atomic"] += 1
                elif r < 0.60:  # create a filler
                    next_fill += 1
                    rel, doc = filler(next_fill, mrng)
                    t0 = time.monotonic()
                    write_atomic(root / rel, dump(doc))
                    t1 = time.monotonic()
                    with lock:
                        intervals.setdefault(rel, []).append([t0, t1, INF, INF])
                        fillers.append(rel)
                    ops["create"] += 1
                elif r < 0.75 and len(fillers) > 50:  # delete a filler
                    rel = fillers.pop(mrng.randrange(len(fillers)))
                    t0 = time.monotonic()
                    os.unlink(root / rel)
                    t1 = time.monotonic()
                    with lock:
                        intervals[rel][-1][2:] = [t0, t1]
                    ops["delete"] += 1
                else:  # edit a filler in place (truncate + write, as some editors do)
                    rel = mrng.choice(fillers)
                    _, doc = filler(int(rel.split("/")[1][1:6]), mrng, marker=f"edit{mrng.randrange(1000)}")
                    doc["id"] = rel.split("/")[1][:-5]
                    doc["category"] = FOLDERS[rel.split("/")[0]]
                    doc["content"] = {**DEFAULT_CONTENT[doc["category"]], TEXT_FIELD[doc["category"]]: "edited " + " ".join(mrng.sample(VOCAB, 8))}
                    (root / rel).write_bytes(dump(doc))
                    ops["edit-in-place"] += 1
                time.sleep(mrng.uniform(0.01, 0.06))
        except Exception as exc:  # noqa: BLE001
            failures_in_threads.append(f"mutator: {type(exc).__name__}: {exc}")

    sync_results: list[Result] = []

    def syncer() -> None:
        srng = random.Random(ctx.seed + 2)
        while not stop.is_set():
            t0 = time.monotonic()
            res = proj.cli("sync", "--quiet", timeout=60)
            t1 = time.monotonic()
            with lock:
                syncs.append((t0, t1, res.rc, res.err))
                sync_results.append(res)
            stop.wait(srng.uniform(0.2, 0.8))

    def worker(n: int) -> None:
        wrng = random.Random(ctx.seed * 100 + n)
        argv = hook_argv("prompt")
        while not stop.is_set():
            r = wrng.random()
            with lock:
                if r < 0.55 and live:
                    target = wrng.choice(list(live.values()))
                elif r < 0.75 and deleted:
                    target = wrng.choice(deleted)
                else:
                    target = None
            prompt = target.prompt if target else " ".join(wrng.sample(VOCAB, 4))
            payload = prompt_payload(proj.project, prompt)
            h0 = time.monotonic()
            try:
                p = subprocess.run(argv, input=payload, capture_output=True, timeout=HANG_S + 10, env=ENV, cwd=proj.project)
                rc, out, err, to = p.returncode, p.stdout, p.stderr, False
            except subprocess.TimeoutExpired as exc:
                rc, out, err, to = None, exc.stdout or b"", exc.stderr or b"", True
            h1 = time.monotonic()
            calls.append(Call(n, target, h0, h1, rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), to))

    watch_log = proj.dir / "watch.jsonl"
    with open(watch_log, "wb") as wl:
        watcher = subprocess.Popen(proj.argv("watch", "--json", "--debounce", "200"), stdin=subprocess.DEVNULL,
                                   stdout=wl, stderr=subprocess.STDOUT, env=ENV, cwd=proj.project)
    threads = [threading.Thread(target=mutator, daemon=True), threading.Thread(target=syncer, daemon=True)]
    threads += [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(ctx.workers)]
    started = time.monotonic()
    for th in threads:
        th.start()
    stop.wait(ctx.duration)
    stop.set()
    for th in threads:
        th.join(timeout=60)
    elapsed = time.monotonic() - started
    watcher.send_signal(signal.SIGTERM)
    try:
        watch_rc = watcher.wait(timeout=30)
    except subprocess.TimeoutExpired:
        watcher.kill()
        watch_rc = None
    proj.wait_background()
    final = proj.cli("sync")

    # --- judging ---------------------------------------------------------------------
    completed = sorted((s for s in syncs if s[2] == 0), key=lambda s: s[1])
    ends = [s[1] for s in completed]

    def last_sync_start(h0: float) -> float:
        k = bisect_left(ends, h0) - 1
        return completed[k][0] if k >= 0 else -INF

    latencies = [c.h1 - c.h0 for c in calls]
    errors: list[str] = []
    corrupt: list[str] = []
    missed: list[str] = []
    notices = stale = expected = found = gave_up = 0
    for c in calls:
        s = last_sync_start(c.h0)
        lines = [line for line in c.err.splitlines() if line.strip()]
        if c.timed_out:
            errors.append(f"hook hung ({c.h1 - c.h0:.1f} s)")
        elif c.rc != 0:
            errors.append(f"hook exit {c.rc}: {c.err[-200:]!r}")
        elif "Traceback" in c.err:
            errors.append(f"hook traceback: {lines[-1] if lines else ''}")
        elif len(lines) > 1 or (lines and not lines[0].startswith("memindex hook: ")):
            errors.append(f"hook stderr: {c.err[:200]!r}")
        elif lines:
            notices += 1
            if "gave up" in lines[0]:
                gave_up += 1
            elif not _expected_notice(lines[0]):
                errors.append(f"unexpected hook notice: {lines[0][:200]!r}")
        paths, block = parse_block(c.out, root)
        if block:
            corrupt.append(f"malformed block: {block[0]}")
        for shown in paths:
            rel = shown[len(DISPLAY):]
            ivs = intervals.get(rel, [])
            if not any(iv[0] <= c.h1 and iv[3] >= s for iv in ivs):
                corrupt.append(f"{rel} shown at [{c.h0:.3f}, {c.h1:.3f}] but it did not exist since the last completed sync (started {s:.3f}): {ivs}")
            elif all(iv[3] < c.h0 for iv in ivs):
                stale += 1
        if c.target is not None:
            ivs = intervals.get(c.target.rel, [])
            if any(iv[1] < s and iv[2] > c.h1 for iv in ivs):
                expected += 1
                if c.target.shown in paths:
                    found += 1
                else:
                    why = lines[0] if lines else "no notice"
                    missed.append(f"{c.target.rel} existed before the last completed sync (started {s:.3f}) and was not injected at [{c.h0:.3f}, {c.h1:.3f}]: {why}")

    sync_bad = []
    for res in sync_results:
        sync_bad += cli_problems(res, "sync", ok=(0,), fail=(3,))
    sync_failed = sum(1 for s in syncs[1:] if s[2] != 0)
    watch_events = read_jsonl(watch_log)
    watch_syncs = sum(1 for e in watch_events if e.get("event") == "sync")
    watch_errors = [e.get("msg", e.get("error", "")) for e in watch_events if e.get("event") == "error"]
    watch_bad = [m for m in watch_errors if "LockTimeout" not in str(m)]
    if watch_rc != 0:
        watch_bad.append(f"watch exited {watch_rc} on SIGTERM")
    if any("Traceback" in str(e) for e in watch_events):
        watch_bad.append("traceback in the watcher's output")

    live_now = set(walk_rels(root))
    lost: list[str] = []
    recovery: list[str] = cli_problems(final, "final sync")
    if final.rc == 0:
        indexed = {row[0] for row in read_docs(root)}
        lost = [rel for rel in sorted(live) if rel in live_now and rel not in indexed]
        recovery += proj.compare()

    mode = f"{ctx.workers} hook loops + mutator + sync loop + watch, {ctx.duration:.0f} s"
    ctx.add(Row(
        f"load: hook calls ({mode})", runs=len(calls), failures=len(errors),
        figures=(f"{len(calls) / elapsed:.1f} calls/s; latency p50 {pct(latencies, .5) * 1000:.0f} ms, "
                 f"p99 {pct(latencies, .99) * 1000:.0f} ms, max {max(latencies, default=0) * 1000:.0f} ms; "
                 f"errors {len(errors)}; one-line notices {notices} (gave up after {BUDGET_S:g} s: {gave_up})"),
        problems=errors + failures_in_threads,
    ))
    ctx.add(Row(
        "load: answers (corrupt / missed)", runs=len(calls), failures=len(corrupt) + len(missed),
        figures=(f"corrupt {len(corrupt)}; unique-match prompts whose memory predates the last completed sync "
                 f"{expected}, injected {found}, missed {len(missed)}; stale-after-delete (allowed) {stale}"),
        problems=corrupt + missed,
    ))
    ctx.add(Row(
        "load: writers (sync loop, watch)", runs=len(sync_results) + 1, failures=len(sync_bad) + len(watch_bad),
        figures=(f"mutations {sum(ops.values())} ({', '.join(f'{k} {v}' for k, v in ops.items())}); "
                 f"`memindex sync` runs {len(sync_results)}, non-zero {sync_failed}; watch syncs {watch_syncs}, "
                 f"lock waits retried {len(watch_errors) - len([m for m in watch_errors if 'LockTimeout' not in str(m)])}, exit {watch_rc}"),
        problems=sync_bad + watch_bad,
    ))
    ctx.add(Row(
        "load: final index (lost memories, equals clean rebuild)", runs=1, failures=int(bool(lost or recovery)),
        figures=f"memories on disk {len(live_now)}; live unique memories missing from the index {len(lost)}",
        problems=[f"lost: {rel}" for rel in lost] + recovery,
    ))


def _expected_notice(line: str) -> bool:
    return any(k in line for k in ("gave up after", "a background sync was started", "could not start a background sync"))
