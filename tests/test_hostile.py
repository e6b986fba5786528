"""Hostile memory roots (issue 15): each test replays one attack of the adversarial run
and checks the fixed behaviour. A memory root is untrusted input (docs/reliability.md,
threat model): memindex never writes, truncates, creates or deletes anything outside it
through its own files, never hangs on them, never crashes on what a file holds, and says
what it refused in one line.

The hook and the CLI run as processes (`python -I -S hooks/memindex_hook.py EVENT` with
JSON on stdin, as Claude Code runs it; `python -m memindex`), since what is tested depends
on process state: the alarm, the standard streams, detached background syncs. Tests of
another user's files chown to uid 65534 and need root.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import cli_env, write_json, write_mem
from memindex.config import load_config
from memindex.defaults import (
    CONFIG_FILE,
    INDEX_FILE,
    INDEX_MD,
    LOCK_FILE,
    LOG_FILE,
    SPAWN_MARKER,
    TAGS_INDEX_MAX,
    WATCH_MARKER,
)
from memindex.index.sync import sync
from stresskit.hostile import processes_of, wait_background

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="POSIX only")

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "memindex_hook.py"
NOBODY = 65534
HOOK_LIMIT_S = 5.0  # the hook's own budget (HOOK_BUDGET_S); an answer in time is well under it
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to uid 65534 needs root")


# --- running memindex ------------------------------------------------------------------------


def hook(event: str, payload: dict | bytes, cwd: Path, timeout: float = 20, memory: int | None = None):
    """The hook as Claude Code runs it; returns (completed process, seconds)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    started = time.monotonic()
    res = subprocess.run([sys.executable, "-I", "-S", str(HOOK), event], input=data, capture_output=True,
                         timeout=timeout, cwd=cwd, preexec_fn=limit if memory else None)
    return res, time.monotonic() - started


def cli(*args: str, cwd: Path, timeout: float = 30):
    started = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "memindex", *args], capture_output=True, text=True, cwd=cwd,
                         env=cli_env(), timeout=timeout)
    return res, time.monotonic() - started


def one_line(stderr: str | bytes, *needles: str) -> str:
    """The single stderr line (asserted), which names each needle."""
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    assert "Traceback" not in text and "internal error" not in text, text
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("  ")]
    assert len(lines) == 1, text
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def prompt(p: SimpleNamespace, text: str | None = None) -> dict:
    return {"prompt": text or p.prompt, "cwd": str(p.project), "session_id": "s", "hook_event_name": "UserPromptSubmit"}


def session(p: SimpleNamespace) -> dict:
    return {"cwd": str(p.project), "session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}


def post_tool(p: SimpleNamespace, rel: str) -> dict:
    return {"cwd": str(p.project), "session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(p.root / rel), "content": "{}"}}


def settle(p: SimpleNamespace, budget: float = 15) -> None:
    """Wait for the background syncs the hooks started: none may still run after `budget`."""
    assert wait_background(str(p.project), budget) == [], "a background sync was still running"


def stale(p: SimpleNamespace) -> None:
    """Move a category folder's mtime: the prompt hook's O(1) check sees a stale index and
    takes its background-sync path (spawn marker, log, watcher marker)."""
    later = time.time_ns() + 2_000_000_000
    os.utime(p.root / "decisions", ns=(later, later))


class Outside:
    """A file outside the memory root that must stay exactly as it is."""

    def __init__(self, path: Path, data: bytes = b"the victim's file\n") -> None:
        self.path = path
        if not path.exists():
            path.write_bytes(data)
        self.before = self.state()

    def state(self) -> tuple:
        st = self.path.stat()
        return self.path.read_bytes(), st.st_mtime_ns, st.st_size

    def unchanged(self) -> bool:
        return self.state() == self.before


@pytest.fixture
def p(tmp_path: Path) -> SimpleNamespace:
    """A small indexed project whose prompt names one memory uniquely."""
    project = tmp_path / "proj"
    root = project / ".claude" / "memory"
    write_mem(root, "decision", "zorblax-quindle", "Zorblax quindle cache policy", ["zorblax", "cache"],
              {"context": "The zorblax quindle cache is flushed nightly."})
    write_mem(root, "runbook", "other-runbook", "Restart the queue worker", ["queue"], {"trigger": "queue stuck"})
    sync(root, load_config(root))
    return SimpleNamespace(project=project, root=root, tmp=tmp_path, rel="decisions/zorblax-quindle.json",
                           prompt="what is the zorblax quindle cache policy?",
                           shown=".claude/memory/decisions/zorblax-quindle.json")


# --- writes and deletes outside the memory root ------------------------------------------------


def test_spawn_marker_link_is_never_truncated(p):
    victim = Outside(p.tmp / "victim.txt")
    os.symlink(victim.path, p.root / SPAWN_MARKER)
    stale(p)
    res, _ = hook("prompt", prompt(p), p.project)
    assert res.returncode == 0 and p.shown in res.stdout.decode()  # answered from the index it has
    one_line(res.stderr, SPAWN_MARKER, "symbolic link")
    res, _ = hook("session-start", session(p), p.project)
    assert res.returncode == 0
    one_line(res.stderr, SPAWN_MARKER, "symbolic link")
    settle(p)
    assert victim.unchanged() and (p.root / SPAWN_MARKER).is_symlink()


def test_log_link_is_never_appended_to(p):
    victim = Outside(p.tmp / "victim.log")
    os.symlink(victim.path, p.root / LOG_FILE)
    res, _ = hook("post-tool-use", post_tool(p, p.rel), p.project)
    assert res.returncode == 0 and res.stdout == b""
    one_line(res.stderr, LOG_FILE, "symbolic link")
    for f in p.root.glob(INDEX_FILE + "*"):  # no index: session-start builds one in the foreground
        f.unlink()
    res, _ = hook("session-start", session(p), p.project)
    assert res.returncode == 0
    one_line(res.stderr, LOG_FILE)
    settle(p)
    assert victim.unchanged() and (p.root / LOG_FILE).is_symlink()


def test_index_linked_to_another_sqlite_database_is_refused(p):
    other = p.tmp / "app.db"
    conn = sqlite3.connect(other)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("CREATE TABLE precious(x)")
    conn.execute("INSERT INTO precious VALUES ('keep me')")
    conn.commit()
    conn.close()
    victim = Outside(other)
    for f in p.root.glob(INDEX_FILE + "*"):
        f.unlink()
    os.symlink(other, p.root / INDEX_FILE)
    for args in (["sync"], ["rebuild"], ["search", "--", p.prompt]):
        res, _ = cli(*args, cwd=p.project)
        assert res.returncode == 4, res.stderr
        one_line(res.stderr, INDEX_FILE, "symbolic link")
    res, _ = hook("prompt", prompt(p), p.project)
    assert res.returncode == 0 and res.stdout == b""
    one_line(res.stderr, INDEX_FILE, "symbolic link")
    settle(p)
    assert victim.unchanged()
    conn = sqlite3.connect(f"file:{other}?mode=ro", uri=True)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["precious"]
    conn.close()


def test_dangling_lock_link_creates_nothing_outside(p):
    """A link at the lock path is never followed: the link itself is replaced by a regular
    file (said once on stderr), so it cannot stop every sync for good (issue 24)."""
    target = p.tmp / "created-by-the-lock"
    (p.root / LOCK_FILE).unlink()  # left by the fixture's sync
    os.symlink(target, p.root / LOCK_FILE)
    res, _ = cli("sync", cwd=p.project)
    assert res.returncode == 0
    one_line(res.stderr, LOCK_FILE, "symbolic link", "replaced")
    res, _ = cli("save", "--category", "runbook", "--data",
                 json.dumps({"title": "Rotate the keys", "tags": ["keys"], "content": {"trigger": "t", "steps": ["s"]}}),
                 cwd=p.project)
    assert res.returncode == 0, res.stderr
    hook("post-tool-use", post_tool(p, p.rel), p.project)
    settle(p)
    assert not os.path.lexists(target) and (p.root / LOCK_FILE).is_file() and not (p.root / LOCK_FILE).is_symlink()


def test_watch_does_not_write_through_or_delete_a_pid_marker_link(p):
    victim = Outside(p.tmp / "victim.pid", b"12345\n")
    os.symlink(victim.path, p.root / WATCH_MARKER)
    res, seconds = cli("watch", "--polling", cwd=p.project, timeout=20)
    assert res.returncode == 1 and seconds < 15
    one_line(res.stderr, WATCH_MARKER, "symbolic link")
    assert victim.unchanged() and (p.root / WATCH_MARKER).is_symlink()


def test_memory_folder_linked_out_of_the_project_is_not_trusted(tmp_path):
    users = tmp_path / "someones-notes"  # e.g. a cloned repo carrying .claude/memory -> ~/notes
    write_mem(users, "decision", "zorblax-quindle", "Zorblax quindle cache policy", ["zorblax"])
    notes = Outside(users / INDEX_MD, b"# my own notes, not an index\n")
    project = tmp_path / "cloned"
    (project / ".claude").mkdir(parents=True)
    os.symlink(users, project / ".claude" / "memory")
    for args in (["sync"], ["--root", str(project), "sync"], ["search", "--", "zorblax quindle"]):
        res, _ = cli(*args, cwd=project)
        assert res.returncode == 5, res.stderr
        one_line(res.stderr, "untrusted memory root", "outside the project")
    res, _ = hook("prompt", {"prompt": "what is the zorblax quindle cache policy?", "cwd": str(project)}, project)
    assert res.returncode == 0 and res.stdout == b""
    one_line(res.stderr, "untrusted memory root")
    assert notes.unchanged() and not list(users.glob(INDEX_FILE + "*"))
    # inside the project, a link is fine
    os.unlink(project / ".claude" / "memory")
    os.rename(users, project / "shared-notes")
    os.symlink(project / "shared-notes", project / ".claude" / "memory")
    res, _ = cli("search", "--", "zorblax quindle", cwd=project)
    assert res.returncode == 0 and "zorblax-quindle.json" in res.stdout


@needs_root
@pytest.mark.parametrize("case", ["owned by uid 65534", "project 0777", ".claude 0777", "memory 0777",
                                  "memory group-writable by gid 65534"])
def test_another_users_or_world_writable_root_is_not_trusted(tmp_path, case):
    """A project under /tmp that another user made: as root, the hook once truncated a
    root-owned file through that user's `.sync.spawned` link and injected their titles."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    os.chmod(tmp, 0o1777)
    project = tmp / "proj"
    root = project / ".claude" / "memory"
    write_mem(root, "decision", "zorblax-quindle", "Zorblax quindle cache policy", ["zorblax"])
    sync(root, load_config(root))
    victim = Outside(tmp_path / "root-owned.txt")
    os.symlink(victim.path, root / SPAWN_MARKER)
    os.symlink(victim.path, root / LOG_FILE)
    if case == "owned by uid 65534":
        for dirpath, dirnames, filenames in os.walk(project):
            os.chown(dirpath, NOBODY, NOBODY)
            for name in dirnames + filenames:
                os.lchown(os.path.join(dirpath, name), NOBODY, NOBODY)
    elif case.endswith("0777"):
        os.chmod({"project": project, ".claude": project / ".claude", "memory": root}[case.split()[0]], 0o777)
    else:
        os.chown(root, -1, NOBODY)
        os.chmod(root, 0o775)
    stale_ns = time.time_ns() + 2_000_000_000
    os.utime(root / "decisions", ns=(stale_ns, stale_ns))
    before = sorted((f.name, f.lstat().st_mtime_ns) for f in root.iterdir())
    res, _ = hook("prompt", {"prompt": "what is the zorblax quindle cache policy?", "cwd": str(project / "src")}, tmp)
    assert res.returncode == 0 and res.stdout == b""  # nothing of that user's memory
    one_line(res.stderr, "untrusted memory root")
    for event, payload in (("session-start", {"cwd": str(project)}),
                           ("post-tool-use", {"cwd": str(project), "tool_input": {"file_path": str(root / "decisions/x.json")}})):
        res, _ = hook(event, payload, tmp)
        assert res.returncode == 0
        one_line(res.stderr, "untrusted memory root")
    res, _ = cli("sync", cwd=project)  # the walk from the working directory
    assert res.returncode == 5
    one_line(res.stderr, "untrusted memory root")
    assert wait_background(str(project), 10) == []
    assert victim.unchanged()
    assert sorted((f.name, f.lstat().st_mtime_ns) for f in root.iterdir()) == before


# --- hangs and memory exhaustion ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["/dev/zero", "3 GB sparse file"])
def test_pid_marker_that_never_ends_neither_hangs_nor_fills_memory(p, kind):
    marker = p.root / WATCH_MARKER
    if kind == "/dev/zero":
        os.symlink("/dev/zero", marker)
    else:
        with open(marker, "wb") as fh:
            fh.truncate(3 * 1024**3)
    stale(p)
    res, seconds = hook("prompt", prompt(p), p.project, memory=1024**3)  # 1 GiB of address space at most
    assert res.returncode == 0 and seconds < HOOK_LIMIT_S and p.shown in res.stdout.decode()
    assert b"MemoryError" not in res.stderr
    res, seconds = hook("session-start", session(p), p.project, memory=1024**3)
    assert res.returncode == 0 and seconds < HOOK_LIMIT_S and b"MemoryError" not in res.stderr
    res, seconds = cli("status", cwd=p.project)
    assert res.returncode == 0 and seconds < 10 and "not running" in res.stdout
    settle(p)


@pytest.mark.parametrize("name", [CONFIG_FILE, WATCH_MARKER])
def test_fifo_in_place_of_config_or_pid_marker_blocks_nothing(p, name):
    os.mkfifo(p.root / name)
    for args in (["status"], ["sync"], ["search", "--", p.prompt]):
        res, seconds = cli(*args, cwd=p.project, timeout=20)
        assert res.returncode == 0 and seconds < 10, res.stderr
        if name == CONFIG_FILE:
            one_line(res.stderr, CONFIG_FILE, "not a regular file")
    for _ in range(3):  # each session-start once left a background sync stuck in open()
        res, seconds = hook("session-start", session(p), p.project)
        assert res.returncode == 0 and seconds < HOOK_LIMIT_S
    settle(p, budget=10)


def test_burst_of_post_tool_use_while_the_lock_is_held_leaves_one_waiting_sync(p):
    n = 60
    rels = []
    for i in range(n):
        write_mem(p.root, "runbook", f"burst-{i:02d}", f"Burst runbook {i}", ["burst"], {"trigger": f"burst {i}"})
        rels.append(f"runbooks/burst-{i:02d}.json")
    fd = os.open(p.root / LOCK_FILE, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer at work
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda rel: hook("post-tool-use", post_tool(p, rel), p.project)[0], rels))
        assert all(r.returncode == 0 for r in results)
        deadline = time.monotonic() + 20
        while len(processes_of(str(p.project), 0)) > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(processes_of(str(p.project), 0)) <= 1, "more than one background sync waits for the lock"
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    settle(p, budget=30)
    conn = sqlite3.connect(f"file:{p.root / INDEX_FILE}?mode=ro", uri=True)
    indexed = {r[0] for r in conn.execute("SELECT path FROM documents")}
    conn.close()
    assert set(rels) <= indexed  # the one sync that waited covered every file


def test_tag_bomb_costs_what_a_normal_file_costs(p):
    """80,000 tags in a 720 KB file once made one search take 335 s (square of the tags)."""
    from memindex import index
    from memindex.retrieval.query import search

    tags = [f"g{i:05x}" for i in range(80_000)]
    path = write_mem(p.root, "decision", "tag-bomb", "Tag bomb quokkafex", tags, {"context": "quokkafex"})
    path.write_text(json.dumps(json.loads(path.read_text()), separators=(",", ":")))
    assert path.stat().st_size < 1_048_576
    started = time.monotonic()
    sync(p.root, load_config(p.root))
    assert time.monotonic() - started < 5
    conn = index.open_reader(p.root)
    try:
        started = time.monotonic()
        hits = search(conn, "quokkafex g00001 g00002 g00003", limit=10)
        assert time.monotonic() - started < 2
        assert hits and hits[0].path == "decisions/tag-bomb.json"
        (n,) = conn.execute("SELECT count(*) FROM tag_index WHERE doc = ?", (hits[0].rowid,)).fetchone()
        (problems,) = conn.execute("SELECT problems FROM documents WHERE rowid = ?", (hits[0].rowid,)).fetchone()
    finally:
        conn.close()
    assert n == TAGS_INDEX_MAX and "80000 tags: only the first 64 are indexed" in problems


# --- crashes: every input gives a clear line, never a traceback ---------------------------------


def test_number_of_5000_digits_crashes_no_command(p):
    path = write_mem(p.root, "decision", "huge-number", "Huge number", ["x"])
    path.write_text(path.read_text().replace('"confidence": 0.8', '"confidence": ' + "9" * 5000))
    for args, code in ((["sync"], 0), (["rebuild"], 0), (["validate"], 1), (["search", "--", p.prompt], 0),
                       (["gc"], 0), (["status"], 0)):
        res, _ = cli(*args, cwd=p.project)
        assert res.returncode == code, (args, res.stderr)
        assert "Traceback" not in res.stderr and "internal error" not in res.stderr
        if args[0] in ("sync", "validate"):
            assert "a number of more than 64 digits" in res.stderr + res.stdout
    res, _ = cli("update", "decisions/huge-number.json", "--data", '{"title": "x y"}', cwd=p.project)
    assert res.returncode == 1
    one_line(res.stderr, "huge-number.json", "more than 64 digits")
    res, _ = cli("update", p.rel, "--data", '{"confidence": ' + "1" * 5000 + "}", cwd=p.project)
    assert res.returncode == 1
    one_line(res.stderr, "more than 64 digits")


@pytest.mark.parametrize("category", [["decision"], {"a": 1}])
def test_unhashable_category_is_a_clear_problem(p, category):
    write_json(p.root, "decisions/odd.json", {"category": category, "title": "Odd", "id": "odd"})
    res, _ = cli("validate", cwd=p.project)
    assert res.returncode == 1 and "Traceback" not in res.stderr and "internal error" not in res.stderr
    assert "odd.json: bad value for 'category'" in res.stdout
    res, _ = cli("sync", cwd=p.project)
    assert res.returncode == 0
    one_line(res.stderr, "odd.json", "bad value for 'category'")


@pytest.mark.parametrize("date", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_dates_at_the_edge_of_the_calendar_crash_no_write(p, date):
    write_mem(p.root, "decision", "edge", "Edge of time", ["x"], record_status="retired", retired_at=date,
              retired_reason="gone", updated_at=date)
    write_mem(p.root, "decision", "expired", "Long retired", ["x"], record_status="retired",
              retired_at="2020-01-01T00:00:00Z", retired_reason="gone")
    res, _ = cli("gc", "--json", cwd=p.project)  # one such file once stopped gc for every other
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [d["path"] for d in out["deleted"]] == [".claude/memory/decisions/expired.json"]
    assert [s["path"] for s in out["skipped"]] == [".claude/memory/decisions/edge.json"]
    new = {"title": "Edge created", "tags": ["x"], "content": {"status": "accepted", "context": "c", "decision": "d"}}
    for args in (["save", "--category", "decision", "--data", json.dumps({**new, "created_at": date})],
                 ["save", "--category", "decision", "--data", json.dumps({**new, "updated_at": date, "id": "edge-two"})],
                 ["update", p.rel, "--data", json.dumps({"updated_at": date})],
                 ["update", "decisions/edge.json", "--data", '{"title": "Edge of time again"}'],
                 ["restore", "decisions/edge.json"],
                 ["retire", p.rel, "--reason", "r"]):
        res, _ = cli(*args, cwd=p.project)
        assert res.returncode in (0, 1, 2), (args, res.stderr)
        assert "Traceback" not in res.stderr and "internal error" not in res.stderr and "Overflow" not in res.stderr
        if res.returncode:
            assert res.stderr.startswith("memindex: "), res.stderr


@pytest.mark.parametrize("data", [
    '{"title": "Lone \\ud800 surrogate", "tags": ["x"], "content": {"context": "c"}}',
    '{"title": "Lone surrogate in content", "tags": ["x"], "content": {"context": "\\udfff"}}',
    '{"title": "Deep", "tags": ["x"], "content": {"context": ' + "[" * 600 + "]" * 600 + "}}",
])
def test_lone_surrogates_and_deep_nesting_in_save_and_update(p, data):
    for args in (["save", "--category", "decision", "--data", data], ["update", p.rel, "--data", data]):
        res, _ = cli(*args, cwd=p.project)
        assert res.returncode == 1, (args, res.stderr)
        line = one_line(res.stderr)
        assert "surrogate" in line or "nested deeper than" in line, line
    before = (p.root / p.rel).read_bytes()
    assert json.loads(before)["title"] == "Zorblax quindle cache policy"


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "1e309"])
def test_lock_timeout_that_would_wait_forever_is_a_usage_error(p, value):
    for args in (["sync"], ["update", p.rel, "--data", '{"title": "x y z"}']):  # every writer shares this option
        res, seconds = cli(*args, "--lock-timeout", value, cwd=p.project, timeout=15)
        assert res.returncode == 2 and seconds < 10, (args, res.stderr)
        assert "--lock-timeout" in res.stderr and "Traceback" not in res.stderr
    from memindex.errors import UsageError
    from memindex.index.sync import writer_lock

    with pytest.raises(UsageError):
        with writer_lock(p.root, float(value)):
            pass


def _damage(p: SimpleNamespace, statement: str) -> None:
    conn = sqlite3.connect(p.root / INDEX_FILE)
    conn.execute(statement)
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_meta_row_that_is_not_json_is_reported_then_repaired(p):
    _damage(p, "UPDATE meta SET value = '{not json' WHERE key = 'doc_count'")
    res, _ = cli("status", cwd=p.project)
    assert res.returncode == 4 and "metadata is damaged" in res.stderr and "Traceback" not in res.stderr
    res, _ = cli("search", "--no-sync", "--", p.prompt, cwd=p.project)
    assert res.returncode == 4
    one_line(res.stderr, "metadata is damaged")
    res, _ = hook("prompt", prompt(p), p.project)  # the hook starts the repair and answers
    assert res.returncode == 0 and p.shown in res.stdout.decode()
    settle(p)  # and the periodic background sync it may have started
    _damage(p, "UPDATE meta SET value = '[[[' WHERE key = 'folder_mtimes'")
    res, _ = cli("sync", cwd=p.project)
    assert res.returncode == 0 and "rebuilt" in res.stdout
    res, _ = cli("search", "--no-sync", "--", p.prompt, cwd=p.project)
    assert res.returncode == 0 and p.shown in res.stdout


@pytest.mark.parametrize("repair", ["sync", "rebuild"])
def test_dropped_fts_table_is_rebuilt_by_the_next_writer(p, repair):
    _damage(p, "DROP TABLE fts")
    res, _ = cli("search", "--no-sync", "--", p.prompt, cwd=p.project)
    assert res.returncode == 4
    one_line(res.stderr, "incomplete")
    res, _ = cli(repair, cwd=p.project)
    assert res.returncode == 0, res.stderr
    res, _ = cli("search", "--no-sync", "--", p.prompt, cwd=p.project)
    assert res.returncode == 0 and p.shown in res.stdout


def test_damaged_pages_make_the_hook_start_the_repair(p):
    for i in range(40):  # pages enough that damage lands past the header
        write_mem(p.root, "runbook", f"fill-{i:02d}", f"Filler runbook {i}", ["fill"], {"trigger": "word " * 200})
    sync(p.root, load_config(p.root))
    _damage(p, "PRAGMA user_version")  # checkpoint: the file is the whole index
    db = p.root / INDEX_FILE
    data = bytearray(db.read_bytes())
    for at in range(len(data) // 3, 2 * len(data) // 3, 4096):
        data[at + 100: at + 4000] = os.urandom(3900)
    db.write_bytes(bytes(data))
    answered = False
    for _ in range(2):
        res, seconds = hook("prompt", prompt(p), p.project)
        assert res.returncode == 0 and seconds < HOOK_LIMIT_S
        assert b"Traceback" not in res.stderr
        settle(p)
        if p.shown.encode() in res.stdout:
            answered = True
            break
    assert answered, "the hook stayed silent on a damaged index instead of starting its repair"


@pytest.mark.parametrize("redirect", [">&-", ">/dev/full", "2>&-", "2>/dev/full", ">&- 2>&-", ">/dev/full 2>/dev/full", "<&-"])
def test_hook_exits_0_whatever_happens_to_its_streams(p, redirect):
    """stdout closed or full once made the interpreter exit 120 at its last flush."""
    argv = f"'{sys.executable}' -I -S '{HOOK}' prompt"
    assert _with_status_fd(argv, redirect, prompt(p), p.project) == 0
    settle(p)


def _with_status_fd(argv: str, redirect: str, payload: dict, cwd: Path) -> int | str:
    """Run the hook under /bin/sh with `redirect`; its exit status comes back in a file
    (the shell's own stdout and stderr are what the redirection takes away)."""
    status = cwd.parent / "hook-status"
    subprocess.run(["/bin/sh", "-c", f"{argv} {redirect}; echo $? > '{status}'"], input=json.dumps(payload).encode(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, timeout=20)
    text = status.read_text().strip()
    return int(text) if text.isdigit() else text
