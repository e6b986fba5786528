"""`memindex doctor`: what a user cannot see, each problem with its fix (exit 1 if any)."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from ..config import Config
from ._common import AddParser, emit_json


def register(add: AddParser) -> None:
    p = add("doctor", example="memindex doctor --json")
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Run every check; print one line each (and the fix); exit 1 when one fails."""
    from ..doctor import run

    checks = run(root, cfg)
    failed = [c for c in checks if c.ok is False]
    if args.json:
        emit_json({"ok": not failed, "checks": [asdict(c) for c in checks]})
    elif not args.quiet or failed:
        for c in checks:
            mark = {True: "ok  ", False: "FAIL", None: "--  "}[c.ok]
            print(f"{mark} {c.name:<8} {c.detail}")
            if c.ok is False and c.fix:
                print(f"     {'':<8} fix: {c.fix}")
    return 1 if failed else 0
