"""What a write changes in an existing memory: an update merged in, a lifecycle step.

Pure functions on parsed memories (no files, no lock): `merge_update` for `update`,
`transition` for retire/archive/unarchive/restore. Both stamp `updated_at` and append to
the `changes` history.
"""

from __future__ import annotations

import copy
import os
from datetime import datetime, timedelta
from typing import Any

from ..defaults import IMMUTABLE, LIFECYCLE_FIELDS, MANAGED, MAX_CHANGES, SCHEMA_VERSION, STAMP_FUTURE_SLACK_S
from ..errors import InvalidMemory, MemoryFileError, WriteError
from ..store.files import parse_json, read_bytes
from .locate import display
from .validate import check_confidence, check_questions, check_tags, check_title, clean_reason, iso, ordered, parse_utc

# action -> (allowed current statuses, new status)
TRANSITIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "retire": (("active", "archived"), "retired"),
    "archive": (("active",), "archived"),
    "unarchive": (("archived",), "active"),
    "restore": (("retired",), "active"),
}


def append_change(mem: dict[str, Any], date: str, summary: str) -> None:
    """Add one entry to `changes`, keeping the last MAX_CHANGES."""
    changes = mem.get("changes")
    if not isinstance(changes, list):
        changes = []
    changes = [c for c in changes if isinstance(c, dict)]
    changes.append({"date": date, "summary": summary})
    mem["changes"] = changes[-MAX_CHANGES:]


def fill_defaults(mem: dict[str, Any], category: str) -> None:
    """Safe defaults for an existing file written by hand or by an older tool."""
    mem.setdefault("schema_version", SCHEMA_VERSION)
    mem.setdefault("category", category)
    mem.setdefault("record_status", "active")
    mem.setdefault("related_files", [])
    if not isinstance(mem.get("changes"), list):
        mem["changes"] = []
    times = mem.get("times_updated")
    if isinstance(times, bool) or not isinstance(times, int) or times < 0:
        mem["times_updated"] = 0
    for key in LIFECYCLE_FIELDS:
        mem.setdefault(key, None)


def merge_update(
    current: dict[str, Any], patch: object, category: str, now: datetime
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Apply an update to a parsed memory: (new memory, changed fields, fixes). Raises
    InvalidMemory listing every problem. Nothing is changed when nothing differs."""
    if not isinstance(patch, dict):
        raise InvalidMemory(f"the update must be a JSON object, got {type(patch).__name__}")
    patch = copy.deepcopy(patch)
    problems: list[str] = []
    fixes: list[str] = []
    summary: str | None = None
    try:
        summary = clean_reason(patch.pop("change_summary", None), "'change_summary'")
    except InvalidMemory as exc:
        problems.append(str(exc))
    mem = copy.deepcopy(current)
    fill_defaults(mem, category)
    changed: list[str] = []

    for key in IMMUTABLE:
        if key in patch and patch.pop(key) != current.get(key):
            problems.append(f"'{key}' cannot be changed (the memory has {current.get(key)!r})")
    for key in MANAGED:
        if key in patch and patch.pop(key) != current.get(key):
            hint = " (use memindex retire/archive/unarchive/restore)" if key in ("record_status", *LIFECYCLE_FIELDS) else ""
            problems.append(f"'{key}' is managed by memindex and cannot be set by an update{hint}")

    if "content" in patch:
        content = patch.pop("content")
        if not isinstance(content, dict):
            problems.append(f"'content' must be an object, got {type(content).__name__}")
        else:
            merged = dict(mem["content"]) if isinstance(mem.get("content"), dict) else {}
            for key, value in content.items():
                if value is None:
                    if key in merged:
                        del merged[key]
                        changed.append(f"content.{key}")
                elif merged.get(key) != value:
                    merged[key] = value
                    changed.append(f"content.{key}")
            mem["content"] = merged
    if "title" in patch:
        title = check_title(patch.pop("title"), problems)
        if title is not None and title != mem.get("title"):
            mem["title"] = title
            changed.append("title")
    if "tags" in patch:
        tags = check_tags(patch.pop("tags"), problems, fixes)
        if tags is not None and tags != mem.get("tags"):
            mem["tags"] = tags
            changed.append("tags")
    if "questions" in patch:
        raw = patch.pop("questions")
        questions = [] if raw is None else check_questions(raw, problems, fixes)
        if questions is not None and questions != mem.get("questions", []):
            if questions:
                mem["questions"] = questions
            else:
                mem.pop("questions", None)
            changed.append("questions")
    if "confidence" in patch:
        conf = check_confidence(patch.pop("confidence"), problems, fixes)
        if conf is not None and conf != mem.get("confidence"):
            mem["confidence"] = conf
            changed.append("confidence")
    if "related_files" in patch:
        related = patch.pop("related_files")
        if isinstance(related, str):
            related = [related]
        if related != mem.get("related_files"):
            mem["related_files"] = related
            changed.append("related_files")
    for key, value in patch.items():  # any other top-level field: replaced
        if mem.get(key) != value or key not in mem:
            mem[key] = value
            changed.append(key)
    if problems:
        raise InvalidMemory(f"invalid update of a {category} memory", problems)
    if not changed:
        return mem, [], fixes

    stamp = now
    created = parse_utc(mem.get("created_at"))
    if created is not None and created > now + timedelta(seconds=STAMP_FUTURE_SLACK_S):
        fixes.append(f"created_at: {mem.get('created_at')!r} is in the future -> now")
        mem["created_at"], created = iso(now), now
    if created is not None and created > stamp:
        stamp = created
    mem["updated_at"] = iso(stamp)
    mem["times_updated"] = int(mem.get("times_updated") or 0) + 1
    append_change(mem, iso(stamp), summary or "Updated " + ", ".join(changed))
    return ordered(mem), changed, fixes


def transition(
    current: dict[str, Any], action: str, category: str, reason: str | None, stamp: str, shown: str
) -> dict[str, Any]:
    """The memory after a lifecycle action (a TRANSITIONS key): the new record_status, the
    *_at/*_reason fields set or cleared, the change recorded. Raises WriteError when the
    memory's status does not allow the action (`shown` names it in the message)."""
    allowed, new_status = TRANSITIONS[action]
    status = current.get("record_status", "active")
    if status not in allowed:
        verb = {"retired": "restore", "archived": "unarchive"}.get(status, "")
        hint = f" (use `memindex {verb}` first)" if verb and action != verb else ""
        raise WriteError(
            f"cannot {action} {shown}: it is {status!r}, "
            f"{action} needs {' or '.join(repr(s) for s in allowed)}{hint}"
        )
    mem = copy.deepcopy(current)
    fill_defaults(mem, category)
    mem["record_status"] = new_status
    if new_status == "retired":
        mem.update(retired_at=stamp, retired_reason=reason, archived_at=None, archived_reason=None)
    elif new_status == "archived":
        mem.update(archived_at=stamp, archived_reason=reason)
    else:
        mem.update(retired_at=None, retired_reason=None, archived_at=None, archived_reason=None)
    created, now = parse_utc(mem.get("created_at")), parse_utc(stamp)
    if created is not None and now is not None and created > now + timedelta(seconds=STAMP_FUTURE_SLACK_S):
        mem["created_at"], created = stamp, None  # dated in the future (a hand-written file): now
    mem["updated_at"] = max(stamp, iso(created)) if created else stamp
    label = {"retire": "Retired", "archive": "Archived", "unarchive": "Unarchived", "restore": "Restored"}[action]
    append_change(mem, stamp, f"{label}: {reason}" if reason else label)
    return mem


def read_current(root: str, rel: str, cfg) -> dict[str, Any] | None:
    """The memory at `rel` as it is on disk, or None when there is none; WriteError for a
    file that is there but is no memory (an importer or capture never overwrites it)."""
    if not os.path.lexists(os.path.join(root, rel)):
        return None
    try:
        data, _ = read_bytes(root, rel, int(cfg["index.max_file_bytes"]))
        parsed = parse_json(data)
    except MemoryFileError as exc:
        raise WriteError(f"{display(root, rel)} is in the way and is not a readable memory ({exc})") from None
    if not isinstance(parsed, dict):
        raise WriteError(f"{display(root, rel)} is in the way and is not a memory")
    return parsed


def replacing(current: dict[str, Any], data: dict[str, Any], summary: str) -> dict[str, Any]:
    """The update that makes `current` what `data` says (a source re-imported, a session
    captured again): content replaced whole (a key gone from `data` goes), every other
    field `data` has replaced; id, category and creation kept."""
    patch = {k: v for k, v in data.items() if k not in ("created_at", "updated_at", "id", "category")}
    content = dict(data.get("content") or {})
    old = current.get("content")
    if isinstance(old, dict):
        content = {**{k: None for k in old if k not in content}, **content}
    patch["content"] = content
    patch["change_summary"] = summary
    return patch

