"""The write operations: save, update, retire/archive/unarchive/restore, gc.

Every one runs in a `write_transaction`: it takes `sync.writer_lock`, writes files
atomically in their category folder (a hidden temp file `.NAME.PID.RAND.tmp` in the same
folder, fsync, then `os.link` for a new file, which never overwrites, or `os.replace` for
an existing one), and indexes just the files it wrote with `sync.sync_files_locked` (which
also regenerates index.md). A crash leaves at most a hidden temp file, which the walk never
indexes and `gc` removes after an hour.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .. import index
from ..config import Config
from ..defaults import CATEGORY_FOLDER, FOLDERS, TEMP_MAX_AGE_S
from ..errors import (
    HashConflict,
    IndexUnavailable,
    InvalidMemory,
    MemoryExists,
    MemoryFileError,
    MemoryNotFound,
    UsageError,
    WriteError,
)
from ..store import rootfs
from ..store.atomic import create_exclusive, fsync_dir, replace_atomic, unlink_quietly
from ..store.paths import display_prefix, inside
from ..store.schema import validate_memory
from ..store.files import parse_json, read_bytes, walk
from ..index.sync import sync_files_locked, writer_lock
from .locate import display, resolve_path
from .records import TRANSITIONS, merge_update, transition
from ..store.secrets import scrub
from .validate import (
    clean_reason,
    iso,
    normalize_category,
    normalize_hash,
    parse_utc,
    prepare_new,
    serialize,
    sha256_hex,
    utc_now,
)

# action -> the `status` of its answer
_DONE = {"retire": "retired", "archive": "archived", "unarchive": "unarchived", "restore": "restored"}


# --- the one write transaction --------------------------------------------------------


class WriteTransaction:
    """What a write may do while it holds the writer lock (see `write_transaction`):
    read a memory as it is now, create, replace or delete files atomically, then `commit`
    the answer, which indexes exactly the files written."""

    def __init__(self, root: Path, cfg: Config, folders_before: dict[str, int]) -> None:
        self.root = root
        self.cfg = cfg
        self.written: list[str] = []  # relative paths created, replaced or deleted
        self._before = folders_before  # keeps a fresh index fresh after our own write
        self._deleted = False

    def read(self, rel: str, expect_hash: str | None = None) -> tuple[bytes, dict[str, Any]]:
        """The memory file (bytes, parsed object); HashConflict if `expect_hash` is given
        and the file no longer has it."""
        root, shown = self.root, display(self.root, rel)
        path = os.path.join(root, rel)
        if os.path.islink(path):
            raise WriteError(f"{shown} is a symbolic link; memindex does not write through links")
        try:
            data, _ = read_bytes(root, rel, int(self.cfg["index.max_file_bytes"]))
        except MemoryFileError as exc:
            if not os.path.lexists(path):
                raise MemoryNotFound(f"no memory at {shown}") from None
            raise WriteError(f"cannot read {shown}: {exc}") from None
        try:
            parsed = parse_json(data)
        except MemoryFileError as exc:
            raise WriteError(f"{shown} is not a valid memory file ({exc}); fix or remove it by hand") from None
        if not isinstance(parsed, dict):
            raise WriteError(f"{shown} is not a memory (top level is {type(parsed).__name__})")
        expected = FOLDERS[rel.split("/")[0]]
        if parsed.get("category") not in (None, expected):
            raise WriteError(
                f"{shown} says category {parsed.get('category')!r} but lies in the "
                f"{CATEGORY_FOLDER[expected]}/ folder; fix it by hand"
            )
        if expect_hash is not None:
            want, have = normalize_hash(expect_hash), sha256_hex(data)
            if want != have:
                raise HashConflict(
                    f"{shown} changed since it was read (expected sha256 {want}, the file now has {have}); "
                    "read it again, then redo the update"
                )
        return data, parsed

    def create(self, rel: str, blob: bytes) -> str:
        """Write a new memory file (creating its folder); never overwrites. Its sha256."""
        folder, name = rel.split("/")
        directory = os.path.join(self.root, folder)
        if os.path.lexists(directory) and not os.path.isdir(directory):
            raise WriteError(f"{display(self.root, folder)} is not a folder")
        rootfs.make_folders(directory)  # 0755 whatever the umask: sync refuses a folder every user may write in
        root_real = os.path.realpath(self.root)
        if not inside(os.path.realpath(directory), root_real) or os.path.realpath(directory) == root_real:
            raise WriteError(f"the {folder}/ folder is a link that leaves the memory root; not writing there")
        from ..store.files import folder_refusal

        refused = folder_refusal(self.root, folder)
        if refused:  # another user could change or replace what is written there: sync would not index it
            raise WriteError(f"{display(self.root, folder)}/: {refused}; fix its owner or mode first")
        try:
            create_exclusive(os.path.join(os.path.realpath(directory), name), blob)
        except FileExistsError:
            shown = display(self.root, rel)
            raise MemoryExists(
                f"a memory already exists at {shown}: update it with "
                f"`memindex update {shown} --file F`, or choose another 'id'"
            ) from None
        self.written.append(rel)
        return sha256_hex(blob)

    def replace(self, rel: str, blob: bytes) -> str:
        """Replace an existing memory file atomically. Its sha256."""
        replace_atomic(os.path.join(self.root, rel), blob)
        self.written.append(rel)
        return sha256_hex(blob)

    def delete(self, rels: Iterable[str]) -> None:
        """Delete memory files (the folder is fsynced at commit)."""
        for rel in rels:
            unlink_quietly(os.path.join(self.root, rel))
            self.written.append(rel)
            self._deleted = True

    def answer(self, status: str, rel: str, mem_id: object, **more: Any) -> dict[str, Any]:
        """The answer of a one-memory write: {status, path, id, category, **more}."""
        return {"status": status, "path": display(self.root, rel), "id": mem_id, "category": FOLDERS[rel.split("/")[0]], **more}

    def commit(self, result: dict[str, Any]) -> dict[str, Any]:
        """Index the files written (if any) and add `indexed` (and a `warning`) to `result`.
        The files are already written: an index that cannot be updated is reported, not
        fatal (the next sync catches up)."""
        rels = self.written
        if not rels:
            return result
        if self._deleted:
            fsync_dir(str(self.root))
        try:
            report = sync_files_locked(self.root, self.cfg, rels, folders_before=self._before)
        except (IndexUnavailable, sqlite3.Error, OSError) as exc:
            result["indexed"] = False
            result["warning"] = f"file written but the index was not updated: {exc}; run `memindex sync`"
            return result
        result["indexed"] = not any(r in report.problems for r in rels)
        for rel in rels:
            if rel in report.problems:
                result["warning"] = f"file written but not indexable: {report.problems[rel]}"
        return result


@contextmanager
def write_transaction(root: Path, cfg: Config, lock_timeout: float | None) -> Iterator[WriteTransaction]:
    """Hold the writer lock (`lock_timeout` seconds at most, default index.lock_timeout_s;
    sync.LockTimeout past it) for one write; the folder mtimes are noted first."""
    timeout = float(cfg["index.lock_timeout_s"] if lock_timeout is None else lock_timeout)
    with writer_lock(root, timeout):
        yield WriteTransaction(root, cfg, index.folder_mtimes(root))


# --- save, update, lifecycle ----------------------------------------------------------


def save_memory(
    root: str | os.PathLike[str],
    cfg: Config,
    category: str | None,
    data: object,
    *,
    now: datetime | None = None,
    lock_timeout: float | None = None, redact: bool = False,
) -> dict[str, Any]:
    """Create a new memory; never overwrites. `category` None takes the memory's own
    `category` field. Returns {status, path, id, sha256, fixes, indexed, [redacted]}. Raises
    InvalidMemory (SecretFound unless `redact`), MemoryExists, WriteError, or LockTimeout."""
    root = Path(root)
    rel, mem, blob, fixes, redacted = _new_file(cfg, _category_of(category, data), data, now, redact=redact)
    with write_transaction(root, cfg, lock_timeout) as txn:
        sha = txn.create(rel, blob)
        return txn.commit(txn.answer("created", rel, mem["id"], sha256=sha, fixes=fixes, **redacted))


def _category_of(category: str | None, data: object) -> str:
    """The category given, else the memory's own `category` field, normalised."""
    if category is None:
        category = data.get("category") if isinstance(data, dict) else None
        if not isinstance(category, str):
            raise UsageError("give the category (or a 'category' field in the memory)")
    return normalize_category(category)


def save_new(
    root: str | os.PathLike[str],
    cfg: Config,
    category: str | None,
    data: object,
    *,
    new_topic: bool = False,
    lock_timeout: float | None = None, redact: bool = False,
) -> dict[str, Any]:
    """Save through the candidate flow (what the memory-save skill has the model do in
    two steps): when an active memory of the category already holds the topic (candidate
    UPDATE, UPDATE_OR_DELETE or NOOP), nothing is written and the answer is
    {status: "not_saved", candidate: <find_candidate's answer>}, naming the memory to
    update and its sha256. `new_topic` saves anyway: the caller read the candidate and it
    is another subject."""
    from .candidate import find_candidate, memory_text

    category = _category_of(category, data)
    if not new_topic:
        text = memory_text(category, data)
        answer = find_candidate(root, cfg, category, text) if text.strip() else None
        if answer is not None and answer["recommendation"] != "CREATE":
            return {"status": "not_saved", "candidate": answer}
    return save_memory(root, cfg, category, data, lock_timeout=lock_timeout, redact=redact)


def _new_file(
    cfg: Config, category: str, data: object, now: datetime | None, folder: str | None = None, redact: bool = False
) -> tuple[str, dict[str, Any], bytes, list[str], dict]:
    """A new memory (secrets.scrub first) as (path in the root, memory, bytes, fixes,
    {redacted}). `folder`: another folder of the category (captured sessions), not its first."""
    category = normalize_category(category)
    if folder is not None and FOLDERS.get(folder) != category:
        raise UsageError(f"{folder}/ is not a folder of {category} memories")
    data, redacted = scrub(data, redact)  # before the id is derived from the title
    mem, fixes = prepare_new(category, data, now=now, max_bytes=int(cfg["index.max_file_bytes"]))
    return f"{folder or CATEGORY_FOLDER[category]}/{mem['id']}.json", mem, serialize(mem), fixes, redacted


def _existing(root: str | os.PathLike[str], path: str, cwd: str | None, expect_hash: str | None) -> tuple[Path, str, str]:
    """(root, the memory's path in it, its category) for a change to an existing memory;
    a malformed --expect-hash is refused before anything is read."""
    if expect_hash is not None:
        normalize_hash(expect_hash)
    rel = resolve_path(Path(root), path, cwd)
    return Path(root), rel, FOLDERS[rel.split("/")[0]]


def update_memory(
    root: str | os.PathLike[str],
    cfg: Config,
    path: str,
    patch: object,
    *,
    expect_hash: str | None = None,
    now: datetime | None = None,
    lock_timeout: float | None = None,
    cwd: str | None = None, redact: bool = False,
) -> dict[str, Any]:
    """Merge `patch` into an existing memory. Returns {status: updated|unchanged, path, id, sha256,
    times_updated, changed, [redacted]}. Raises HashConflict (--expect-hash), SecretFound (unless `redact`)."""
    root, rel, category = _existing(root, path, cwd, expect_hash)
    with write_transaction(root, cfg, lock_timeout) as txn:
        answer = _update_in(txn, rel, category, patch, expect_hash, now, redact)
        return txn.commit(answer) if answer["status"] == "updated" else answer


def _update_in(
    txn: WriteTransaction, rel: str, category: str, patch: object, expect_hash: str | None, now: datetime | None,
    redact: bool = False,
) -> dict[str, Any]:
    """One update inside a write transaction (secrets.scrub first): the answer (the file
    replaced when changed)."""
    patch, redacted = scrub(patch, redact)
    data, current = txn.read(rel, expect_hash)
    mem, changed, fixes = merge_update(current, patch, category, now or utc_now())
    if not changed:
        return txn.answer(
            "unchanged", rel, mem.get("id"), sha256=sha256_hex(data), times_updated=mem.get("times_updated"), changed=[]
        )
    problems = validate_memory(mem, rel)
    blob = serialize(mem)
    if not problems and len(blob) > int(txn.cfg["index.max_file_bytes"]):
        problems.append(f"the memory would be {len(blob)} bytes, over the index.max_file_bytes limit")
    if problems:
        raise InvalidMemory(f"the updated {category} memory would be invalid", problems)
    sha = txn.replace(rel, blob)
    return txn.answer(
        "updated", rel, mem.get("id"), sha256=sha, times_updated=mem["times_updated"], changed=changed, fixes=fixes,
        **redacted,
    )


def set_status(
    root: str | os.PathLike[str],
    cfg: Config,
    path: str,
    action: str,
    *,
    reason: str | None = None,
    replaced_by: str | None = None,
    expect_hash: str | None = None,
    now: datetime | None = None,
    lock_timeout: float | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """retire (active|archived -> retired), archive (active -> archived), unarchive
    (archived -> active), restore (retired -> active); sets or clears the *_at/*_reason
    fields and records the change. `replaced_by` names the memory that holds now, in the
    reason: search and the hook then offer it where the retired one would have matched."""
    if action not in TRANSITIONS:
        raise UsageError(f"unknown action {action!r}")
    reason = clean_reason(scrub(reason, redact=True)[0] if reason is not None else None, "the reason")
    root, rel, category = _existing(root, path, cwd, expect_hash)
    if replaced_by is not None:
        successor = resolve_path(root, replaced_by, cwd)
        if not os.path.isfile(os.path.join(root, successor)):
            raise MemoryNotFound(f"no memory at {display(root, successor)} to name as the replacement")
        if successor == rel:
            raise UsageError("a memory cannot replace itself")
        note = f"replaced by {successor[: -len('.json')]}"
        reason = f"{reason} ({note})" if reason else note[0].upper() + note[1:]
    stamp = iso(now or utc_now())
    with write_transaction(root, cfg, lock_timeout) as txn:
        _, current = txn.read(rel, expect_hash)
        mem = transition(current, action, category, reason, stamp, display(root, rel))
        sha = txn.replace(rel, serialize(mem))
        return txn.commit(txn.answer(_DONE[action], rel, mem.get("id"), record_status=mem["record_status"], sha256=sha))


# --- gc -------------------------------------------------------------------------------


def grace_period_days(cfg: Config) -> tuple[int, str | None]:
    """`delete.grace_period_days`, checked again by the settings table: a Config built by
    hand may hold anything (a string, a negative or fractional number falls back to 30)."""
    from ..settings import BY_NAME

    setting = BY_NAME["delete.grace_period_days"]
    value, warning = setting.check(cfg.values.get(setting.name, setting.default))
    return int(value), (f"{setting.name}: {warning}; using {setting.default}" if warning else None)  # type: ignore[call-overload]


def _expired(root: Path, cfg: Config, now: datetime, cutoff: datetime) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Retired memories retired at or before `cutoff`, and retired ones without a date."""
    deleted: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for rel in sorted(walk(root)):
        try:
            data, _ = read_bytes(root, rel, int(cfg["index.max_file_bytes"]))
            mem = parse_json(data)
        except MemoryFileError:
            continue
        if not isinstance(mem, dict) or mem.get("record_status") != "retired":
            continue
        retired = parse_utc(mem.get("retired_at"))
        if retired is None:
            skipped.append({"path": display(root, rel), "reason": "retired but 'retired_at' is missing or not a timestamp"})
            continue
        if retired <= cutoff:
            deleted.append({
                "path": display(root, rel),
                "id": mem.get("id"),
                "retired_at": iso(retired),
                "retired_reason": mem.get("retired_reason"),
                "age_days": (now - retired).days,
            })
    return deleted, skipped


def _stale_temps(root: Path) -> list[str]:
    """Crashed writers' hidden temp files older than TEMP_MAX_AGE_S, as relative paths."""
    temps: list[str] = []
    now_s = time.time()
    for folder in FOLDERS:
        try:
            entries = list(os.scandir(os.path.join(root, folder)))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                try:
                    old = now_s - entry.stat(follow_symlinks=False).st_mtime > TEMP_MAX_AGE_S
                except OSError:
                    continue
                if old:
                    temps.append(f"{folder}/{entry.name}")
    return temps


def gc(
    root: str | os.PathLike[str],
    cfg: Config,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    lock_timeout: float | None = None,
) -> dict[str, Any]:
    """Delete retired memories whose retired_at is at least `delete.grace_period_days`
    old (and crashed writers' temp files older than an hour); `dry_run` only reports."""
    root = Path(root)
    now = now or utc_now()
    days, warning = grace_period_days(cfg)
    warnings = [w for w in cfg.warnings if w.startswith("delete.")]
    if warning:
        warnings.append(warning)
    with write_transaction(root, cfg, lock_timeout) as txn:
        deleted, skipped = _expired(root, cfg, now, now - timedelta(days=days))
        temps = _stale_temps(root)
        result: dict[str, Any] = {
            "dry_run": dry_run,
            "grace_period_days": days,
            "deleted": deleted,
            "skipped": skipped,
            "temp_files": [display(root, t) for t in temps],
            "warnings": warnings,
        }
        if dry_run:
            return result
        prefix = display_prefix(root)
        txn.delete(d["path"][len(prefix):] for d in deleted)
        for rel in temps:
            unlink_quietly(os.path.join(root, rel))
        return txn.commit(result)
