#!/usr/bin/env python3
"""Retrieval quality of memindex on a BEIR collection, against a reference BM25 (bm25s).

    python scripts/eval_beir.py ../shared/data/beir/scifact [--semantic]

Each document becomes a memory file (title -> title, text -> body) in a temporary store,
which `memindex` syncs; every test query runs through the product's own search (top 100)
with the product's defaults. Prints nDCG@10, Recall@100, MAP@100 and queries/s.
The code is memindex_dev.evaluation.beir.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex_dev.evaluation.beir import evaluate_collection  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection", type=Path, help="folder with corpus.jsonl, queries.jsonl, qrels/test.tsv")
    parser.add_argument("--split", default="test")
    parser.add_argument("--variants", action="store_true", help="also run tokenizer/query variants (evaluation only)")
    parser.add_argument("--semantic", action="store_true",
                        help="also run search fused with the real embedding model (RRF; embeds the corpus: minutes)")
    args = parser.parse_args(argv)
    evaluate_collection(args.collection, args.split, variants=args.variants, semantic=args.semantic)
    return 0


if __name__ == "__main__":
    sys.exit(main())
