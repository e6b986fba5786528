"""`memindex watch`: keep the index fresh while files change (to be implemented)."""

from __future__ import annotations

import argparse
from typing import Any, Callable


def register_cli(sub: Any, add: Callable[..., argparse.ArgumentParser]) -> None:
    """Add the `watch` subcommand to the CLI parser."""
