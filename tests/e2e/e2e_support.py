"""Helpers of the end-to-end tests: the clean environment of the CLI, bounded subprocess
runs, one `claude -p` run's events, and readers of what the fake API received."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from fake_api import block_texts

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PINNED_CLAUDE = "2.1.197"  # the Claude Code version these tests document (.ci/run installs it)
RUN_TIMEOUT_S = 60  # one `claude` or `memindex` invocation
CLOSED_PORT_URL = "http://127.0.0.1:9"  # nothing listens there (the discard port)
FAKE_KEY = "sk-ant-e2e-fake-key"
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv*", "venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
    ".hypothesis", ".index.db*", ".index.lock", ".sync.spawned", ".memindex.log*", ".watch.pid",
    "index.md", "tests",
)


# --- environment and processes ----------------------------------------------------------------


def venv_bin() -> Path:
    """The bin directory of the Python running the tests: on the CLI's PATH (after the
    `memindex` shim, see use_source), so the hooks' `python3` is this environment's."""
    return Path(sys.executable).parent


_SHIM_BIN: list[Path] = []  # the folder of the `memindex` shim, once use_source ran


def use_source(source: Path, bin_dir: Path) -> Path:
    """A `memindex` command that runs the package of `source` (the copy under test) with
    the Python running the tests (its dependencies), first on the CLI's PATH and used by
    memindex() below: the Bash tool's `memindex` and the hooks then run the same tree,
    the copy, never the live checkout an editable install points to."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "memindex"
    shim.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(source)!r})\n"
        "from memindex.cli import main\n"
        "sys.exit(main())\n"
    )
    shim.chmod(0o755)
    _SHIM_BIN[:] = [bin_dir]
    return shim


def memindex_command() -> Path:
    return _SHIM_BIN[0] / "memindex" if _SHIM_BIN else venv_bin() / "memindex"


def base_env(home: Path, base_url: str = CLOSED_PORT_URL, path_first: list[Path] | None = None,
             **extra: str) -> dict[str, str]:
    """A clean environment for the CLI: nothing of the caller's is inherited but TMPDIR
    and XDG_STATE_HOME.
    PATH starts with `path_first` (default: the memindex shim, then the tests' Python)."""
    path = [str(p) for p in path_first] if path_first is not None else [*map(str, _SHIM_BIN), str(venv_bin())]
    for name in ("claude", "node", "npm"):
        found = shutil.which(name)
        if found and str(Path(found).parent) not in path:
            path.append(str(Path(found).parent))
    path += [p for p in ("/usr/local/bin", "/usr/bin", "/bin") if p not in path]
    env = {
        "PATH": os.pathsep.join(path),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "SHELL": shutil.which("bash") or "/bin/sh",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # anything that is not the fake API goes to a closed local port and fails at once
        "HTTP_PROXY": CLOSED_PORT_URL, "HTTPS_PROXY": CLOSED_PORT_URL,
        "http_proxy": CLOSED_PORT_URL, "https_proxy": CLOSED_PORT_URL,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    }
    if os.environ.get("TMPDIR"):
        env["TMPDIR"] = os.environ["TMPDIR"]
    if os.environ.get("XDG_STATE_HOME"):  # one record of the indexes memindex built (tests/conftest.py), whatever HOME is
        env["XDG_STATE_HOME"] = os.environ["XDG_STATE_HOME"]
    env.update(extra)
    return env


def run_bounded(cmd: list[str], env: dict[str, str], cwd: Path | None = None,
                timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
    """Run with a hard timeout; on timeout the whole process group is killed."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, text=True, start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"timed out after {timeout} s: {cmd}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def memindex(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The `memindex` command the Bash tool runs (of the tree under test, see use_source)."""
    proc = run_bounded([str(memindex_command()), "--root", str(project), *args], base_env(project), cwd=project)
    if check:
        assert proc.returncode == 0, f"memindex {' '.join(args)} exited {proc.returncode}: {proc.stderr}"
    return proc


def search_paths(project: Path, query: str, *args: str) -> list[str]:
    """Paths `memindex search --no-sync --json` finds (the index as it is: no sync first)."""
    out = memindex(project, "search", "--no-sync", "--json", *args, "--", query).stdout
    return [hit["path"] for hit in json.loads(out or "[]")]


def found_within(project: Path, query: str, path: str, seconds: float) -> float | None:
    """How long after now `search --no-sync` first finds `path` for `query`, or None if it
    does not within `seconds`."""
    started = time.monotonic()
    while True:
        if path in search_paths(project, query):
            return time.monotonic() - started
        if time.monotonic() - started > seconds:
            return None
        time.sleep(0.05)


def quiet_since(root: Path, since_ns: int) -> bool:
    """Has SessionStart's background sync been started after `since_ns` (the spawn marker,
    `.sync.spawned`, touched when the hook starts it: Claude Code may send the first request
    before the SessionStart hook has run), and has a full sync finished after that (the
    index's `last_sync_ns`), with no `memindex ... sync` of this root running now, nor the
    background `review --refresh` SessionStart may start (it syncs before it reads)?
    (Linux: /proc.)"""
    import sqlite3

    try:
        spawned_ns = (root / ".sync.spawned").stat().st_mtime_ns
    except OSError:
        return False
    if spawned_ns <= since_ns:
        return False
    try:
        conn = sqlite3.connect(f"file:{root / '.index.db'}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'last_sync_ns'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    if row is None or int(json.loads(row[0]) if isinstance(row[0], str) else row[0]) <= spawned_ns:
        return False
    needle = str(root).encode()
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (b"sync" in args or b"review" in args) and any(a.startswith(needle) for a in args):
            return False
    return True


def copy_demo(source: Path, dest: Path) -> Path:
    """A fresh copy of examples/demo-project, without any index."""
    shutil.copytree(source / "examples" / "demo-project", dest, ignore=COPY_IGNORE)
    return dest


T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


# --- one run of the CLI -----------------------------------------------------------------------


@dataclass
class Run:
    """One `claude -p --output-format stream-json --verbose --include-hook-events` run: its
    events and the /v1/messages requests the fake API received meanwhile."""

    proc: subprocess.CompletedProcess
    events: list[dict]
    requests: list[dict]
    home: Path

    @property
    def main_requests(self) -> list[dict]:
        """The conversation's requests (they carry the tools), in order."""
        return [r for r in self.requests if r["body"].get("tools")]

    @property
    def last_body(self) -> dict:
        assert self.main_requests, f"the model was never called; stderr: {self.proc.stderr[-2000:]}"
        return self.main_requests[-1]["body"]

    @property
    def hooks(self) -> list[dict]:
        """hook_response events: hook_name, hook_event, exit_code, outcome, stdout, stderr."""
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") == "hook_response"]

    def hook(self, event: str) -> list[dict]:
        return [h for h in self.hooks if h.get("hook_event") == event]

    @property
    def result(self) -> dict:
        results = [e for e in self.events if e.get("type") == "result"]
        assert results, f"no result event; stdout: {self.proc.stdout[-3000:]} stderr: {self.proc.stderr[-3000:]}"
        return results[-1]

    @property
    def session_id(self) -> str:
        return self.result["session_id"]

    @property
    def denials(self) -> list[dict]:
        """Tool calls refused by the permission system (the result's permission_denials)."""
        return self.result.get("permission_denials") or []

    @property
    def transcript(self) -> Path:
        found = list((self.home / ".claude" / "projects").glob(f"*/{self.session_id}.jsonl"))
        assert len(found) == 1, found
        return found[0]

    def transcript_entries(self) -> list[dict]:
        return [json.loads(line) for line in self.transcript.read_text().splitlines() if line.strip()]

    def tool_results(self) -> list[dict]:
        """The tool_result blocks of the last request, each with its `text`."""
        from fake_api import tool_results

        return tool_results(self.last_body)


def parse_events(stdout: str) -> list[dict]:
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
    return events


# --- reading requests -------------------------------------------------------------------------

CONTEXT_RE = re.compile(r'<memory-context source="[^"]*">\n.*?</memory-context>', re.S)


def message_texts(body: dict) -> list[tuple[int, str, str]]:
    """(message index, role, text) of every text piece of a request's messages (text
    blocks, string contents such as the `system` role's, tool_result texts)."""
    out = []
    for i, message in enumerate(body.get("messages", ())):
        for text in block_texts(message.get("content")):
            out.append((i, message.get("role", ""), text))
    return out


def prompt_indexes(body: dict) -> list[int]:
    """Indexes of the user messages that carry a user prompt (a text block that is not a
    <system-reminder>, or a string), not only tool results."""
    out = []
    for i, message in enumerate(body.get("messages", ())):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str) or any(
            isinstance(b, dict) and b.get("type") == "text" and not b.get("text", "").lstrip().startswith("<system-reminder>")
            for b in content or ()
        ):
            out.append(i)
    return out


def memory_contexts(body: dict, since_last_prompt: bool = False) -> list[tuple[str, str]]:
    """Every `<memory-context ...>` block in a request's messages, as (role, text around
    it: the block with what precedes it on its line). With `since_last_prompt`, only the
    blocks sent after the last user prompt (i.e. for this turn)."""
    texts = message_texts(body)
    if since_last_prompt:
        prompts = prompt_indexes(body)
        start = prompts[-1] if prompts else 0
        texts = [t for t in texts if t[0] >= start]
    out = []
    for _, role, text in texts:
        for m in CONTEXT_RE.finditer(text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            out.append((role, text[line_start:m.end()]))
    return out
