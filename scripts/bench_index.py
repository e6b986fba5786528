#!/usr/bin/env python3
"""Index benchmark: realistic stores of 1k, 10k and 100k memories.

    python scripts/bench_index.py [--sizes 1000 10000 100000]

Prints full rebuild (files/s), no-change sync, one-change sync, search p50/p95 (word ranking,
and on-demand as `memindex search` runs it) over the realistic prompts of scripts/prompts.txt
(in-process), and index bytes per memory. Each row
also carries a baseline measured in the same run: the bare walk (scandir + stat of every
file, the floor of any mtime diff) for syncs, and a naive OR of all prompt terms ordered by
bm25() (no term pruning) for search.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex import index  # noqa: E402
from memindex.config import Config  # noqa: E402
from memindex_dev.evaluation import genstore  # noqa: E402
from memindex_dev.evaluation.bench import percentiles, timed  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex.policy.inject import auto_inject  # noqa: E402
from memindex.retrieval.query import Params, search  # noqa: E402
from memindex.store.files import walk  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

PROMPTS = [p.strip() for p in (Path(__file__).parent / "prompts.txt").read_text().splitlines() if p.strip()]


def bench(n: int, tmp: Path) -> dict[str, float]:
    root = tmp / f"store{n}" / ".claude" / "memory"
    t = time.perf_counter()
    files = genstore.generate(root.parent.parent, n, seed=n)
    gen_s = time.perf_counter() - t
    cfg = Config()
    t = time.perf_counter()
    report = sync(root, cfg)
    build_s = time.perf_counter() - t
    assert report.added == len(files), report.summary()
    rebuild_s = timed(lambda: sync(root, cfg, rebuild=True), repeat=1 if n >= 100_000 else 3)
    walk_s = timed(lambda: walk(root))
    nochange_s = timed(lambda: sync(root, cfg))
    rng = random.Random(n)

    one_times = []
    for _ in range(5):  # only the sync is timed, not the edit
        genstore.modify_one(rng.choice(files), seed=rng.randrange(1 << 30))
        start = time.perf_counter()
        report = sync(root, cfg)
        one_times.append(time.perf_counter() - start)
        assert report.updated == 1, report.summary()
    onechange_s = statistics.median(one_times)
    conn = index.open_reader(root)
    params, naive = Params(), Params(max_terms=10_000, max_postings=10**12, max_df_ratio=1.0)
    paths = {  # what is timed, per prompt
        "search": lambda prompt: search(conn, prompt, limit=10, params=params),
        "ondemand": lambda prompt: search(conn, prompt, limit=10, params=params, related=True),
        "naive": lambda prompt: search(conn, prompt, limit=10, params=naive),
        "hook": lambda prompt: auto_inject(conn, prompt, cfg),
    }
    lat: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(3):
        for prompt in PROMPTS:
            for name, run in paths.items():
                t = time.perf_counter()
                run(prompt)
                lat[name].append(time.perf_counter() - t)
    conn.close()
    db = index.index_path(root)
    size = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))
    pct = {name: percentiles(samples) for name, samples in lat.items()}
    return dict(n=n, gen_s=gen_s, build_fps=n / build_s, rebuild_fps=n / rebuild_s, walk_s=walk_s,
                nochange_s=nochange_s, onechange_s=onechange_s, pct=pct, bytes_per=size / n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memindex-bench-") as tmp:
        for n in args.sizes:
            r = bench(n, Path(tmp))
            print(f"{n}: generated in {r['gen_s']:.1f} s", file=sys.stderr)
            rows.append([
                f"{n:,}", f"{r['build_fps']:,.0f}", f"{r['rebuild_fps']:,.0f}",
                f"{r['nochange_s'] * 1000:.0f} ms ({r['nochange_s'] / r['walk_s']:.1f}x walk)",
                f"{r['onechange_s'] * 1000:.0f} ms ({r['onechange_s'] / r['nochange_s']:.2f}x no-change)",
                *(f"{r['pct'][name][0] * 1000:.2f} / {r['pct'][name][1] * 1000:.2f} ms" for name in ("search", "ondemand", "naive", "hook")),
                f"{r['bytes_per']:,.0f}",
            ])
    print(table(["memories", "first sync files/s", "rebuild files/s", "no-change sync", "one-change sync",
                 "search p50/p95", "on-demand search p50/p95", "naive OR p50/p95 (baseline)", "hook selection p50/p95",
                 "index bytes/memory"], rows))
    print(f"\n{len(PROMPTS)} prompts x 3, top 10; search = word ranking; on-demand search = as `memindex search`"
          " runs it (plus tag-related memories); hook selection = search + coverage gate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
