"""Registers the subcommands that live outside cli.py (kept out of the hook's imports)."""
