"""What is on disk is what the next search and prompt see (issue 26, findings 1-3).

Each test reproduces a finding as the issue describes it: an edit in place (same inode),
a filesystem with 1 s timestamps (simulated here by truncating every stat to the second;
a real loop-mounted ext2 in scripts/stress.py's freshness phase), and a guard file left
in the future by a clock set back.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memindex import index
from memindex import sync as sync_mod
from memindex.config import Config
from memindex.defaults import SPAWN_MARKER
from memindex.paths import FileStat
from memindex.sync import sync

from conftest import cli_cmd, cli_env, search_paths, write_mem
from test_hook import project, prompt_json, put, run_hook  # noqa: F401  (the hook's fixture)


def rewrite_in_place(path: Path, old: str, new: str) -> None:
    """`open(..., "r+")`: the same inode, the folder's mtime untouched."""
    ino = path.stat().st_ino
    with open(path, "r+", encoding="utf-8") as fh:
        text = fh.read().replace(old, new)
        fh.seek(0)
        fh.write(text)
        fh.truncate()
    assert path.stat().st_ino == ino


def age_last_sync(root: Path, seconds: float) -> None:
    """As if the last full sync ran `seconds` ago and the racy window has passed."""
    conn = sqlite3.connect(root / ".index.db")
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync_ns'", (json.dumps(time.time_ns() - int(seconds * 1e9)),))
    conn.close()


# --- finding 1: edits in place -----------------------------------------------------------


def test_search_sees_an_edit_in_place(tmp_path: Path) -> None:
    """Finding 1: `memindex search WORD` printed nothing after `open(..., "r+")` added WORD."""
    root = tmp_path / "p" / ".claude" / "memory"
    path = write_mem(root, "decision", "db", "Chose postgres", ["db"], {"context": "relational data"})
    sync(root, Config())
    folder_before = os.stat(root / "decisions").st_mtime_ns
    rewrite_in_place(path, "relational data", "relational zanzibarite data")
    assert os.stat(root / "decisions").st_mtime_ns == folder_before  # the O(1) check cannot see it
    out = subprocess.run(cli_cmd("--root", str(root), "search", "zanzibarite"), capture_output=True, text=True,
                         env=cli_env(), timeout=60)
    assert out.returncode == 0, out.stderr
    assert "decisions/db.json" in out.stdout
    explain = subprocess.run(cli_cmd("--root", str(root), "explain", "--json", "why zanzibarite relational"),
                             capture_output=True, text=True, env=cli_env(), timeout=60)
    assert any(c["path"].endswith("decisions/db.json") for c in json.loads(explain.stdout)["considered"])


def test_prompt_hook_sees_an_edit_in_place_without_the_watcher(project: Path) -> None:
    """Finding 1: the hook injected the old version until an explicit sync. Now a prompt
    that finds the last full sync older than a few seconds starts one in the background."""
    root = project / ".claude" / "memory"
    path = root / "runbooks" / "stripe-webhook-signature.json"
    prompt = "quokkaflux zebrafinch keeps failing again"
    rewrite_in_place(path, "rotate the secret", "quokkaflux zebrafinch")
    age_last_sync(root, 60)
    deadline = time.time() + 20
    while time.time() < deadline:
        out = run_hook(prompt_json(project, prompt))
        assert out.returncode == 0
        if "stripe-webhook-signature.json" in out.stdout.decode():
            break
        time.sleep(0.3)
    else:
        pytest.fail("the prompt hook never saw the edit made in place")


def test_the_hook_itself_stays_o1(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The periodic sync is started, never run by the hook: no stat of the memory files."""
    from memindex import hook

    root = project / ".claude" / "memory"
    age_last_sync(root, 60)
    stats: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": stats.append(str(p)) or real_scandir(p))
    started: list[tuple] = []
    monkeypatch.setattr("memindex.background.start_detached", lambda *a: started.append(a) or 0)
    hook.run("prompt", prompt_json(project, "why do stripe webhooks fail with 400?").encode())
    assert started and started[0][1] == "sync"
    assert not any("runbooks" in p or "decisions" in p for p in stats)
    # A second prompt within the guard starts nothing more.
    hook.run("prompt", prompt_json(project, "why do stripe webhooks fail with 400?").encode())
    assert len(started) == 1


# --- finding 2: 1-second timestamps ------------------------------------------------------


@pytest.fixture
def coarse_clock(monkeypatch: pytest.MonkeyPatch):
    """Every stat memindex takes, truncated to the whole second (ext2/ext3, FAT, HFS+)."""
    real_of = FileStat.of.__func__

    def of(cls, st):
        got = real_of(cls, st)
        return FileStat(got.mtime_ns // 10**9 * 10**9, got.size, got.ctime_ns // 10**9 * 10**9)

    monkeypatch.setattr(FileStat, "of", classmethod(of))
    real_fp = getattr(index, "stat_fingerprint", lambda root: [0, 0])
    monkeypatch.setattr(index, "stat_fingerprint", lambda root: [real_fp(root)[0], 0], raising=False)  # no finer stat


def early_in_a_second() -> None:
    while time.time() % 1 > 0.4:
        time.sleep(0.05)


def test_same_second_same_size_edit_is_reread(tmp_path: Path, coarse_clock) -> None:
    """Finding 2: on 1 s timestamps, a same-size edit in the second of the last sync was
    never re-read: `sync` said 0 updated forever and search kept the old text."""
    root = tmp_path / "p" / ".claude" / "memory"
    early_in_a_second()
    path = write_mem(root, "decision", "db", "Chose postgres", ["db"], {"context": "alpha words"})
    sync(root, Config())
    rewrite_in_place(path, "alpha", "gamma")  # same size, same second
    sync(root, Config())
    assert search_paths(root, "gamma") == ["decisions/db.json"]
    assert search_paths(root, "alpha") == []


def test_racy_file_is_reread_once_the_window_has_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule's other half: once a file is older than the window, the next sync stores
    its real stat and later syncs read nothing."""
    root = tmp_path / "p" / ".claude" / "memory"
    write_mem(root, "decision", "db", "Chose postgres", ["db"], {"context": "alpha words"})
    first = sync(root, Config())
    assert first.added == 1
    conn = index.open_reader(root)
    assert conn.execute("SELECT size FROM documents").fetchone()[0] == -1  # racy: re-read next time
    assert index.get_meta(conn)["fingerprint"] is None
    conn.close()
    monkeypatch.setattr(sync_mod, "RACY_WINDOW_NS", 0)  # as if 2 s had passed
    second = sync(root, Config())
    assert (second.added, second.updated) == (0, 0)  # a re-check, not an update
    conn = index.open_reader(root)
    assert conn.execute("SELECT size FROM documents").fetchone()[0] > 0
    assert index.is_current(conn, root)
    conn.close()


# --- finding 3: the clock set back ---------------------------------------------------------


def test_future_spawn_guard_does_not_stop_background_syncs(project: Path) -> None:
    """Finding 3: `.sync.spawned` with an mtime in the future stopped the hooks'
    background syncs silently: a new memory was never injected across prompts."""
    root = project / ".claude" / "memory"
    guard = root / SPAWN_MARKER
    guard.write_bytes(b"")
    future = time.time() + 86400
    os.utime(guard, (future, future))
    put(root, "runbook", "kafka-lag", "Kafka consumer lag runbook", ["kafka"], "consumer lag on the orders topic")
    deadline = time.time() + 20
    while time.time() < deadline:
        out = run_hook(prompt_json(project, "kafka consumer lag on the orders topic is growing"))
        if "kafka-lag.json" in out.stdout.decode():
            break
        time.sleep(0.3)
    else:
        pytest.fail("a guard file in the future stopped every background sync")
    assert guard.stat().st_mtime < time.time() + 5


def test_deliberate_back_off_still_holds() -> None:
    """A worker that cannot start pushes its guard a few minutes ahead on purpose: that
    still backs off (only further than window + back-off counts as a clock set back)."""
    from memindex.rootfs import expired

    now = time.time()
    assert not expired(now + 200, 10.0, 300.0)
    assert expired(now + 400, 10.0, 300.0)
    assert expired(now + 60, 10.0)  # the sync guard allows FUTURE_SLACK_S ahead only
    assert not expired(now - 1, 10.0) and expired(now - 11, 10.0)


def test_last_sync_in_the_future_is_due() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [
        ("last_sync_ns", json.dumps(time.time_ns() + 3600 * 10**9)), ("sync_ms", "50"), ("fingerprint", "[1, 2]"),
    ])
    assert index.sync_due(conn)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync_ns'", (json.dumps(time.time_ns()),))
    assert not index.sync_due(conn)
    conn.execute("UPDATE meta SET value = '5000' WHERE key = 'sync_ms'")  # a 5 s sync: at most one per 50 s
    conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync_ns'", (json.dumps(time.time_ns() - 20 * 10**9),))
    assert not index.sync_due(conn)


# --- finding 4: "not shown again unless changed" -----------------------------------------


def transcript_showing(tmp_path: Path, shown: str, when: float) -> Path:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + ".000Z"
    record = {"type": "attachment", "timestamp": stamp, "attachment": {
        "type": "hook_success", "content": f"<memory-context>\n- [RUNBOOK] x -> {shown} #tags:stripe\n</memory-context>"}}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def test_memory_updated_by_cp_p_is_shown_again(project: Path, tmp_path: Path) -> None:
    """Finding 4: a memory updated by `cp -p` (or `rsync -a`, `tar x`: the old mtime kept)
    was re-indexed but never shown again in the session that had seen it."""
    root = project / ".claude" / "memory"
    rel = "runbooks/stripe-webhook-signature.json"
    prompt = "why do stripe webhooks fail with 400?"
    old_mtime = (root / rel).stat().st_mtime
    shown_at = time.time() + 1
    transcript = transcript_showing(tmp_path, ".claude/memory/" + rel, shown_at)
    first = run_hook(prompt_json(project, prompt, transcript_path=str(transcript)))
    assert rel not in first.stdout.decode()  # shown earlier, unchanged: not again
    newer = tmp_path / "newer.json"
    data = json.loads((root / rel).read_text())
    data["content"]["steps"] = ["rotate the secret, then replay the failed webhook events"]
    newer.write_text(json.dumps(data))
    os.utime(newer, (old_mtime, old_mtime))
    while time.time() < shown_at + 0.1:  # the update comes after the session saw the memory
        time.sleep(0.1)
    subprocess.run(["cp", "-p", str(newer), str(root / rel)], check=True)
    assert (root / rel).stat().st_mtime == old_mtime
    sync(root, Config())
    again = run_hook(prompt_json(project, prompt, transcript_path=str(transcript)))
    assert rel in again.stdout.decode()


# --- finding 5: the worker's rows and the hook's ------------------------------------------


def test_worker_reply_of_another_vectors_version_is_not_applied(project: Path) -> None:
    """Finding 5: the hook applied the worker's rowids to its own read of the index without
    checking the reply's vectors version; after a rebuild renumbered the rows, the right
    memory was dropped. A reply of another version now leaves the word matches alone."""
    from memindex.inject import Dense, decide
    from memindex.index import reads

    root = project / ".claude" / "memory"
    prompt = "why do stripe webhooks fail with 400?"
    conn = index.open_reader(root)
    try:
        cfg = Config()
        plain = decide(conn, prompt, cfg).hits
        assert [h.path for h in plain] == ["runbooks/stripe-webhook-signature.json"]
        right = plain[0].rowid
        other = conn.execute("SELECT rowid FROM documents WHERE rowid != ? LIMIT 1", (right,)).fetchone()[0]
        current = reads.vectors_version(conn)

        def reply(version: int):  # the worker's answer about the rows of *its* index
            return lambda rowids: Dense.from_reply(
                {"cos": {str(right): 0.05, str(other): 0.9}, "top": [[other, 0.9], [right, 0.05]], "vectors_version": version})

        stale = decide(conn, prompt, cfg, dense=reply(current + 1))
        assert [h.path for h in stale.hits] == ["runbooks/stripe-webhook-signature.json"]
        assert stale.dense is None
        same = decide(conn, prompt, cfg, dense=reply(current))  # the same version: rule 6 applies
        assert right not in [h.rowid for h in same.hits]
    finally:
        conn.close()


# --- issue 24: a lock path that is not a regular file ----------------------------------------


@pytest.mark.parametrize("kind", ["empty folder", "folder with files", "fifo"])
def test_lock_path_that_is_not_a_file_is_replaced(tmp_path: Path, kind: str) -> None:
    """A committed `.index.lock/` folder (or a FIFO) stopped every sync for good."""
    root = tmp_path / "p" / ".claude" / "memory"
    write_mem(root, "decision", "db", "Chose postgres", ["db"], {"context": "relational data"})
    lock = root / ".index.lock"
    if kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
        if kind == "folder with files":
            (lock / "keep").write_text("x")
    out = subprocess.run(cli_cmd("--root", str(root), "sync"), capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.returncode == 0, out.stderr
    assert "replaced the lock path" in out.stderr
    assert lock.is_file()
    assert search_paths(root, "relational") == ["decisions/db.json"]
    if kind == "folder with files":
        assert [p.name for p in root.glob(".index.lock.moved-aside-*/keep")] == ["keep"]  # nothing lost
    again = subprocess.run(cli_cmd("--root", str(root), "sync"), capture_output=True, text=True, env=cli_env(), timeout=60)
    assert again.returncode == 0 and "replaced" not in again.stderr


def test_writer_lock_excludes_a_second_writer(tmp_path: Path) -> None:
    """filelock is the writer lock: a second writer waits, then times out with the path."""
    from memindex.errors import LockTimeout
    from memindex.sync import writer_lock

    root = tmp_path / "r"
    root.mkdir()
    with writer_lock(root, 1.0):
        probe = subprocess.run(
            [sys.executable, "-c", "import sys; from memindex.sync import writer_lock\n"
             "from memindex.errors import LockTimeout\n"
             "try:\n    with writer_lock(sys.argv[1], 0.2): print('got it')\n"
             "except LockTimeout as e: print('timeout', e)", str(root)],
            capture_output=True, text=True, env=cli_env(), timeout=60)
        assert probe.stdout.startswith("timeout"), probe
    with writer_lock(root, 0.2):
        pass
    assert LockTimeout


# --- finding 6: two versions of memindex, one index ------------------------------------------


def copy_of_memindex(dest: Path, index_version: int, release: str) -> Path:
    """A copy of this package that builds index version `index_version` (another release)."""
    import shutil

    src = Path(__file__).resolve().parent.parent / "memindex"
    shutil.copytree(src, dest / "memindex", ignore=shutil.ignore_patterns("__pycache__", "evaluation"))
    defaults = dest / "memindex" / "defaults.py"
    text = defaults.read_text()
    assert "INDEX_VERSION = " in text
    defaults.write_text(text.replace("INDEX_VERSION = ", f"INDEX_VERSION = {index_version}  # was ", 1))
    init = dest / "memindex" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', f'__version__ = "{release}+', 1))
    return dest


def test_two_versions_never_rebuild_each_other(tmp_path: Path) -> None:
    """Finding 6: the plugin's hooks (the clone, live) and the `memindex` pip installed
    (a copy) with different index versions rebuilt each other's index on every call. Now
    the newer one upgrades the index once and the older one refuses, naming both sides."""
    from memindex.defaults import INDEX_VERSION

    root = tmp_path / "p" / ".claude" / "memory"
    for i in range(5):
        write_mem(root, "decision", f"d{i}", f"Decision {i}", ["db"], {"context": f"relational data {i}"})
    old = copy_of_memindex(tmp_path / "old", INDEX_VERSION, "0.1")
    new = copy_of_memindex(tmp_path / "new", INDEX_VERSION + 1, "0.2")

    def run(copy: Path, *args: str) -> subprocess.CompletedProcess:
        env = dict(os.environ, PYTHONPATH=str(copy))
        return subprocess.run([sys.executable, "-m", "memindex", "--root", str(root), *args],
                              capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)  # not this tree's

    def user_version() -> int:
        conn = sqlite3.connect(root / ".index.db")
        try:
            return conn.execute("PRAGMA user_version").fetchone()[0]
        finally:
            conn.close()

    assert run(old, "sync").returncode == 0 and user_version() == INDEX_VERSION
    rebuilds = 0
    for turn in range(3):
        upgraded = run(new, "sync", "--json")
        assert upgraded.returncode == 0, upgraded.stderr
        rebuilds += json.loads(upgraded.stdout)["rebuilt"] is not None
        for args in (("sync",), ("search", "relational")):
            refused = run(old, *args)
            assert refused.returncode != 0
            assert "0.2+" in refused.stderr and str(old) in refused.stderr and "upgrade this one" in refused.stderr
            assert user_version() == INDEX_VERSION + 1  # never rebuilt back
    assert rebuilds == 1
    assert "decisions/d0.json" in run(new, "search", "relational").stdout
