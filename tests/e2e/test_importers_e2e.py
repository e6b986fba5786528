"""`memindex import claude-memory` looks where the real Claude Code 2.1 keeps a project's
auto memory: `~/.claude/projects/<key>/memory`, the key made by Claude Code's own rule from
the working directory (its transcripts) or the canonical git root (its auto memory, shared
by the worktrees of one repository). Checked on the transcript folder the CLI writes and on
the auto memory folder its system prompt names."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fake_api import text

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from memindex.importers import claude_memory  # noqa: E402

pytestmark = pytest.mark.e2e


def memory_folders(run) -> set[Path]:
    """The auto memory folders the model is told about."""
    body = json.dumps(run.last_body.get("system", "")) + json.dumps(run.last_body.get("messages", []))
    return {Path(p) for p in re.findall(r"(/[^\s\"'`]*?/projects/[^/\s\"'`]+/memory)/?", body)}


def test_the_project_key_is_claude_codes(claude, demo_project, monkeypatch):
    project = demo_project.parent / "odd.name_with+ü"  # dots, underscores, a plus, a non-ASCII letter
    demo_project.rename(project)
    run = claude(project, "Say hi.", script=[[text("hi")]])
    assert run.transcript.parent.name == claude_memory.project_key(str(project.resolve()))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(run.home))
    assert memory_folders(run) == {claude_memory.default_folder(project)}


def test_a_worktree_shares_the_main_checkouts_auto_memory(claude, demo_project, tmp_path, monkeypatch):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=demo_project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=demo_project, check=True)
    subprocess.run([*git, "commit", "-qm", "demo"], cwd=demo_project, check=True)
    tree = tmp_path / "feature-tree"
    subprocess.run([*git, "worktree", "add", "-q", str(tree)], cwd=demo_project, check=True)
    run = claude(tree, "Say hi.", script=[[text("hi")]])
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(run.home))
    assert claude_memory.git_root(tree) == demo_project.resolve()
    assert memory_folders(run) == {claude_memory.default_folder(tree)} == {claude_memory.default_folder(demo_project)}
