"""`memindex import SOURCE`: what the project already knows, as memories.

Each subcommand plans memories from its sources (`memindex.importers`), then writes them
through the write path; all are idempotent, take --dry-run and --json, and show a
progress bar on a terminal. Subcommands: their options beside their handler, one example
each. Exit 1 when a source was skipped (it is named on stderr), else 0.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..config import Config
from ..errors import UsageError
from ..store.paths import project_of
from ._common import AddParser, category_option, emit_json, err, lock_option


def register(add: AddParser) -> None:
    p = add("import", json_flag=False, example="memindex import adr --dry-run")
    sub = p.add_subparsers(dest="source", metavar="SOURCE")
    sub.required = True
    for name, (help_text, example, options) in SUBCOMMANDS.items():
        s = sub.add_parser(name, help=help_text, description=help_text, epilog=f"example: {example}",
                           formatter_class=p.formatter_class)
        s.add_argument("--dry-run", "-n", action="store_true", help="only say what would be written")
        s.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
        s.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="print only errors")
        lock_option(s)
        options(s)


# --- shared -----------------------------------------------------------------------------


def _paths(values: list[str] | None, what: str, folder: bool) -> list[Path]:
    out = []
    for value in values or []:
        path = Path(os.path.abspath(value))
        if not (path.is_dir() if folder else path.is_file()):
            raise UsageError(f"{what} {value!r} is not {'a folder' if folder else 'a file'}")
        out.append(path)
    return out


def _run(args: argparse.Namespace, root: str, cfg: Config, kind: str, planner) -> int:
    """Plan with `planner(report)`, apply, print; 1 when something was skipped."""
    from ..importers.engine import Report, apply
    from ..text.render import shown_path as shown  # labels are a repository's file names: escaped, one line each

    as_json, quiet = getattr(args, "json", False), getattr(args, "quiet", False)
    report = Report(kind, args.dry_run)
    planned = planner(report)
    apply(root, cfg, report, planned, progress=not (as_json or quiet), lock_timeout=args.lock_timeout)
    for skipped in report.skipped:
        err(f"skipped {shown(skipped.label)}: {shown(skipped.reason)}" + "".join(f"\n  - {shown(p)}" for p in skipped.problems))
    if as_json:
        emit_json(report.to_json())
    elif not quiet:
        would = "would be " if report.dry_run else ""
        for verb in ("created", "updated", "retired", "archived"):
            for path in getattr(report, verb):
                print(f"{would}{verb} {shown(path)}")
        for ignored in report.ignored:
            print(f"ignored {shown(ignored.label)}: {shown(ignored.reason)}")
        for warning in report.warnings:
            print(shown(warning))
        files = f"{report.found} file{'s' if report.found != 1 else ''} read"
        counts = [len(report.created), len(report.updated), len(report.retired), len(report.archived)]
        if report.dry_run:
            print(f"import {kind} (dry run, nothing written): {files}; would create {counts[0]}, update {counts[1]}, "
                  f"retire {counts[2]}, archive {counts[3]}; {len(report.unchanged)} unchanged, {len(report.skipped)} skipped")
        else:
            print(f"import {kind}: {files}; {counts[0]} created, {counts[1]} updated, {counts[2]} retired, "
                  f"{counts[3]} archived, {len(report.unchanged)} unchanged, {len(report.skipped)} skipped")
    return 1 if report.skipped else 0


# --- adr --------------------------------------------------------------------------------


def adr_options(p: argparse.ArgumentParser) -> None:
    from ..defaults import ADR_FOLDERS

    p.add_argument("dir", nargs="*", metavar="DIR",
                   help=f"ADR folders (default: the one adr-tools' .adr-dir names, and those of {', '.join(ADR_FOLDERS)} that exist)")
    p.set_defaults(handler=cmd_adr)


def cmd_adr(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Markdown ADRs (MADR 2-4, Nygard, adr-tools) as decision memories."""
    from ..importers import adr

    given = _paths(args.dir, "ADR folder", folder=True)
    return _given_or_found(args, root, cfg, adr, given, adr.find_folders,
                           lambda project: f"no ADR folder in {project} (give one: memindex import adr DIR)")


def _given_or_found(args: argparse.Namespace, root: str, cfg: Config, importer, given: list[Path], find, missing) -> int:
    """Import the paths given, else those `find(project)` finds (else say `missing(project)`)."""
    project = Path(project_of(root))
    paths = given or find(project)

    def planner(report):
        if not paths:
            report.warnings.append(missing(project))
        return importer.plan(project, paths, report)

    return _run(args, root, cfg, importer.KIND, planner)


# --- claude-memory ----------------------------------------------------------------------


def claude_memory_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source_dir", metavar="DIR",
                   help="the auto memory folder (default: ~/.claude/projects/<project key>/memory)")
    p.set_defaults(handler=cmd_claude_memory)


def cmd_claude_memory(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Claude Code's auto memory of this project as memories of the fitting category."""
    from ..importers import claude_memory

    given = _paths([args.source_dir] if args.source_dir else [], "--from", folder=True)
    found = claude_memory.default_folder(Path(project_of(root)))
    return _given_or_found(args, root, cfg, claude_memory, given, lambda _: [found] if found.is_dir() else [],
                           lambda _: f"no Claude Code auto memory for this project at {found}")


# --- claude-md --------------------------------------------------------------------------


def claude_md_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="instruction files (default: CLAUDE.md, .claude/CLAUDE.md and AGENTS.md that exist)")
    p.set_defaults(handler=cmd_claude_md)


def cmd_claude_md(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """CLAUDE.md / AGENTS.md sections as constraints and preferences (opt-in: run by hand)."""
    from ..importers import claude_md

    given = _paths(args.files, "file", folder=False)
    return _given_or_found(args, root, cfg, claude_md, given, claude_md.default_files,
                           lambda project: f"no CLAUDE.md, .claude/CLAUDE.md or AGENTS.md in {project}")


# --- markdown ---------------------------------------------------------------------------


def markdown_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="Markdown notes (one memory each)")
    category_option(p)
    p.set_defaults(handler=cmd_markdown)


def cmd_markdown(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Markdown notes as memories: of their category folder's kind, else --category, else
    the kind their headings say."""
    from ..importers import loose

    project = Path(project_of(root))
    files = _paths(args.files, "file", folder=False)
    return _run(args, root, cfg, loose.KIND, lambda report: loose.plan(project, files, args.category, report))


# --- transcripts (memindex.capture) -------------------------------------------------------


def transcripts_options(p: argparse.ArgumentParser) -> None:
    from .import_transcripts import register

    register(p)


# name -> (help line, example, options)
SUBCOMMANDS = {
    "adr": ("Markdown ADRs as decision memories (superseded ones retired, linked to their replacement)",
            "memindex import adr docs/adr --dry-run", adr_options),
    "claude-memory": ("Claude Code's auto memory (~/.claude/projects/<project>/memory) as memories",
                      "memindex import claude-memory --json", claude_memory_options),
    "claude-md": ("CLAUDE.md / AGENTS.md sections as constraints and preferences (opt-in)",
                  "memindex import claude-md CLAUDE.md AGENTS.md", claude_md_options),
    "markdown": ("Markdown notes (e.g. a .md dropped into decisions/) as memories of their folder's category",
                 "memindex import markdown .claude/memory/decisions/queue-choice.md", markdown_options),
    "transcripts": ("Claude Code session transcripts as session summaries (the capture summariser)",
                    "memindex import transcripts --dry-run", transcripts_options),
}
