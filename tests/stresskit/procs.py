"""Running memindex and its hook as processes (as root or as uid 65534), and cleaning up."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from memindex import hook as hook_mod
from memindex_dev.evaluation.bench import hook_command

REPO = Path(__file__).resolve().parents[2]  # the repository: hooks/, memindex/
HOOK = REPO / "hooks" / "memindex_hook.py"
BUDGET_S = hook_mod.BUDGET_S
HANG_S = BUDGET_S + 2.0  # a hook process may take its budget plus interpreter start-up
PY = sys.executable
NOBODY = 65534
DISPLAY = ".claude/memory/"
FAIL_EXITS = (1, 3, 4, 5)  # what a command may exit with when it reports a problem

def make_env(extra: Iterable[str] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *extra])
    return env


ENV = make_env()


def hook_argv(event: str = "prompt", python: str = PY) -> list[str]:
    """The command exactly as hooks/hooks.json gives it to Claude Code, `python3` being
    the interpreter memindex is installed for."""
    return hook_command(REPO, event, python)

@dataclass
class Result:
    cmd: list[str]
    rc: int | None
    out: str
    err: str
    elapsed: float
    timed_out: bool = False

    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

    def last_err(self) -> str:
        lines = self.err_lines()
        return lines[-1][:160] if lines else ""


def preexec(user: bool, fsize: int | None, memory: int | None = None) -> Callable[[], None] | None:
    """What the child does before exec: limits (file size, address space: `memory` bytes,
    inherited by whatever it starts), then the switch to uid 65534."""
    if not user and fsize is None and memory is None:
        return None

    def run_in_child() -> None:
        import resource

        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if user and os.geteuid() == 0:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)

    return run_in_child


def run(
    cmd: list[str],
    *,
    input: bytes | None = None,
    timeout: float = 60.0,
    user: bool = False,
    fsize: int | None = None,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    memory: int | None = None,
) -> Result:
    started = time.monotonic()
    try:
        proc = subprocess.run(
            cmd, input=input if input is not None else b"", capture_output=True, timeout=timeout,
            preexec_fn=preexec(user, fsize, memory), env=env or ENV, cwd=cwd,
        )
        rc, out, err, timed_out = proc.returncode, proc.stdout, proc.stderr, False
    except subprocess.TimeoutExpired as exc:
        rc, out, err, timed_out = None, exc.stdout or b"", exc.stderr or b"", True
    except OSError as exc:  # could not even start it (e.g. the interpreter is unreachable)
        rc, out, err, timed_out = None, b"", f"cannot start {cmd[0]}: {exc}".encode(), False
    return Result(
        list(map(str, cmd)), rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
        time.monotonic() - started, timed_out,
    )


class Unprivileged:
    """How to run memindex as uid 65534 when we are root (root ignores permission bits).

    The interpreter must be reachable by that user: this one if it is, else the system
    python of the same version with this environment's site-packages on PYTHONPATH."""

    def __init__(self) -> None:
        self.python: str | None = None
        self.env: dict[str, str] = ENV
        self.why = ""
        self._done = False

    def ready(self) -> bool:
        if self._done:
            return self.python is not None
        self._done = True
        if os.geteuid() != 0:
            self.python, self.env = PY, ENV  # already unprivileged: permission bits apply
            return True
        sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
        env = make_env(sites)
        major, minor = sys.version_info[:2]
        probe = (
            "import sqlite3, filelock, memindex; "
            "sqlite3.connect(':memory:').execute(\"create virtual table t using fts5(x)\")"
        )
        for candidate in (PY, f"/usr/bin/python{major}.{minor}", f"/usr/local/bin/python{major}.{minor}"):
            if not os.path.exists(candidate):
                continue
            res = run([candidate, "-c", probe], user=True, env=env, timeout=30, cwd="/")
            if res.rc == 0:
                self.python, self.env = candidate, env
                return True
        self.why = "no interpreter usable by uid 65534"
        return False


UNPRIV = Unprivileged()


def signal_all(pids: Iterable[int], sig: int) -> None:
    """Send `sig` to each process; one gone already is fine."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def chown_tree(path: Path, uid: int = NOBODY) -> None:
    if os.geteuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(path):
        os.chown(dirpath, uid, uid)
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def unlink(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def remove_tree(path: Path) -> None:
    """Delete a scratch tree, also when background syncs the hook started are still
    writing into it for a moment."""
    for _ in range(10):
        _make_removable(path)
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.3)


def _make_removable(path: Path) -> None:
    for dirpath, dirnames, _ in os.walk(path):
        for d in dirnames:
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                continue
            try:
                os.chmod(full, 0o755)
            except OSError:
                pass
    try:
        os.chmod(path, 0o755)
    except OSError:
        pass
