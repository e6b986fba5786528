#!/usr/bin/env python3
"""The cost of the project's documents indexed in place: a cold index of N documents, and a
sync with nothing to do with them registered against the same store without them.

    python scripts/bench_documents.py                  # 1,000 documents beside 1,000 memories
    python scripts/bench_documents.py --docs 1000 --memories 10000 --runs 5

The documents are the real public collections in ../shared/data/docs (docsets.DOCS_DATA),
copied round-robin until there are N (a copy keeps its text under another name); without
them, generated Markdown of the same shape (headings, lists, code, a table). Each figure is
the median of `--runs` fresh processes (`memindex sync`), so imports count as a user's do.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex_dev.evaluation.docsets import DOCS_DATA  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402


def real_files() -> list[Path]:
    return sorted(p for p in DOCS_DATA.rglob("*.md") if p.is_file()) if DOCS_DATA.is_dir() else []


WORDS = ("cluster node replica backup restore deploy rollback queue worker latency timeout retry cache index "
         "schema migration tenant billing invoice payment webhook gateway ingress certificate secret token "
         "alert metric dashboard upgrade version release config policy quota storage volume snapshot").split()


def generated(rng: random.Random, i: int) -> str:
    def para(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."

    parts = [f"# {i}. {para(5)}", "", "## Status", "", "Accepted", "", "## Context", "", para(80), ""]
    parts += [f"- {para(12)}" for _ in range(6)] + ["", "## Decision", "", para(120), "", "```yaml", "key: value", "```", ""]
    parts += ["## Consequences", "", "| who | what |", "|---|---|", f"| ops | {para(6)} |", "", para(60)]
    return "\n".join(parts)


def make_project(dest: Path, docs: int, memories: int, with_docs: bool) -> Path:
    root = dest / ".claude" / "memory"
    if memories:
        subprocess.run([sys.executable, str(REPO / "scripts" / "gen_store.py"), str(dest), "--count", str(memories)],
                       check=True, capture_output=True)
    root.mkdir(parents=True, exist_ok=True)
    if with_docs:
        folder = dest / "docs" / "adr"
        folder.mkdir(parents=True)
        src = real_files()
        rng = random.Random(7)
        for i in range(docs):
            text = src[i % len(src)].read_text(encoding="utf-8", errors="replace") if src else generated(rng, i)
            sub = folder / f"group-{i % 10}"
            sub.mkdir(exist_ok=True)
            (sub / f"{i:05d}-doc.md").write_text(text, encoding="utf-8")
        (root / "memory-config.json").write_text(json.dumps({"documents": {"paths": {"docs/adr": "adr"}}}))
    return root


def timed(*args: str) -> float:
    # as a user's install runs: its bytecode cached (a PYTHONDONTWRITEBYTECODE here would make
    # every run compile the modules it imports, and a sync with documents imports more)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMINDEX_") and k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memindex", *args], check=True, capture_output=True, env=env, cwd="/")
    return time.perf_counter() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="memindex-bench-docs-") as tmp:
        cold, noop, plain_noop = [], [], []
        for run in range(args.runs):
            with_docs = make_project(Path(tmp) / f"docs{run}", args.docs, args.memories, True)
            without = make_project(Path(tmp) / f"plain{run}", args.docs, args.memories, False)
            timed("--root", str(without), "sync", "--quiet")
            started = time.perf_counter()
            timed("--root", str(with_docs), "sync", "--quiet")
            cold.append(time.perf_counter() - started)
            time.sleep(2.1)  # past the racy window: the no-change syncs below read nothing
            timed("--root", str(with_docs), "sync", "--quiet")
            timed("--root", str(without), "sync", "--quiet")
            for _ in range(3):  # interleaved
                noop.append(timed("--root", str(with_docs), "sync", "--quiet"))
                plain_noop.append(timed("--root", str(without), "sync", "--quiet"))
            shutil.rmtree(Path(tmp) / f"docs{run}")
            shutil.rmtree(Path(tmp) / f"plain{run}")
    floor = statistics.median(timed_floor() for _ in range(5))
    source = f"{len(real_files())} real files, copied round-robin" if real_files() else "generated"
    rows.append([f"cold index: {args.memories} memories + {args.docs} documents ({source})", f"{statistics.median(cold):.2f} s", ""])
    rows.append([f"sync, nothing changed, {args.docs} documents registered", f"{statistics.median(noop) * 1000:.0f} ms",
                 f"{statistics.median(noop) / statistics.median(plain_noop):.2f}x"])
    rows.append(["sync, nothing changed, the same store without them", f"{statistics.median(plain_noop) * 1000:.0f} ms", "1.00x"])
    rows.append(["interpreter floor (python -c 'import sqlite3, json')", f"{floor * 1000:.0f} ms", ""])
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; medians of {args.runs} runs")
    print(table(["what", "time", "vs without documents"], rows))
    return 0


def timed_floor() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sqlite3, json"], check=True)
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
