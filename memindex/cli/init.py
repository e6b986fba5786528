"""`memindex init`: a project's memory root, its config, and the permission rules."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..config import Config
from ..defaults import MEMORY_DIR
from ._common import AddParser, emit_json


def register(add: AddParser) -> None:
    p = add("init", example="memindex init --write-settings")
    p.add_argument(
        "--write-settings", action="store_true",
        help="add the permission rules to .claude/settings.json (kept as it is otherwise; created if missing)",
    )
    p.add_argument("--nested", action="store_true",
                   help="create a store here even though a parent folder's project has one (refused otherwise)")
    p.set_defaults(handler=cmd_init)


def _store_above(project: Path) -> Path | None:
    """The memory store of an enclosing project, if `project` is inside one."""
    for parent in project.parents:
        candidate = parent.joinpath(*MEMORY_DIR)
        if candidate.is_dir():
            return candidate
    return None


def cmd_init(args: argparse.Namespace, root: str | None, cfg: Config) -> int:
    """Create .claude/memory (folders, commented config), build its index, show the rules."""
    from ..store.scaffold import add_permissions, init_project, permission_rules
    from ..index.sync import sync

    project = Path(os.path.abspath(args.root or os.getcwd()))
    if project.parts[-2:] == MEMORY_DIR:
        project = project.parent.parent
    above = _store_above(project)
    if above is not None and not args.nested:
        from ..errors import UsageError

        raise UsageError(
            f"{above.parent.parent} already has a memory store ({above}); memindex run anywhere below it uses that "
            f"one, so nothing was created in {project}. To keep a separate store here anyway: memindex init --nested"
        )
    result = init_project(project)
    sync(result.root, progress=False)
    if args.write_settings:
        add_permissions(project, result)
    rules = permission_rules()
    from ..importers.discover import offers

    found = offers(project)  # said, never imported by init itself
    if args.json:
        emit_json({
            "root": str(result.root), "created": result.created, "kept": result.kept, "updated": result.updated,
            "rules": rules, "rules_added": result.rules_added if args.write_settings else None,
            "imports": [o.to_json() for o in found],
        })
        return 0
    if args.quiet:
        return 0
    for rel in result.created:
        print(f"created {rel}")
    for rel in result.updated:
        print(f"updated {rel} (the derived files it did not list)")
    if not result.created:
        print(f"{project / MEMORY_DIR[0] / MEMORY_DIR[1]} is already set up; nothing overwritten")
    if args.write_settings:
        where = project / MEMORY_DIR[0] / "settings.json"
        print(f"added {len(result.rules_added)} permission rules to {where}" if result.rules_added
              else f"{where} already has every permission rule")
    else:
        print("\nThe skills run `memindex` through Bash; allow them in .claude/settings.json"
              " (or run `memindex init --write-settings`):")
        print('{ "permissions": { "allow": [')
        print(",\n".join(f'    "{r}"' for r in rules))
        print("] } }")
    if found:
        print("\nWhat this project already knows, ready to import:")
        for offer in found:
            print(f"  {offer.line()}")
    return 0
