"""`memindex candidate`: which existing memory new information should update (JSON)."""

from __future__ import annotations

import argparse
import sys

from ..config import Config
from ..errors import UsageError, WriteError
from ..write import find_candidate
from ._common import AddParser, category_option, clean_arg, emit_json


def register(add: AddParser) -> None:
    p = add("candidate", example='memindex candidate --category decision --new-info "Access tokens now expire after 10 minutes"')
    category_option(p, required=True)
    p.add_argument("--new-info", metavar="TEXT", help="the new information")
    p.add_argument("--new-info-file", metavar="F", help="read the new information from a file ('-' for stdin)")
    p.set_defaults(handler=cmd_candidate)


def cmd_candidate(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Which existing memory should new information update? JSON answer."""
    if (args.new_info is None) == (args.new_info_file is None):
        raise UsageError("give exactly one of --new-info TEXT or --new-info-file F")
    if args.new_info is not None:
        text = clean_arg(args.new_info) or ""
    elif args.new_info_file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(args.new_info_file, encoding="utf-8", errors="replace") as fh:
                text = fh.read(1_048_576)
        except OSError as exc:
            raise WriteError(f"cannot read {args.new_info_file}: {exc.strerror}") from None
    answer = find_candidate(root, cfg, args.category, text)
    if not args.quiet:
        emit_json(answer)
    return 0
