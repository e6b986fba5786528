"""The write path: save, update, retire, archive, restore, gc, candidate (to be implemented)."""

from __future__ import annotations

import argparse
from typing import Any, Callable


def register_cli(sub: Any, add: Callable[..., argparse.ArgumentParser]) -> None:
    """Add the write-path subcommands to the CLI parser."""
