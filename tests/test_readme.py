"""The README's commands run, and its shown output is the real output.

- The opening blocks: .ci/run runs them verbatim (`python3 tests/readme_blocks.py opening N`);
  here, the main job of the first one (its `memindex` commands) on a fresh copy of the demo.
- The plugin section: every ```bash block not marked `<!-- readme-test: e2e -->` runs here, in
  a temporary folder with a temporary HOME, and must exit 0 and print its ```text output
  block when it has one; the marked ones need the real `claude` CLI and run in
  tests/e2e/test_readme_e2e.py.
- docs/claude-code.md, the plugin section in full, repeats every block of the README's plugin
  section verbatim; its permission-rule table lists permissions.json, and the hook commands of
  its settings.json example (no plugin) run and print the block the README shows.
- The search example of "Command line" (README and docs/cli.md) prints exactly what they show.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from readme_blocks import CLAUDE_CODE, CLONE, PROJECT, README, blocks, opening, plugin_section, section_text

REPO = README.parent
TEXT = README.read_text(encoding="utf-8")
DETAILS = CLAUDE_CODE.read_text(encoding="utf-8")  # the plugin section in full
RUNBOOK = ".claude/memory/runbooks/flaky-ci-integration-tests-postgres.json"
FLAKY_PROMPT = "Our CI is flaky: integration tests fail before Postgres is ready. What did we do last time?"
LABEL = "UserPromptSubmit hook success: "  # Claude Code's label before a hook's plain stdout
INDEX_FILES = shutil.ignore_patterns(".index.db*", ".index.lock", ".sync.spawned", ".memindex.log*", "index.md")


def env_for(home: Path) -> dict[str, str]:
    """A clean environment: the Python running the tests first on PATH (its `memindex`,
    its `python3`), a throwaway HOME, nothing else inherited."""
    return {"PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(home), "LANG": "C.UTF-8",
            "PYTHONPATH": str(REPO)}  # this tree, even where the editable install points to another checkout


def sh(script: str, cwd: Path, home: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env_for(home), input=stdin,
                          text=True, capture_output=True, timeout=60)


@pytest.fixture()
def place(tmp_path: Path) -> dict[str, Path]:
    """A clone with the demo store as cloned (no index), an empty project, a HOME."""
    clone, project, home = tmp_path / "memindex", tmp_path / "project", tmp_path / "home"
    shutil.copytree(REPO / "examples" / "demo-project", clone / "examples" / "demo-project", ignore=INDEX_FILES)
    project.mkdir()
    home.mkdir()
    return {"clone": clone, "project": project, "home": home, "tmp": tmp_path}


def substitute(text: str, place: dict[str, Path]) -> str:
    return text.replace(CLONE, str(place["clone"])).replace(PROJECT, str(place["project"]))


def unsubstitute(text: str, place: dict[str, Path]) -> str:
    return text.replace(str(place["clone"]), CLONE).replace(str(place["project"]), PROJECT)


# --- the opening commands ------------------------------------------------------------------------


def test_opening_blocks_are_the_install_and_main_job_then_the_tests_and_ci_runs_them():
    first, second = opening(TEXT)  # exactly two
    assert first.commands()[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]'")
    assert second.commands() == ["python -m pytest -q"]
    ci = (REPO / ".ci" / "run").read_text()
    assert "tests/readme_blocks.py opening 1" in ci and "tests/readme_blocks.py opening 2" in ci


def test_opening_main_job_runs_on_a_fresh_copy_of_the_demo(place):
    [line] = opening(TEXT)[0].commands()
    steps = line.split(" && ")
    job = steps[next(i for i, s in enumerate(steps) if s.startswith("memindex "))]
    job = " && ".join(steps[steps.index(job):])
    assert "examples/demo-project" in job
    proc = sh(job, place["clone"], place["home"])
    assert proc.returncode == 0, proc.stderr
    assert "[RUNBOOK] Flaky CI: integration tests fail before Postgres is ready" in proc.stdout
    assert (place["clone"] / "examples" / "demo-project" / ".claude" / "memory" / ".index.db").exists()


@pytest.mark.parametrize("page", ["README.md", "docs/cli.md"])
def test_search_example_prints_what_the_readme_shows(place, page):
    text = (REPO / page).read_text(encoding="utf-8")
    section = section_text(TEXT, "Command line") if page == "README.md" else text
    found = re.search(r"\(`(memindex [^`]+)`\):\n\n```\n(.*?)```", section, re.S)
    assert found, "the search example and its output block"
    command, shown = found.groups()
    proc = sh(command, place["clone"], place["home"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shown


# --- the plugin section ------------------------------------------------------------------------

PLUGIN_BLOCKS = plugin_section(TEXT)
LOCAL_BASH = [b for b in PLUGIN_BLOCKS if b.lang == "bash" and b.marker != "e2e"]


def test_plugin_section_runs_every_claude_command_in_the_e2e_suite_only():
    bash = [b for b in PLUGIN_BLOCKS if b.lang == "bash"]
    e2e = [b for b in bash if b.marker == "e2e"]
    assert e2e and LOCAL_BASH
    for block in LOCAL_BASH:
        assert not any(c.startswith("claude ") or " claude " in c for c in block.commands()), block.text
    assert any(c.startswith("claude plugin install") for b in e2e for c in b.commands())
    assert all(b.marker in ("", "e2e") for b in bash)


@pytest.mark.parametrize("block", LOCAL_BASH, ids=[f"line{b.line}" for b in LOCAL_BASH])
def test_plugin_section_bash_block(block, place):
    proc = sh(substitute(block.text, place), place["tmp"], place["home"])
    assert proc.returncode == 0, f"{block.text}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    if block.output is not None:
        assert unsubstitute(proc.stdout, place) == block.output.text
    if "memindex explain" in block.text:
        assert re.search(rf"^INJECT .* {re.escape(RUNBOOK)}$", proc.stdout, re.M), proc.stdout


def test_init_block_writes_the_permission_rules(place):
    [block] = [b for b in LOCAL_BASH if "memindex init" in b.text]
    assert sh(substitute(block.text, place), place["tmp"], place["home"]).returncode == 0
    settings = json.loads((place["project"] / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == permission_rules()


def permission_rules() -> list[str]:
    return json.loads((REPO / "memindex" / "data" / "permissions.json").read_text())["allow"]


def test_the_details_page_repeats_the_readme_plugin_blocks_verbatim():
    """docs/claude-code.md shows the README's commands and outputs as they are (the README's run here)."""
    shown = {(b.lang, b.text) for b in blocks(DETAILS)}
    for block in PLUGIN_BLOCKS:
        assert (block.lang, block.text) in shown, block.text
    assert "docs/claude-code.md" in section_text(TEXT)


def test_permission_rules_table_lists_permissions_json():
    table = DETAILS[DETAILS.index("\n## 4. Permission rules"):]
    table = table[:table.index("\n## ", 5)]
    listed = re.findall(r"`((?:Bash|Skill)\([^`]*\))`", table)
    assert sorted(listed) == sorted(permission_rules())
    assert len(listed) == len(set(listed))


def model_sees() -> str:
    [block] = [b for b in PLUGIN_BLOCKS if b.marker == "model-sees"]
    return block.text


def test_settings_example_hooks_run_and_print_the_block_the_readme_shows(place):
    """The hook commands of docs/claude-code.md's "Without the plugin" (python3 -I -m
    memindex.hook ...), as Claude Code would run them in the demo project as cloned: the
    first prompt's block is the one the README shows (minus Claude Code's label)."""
    [settings] = [b for b in blocks(DETAILS) if b.section.startswith("Without the plugin") and b.lang == "json"]
    assert '"hooks"' in settings.text
    hooks = json.loads(settings.text)["hooks"]
    command = {event: entries[0]["hooks"][0]["command"] for event, entries in hooks.items()}
    demo = place["clone"] / "examples" / "demo-project"
    base = {"cwd": str(demo), "session_id": "readme", "transcript_path": str(place["tmp"] / "none.jsonl")}

    start = sh(command["SessionStart"], demo, place["home"], json.dumps(base | {"hook_event_name": "SessionStart"}))
    assert start.returncode == 0 and start.stdout == "" and start.stderr == "", start

    prompt = sh(command["UserPromptSubmit"], demo, place["home"],
                json.dumps(base | {"hook_event_name": "UserPromptSubmit", "prompt": FLAKY_PROMPT}))
    assert prompt.returncode == 0, prompt.stderr
    shown = model_sees()
    assert shown.startswith(LABEL)
    assert prompt.stdout == shown[len(LABEL):]

    read = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": str(demo / ".github" / "workflows" / "ci.yml")}}
    pre = sh(command["PreToolUse"], demo, place["home"], json.dumps(base | read))
    assert pre.returncode == 0 and pre.stdout == "" and pre.stderr == "", pre  # off by default: retrieval.tool_anchors

    edit = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": str(demo / RUNBOOK)}}
    post = sh(command["PostToolUse"], demo, place["home"], json.dumps(base | edit))
    assert post.returncode == 0 and post.stdout == "", post

    for event in ("Stop", "SessionEnd"):  # session capture: a background job, nothing printed
        done = sh(command[event], demo, place["home"], json.dumps(base | {"hook_event_name": event}))
        assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done
