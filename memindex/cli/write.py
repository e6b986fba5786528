"""`memindex save`, `update`, `retire`, `archive`, `unarchive`, `restore` and `gc`.

Thin handlers over `memindex.write`: they read the input, call the library and print its
JSON answer; the library's exceptions go up to `main`, which prints them and picks the
exit code.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..config import Config
from ..errors import MemoryFileError, UsageError, WriteError
from ..store.files import parse_json
from ..write import TRANSITIONS, gc, normalize_hash, save_memory, set_status, update_memory
from ._common import AddParser, arg_type, category_option, emit_json, err, lock_option

PATH_HELP = "the memory: decisions/x.json, .claude/memory/decisions/x.json or a file path"
EXAMPLES = {
    "retire": 'memindex retire decisions/celery-beat.json --reason "moved to CronJobs" --replaced-by decisions/k8s-cronjobs.json',
    "archive": 'memindex archive runbooks/restore-legacy-mysql.json --reason "the MySQL cluster is gone"',
    "unarchive": "memindex unarchive runbooks/restore-legacy-mysql.json",
    "restore": "memindex restore decisions/celery-beat.json --json",
}


def register(add: AddParser) -> None:
    save_options(add("save", example="memindex save --category decision --file new.json"))
    update_options(add("update", example="""echo '{"content": {"status": "superseded"}}' | memindex update decisions/use-jwt.json -"""))
    for action in TRANSITIONS:
        lifecycle_options(add(action, example=EXAMPLES[action]), action)
    gc_options(add("gc", example="memindex gc --dry-run"))


# --- argument types and input ---------------------------------------------------------


hash_arg = arg_type(normalize_hash)


def _input_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--file", "-f", metavar="F", help=f"read {what} (JSON) from this file ('-' for stdin)")
    # Claude Code refuses a heredoc of JSON under a `Bash(memindex save:*)` rule ("brace with
    # quote character"), but allows one single-quoted argument: the skills use --data.
    p.add_argument("--data", "-d", metavar="JSON", help=f"{what} as one JSON argument")
    # An option named "-" (not a positional): `update PATH --expect-hash H -` parses.
    p.add_argument("-", dest="stdin", action="store_const", const="-", help=f"read {what} (JSON) from stdin")


def _hash_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expect-hash", type=hash_arg, metavar="SHA256", help="fail with exit 6 unless the file still has this sha256")


def _read_input(args: argparse.Namespace, cfg: Config, what: str = "the memory") -> object:
    """The JSON object from --data JSON, --file F or `-` (stdin)."""
    source = getattr(args, "stdin", None)
    if source is not None and source != "-":
        raise UsageError(f"unexpected argument {source!r}: give --data JSON, --file F, or - to read stdin")
    given = [x for x in (args.data, args.file, source) if x is not None]
    if len(given) > 1:
        raise UsageError("give one of --data JSON, --file F or -, not several")
    if not given:
        raise UsageError(f"give {what} as JSON: --data JSON, --file F, or - to read stdin")
    limit = int(cfg["index.max_file_bytes"]) + 65536
    name = "--data" if args.data is not None else "stdin" if args.file in (None, "-") else args.file
    try:
        if name == "--data":
            raw = args.data.encode("utf-8", "surrogateescape")
        elif name == "stdin":
            raw = sys.stdin.buffer.read(limit + 1)
        else:
            with open(args.file, "rb") as fh:
                raw = fh.read(limit + 1)
    except OSError as exc:
        raise WriteError(f"cannot read {name}: {exc.strerror}") from None
    if len(raw) > limit:
        raise WriteError(f"{name} is larger than {limit} bytes")
    try:
        return parse_json(raw)
    except MemoryFileError as exc:
        raise WriteError(f"{name}: {exc}") from None


def _warn(result: dict[str, Any]) -> None:
    if result.get("warning"):
        err(result["warning"])
    for item in result.get("redacted", ()):
        err(f"redacted {item['kind']} in {item['field']}")


def _report(args: argparse.Namespace, result: dict[str, Any]) -> int:
    _warn(result)
    if not args.quiet:
        emit_json(result)
    return 0


# --- save -----------------------------------------------------------------------------


def _redact_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--redact", action="store_true",
                   help="replace token-shaped strings (keys, tokens, passwords) with [REDACTED:kind] instead of refusing")


def save_options(p: argparse.ArgumentParser) -> None:
    category_option(p)
    _input_options(p, "the memory")
    _redact_option(p)
    lock_option(p)
    p.set_defaults(handler=cmd_save)


def cmd_save(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Create a new memory from JSON (validated, auto-fixed, never overwriting)."""
    data = _read_input(args, cfg)
    return _report(args, save_memory(root, cfg, args.category, data, lock_timeout=args.lock_timeout, redact=args.redact))


# --- update ---------------------------------------------------------------------------


def update_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    _input_options(p, "the changes")
    _redact_option(p)
    _hash_option(p)
    lock_option(p)
    p.set_defaults(handler=cmd_update)


def cmd_update(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Merge changes into an existing memory."""
    patch = _read_input(args, cfg, "the changes")
    result = update_memory(root, cfg, args.path, patch, expect_hash=args.expect_hash, lock_timeout=args.lock_timeout,
                           redact=args.redact)
    return _report(args, result)


# --- retire, archive, unarchive, restore ----------------------------------------------


def lifecycle_options(p: argparse.ArgumentParser, action: str) -> None:
    p.add_argument("path", metavar="PATH", help=PATH_HELP)
    if action in ("retire", "archive"):
        p.add_argument("--reason", metavar="TEXT", help="why (stored in the memory)")
        p.add_argument("--replaced-by", metavar="PATH", help="the memory that holds now (search then offers it instead)")
    _hash_option(p)
    lock_option(p)
    p.set_defaults(handler=cmd_lifecycle, action=action)


def cmd_lifecycle(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Retire, archive, unarchive or restore a memory (`args.action`)."""
    result = set_status(
        root, cfg, args.path, args.action,
        reason=getattr(args, "reason", None),
        replaced_by=getattr(args, "replaced_by", None),
        expect_hash=args.expect_hash,
        lock_timeout=args.lock_timeout,
    )
    return _report(args, result)


# --- gc -------------------------------------------------------------------------------


def gc_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", "-n", action="store_true", help="only print what would be deleted")
    lock_option(p)
    p.set_defaults(handler=cmd_gc)


def cmd_gc(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Delete retired memories past the grace period."""
    result = gc(root, cfg, dry_run=args.dry_run, lock_timeout=args.lock_timeout)
    _warn(result)
    if args.json:
        emit_json(result)
        return 0
    if args.quiet:
        return 0
    verb = "would delete" if args.dry_run else "deleted"
    for item in result["deleted"]:
        why = f": {item['retired_reason']}" if item.get("retired_reason") else ""
        print(f"{verb} {item['path']} (retired {item['retired_at'][:10]}, {item['age_days']} days ago{why})")
    for temp in result["temp_files"]:
        print(f"{verb} stale temp file {temp}")
    for item in result["skipped"]:
        err(f"{item['path']}: {item['reason']}; not deleted")
    count = len(result["deleted"])
    print(
        f"gc: {count} retired memor{'y' if count == 1 else 'ies'} {'to delete' if args.dry_run else 'deleted'} "
        f"(grace period {result['grace_period_days']} days)" + (", dry run: nothing deleted" if args.dry_run else "")
    )
    return 0
