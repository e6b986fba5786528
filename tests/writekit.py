"""The write path's inputs, for the tests of save and update: a memory as `memindex save`
takes it (title, tags, a category's content) and memindex run in-process on a root."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from memindex import cli

# Each category's content, with words of its own (what a round trip must keep).
CONTENT = {
    "session_summary": {"goal": "Ship the CSV ledger export", "outcome": "partial", "completed": ["streaming writer"]},
    "decision": {"status": "accepted", "context": "The mobile app cannot share cookies", "decision": "Use JWT access tokens"},
    "runbook": {"trigger": "Bank sync fails with consent expired", "steps": ["Ask the customer to reconnect the bank"]},
    "constraint": {"kind": "policy", "rule": "Customer data stays in the EU", "severity": "high"},
    "tech_debt": {"status": "open", "priority": "medium", "description": "Reports sum amounts as floats"},
    "preference": {"topic": "formatting", "value": "ruff format for all Python code"},
}


def memory(category: str, title: str = "A memory title", **extra: object) -> dict:
    """The input of `save` for a memory of `category` (a fresh copy: callers may change it)."""
    data = {"title": title, "tags": ["test"], "content": json.loads(json.dumps(CONTENT[category]))}
    data.update(extra)
    return data


def run(monkeypatch, capsys, root: Path, *argv: str, stdin: bytes | str | None = None) -> tuple[int, str, str]:
    """memindex in-process: (exit code, stdout, stderr)."""
    if stdin is not None:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    capsys.readouterr()
    rc = cli.main(["--root", str(root), *argv])
    out, err = capsys.readouterr()
    return rc, out, err
