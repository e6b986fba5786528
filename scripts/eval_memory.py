#!/usr/bin/env python3
"""Retrieval quality on the judged memory set: the old keyword matcher against the FTS5
engine and its variants, side by side.

    python scripts/eval_memory.py [--set evalsets/harbor] [--kinds] [--variants]

Auto-inject (what the prompt hook injects): precision of injected memories, recall of the
grade-2 ("must inject") memories, false-inject rate on negative prompts, silent rate.
On-demand search (top 10): Recall@10, MRR, nDCG@10 (ir-measures). Per query kind with --kinds.
The code is memindex.evaluation.memory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memindex.evaluation.memory import evaluate_set

DEFAULT_SET = Path(__file__).resolve().parent.parent / "evalsets" / "harbor"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="folder with .claude/memory/ and queries.json")
    parser.add_argument("--variants", action="store_true", help="also run the FTS5 variants (weights, cutoffs, prefix)")
    parser.add_argument("--kinds", action="store_true", help="per query kind tables")
    args = parser.parse_args(argv)
    evaluate_set(args.set, variants=args.variants, kinds=args.kinds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
