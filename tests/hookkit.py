"""The prompt hook as Claude Code runs it, for the tests of the hook and of what it injects:
memories written the short way (`put`), the hook as a subprocess (`run_hook`, `prompt_json`),
and the two small synced stores the hook tests and the injection-policy tests share
(`hook_store`, `inject_store`; conftest's `hook_project` and `inject_project` fixtures)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memindex.config import Config
from memindex.index.sync import sync

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "memindex_hook.py"
FOLDER = {"decision": "decisions", "runbook": "runbooks", "constraint": "constraints",
          "preference": "preferences", "tech_debt": "tech-debt", "session_summary": "sessions"}
CONTENT = {
    "decision": {"status": "accepted", "context": "", "decision": ""},
    "runbook": {"trigger": "", "steps": ["x"]},
    "constraint": {"kind": "technical", "rule": "", "severity": "high"},
    "preference": {"topic": "", "value": ""},
    "tech_debt": {"status": "open", "priority": "low", "description": ""},
    "session_summary": {"goal": "", "outcome": "success"},
}


def put(root: Path, category: str, mem_id: str, title: str, tags: list[str], text: str, status: str = "active") -> Path:
    """Write one memory whose searchable body is `text` (in the category's first free field)."""
    content = dict(CONTENT[category])
    first = next(iter(k for k, v in content.items() if v == ""), None) or "context"
    content[first] = text
    path = root / FOLDER[category] / f"{mem_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "schema_version": "1.0", "category": category, "id": mem_id, "title": title,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z",
        "tags": tags, "content": content, "related_files": [], "confidence": 0.9,
        "record_status": status, "changes": [], "times_updated": 0,
        "retired_at": "2026-11-02T00:00:00Z" if status == "retired" else None, "retired_reason": None,
        "archived_at": None, "archived_reason": None,
    }))
    return path


def hook_store(tmp_path: Path) -> Path:
    """`<tmp>/proj`, synced: five topical memories (one retired) and twelve routine sessions."""
    proj = tmp_path / "proj"
    root = proj / ".claude" / "memory"
    put(root, "runbook", "stripe-webhook-signature", "Stripe webhook signature failures",
        ["stripe", "webhooks"], "Webhook returns 400 because STRIPE_WEBHOOK_SECRET differs between staging and production; rotate the secret in the dashboard.")
    put(root, "decision", "jwt-over-session-cookies", "Chose JWT over session cookies", ["auth", "jwt"],
        "Mobile clients cannot share the web session cookie, so access tokens are short-lived JWTs with refresh rotation.")
    put(root, "decision", "redis-sessions", "Sessions stored in Redis", ["auth", "redis"],
        "Old approach: server-side sessions in Redis.", status="retired")
    put(root, "constraint", "rds-max-connections", "RDS max_connections is 400", ["postgres", "rds"],
        "The db.r6g.large instance allows 400 connections; pgbouncer pools them in transaction mode.")
    put(root, "preference", "named-exports", "Named exports in TypeScript", ["typescript", "style"],
        "Prefer named exports over default exports for React components.")
    for i in range(12):
        put(root, "session_summary", f"session-{i}", f"Session {i}: routine maintenance", ["session"],
            f"Worked on dependency upgrades batch {i} and small refactors of the booking widget.")
    sync(root, Config())
    return proj


def inject_store(tmp_path: Path) -> Path:
    """`<tmp>/proj`, synced: three topical memories and two sessions, the booking one the
    newest (what resume intent and session awareness reason about)."""
    proj = tmp_path / "proj"
    root = proj / ".claude" / "memory"
    put(root, "runbook", "stripe-webhook-signature", "Stripe webhook signature failures", ["stripe", "webhooks"],
        "Webhook returns 400 because STRIPE_WEBHOOK_SECRET differs between staging and production.")
    put(root, "decision", "jwt-over-session-cookies", "Chose JWT over session cookies", ["auth", "jwt"],
        "Mobile clients cannot share the web session cookie, so access tokens are short-lived JWTs.")
    put(root, "constraint", "rds-max-connections", "RDS max_connections is 400", ["postgres", "rds"],
        "The db.r6g.large instance allows 400 connections; pgbouncer pools them in transaction mode.")
    put(root, "session_summary", "2026-10-01-billing", "Session: billing export cleanup", ["billing"],
        "Cleaned up the billing CSV export and its tests.")
    put(root, "session_summary", "2026-11-03-booking", "Session: booking widget keyboard navigation", ["booking"],
        "Made the booking widget usable with the keyboard; next: screen reader labels.")
    newest = root / "sessions" / "2026-11-03-booking.json"
    data = json.loads(newest.read_text())
    data["updated_at"] = "2026-11-20T00:00:00Z"
    newest.write_text(json.dumps(data))
    sync(root, Config())
    return proj


def run_hook(stdin: bytes | str, event: str = "prompt", env: dict | None = None, timeout: float = 20) -> subprocess.CompletedProcess:
    """The hook script as a subprocess, `stdin` on its standard input."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, str(HOOK), event], input=data, capture_output=True, timeout=timeout, env=env)


def prompt_json(project: Path, prompt: str, **extra: object) -> str:
    """The UserPromptSubmit input Claude Code sends for `prompt` in `project`."""
    return json.dumps({"prompt": prompt, "cwd": str(project), "session_id": "s1", "hook_event_name": "UserPromptSubmit", **extra})
