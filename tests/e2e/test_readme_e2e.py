"""End-to-end: the README's install commands for Claude Code, as a newcomer runs them.

The blocks of the README's plugin section marked `<!-- readme-test: e2e -->` (they need the
real `claude` CLI; tests/test_readme.py runs the others) run line by line in a throwaway
HOME, `/path/to/memindex` being a copy of the tree under test and `python3` the one of a
fresh virtualenv first on PATH. `pip` gets the caller's network settings (it needs the
package index; inside run.sh's network namespace, MEMINDEX_E2E_NETNS=1, that line is left
out with a warning); the `claude` commands get the isolated environment of the other tests.
Then the first prompt of the first session in a copy of examples/demo-project, with
nothing run by hand, must show the model the block the README shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from e2e_support import COPY_IGNORE, base_env, copy_demo, memory_contexts, run_bounded
from fake_api import text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from readme_blocks import CLONE, PROJECT, plugin_section  # noqa: E402

FLAKY_PROMPT = "Our CI is flaky: integration tests fail before Postgres is ready. What did we do last time?"
PIP_TIMEOUT_S = 300


def pip_env(home: Path, venv: Path) -> dict[str, str]:
    """The caller's environment (proxies, pip settings: pip needs an index) with a
    throwaway HOME and the fresh virtualenv first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(HOME=str(home), PATH=os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]))
    return env


def test_readme_install_commands_then_the_first_prompt_shows_the_readme_block(tools, plugin_source, claude, tmp_path):
    readme = (plugin_source / "README.md").read_text(encoding="utf-8")
    blocks = plugin_section(readme)
    e2e = [b for b in blocks if b.lang == "bash" and b.marker == "e2e"]
    [shown] = [b.text for b in blocks if b.marker == "model-sees"]
    assert e2e

    clone, home, venv = tmp_path / "memindex", tmp_path / "home", tmp_path / "venv"
    shutil.copytree(plugin_source, clone, ignore=COPY_IGNORE, symlinks=True)
    home.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    cli_env = base_env(home, path_first=[venv / "bin"])

    outputs = []
    for block in e2e:
        for command in block.commands():
            command = command.replace(CLONE, str(clone)).replace(PROJECT, str(tmp_path / "project"))
            if command.startswith("claude "):
                proc = run_bounded(["bash", "-e", "-c", command], cli_env, cwd=home)
            elif os.environ.get("MEMINDEX_E2E_NETNS") == "1":
                warnings.warn(f"no network in run.sh's namespace: not run: {command}", stacklevel=1)
                continue
            else:
                proc = run_bounded(["bash", "-e", "-c", command], pip_env(home, venv), cwd=tmp_path, timeout=PIP_TIMEOUT_S)
            assert proc.returncode == 0, f"{command}\nstdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}"
            outputs.append((command, proc.stdout))

    # what the README says of them
    if os.environ.get("MEMINDEX_E2E_NETNS") != "1":
        assert (venv / "bin" / "memindex").exists(), "pip install did not give the venv's python3 a memindex command"
    [details] = [out for command, out in outputs if command.startswith("claude plugin details")]
    assert "Skills (2)  memory-save, memory-search" in details, details
    assert "Hooks (6)  UserPromptSubmit, PreToolUse, PostToolUse, SessionStart, Stop, SessionEnd" in details, details

    # the first prompt of the first session, nothing run by hand
    project = copy_demo(clone, tmp_path / "demo-project")
    assert not any((project / ".claude" / "memory").glob(".index*"))
    run = claude(project, FLAKY_PROMPT, script=[[text("ok")]], home=home, path_first=[venv / "bin"])
    [init] = [e for e in run.events if e.get("subtype") == "init"]
    [plugin] = [p for p in init["plugins"] if p["name"] == "memindex"]
    servers = {m["name"]: m["status"] for m in init.get("mcp_servers", [])}
    if os.environ.get("MEMINDEX_E2E_NETNS") != "1":  # the [mcp] extra was installed: the plugin's server runs
        assert any("memindex" in name and status == "connected" for name, status in servers.items()), servers
    assert Path(plugin["path"]).resolve() == clone.resolve(), "runs live from the directory it was installed from"
    blocks_now = memory_contexts(run.last_body, since_last_prompt=True)
    assert [b for _, b in blocks_now] == [shown.rstrip("\n")], (blocks_now, [h["stderr"] for h in run.hooks])
    assert blocks_now[0][0] == "system"
