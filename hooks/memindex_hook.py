#!/usr/bin/env python3
"""Entry point of the Claude Code hooks: `memindex_hook.py prompt|pre-tool-use|post-tool-use|session-start|stop|session-end`.

Runs from the plugin folder without an install (the package sits beside this folder) and
always exits 0: a broken installation must not break a prompt.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    from memindex.hook import finish, main
except Exception as exc:  # noqa: BLE001
    print(f"memindex hook: cannot import memindex: {exc}", file=sys.stderr)
    sys.exit(0)
finish(main())
