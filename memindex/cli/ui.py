"""`memindex ui`: a local web page over this project's store (the `ui` extra)."""

from __future__ import annotations

import argparse

from ..config import Config
from ._common import AddParser, bounded


def register(add: AddParser) -> None:
    p = add("ui", json_flag=False, example="memindex ui --port 8765 --read-only")
    p.add_argument("--port", type=bounded(0, 65535, "", integer=True), default=0,
                   help="the port on 127.0.0.1 (default: any free port)")
    p.add_argument("--no-open", action="store_true", help="print the address, do not open a browser")
    p.add_argument("--read-only", action="store_true", help="browse only: every write is refused")
    p.set_defaults(handler=cmd_ui)


def cmd_ui(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Serve the page until Ctrl-C; prints its address (with the launch's token) first."""
    try:
        from ..ui.server import serve
    except ImportError as exc:
        from ..errors import UsageError

        raise UsageError(f"the web page needs the ui extra: pip install 'memindex[ui]' ({exc})") from None
    return serve(root, port=int(args.port), open_browser=not args.no_open, read_only=args.read_only)
