"""Schema 1.0 of a memory file, as JSON Schema: the one source of truth for validation,
for `memindex schema`, and for the write path's checks."""

from __future__ import annotations

import re
from typing import Any

from ..defaults import MESSAGE_MAX
from ..defaults import (
    CATEGORIES,
    CATEGORY_FOLDER,
    FOLDERS,
    QUESTION_MAX_CHARS,
    QUESTIONS_MAX,
    RECORD_STATUSES,
    SCHEMA_VERSION,
    SOURCE_KINDS,
    STAMP_FUTURE_SLACK_S,
    TAGS_MAX,
    TITLE_MAX,
)
from ..errors import short
from .stamps import is_future, latest_credible

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
ISO_UTC_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|\+00:00)$"

_STR = {"type": "string"}
_STRS = {"type": "array", "items": {"type": "string"}}
_TIME = {"type": "string", "pattern": ISO_UTC_PATTERN}


def _enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
        "additionalProperties": True,
    }


CONTENT: dict[str, dict[str, Any]] = {
    "session_summary": _obj(
        {
            "goal": _STR,
            "outcome": _enum("success", "partial", "blocked", "abandoned"),
            "completed": _STRS,
            "in_progress": _STRS,
            "blockers": _STRS,
            "next_actions": _STRS,
            "key_changes": _STRS,
        },
        ["goal", "outcome"],
    ),
    "decision": _obj(
        {
            "status": _enum("proposed", "accepted", "deprecated", "superseded"),
            "context": _STR,
            "decision": _STR,
            "alternatives": {
                "type": "array",
                "items": _obj({"option": _STR, "rejected_reason": _STR}, ["option"]),
            },
            "rationale": _STRS,
            "consequences": _STRS,
        },
        ["status", "context", "decision"],
    ),
    "runbook": _obj(
        {
            "trigger": _STR,
            "symptoms": _STRS,
            "steps": {**_STRS, "minItems": 1},
            "verification": _STR,
            "root_cause": _STR,
            "environment": _STR,
        },
        ["trigger", "steps"],
    ),
    "constraint": _obj(
        {
            "kind": _enum("limitation", "gap", "policy", "technical"),
            "rule": _STR,
            "impact": _STRS,
            "workarounds": _STRS,
            "severity": _enum("high", "medium", "low"),
            "active": {"type": "boolean"},
            "expires": {"type": ["string", "null"]},
        },
        ["kind", "rule", "severity"],
    ),
    "tech_debt": _obj(
        {
            "status": _enum("open", "in_progress", "resolved", "wont_fix"),
            "priority": _enum("critical", "high", "medium", "low"),
            "description": _STR,
            "reason_deferred": _STR,
            "impact": _STRS,
            "suggested_fix": _STRS,
            "acceptance_criteria": _STRS,
        },
        ["status", "priority", "description"],
    ),
    "preference": _obj(
        {
            "topic": _STR,
            "value": _STR,
            "reason": _STR,
            "strength": _enum("strong", "default", "soft"),
            "examples": _obj({"prefer": _STRS, "avoid": _STRS}, []),
        },
        ["topic", "value"],
    ),
}

# Provenance of a memory that capture or an import wrote (docs/memory-format.md). `kind`
# is a free slug, not an enum: a new importer or client adds its kind without a schema bump.
SOURCE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "pattern": SLUG_PATTERN, "maxLength": 40, "examples": list(SOURCE_KINDS)},
        "path": {"type": "string", "minLength": 1, "maxLength": 4096},
        "section": {"type": "string", "maxLength": 1000},
        "session_id": {"type": "string", "maxLength": 200},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    },
    "required": ["kind", "path"],
    "additionalProperties": True,
}

_NULLABLE_TIME = {"anyOf": [_TIME, {"type": "null"}]}
_NULLABLE_STR = {"type": ["string", "null"]}


def memory_schema(category: str) -> dict[str, Any]:
    """The JSON Schema of one category's memory file."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"memindex {category} memory (schema {SCHEMA_VERSION})",
        "type": "object",
        "required": [
            "schema_version", "category", "id", "title", "created_at", "updated_at",
            "tags", "content", "record_status",
        ],
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "category": {"const": category},
            "id": {"type": "string", "pattern": SLUG_PATTERN, "maxLength": 80},
            "title": {"type": "string", "minLength": 1, "maxLength": TITLE_MAX},
            "created_at": _TIME,
            "updated_at": _TIME,
            "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": TAGS_MAX},
            # optional: how the memory will be asked for (symptoms, everyday phrasings), indexed
            "questions": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": QUESTION_MAX_CHARS},
                "maxItems": QUESTIONS_MAX,
            },
            "content": CONTENT[category],
            "related_files": _STRS,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "record_status": _enum(*RECORD_STATUSES),
            "changes": {"type": "array", "items": {"type": "object"}},
            "times_updated": {"type": "integer", "minimum": 0},
            "retired_at": _NULLABLE_TIME,
            "retired_reason": _NULLABLE_STR,
            "archived_at": _NULLABLE_TIME,
            "archived_reason": _NULLABLE_STR,
            "source": SOURCE,
        },
        "additionalProperties": True,
    }


def all_schemas() -> dict[str, dict[str, Any]]:
    return {c: memory_schema(c) for c in CATEGORIES}


_validators: dict[str, Any] = {}


def _validator(category: str) -> Any:
    if category not in _validators:
        from jsonschema import Draft202012Validator

        _validators[category] = Draft202012Validator(memory_schema(category))
    return _validators[category]


def _where(error: Any) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "(top level)"




def _message(error: Any) -> str:
    text = _full_message(error)
    return text if len(text) <= MESSAGE_MAX else text[: MESSAGE_MAX - 3] + "..."


def _full_message(error: Any) -> str:
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        field = missing[0] if missing else error.message
        where = _where(error)
        return f"missing field '{field}'" + ("" if where == "(top level)" else f" in {where}")
    if error.validator == "enum":
        return f"bad value for '{_where(error)}': {error.instance!r} (expected one of {', '.join(map(str, error.validator_value))})"
    if error.validator == "const":
        return f"bad value for '{_where(error)}': {error.instance!r} (expected {error.validator_value!r})"
    if error.validator == "pattern" and _where(error) in ("created_at", "updated_at", "retired_at", "archived_at"):
        return f"'{_where(error)}' is not an ISO 8601 UTC timestamp: {error.instance!r}"
    if error.validator == "pattern" and _where(error) == "id":
        return f"'id' is not a lowercase slug: {error.instance!r}"
    return f"'{_where(error)}': {error.message}"


def _utc(value: str) -> str | None:
    """A comparable form of an ISO 8601 UTC timestamp (None if it is not one)."""
    if not re.match(ISO_UTC_PATTERN, value):
        return None
    return value[:19]


def validate_memory(data: Any, rel: str) -> list[str]:
    """Every schema problem of one parsed file at `<folder>/<name>.json`, as sentences."""
    if not isinstance(data, dict):
        return [f"top level is {type(data).__name__}, expected an object"]
    category = data.get("category")
    folder, _, name = rel.partition("/")
    if not isinstance(category, str) or category not in CATEGORY_FOLDER:
        if category is None:
            return ["missing field 'category'"]
        shown = short(category)
        return [f"bad value for 'category': {shown} (expected one of {', '.join(CATEGORIES)})"]
    problems = [_message(e) for e in sorted(_validator(category).iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))]
    if FOLDERS.get(folder) != category:
        problems.append(f"file is outside its category folder: {category} belongs in {CATEGORY_FOLDER[category]}/, not {folder}/")
    stem = name[: -len(".json")] if name.endswith(".json") else name
    if isinstance(data.get("id"), str) and data["id"] != stem:
        problems.append(f"id {data['id']!r} does not match the file name {name!r}")
    tags = data.get("tags")
    if isinstance(tags, list):
        for tag in tags:
            if isinstance(tag, str) and tag != tag.lower():
                problems.append(f"'tags': {tag!r} is not lowercase")
    created, updated = data.get("created_at"), data.get("updated_at")
    if isinstance(created, str) and isinstance(updated, str) and _utc(updated) and _utc(created):
        if _utc(updated) < _utc(created):
            problems.append(f"'updated_at' ({updated}) is earlier than 'created_at' ({created})")
    cutoff = latest_credible()
    for key, value in (("created_at", created), ("updated_at", updated)):
        if isinstance(value, str) and _utc(value) and is_future(value, cutoff):
            problems.append(f"'{key}' is in the future ({value}): more than {STAMP_FUTURE_SLACK_S / 60:g} minutes "
                            "ahead of this machine's clock")
    status = data.get("record_status")
    if status == "retired" and not data.get("retired_at"):
        problems.append("record_status is 'retired' but 'retired_at' is not set")
    if status == "archived" and not data.get("archived_at"):
        problems.append("record_status is 'archived' but 'archived_at' is not set")
    return problems
