"""`memindex import transcripts [--from DIR]`: Claude Code transcripts -> session summaries
(memindex.capture: the summariser of session capture), in `memindex import`'s table."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import Config
from ._common import emit_json


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--from", dest="folder", type=Path, metavar="DIR",
        help="folder of <session-id>.jsonl transcripts (default: Claude Code's folder of this project, "
        "~/.claude/projects/<project path with every non-alphanumeric character as '-'>)",
    )
    p.set_defaults(handler=run)


def _progress(quiet: bool):
    """A progress bar over the transcripts on a terminal (none with --quiet or --json)."""
    from ..text.progress import progress_bar

    def wrap(items: list):
        bar = progress_bar(len(items), not quiet, 1, "file", "transcripts")
        for item in items:
            yield item
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()

    return wrap


def run(args: argparse.Namespace, root: str, cfg: Config) -> int:
    from ..capture.importer import default_folder, import_transcripts

    as_json, quiet = getattr(args, "json", False), getattr(args, "quiet", False)
    folder = args.folder or default_folder(root)
    report = import_transcripts(root, cfg, folder, dry_run=args.dry_run, progress=_progress(quiet or as_json),
                                lock_timeout=args.lock_timeout)
    if as_json:
        emit_json(report)
    elif not quiet:
        counts = report["counts"]
        verb = "would be " if args.dry_run else ""
        print(f"{len(report['items'])} transcripts in {folder}: " + ", ".join(f"{n} {verb}{k}" for k, n in counts.items() if n))
        for item in report["items"]:
            if item["status"] == "failed":
                print(f"  failed: {item['transcript']}: {item.get('reason', '')}")
    return 1 if report["counts"]["failed"] else 0
