#!/usr/bin/env python3
"""Prompt-hook benchmark: process start to exit, against the interpreter's own floor.

    python scripts/bench_hook.py [--sizes 1000 10000 100000] [--runs 40]

For each store size: p50/p95 of `hooks/memindex_hook.py prompt` run as Claude Code runs it
(a new process, JSON on stdin), the floor `python -c "import sqlite3, json"` measured in the
same run with the same interpreter (the floor and every size interleaved run by run, after
the stores are built and flushed), without and with a session transcript (what Claude Code
sends: a 40-turn session with file reads and two earlier injections, read from its end), the
ratio of each size to 10k, the reference documents' rebuild-per-prompt design
(scripts/reference_hook.py) at 1k and 10k, memory files opened per prompt (counted with an
audit hook, and with strace when it is installed), and the import time of the hook's modules.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex.config import SPEC, load_config  # noqa: E402
from memindex_dev.evaluation import genstore  # noqa: E402
from memindex_dev.evaluation.bench import hook_command, series  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

HOOK = REPO / "hooks" / "memindex_hook.py"
PROMPTS = [p.strip() for p in (HERE / "prompts.txt").read_text().splitlines() if p.strip()]
COUNT_OPENS = r"""
import runpy, sys, os
opened = []
sys.addaudithook(lambda ev, args: opened.append(str(args[0])) if ev == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)) else None)
sys.argv = [sys.argv[1], "prompt"]
def report(code=0, real_exit=os._exit):  # the hook ends with os._exit (hook.finish)
    mem = [p for p in opened if p.endswith(".json") and "/.claude/memory/" in p and "memory-config" not in p]
    print("\nOPENED", len(mem), file=sys.stderr, flush=True)
    real_exit(code)
os._exit = report
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
report()
"""


def opened_files(project: Path, payload: bytes, env: dict) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", COUNT_OPENS, str(HOOK)], input=payload, capture_output=True, env=env)
    audit = int(out.stderr.decode().rsplit("OPENED", 1)[1].split()[0])
    strace = "not installed"
    if shutil.which("strace"):
        s = subprocess.run(["strace", "-f", "-e", "trace=open,openat", "-o", "/dev/stdout", sys.executable, str(HOOK), "prompt"],
                           input=payload, capture_output=True, env=env)
        lines = [ln for ln in s.stdout.decode(errors="replace").splitlines() if "/.claude/memory/" in ln and ".json" in ln and "memory-config" not in ln]
        strace = str(len(lines))
    return audit, strace


def import_ms(env: dict) -> float:
    """The self time of memindex's modules on the prompt path (the least of seven runs: one
    run is at the mercy of the machine)."""
    best = float("inf")
    for _ in range(7):
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import memindex.hook, memindex.policy.inject, "
                              "memindex.policy.transcript, memindex.runtime, memindex.index.provenance"],
                             capture_output=True, env=env)
        total = 0
        for line in out.stderr.decode().splitlines():
            parts = line.split("|")
            if len(parts) == 3 and parts[2].strip().startswith("memindex"):
                total += int(parts[0].split(":")[1])
        best = min(best, total)
    return best / 1000


def write_transcript(path: Path, project: Path) -> None:
    """A session as Claude Code records it: user turns, file reads with their results, and
    two blocks the hook printed earlier (hook_success attachments)."""
    lines = []
    for i in range(40):
        lines.append({"type": "user", "timestamp": f"2026-11-24T10:{i:02d}:00.000Z",
                      "message": {"role": "user", "content": PROMPTS[i % len(PROMPTS)]}})
        lines.append({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Let me look at the code. " * 20},
            {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": str(project / "src" / f"module_{i}.py")}}]}})
        lines.append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "def handler(event):\n    return event\n" * 80}]}})
        if i in (10, 30):
            block = "<memory-context>\n" + "".join(
                f"- [DECISION] earlier pick {k} -> .claude/memory/decisions/pick-{i}-{k}.json #tags:x\n" for k in range(3)
            ) + "</memory-context>"
            lines.append({"type": "attachment", "timestamp": f"2026-11-24T10:{i:02d}:30.000Z",
                          "attachment": {"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": block}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def add_documents(project: Path, count: int) -> None:
    """`count` Markdown documents under docs/adr/ (scripts/bench_documents.py's), registered."""
    from bench_documents import WORDS, generated, real_files  # noqa: F401  (beside this script)
    import random

    src, rng = real_files(), random.Random(11)
    for i in range(count):
        sub = project / "docs" / "adr" / f"group-{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        text = src[i % len(src)].read_text(encoding="utf-8", errors="replace") if src else generated(rng, i)
        (sub / f"{i:05d}-doc.md").write_text(text, encoding="utf-8")
    config = project / ".claude" / "memory" / "memory-config.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    data["documents"] = {"paths": {"docs/adr": "adr"}}
    config.write_text(json.dumps(data))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--reference-max", type=int, default=10_000, help="largest size for the rebuild-per-prompt design")
    parser.add_argument("--baseline", type=Path, metavar="TREE",
                        help="another checkout of memindex (e.g. `git archive main`) whose hook is timed in the same series, each tree on the same memories indexed by its own sync, "
                             "on the same stores: before/after ratios")
    parser.add_argument("--documents", type=int, default=0, metavar="N",
                        help="also N of the project's documents indexed in place beside the memories (the public collections "
                             "of ../shared/data/docs, round-robin; else generated), registered in memory-config.json "
                             "(a --baseline without documents indexes the memories alone)")
    parser.add_argument("--strategy", choices=SPEC["retrieval"]["match_strategy"].choices,  # type: ignore[index,union-attr]
                        help="also the hook with this retrieval.match_strategy (the user's own setting), in the same series: "
                             "fts5_bm25 for the hand-set rules against the default relevance model")
    args = parser.parse_args(argv)
    compileall.compile_dir(str(REPO / "memindex"), quiet=1)  # as `pip install` does; PYTHONDONTWRITEBYTECODE may be set
    if args.baseline:
        compileall.compile_dir(str(args.baseline / "memindex"), quiet=1)
    env = dict(os.environ, PYTHONPATH=str(REPO))  # the floor and the reference design see the same environment
    floor = [sys.executable, "-c", "import sqlite3, json"]
    rows, before = [], []
    with tempfile.TemporaryDirectory(prefix="memindex-hookbench-") as tmp:
        payloads: dict[int, list[bytes]] = {}
        base_payloads: dict[int, list[bytes]] = {}
        with_transcript: dict[int, list[bytes]] = {}
        for n in args.sizes:  # every store first: the sizes are then timed side by side
            project = Path(tmp) / f"p{n}"
            genstore.generate(project, n, seed=n)
            if args.documents:
                add_documents(project, args.documents)
            sync(project / ".claude" / "memory", load_config(project / ".claude" / "memory"))
            payloads[n] = [json.dumps({"prompt": p, "cwd": str(project), "session_id": "b", "hook_event_name": "UserPromptSubmit"}).encode()
                           for p in PROMPTS]
            if args.baseline:  # the same memories, indexed by the baseline's own sync: an index of
                # another version is refused (fast and meaningless), so each tree reads its own
                other = Path(tmp) / f"b{n}"
                shutil.copytree(project / ".claude" / "memory", other / ".claude" / "memory", symlinks=True,
                                ignore=shutil.ignore_patterns(".index.db*", "index.md", ".*.lock", ".sync.*", ".memindex.log*"))
                subprocess.run([sys.executable, "-m", "memindex", "--root", str(other / ".claude" / "memory"), "sync", "--quiet"],
                               env=dict(env, PYTHONPATH=str(args.baseline.resolve())), check=True, cwd="/")
                base_payloads[n] = [p.replace(str(project).encode(), str(other).encode()) for p in payloads[n]]
            transcript = Path(tmp) / f"t{n}.jsonl"
            write_transcript(transcript, project)
            with_transcript[n] = [json.dumps({**json.loads(p), "transcript_path": str(transcript)}).encode() for p in payloads[n]]
            print(f"{n}: store ready", file=sys.stderr)
        os.sync()  # the stores' writeback must not run into the timings
        time.sleep(2)
        # One series: the floor and the hook at every size, interleaved run by run, so that
        # drift of the machine hits every cell alike (the targets compare cells).
        jobs = [(floor, payloads[args.sizes[0]])] + [(hook_command(REPO), payloads[n]) for n in args.sizes]
        jobs += [(hook_command(REPO), with_transcript[n]) for n in args.sizes]
        if args.baseline:
            jobs += [(hook_command(args.baseline.resolve()), base_payloads[n]) for n in args.sizes]
        if args.strategy:
            other_env = dict(env, MEMINDEX_CONFIG_JSON=json.dumps({"retrieval": {"match_strategy": args.strategy}}))
            jobs += [(hook_command(REPO), payloads[n], other_env) for n in args.sizes]
        (f50, f95), *hooks = series(jobs, env, args.runs)
        if args.strategy:
            hooks, by_other = hooks[: -len(args.sizes)], hooks[-len(args.sizes):]
            strategies = [[f"{n:,}", f"{f50 * 1000:.1f} ms", f"{h[0] * 1000:.1f} ms ({h[0] / f50:.2f}x floor)",
                           f"{c[0] * 1000:.1f} / {c[1] * 1000:.1f} ms ({c[0] / f50:.2f}x floor)", f"{h[0] / c[0]:.3f}"]
                          for n, h, c in zip(args.sizes, hooks, by_other)]
        baseline = hooks[2 * len(args.sizes):]
        hooks, in_session = hooks[: len(args.sizes)], hooks[len(args.sizes) : 2 * len(args.sizes)]
        for n, (b50, b95), (h50, _) in zip(args.sizes, baseline, hooks):
            before.append([f"{n:,}", f"{f50 * 1000:.1f} ms", f"{b50 * 1000:.1f} / {b95 * 1000:.1f} ms ({b50 / f50:.2f}x floor)",
                           f"{h50 * 1000:.1f} ms ({h50 / f50:.2f}x floor)", f"{h50 / b50:.3f}"])
        hook_p50 = {n: h[0] for n, h in zip(args.sizes, hooks)}
        for n, (h50, h95), (s50, s95) in zip(args.sizes, hooks, in_session):
            ref = "-"
            if n <= args.reference_max:
                ((r50, r95),) = series([([sys.executable, str(HERE / "reference_hook.py")], payloads[n])], env, max(10, args.runs // 4))
                ref = f"{r50 * 1000:.0f} / {r95 * 1000:.0f} ms ({r50 / f50:.1f}x floor)"
            vs_10k = f"{h50 / hook_p50[10_000]:.2f}x" if n > 10_000 and 10_000 in hook_p50 else "-"
            audit, strace = opened_files(Path(tmp) / f"p{n}", payloads[n][3], env)
            rows.append([f"{n:,}", f"{f50 * 1000:.1f} / {f95 * 1000:.1f} ms", f"{h50 * 1000:.1f} / {h95 * 1000:.1f} ms",
                         f"{h50 / f50:.2f}x", f"{s50 * 1000:.1f} / {s95 * 1000:.1f} ms", f"{s50 / f50:.2f}x", vs_10k, ref, f"{audit} (strace: {strace})"])
    print(table(["memories", "floor p50/p95", "memindex hook p50/p95", "hook / floor", "with transcript p50/p95",
                 "with transcript / floor", "hook / hook at 10k",
                 "rebuild-per-prompt p50/p95", "memory files opened"], rows))
    if before:
        print(f"\nbefore/after, same series: baseline {args.baseline}")
        print(table(["memories", "floor p50", "baseline hook p50/p95", "this hook p50", "this / baseline"], before))
    if args.strategy:
        print(f"\nthe default hook against match_strategy {args.strategy}, same series")
        print(table(["memories", "floor p50", "default hook p50", f"{args.strategy} hook p50/p95", f"default / {args.strategy}"],
                    strategies))
    print(f"\nimport time of the hook's modules: {import_ms(env):.1f} ms (python -X importtime, bytecode compiled)")
    print(f"{args.runs} runs per cell; the floor and every size interleaved run by run (one floor for all sizes);"
          f" prompts from scripts/prompts.txt; interpreter {sys.executable}")
    print(f"hook command (from hooks/hooks.json): {' '.join(hook_command(REPO))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
