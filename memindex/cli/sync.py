"""`memindex sync` and `memindex rebuild`: bring the index up to date."""

from __future__ import annotations

import argparse

from ..config import Config
from ..text.render import shown_path
from ._common import AddParser, emit_json, err, lock_option


def register(add: AddParser) -> None:
    p = add("sync", example="memindex sync --json")
    p.add_argument("--path", action="append", metavar="REL", help="only this file, relative to the memory root (repeatable)")
    p.add_argument(
        "--coalesce", action="store_true",
        help="hand the --path files to a sync already waiting for the lock and leave at once (the hooks' background syncs)",
    )
    p.add_argument(
        "--if-changed", action="store_true",
        help="do nothing when one stat of every file says none changed (the prompt hook's periodic sync)",
    )
    lock_option(p)
    p.set_defaults(handler=cmd_sync)
    p = add("rebuild", example="memindex rebuild")
    lock_option(p)
    p.set_defaults(handler=cmd_rebuild)


def cmd_sync(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Bring the index up to date (re-reads only changed files)."""
    return _run(args, root, cfg, rebuild=False)


def cmd_rebuild(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Re-read every file into the index, in place, in one transaction."""
    return _run(args, root, cfg, rebuild=True)


def _run(args: argparse.Namespace, root: str, cfg: Config, rebuild: bool) -> int:
    from ..index.sync import sync

    report = sync(
        root,
        cfg,
        rebuild=rebuild,
        only=getattr(args, "path", None),
        progress=not args.json and not args.quiet,
        lock_timeout=args.lock_timeout,
        coalesce=getattr(args, "coalesce", False),
        if_changed=getattr(args, "if_changed", False),
    )
    if args.json:
        emit_json(report.to_json())
    elif not args.quiet:
        print(("rebuilt: " if rebuild else "synced: ") + report.summary())
        for rel, reason in sorted(report.problems.items()):
            err(f"{shown_path(rel)}: {reason}")
    return 0
