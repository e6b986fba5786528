#!/usr/bin/env python3
"""Entry point of the plugin's MCP server: `python3 -I memindex_mcp.py [--read-only]`
(.mcp.json). Runs the plugin's own package (beside this folder), like the hooks, with
the interpreter's site-packages for the MCP SDK.

When that interpreter lacks the SDK, the interpreter of an installed `memindex` command
(`pipx install 'memindex[mcp]'`, a venv's bin on PATH) is tried once, by the absolute
path its first line names; only absolute PATH folders are searched, so no project file
can stand in for it. Without either: one line on stderr, exit 2.
"""
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUARD = "MEMINDEX_MCP_REEXEC"


def _installed_python():
    """The absolute interpreter path on the first line of `memindex` on PATH, or None."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(folder):
            continue
        candidate = os.path.join(folder, "memindex")
        try:
            with open(candidate, "rb") as fh:
                first = fh.readline(512)
        except OSError:
            continue
        if first.startswith(b"#!"):
            parts = first[2:].decode("utf-8", "replace").split()
            if parts and os.path.isabs(parts[0]) and parts[0] != sys.executable:
                return parts[0]
        return None
    return None


try:
    import mcp  # noqa: F401  (the SDK: checked before the package is loaded)
except ImportError:
    python = None if os.environ.get(GUARD) else _installed_python()
    if python is None:
        print("memindex mcp: the MCP SDK is not installed for this python3: pip install 'memindex[mcp]'", file=sys.stderr)
        sys.exit(2)
    os.environ[GUARD] = "1"
    os.execv(python, [python, "-I", os.path.abspath(__file__), *sys.argv[1:]])

sys.path.insert(0, HERE)
from memindex.cli import main  # noqa: E402

sys.exit(main(["mcp", *sys.argv[1:]]))
