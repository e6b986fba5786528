"""Hostile memory roots (issue 15): memindex's own files in the root replaced by links,
FIFOs, folders, /dev/zero and other users' files; untrusted roots; bounded parsing.

A memory root is untrusted input: a cloned repository can carry anything under
`.claude/memory/`. For each special file memindex opens or creates there, and each kind
of hostile stand-in, every command runs once (the hooks as Claude Code runs them, the CLI,
`watch` for about a second) and is judged:

- nothing outside the root is written, truncated, created or deleted (a sentinel file,
  the target of a dangling link), and the planted object itself is left as it was
  (refused, never followed, replaced or deleted);
- no hang: every command and every background sync the hooks start ends within its
  budget; every command runs under a 2 GiB address-space limit (a runaway read fails
  instead of taking the machine);
- no traceback and no "internal error"; a command that fails exits with a README code and
  one `memindex: ...` line; the hook exits 0 with at most one stderr line, and never falls
  silent without one (no answer for a prompt that names a memory = a line saying why).

The other categories (untrusted roots, bounded parsing, tag bombs, damaged index and
streams) are in `hostile_inputs`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import stat
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from memindex.config import load_config
from memindex.defaults import (
    CONFIG_FILE,
    INDEX_FILE,
    INDEX_MD,
    LOCK_FILE,
    LOG_FILE,
    QUEUE_FILE,
    SPAWN_MARKER,
    WAIT_FILE,
    WATCH_MARKER,
)
from memindex.index.sync import sync

from .harness import Context, Project, Row
from .judge import cli_problems, hook_problems, prompt_payload
from .memories import NonceWords, Target, dump, new_target
from .procs import HANG_S, NOBODY, PY, Result, preexec, run, signal_all

SPECIAL_FILES = (
    INDEX_FILE, INDEX_FILE + "-wal", INDEX_FILE + "-shm", LOCK_FILE, WATCH_MARKER, SPAWN_MARKER, WAIT_FILE, QUEUE_FILE, LOG_FILE,
    INDEX_MD, CONFIG_FILE,
)
KINDS = ("link", "dangling", "fifo", "dir", "devzero", "foreign")
KIND_TEXT = {
    "link": "symlink to a sentinel outside the root", "dangling": "dangling symlink out of the root", "fifo": "FIFO",
    "dir": "directory", "devzero": "symlink to /dev/zero", "foreign": "file owned by uid 65534",
}
COMMANDS = ("hook prompt", "hook session-start", "hook post-tool-use", "sync", "search", "status", "validate", "watch")
_HOOKS = ("hook prompt", "hook session-start", "hook post-tool-use")
# The commands that open each file (directly or through the background sync a hook
# starts): --quick runs only these, and `watch` only for the files marked with it.
USERS: dict[str, tuple[str, ...]] = {
    INDEX_FILE: (*_HOOKS, "sync", "search", "status"),
    INDEX_FILE + "-wal": (*_HOOKS, "sync", "search", "status"),
    INDEX_FILE + "-shm": (*_HOOKS, "sync", "search", "status"),
    LOCK_FILE: (*_HOOKS, "sync"),
    WATCH_MARKER: (*_HOOKS, "status", "watch"),
    SPAWN_MARKER: ("hook prompt", "hook session-start"),
    WAIT_FILE: ("hook post-tool-use",),
    QUEUE_FILE: ("hook post-tool-use",),
    LOG_FILE: _HOOKS,
    INDEX_MD: ("hook post-tool-use", "sync"),
    CONFIG_FILE: COMMANDS,
}
MEMORY_LIMIT = 2 * 1024**3  # RLIMIT_AS of every command (and what it starts)
CLI_BUDGET_S = 10.0
BACKGROUND_BUDGET_S = 10.0
WATCH_S = 1.0
SENTINEL = b"sentinel: not memindex's file\n"
FOREIGN = b"another user's file\n"


# --- processes ------------------------------------------------------------------------------


_SCAN: dict[str, object] = {"at": 0.0, "cmdlines": []}
_SCAN_LOCK = threading.Lock()


def _cmdlines(max_age: float = 0.05) -> list[tuple[int, bytes]]:
    """(pid, command line) of every process, shared by the cells running in parallel (one
    scan of /proc per `max_age` seconds, not one per cell)."""
    with _SCAN_LOCK:
        if time.monotonic() - float(_SCAN["at"]) > max_age:  # type: ignore[arg-type]
            me = os.getpid()
            found = []
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit() or int(entry.name) == me:
                    continue
                try:
                    with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                        found.append((int(entry.name), fh.read()))
                except OSError:
                    continue
            _SCAN["cmdlines"], _SCAN["at"] = found, time.monotonic()
        return list(_SCAN["cmdlines"])  # type: ignore[call-overload]


def processes_of(needle: str, max_age: float = 0.05) -> list[int]:
    """Live processes whose command line mentions `needle` (a project's path): the
    background syncs the hooks started for it."""
    want = needle.encode()
    return [pid for pid, cmdline in _cmdlines(max_age) if want in cmdline]


def wait_background(needle: str, budget: float = BACKGROUND_BUDGET_S) -> list[int]:
    """Wait until no process works on `needle`; the pids still running after `budget`
    (killed, by pid, then reported)."""
    deadline = time.monotonic() + budget
    left = processes_of(needle, 0.0)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = processes_of(needle)
    signal_all(left, signal.SIGKILL)
    return left


# --- payloads and commands --------------------------------------------------------------------


def session_payload(project: Path) -> bytes:
    return json.dumps({"session_id": "hostile", "cwd": str(project), "hook_event_name": "SessionStart",
                       "source": "startup", "transcript_path": None}).encode()


def post_tool_payload(project: Path, file_path: Path) -> bytes:
    return json.dumps({"session_id": "hostile", "cwd": str(project), "hook_event_name": "PostToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": str(file_path), "content": "{}"}, "transcript_path": None}).encode()


def hook(event: str, payload: bytes, cwd: Path, python: str = PY) -> Result:
    from .procs import hook_argv

    return run(hook_argv(event, python), input=payload, timeout=HANG_S + 5, cwd=cwd, memory=MEMORY_LIMIT)


def cli(argv: list[str], cwd: Path, timeout: float = CLI_BUDGET_S + 5) -> Result:
    return run(argv, timeout=timeout, cwd=cwd, memory=MEMORY_LIMIT)


def watch_briefly(proj: Project, seconds: float = WATCH_S) -> Result:
    """`memindex watch` for about `seconds` once it has started (its `start` record), then
    SIGTERM; a watcher that does not stop within 5 s more is killed and reported."""
    from .procs import ENV

    argv = proj.argv("watch", "--polling", "--interval", "0.2", "--json")
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=preexec(False, None, MEMORY_LIMIT), env=ENV, cwd=proj.project)
    up = threading.Event()
    err_chunks: list[bytes] = []

    def read_out() -> None:
        for line in proc.stdout:
            if b'"event": "start"' in line:
                up.set()
        up.set()

    def read_err() -> None:
        err_chunks.append(proc.stderr.read())

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for t in readers:
        t.start()
    up.wait(15)
    if proc.poll() is None:
        time.sleep(seconds)
        proc.send_signal(signal.SIGTERM)
    timed_out = False
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        timed_out = True
    for t in readers:
        t.join(5)
    proc.stdout.close()
    proc.stderr.close()
    err = b"".join(err_chunks).decode("utf-8", "replace")
    return Result(argv, None if timed_out else proc.returncode, "", err, time.monotonic() - started, timed_out)


def bump_folders(root: Path) -> None:
    """Make the index look stale to the prompt hook's O(1) check (a category folder's
    mtime moves), so the hook takes its background-sync path too."""
    later = time.time_ns() + 1_000_000_000
    os.utime(root / "decisions", ns=(later, later))


# --- planting -------------------------------------------------------------------------------------


def identity(path: Path) -> tuple | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, stat.S_IFMT(st.st_mode), st.st_uid, st.st_mtime_ns, st.st_size)


def content(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
        return (path.read_bytes(), st.st_mtime_ns, st.st_uid)
    except FileNotFoundError:
        return None


def sqlite_sentinel(path: Path) -> None:
    """Another application's SQLite database (a single file: rollback journal)."""
    conn = sqlite3.connect(str(path))
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("CREATE TABLE precious(x TEXT)")
        conn.execute("INSERT INTO precious VALUES ('keep me')")
        conn.commit()
    finally:
        conn.close()


@dataclass
class Planted:
    """A hostile stand-in for one of memindex's files, and what must stay as it is."""

    path: Path
    kind: str
    outside: Path  # the sentinel (link) or the path a dangling link names
    ident: tuple | None = None
    sentinel: tuple | None = None
    inside: dict[str, bytes] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.path.name} as {KIND_TEXT[self.kind]}"

    def problems(self) -> list[str]:
        out = []
        if identity(self.path) != self.ident and not self._lock_replaced():
            now = identity(self.path)
            what = "removed" if now is None else "replaced or modified"
            out.append(f"{self.label}: the planted object was {what}")
        if self.kind == "link" and content(self.outside) != self.sentinel:
            out.append(f"{self.label}: the sentinel outside the root was written, truncated or deleted")
        if self.kind == "dangling" and os.path.lexists(self.outside):
            out.append(f"{self.label}: the dangling link's target was created outside the root")
        if self.kind == "dir":
            folder = self.path if self.path.is_dir() and not self._lock_replaced() else self._moved_aside()
            have = {p.name: p.read_bytes() for p in folder.iterdir()} if folder and folder.is_dir() else {}
            if have != self.inside:
                out.append(f"{self.label}: the folder's contents changed")
        return out

    def _lock_replaced(self) -> bool:
        """A lock path that is not this user's regular file is replaced (issue 24: never a
        reason to stop syncing): now a regular file of ours, the object planted there gone
        (a link itself, never its target; a folder moved aside, its contents kept)."""
        if self.path.name not in (LOCK_FILE, WAIT_FILE):
            return False
        try:
            st = os.lstat(self.path)
        except OSError:
            return self.kind != "dir" or self._moved_aside() is not None
        return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()

    def _moved_aside(self) -> Path | None:
        found = sorted(self.path.parent.glob(self.path.name + ".moved-aside-*"))
        return found[-1] if found else None


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def plant(root: Path, name: str, kind: str, outside: Path) -> Planted:
    """Put a `kind` stand-in at `<root>/<name>` (removing what memindex made there)."""
    path = root / name
    if name.startswith(INDEX_FILE):  # a lone -wal or -shm: let SQLite fold what it has first
        for suffix in ("-wal", "-shm", "-journal"):
            remove(root / (INDEX_FILE + suffix))
    good_index = (root / INDEX_FILE).read_bytes() if name == INDEX_FILE and (root / INDEX_FILE).is_file() else None
    remove(path)
    outside.mkdir(parents=True, exist_ok=True)
    target = outside / f"{name.strip('.')}-{kind}"
    planted = Planted(path, kind, target)
    if kind == "link":
        if name.startswith(INDEX_FILE):
            sqlite_sentinel(target)
        else:
            target.write_bytes(SENTINEL)
        os.symlink(target, path)
        planted.sentinel = content(target)
    elif kind == "dangling":
        os.symlink(target, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
        (path / "keep").write_bytes(b"keep")
        planted.inside = {"keep": b"keep"}
    elif kind == "devzero":
        os.symlink("/dev/zero", path)
    elif kind == "foreign":
        path.write_bytes(good_index if good_index is not None else FOREIGN)
        os.chown(path, NOBODY, NOBODY)
    else:
        raise ValueError(kind)
    planted.ident = identity(path)
    return planted


# --- one cell: a special file x a kind, every command --------------------------------------------


@dataclass
class Cell:
    name: str
    kind: str
    runs: int = 0
    problems: list[str] = field(default_factory=list)
    slowest: float = 0.0
    refused_lines: int = 0


# failure classes of the table, by what a problem's text says
CLASSES = {
    "written": ("sentinel", "planted object", "target was created", "contents changed", "outside the root was written",
                "untrusted root was modified", "index.md was rewritten"),
    "hang": ("hung", "no answer after", "took ", "still running", "did not stop", "did not finish"),
    "traceback": ("traceback", "internal error"),
    "hook exit": ("exit -", "exit 1", "exit 2", "exit 120"),
    "no line": ("stderr line", "without a", "expected one", "expected exit"),
}


def classify(problems: list[str]) -> str:
    """`written 0, hangs 0, ...`: how many problems of each class (the rest: other)."""
    counts = dict.fromkeys(CLASSES, 0)
    other = 0
    for p in problems:
        text = p.lower()
        kind = next((k for k, words in CLASSES.items() if any(w in text for w in words)), None)
        if kind is None:
            other += 1
        else:
            counts[kind] += 1
    out = (f"outside/planted files changed {counts['written']}, hangs {counts['hang']}, tracebacks {counts['traceback']}, "
           f"hook exit != 0 {counts['hook exit']}, refusals without their line {counts['no line']}")
    return out + (f", other {other}" if other else "")


def judge_hook_call(res: Result, root: Path, label: str, target: Target | None) -> list[str]:
    problems = hook_problems(res, root, name=label)
    if target is not None and not problems and target.shown not in res.out and not res.err_lines():
        problems.append(f"{label}: no answer and no stderr line saying why")
    return problems


def run_cell(ctx: Context, name: str, kind: str, index: int, target: Target, commands: tuple[str, ...]) -> Cell:
    cell = Cell(name, kind)
    proj = Project(ctx, f"hostile-{index:02d}-{kind}", n_fill=12, targets=[target], seed=ctx.seed + index)
    sync(proj.root, load_config(proj.root))
    outside = proj.dir / "outside"
    planted = plant(proj.root, name, kind, outside)
    needle = str(proj.project)
    for i, command in enumerate(commands):
        label = f"{planted.label}: {command}"
        if name == INDEX_MD:  # a new memory: its line makes the next writer rewrite index.md
            extra = new_target(NonceWords(random.Random(index * 100 + i)), random.Random(i), category="runbook")
            (proj.root / extra.rel).write_bytes(dump(extra.doc()))
        if command == "hook prompt":
            bump_folders(proj.root)
            res = hook("prompt", prompt_payload(proj.project, target.prompt), proj.project)
            found = judge_hook_call(res, proj.root, label, target)
        elif command == "hook session-start":
            res = hook("session-start", session_payload(proj.project), proj.project)
            found = judge_hook_call(res, proj.root, label, None)
        elif command == "hook post-tool-use":
            (proj.root / target.rel).write_bytes((proj.root / target.rel).read_bytes())
            res = hook("post-tool-use", post_tool_payload(proj.project, proj.root / target.rel), proj.project)
            found = judge_hook_call(res, proj.root, label, None)
        elif command == "watch":
            res = watch_briefly(proj)
            found = [f"{label}: did not stop within 5 s of SIGTERM"] if res.timed_out else []
            if "Traceback" in res.err or "internal error" in res.err:
                found.append(f"{label}: traceback or internal error: {res.last_err()}")
            if res.rc not in (0, 1, None):
                found.append(f"{label}: exit {res.rc}")
            if res.rc == 1 and not res.last_err().startswith("memindex: "):
                found.append(f"{label}: exit 1 without a 'memindex: ...' line")
        else:
            args = {"sync": ["sync"], "search": ["search", "--", target.prompt], "status": ["status"],
                    "validate": ["validate"]}[command]
            res = cli(proj.argv(*args), proj.project)
            found = [f"{planted.label}: {p}" for p in cli_problems(res, command, ok=(0, 1) if command == "validate" else (0,))]
            if "internal error" in res.err:
                found.append(f"{label}: internal error: {res.last_err()}")
            if not found and res.elapsed > CLI_BUDGET_S:
                found.append(f"{label}: took {res.elapsed:.1f} s")
            if not found and name == CONFIG_FILE and CONFIG_FILE not in res.err:
                found.append(f"{label}: exit {res.rc} without a line about the refused config")
        cell.runs += 1
        cell.slowest = max(cell.slowest, res.elapsed)
        cell.refused_lines += int(any("does not use it" in line for line in res.err_lines()))
        left = wait_background(needle)
        if left:
            found.append(f"{label}: {len(left)} background process(es) still running after {BACKGROUND_BUDGET_S:g} s")
        changed = planted.problems()
        if changed:
            found += [f"{p} (by {command})" for p in changed]
            planted = plant(proj.root, name, kind, outside)
        cell.problems += found
    return cell


def special_files(ctx: Context) -> None:
    rng_words = NonceWords(random.Random(ctx.seed + 150))
    rng = random.Random(ctx.seed + 151)
    cells = []
    jobs = []
    foreign_ok = os.geteuid() == 0
    kinds = [k for k in KINDS if k != "foreign" or foreign_ok]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for i, name in enumerate(SPECIAL_FILES):
            for j, kind in enumerate(kinds):
                target = new_target(rng_words, rng, category="decision")
                commands = USERS[name] if ctx.quick else COMMANDS
                jobs.append(pool.submit(run_cell, ctx, name, kind, i * 10 + j, target, commands))
        for job in jobs:
            cells.append(job.result())
    for name in SPECIAL_FILES:
        mine = [c for c in cells if c.name == name]
        runs = sum(c.runs for c in mine)
        problems = [p for c in mine for p in c.problems]
        slowest = max((c.slowest for c in mine), default=0.0)
        refused = sum(c.refused_lines for c in mine)
        commands = USERS[name] if ctx.quick else COMMANDS
        figures = (f"{len(mine)} kinds x {len(commands)} commands; {classify(problems)}; slowest {slowest:.1f} s; "
                   f"refusals named on stderr: {refused}")
        row = Row(f"hostile root: {name} ({', '.join(k for k in kinds)})", runs=runs, failures=len(problems),
                  figures=figures, problems=problems)
        if not foreign_ok:
            row.note = "uid 65534 files skipped: not root"
        ctx.special_runs += runs
        ctx.add(row)


def scenario_hostile(ctx: Context) -> None:
    from .cloned import cloned_repository
    from .hostile_capture import capture_attacks
    from .hostile_inputs import bounded_parsing, damaged_and_streams, tag_bombs, untrusted_roots
    from .hostile_store import clients_dates_umask
    from .hostile_trust import trust_config_secrets_lookalikes

    special_files(ctx)
    untrusted_roots(ctx)
    cloned_repository(ctx)
    bounded_parsing(ctx)
    tag_bombs(ctx)
    damaged_and_streams(ctx)
    trust_config_secrets_lookalikes(ctx)
    capture_attacks(ctx)
    clients_dates_umask(ctx)
