#!/usr/bin/env python3
"""Benchmark `memindex watch` at scale and print a table (docs/benchmarks.md).

    python scripts/bench_watch.py [--count 10000] [--edits 40] [--idle-s 60] [--burst 1000]

What it measures, on a generated store of --count memories (scripts/gen_store.py, i.e.
memindex_dev.evaluation.genstore):

* edit-to-searchable latency with the native observer: an edit (in place, atomic rename,
  or a new file) carries a unique token; the clock runs from the end of the write until a
  reader's FTS query finds the token (p50 / p95 / max);
* idle CPU of the native watcher over --idle-s seconds, from /proc/<pid>/stat
  (utime + stime), as a share of one core;
* bursts of --burst changed files (in-place edits, then new files): time until all are
  searchable and the number of syncs the watcher ran for them (from its JSON log);
* the polling watcher at the default interval: idle CPU, stat calls per second, latency;
  the same at fixed intervals (--poll-intervals) to choose the default; and the CPU of one
  poll scan with memindex's scanner against watchdog's generic DirectorySnapshot.

Linux only (it reads /proc). Everything runs in a temporary folder unless --out is given.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex_dev.evaluation.bench import wait_for  # noqa: E402
from memindex import index  # noqa: E402
from memindex.defaults import FOLDERS  # noqa: E402
from memindex_dev.evaluation import genstore  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# --- the store ------------------------------------------------------------------------------


def generate(out: Path, count: int, seed: int = 0) -> Path:
    """A realistic store of `count` memories (memindex_dev.evaluation.genstore); its memory root."""
    genstore.generate(out, count, seed)
    return out / ".claude" / "memory"


def memory(folder: str, mem_id: str, title: str, body: str) -> dict:
    return {
        "schema_version": "1.0", "category": FOLDERS[folder], "id": mem_id, "title": title,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "tags": ["bench"], "content": {"context": body}, "related_files": [], "confidence": 0.8,
        "record_status": "active",
    }


# --- the watcher process --------------------------------------------------------------------


class WatchProc:
    def __init__(self, root: Path, *args: str) -> None:
        cmd = [sys.executable, "-m", "memindex", "--root", str(root), "watch", "--json", *args]
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.records: list[dict] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, args=(self.p.stdout, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.p.stderr, False), daemon=True).start()

    def _pump(self, stream, is_json: bool) -> None:
        for line in stream:
            if is_json:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                record["_t"] = time.monotonic()
                self.records.append(record)
            else:
                self.stderr.append(line)

    def events(self, name: str, since: float = 0.0) -> list[dict]:
        return [r for r in list(self.records) if r["event"] == name and r["_t"] >= since]

    def wait_started(self, timeout: float = 600) -> None:
        wait_for(lambda: self.events("sync") or self.p.poll() is not None, timeout)
        if self.p.poll() is not None:
            raise SystemExit(f"watcher exited: {''.join(self.stderr)}")

    def cpu_s(self) -> float:
        """utime + stime of the watcher so far, in seconds."""
        with open(f"/proc/{self.p.pid}/stat") as fh:
            data = fh.read()
        fields = data[data.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stop(self) -> int:
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(60)
        time.sleep(0.2)  # let the pump threads read the last lines
        return rc


def wait_quiet(proc: WatchProc, quiet_s: float = 1.5, timeout: float = 120) -> None:
    """Wait until the watcher has logged nothing for `quiet_s` (no sync pending or running)."""

    def quiet() -> bool:
        last = max((r["_t"] for r in list(proc.records)), default=0.0)
        return time.monotonic() - last >= quiet_s

    wait_for(quiet, timeout, step=0.05)


def idle_cpu(proc: WatchProc, seconds: float) -> float:
    """The watcher's CPU over `seconds` of no changes, in percent of one core."""
    c0, t0 = proc.cpu_s(), time.monotonic()
    time.sleep(seconds)
    c1, t1 = proc.cpu_s(), time.monotonic()
    return 100 * (c1 - c0) / (t1 - t0)


# --- edits and searches ---------------------------------------------------------------------


class Reader:
    """One read-only connection, as the hook and search have: FTS lookups of a token."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.conn = index.open_reader(root)

    def count(self, token: str) -> int:
        return self.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (f'"{token}"',)).fetchone()[0]

    def close(self) -> None:
        self.conn.close()


def edit(path: Path, token: str, how: str) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    content = data.setdefault("content", {})
    content["bench_note"] = f"{content.get('bench_note', '')} {token}".strip()
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if how == "atomic":
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    else:
        path.write_text(text, encoding="utf-8")


def create(root: Path, name: str, token: str) -> None:
    folder = random.choice(list(FOLDERS))
    data = memory(folder, name, f"Bench note {name}", f"created by the benchmark {token}")
    tmp = root / folder / f".{name}.json.tmp"
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, root / folder / f"{name}.json")


def latencies(
    root: Path, files: list[Path], n: int, nonce: str, timeout: float = 60, gap: tuple[float, float] = (0.1, 0.4)
) -> tuple[list[float], dict[str, list[float]]]:
    """Edit, then time until searchable; `gap` is the random pause between edits (for
    polling it spans a whole interval, so edits do not fall in step with the scans)."""
    reader = Reader(root)
    kinds = ("in-place", "atomic", "new file")
    out: list[float] = []
    by_kind: dict[str, list[float]] = {k: [] for k in kinds}
    rng = random.Random(nonce)
    try:
        for k in range(n):
            token = f"wbt{nonce}x{k}"
            how = kinds[k % 3]
            if how == "new file":
                create(root, f"bench-{nonce}-{k}", token)
            else:
                edit(rng.choice(files), token, "atomic" if how == "atomic" else "in-place")
            t0 = time.perf_counter()
            wait_for(lambda: reader.count(token) > 0, timeout, step=0.002)
            dt = time.perf_counter() - t0
            out.append(dt)
            by_kind[how].append(dt)
            time.sleep(rng.uniform(*gap))  # separate edits (each its own debounce window)
    finally:
        reader.close()
    return out, by_kind


def burst(root: Path, proc: WatchProc, files: list[Path], kind: str, n: int, nonce: str) -> dict:
    wait_quiet(proc)
    reader = Reader(root)
    token = f"wbb{nonce}{kind[0]}"
    start = time.monotonic()
    t0 = time.perf_counter()
    if kind == "edits":
        for path in files[:n]:
            edit(path, token, "in-place")
    else:
        for i in range(n):
            create(root, f"burst-{nonce}-{i}", token)
    written = time.perf_counter()
    wait_for(lambda: reader.count(token) >= n, 300, step=0.01)
    done = time.perf_counter()
    reader.close()
    wait_quiet(proc)  # trailing events may still make a sync: count it too
    syncs = [r for r in proc.events("sync", start)]
    return {
        "kind": kind,
        "files": n,
        "write_s": written - t0,
        "searchable_after_last_write_s": done - written,
        "syncs": len(syncs),
        "sync_indexed": [r["added"] + r["updated"] for r in syncs],
        "sync_ms": [r["ms"] for r in syncs],
        "sync_full": [r["full"] for r in syncs],
    }


# --- polling cost ---------------------------------------------------------------------------


def scanner_cost(root: Path, rounds: int = 5) -> dict[str, float]:
    """CPU ms of one unchanged poll (scan + diff): memindex's scanner vs watchdog's snapshot."""
    from watchdog.utils.dirsnapshot import DirectorySnapshot, DirectorySnapshotDiff

    from memindex.watch import PollScanner

    scanner = PollScanner(root)

    def ours() -> None:
        a = scanner.scan()
        b = scanner.scan()
        PollScanner.diff(a, b)

    def theirs() -> None:
        a = DirectorySnapshot(str(root), recursive=True)
        b = DirectorySnapshot(str(root), recursive=True)
        DirectorySnapshotDiff(a, b)

    out = {}
    for name, fn in (("memindex PollScanner", ours), ("watchdog DirectorySnapshot", theirs)):
        fn()
        times = []
        for _ in range(rounds):
            c0 = time.process_time()
            fn()
            times.append((time.process_time() - c0) / 2 * 1000)
        out[name] = statistics.median(times)
    out["stat_calls_per_scan"] = scanner.scan().stats
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


# --- main -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=45, help="native latency samples (a multiple of 3)")
    ap.add_argument("--poll-edits", type=int, default=12, help="polling latency samples")
    ap.add_argument("--idle-s", type=float, default=60.0)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--poll-intervals", default="1,2,5", help="fixed intervals to measure (seconds, comma-separated)")
    ap.add_argument("--poll-window-s", type=float, default=20.0, help="CPU window per fixed interval")
    ap.add_argument("--out", type=Path, help="keep the store here (default: a temporary folder)")
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    args = ap.parse_args(argv)

    tmp = None
    if args.out is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-watch-")
        args.out = Path(tmp.name)
    results: dict = {"count": args.count, "cpus": os.cpu_count(), "python": sys.version.split()[0]}
    rows: list[tuple[str, str, str]] = []
    nonce = f"{random.randrange(16**6):06x}"

    t = time.perf_counter()
    root = generate(args.out, args.count)
    results["generate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memindex", "--root", str(root), "sync", "--quiet"], check=True, cwd=REPO)
    results["initial_sync_s"] = time.perf_counter() - t
    files = sorted(p for folder in FOLDERS for p in (root / folder).glob("*.json"))
    print(f"store: {len(files)} memories in {root} (generated in {results['generate_s']:.1f} s,"
          f" indexed in {results['initial_sync_s']:.1f} s)", file=sys.stderr)

    # native observer
    proc = WatchProc(root)
    proc.wait_started()
    wait_quiet(proc)
    start = next(r for r in proc.records if r["event"] == "start")
    print(f"native watcher: {start['observer_class']}, debounce {start['debounce_ms']} ms", file=sys.stderr)
    results["native_observer"] = start["observer_class"]
    results["native_idle_cpu_pct"] = idle_cpu(proc, args.idle_s)
    lat, by_kind = latencies(root, files, args.edits, nonce)
    results["native_latency_s"] = lat
    results["native_latency_by_kind_s"] = by_kind
    results["bursts"] = [
        burst(root, proc, files, "edits", args.burst, nonce),
        burst(root, proc, files, "new files", args.burst, nonce),
    ]
    results["native_exit_code"] = proc.stop()
    rows += [
        ("native: observer", start["observer_class"], ""),
        ("native: edit-to-searchable p50", f"{pct(lat, .5) * 1000:.0f} ms", "target <= 1000 ms"),
        ("native: edit-to-searchable p95", f"{pct(lat, .95) * 1000:.0f} ms", "target <= 2000 ms"),
        ("native: edit-to-searchable max", f"{max(lat) * 1000:.0f} ms", f"{len(lat)} edits"),
    ]
    for kind, values in by_kind.items():
        rows.append((f"native: p50 / p95, {kind}", f"{pct(values, .5) * 1000:.0f} / {pct(values, .95) * 1000:.0f} ms", f"{len(values)} edits"))
    rows.append(("native: idle CPU", f"{results['native_idle_cpu_pct']:.3f} % of a core", f"over {args.idle_s:g} s; target <= 1 %"))
    for b in results["bursts"]:
        rows.append((
            f"burst of {b['files']} {b['kind']}",
            f"{b['syncs']} sync{'s' if b['syncs'] != 1 else ''} ({' + '.join(map(str, b['sync_indexed']))} files indexed)",
            f"written in {b['write_s']:.2f} s, all searchable {b['searchable_after_last_write_s']:.2f} s after the last write;"
            f" sync ms {', '.join(f'{m:.0f}' for m in b['sync_ms'])}",
        ))
    rows.append(("native: exit code on SIGTERM", str(results["native_exit_code"]), ""))

    # polling: default interval (adaptive), then fixed intervals
    proc = WatchProc(root, "--polling")
    proc.wait_started()
    wait_quiet(proc)
    results["poll_idle_cpu_pct"] = idle_cpu(proc, args.idle_s)
    poll = proc.events("poll")[-1]
    plat, _ = latencies(root, files, args.poll_edits, nonce + "p", timeout=120, gap=(0.1, poll["interval_s"] + 0.5))
    results["poll_latency_s"] = plat
    results["poll_exit_code"] = proc.stop()
    stop = proc.events("stop")[-1]
    results["poll_default"] = {"reported": poll, "measured": stop.get("poll")}
    measured = stop.get("poll") or {}
    rows += [
        ("polling (default): interval", f"{poll['interval_s']:.2f} s", f"base {poll['base_interval_s']:g} s (watch.poll_interval_s)"),
        ("polling (default): stat calls", f"{poll['stat_calls_per_scan']} per scan, {measured.get('stat_calls_per_s_measured', float('nan')):.0f}/s measured", ""),
        ("polling (default): scan CPU", f"{poll['scan_cpu_ms']:.1f} ms per scan", f"watcher's own estimate {poll['cpu_pct']:.2f} % of a core"),
        ("polling (default): idle CPU", f"{results['poll_idle_cpu_pct']:.2f} % of a core", f"over {args.idle_s:g} s, /proc"),
        ("polling (default): edit-to-searchable p50 / p95", f"{pct(plat, .5) * 1000:.0f} / {pct(plat, .95) * 1000:.0f} ms", f"{len(plat)} edits"),
    ]
    results["poll_fixed"] = []
    for text in filter(None, args.poll_intervals.split(",")):
        interval = float(text)
        proc = WatchProc(root, "--polling", "--interval", f"{interval:g}")
        proc.wait_started()
        wait_quiet(proc)
        cpu = idle_cpu(proc, args.poll_window_s)
        proc.stop()
        stop = proc.events("stop")[-1].get("poll") or {}
        results["poll_fixed"].append({"interval_s": interval, "cpu_pct": cpu, "stat_calls_per_s": stop.get("stat_calls_per_s_measured")})
        rows.append((
            f"polling --interval {interval:g}: idle CPU",
            f"{cpu:.2f} % of a core",
            f"{stop.get('stat_calls_per_s_measured', float('nan')):.0f} stat calls/s over {args.poll_window_s:g} s",
        ))
    cost = scanner_cost(root)
    results["scanner_cost_ms"] = cost
    for name in ("memindex PollScanner", "watchdog DirectorySnapshot"):
        rows.append((f"one unchanged poll, {name}", f"{cost[name]:.1f} ms CPU", f"scan + diff, {args.count} memories"))

    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    print(f"\n| {'measure':<{width}} | {'value':<{vwidth}} | notes |")
    print(f"|{'-' * (width + 2)}|{'-' * (vwidth + 2)}|-------|")
    for name, value, note in rows:
        print(f"| {name:<{width}} | {value:<{vwidth}} | {note} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
