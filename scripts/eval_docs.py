#!/usr/bin/env python3
"""memindex on real project documents (public ADR, runbook and docs collections indexed in
place, prompts written blind) against bm25s over the same files' raw text, in one run.

    python scripts/eval_docs.py                       # every set with prompts (not the FINAL ones), dev slice
    python scripts/eval_docs.py --slice held-out      # the held-out slices
    python scripts/eval_docs.py --sets jabref-adr --kinds
    python scripts/eval_docs.py --final --through-hook  # the collections kept for one measurement at the end

Search: Recall@5 of the grade-2 documents, Recall@10, nDCG@10. Hook (the prompt hook's
policy, in process): precision of the documents injected, recall of the grade-2 ones, share
of unrelated prompts that got anything; bm25s's "hook" is its top 3. The collections live in
../shared/data/docs (MANIFEST.json); memindex_dev/evaluation/docsets.py has the code.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memindex_dev.evaluation import docsets  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", help="collections (default: every one with prompts, FINAL ones apart)")
    parser.add_argument("--slice", choices=("dev", "held-out", "all"), default="dev")
    parser.add_argument("--final", action="store_true", help="the FINAL collections (measured once, at the end)")
    parser.add_argument("--kinds", action="store_true", help="per prompt kind")
    parser.add_argument("--rules", action="store_true", help="also the hand-set rules")
    parser.add_argument("--through-hook", action="store_true",
                        help="also each prompt through the real prompt hook (a process per prompt, as Claude Code runs it)")
    args = parser.parse_args(argv)
    slugs = args.sets or (list(docsets.FINAL) if args.final else docsets.available())
    variants = [docsets.DEFAULT] + ([docsets.RULES] if args.rules else [])
    pooled: dict[str, list] = {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="memindex-docs-") as tmp:
        for slug in slugs:
            ds = docsets.load(slug)
            queries = docsets.slice_of(ds, "all" if args.final else args.slice)
            results = docsets.run_memindex(ds, queries, variants, Path(tmp))
            base = docsets.bm25s_ranks(ds, queries)
            if args.through_hook:
                results["memindex, through the real hook"] = {"rank": results[docsets.DEFAULT.name]["rank"],
                                                              "inject": docsets.run_hook(ds, queries, Path(tmp))}
            build = results.pop("_build")
            d = build["report"] or {}
            print(f"{slug}: {d.get('files', 0)} files, {d.get('files', 0) - d.get('not_indexed', 0)} indexed,"
                  f" built in {build['seconds']:.2f} s; {len(queries)} prompts ({args.slice})", file=sys.stderr)
            for name, res in [*results.items(), ("bm25s over the files", {"rank": base, "inject": {k: v[:3] for k, v in base.items()}})]:
                sm = docsets.search_metrics(queries, res["rank"])
                im = docsets.inject_metrics(queries, res["inject"])
                rows.append([slug, name, len(queries), sm["R2@5"], sm["R@10"], sm["nDCG@10"], im["precision"],
                             im["recall_g2"], f"{im['unrelated']:.2f} of {im['n_unrelated']}"])
                pooled.setdefault(name, []).append((queries, res))
                if args.kinds:
                    for kind, qs in docsets.by_kind(queries).items():
                        sm = docsets.search_metrics(qs, res["rank"])
                        im = docsets.inject_metrics(qs, res["inject"])
                        rows.append(["", f"  {kind}", len(qs), sm["R2@5"], sm["R@10"], sm["nDCG@10"], im["precision"],
                                     im["recall_g2"], f"{im['unrelated']:.2f} of {im['n_unrelated']}"])
    for name, parts in pooled.items():
        qs = [q for part, _ in parts for q in part]
        rank = {k: v for _, res in parts for k, v in res["rank"].items()}
        inject = {k: v for _, res in parts for k, v in res["inject"].items()}
        sm, im = docsets.search_metrics(qs, rank), docsets.inject_metrics(qs, inject)
        rows.append(["pooled", name, len(qs), sm["R2@5"], sm["R@10"], sm["nDCG@10"], im["precision"], im["recall_g2"],
                     f"{im['unrelated']:.2f} of {im['n_unrelated']}"])
    print(table(["set", "system", "prompts", "R@5 (grade 2)", "R@10", "nDCG@10", "hook precision", "hook recall (grade 2)",
                 "unrelated injected"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
