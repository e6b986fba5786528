"""Input normalisation: what a caller gives becomes a valid memory, or every problem is named.

Fields are cleaned (titles, tags, confidence, reasons, timestamps), small mistakes are
fixed and reported as `fixes`, everything else is refused with `InvalidMemory` listing all
problems at once. `serialize` is the one way a memory becomes file bytes.
"""

from __future__ import annotations

from ..store.ids import slugify  # noqa: F401  (the write path's ids; re-exported)

import copy
import hashlib
import json
import math
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from typing import Any

from ..defaults import (
    CATEGORIES,
    CATEGORY_FOLDER,
    FOLDERS,
    ID_MAX,
    KEY_ORDER,
    LIFECYCLE_FIELDS,
    MAX_REASON,
    QUESTION_MAX_CHARS,
    QUESTIONS_MAX,
    SCHEMA_VERSION,
    STAMP_FUTURE_SLACK_S,
    TAGS_MAX,
    TITLE_MAX,
)
from ..errors import InvalidMemory, UsageError
from ..store.schema import SLUG_PATTERN, validate_memory
from ..text.words import sanitize_tag, sanitize_title

# --- time, hashes, bytes --------------------------------------------------------------


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def iso(dt: datetime) -> str:
    """ISO 8601 UTC, second precision: 2026-03-14T09:12:00Z."""
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(value: object) -> datetime | None:
    """A timezone-aware ISO 8601 timestamp as UTC, or None (naive times are ambiguous)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
        if dt.tzinfo is None:
            return None
        return dt.astimezone(timezone.utc)
    except (ValueError, OverflowError):  # 0001-01-01T00:00:00+01:00 has no UTC time
        return None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalize_hash(value: str) -> str:
    """An --expect-hash value (`sha256:` prefix and upper case allowed) as 64 hex digits."""
    text = value.strip().lower()
    text = text.removeprefix("sha256:")
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise UsageError(f"--expect-hash must be a sha256 hex digest (64 hex digits), got {value!r}")
    return text


def ordered(data: dict[str, Any]) -> dict[str, Any]:
    """The memory with its keys in KEY_ORDER, unknown keys after them as they came."""
    out = {k: data[k] for k in KEY_ORDER if k in data}
    out.update((k, v) for k, v in data.items() if k not in out)
    return out


def serialize(data: dict[str, Any]) -> bytes:
    return (json.dumps(ordered(data), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


# --- single fields --------------------------------------------------------------------


def normalize_category(value: str) -> str:
    """A category, or its folder name, as the category."""
    if value in CATEGORIES:
        return value
    if value in FOLDERS:
        return FOLDERS[value]
    raise UsageError(f"unknown category {value!r} (expected one of {', '.join(CATEGORIES)})")


_MEMORY_CONTEXT_TAG = re.compile(r"<\s*/?\s*memory-context\b[^>]*>?", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def clean_title(raw: object) -> str:
    """The title as stored: `text.sanitize_title` (NFC, no control/format/BiDi/zero-width
    characters, no ` -> `, `#tags:`, `[confidence:...]`), minus combining marks left over
    after NFC (Mn: "Zalgo" stacks) and the hook block's own `<memory-context>` tag. Never
    truncated: the caller rejects titles over TITLE_MAX."""
    if not isinstance(raw, str):
        return ""
    text = sanitize_title(_MEMORY_CONTEXT_TAG.sub(" ", raw), limit=max(TITLE_MAX, len(raw) + 1))
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
    text = _MEMORY_CONTEXT_TAG.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def clean_reason(raw: object, what: str) -> str | None:
    """A free-text reason or change summary: one line, no control characters, <= 500."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise InvalidMemory(f"{what} must be a string, got {type(raw).__name__}")
    text = sanitize_title(raw, limit=max(MAX_REASON, len(raw) + 1))
    if len(text) > MAX_REASON:
        raise InvalidMemory(f"{what} is {len(text)} characters; the limit is {MAX_REASON}")
    return text or None


def check_title(raw: object, problems: list[str]) -> str | None:
    """The cleaned title, or None with the problem appended."""
    if raw is None:
        problems.append("missing field 'title'")
        return None
    if not isinstance(raw, str):
        problems.append(f"'title' must be a string, got {type(raw).__name__}")
        return None
    title = clean_title(raw)
    if not title:
        problems.append("'title' is empty (after removing control and formatting characters)")
        return None
    if len(title) > TITLE_MAX:
        problems.append(
            f"'title' is {len(title)} characters; the limit is {TITLE_MAX} "
            "(it is not truncated: write a shorter title and put the details in content)"
        )
        return None
    return title


def check_tags(raw: object, problems: list[str], fixes: list[str]) -> list[str] | None:
    """The cleaned tags (a comma-separated string is split), or None with the problem."""
    if raw is None:
        problems.append(f"missing field 'tags' (1 to {TAGS_MAX} short lowercase keywords)")
        return None
    if isinstance(raw, str):
        raw = [t for t in raw.split(",")]
        fixes.append("tags: split a comma-separated string into a list")
    if not isinstance(raw, list):
        problems.append(f"'tags' must be a list of strings, got {type(raw).__name__}")
        return None
    tags: list[str] = []
    for i, tag in enumerate(raw):
        if not isinstance(tag, str):
            problems.append(f"'tags[{i}]' must be a string, got {type(tag).__name__}")
            continue
        clean = sanitize_tag(tag)
        if clean != tag:
            fixes.append(f"tags: {tag!r} -> {clean!r}" if clean else f"tags: dropped {tag!r} (nothing left after cleaning)")
        if clean and clean not in tags:
            tags.append(clean)
        elif clean:
            fixes.append(f"tags: dropped duplicate {clean!r}")
    if len(tags) > TAGS_MAX:
        fixes.append(f"tags: kept the first {TAGS_MAX} of {len(tags)}")
        tags = tags[:TAGS_MAX]
    if not tags and not any(p.startswith("'tags[") for p in problems):
        problems.append(f"'tags' has no usable tag (1 to {TAGS_MAX} short lowercase keywords)")
        return None
    return tags


def check_questions(raw: object, problems: list[str], fixes: list[str]) -> list[str] | None:
    """The cleaned `questions` (each one line, no control characters; a lone string is
    wrapped, blanks and duplicates dropped), or None with the problem appended. Over the
    bounds is refused, never cut: the model rewrites them shorter."""
    if isinstance(raw, str):
        raw = [raw]
        fixes.append("questions: wrapped a string in a list")
    if not isinstance(raw, list):
        problems.append(f"'questions' must be a list of strings, got {type(raw).__name__}")
        return None
    out: list[str] = []
    for i, item in enumerate(raw):
        if not isinstance(item, str):
            problems.append(f"'questions[{i}]' must be a string, got {type(item).__name__}")
            continue
        text = clean_title(item)
        if len(text) > QUESTION_MAX_CHARS:
            problems.append(f"'questions[{i}]' is {len(text)} characters; the limit is {QUESTION_MAX_CHARS} (one short question)")
        elif not text:
            fixes.append(f"questions: dropped the empty item {i}")
        elif text in out:
            fixes.append(f"questions: dropped duplicate {text!r}")
        else:
            if text != item:
                fixes.append(f"questions: cleaned item {i}")
            out.append(text)
    if len(out) > QUESTIONS_MAX:
        problems.append(f"'questions' has {len(out)} items; the limit is {QUESTIONS_MAX} (keep the 3-5 that differ most)")
    if any(p.startswith(("'questions[", "'questions' has")) for p in problems):
        return None
    return out


def check_confidence(raw: object, problems: list[str], fixes: list[str]) -> float | None:
    """The confidence clamped to 0..1, or None with the problem appended."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        problems.append(f"'confidence' must be a number between 0 and 1, got {raw!r}")
        return None
    clamped = min(max(float(raw), 0.0), 1.0)
    if clamped != raw:
        fixes.append(f"confidence: clamped {raw!r} to {clamped:g}")
    return clamped


def _schema_problems(data: dict[str, Any], rel: str, already: list[str]) -> list[str]:
    """validate_memory's sentences, minus those about a field already reported."""
    reported = set(re.findall(r"'([a-z_]+)'", " ".join(already)))
    out = []
    for problem in validate_memory(data, rel):
        named = re.findall(r"'([a-z_]+)", problem)
        if named and named[0] in reported:
            continue
        if "id" in reported and problem.startswith("id "):
            continue
        out.append(problem)
    return out


# --- a whole new memory ---------------------------------------------------------------


def prepare_new(
    category: str, data: object, *, now: datetime | None = None, max_bytes: int | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Validate and auto-fix a (possibly partial) new memory: returns (memory, fixes made),
    or raises InvalidMemory listing every problem."""
    category = normalize_category(category)
    now = now or utc_now()
    if not isinstance(data, dict):
        raise InvalidMemory(f"the input must be a JSON object, got {type(data).__name__}")
    mem: dict[str, Any] = copy.deepcopy(data)
    mem.pop("change_summary", None)
    problems: list[str] = []
    fixes: list[str] = []

    given_cat = mem.get("category")
    if given_cat is None:
        mem["category"] = category
    elif given_cat != category:
        problems.append(f"'category' is {given_cat!r} but --category is {category!r}")
    version = mem.get("schema_version")
    if version is None:
        mem["schema_version"] = SCHEMA_VERSION
    elif version != SCHEMA_VERSION:
        if version in (1, 1.0, "1"):
            mem["schema_version"] = SCHEMA_VERSION
            fixes.append(f"schema_version: {version!r} -> {SCHEMA_VERSION!r}")
        else:
            problems.append(f"'schema_version' {version!r} is not supported (this memindex writes {SCHEMA_VERSION!r})")

    title = check_title(mem.get("title"), problems)
    if title is not None:
        if title != mem.get("title"):
            fixes.append("title: removed control, formatting or index-markup characters")
        mem["title"] = title

    mem_id = mem.get("id")
    if mem_id in (None, ""):
        if title is not None:
            mem_id = slugify(title)
            if mem_id:
                mem["id"] = mem_id
                fixes.append(f"id: derived {mem_id!r} from the title")
            else:
                problems.append("'id' is missing and the title has no ASCII letters or digits to make one: give an 'id'")
    elif not isinstance(mem_id, str) or not re.match(SLUG_PATTERN, mem_id) or len(mem_id) > ID_MAX:
        hint = slugify(mem_id) if isinstance(mem_id, str) else ""
        problems.append(
            f"'id' must be a lowercase slug of at most {ID_MAX} characters ([a-z0-9] words joined by '-'), got {mem_id!r}"
            + (f" (try {hint!r})" if hint else "")
        )

    tags = check_tags(mem.get("tags"), problems, fixes)
    if tags is not None:
        mem["tags"] = tags

    if "questions" in mem:
        questions = check_questions(mem.pop("questions"), problems, fixes)
        if questions:  # refused or empty: not written (the problem is reported once)
            mem["questions"] = questions
    if "confidence" in mem:
        conf = check_confidence(mem["confidence"], problems, fixes)
        if conf is not None:
            mem["confidence"] = conf
    related = mem.get("related_files")
    if related is None:
        mem["related_files"] = []
    elif isinstance(related, str):
        mem["related_files"] = [related]
        fixes.append("related_files: wrapped a string in a list")

    created = mem.get("created_at")
    if created is None:
        created_dt = now
    else:
        created_dt = parse_utc(created)
        if created_dt is None:
            problems.append(f"'created_at' is not an ISO 8601 timestamp with a timezone: {created!r}")
        elif created_dt > now + timedelta(seconds=STAMP_FUTURE_SLACK_S):
            problems.append(f"'created_at' is in the future: {created!r}")
            created_dt = None
    if created_dt is not None:
        mem["created_at"] = iso(created_dt)
    updated = mem.get("updated_at")
    updated_dt = parse_utc(updated) if updated is not None else None
    if updated is not None and updated_dt is None:
        problems.append(f"'updated_at' is not an ISO 8601 timestamp with a timezone: {updated!r}")
    elif created_dt is not None:
        if updated_dt is None or updated_dt < created_dt or updated_dt > now + timedelta(seconds=STAMP_FUTURE_SLACK_S):
            if updated is not None:
                fixes.append(f"updated_at: {updated!r} -> now")
            updated_dt = max(now, created_dt)
        mem["updated_at"] = iso(updated_dt)
    status = mem.get("record_status")
    if status is None:
        mem["record_status"] = "active"
    elif status != "active":
        problems.append(
            f"'record_status' must be 'active' for a new memory, got {status!r} "
            "(retire or archive it afterwards with `memindex retire`/`memindex archive`)"
        )
    for key in LIFECYCLE_FIELDS:
        if mem.get(key) is not None:
            fixes.append(f"{key}: cleared (a new memory is active)")
        mem[key] = None
    mem.setdefault("changes", [])
    mem.setdefault("times_updated", 0)

    if mem.get("category") == category:
        rel_id = mem.get("id") if isinstance(mem.get("id"), str) and re.match(SLUG_PATTERN, mem["id"]) else "x"
        problems += _schema_problems(mem, f"{CATEGORY_FOLDER[category]}/{rel_id}.json", problems)
    if not problems and max_bytes is not None and len(serialize(mem)) > max_bytes:
        problems.append(f"the memory is {len(serialize(mem))} bytes, over the index.max_file_bytes limit of {max_bytes}")
    if problems:
        raise InvalidMemory(f"invalid {category} memory", problems)
    return ordered(mem), fixes
