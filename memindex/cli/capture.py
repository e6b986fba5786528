"""`memindex capture`: summarise one session's transcript into its session summary. The
Stop and SessionEnd hooks run it detached (`--session-id`: coalesced per session); run by
hand it captures at once."""

from __future__ import annotations

import argparse

from ..config import Config
from ._common import AddParser, emit_json, err


def register(add: AddParser) -> None:
    p = add("capture", example="memindex capture --transcript ~/.claude/projects/-home-me-app/SESSION.jsonl")
    p.add_argument("--transcript", required=True, metavar="JSONL", help="the Claude Code transcript of the session")
    p.add_argument(
        "--session-id", metavar="ID",
        help="the hooks' mode: coalesce with other requests for this session, wait capture.min_interval_s between captures",
    )
    p.add_argument("--dry-run", action="store_true", help="say what would be written, write nothing")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, root: str, cfg: Config) -> int:
    from ..capture.job import capture_transcript, run_job

    if args.session_id and not args.dry_run:
        if not cfg["capture.enabled"] and not cfg["review.usage"]:
            return 0
        result = run_job(root, cfg, args.transcript, args.session_id)
    else:
        result = capture_transcript(root, cfg, args.transcript, dry_run=args.dry_run)
    if args.json:
        emit_json(result)
    elif not args.quiet:
        where = result.get("path", "")
        print(f"{result['status']}{' ' + where if where else ''}{' (' + result['reason'] + ')' if result.get('reason') else ''}")
    if result.get("warning"):
        err(result["warning"])
    if result["status"] == "failed":
        err(f"{args.transcript}: {result.get('error', 'not written')}" + "".join(f"\n  {p}" for p in result.get("problems", ())))
        return 1
    return 0
