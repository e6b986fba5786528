"""Registers the subcommands that live outside cli.py (watch, the write path).

Imported by `cli.main` only, so that the hook never loads them.
"""

from . import watch, write
from .cli import EXTENSIONS

EXTENSIONS.extend([watch.register_cli, write.register_cli])
