"""`memindex` command line: a thin shell over the library (store, sync, query, render)."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from . import __version__, index
from .config import Config, load_config
from .defaults import (
    CATEGORIES,
    EXIT_LOCKED,
    EXIT_NO_INDEX,
    EXIT_NO_ROOT,
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    RECORD_STATUSES,
)
from .paths import RootNotFound, display_prefix, find_root
from .render import shown_path

COMMANDS: dict[str, Callable[[argparse.Namespace, Path, Config], int]] = {}


def command(name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    def register(fn: Callable[..., int]) -> Callable[..., int]:
        COMMANDS[name] = fn
        return fn

    return register


def err(message: str) -> None:
    print(f"memindex: {message}", file=sys.stderr)


def emit_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=None))


# --- sync / rebuild -------------------------------------------------------------------


def _run_sync(args: argparse.Namespace, root: Path, cfg: Config, rebuild: bool) -> int:
    from .sync import sync

    report = sync(
        root,
        cfg,
        rebuild=rebuild,
        only=getattr(args, "path", None),
        progress=not args.json and not args.quiet,
        lock_timeout=args.lock_timeout,
    )
    if args.json:
        emit_json(report.to_json())
    elif not args.quiet:
        print(("rebuilt: " if rebuild else "synced: ") + report.summary())
        for rel, reason in sorted(report.problems.items()):
            err(f"{shown_path(rel)}: {reason}")
    return EXIT_OK


@command("sync")
def cmd_sync(args: argparse.Namespace, root: Path, cfg: Config) -> int:
    """Bring the index up to date (re-reads only changed files)."""
    return _run_sync(args, root, cfg, rebuild=False)


@command("rebuild")
def cmd_rebuild(args: argparse.Namespace, root: Path, cfg: Config) -> int:
    """Re-read every file into the index, in place, in one transaction."""
    return _run_sync(args, root, cfg, rebuild=True)


# --- search ---------------------------------------------------------------------------


def hit_json(hit: Any, prefix: str) -> dict[str, Any]:
    return {
        "path": prefix + hit.path,
        "id": hit.id,
        "category": hit.category,
        "title": _title(hit.title),
        "tags": hit.tags,
        "updated_at": hit.updated_at,
        "record_status": hit.record_status,
        "score": round(hit.score, 4),
    }


def _title(title: str) -> str:
    from .text import sanitize_title

    return sanitize_title(title)


def format_hits(hits: Sequence[Any], prefix: str) -> str:
    """The compact list an assistant reads before opening files."""
    from .text import sanitize_tag

    lines = []
    for rank, hit in enumerate(hits, 1):
        label = hit.category.upper() + ("" if hit.record_status == "active" else f", {hit.record_status}")
        tags = ",".join(t for t in (sanitize_tag(t) for t in hit.tags) if t)
        date = (hit.updated_at or "")[:10] or "-"
        lines.append(f"{rank}. [{label}] {_title(hit.title)} | #{tags} | {date} | {prefix}{hit.path}")
    return "\n".join(lines)


@command("search")
def cmd_search(args: argparse.Namespace, root: Path, cfg: Config) -> int:
    """Ranked memories for a query: a compact list, or JSON."""
    from .query import Filters, Params, search

    text = clean_arg(" ".join(args.query)) or ""
    from .sync import open_fresh_reader

    conn = open_fresh_reader(root, cfg, allow_sync=not args.no_sync)
    try:
        filters = Filters.from_config(
            cfg,
            categories=tuple(args.category or ()),
            tag=clean_arg(args.tag),
            include_inactive=args.include_inactive,
        )
        limit = args.limit if args.limit is not None else cfg["retrieval.search_limit"]
        hits = search(conn, text, limit=limit, params=Params.from_config(cfg), filters=filters, related=True)
    finally:
        conn.close()
    prefix = display_prefix(root)
    if args.json:
        emit_json([hit_json(h, prefix) for h in hits])
    elif hits:
        print(format_hits(hits, prefix))
    return EXIT_OK


# --- status ---------------------------------------------------------------------------


@command("status")
def cmd_status(args: argparse.Namespace, root: Path, cfg: Config) -> int:
    """Counts, index size, last sync, staleness."""
    from .store import walk

    info: dict[str, Any] = {"root": str(root), "index": str(index.index_path(root))}
    try:
        conn = index.open_reader(root)
    except index.IndexUnavailable as exc:
        info.update(ok=False, error=str(exc), files=len(walk(root)))
        if args.json:
            emit_json(info)
        else:
            print(f"root:    {root}\nindex:   unavailable: {exc}\nfiles:   {info['files']}")
        return EXIT_NO_INDEX
    with conn:
        counts: dict[str, dict[str, int]] = {c: {s: 0 for s in RECORD_STATUSES} for c in CATEGORIES}
        for category, status, n in conn.execute(
            "SELECT category, record_status, count(*) FROM documents GROUP BY 1, 2"
        ):
            counts.setdefault(category, {}).setdefault(status, 0)
            counts[category][status] = n
        meta = index.get_meta(conn)
        docs, bad = index.stored_stats(conn)
        invalid = dict(conn.execute("SELECT path, error FROM invalid"))
    current = walk(root)
    changed = sum(1 for p, st in current.items() if docs.get(p) != st and bad.get(p) != st)
    gone = sum(1 for p in set(docs) | set(bad) if p not in current)
    size = sum(
        os.path.getsize(f"{index.index_path(root)}{s}")
        for s in ("", "-wal")
        if os.path.exists(f"{index.index_path(root)}{s}")
    )
    last = meta.get("last_sync_ns")
    info.update(
        ok=True,
        counts=counts,
        memories=sum(sum(v.values()) for v in counts.values()),
        invalid=invalid,
        index_bytes=size,
        last_sync=_iso(last) if isinstance(last, int) else None,
        stale=bool(changed or gone),
        pending={"changed_or_new": changed, "removed": gone},
    )
    from .watch_marker import watcher_pid

    info["watcher_pid"] = watcher_pid(root)
    if args.json:
        emit_json(info)
        return EXIT_OK
    print(f"root:     {root}")
    print(f"index:    {info['index']} ({size / 1024:.0f} KiB)")
    print(f"synced:   {info['last_sync'] or 'never'}" + ("  (stale: run `memindex sync`)" if info["stale"] else "  (up to date)"))
    if info["stale"]:
        print(f"pending:  {changed} new or changed, {gone} removed")
    print(f"watcher:  {'running, pid ' + str(info['watcher_pid']) if info['watcher_pid'] else 'not running'}")
    print(f"memories: {info['memories']}  ({len(invalid)} invalid files)")
    for category, by_status in counts.items():
        parts = ", ".join(f"{n} {s}" for s, n in by_status.items() if n)
        print(f"  {category:<16} {parts or '0'}")
    return EXIT_OK


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- validate / schema ----------------------------------------------------------------


@command("validate")
def cmd_validate(args: argparse.Namespace, root: Path, cfg: Config) -> int:
    """Check every memory file against schema 1.0; exit 1 if any is invalid."""
    from .schema import validate_memory
    from .store import MemoryFileError, parse_json, read_bytes, walk

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
    for stray in _stray_files(root):
        report[stray] = ["not in a category folder (sessions/ decisions/ runbooks/ constraints/ tech-debt/ preferences/)"]
    prefix = display_prefix(root)
    if args.json:
        emit_json({"checked": len(files), "invalid": {prefix + k: v for k, v in sorted(report.items())}})
    else:
        for rel, problems in sorted(report.items()):
            for problem in problems:
                print(f"{prefix}{shown_path(rel)}: {problem}")
        if not args.quiet:
            print(f"{len(files)} files checked, {len(report)} invalid", file=sys.stderr)
    return EXIT_PROBLEMS if report else EXIT_OK


def _stray_files(root: Path) -> list[str]:
    """JSON files in folders that are not category folders (a likely misplacement)."""
    from .defaults import FOLDERS

    stray = []
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


@command("schema")
def cmd_schema(args: argparse.Namespace, root: Path | None, cfg: Config) -> int:
    """Print the JSON Schema of memory files (one category, or all)."""
    from .schema import all_schemas, memory_schema

    print(json.dumps(memory_schema(args.category) if args.category else all_schemas(), indent=2))
    return EXIT_OK


# --- parser ---------------------------------------------------------------------------

NO_ROOT_COMMANDS = {"schema", "hook"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memindex",
        description="Persistent full-text index of a project's .claude/memory files.",
    )
    parser.add_argument("--version", action="version", version=f"memindex {__version__}")
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="memory folder (.claude/memory) or a project containing one; default: walk up from the working directory",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name: str, help_text: str, json_flag: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if json_flag:
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("-q", "--quiet", action="store_true", help="print only errors")
        return p

    p = add("sync", "bring the index up to date (re-reads only changed files)")
    p.add_argument("--path", action="append", metavar="REL", help="only this file, relative to the memory root (repeatable)")
    p.add_argument("--lock-timeout", type=float, metavar="S", help="seconds to wait for another writer (default 10)")
    p = add("rebuild", "re-read every memory file into the index (in place, one transaction)")
    p.add_argument("--lock-timeout", type=float, metavar="S", help="seconds to wait for another writer (default 10)")
    p = add("search", "ranked memories for a query")
    p.add_argument("query", nargs="+", help="free text; use -- before a query that starts with '-'")
    p.add_argument("--limit", "-n", type=_positive_int, default=None, help="at most N results (default 10)")
    p.add_argument("--category", "-c", action="append", choices=CATEGORIES, help="only this category (repeatable)")
    p.add_argument("--tag", "-t", help="only memories with this tag")
    p.add_argument("--include-inactive", action="store_true", help="include retired and archived memories")
    p.add_argument("--no-sync", action="store_true", help="do not sync a stale index first")
    add("status", "counts, index size, last sync, staleness, watcher")
    add("validate", "check every memory file against schema 1.0 (exit 1 if any is invalid)")
    p = add("schema", "print the JSON Schema of memory files", json_flag=False)
    p.add_argument("category", nargs="?", choices=CATEGORIES)
    for extend in EXTENSIONS:
        extend(sub, add)
    return parser


# Other modules (watch, write, hook) add their subcommands here without a circular import.
EXTENSIONS: list[Callable[[Any, Callable[..., argparse.ArgumentParser]], None]] = []


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= 100_000:
        raise argparse.ArgumentTypeError("must be between 1 and 100000")
    return value


def clean_arg(text: str | None) -> str | None:
    """A command-line string as valid Unicode (undecodable bytes become U+FFFD)."""
    if text is None:
        return None
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def main(argv: Sequence[str] | None = None) -> int:
    from . import commands  # noqa: F401  (registers the watch/write/hook subcommands)

    parser = build_parser()
    args = parser.parse_args(argv)
    root: Path | None = None
    cfg = Config()
    if args.command not in NO_ROOT_COMMANDS:
        try:
            root = Path(find_root(args.root, explicit=args.root is not None))
        except RootNotFound as exc:
            err(str(exc))
            return EXIT_NO_ROOT
        if not os.access(root, os.R_OK | os.X_OK):
            err(f"cannot read the memory root {root}: permission denied")
            return EXIT_PROBLEMS
        cfg = load_config(root)
        for warning in cfg.warnings:
            err(f"config: {warning}")
    from .sync import LockTimeout

    try:
        return COMMANDS[args.command](args, root, cfg)  # type: ignore[arg-type]
    except LockTimeout as exc:
        err(str(exc))
        return EXIT_LOCKED
    except index.IndexUnavailable as exc:
        err(str(exc))
        return EXIT_NO_INDEX
    except sqlite3.Error as exc:
        where = index.index_path(root) if root is not None else "the index"
        if index.is_corruption(exc):
            err(f"index {where} is corrupt ({exc}); run `memindex rebuild`")
        else:
            err(f"index {where}: {index.describe(exc, where)}")
        return EXIT_NO_INDEX
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a full disk, a read-only or unreadable folder
        err(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
        return EXIT_PROBLEMS
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
