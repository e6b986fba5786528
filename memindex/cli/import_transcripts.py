"""`memindex import transcripts [--from DIR]`: Claude Code transcripts -> session summaries."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import Config
from ._common import emit_json
from .imports import progress_bar


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--from", dest="folder", type=Path, metavar="DIR",
        help="folder of <session-id>.jsonl transcripts (default: Claude Code's folder of this project, "
        "~/.claude/projects/<project path with every non-alphanumeric character as '-'>)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, root: str, cfg: Config) -> int:
    from ..capture.importer import default_folder, import_transcripts

    folder = args.folder or default_folder(root)
    report = import_transcripts(root, cfg, folder, dry_run=args.dry_run, progress=progress_bar("transcripts", args.quiet))
    if args.json:
        emit_json(report)
        return 0
    if not args.quiet:
        counts = report["counts"]
        verb = "would be " if args.dry_run else ""
        print(f"{len(report['items'])} transcripts in {folder}: " + ", ".join(f"{n} {verb}{k}" for k, n in counts.items() if n))
        for item in report["items"]:
            if item["status"] == "failed":
                print(f"  failed: {item['transcript']}: {item.get('reason', '')}")
    return 1 if report["counts"]["failed"] else 0
