#!/usr/bin/env python3
"""The resident semantic worker at scale: prompt-hook latency, memory, idle CPU, freshness.

    python scripts/bench_semantic.py [--size 10000] [--runs 40] [--edits 10] [--model MODEL] [--store DIR] [--titles-only]
    python scripts/bench_semantic.py --size 1000 --runs 10 --model builtin:hashing   # a quick run

One store of `--size` generated memories (memindex_dev.evaluation.genstore), synced with the
semantic channel on (every memory embedded by `--model`: the real all-MiniLM-L6-v2 by
default, `builtin:hashing` for a quick run), copied three times:

* `lexical`: semantic.enabled false (the hook as before the semantic channel);
* `worker`: semantic on, a warm worker (`memindex serve`) answering the hook;
* `absent`: semantic on, no worker, the restart backed off (a worker that cannot start):
  the hook finds no socket and answers lexically.

Reported: hook p50/p95 from process start to exit for each, against the interpreter floor
`python -c "import sqlite3, json"` measured in the same series (all interleaved run by run);
the cost of the one prompt that finds no worker and starts one; the worker's start-up time,
RSS (and peak) at this size and its CPU while idle over `--idle-seconds`; edit-to-searchable:
from the start of `memindex save` of a new memory (or of a file written and the PostToolUse
hook) until the worker's top-5 for the memory's text holds it.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex import index  # noqa: E402
from memindex.config import load_config  # noqa: E402
from memindex_dev.evaluation import genstore  # noqa: E402
from memindex_dev.evaluation.bench import hook_command, percentiles, time_process  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex_dev.standin import enable  # noqa: E402
from memindex.semantic import client, process  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROMPTS = [p.strip() for p in (HERE / "prompts.txt").read_text().splitlines() if p.strip()]
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def configure(project: Path, enabled: bool, model: str) -> Path:
    """The semantic settings, as the user's own (MEMINDEX_CONFIG_JSON, for this process and
    every one it starts): a project's memory-config.json cannot turn a model on."""
    mem = project / ".claude" / "memory"
    setting = json.dumps({"semantic": {"enabled": enabled, "model": model, "idle_exit_s": 7200}})
    os.environ["MEMINDEX_CONFIG_JSON"] = ENV["MEMINDEX_CONFIG_JSON"] = setting
    return mem


def build(base: Path, size: int, model: str, titles_only: bool) -> float:
    """The store, synced and embedded once (kept across runs with --store). With
    `titles_only` the stored vectors are the model's vectors of the titles alone (a 10k
    store's full texts take half an hour to embed on a small machine): the matrix the
    worker holds has the same size and model identity, and the queries and the edited
    memories are still embedded in full."""
    done = base / ".bench-ready"
    stamp = f"{size} {model} {'titles' if titles_only else 'full'}"
    if done.exists() and done.read_text() == stamp:
        return 0.0
    shutil.rmtree(base, ignore_errors=True)
    genstore.generate(base, size, seed=size)
    mem = configure(base, not titles_only, model)
    start = time.perf_counter()
    report = sync(mem, load_config(mem))
    if titles_only:
        from memindex.index import vectors
        from memindex.semantic.model import load
        from memindex.semantic.locate import weights_stamp
        from memindex.semantic.vectors import model_check, to_blob

        embedder = load(model)
        conn, _ = index.open_writer(mem)
        try:
            rows = conn.execute("SELECT rowid, title FROM documents ORDER BY rowid").fetchall()
            vecs = embedder.embed([title for _, title in rows], batch_size=64)
            with index.transaction(conn):
                check = model_check(embedder.identity, weights_stamp(model))  # what sync compares
                vectors.set_model_info(conn, embedder.identity, embedder.dim, model, check)
                vectors.put(conn, [(rowid, to_blob(v)) for (rowid, _), v in zip(rows, vecs)])
        finally:
            conn.close()
        mem = configure(base, True, model)
        report = sync(mem, load_config(mem))  # nothing left to embed
    print(f"store: {report}", file=sys.stderr)
    done.write_text(stamp)
    return time.perf_counter() - start


def copy(base: Path, dest: Path, enabled: bool, model: str) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(base, dest, symlinks=True)
    mem = configure(dest, enabled, model)
    sync(mem, load_config(mem))  # the copies' ctimes differ: re-stat (texts and vectors unchanged)
    return mem


def start_worker(mem: Path) -> tuple[subprocess.Popen, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "memindex", "--root", str(mem), "serve", "--foreground"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    while client.ping(mem, 0.5) is None:
        if proc.poll() is not None:
            raise SystemExit(f"the worker exited with {proc.returncode}")
        time.sleep(0.02)
    return proc, time.perf_counter() - start


def rotated_series(jobs: list[tuple[list[str], list[bytes]]], runs: int) -> list[tuple[float, float]]:
    """p50/p95 of each (command, payloads), interleaved run by run, the order rotated each
    run: no job always follows the same one (the warm worker's reply, a cache's state)."""
    times: list[list[float]] = [[] for _ in jobs]
    for i in range(runs):
        for j in range(len(jobs)):
            k = (i + j) % len(jobs)
            cmd, payloads = jobs[k]
            times[k].append(time_process(cmd, payloads[i % len(payloads)], ENV))
    return [percentiles(t) for t in times]


def in_process(roots: dict[str, Path], runs: int) -> dict[str, float]:
    """p50 of `hook.run("prompt")` in this process, per root: the hook's own work without
    the interpreter's start (imports done once), which the machine's noise blurs less."""
    from memindex import hook

    out: dict[str, list[float]] = {name: [] for name in roots}
    names = list(roots)
    for i in range(runs):
        for j in range(len(names)):  # the order rotated, as in the process series
            name = names[(i + j) % len(names)]
            mem = roots[name]
            payload = json.dumps({"prompt": PROMPTS[i % len(PROMPTS)], "cwd": str(mem.parent.parent)}).encode()
            start = time.perf_counter()
            hook.run("prompt", payload)
            out[name].append(time.perf_counter() - start)
    return {name: percentiles(t)[0] for name, t in out.items()}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def restart_cost(mem: Path, payloads: list[bytes], runs: int) -> tuple[float, float]:
    """p50/p95 of the prompt that finds no worker and starts one (each started one is killed)."""
    samples = []
    cmd = hook_command(REPO)
    for i in range(runs):
        (mem / ".serve.spawned").unlink(missing_ok=True)
        start = time.perf_counter()
        subprocess.run(cmd, input=payloads[i % len(payloads)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        samples.append(time.perf_counter() - start)
        deadline = time.monotonic() + 5
        while (pid := client.running_pid(mem)) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if pid is not None:
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
    process.back_off(str(mem), 7200)
    return percentiles(samples)


def new_memory(i: int) -> dict:
    words = ["quasar", "marmalade", "zeppelin", "obsidian", "tamarind", "fjord", "kestrel", "lantern", "mistral", "nebula"]
    title = f"Rotate the {words[i % 10]} {words[(i * 3 + 1) % 10]} signing keys before the quarterly audit {i}"
    return {"category": "runbook", "title": title, "tags": ["security", "keys"],
            "content": {"trigger": f"The {words[i % 10]} audit flags stale signing keys", "steps": [
                "List the keys older than 90 days", f"Rotate each {words[(i * 7 + 3) % 10]} key in the vault", "Redeploy"]}}


def found(mem: Path, mem_id: str, text: str) -> bool:
    reply = client.query(mem, text, k=5, budget_s=1.0)
    if not reply:
        return False
    conn = index.open_reader(mem)
    try:
        row = conn.execute("SELECT rowid FROM documents WHERE id = ?", (mem_id,)).fetchone()
    finally:
        conn.close()
    return row is not None and any(r == row[0] for r, _ in reply["top"])


def edit_to_searchable(mem: Path, edits: int, via_hook: bool) -> list[float]:
    out = []
    for i in range(edits):
        record = new_memory(i + (1000 if via_hook else 0))
        text = f"{record['title']}\n{record['content']['trigger']}"
        start = time.perf_counter()
        if via_hook:  # as Claude Code's Write tool: the file, then PostToolUse (a background sync)
            mem_id = f"bench-edit-{i}-{os.getpid()}"
            full = {"schema_version": "1.0", "id": mem_id, "created_at": "2026-11-01T00:00:00Z",
                    "updated_at": "2026-11-01T00:00:00Z", "related_files": [], "confidence": 0.9,
                    "record_status": "active", "changes": [], "times_updated": 0, "retired_at": None,
                    "retired_reason": None, "archived_at": None, "archived_reason": None, **record}
            full["content"].update({"symptoms": [], "verification": "", "root_cause": "", "environment": ""})
            path = mem / "runbooks" / f"{mem_id}.json"
            path.write_text(json.dumps(full))
            payload = {"cwd": str(mem.parent.parent), "tool_name": "Write", "tool_input": {"file_path": str(path)}}
            subprocess.run(hook_command(REPO, "post-tool-use"), input=json.dumps(payload).encode(), env=ENV, check=True)
        else:
            done = subprocess.run([sys.executable, "-m", "memindex", "--root", str(mem), "save", "--json", "-"],
                                  input=json.dumps(record).encode(), capture_output=True, env=ENV, check=True)
            mem_id = json.loads(done.stdout)["id"]
        deadline = start + 30
        while not found(mem, mem_id, text):
            if time.perf_counter() > deadline:
                out.append(float("inf"))
                break
            time.sleep(0.02)
        else:
            out.append(time.perf_counter() - start)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2", help="builtin:hashing for a quick run")
    parser.add_argument("--titles-only", action="store_true",
                        help="store the model's vectors of the titles only (minutes instead of half an hour at 10k)")
    parser.add_argument("--store", type=Path, help="keep the embedded store here and reuse it (embedding 10k takes minutes)")
    args = parser.parse_args(argv)
    enable()  # `--model builtin:hashing`: the stand-in, here and in the processes started
    compileall.compile_dir(str(REPO / "memindex"), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="memindex-sembench-"))
    base = args.store or tmp / "base"
    worker = None
    try:
        build_s = build(base, args.size, args.model, args.titles_only)
        roots = {name: copy(base, tmp / name, name != "lexical", args.model) for name in ("lexical", "worker", "absent")}
        process.back_off(str(roots["absent"]), 7200)
        worker, ready_s = start_worker(roots["worker"])
        payloads = {name: [json.dumps({"prompt": p, "cwd": str(m.parent.parent), "session_id": "b",
                                       "hook_event_name": "UserPromptSubmit"}).encode() for p in PROMPTS]
                    for name, m in roots.items()}
        for p in payloads["worker"][:5]:  # warm the worker and the page cache
            subprocess.run(hook_command(REPO), input=p, capture_output=True, env=ENV)
        os.sync()
        time.sleep(1)
        before = client.ping(roots["worker"])["requests"]
        floor = [sys.executable, "-c", "import sqlite3, json"]
        jobs = [(floor, payloads["lexical"])] + [(hook_command(REPO), payloads[n]) for n in ("lexical", "worker", "absent")]
        (f50, f95), *hooks = rotated_series(jobs, args.runs)
        info = client.ping(roots["worker"])
        asked = info["requests"] - before
        own = in_process(roots, max(50, args.runs * 3))
        restart = restart_cost(roots["absent"], payloads["absent"], max(5, args.runs // 4))

        cpu0, t0 = cpu_seconds(worker.pid), time.perf_counter()
        time.sleep(args.idle_seconds)
        idle_cpu = (cpu_seconds(worker.pid) - cpu0) / (time.perf_counter() - t0) * 100
        saves = edit_to_searchable(roots["worker"], args.edits, via_hook=False)
        writes = edit_to_searchable(roots["worker"], args.edits, via_hook=True)
        info = client.ping(roots["worker"])
        peak = peak_mb(worker.pid)
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)  # the copies (and the store, unless --store)

    rows = [["floor: python -c \"import sqlite3, json\"", f"{f50 * 1000:.1f} / {f95 * 1000:.1f} ms", "1.00x", ""]]
    for name, (h50, h95) in zip(("lexical (semantic off)", "semantic on, worker warm", "semantic on, no worker (backed off)"), hooks):
        rows.append([f"hook, {name}", f"{h50 * 1000:.1f} / {h95 * 1000:.1f} ms", f"{h50 / f50:.2f}x",
                     f"{asked} of {args.runs} asked the worker" if "warm" in name else ""])
    rows.append(["hook, no worker: the prompt that starts one", f"{restart[0] * 1000:.1f} / {restart[1] * 1000:.1f} ms",
                 f"{restart[0] / f50:.2f}x", "once per 10 s guard at most"])
    print(table(["prompt hook, process start to exit", "p50 / p95", "p50 / floor", "note"], rows))
    print()
    print(table(["prompt hook in this process (hook.run, imports done)", "p50", "vs lexical"], [
        [name, f"{own[key] * 1000:.2f} ms", f"{(own[key] - own['lexical']) * 1000:+.2f} ms"]
        for name, key in (("lexical (semantic off)", "lexical"), ("semantic on, worker warm", "worker"),
                          ("semantic on, no worker (backed off)", "absent"))
    ]))
    saves_p = percentiles(saves)
    writes_p = percentiles(writes)
    print()
    print(table(["worker at %s memories" % f"{args.size:,}", "value"], [
        ["model", info["model"]],
        ["vectors loaded", f"{info['docs']:,}"],
        ["start-up (spawn to first ping answered)", f"{ready_s:.2f} s"],
        ["RSS after the runs (peak)", f"{info['rss_mb']:.0f} MiB ({peak:.0f} MiB)"],
        [f"CPU while idle, over {args.idle_seconds:g} s", f"{idle_cpu:.2f} % of one core"],
        ["edit-to-searchable, `memindex save` p50 / p95", f"{saves_p[0]:.2f} / {saves_p[1]:.2f} s"],
        ["edit-to-searchable, file + PostToolUse hook p50 / p95", f"{writes_p[0]:.2f} / {writes_p[1]:.2f} s"],
    ]))
    if build_s:
        print(f"\nstore built and embedded in {build_s:.0f} s{' (stored vectors: titles only)' if args.titles_only else ''}")
    print(f"{args.runs} runs per hook row, interleaved run by run with the floor (order rotated); {args.edits} edits per freshness row;"
          f" prompts from scripts/prompts.txt; interpreter {sys.executable}; hook_budget_ms default (150)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
