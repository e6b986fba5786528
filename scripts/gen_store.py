#!/usr/bin/env python3
"""Generate a realistic synthetic memindex memory store (schema 1.0).

Usage:
    python scripts/gen_store.py OUT_DIR --count N [--seed S]

Writes N memories to OUT_DIR/.claude/memory/<folder>/<id>.json, deterministic for a given
(count, seed). The generator is memindex_dev.evaluation.genstore (its vocabulary:
memindex_dev/evaluation/data/vocabulary.json); also importable as generate(out_dir, count, seed)
and modify_one(path, seed).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex_dev.evaluation.genstore import generate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path, help="store root; files go to OUT_DIR/.claude/memory/")
    ap.add_argument("--count", type=int, required=True, help="number of memories")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    a = ap.parse_args(argv)
    if a.count < 0:
        ap.error("--count must be >= 0")
    t0 = time.perf_counter()
    paths = generate(a.out_dir, a.count, a.seed)
    dt = time.perf_counter() - t0
    print("wrote %d memories to %s in %.2fs" % (len(paths), a.out_dir / ".claude" / "memory", dt),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
