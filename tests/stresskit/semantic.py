"""Scenario "semantic": the optional semantic channel under faults, with the stand-in model
`builtin:hashing` (no download): kill -9 of the resident worker while prompt hooks run and
of a sync mid-embedding, a corrupt or mismatched vector table, a missing model and a model
that fails to load.

The target (the issue's acceptance point): each fault gives one clear line and lexical
answers, never a failed prompt. Everything runs as real processes (the hooks exactly as
hooks/hooks.json runs them, the CLI, `memindex serve`), with a private XDG_RUNTIME_DIR
(mode 0700, short: socket paths are limited) so no real worker socket is touched. Judged:

- hook: exit 0 within its budget, stdout exactly the lexical answer (the same prompt with
  `semantic.enabled` false) or, where a worker answers, the answer a healthy worker gives
  (the policy may use its view), at most one `memindex hook: ` line on stderr, no
  traceback;
- search: exit 0 with the memory the query names listed, no traceback, every stderr line a
  `memindex: ` line and at most one of them about the semantic channel (mentioning
  semantic/model/vector/embed); while the channel is degraded and the search did not
  repair it, exactly one, and one that says what is wrong (not only "no semantic worker");
- sync: exit 0; the text is indexed; after the fault is gone (or the next sync), every
  memory has a vector, labelled with the model's identity, equal to the model's
  embedding of its text (no half-written or stale vector survives);
- serve: a worker that cannot load its model exits 1 (README) with one line and backs off
  (the hooks do not start it again every few seconds);
- processes: after a kill, the next `memindex serve` / SessionStart / prompt starts one
  fresh worker (a stale socket and pid file do not block it); a worker stops on SIGTERM;
  at the end no `memindex serve` rooted in the run's folders is left.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memindex.defaults import INDEX_FILE, LOCK_FILE, LOG_FILE, SERVE_MARKER, SERVE_SPAWN_MARKER, SPAWN_GUARD_S

from .harness import Context, Project, Row, pct
from .judge import cli_problems, hook_problems
from .kills import mutate
from .memories import CATEGORY_LIST, NonceWords, Target, dump, new_target
from .procs import ENV, HANG_S, Result, hook_argv, run, signal_all

MODEL = "builtin:hashing"
CHANNEL = re.compile(r"semantic|model|vector|embed", re.IGNORECASE)  # a stderr line about the channel
INFO_LINE = "no semantic worker: loaded the model in this process"  # search's notice when all is well
READY_S = 10.0  # a worker (the stand-in model: no weights) answers its first ping within this
STOP_S = 5.0  # a worker stops this long after SIGTERM


# --------------------------------------------------------------------------------------
# processes, the private runtime folder, the project
# --------------------------------------------------------------------------------------


@contextmanager
def private_runtime() -> Iterator[str]:
    """A short private XDG_RUNTIME_DIR (0700) for the worker sockets, also set in this
    process (the in-process client finds the sockets there)."""
    base = tempfile.mkdtemp(prefix="mi", dir="/tmp")
    os.chmod(base, 0o700)
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = base
    try:
        yield base
    finally:
        if before is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = before
        shutil.rmtree(base, ignore_errors=True)


def proc_state(pid: int) -> str | None:
    """The state letter of a process (None: gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("utf-8", "replace")
        return data[data.rindex(")") + 2:].split()[0]
    except (OSError, ValueError, IndexError):
        return None


def alive(pid: int) -> bool:
    state = proc_state(pid)
    return state is not None and state not in "ZX"


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)


def serve_processes(under: Path) -> dict[int, str]:
    """Live `memindex ... serve` processes whose command line names a path under `under`."""
    found: dict[int, str] = {}
    prefix = str(under)
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                args = fh.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if "serve" in args and "memindex" in args and any(a.startswith(prefix) for a in args) and alive(int(name)):
            found[int(name)] = " ".join(a for a in args if a)
    return found


class SemProject(Project):
    """A project with the semantic channel on (the stand-in model), run with the private
    runtime folder; knows the workers it started itself."""

    def __init__(self, ctx: Context, name: str, runtime: str, n_fill: int, targets: list[Target], seed: int,
                 **semantic: Any) -> None:
        super().__init__(ctx, name, n_fill=n_fill, targets=targets, seed=seed)
        # the semantic settings are the user's own (a project's config cannot turn a model on):
        # a config folder of this project's processes alone
        self.env = dict(ENV, XDG_RUNTIME_DIR=runtime, XDG_CONFIG_HOME=str(self.dir / "xdg-config"))
        self.semantic = {"enabled": True, "model": MODEL, "idle_exit_s": 60, **semantic}
        self.configure()
        self.children: list[subprocess.Popen] = []

    def configure(self, **over: Any) -> None:
        path = self.dir / "xdg-config" / "memindex" / "config.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"semantic": {**self.semantic, **over}}))
        tmp.replace(path)  # a worker reading it meanwhile sees the old or the new, never half

    def lexical(self, prompt: str) -> Result:
        """The hook's answer with the semantic channel off: what every answer must equal."""
        self.configure(enabled=False)
        try:
            return self.hook(prompt)
        finally:
            self.configure()

    def event(self, event: str) -> Result:
        payload = json.dumps({"session_id": "stress", "cwd": str(self.project), "hook_event_name": "SessionStart",
                              "source": "startup"}).encode()
        return run(hook_argv(event), input=payload, timeout=HANG_S + 10, env=self.env, cwd=self.project)

    def serve(self, *args: str) -> subprocess.Popen:
        with open(self.dir / "serve.err", "ab") as log:
            proc = subprocess.Popen(self.argv("serve", *args), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=log, env=self.env, cwd=self.project)
        self.children.append(proc)
        return proc

    def reap(self) -> None:
        for proc in self.children:
            if proc.poll() is None and not alive(proc.pid):
                proc.wait()
        self.children = [p for p in self.children if p.poll() is None]

    def ping(self, budget_s: float = 0.5) -> dict | None:
        from memindex.semantic import client

        return client.ping(self.root, budget_s)

    def wait_ready(self, timeout: float = READY_S, not_pid: int | None = None) -> dict | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = self.ping(0.3)
            if info is not None and info.get("pid") != not_pid:
                return info
            time.sleep(0.05)
        return None

    def socket(self) -> str:
        from memindex.semantic import client

        return client.socket_path(self.root)

    def workers(self) -> dict[int, str]:
        return serve_processes(self.dir)

    def stop_workers(self) -> list[str]:
        """SIGTERM every worker of this project; each must be gone within STOP_S and take
        its socket and pid file with it. Returns the problems."""
        problems = []
        stopped = False
        for _ in range(3):  # a hook may have started one more meanwhile
            pids = self.workers()
            if not pids:
                break
            stopped = True
            signal_all(pids, signal.SIGTERM)
            for pid in pids:
                if not wait_gone(pid, STOP_S):
                    problems.append(f"worker {pid} still running {STOP_S:g} s after SIGTERM")
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    wait_gone(pid, 2.0)
            self.reap()
        time.sleep(0.05)
        if stopped and not self.workers() and os.path.exists(self.socket()):
            problems.append(f"stopped worker left its socket {self.socket()}")
        self.reap()
        return problems

    def guard(self, age_s: float | None) -> None:
        """Set the hooks' worker-start guard: `None` = just now (no hook starts a worker
        for SPAWN_GUARD_S), else as if the last start was `age_s` ago."""
        path = self.root / SERVE_SPAWN_MARKER
        when = time.time() - (age_s or 0.0)
        if not path.exists():
            path.write_bytes(b"")
        os.utime(path, (when, when))

    def corrupt(self, sql: list[tuple[str, tuple]]) -> None:
        """Change the index directly (as a damaged disk or another program would), holding
        memindex's writer lock so no sync is half-way; the vectors' stamp is moved so that
        a running worker reloads."""
        from filelock import FileLock

        with FileLock(str(self.root / LOCK_FILE), timeout=30):
            conn = sqlite3.connect(str(self.root / INDEX_FILE), isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                for statement, args in sql:
                    conn.execute(statement, args)
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_version', ?)",
                             (json.dumps(time.time_ns()),))
                conn.execute("COMMIT")
            finally:
                conn.close()


def targets_for(rng: random.Random, n: int = 4) -> list[Target]:
    words = NonceWords(rng)
    return [new_target(words, rng, category=CATEGORY_LIST[i % len(CATEGORY_LIST)]) for i in range(n)]


# --------------------------------------------------------------------------------------
# judging
# --------------------------------------------------------------------------------------


class Checks:
    """Judged steps of one row: runs, failed steps, their problems (a harness step that
    goes wrong counts as a failure too)."""

    def __init__(self) -> None:
        self.runs = 0
        self.failed = 0
        self.problems: list[str] = []

    def add(self, found: list[str]) -> None:
        self.runs += 1
        self.failed += bool(found)
        self.problems += found

    def setup(self, found: list[str]) -> None:
        if found:
            self.failed += 1
            self.problems += found


def hook_judge(res: Result, proj: Project, answers: list[Result], name: str, notes: list[str] | None = None) -> list[str]:
    """The hook's usual checks, plus: exactly one of `answers` (the lexical answer, and the
    answer with a healthy worker where the policy uses the worker's view)."""
    problems = hook_problems(res, proj.root, name=name)
    if res.rc == 0 and not res.timed_out and all(res.out != a.out for a in answers):
        other = "" if len(answers) == 1 else " nor a healthy worker's"
        problems.append(f"{name}: answer is not the lexical one{other}: "
                        f"{res.out[:160]!r} (stderr {res.last_err()!r}) instead of {answers[0].out[:160]!r}")
    if notes is not None and res.err.strip():
        notes.append(res.last_err())
    return problems


def channel_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and CHANNEL.search(line)]


def says_what_is_wrong(line: str) -> bool:
    """A notice about the degraded channel, not only "no worker, loaded the model here"."""
    return INFO_LINE not in line or "no vector" in line or "damaged" in line


def search_judge(res: Result, target: Target, name: str, must_say: bool) -> list[str]:
    """Exit 0 with the named memory listed; no traceback; stderr only `memindex: ` lines,
    at most one about the semantic channel; exactly one that says what is wrong when
    `must_say` (the channel is degraded and the search did not repair it)."""
    if res.timed_out:
        return [f"{name}: no answer after {res.elapsed:.0f} s"]
    problems = []
    if "Traceback" in res.err or "Traceback" in res.out:
        problems.append(f"{name}: traceback: {res.last_err()}")
    if res.rc != 0:
        problems.append(f"{name}: exit {res.rc} instead of lexical results: {res.last_err()!r}")
    elif target.shown not in res.out:
        problems.append(f"{name}: exit 0 without the memory the query names ({target.rel}); stderr {res.last_err()!r}")
    lines = res.err_lines()
    odd = [line for line in lines if not line.startswith("memindex: ")]
    if odd:
        problems.append(f"{name}: stderr line that is not a `memindex: ` line: {odd[0][:160]!r}")
    about = channel_lines(res.err)
    if len(about) > 1:
        problems.append(f"{name}: {len(about)} stderr lines about the semantic channel (one expected): {res.err[:300]!r}")
    elif must_say and res.rc == 0 and not any(says_what_is_wrong(line) for line in about):
        problems.append(f"{name}: nothing on stderr says the semantic channel is degraded (stderr {res.err[:200]!r})")
    return problems


def vector_health(root: Path, sample: int | None = None, seed: int = 0) -> tuple[list[str], dict[str, int]]:
    """Is every memory's vector there, of the stand-in model (meta), of the right size and
    equal to the model's embedding of the memory's text? (In-process, read-only.)
    `sample`: how many vectors to recompute (None: all)."""
    import numpy as np

    from memindex import index
    from memindex.index import vectors
    from memindex_dev.standin import HashingEmbedder
    from memindex.semantic.vectors import embed_text

    model = HashingEmbedder()
    stats = {"docs": 0, "vectors": 0, "missing": 0, "bad_size": 0, "wrong": 0, "checked": 0}
    try:
        conn = index.open_reader(root)
    except Exception as exc:  # noqa: BLE001
        return [f"index unreadable: {type(exc).__name__}: {exc}"], stats
    try:
        info = vectors.model_info(conn)
        stats["docs"] = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        stats["vectors"] = vectors.count(conn)
        stats["missing"] = vectors.count_missing(conn)
        size = model.dim * 4
        stats["bad_size"] = conn.execute(
            "SELECT count(*) FROM vectors WHERE typeof(vec) != 'blob' OR length(vec) != ?", (size,)).fetchone()[0]
        good = [r for (r,) in conn.execute(
            "SELECT doc FROM vectors WHERE typeof(vec) = 'blob' AND length(vec) = ? ORDER BY doc", (size,))]
        if sample is not None and len(good) > sample:
            good = sorted(random.Random(seed).sample(good, sample))
        rows = vectors.texts(conn, good)
        if rows:
            want = model.embed([embed_text(*row[1:]) for row in rows])
            got = np.stack([np.frombuffer(vectors.get(conn, r[0]), dtype="<f4") for r in rows])
            ok = np.isclose(got, want, atol=1e-5).all(axis=1)
            stats["wrong"] = int((~ok).sum())
            stats["checked"] = len(rows)
    except Exception as exc:  # noqa: BLE001
        return [f"vectors unreadable: {type(exc).__name__}: {exc}"], stats
    finally:
        conn.close()
    problems = []
    if info["embed_model"] != model.identity or info["embed_dim"] != model.dim:
        problems.append(f"vectors labelled {info['embed_model']!r} (dim {info['embed_dim']}), not the model's {model.identity!r}")
    if stats["missing"]:
        problems.append(f"{stats['missing']} of {stats['docs']} memories without a vector")
    if stats["bad_size"]:
        problems.append(f"{stats['bad_size']} vectors of the wrong size or type")
    if stats["wrong"]:
        problems.append(f"{stats['wrong']} of {stats['checked']} vectors checked differ from the model's embedding of their text")
    return problems, stats


def serve_log(proj: Project) -> str:
    try:
        return (proj.root / LOG_FILE).read_text("utf-8", "replace")
    except OSError:
        return ""


# --------------------------------------------------------------------------------------
# the scenario
# --------------------------------------------------------------------------------------


def scenario_semantic(ctx: Context) -> None:
    """The four parts below; then: no worker left behind."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        ctx.add(Row("semantic channel", skipped="numpy is not installed (the [semantic] extra)"))
        return
    rng = random.Random(ctx.seed + 90)
    projects: list[SemProject] = []
    with private_runtime() as runtime:
        try:
            for part in (worker_kills, sync_kills, vector_faults, model_faults):
                part(ctx, runtime, rng, projects)
        finally:
            problems = []
            for proj in projects:
                problems += [f"{proj.dir.name}: {p}" for p in proj.stop_workers()]
            left = serve_processes(ctx.base)
            signal_all(left, signal.SIGKILL)  # cleanup only: they are counted as failures
            problems += [f"worker left behind: pid {pid}: {cmd[:200]}" for pid, cmd in left.items()]
            ctx.add(Row(
                "semantic: no worker left behind", runs=len(projects), failures=len(problems),
                figures=(f"every worker of the {len(projects)} projects stopped by SIGTERM within {STOP_S:g} s, socket "
                         f"removed; then no `memindex serve` rooted in the run's folders in /proc: {len(left)} found"),
                problems=problems,
            ))


# --- 1. kill -9 of the worker while hooks run -------------------------------------------


def worker_kills(ctx: Context, runtime: str, rng: random.Random, projects: list[SemProject]) -> None:
    """kill -9 of the resident worker at random moments while prompt hooks run; each
    time a fresh worker is started again: by `memindex serve`, by the SessionStart hook,
    or by the prompt hooks themselves (once the start guard's window is over)."""
    n_kills = 4 if ctx.quick else 12
    targets = targets_for(rng)
    t = targets[0]
    proj = SemProject(ctx, "semantic-worker", runtime, n_fill=200, targets=targets, seed=ctx.seed + 91)
    projects.append(proj)
    res = proj.cli("sync")
    if res.rc != 0 or "embedded" not in res.out:
        ctx.add(Row("semantic: kill -9 of the worker", failures=1, problems=[f"first sync: exit {res.rc}: {res.out[-200:]!r} {res.err[-200:]!r}"]))
        return
    lexical = proj.lexical(t.prompt)
    base_problems = hook_problems(lexical, proj.root, expect=t.shown, name="lexical hook")
    problems: list[str] = [f"setup: {p}" for p in base_problems]
    res = proj.event("session-start")
    setup = base_problems + hook_problems(res, None, name="SessionStart hook")
    problems += setup[len(base_problems):]
    info = proj.wait_ready()
    if info is None:
        problems.append(f"SessionStart started no worker within {READY_S:g} s (log: {serve_log(proj)[-300:]!r})")
        ctx.add(Row("semantic: kill -9 of the worker", failures=len(problems), problems=problems))
        return
    served = proj.hook(t.prompt)  # with a healthy worker (the policy may use its view)
    answers = [lexical, served]

    stop = threading.Event()
    go = threading.Event()  # cleared: the loops pause (so that SessionStart alone starts the next worker)
    go.set()
    hammer: dict[str, Any] = {"calls": 0, "problems": [], "times": [], "notes": [], "busy": 0}
    lock = threading.Lock()

    def loop() -> None:
        while not stop.is_set():
            if not go.wait(0.1):
                continue
            with lock:
                hammer["busy"] += 1
            try:
                r = proj.hook(t.prompt)
            finally:
                with lock:
                    hammer["busy"] -= 1
            found = hook_judge(r, proj, answers, "concurrent hook", hammer["notes"])
            with lock:
                hammer["calls"] += 1
                hammer["times"].append(r.elapsed)
                hammer["problems"] += found

    def pause() -> None:
        go.clear()
        deadline = time.monotonic() + HANG_S + 5
        while hammer["busy"] and time.monotonic() < deadline:
            time.sleep(0.01)

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(2)]
    for th in threads:
        th.start()
    methods = ("serve", "session-start", "prompt")
    stats: dict[str, Any] = {"served": 0, "stale": 0, "restarted": {m: 0 for m in methods},
                             "tried": {m: 0 for m in methods}, "single": 0, "used": 0, "ready": []}
    bad = 0
    try:
        for i in range(n_kills):
            found: list[str] = []
            method = methods[i % len(methods)]
            info = proj.wait_ready()
            if info is None:
                bad += 1
                problems.append(f"kill {i}: no worker to kill")
                proj.serve("--idle-exit", "60")
                continue
            time.sleep(rng.uniform(0.05, 0.8))  # the hooks keep asking it meanwhile
            info = proj.ping() or info
            stats["served"] += int(info.get("requests", 0) > 0)
            pid = int(info["pid"])
            if method == "serve":
                proj.guard(None)  # no hook starts one for SPAWN_GUARD_S: `serve` must
            os.kill(pid, signal.SIGKILL)
            if not wait_gone(pid, 3.0):
                found.append(f"worker {pid} still alive 3 s after SIGKILL")
            proj.reap()
            stale = os.path.exists(proj.socket()) and (proj.root / SERVE_MARKER).exists()
            stats["stale"] += int(stale)
            found += hook_judge(proj.hook(t.prompt), proj, [lexical], "hook right after the kill")
            stats["tried"][method] += 1
            started = time.monotonic()
            if method == "serve":
                proj.serve("--idle-exit", "60")
            elif method == "session-start":
                pause()  # SessionStart alone may start it (the prompt hooks would too, after the guard)
                proj.guard(SPAWN_GUARD_S + 1)  # a new session, later than the guard's window
                found += hook_problems(proj.event("session-start"), None, name="SessionStart hook after the kill")
            else:
                proj.guard(SPAWN_GUARD_S + 1)  # the next prompt after the window starts one
            new = proj.wait_ready(not_pid=pid)
            go.set()
            if new is None:
                found.append(f"no fresh worker {READY_S:g} s after the kill ({method}; stale socket: {stale}; "
                             f"log: {serve_log(proj)[-200:]!r})")
            else:
                stats["restarted"][method] += 1
                stats["ready"].append(time.monotonic() - started)
                deadline = time.monotonic() + 3.0
                while len(proj.workers()) != 1 and time.monotonic() < deadline:
                    time.sleep(0.05)  # a second worker started in the same instant exits at once
                running = proj.workers()
                if list(running) == [new["pid"]]:
                    stats["single"] += 1
                else:
                    found.append(f"{len(running)} workers after the restart ({method}): {sorted(running)}, ping says {new['pid']}")
                before = (proj.ping() or {}).get("requests", 0)
                found += hook_judge(proj.hook(t.prompt), proj, answers, "hook with the fresh worker")
                after = (proj.ping() or {}).get("requests", 0)
                if after > before:
                    stats["used"] += 1
                else:
                    found.append(f"the hook did not ask the fresh worker (requests {before} -> {after})")
            if found:
                bad += 1
                problems += [f"kill {i} ({method}): {p}" for p in found]
    finally:
        stop.set()
        go.set()
        for th in threads:
            th.join(timeout=30)
    after_series = [f"after the series: {p}" for p in proj.stop_workers()]
    problems += after_series
    tried, done = stats["tried"], stats["restarted"]
    ctx.add(Row(
        "semantic: kill -9 of the resident worker while prompt hooks run", runs=n_kills,
        failures=bad + len(setup) + len(after_series),
        figures=(f"killed while serving hooks {stats['served']}/{n_kills}; stale socket + pid file left {stats['stale']}/{n_kills}; "
                 f"fresh worker by `memindex serve` {done['serve']}/{tried['serve']}, by SessionStart (prompt loops paused) "
                 f"{done['session-start']}/{tried['session-start']}, by the prompt hooks {done['prompt']}/{tried['prompt']} "
                 f"(p50 {pct(stats['ready'], .5):.2f} s); exactly one worker {stats['single']}/{n_kills}, "
                 f"asked by the next hook {stats['used']}/{n_kills}"),
        problems=problems,
    ))
    times = hammer["times"]
    ctx.add(Row(
        "semantic: prompt hooks during the worker kills", runs=hammer["calls"], failures=len(hammer["problems"]),
        figures=(f"2 hook loops; every answer = the lexical one or a healthy worker's (the same here: "
                 f"{'yes' if served.out == lexical.out else 'no'}), exit 0, no traceback; latency p50 "
                 f"{pct(times, .5) * 1000:.0f} ms, p95 {pct(times, .95) * 1000:.0f} ms, max {max(times or [0]) * 1000:.0f} ms "
                 f"(budget {HANG_S:g} s); calls with a stderr line: {len(hammer['notes'])}"),
        problems=hammer["problems"],
    ))


# --- 2. kill -9 of sync mid-embedding ---------------------------------------------------


def count_vectors(conn: sqlite3.Connection) -> int:
    try:
        return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    except sqlite3.Error:
        return -1


def sync_kills(ctx: Context, runtime: str, rng: random.Random, projects: list[SemProject]) -> None:
    """kill -9 of `memindex sync` while it embeds a few thousand memories (two kills in
    three once its first vectors are committed, the third at any moment); then the hook,
    `search --no-sync` and `status` answer, and the next sync leaves no memory without its
    vector."""
    n_kills = 4 if ctx.quick else 10
    n_fill = 3000
    targets = targets_for(rng)
    t = targets[1]
    proj = SemProject(ctx, "semantic-sync", runtime, n_fill=n_fill, targets=targets, seed=ctx.seed + 92, batch_size=16)
    projects.append(proj)
    res = proj.cli("sync", timeout=180)
    health, _ = vector_health(proj.root, sample=50)
    if res.rc != 0 or health:
        ctx.add(Row("semantic: kill -9 of sync mid-embedding", failures=1,
                    problems=[f"first sync: exit {res.rc}: {res.out[-200:]!r} {res.err[-200:]!r} {health}"]))
        return
    watch = sqlite3.connect(f"file:{proj.root / INDEX_FILE}?mode=ro", uri=True, isolation_level=None)
    watch.execute("PRAGMA busy_timeout=1000")

    def unembed() -> None:
        proj.wait_background()
        mutate(proj.root, rng, rng.randint(0, 20))
        proj.corrupt([("DELETE FROM vectors", ())])  # as after `semantic.enabled` was just turned on

    # how long a sync takes, and its embedding part
    unembed()
    started = time.monotonic()
    proc = proj.popen("sync")
    first = None
    while proc.poll() is None:
        if first is None and count_vectors(watch) > 0:
            first = time.monotonic()
        time.sleep(0.002)
    total = time.monotonic() - started
    window = max(0.05, time.monotonic() - (first or started))
    if proc.stderr is not None:
        proc.stderr.close()

    said: dict[str, str] = {}
    stats = {"alive": 0, "embedding": 0, "text": 0, "after": 0, "complete": 0, "exact": 0, "recover": [], "left": []}
    problems: list[str] = []
    bad = 0
    for i in range(n_kills):
        unembed()
        at_embedding = i % 3 != 2
        proc = proj.popen("sync")
        begun = time.monotonic()
        if at_embedding:  # wait for its first committed batch, then land somewhere in the embedding
            while proc.poll() is None and count_vectors(watch) <= 0 and time.monotonic() - begun < 60:
                time.sleep(0.002)
            delay = rng.uniform(0.0, window * 0.9)
        else:
            delay = rng.uniform(0.0, total * 1.1)
        end = time.monotonic() + delay
        while proc.poll() is None and time.monotonic() < end:
            time.sleep(0.002)
        was_alive = proc.poll() is None
        proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        stored, docs = count_vectors(watch), watch.execute("SELECT count(*) FROM documents").fetchone()[0]
        stats["alive"] += int(was_alive)
        if not was_alive:
            stats["after"] += 1
        elif 0 < stored < docs:
            stats["embedding"] += 1
        elif stored <= 0:
            stats["text"] += 1
        else:
            stats["after"] += 1
        stats["left"].append(max(0, docs - max(stored, 0)))
        found: list[str] = []
        try:
            check = watch.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.Error as exc:
            check = f"{type(exc).__name__}: {exc}"
        if check != "ok":
            found.append(f"index damaged after the kill: quick_check says {check!r}")
        found += hook_problems(proj.hook(t.prompt), proj.root, expect=t.shown, name="hook after the kill")
        res = proj.cli("search", "--no-sync", "--", t.prompt)
        found += search_judge(res, t, "search --no-sync after the kill", must_say=False)
        if 0 < stored < docs and "search" not in said:
            said["search"] = " / ".join(channel_lines(res.err)) or "(nothing)"
        found += cli_problems(proj.cli("status"), "status after the kill")
        proj.wait_background()
        clock = time.monotonic()
        res = proj.cli("sync", timeout=180)
        stats["recover"].append(time.monotonic() - clock)
        found += cli_problems(res, "next sync")
        if res.rc == 0 and "Traceback" not in res.err:
            health, _ = vector_health(proj.root, sample=200, seed=i)
            if not any("without a vector" in p for p in health):
                stats["complete"] += 1
            if not health:
                stats["exact"] += 1
            found += [f"after the next sync: {p}" for p in health]
        if found:
            bad += 1
            problems += [f"kill {i} ({'mid-embedding' if at_embedding else 'any moment'}, after {delay:.2f} s, "
                         f"{stored}/{docs} vectors stored): {p}" for p in found]
    watch.close()
    after_series = [f"after the series: {p}" for p in proj.stop_workers()]
    problems += after_series
    rec, left = stats["recover"], stats["left"]
    ctx.add(Row(
        "semantic: kill -9 of sync mid-embedding", runs=n_kills, failures=bad + len(after_series),
        figures=(f"{n_fill + len(targets)} memories, embedding {window:.2f} s of a {total:.2f} s sync; killed while "
                 f"embedding (vectors partly stored) {stats['embedding']}/{n_kills}, before its first vector "
                 f"{stats['text']}/{n_kills}, after the last {stats['after']}/{n_kills} (memories left without a vector p50 "
                 f"{pct(left, .5):.0f}); then quick_check, hook, search "
                 f"--no-sync (saying: {said.get('search', '-')[:140]}), status; next sync: no memory without a vector {stats['complete']}/{n_kills}, every vector = "
                 f"the model's (200 sampled) {stats['exact']}/{n_kills}; recovery sync p50 {pct(rec, .5) * 1000:.0f} ms"),
        problems=problems,
    ))


# --- 3. a corrupt or mismatched vector table --------------------------------------------

DIM_BYTES = 384 * 4
OTHER_MODEL = "sentence-transformers/all-MiniLM-L6-v2@sha256:" + "0" * 64 + ";dim=384;max_seq=256"
OTHER_DIM_MODEL = "intfloat/e5-base-v2@sha256:" + "1" * 64 + ";dim=768;max_seq=512"
VECTOR_FAULTS: dict[str, tuple[str, list[tuple[str, tuple]]]] = {
    "short": ("vectors of the wrong length (100-byte blobs in 1 row of 7)",
              [("UPDATE vectors SET vec = randomblob(100) WHERE doc % 7 = 0", ())]),
    "garbage": ("garbage bytes of the right length (1 row of 7)",
                [("UPDATE vectors SET vec = randomblob(?) WHERE doc % 7 = 0", (DIM_BYTES,))]),
    "text": ("text values in the vec column (1 row of 7)",
             [("UPDATE vectors SET vec = 'not a vector' WHERE doc % 7 = 0", ())]),
    "dropped": ("the vectors table dropped", [("DROP TABLE vectors", ())]),
    "model": ("vectors labelled as another model's (same dimension)",
              [("UPDATE meta SET value = ? WHERE key = 'embed_model'", (json.dumps(OTHER_MODEL),))]),
    "dim": ("vectors labelled as another model's of dimension 768",
            [("UPDATE meta SET value = ? WHERE key = 'embed_model'", (json.dumps(OTHER_DIM_MODEL),)),
             ("UPDATE meta SET value = '768' WHERE key = 'embed_dim'", ())]),
}
QUICK_VECTOR_FAULTS = ("short", "garbage", "dropped", "model")
# what repairs each fault: the command the readers' line names (damaged numbers in
# well-formed blobs are seen only by reading every vector, which a plain sync does not do)
REPAIR = {"garbage": "rebuild"}


def vector_faults(ctx: Context, runtime: str, rng: random.Random, projects: list[SemProject]) -> None:
    """Each vector fault, first with no worker (search, then the prompt hook), then with a
    resident worker started on the damaged index (hook, search), then the next sync: the
    vectors must be whole again and the worker serve them without a restart."""
    targets = targets_for(rng)
    t = targets[2]
    proj = SemProject(ctx, "semantic-vectors", runtime, n_fill=200, targets=targets, seed=ctx.seed + 93)
    projects.append(proj)
    res = proj.cli("sync")
    lexical = proj.lexical(t.prompt)
    setup = hook_problems(lexical, proj.root, expect=t.shown, name="lexical hook")
    proj.serve("--idle-exit", "60")
    if proj.wait_ready() is None:
        setup.append(f"no worker on the clean index within {READY_S:g} s")
    served = proj.hook(t.prompt)  # with a healthy worker (the policy may use its view)
    setup += proj.stop_workers()
    if res.rc != 0 or setup:
        ctx.add(Row("semantic: vector table faults", failures=1, problems=[f"setup: exit {res.rc} {res.err[-200:]!r}", *setup]))
        return
    answers = [lexical, served]

    def damaged() -> bool:
        return bool(vector_health(proj.root)[0])

    names = QUICK_VECTOR_FAULTS if ctx.quick else tuple(VECTOR_FAULTS)
    for name in names:
        title, sql = VECTOR_FAULTS[name]
        checks = Checks()
        seen: dict[str, str] = {}
        checks.setup(proj.stop_workers())
        res = proj.cli("rebuild")
        health, _ = vector_health(proj.root)
        checks.setup([f"clean rebuild before the fault: exit {res.rc}, {health}"] if res.rc != 0 or health else [])
        proj.corrupt(sql)
        proj.guard(None)  # the hooks start no worker during the no-worker part

        # no worker: search (the model in the search process), then the prompt hook
        res = proj.cli("search", "--", t.prompt)
        left = damaged()
        checks.add(search_judge(res, t, "search (no worker)", must_say=left))
        seen["search"] = (" / ".join(channel_lines(res.err)) or "(nothing)") if res.rc == 0 else f"exit {res.rc}"
        seen["search"] += " [left as it was]" if left else " [repaired by the search's own sync]"
        if not damaged():
            proj.corrupt(sql)  # damaged again for the hook
        checks.add(hook_judge(proj.hook(t.prompt), proj, [lexical], "hook (no worker)"))

        # a resident worker started on the damaged index
        if not damaged():
            proj.corrupt(sql)
        proj.serve("--idle-exit", "60")
        info = proj.wait_ready()
        if info is None:
            checks.add([(f"`memindex serve` on the damaged index: no worker answers within {READY_S:g} s "
                         f"(log {serve_log(proj)[-200:]!r})")])
        else:
            checks.add([])
            seen["worker"] = info.get("vectors_note") or (
                f"serves {info.get('docs')} vectors, {info.get('vectors_skipped') or 'none'} left out as damaged")
            checks.add(hook_judge(proj.hook(t.prompt), proj, answers, "hook (worker on the damaged index)"))
            res = proj.cli("search", "--", t.prompt)
            checks.add(search_judge(res, t, "search (worker on the damaged index)", must_say=damaged()))

        # the next sync (or the command the line names) repairs: whole vectors, and the
        # running worker serves them
        repair = REPAIR.get(name, "sync")
        if not damaged():
            proj.corrupt(sql)
        res = proj.cli(repair)
        health, _ = vector_health(proj.root)
        checks.add(cli_problems(res, f"next {repair}") + [f"after the next {repair}: {p}" for p in health])
        seen["sync"] = (res.out.strip().split("semantic: ", 1)[-1] if "semantic: " in res.out else res.out.strip())[:80]
        if info is not None and not health:
            deadline = time.monotonic() + 5.0
            now = proj.ping()
            while time.monotonic() < deadline and (now is None or now.get("vectors_note")):
                time.sleep(0.1)  # the worker reloads at its next check of the vectors' stamp
                now = proj.ping()
            if now is None:
                checks.add(["the worker no longer answers after the repairing sync"])
            elif now.get("vectors_note"):
                checks.add([f"the worker still says {now['vectors_note']!r} 5 s after the repairing sync"])
            else:
                checks.add([])
        checks.add(hook_judge(proj.hook(t.prompt), proj, answers, "hook after the next sync"))
        res = proj.cli("search", "--", t.prompt)
        checks.add(search_judge(res, t, "search after the next sync", must_say=damaged()))
        checks.setup(proj.stop_workers())
        ctx.add(Row(
            f"semantic: {title}", runs=checks.runs, failures=checks.failed,
            figures=(f"search says: {seen.get('search', '-')[:160]}; worker: {seen.get('worker', '-')[:100]}; "
                     f"next {repair}: {seen.get('sync', '-')}"),
            problems=checks.problems,
        ))


# --- 4. a missing model, a model that fails to load -------------------------------------

BERT_CONFIG = {"model_type": "bert", "hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 6,
               "intermediate_size": 1536, "max_position_embeddings": 512, "vocab_size": 30522}
TOKENIZER = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
             "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
             "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}, "unk_token": "[UNK]"}}


def broken_models(base: Path, rng: random.Random) -> dict[str, tuple[str, Path]]:
    """name -> (what it is, the folder): a missing folder and folders that fail to load."""
    garbage = rng.randbytes(8192)
    out: dict[str, tuple[str, Path]] = {"missing": ("a model folder that does not exist", base / "no-such-model")}

    def folder(name: str, files: dict[str, bytes]) -> Path:
        path = base / name
        path.mkdir(parents=True)
        for fname, data in files.items():
            (path / fname).write_bytes(data)
        return path

    cfg = json.dumps(BERT_CONFIG).encode()
    out["weights"] = ("config.json and garbage model.safetensors",
                      folder("garbage-weights", {"config.json": cfg, "model.safetensors": garbage}))
    out["weights+tokenizer"] = ("config.json, tokenizer.json and garbage model.safetensors",
                                folder("garbage-weights-tok", {"config.json": cfg, "tokenizer.json": json.dumps(TOKENIZER).encode(),
                                                               "model.safetensors": garbage}))
    out["config"] = ("a config.json that is not JSON",
                     folder("garbage-config", {"config.json": b"{not json", "tokenizer.json": json.dumps(TOKENIZER).encode(),
                                               "model.safetensors": garbage}))
    return out


def model_faults(ctx: Context, runtime: str, rng: random.Random, projects: list[SemProject]) -> None:
    """`semantic.model` naming a missing folder or one that fails to load: sync indexes the
    text and says so in one line; search answers lexically with one line; the hook answers
    lexically and silently; the worker the hook starts fails once and backs off (a prompt
    after the start guard's window starts no other); `memindex serve` exits 1 with one
    line."""
    targets = targets_for(rng)
    proj = SemProject(ctx, "semantic-model", runtime, n_fill=200, targets=targets, seed=ctx.seed + 94)
    projects.append(proj)
    res = proj.cli("sync")
    if res.rc != 0:
        ctx.add(Row("semantic: model faults", failures=1, problems=[f"setup: exit {res.rc} {res.err[-200:]!r}"]))
        return
    models = broken_models(proj.dir / "models", rng)
    words = NonceWords(random.Random(ctx.seed + 95))
    for title, folder in models.values():
        checks = Checks()
        seen: dict[str, str] = {}
        checks.setup(proj.stop_workers())
        try:
            (proj.root / SERVE_SPAWN_MARKER).unlink()  # as on a first start: the hook may start a worker
        except FileNotFoundError:
            pass
        log_before = len(serve_log(proj))
        proj.semantic["model"] = str(folder)
        proj.configure()
        # a new memory: the sync must index its text whatever the model does
        fresh = new_target(words, rng)
        (proj.root / fresh.rel).write_bytes(dump(fresh.doc()))

        res = proj.cli("sync")
        found = cli_problems(res, "sync")
        about = channel_lines(res.out + "\n" + res.err)
        seen["sync"] = " / ".join(about)[:160] if res.rc == 0 else f"exit {res.rc}: {res.last_err()[:100]}"
        if res.rc == 0 and len(about) != 1:
            found.append(f"sync: {len(about)} lines about the semantic channel (one expected): {(res.out + res.err)[:300]!r}")
        elif res.rc == 0 and "not embedded" not in about[0] and "stopped" not in about[0]:
            found.append(f"sync: its line does not say the memories were not embedded: {about[0][:160]!r}")
        if res.rc == 0 and "0 added" in res.out:
            found.append(f"sync did not index the new memory's text: {res.out[:160]!r}")
        checks.add(found)

        res = proj.cli("search", "--", fresh.prompt)
        checks.add(search_judge(res, fresh, "search", must_say=True))
        seen["search"] = (" / ".join(channel_lines(res.err))[:160] or "(nothing)") if res.rc == 0 else f"exit {res.rc}"

        lexical = proj.lexical(fresh.prompt)
        checks.setup([f"setup: {p}" for p in hook_problems(lexical, proj.root, expect=fresh.shown, name="lexical hook")])
        checks.add(hook_judge(proj.hook(fresh.prompt), proj, [lexical], "hook"))
        # the hook starts a worker after answering: it must fail, alone, and back off
        deadline = time.monotonic() + 8.0
        tried = False
        while time.monotonic() < deadline:
            tried = tried or bool(proj.workers()) or len(serve_log(proj)) > log_before
            if tried and not proj.workers():
                break
            time.sleep(0.05)
        found = []
        if proj.workers():
            found.append(f"the worker the hook started still runs 8 s later: {list(proj.workers().values())[:1]}")
        if not tried:
            found.append("the hook started no worker (nothing in the log)")
        for _ in range(2):  # more prompts at once: no new start (the guard)
            checks.add(hook_judge(proj.hook(fresh.prompt), proj, [lexical], "hook after the failed start"))
        guard = proj.root / SERVE_SPAWN_MARKER
        try:
            backed_off = guard.stat().st_mtime - time.time()
        except OSError:
            backed_off = float("-inf")
        seen["back-off"] = f"{backed_off:.0f} s" if backed_off > 0 else "none"
        # a prompt SPAWN_GUARD_S + 1 seconds later (the guard's clock moved back by as much):
        # a worker that backed off is not started again
        try:
            st = guard.stat()
            os.utime(guard, (st.st_atime - SPAWN_GUARD_S - 1, st.st_mtime - SPAWN_GUARD_S - 1))
        except OSError:
            pass
        checks.add(hook_judge(proj.hook(fresh.prompt), proj, [lexical], f"hook {SPAWN_GUARD_S + 1:g} s later"))
        deadline = time.monotonic() + 8.0
        time.sleep(0.3)
        while proj.workers() and time.monotonic() < deadline:
            time.sleep(0.05)
        log = serve_log(proj)[log_before:]
        attempts = len(re.findall(r"cannot load the model|internal error", log))
        seen["log"] = next((line for line in log.splitlines() if CHANNEL.search(line) or "error" in line), "")[:160]
        seen["starts"] = str(attempts)
        if attempts > 1:
            found.append(f"no back-off: a prompt {SPAWN_GUARD_S + 1:g} s after the failed start started the failing "
                         f"worker again ({attempts} failed starts; start guard {backed_off:+.0f} s from now after the "
                         f"first): the prompt hooks restart it every {SPAWN_GUARD_S:g} s")
        elif tried and backed_off < 60:
            found.append(f"no back-off after the failed start (start guard {backed_off:+.0f} s from now)")
        checks.add(found)

        for args in (("serve",), ("serve", "--foreground")):
            label = " ".join(args)
            res = proj.cli(*args, timeout=30)
            found = []
            if res.timed_out:
                found.append(f"{label}: still running after 30 s (a worker that cannot load its model must exit)")
            else:
                if "Traceback" in res.err:
                    found.append(f"{label}: traceback: {res.last_err()}")
                if res.rc != 1:
                    found.append(f"{label}: exit {res.rc} (README: 1, it could not start): {res.last_err()!r}")
                if len(res.err_lines()) != 1:
                    found.append(f"{label}: {len(res.err_lines())} stderr lines (one expected): {res.err[:300]!r}")
            seen[label] = f"exit {res.rc}, {res.elapsed:.1f} s"
            checks.add(found)
        checks.add(cli_problems(proj.cli("status"), "status"))
        checks.setup(proj.stop_workers())
        ctx.add(Row(
            f"semantic: model = {title}", runs=checks.runs, failures=checks.failed,
            figures=(f"sync: {seen['sync']}; search: {seen['search']}; hook: lexical, silent; worker the hook starts: "
                     f"{seen.get('log') or '-'} (back-off {seen['back-off']}; failed starts after 4 prompts over "
                     f"{SPAWN_GUARD_S + 1:g} s: {seen['starts']}); serve: {seen.get('serve', '-')}; "
                     f"serve --foreground: {seen.get('serve --foreground', '-')}"),
            problems=checks.problems,
        ))
    proj.semantic["model"] = MODEL
    proj.configure()
