"""`memindex validate` and `memindex schema`: the file format, checked and printed."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..config import Config
from ..defaults import CATEGORIES, FOLDERS
from ._common import AddParser, emit_json


def register(add: AddParser) -> None:
    p = add("validate", example="memindex validate --json")
    p.set_defaults(handler=cmd_validate)
    p = add("schema", json_flag=False, example="memindex schema decision")
    p.add_argument("category", nargs="?", choices=CATEGORIES)
    p.set_defaults(handler=cmd_schema)


def cmd_validate(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Check every memory file against schema 1.0; exit 1 if any is invalid."""
    from ..errors import MemoryFileError
    from ..store.paths import display_prefix
    from ..text.render import shown_path
    from ..store.schema import validate_memory
    from ..store.files import parse_json, read_bytes, walk

    walk_problems: dict[str, str] = {}
    files = walk(root, walk_problems)
    report: dict[str, list[str]] = {k: [v] for k, v in walk_problems.items()}
    for rel in sorted(files):
        try:
            data, _ = read_bytes(root, rel, cfg["index.max_file_bytes"])
            problems = validate_memory(parse_json(data), rel)
        except MemoryFileError as exc:
            problems = [str(exc)]
        if problems:
            report[rel] = problems
    folders = " ".join(f"{f}/" for f in FOLDERS)
    for stray in _stray_files(root):
        report[stray] = [f"not in a category folder ({folders})"]
    prefix = display_prefix(root)
    if args.json:
        emit_json({"checked": len(files), "invalid": {prefix + k: v for k, v in sorted(report.items())}})
    else:
        for rel, problems in sorted(report.items()):
            for problem in problems:
                print(f"{prefix}{shown_path(rel)}: {problem}")
        if not args.quiet:
            print(f"{len(files)} files checked, {len(report)} invalid", file=sys.stderr)
    return 1 if report else 0


def _stray_files(root: str) -> list[str]:
    """JSON files in folders that are not category folders (a likely misplacement)."""
    stray: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return stray
    for entry in entries:
        if entry.name.startswith(".") or entry.name in FOLDERS:
            continue
        if entry.is_dir(follow_symlinks=False):
            stray += [f"{entry.name}/{n}" for n in sorted(os.listdir(entry.path)) if n.endswith(".json")]
    return stray


def cmd_schema(args: argparse.Namespace, root: str | None, cfg: Config) -> int:
    """Print the JSON Schema of memory files (one category, or all)."""
    from ..store.schema import all_schemas, memory_schema

    print(json.dumps(memory_schema(args.category) if args.category else all_schemas(), indent=2))
    return 0
