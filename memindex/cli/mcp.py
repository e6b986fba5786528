"""`memindex mcp`: serve this project's memories to an MCP client over stdio."""

from __future__ import annotations

import argparse
import os

from ..config import Config
from ._common import AddParser


def register(add: AddParser) -> None:
    p = add("mcp", json_flag=False, example="memindex --root ~/src/shop mcp --read-only")
    p.add_argument("--read-only", action="store_true", help="serve the reading tools only (no save, update, retire)")
    p.add_argument("--no-watch", action="store_true",
                   help="no watch on the memory files: each call checks them all, as the CLI does "
                        "(for a file system whose change events cannot be trusted)")
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, root: str | None, cfg: Config) -> int:
    """Run the server until the client closes stdin. A project without .claude/memory yet
    still gets a server: its tools say to run `memindex init` until there is one."""
    from ..errors import RootNotFound
    from ..store.paths import find_root

    try:
        from ..mcp.server import Project, serve
    except ImportError as exc:
        from ..errors import UsageError

        raise UsageError(f"the MCP server needs the mcp extra: pip install 'memindex[mcp]' ({exc})") from None
    start = args.root or os.getcwd()
    try:
        root = find_root(start, explicit=args.root is not None)
    except RootNotFound:
        root = None
    serve(Project(root, start, explicit=args.root is not None, watch=not args.no_watch), read_only=args.read_only)
    return 0
