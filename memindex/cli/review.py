"""`memindex review`: the queue of what needs a human or the model (stale, conflict,
duplicate, unused, expired memories), and the actions the queue suggests that the other
commands do not (keep, merge). A thin shell over memindex.review."""

from __future__ import annotations

import argparse

from ..config import Config
from ._common import AddParser, clean_arg, emit_json, err

KINDS = ("stale", "conflict", "duplicate", "unused", "expired")


def register(add: AddParser) -> None:
    p = add("review", example="memindex review --json")
    p.add_argument("--kind", "-k", action="append", choices=KINDS, help="only items of this kind (repeatable)")
    p.add_argument("--cached", action="store_true", help="what the last check found (no detector runs)")
    p.add_argument("--all", action="store_true", help="include acknowledged items (marked kept)")
    p.add_argument("--refresh", action="store_true",
                   help="run the checks and store the findings for the hooks; print only a summary (the hooks' background job)")
    p.add_argument("--no-sync", action="store_true",
                   help="with --refresh: check the index as it is (SessionStart's job: its own sync runs beside it)")
    act = p.add_mutually_exclusive_group()
    act.add_argument("--keep", metavar="PATH", help="acknowledge PATH's items until the memory or its evidence changes")
    act.add_argument("--merge", metavar="PATH", help="merge the duplicate PATH into --into (tags, questions, related files), then retire it")
    p.add_argument("--into", metavar="PATH", help="the memory that stays (with --merge)")
    p.set_defaults(handler=cmd_review)


def cmd_review(args: argparse.Namespace, root: str, cfg: Config) -> int:
    from .. import review

    if args.keep:
        answer = review.keep(root, cfg, clean_arg(args.keep) or "", kind=(args.kind or [None])[0])
        return _answer(args, answer, f"kept {answer['path']} ({', '.join(i['kind'] for i in answer['items'])}): "
                                     "it stays out of the queue until it or its evidence changes")
    if args.merge:
        if not args.into:
            err("--merge needs --into PATH (the memory that stays)")
            return 2
        answer = review.merge(root, cfg, clean_arg(args.merge) or "", clean_arg(args.into) or "")
        return _answer(args, answer, f"merged {answer['path']} into {answer['into']} (retired, replaced by it)")
    if args.refresh:
        report = review.refresh(root, cfg, allow_sync=not args.no_sync)
        report.pop("_items", None)
        return _answer(args, report, f"review: {report['items']} items in {report['memories']} memories "
                                     f"({report['ms_total']:.0f} ms)")
    items = review.queue(root, cfg, fresh=not args.cached, include_kept=args.all)
    if args.kind:
        items = [i for i in items if i.kind in args.kind]
    if args.json:
        emit_json({"items": [{**i.to_json(), **({"kept": True} if i.kept else {})} for i in items]})
        return 0
    if args.quiet:
        return 0
    if not items:
        print("nothing to review")
        return 0
    for i in items:
        other = f"\n        other: {i.other_shown}" if i.other_shown else ""
        kept = " (kept)" if i.kept else ""
        print(f"{i.kind.upper():<9} {i.shown}{kept}\n        {i.reason}{other}\n        suggested: {_hint(i)}")
    print(f"{len(items)} item{'s' if len(items) != 1 else ''}; `memindex review --keep PATH` keeps one "
          "until it or its evidence changes")
    return 0


def _hint(item) -> str:
    """The suggested action as the command that does it."""
    if item.entry.document:
        return f"{item.suggested}: edit the file {item.entry.rel.lstrip('@').partition('#')[0]}"
    path = item.shown
    return {
        "retire": f"retire (`memindex retire {path}" + (f" --replaced-by {item.other_shown}`)" if item.other_shown else "`)"),
        "archive": f"archive (`memindex archive {path}`)",
        "update": f"update (`memindex update {path} --data '{{...}}'`)",
        "merge": f"merge (`memindex review --merge {path} --into {item.other_shown}`)",
        "keep": f"keep (`memindex review --keep {path}`)",
    }.get(item.suggested, item.suggested)


def _answer(args: argparse.Namespace, answer: dict, line: str) -> int:
    if args.json:
        emit_json(answer)
    elif not args.quiet:
        print(line)
    return 0
