"""`memindex import SOURCE`: bring in what the project already knows, each source through
its own importer (idempotent, with --dry-run, --json and a progress bar on stderr).
A source is one entry of SOURCES: (the module that registers its subcommand, help)."""

from __future__ import annotations

import argparse
import importlib

from ._common import AddParser

# source -> module under memindex.cli with `register(parser)`, and its help line
SOURCES: dict[str, tuple[str, str]] = {
    "transcripts": ("import_transcripts", "Claude Code session transcripts -> session summaries (the capture summariser)"),
}


def register(add: AddParser) -> None:
    p = add("import", json_flag=False, example="memindex import transcripts --dry-run")
    sub = p.add_subparsers(dest="source", metavar="SOURCE")
    sub.required = True
    for name, (module, help_text) in SOURCES.items():
        q = sub.add_parser(name, help=help_text, description=help_text)
        q.add_argument("--json", action="store_true", help="machine-readable output")
        q.add_argument("-q", "--quiet", action="store_true", help="print only errors")
        q.add_argument("--dry-run", action="store_true", help="say what would be written, write nothing")
        importlib.import_module(f"{__package__}.{module}").register(q)


def progress_bar(desc: str, quiet: bool):
    """A tqdm progress bar over a list, on stderr (none with --quiet)."""
    import sys

    def wrap(items: list):
        if quiet:
            return iter(items)
        from tqdm import tqdm

        return iter(tqdm(items, desc=desc, unit="file", file=sys.stderr, leave=False, disable=None))

    return wrap


