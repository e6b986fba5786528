"""Entry point: global options, lazy subcommands, and the one exceptions -> exit codes table."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import (
    HashConflict,
    IndexUnavailable,
    LockTimeout,
    MemindexError,
    RootNotFound,
    UntrustedRoot,
    UsageError,
    WriteError,
)
from ._common import emit_json, err

# Exit codes (documented in the README). Library code never sees these.
EXIT_OK = 0
EXIT_PROBLEMS = 1  # validate found invalid files; a command failed on bad input
EXIT_USAGE = 2
EXIT_LOCKED = 3  # the writer lock could not be taken in time
EXIT_NO_INDEX = 4  # a reader found no usable index
EXIT_NO_ROOT = 5  # no memory root found
EXIT_CONFLICT = 6  # update --expect-hash: the file changed underneath
EXIT_INTERNAL = 70  # a bug: one line instead of a traceback (MEMINDEX_DEBUG=1 shows it)

# The one table: the first matching class decides (subclasses before their bases).
EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (HashConflict, EXIT_CONFLICT),
    (UsageError, EXIT_USAGE),
    (WriteError, EXIT_PROBLEMS),
    (LockTimeout, EXIT_LOCKED),
    (IndexUnavailable, EXIT_NO_INDEX),
    (RootNotFound, EXIT_NO_ROOT),
    (UntrustedRoot, EXIT_NO_ROOT),
    (MemindexError, EXIT_PROBLEMS),
)

# name -> (module under memindex.cli, help line, needs a memory root). Only the module of
# the command being run is imported: `memindex search` never loads the watcher or the
# write path.
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "init": ("init", "create .claude/memory with its folders and a commented config; show or write the permission rules", False),
    "sync": ("sync", "bring the index up to date (re-reads only changed files)", True),
    "rebuild": ("sync", "re-read every memory file into the index (in place, one transaction)", True),
    "search": ("search", "ranked memories for a query", True),
    "explain": ("search", "what the prompt hook would inject for a prompt, and why each candidate was kept or dropped", True),
    "get": ("search", "one memory whole as JSON: {path, sha256, memory} (what the MCP tool get answers)", True),
    "status": ("status", "counts, index size, last sync, staleness, watcher", True),
    "validate": ("validate", "check every memory file against schema 1.0 (exit 1 if any is invalid)", True),
    "schema": ("validate", "print the JSON Schema of memory files", False),
    "doctor": ("doctor", "check what you cannot see (the CLI on PATH vs the plugin's hooks, broken or misplaced files, git, worker) and how to fix it", True),
    "watch": ("watch", "keep the index fresh while memory files change (runs until Ctrl-C or SIGTERM)", True),
    "serve": ("serve", "the resident semantic worker of this root: keeps the model warm, answers nearest-memory queries on a private socket", True),
    "save": ("write", "create a new memory from JSON; prints {status, path, id, sha256} as JSON (exit 1 if it exists or is invalid)", True),
    "update": ("write", "merge changes into a memory (content key by key, other fields replaced); JSON answer", True),
    "retire": ("write", "retire a memory (hidden from search; gc deletes it after the grace period)", True),
    "archive": ("write", "archive a memory (kept, hidden from search)", True),
    "unarchive": ("write", "make an archived memory active again", True),
    "restore": ("write", "make a retired memory active again", True),
    "gc": ("write", "delete retired memories older than delete.grace_period_days (default 30)", True),
    "mcp": ("mcp", "serve this project's memories to an MCP client over stdio (needs the mcp extra)", False),
    "import": ("imports", "turn what the project already knows into memories: ADRs, Claude Code's auto memory and transcripts, CLAUDE.md, Markdown notes", True),
    "capture": ("capture", "summarise a Claude Code session transcript into its session summary (what the Stop hook runs)", True),
    "trust": ("trust", "let this project's memory-config.json make memindex do more (load a model, inject more); --revoke, --status, --list", False),
    "review": ("review", "what needs a human or the model: stale, conflicting, duplicate, unused, expired memories, each with the evidence and the suggested action; --keep, --merge", True),
    "ui": ("ui", "a local web page over this store: browse, search, what the assistant was shown and why, review (needs the ui extra)", True),
    "candidate": ("candidate", "the existing memory new information should update, and CREATE/UPDATE/UPDATE_OR_DELETE/NOOP (JSON)", True),
}


# Commands whose process ends without the interpreter's teardown once `main` has returned
# (`run`; what it saves: docs/benchmarks.md): they read, and what they write on the way (a
# sync before answering) is committed and closed by then.
QUICK_EXIT = frozenset({"search", "explain", "status", "get"})


def _command_name(argv: Sequence[str]) -> str | None:
    """The subcommand in argv (the first word that is not a global option or its value)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--root":
            skip = True
        elif arg == "--":
            return None
        elif not arg.startswith("-"):
            return arg
    return None


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter given the terminal width up front: left to itself it imports
    shutil (and with it zlib, bz2, lzma, fnmatch) in every process, because
    `add_argument` builds a formatter to check each option."""

    def __init__(self, prog: str) -> None:
        try:
            columns = int(os.environ.get("COLUMNS") or os.get_terminal_size(sys.stdout.fileno()).columns)
        except (OSError, ValueError):
            columns = 80
        super().__init__(prog, width=max(columns, 40) - 2)


def build_parser(wanted: str | None = None) -> argparse.ArgumentParser:
    """The parser: full options for `wanted`'s module, or a help line for every command."""
    parser = argparse.ArgumentParser(
        prog="memindex",
        description="Persistent full-text index of a project's .claude/memory files.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"memindex {__version__}")
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="memory folder (.claude/memory) or a project containing one; default: walk up from the working directory",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    module_name = COMMANDS[wanted][0] if wanted in COMMANDS else None

    def add(name: str, json_flag: bool = True, example: str | None = None) -> argparse.ArgumentParser:
        help_text = COMMANDS[name][1]
        p = sub.add_parser(
            name, help=help_text, description=help_text,
            epilog=f"example: {example}" if example else None, formatter_class=_Formatter,
        )
        if json_flag:
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
        return p

    if module_name is not None:  # a known command: its module only, not every command's parser
        importlib.import_module(f"{__package__}.{module_name}").register(add)
        return parser
    for name, (_, help_text, _) in COMMANDS.items():  # `memindex --help`, a typo: the list
        sub.add_parser(name, help=help_text, add_help=False, formatter_class=_Formatter)
    return parser


def _fail(exc: BaseException, args: argparse.Namespace) -> int:
    """One `memindex: ...` line for an exception, and its exit code from the table."""
    import sqlite3

    if isinstance(exc, sqlite3.Error):
        from .. import index

        where = index.index_path(args.root_path) if getattr(args, "root_path", None) else "the index"
        if index.is_corruption(exc):
            err(f"index {where} is corrupt ({exc}); run `memindex rebuild`")
        else:
            err(f"index {where}: {index.describe(exc, str(where))}")
        return EXIT_NO_INDEX
    if isinstance(exc, OSError):  # a full disk, a read-only or unreadable folder
        err(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
        return EXIT_PROBLEMS
    err(str(exc))
    if isinstance(exc, WriteError) and getattr(args, "json", False):
        emit_json(exc.to_json())
    return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_name(argv))
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:  # a stub parser: cannot happen once the name was found, but be plain
        parser.error(f"unknown command {args.command!r}")
    from ..config import Config, load_config

    root: str | None = None  # a str: `search` never imports pathlib
    cfg = Config()
    args.root_path = None
    try:
        if COMMANDS[args.command][2]:
            from ..store.paths import find_root

            # `explain --hook-input`: from the payload's cwd, as the hook looks for its root
            root = find_root(args.root if args.root is not None else getattr(args, "root_hint", None),
                             explicit=args.root is not None)
            args.root_path = root
            if not os.access(root, os.R_OK | os.X_OK):
                err(f"cannot read the memory root {root}: permission denied")
                return EXIT_PROBLEMS
            cfg = load_config(root)
            for warning in cfg.warnings:
                err(f"config: {warning}")
        return int(handler(args, root, cfg))
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except (MemindexError, OSError) as exc:
        return _fail(exc, args)
    except Exception as exc:
        import sqlite3

        if isinstance(exc, sqlite3.Error):
            return _fail(exc, args)
        if os.environ.get("MEMINDEX_DEBUG"):
            raise
        err(f"internal error: {type(exc).__name__}: {exc} (MEMINDEX_DEBUG=1 shows the traceback; please report it)")
        return EXIT_INTERNAL


def run() -> None:
    """The `memindex` process (the console script and `python -m memindex`): `main`, then the
    exit; for `QUICK_EXIT` commands after flushing the answer, with `os._exit`."""
    argv = sys.argv[1:]
    code = main(argv)
    if _command_name(argv) in QUICK_EXIT:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except Exception:  # a closed pipe (`memindex search ... | head -1`): nothing left to say
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
