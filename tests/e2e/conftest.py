"""Fixtures of the end-to-end tests: the real Claude Code CLI, this checkout installed as a
plugin, and a fake Anthropic Messages API on 127.0.0.1 (fake_api.py).

Opt-in: they run with `python -m pytest -m e2e` (or `pytest tests/e2e`, or MEMINDEX_E2E=1);
the default suite skips them. They skip with a reason when `claude`, `node` or `npm` is
missing, or when the `memindex` command is not installed beside the Python running pytest;
with MEMINDEX_E2E_REQUIRE=1 (what .ci/run sets) those are failures instead.

Isolation:
- a throwaway HOME for the test session, where the plugin is installed the README's way
  (`claude plugin marketplace add DIR`, `claude plugin install memindex@memindex`), and a
  fresh project per test (a copy of examples/demo-project, or a generated store);
- the CLI gets a clean environment (e2e_support.base_env): ANTHROPIC_BASE_URL at the fake
  API, a fake key, nonessential traffic, telemetry, error reporting and the auto-updater
  off, HTTP(S)_PROXY at a closed port on 127.0.0.1 (NO_PROXY=127.0.0.1,localhost) so that
  any other request fails locally. For a hard guarantee run the suite in a network
  namespace with only loopback: tests/e2e/run.sh;
- the plugin is installed from a copy of the checkout taken at session start: Claude Code
  runs a directory marketplace's hooks and skills in place, from that directory, so this
  keeps a checkout edited during the run from changing what is tested. The `memindex`
  command on the CLI's PATH (what the Bash tool runs) is a shim that runs the same copy's
  package (e2e_support.use_source), not the checkout an editable install points to.
  MEMINDEX_E2E_SOURCE=DIR tests another tree (e.g. an exported commit, or a copy broken
  on purpose: see README.md) instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from e2e_support import (  # noqa: E402
    COPY_IGNORE, PINNED_CLAUDE, REPO, RUN_TIMEOUT_S, Run, base_env, copy_demo, memindex, parse_events, run_bounded,
    use_source, venv_bin,
)
from fake_api import FakeAnthropic  # noqa: E402


# --- opting in, marker ------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: end-to-end tests of the real Claude Code CLI against a fake API (opt-in: -m e2e)")


def _opted_in(config: pytest.Config) -> bool:
    if os.environ.get("MEMINDEX_E2E") == "1":
        return True
    markexpr = config.option.markexpr or ""
    if re.search(r"\be2e\b", markexpr) and not re.search(r"\bnot\s+e2e\b", markexpr):
        return True
    for arg in config.args:
        path = Path(arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    opted_in = _opted_in(config)
    skip = pytest.mark.skip(reason="end-to-end Claude Code tests are opt-in: python -m pytest -m e2e")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if not opted_in:
                item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> list[str]:
    claude = shutil.which("claude")
    if not claude or not _opted_in(config):
        return []
    try:
        version = run_bounded([claude, "--version"], base_env(Path("/nonexistent")), timeout=30).stdout.strip()
    except AssertionError as exc:
        version = f"unknown ({exc})"
    lines = [f"claude: {claude} {version}; python: {sys.executable}"]
    if PINNED_CLAUDE not in version:
        lines.append(f"note: these tests document Claude Code {PINNED_CLAUDE}; this is {version}")
    if os.environ.get("MEMINDEX_E2E_SOURCE"):
        lines.append(f"tree under test: MEMINDEX_E2E_SOURCE={os.environ['MEMINDEX_E2E_SOURCE']}")
    return lines


# --- session: tools, plugin source, HOME with the plugin installed ---------------------------


@dataclass
class Tools:
    claude: str
    version: str
    root_user: bool


def _unavailable(reason: str) -> None:
    """Skip, or fail when the suite is required to run (MEMINDEX_E2E_REQUIRE=1, as in CI)."""
    if os.environ.get("MEMINDEX_E2E_REQUIRE") == "1":
        pytest.fail(f"MEMINDEX_E2E_REQUIRE=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def tools() -> Tools:
    missing = [name for name in ("claude", "node", "npm") if not shutil.which(name)]
    if missing:
        _unavailable(f"{', '.join(missing)} not on PATH (install node and npm, then: "
                     f"npm install -g @anthropic-ai/claude-code@{PINNED_CLAUDE})")
    if not (venv_bin() / "memindex").exists():
        _unavailable(f"no `memindex` command beside {sys.executable}: pip install -e . into the Python running pytest")
    claude = shutil.which("claude")
    assert claude
    version = run_bounded([claude, "--version"], base_env(Path("/nonexistent"))).stdout.strip()
    return Tools(claude, version, os.geteuid() == 0)


@pytest.fixture(scope="session")
def plugin_source(tmp_path_factory: pytest.TempPathFactory, tools: Tools) -> Path:
    """A copy of the checkout (or of MEMINDEX_E2E_SOURCE): the plugin as installed, and the
    package the `memindex` command on the CLI's PATH runs."""
    source = Path(os.environ.get("MEMINDEX_E2E_SOURCE") or REPO).resolve()
    dest = tmp_path_factory.mktemp("plugin") / "memindex"
    shutil.copytree(source, dest, ignore=COPY_IGNORE, symlinks=True)
    use_source(dest, tmp_path_factory.mktemp("bin"))
    return dest


@dataclass
class Validation:
    marketplace: object  # `claude plugin validate DIR`
    manifest: object  # `claude plugin validate DIR/.claude-plugin/plugin.json`
    strict: object  # `claude plugin validate --strict DIR`


@pytest.fixture(scope="session")
def validation(tmp_path_factory: pytest.TempPathFactory, tools: Tools, plugin_source: Path) -> Validation:
    """`claude plugin validate` of the tree under test, apart from the install, so that a
    broken manifest fails the validate test rather than only every test's setup."""
    home = tmp_path_factory.mktemp("validate-home")
    env = base_env(home)

    def run(*args: str):
        return run_bounded([tools.claude, "plugin", "validate", *args], env, cwd=home)

    return Validation(run(str(plugin_source)), run(str(plugin_source / ".claude-plugin" / "plugin.json")),
                      run("--strict", str(plugin_source)))


@dataclass
class Install:
    home: Path
    source: Path
    marketplace_add: object
    install: object
    listing: list
    details: object


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory, tools: Tools, plugin_source: Path) -> Install:
    """A throwaway HOME with the plugin installed as the README says."""
    home = tmp_path_factory.mktemp("home")
    env = base_env(home)

    def run(*args: str):
        return run_bounded([tools.claude, *args], env, cwd=home)

    add = run("plugin", "marketplace", "add", str(plugin_source))
    assert add.returncode == 0, add.stdout + add.stderr
    install = run("plugin", "install", "memindex@memindex")
    assert install.returncode == 0, install.stdout + install.stderr
    listing = run("plugin", "list", "--json")
    assert listing.returncode == 0, listing.stdout + listing.stderr
    details = run("plugin", "details", "memindex@memindex")
    return Install(home, plugin_source, add, install, json.loads(listing.stdout), details)


# --- per test: fake API, projects, the runner ------------------------------------------------


@pytest.fixture()
def fake_api() -> Iterable[FakeAnthropic]:
    api = FakeAnthropic(lifetime_s=150, max_requests=60)
    api.start()
    yield api
    api.stop()
    assert not api.errors, api.errors
    others = [p for p in api.paths() if p != "POST /v1/messages"]
    assert not others, f"the CLI called other endpoints: {others}"


@pytest.fixture(scope="session")
def cli_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TMPDIR of the CLI (its Bash tool keeps per-project state there)."""
    return tmp_path_factory.mktemp("cli-tmp")


@pytest.fixture()
def claude(tools: Tools, installed: Install, fake_api: FakeAnthropic, cli_tmp: Path):
    """`claude(project, prompt, *args, script=[...], env={...}) -> Run`.

    `home` and `path_first` (the start of PATH) replace the session's HOME with the plugin
    installed and the memindex shim (see base_env). Always `claude -p --output-format stream-json --verbose --include-hook-events ARGS -- PROMPT`
    in `project`; `script` answers this run's main-loop requests (see fake_api.py). Unless
    `check=False`: the CLI must exit 0, and every hook run must exit 0 with outcome success."""

    def run(project: Path, prompt: str, *args: str, script: list | None = None,
            env: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT_S, check: bool = True,
            home: Path | None = None, path_first: list[Path] | None = None) -> Run:
        home = home or installed.home
        fake_api.reset(script or [])
        first = len(fake_api.requests)
        cmd = [tools.claude, "-p", "--output-format", "stream-json", "--verbose", "--include-hook-events", *args, "--", prompt]
        run_env = base_env(home, fake_api.url, path_first, TMPDIR=str(cli_tmp), **(env or {}))
        proc = run_bounded(cmd, run_env, cwd=project, timeout=timeout)
        requests = [r for r in fake_api.requests[first:] if r["path"] == "/v1/messages" and isinstance(r["body"], dict)]
        result = Run(proc, parse_events(proc.stdout), requests, home)
        if check:
            assert proc.returncode == 0, f"claude exited {proc.returncode}\nstdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}"
            assert result.hooks, "no hook events: is the plugin loaded?"
            bad = [h for h in result.hooks if h.get("exit_code") != 0 or h.get("outcome") != "success"]
            assert not bad, f"hook runs that did not exit 0: {bad}"
        return result

    return run


@pytest.fixture()
def demo_project(tmp_path: Path, plugin_source: Path) -> Path:
    """examples/demo-project with its index built (as after a first session)."""
    project = copy_demo(plugin_source, tmp_path / "demo-project")
    memindex(project, "sync", "--quiet")
    return project


@pytest.fixture()
def fresh_demo_project(tmp_path: Path, plugin_source: Path) -> Path:
    """examples/demo-project as cloned: memories, no index yet."""
    return copy_demo(plugin_source, tmp_path / "demo-project")
