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
    p.add_argument("--no-documents", action="store_true",
                   help="only say which ADR and runbook folders it finds; do not register them (memindex import does)")
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
    found, reg = _documents(result.root, project, register=not args.no_documents)
    if reg is None:
        sync(result.root, progress=False)
    if args.write_settings:
        add_permissions(project, result)
    rules = permission_rules()
    offers = [f for f in found if f.opt_in and not f.registered]  # said, registered only by their command
    if args.json:
        emit_json({
            "root": str(result.root), "created": result.created, "kept": result.kept, "updated": result.updated,
            "rules": rules, "rules_added": result.rules_added if args.write_settings else None,
            "documents": {"found": [f.to_json() for f in found if not f.opt_in],
                          "registration": reg.to_json() if reg is not None else None},
            "imports": [f.to_json() for f in offers],
        })
        return 0 if reg is None else reg.exit_code
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
    folders = [f for f in found if not f.opt_in]
    if folders:
        print("\nThe project's documents, indexed in place" + (":" if reg is not None else " (not registered: --no-documents):"))
        for folder in folders:
            print(f"  {folder.line()}" + (" (already registered)" if folder.registered else ""))
        if reg is not None:
            from .imports import report

            report(reg, False, False)
    if offers:
        print("\nAlso here, opt-in (Claude Code already loads CLAUDE.md and MEMORY.md into each session):")
        for offer in offers:
            print(f"  {offer.line()}")
    return 0 if reg is None else reg.exit_code


def _documents(root: Path, project: Path, register: bool):  # type: ignore[no-untyped-def]
    """The folders `find` gives, and (unless told not to) their registration: the ADR and
    runbook folders not registered yet go into documents.paths, then one sync."""
    from ..config import load_config
    from ..importers.discover import find
    from ..importers.register import register as do_register

    found = find(project, load_config(root)["documents.paths"])  # type: ignore[arg-type]
    new = {f.path: f.kind for f in found if not f.opt_in and not f.registered}
    if not register or not new:
        return found, None
    return found, do_register(root, "init", new)
