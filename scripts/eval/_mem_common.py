"""Helpers for the Harbor memory set. The data lives in _mem_*.py; _build_set.py writes the JSON.

Timestamps may be given short ("2026-03-14 09:12" or "2026-03-14"); they are expanded to
ISO 8601 UTC. updated_at is the latest of created_at, the change dates, retired_at and
archived_at, so the files stay consistent when a change is added.
"""

from __future__ import annotations

FOLDER_OF = {
    "session_summary": "sessions",
    "decision": "decisions",
    "runbook": "runbooks",
    "constraint": "constraints",
    "tech_debt": "tech-debt",
    "preference": "preferences",
}

REGISTRY: list[dict] = []


def ts(value: str) -> str:
    value = value.strip()
    if "T" in value and value.endswith("Z"):
        return value
    if " " in value:
        day, clock = value.split(" ")
    else:
        day, clock = value, "09:00"
    if clock.count(":") == 1:
        clock += ":00"
    return f"{day}T{clock}Z"


def _mem(category, id, title, created, tags, content, files=(), conf=0.85, changes=(),
         retired=None, archived=None, times_updated=None):
    created = ts(created)
    change_list = [{"date": ts(d), "summary": s} for d, s in changes]
    stamps = [created] + [c["date"] for c in change_list]
    status = "active"
    retired_at = retired_reason = archived_at = archived_reason = None
    if retired:
        status = "retired"
        retired_at, retired_reason = ts(retired[0]), retired[1]
        stamps.append(retired_at)
    if archived:
        status = "archived"
        archived_at, archived_reason = ts(archived[0]), archived[1]
        stamps.append(archived_at)
    record = {
        "schema_version": "1.0",
        "category": category,
        "id": id,
        "title": title,
        "created_at": created,
        "updated_at": max(stamps),
        "tags": list(tags),
        "content": content,
        "related_files": list(files),
        "confidence": conf,
        "record_status": status,
        "changes": change_list,
        "times_updated": len(change_list) if times_updated is None else times_updated,
        "retired_at": retired_at,
        "retired_reason": retired_reason,
        "archived_at": archived_at,
        "archived_reason": archived_reason,
    }
    REGISTRY.append(record)
    return record


def decision(id, title, created, tags, *, status="accepted", context, decision, alternatives=(),
             rationale=(), consequences=(), **kw):
    content = {
        "status": status,
        "context": context,
        "decision": decision,
        "alternatives": [{"option": o, "rejected_reason": r} for o, r in alternatives],
        "rationale": list(rationale),
        "consequences": list(consequences),
    }
    return _mem("decision", id, title, created, tags, content, **kw)


def runbook(id, title, created, tags, *, trigger, symptoms=(), steps=(), verification="",
            root_cause="", environment="production", **kw):
    content = {
        "trigger": trigger,
        "symptoms": list(symptoms),
        "steps": list(steps),
        "verification": verification,
        "root_cause": root_cause,
        "environment": environment,
    }
    return _mem("runbook", id, title, created, tags, content, **kw)


def constraint(id, title, created, tags, *, kind, rule, impact=(), workarounds=(), severity="medium",
               active=True, expires=None, **kw):
    content = {
        "kind": kind,
        "rule": rule,
        "impact": list(impact),
        "workarounds": list(workarounds),
        "severity": severity,
        "active": active,
        "expires": expires,
    }
    return _mem("constraint", id, title, created, tags, content, **kw)


def tech_debt(id, title, created, tags, *, status="open", priority="medium", description,
              reason_deferred="", impact=(), suggested_fix=(), acceptance_criteria=(), **kw):
    content = {
        "status": status,
        "priority": priority,
        "description": description,
        "reason_deferred": reason_deferred,
        "impact": list(impact),
        "suggested_fix": list(suggested_fix),
        "acceptance_criteria": list(acceptance_criteria),
    }
    return _mem("tech_debt", id, title, created, tags, content, **kw)


def preference(id, title, created, tags, *, topic, value, reason, strength="default", prefer=(),
               avoid=(), **kw):
    content = {
        "topic": topic,
        "value": value,
        "reason": reason,
        "strength": strength,
        "examples": {"prefer": list(prefer), "avoid": list(avoid)},
    }
    return _mem("preference", id, title, created, tags, content, **kw)


def session(id, title, created, tags, *, goal, outcome, completed=(), in_progress=(), blockers=(),
            next_actions=(), key_changes=(), **kw):
    content = {
        "goal": goal,
        "outcome": outcome,
        "completed": list(completed),
        "in_progress": list(in_progress),
        "blockers": list(blockers),
        "next_actions": list(next_actions),
        "key_changes": list(key_changes),
    }
    return _mem("session_summary", id, title, created, tags, content, **kw)
