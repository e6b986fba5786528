"""Staleness tied to the code (memindex/review/stale.py): files deleted or renamed since a
memory's date, names it gives that the code no longer has, heavy churn; nothing on a store
whose code did not change; the prompt hook's note and its leaving out a clearly dead
memory; never a program of the repository run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, write_mem
from memindex import review, usage
from memindex.config import Config
from memindex.index.sync import sync

HOOK = REPO / "hooks" / "memindex_hook.py"
OLD, NEW = "2025-01-01T12:00:00Z", "2025-06-01T12:00:00Z"
MEMORY_DATE = "2025-02-01T12:00:00Z"


def git(repo: Path, *args: str, date: str = OLD) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def put(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose second commit deletes, renames and drops what the memories name."""
    monkeypatch.delenv(usage.SESSION_ENV, raising=False)
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    put(repo, "src/payments/retry.py", "MAX_RETRIES = 5\n\ndef retry_payment(charge):\n    return charge\n")
    put(repo, "src/api/client.py", "class ApiClient:\n    def fetch_orders(self):\n        return []\n" + "# pad\n" * 40)
    put(repo, "src/auth/tokens.py", "def legacy_token_refresh():\n    pass\n\ndef rotate_keys():\n    pass\n")
    put(repo, "src/billing/invoice.py", "def render_invoice():\n    return 'x'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    root = repo / ".claude" / "memory"
    write_mem(root, "runbook", "payment-retries", "Payment retries", ["payments"],
              {"trigger": "a charge fails", "steps": ["retry_payment retries up to MAX_RETRIES times (src/payments/retry.py)"]},
              related_files=["src/payments/retry.py"], updated_at=MEMORY_DATE, created_at=MEMORY_DATE)
    write_mem(root, "decision", "api-client", "One API client for orders", ["api"],
              {"status": "accepted", "context": "orders", "decision": "ApiClient.fetch_orders is the only way to read orders."},
              related_files=["src/api/client.py"], updated_at=MEMORY_DATE, created_at=MEMORY_DATE)
    write_mem(root, "constraint", "token-refresh", "Tokens refresh through the legacy path", ["auth"],
              {"rule": "Call `legacy_token_refresh` before rotate_keys; never skip it.", "severity": "high"},
              updated_at=MEMORY_DATE, created_at=MEMORY_DATE)
    write_mem(root, "preference", "invoices", "Invoices are rendered server-side", ["billing"],
              {"topic": "invoices", "value": "render_invoice in src/billing/invoice.py; never in the browser"},
              related_files=["src/billing/invoice.py", "src/never/existed.py"], updated_at=MEMORY_DATE, created_at=MEMORY_DATE)
    write_mem(root, "tech_debt", "not-code", "Rename the FooBarBaz service", ["debt"],
              {"status": "open", "priority": "low", "description": "FooBarBaz is what sales calls it; `SomeFutureThing` maybe."},
              updated_at=MEMORY_DATE, created_at=MEMORY_DATE)
    return repo


def second_commit(repo: Path) -> None:
    git(repo, "rm", "-q", "src/payments/retry.py")
    (repo / "src/http").mkdir()
    git(repo, "mv", "src/api/client.py", "src/http/client.py")
    put(repo, "src/auth/tokens.py", "def rotate_keys():\n    pass\n")
    put(repo, "CHANGELOG.md", "- removed legacy_token_refresh\n")  # a changelog still names what is gone
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "second", date=NEW)


def stale_items(repo: Path) -> dict[str, review.Item]:
    root = repo / ".claude" / "memory"
    sync(root, Config())
    return {i.path: i for i in review.queue(root, Config()) if i.kind == "stale"}


def test_a_store_whose_code_did_not_change_has_no_stale_item(project: Path) -> None:
    assert stale_items(project) == {}


def test_deleted_renamed_and_gone_since_the_memory_was_written(project: Path) -> None:
    second_commit(project)
    items = stale_items(project)
    assert sorted(items) == ["constraints/token-refresh.json", "decisions/api-client.json", "runbooks/payment-retries.json"]
    pay = items["runbooks/payment-retries.json"]
    [f] = pay.evidence["files"]
    assert f["path"] == "src/payments/retry.py" and f["state"] == "deleted" and f["date"] == "2025-06-01"
    assert f["commit"] == git(project, "rev-parse", "HEAD").strip()[:12]
    assert {n["name"] for n in pay.evidence["names"]} == {"retry_payment", "MAX_RETRIES"}
    assert pay.reason.startswith("src/payments/retry.py was deleted; ")
    assert pay.dead and pay.suggested == "retire"  # every file it names deleted, its names gone
    api = items["decisions/api-client.json"]
    assert api.evidence["files"][0] == {"path": "src/api/client.py", "state": "renamed", "to": "src/http/client.py",
                                        "commit": f["commit"], "date": "2025-06-01"}
    assert api.reason == "src/api/client.py was renamed to src/http/client.py" and not api.dead
    assert api.suggested == "update" and api.note == "may be stale: src/api/client.py was renamed to src/http/client.py"
    tok = items["constraints/token-refresh.json"]
    assert tok.reason == "legacy_token_refresh no longer occurs in the code" and tok.evidence["files"] == []


def test_the_working_tree_counts_before_a_commit(project: Path) -> None:
    (project / "src/billing/invoice.py").unlink()  # deleted, not committed
    items = stale_items(project)
    assert items["preferences/invoices.json"].evidence["files"] == [
        {"path": "src/billing/invoice.py", "state": "deleted", "commit": "(not committed)"}]


def test_heavy_churn_is_a_reason_and_can_be_turned_off(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put(project, "src/billing/invoice.py", "".join(f"def part_{i}():\n    return {i}\n" for i in range(30)) + "def render_invoice():\n    return 'y'\n")
    git(project, "commit", "-qam", "rewrite", date=NEW)
    items = stale_items(project)
    churn = items["preferences/invoices.json"].evidence["churn"]
    assert churn["files"] == ["src/billing/invoice.py"] and churn["ratio"] >= 1.0
    assert items["preferences/invoices.json"].reason.startswith("its files changed heavily since it was written")
    monkeypatch.setenv("MEMINDEX_CONFIG_JSON", json.dumps({"review": {"churn_ratio": 0}}))
    from memindex.config import load_config

    root = project / ".claude" / "memory"
    assert not [i for i in review.queue(root, load_config(root)) if i.kind == "stale"]


def test_outside_a_git_repository_nothing_is_called_stale(tmp_path: Path) -> None:
    root = tmp_path / "plain" / ".claude" / "memory"
    write_mem(root, "runbook", "gone", "Gone file", ["x"], {"trigger": "t", "steps": ["see src/gone.py"]},
              related_files=["src/gone.py"], updated_at=MEMORY_DATE)
    sync(root, Config())
    report = review.refresh(root, Config())
    assert report["by_kind"] == {} and "not a git repository" in report["git"]


def test_the_prompt_hook_notes_a_stale_memory_and_leaves_out_a_dead_one(project: Path) -> None:
    second_commit(project)
    root = project / ".claude" / "memory"
    sync(root, Config())
    review.refresh(root, Config())

    def prompt(text: str) -> str:
        out = subprocess.run([sys.executable, "-I", "-S", str(HOOK), "prompt"], capture_output=True, timeout=30,
                             input=json.dumps({"prompt": text, "cwd": str(project), "session_id": "s1"}).encode())
        return out.stdout.decode()

    block = prompt("Which API client reads the orders? ApiClient fetch_orders")
    assert ("decisions/api-client.json #tags:api (may be stale: src/api/client.py was renamed to src/http/client.py)"
            in block)
    assert "payment-retries" not in prompt("How do payment retries work? retry_payment MAX_RETRIES")
    [log] = usage.sessions(root)
    dropped = dict(log.events[-1]["d"])
    assert dropped["runbooks/payment-retries.json"].startswith("clearly dead (may be stale: src/payments/retry.py was deleted")
    from memindex.policy.transcript import injected_paths

    assert injected_paths(block) == [".claude/memory/decisions/api-client.json"]  # the note does not hide the path


def test_no_program_of_the_repository_runs(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    git(project, "config", "core.fsmonitor", f"touch {marker}; false")
    git(project, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(project, "config", "diff.external", f"touch {marker}")
    put(project, ".gitattributes", "* filter=evil diff=evil\n")
    git(project, "config", "diff.evil.textconv", f"touch {marker}; cat")
    second_commit(project)
    marker.unlink(missing_ok=True)  # git's own commit above ran the filter: only the review counts
    stale_items(project)
    assert not marker.exists()
