#!/usr/bin/env python3
"""What the semantic channel costs the writer: a generated store is synced without it,
then embedded from scratch (the product's sync with `semantic.enabled`), then synced
again with nothing to do, with and without it; and in-process fused searches.

    python scripts/bench_embed.py --size 1000 [--model builtin:hashing]

The store is memindex_dev.evaluation.genstore's (deterministic for a size); the model is the
real one unless `--model` says otherwise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex import index  # noqa: E402
from memindex.config import parse_config  # noqa: E402
from memindex_dev.evaluation.genstore import generate  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex_dev.standin import enable  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

QUERIES = ["flaky integration tests in CI", "stripe webhook signature 400", "how do we deploy the api",
           "the database runs out of connections", "who decided on the message queue"]


def _timed(fn):
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    enable()  # `--model builtin:hashing`: the stand-in, here and in the processes started
    off = parse_config({})
    on = parse_config({"semantic": {"enabled": True, "model": args.model, "batch_size": args.batch_size}})
    rows = []
    with tempfile.TemporaryDirectory(prefix="memindex-embedbench-") as tmp:
        generate(Path(tmp), args.size, seed=args.size)
        root = Path(tmp) / ".claude" / "memory"
        report, s = _timed(lambda: sync(root, off))
        rows.append(["sync from scratch, semantic off", f"{s:.2f}", report.summary()])
        report, s = _timed(lambda: sync(root, on))
        rows.append(["embed from scratch (sync, semantic on)", f"{s:.1f}", report.semantic])
        rows.append(["  per memory (ms)", f"{s / args.size * 1000:.1f}", f"{args.size / s:.1f} memories/s"])
        for label, cfg in (("no-op sync, semantic off", off), ("no-op sync, semantic on", on)):
            times = [_timed(lambda: sync(root, cfg))[1] for _ in range(5)]
            rows.append([label, f"{statistics.median(times) * 1000:.0f} ms", "median of 5"])
        from memindex.semantic.fusion import InProcess, fused_search
        from memindex.semantic.vectors import get_embedder

        conn = index.open_reader(root)
        dense = InProcess(conn, get_embedder(args.model))
        _, first = _timed(lambda: fused_search(conn, QUERIES[0], dense))
        times = [_timed(lambda q=q: fused_search(conn, q, InProcess(conn, dense.embedder)))[1] for q in QUERIES]
        conn.close()
        rows.append(["fused search, first (matrix load)", f"{first * 1000:.0f} ms", ""])
        rows.append(["fused search, fresh matrix each", f"{statistics.median(times) * 1000:.0f} ms", "median"])
        size = os.path.getsize(index.index_path(root))
    print(table(["step", "seconds", "note"], rows))
    print(f"\n{args.size:,} memories; model {args.model}; index {size / 1e6:.1f} MB; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
