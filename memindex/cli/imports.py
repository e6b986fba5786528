"""`memindex import SOURCE`: what the project already knows, indexed in place.

`adr`, `markdown`, `claude-md` register folders and files in the project's
memory-config.json (`documents.paths`) and sync; `claude-memory` turns on the user's own
setting for Claude Code's auto memory (`documents.claude_memory`). Nothing is copied into a
memory file: a copy drifts from its source (memindex/importers/register.py). Every file is
named: indexed, or not and why. Exit 1 when a file that should be a document could not be
read (or a path cannot be registered), 0 when every file is indexed or deliberately left out
(a template, an index page, not an ADR, no text). All take --dry-run and --json.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..config import Config
from ..errors import UsageError
from ..store.paths import check_doc_path, inside, project_of
from ._common import AddParser, category_option, emit_json, err, lock_option


def register(add: AddParser) -> None:
    p = add("import", json_flag=False, example="memindex import adr --dry-run")
    sub = p.add_subparsers(dest="source", metavar="SOURCE")
    sub.required = True
    for name, (help_text, example, options) in SUBCOMMANDS.items():
        s = sub.add_parser(name, help=help_text, description=help_text, epilog=f"example: {example}",
                           formatter_class=p.formatter_class)
        s.add_argument("--dry-run", "-n", action="store_true", help="only say what would be registered and indexed")
        s.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
        s.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="print only errors")
        lock_option(s)
        options(s)


# --- shared -----------------------------------------------------------------------------


def project_path(value: str, project: str, what: str, folder: bool | None) -> str:
    """A path given on the command line as a project-relative path to register ("" is the
    project itself); UsageError when it is missing, of the wrong type, or outside the
    project (documents are indexed in place: a repository's config names only its own)."""
    full = os.path.abspath(value)
    real = os.path.realpath(full)
    if not os.path.exists(full):
        raise UsageError(f"{what} {value!r} does not exist")
    if folder is True and not os.path.isdir(full) or folder is False and not os.path.isfile(full):
        raise UsageError(f"{what} {value!r} is not {'a folder' if folder else 'a file'}")
    proj_real = os.path.realpath(project)
    if not inside(real, proj_real):
        raise UsageError(f"{what} {value!r} is outside the project {project}: documents are indexed where they are, "
                         "and a project registers only its own files")
    rel = os.path.relpath(real, proj_real).replace(os.sep, "/")
    rel = "." if rel == "." else rel
    why = check_doc_path(rel)
    if why:
        raise UsageError(f"{what} {value!r} {why}")
    return rel


def _run(args: argparse.Namespace, root: str, kind: str, paths: dict[str, str], *, auto_memory: bool = False,
         setting: str = "", nothing: str = "") -> int:
    from ..importers.register import register as do_register

    reg = do_register(root, kind, paths, dry_run=args.dry_run, auto_memory=auto_memory, lock_timeout=args.lock_timeout)
    reg.setting = setting
    if nothing and not reg.files and not reg.problems:
        reg.warnings.append(nothing)
    report(reg, getattr(args, "json", False), getattr(args, "quiet", False))
    return reg.exit_code


def report(reg, as_json: bool, quiet: bool) -> None:  # type: ignore[no-untyped-def]
    """Print a registration: the paths, every file not indexed (a failure on stderr), every
    retired or archived document, every earlier copy archived, and one line of counts."""
    from ..text.render import shown_path as shown  # a repository's file names: escaped, one line each

    for f in reg.failed:
        err(f"not indexed {shown(f.path)}: {shown(f.reason)}")
    for path, why in reg.problems.items():
        err(f"cannot index {shown(path)}: {shown(why)}")
    for e in reg.copy_errors:
        err(f"could not archive {shown(e['memory'])}: {shown(e['error'])}")
    if as_json:
        emit_json(reg.to_json())
        return
    if quiet:
        return
    would = "would be " if reg.dry_run else ""
    for path in reg.paths:
        state = f"{would}registered" if path in reg.added else "already registered"
        print(f"{shown(path)} ({reg.paths[path]}): {state} in {shown(reg.config)}")
    if reg.setting:
        print(f"{would}set {reg.setting}")
    for f in reg.files:
        if not f.indexed and f.deliberate:
            print(f"not indexed {shown(f.path)}: {shown(f.reason)}")
        elif f.indexed and f.lifecycle != "active":
            print(f"{f.lifecycle} {shown(f.path)}: {shown(f.reason)}")
    for c in reg.copies:
        print(f"{'would archive' if reg.dry_run else 'archived'} {shown(c['memory'])}: {shown(c['reason'])}")
    for warning in reg.warnings:
        print(shown(warning))
    print(summary(reg))


def summary(reg) -> str:  # type: ignore[no-untyped-def]
    indexed = [f for f in reg.files if f.indexed]
    states: dict[str, int] = {}
    for f in indexed:
        states[f.lifecycle] = states.get(f.lifecycle, 0) + 1
    left = [f for f in reg.files if not f.indexed]
    parts = [f"{len(reg.files)} file{'s' if len(reg.files) != 1 else ''}",
             f"{len(indexed)} {'would be ' if reg.dry_run else ''}indexed"
             + (f" ({', '.join(f'{states[s]} {s}' for s in ('active', 'retired', 'archived') if s in states)})" if indexed else ""),
             f"{len(left)} not indexed" + (f" ({len(reg.failed)} could not be read)" if reg.failed else "")]
    copies = f"{len(reg.copies)} earlier cop{'y' if len(reg.copies) == 1 else 'ies'} {'to archive' if reg.dry_run else 'archived'}"
    head = (reg.kind if reg.kind == "init" else f"import {reg.kind}") + (" (dry run, nothing written)" if reg.dry_run else "")
    return f"{head}: {'; '.join([', '.join(parts), copies])}"


# --- adr --------------------------------------------------------------------------------


def adr_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", nargs="*", metavar="DIR",
                   help="ADR folders, read recursively (default: those `memindex init` finds: .adr-dir's, docs/adr, "
                        "doc/adr, docs/decisions, docs/architecture/decisions, architecture-decision-records, rfcs, ...)")
    p.set_defaults(handler=cmd_adr)


def cmd_adr(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Markdown ADRs (Nygard/adr-tools, MADR 2-4, Tendermint, free templates), indexed in place."""
    from ..importers.discover import find

    project = project_of(root)
    if args.dir:
        paths = {project_path(d, project, "ADR folder", folder=True): "adr" for d in args.dir}
    else:
        paths = {f.path: "adr" for f in find(Path(project)) if f.kind == "adr"}
    return _run(args, root, "adr", paths, nothing=f"no ADR folder found in {project} (give one: memindex import adr DIR)")


# --- markdown ---------------------------------------------------------------------------


def markdown_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="FILE|DIR", help="Markdown files or folders (read recursively)")
    category_option(p)
    p.set_defaults(handler=cmd_markdown)


def cmd_markdown(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Markdown runbooks, docs pages and notes, indexed in place: of --category, else of the
    category folder they lie in, else a docs folder (each page's category by the stated rule)."""
    from ..defaults import FOLDERS, MEMORY_DIR

    project = project_of(root)
    paths: dict[str, str] = {}
    for value in args.paths:
        rel = project_path(value, project, "path", folder=None)
        kind = args.category
        parts = rel.split("/")
        if not kind and len(parts) >= 3 and tuple(parts[:2]) == MEMORY_DIR and parts[2] in FOLDERS:
            kind = FOLDERS[parts[2]]  # a note dropped into a category folder
        paths[rel] = kind or "docs"
    return _run(args, root, "markdown", paths)


# --- claude-md --------------------------------------------------------------------------


def claude_md_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="instruction files (default: CLAUDE.md, .claude/CLAUDE.md and AGENTS.md that exist)")
    p.set_defaults(handler=cmd_claude_md)


def cmd_claude_md(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """CLAUDE.md / AGENTS.md sections as constraints and preferences, indexed in place (opt-in)."""
    from ..importers.discover import INSTRUCTION_FILES

    project = project_of(root)
    if args.files:
        paths = {project_path(f, project, "file", folder=False): "claude-md" for f in args.files}
    else:
        paths = {n: "claude-md" for n in INSTRUCTION_FILES
                 if os.path.isfile(os.path.join(project, n)) and not os.path.islink(os.path.join(project, n))}
    return _run(args, root, "claude-md", paths, nothing=f"no CLAUDE.md, .claude/CLAUDE.md or AGENTS.md in {project}")


# --- claude-memory ----------------------------------------------------------------------


def claude_memory_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source_dir", metavar="DIR",
                   help="a folder of notes inside the project instead (registered as notes)")
    p.set_defaults(handler=cmd_claude_memory)


def cmd_claude_memory(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Claude Code's auto memory of this project, indexed in place: your own setting
    documents.claude_memory (the folder is outside the repository)."""
    from ..importers.claude_memory import enable

    project = project_of(root)
    if args.source_dir:
        rel = project_path(args.source_dir, project, "--from", folder=True)
        return _run(args, root, "claude-memory", {rel: "notes"})
    setting, notes = enable(project, cfg, dry_run=args.dry_run)
    return _run(args, root, "claude-memory", {}, auto_memory=True, setting=setting,
                nothing="" if notes else f"no Claude Code auto memory for this project yet at {setting.split(' for ')[-1]}")


# --- transcripts (memindex.capture) -------------------------------------------------------


def transcripts_options(p: argparse.ArgumentParser) -> None:
    from .import_transcripts import register

    register(p)


# name -> (help line, example, options)
SUBCOMMANDS = {
    "adr": ("Markdown ADRs, indexed in place (registered in memory-config.json; superseded ones retired)",
            "memindex import adr docs/adr --dry-run", adr_options),
    "claude-memory": ("Claude Code's auto memory (~/.claude/projects/<project>/memory), indexed in place (your setting)",
                      "memindex import claude-memory --json", claude_memory_options),
    "claude-md": ("CLAUDE.md / AGENTS.md sections as constraints and preferences, indexed in place (opt-in)",
                  "memindex import claude-md CLAUDE.md AGENTS.md", claude_md_options),
    "markdown": ("Markdown runbooks, docs and notes (files or folders), indexed in place",
                 "memindex import markdown runbooks --category runbook", markdown_options),
    "transcripts": ("Claude Code session transcripts as session summaries (the capture summariser)",
                    "memindex import transcripts --dry-run", transcripts_options),
}
