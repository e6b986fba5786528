#!/usr/bin/env python3
"""Retrieval quality on every judged memory set, side by side, dev and held-out slices apart.

    python scripts/eval_memory.py                      # harbor, atlas, LoCoMo, cedar, fjord, quarry, sedge: one table
    python scripts/eval_memory.py --sets harbor atlas  # some of them
    python scripts/eval_memory.py --set evalsets/harbor [--kinds] [--variants]   # one set in depth
    python scripts/eval_memory.py --semantic           # plus the semantic channel (search fusion, the worker's view)
    python scripts/eval_memory.py --sessions           # tokens per multi-turn session, session awareness on and off
    python scripts/eval_memory.py --through-hook [--semantic]   # each prompt through the real hook command (and worker)
    python scripts/eval_memory.py --through-hook --calibrated --set evalsets/jetty [--semantic]   # rules vs the model, via the hook
    python scripts/eval_memory.py --file-hook          # what the PreToolUse hook adds when the named files are opened
    python scripts/eval_memory.py --questions          # each memory with its blind questions (evalsets/*/questions.json)
    python scripts/eval_memory.py --questions-compare [--weights 1 2 3 5] [--semantic]   # with and without, per weight

Auto-inject (what the prompt hook injects): precision of injected memories, recall of the
grade-2 ("must inject") memories, share of negative prompts that got an injection, silent
rate, injected memories and tokens per prompt. On-demand search (top 10): Recall@10 and
nDCG@10 (ir-measures). The code is memindex_dev.evaluation (suite, sets, memory).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this tree's memindex, wherever it runs from

from memindex_dev.evaluation.memory import CALIBRATED_NAME, RULES_NAME, Strategy, evaluate_set, strategies  # noqa: E402
from memindex_dev.evaluation.sets import SETS, local_set  # noqa: E402
from memindex_dev.evaluation.suite import print_suite, run_suite  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), help="which sets (default: all)")
    parser.add_argument("--set", type=Path, help="one set folder in depth (.claude/memory/ and queries.json)")
    parser.add_argument("--variants", action="store_true", help="also run the variants (weights, cutoffs, prefix)")
    parser.add_argument("--kinds", action="store_true", help="per query kind tables (with --set)")
    parser.add_argument("--baseline", action="store_true", help="also run the old keyword matcher")
    parser.add_argument("--semantic", action="store_true",
                        help="also run the policy with the semantic worker's view and search fused with the real embedding model (needs the model installed)")
    parser.add_argument("--sessions", action="store_true",
                        help="tokens injected over multi-turn sessions, with and without session awareness")
    parser.add_argument("--through-hook", action="store_true",
                        help="run every prompt through the hook command of hooks/hooks.json, as Claude Code does "
                             "(with --semantic: the real worker answers it), and compare with the in-process policy")
    parser.add_argument("--calibrated", action="store_true",
                        help="with --through-hook: the rules and the calibrated relevance model (retrieval.match_strategy "
                             "calibrated), each through the real hook on the same prompts, side by side")
    parser.add_argument("--file-hook", action="store_true",
                        help="what the PreToolUse hook adds when the assistant opens the files the prompts name")
    parser.add_argument("--questions", action="store_true",
                        help="add each memory's blind questions (evalsets/<set>/questions.json) to its copy before indexing")
    parser.add_argument("--questions-compare", action="store_true",
                        help="every local set with and without questions, per questions column weight (--weights)")
    parser.add_argument("--weights", type=float, nargs="+", default=None, help="questions column weights (--questions-compare)")
    args = parser.parse_args(argv)
    if args.questions_compare:
        from memindex_dev.evaluation.questions import LOCAL_SETS, WEIGHTS, compare, print_compare

        names = tuple(s for s in args.sets if s in LOCAL_SETS) if args.sets != list(SETS) else LOCAL_SETS
        print_compare(compare(names, args.weights or WEIGHTS, args.semantic))
        return 0
    if args.file_hook:
        from memindex_dev.evaluation.sessions import evaluate_file_hook

        evaluate_file_hook(tuple(args.sets))
        return 0
    if args.through_hook:
        from memindex_dev.evaluation.hookrun import compare_policies, run_hook_suite

        sets_from = (lambda tmp: local_set(args.set.resolve().name, args.set, tmp, args.questions)) if args.set else None
        run = compare_policies if args.calibrated else run_hook_suite
        run(tuple(args.sets), args.semantic, sets_from=sets_from, questions=args.questions)
        return 0
    if args.sessions:
        from memindex_dev.evaluation.sessions import evaluate_sessions

        evaluate_sessions()
        return 0
    if args.set:
        evaluate_set(args.set, variants=args.variants, kinds=args.kinds, semantic=args.semantic, questions=args.questions)
        return 0
    chosen = [s for s in strategies(args.variants, args.semantic)
              if args.variants or args.baseline or s.name in (RULES_NAME, CALIBRATED_NAME) or s.semantic]
    print_suite(run_suite(chosen, tuple(args.sets), questions=args.questions))
    print("\ndev: settings may be chosen on it; holdout: a fixed 30% of each set's queries, never used to choose.")
    print("tokens/prompt: characters of the injected block / 4, over all prompts (negatives included).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
