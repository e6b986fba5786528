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
from memindex.index import sync as sync_mod
from memindex.config import Config, parse_config
from memindex.defaults import SPAWN_MARKER
from memindex.store.paths import FileStat
from memindex.index.sync import sync

from conftest import cli_cmd, cli_env, search_paths, write_mem
from freshkit import forge_same_stat, rewrite_in_place, settled_store
from hookkit import prompt_json, put, run_hook


def hook_injects(project: Path, prompt: str, shown: str, within_s: float = 20) -> bool:
    """Ask the prompt hook again until it injects `shown` (True) or `within_s` passes."""
    deadline = time.time() + within_s
    while time.time() < deadline:
        out = run_hook(prompt_json(project, prompt))
        assert out.returncode == 0
        if shown in out.stdout.decode():
            return True
        time.sleep(0.3)
    return False


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


def test_prompt_hook_sees_an_edit_in_place_without_the_watcher(hook_project: Path) -> None:
    """Finding 1: the hook injected the old version until an explicit sync. Now a prompt
    that finds the last full sync older than a few seconds starts one in the background."""
    root = hook_project / ".claude" / "memory"
    path = root / "runbooks" / "stripe-webhook-signature.json"
    prompt = "quokkaflux zebrafinch keeps failing again"
    rewrite_in_place(path, "rotate the secret", "quokkaflux zebrafinch")
    age_last_sync(root, 60)
    assert hook_injects(hook_project, prompt, "stripe-webhook-signature.json"), "the prompt hook never saw the edit made in place"


def test_the_hook_itself_stays_o1(hook_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The periodic sync is started, never run by the hook: no stat of the memory files."""
    from memindex import hook

    root = hook_project / ".claude" / "memory"
    age_last_sync(root, 60)
    stats: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": stats.append(str(p)) or real_scandir(p))
    started: list[tuple] = []
    monkeypatch.setattr("memindex.background.start_detached", lambda *a: started.append(a) or 0)
    hook.run("prompt", prompt_json(hook_project, "why do stripe webhooks fail with 400?").encode())
    assert started and started[0][1] == "sync"
    assert not any("runbooks" in p or "decisions" in p for p in stats)
    # A second prompt within the guard starts nothing more.
    hook.run("prompt", prompt_json(hook_project, "why do stripe webhooks fail with 400?").encode())
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
    real_fp = getattr(index, "stat_fingerprint", lambda root, keep=None: [0, 0])
    monkeypatch.setattr(index, "stat_fingerprint", lambda root, keep=None: [real_fp(root, keep)[0], 0], raising=False)  # no finer stat


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


def test_future_spawn_guard_does_not_stop_background_syncs(hook_project: Path) -> None:
    """Finding 3: `.sync.spawned` with an mtime in the future stopped the hooks'
    background syncs silently: a new memory was never injected across prompts."""
    root = hook_project / ".claude" / "memory"
    guard = root / SPAWN_MARKER
    guard.write_bytes(b"")
    future = time.time() + 86400
    os.utime(guard, (future, future))
    put(root, "runbook", "kafka-lag", "Kafka consumer lag runbook", ["kafka"], "consumer lag on the orders topic")
    assert hook_injects(hook_project, "kafka consumer lag on the orders topic is growing", "kafka-lag.json"), \
        "a guard file in the future stopped every background sync"
    assert guard.stat().st_mtime < time.time() + 5


def test_deliberate_back_off_still_holds() -> None:
    """A worker that cannot start pushes its guard a few minutes ahead on purpose: that
    still backs off (only further than window + back-off counts as a clock set back)."""
    from memindex.store.rootfs import expired

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
    assert index.sync_due(conn) == 3.0
    conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync_ns'", (json.dumps(time.time_ns()),))
    assert index.sync_due(conn) is None
    conn.execute("UPDATE meta SET value = '5000' WHERE key = 'sync_ms'")  # a 5 s sync: at most one per 50 s
    conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync_ns'", (json.dumps(time.time_ns() - 20 * 10**9),))
    assert index.sync_due(conn) is None
    conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync_ns'", (json.dumps(time.time_ns() - 60 * 10**9),))
    assert index.sync_due(conn) == 50.0


# --- finding 4: "not shown again unless changed" -----------------------------------------


def transcript_showing(tmp_path: Path, shown: str, when: float) -> Path:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + ".000Z"
    record = {"type": "attachment", "timestamp": stamp, "attachment": {
        "type": "hook_success", "content": f"<memory-context>\n- [RUNBOOK] x -> {shown} #tags:stripe\n</memory-context>"}}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def test_memory_updated_by_cp_p_is_shown_again(hook_project: Path, tmp_path: Path) -> None:
    """Finding 4: a memory updated by `cp -p` (or `rsync -a`, `tar x`: the old mtime kept)
    was re-indexed but never shown again in the session that had seen it."""
    root = hook_project / ".claude" / "memory"
    rel = "runbooks/stripe-webhook-signature.json"
    prompt = "why do stripe webhooks fail with 400?"
    old_mtime = (root / rel).stat().st_mtime
    shown_at = time.time() + 1
    transcript = transcript_showing(tmp_path, ".claude/memory/" + rel, shown_at)
    first = run_hook(prompt_json(hook_project, prompt, transcript_path=str(transcript)))
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
    again = run_hook(prompt_json(hook_project, prompt, transcript_path=str(transcript)))
    assert rel in again.stdout.decode()


# --- finding 5: the worker's rows and the hook's ------------------------------------------


def test_worker_reply_of_another_vectors_version_is_not_applied(hook_project: Path) -> None:
    """Finding 5: the hook applied the worker's rowids to its own read of the index without
    checking the reply's vectors version; after a rebuild renumbered the rows, the right
    memory was dropped. A reply of another version now leaves the word matches alone."""
    from memindex.policy.dense import Dense
    from memindex.policy.inject import decide
    from memindex.index import reads

    root = hook_project / ".claude" / "memory"
    prompt = "why do stripe webhooks fail with 400?"
    conn = index.open_reader(root)
    try:
        cfg = parse_config({"retrieval": {"match_strategy": "fts5_bm25"}})  # rule 6 below
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
    from memindex.index.sync import writer_lock

    root = tmp_path / "r"
    root.mkdir()
    with writer_lock(root, 1.0):
        probe = subprocess.run(
            [sys.executable, "-c", "import sys; from memindex.index.sync import writer_lock\n"
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


# --- finding 7: broken memories are said where users look ------------------------------------


@pytest.fixture
def untidy(hook_project: Path) -> Path:
    """The project's store with each kind of file the user would not see vanish."""
    root = hook_project / ".claude" / "memory"
    (root / "decisions" / "broken.json").write_text('{"category": "decision", "title": "Broken",')  # a JSON typo
    (root / "decisions" / "notes.md").write_text("# notes dropped into decisions/\n")
    data = json.loads((root / "runbooks" / "stripe-webhook-signature.json").read_text())
    (root / "decisions" / "stripe-webhook-signature.json").write_text(json.dumps(data))  # copied to the wrong folder
    jwt = root / "decisions" / "jwt-over-session-cookies.json"
    jwt.rename(root / "decisions" / "jwt-tokens.json")  # renamed by hand: id != file name
    sync(root, Config())
    return hook_project


def test_search_and_explain_name_the_files_that_need_attention(untidy: Path) -> None:
    root = untidy / ".claude" / "memory"
    for args in (["search", "stripe webhook"], ["explain", "why do stripe webhooks fail with 400?"]):
        out = subprocess.run(cli_cmd("--root", str(root), *args), capture_output=True, text=True, env=cli_env(), timeout=60)
        assert out.returncode == 0, out.stderr
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, out.stderr
        line = lines[0]
        for needle in ("decisions/broken.json", "decisions/notes.md", "decisions/stripe-webhook-signature.json",
                       "decisions/jwt-tokens.json", "1 invalid", "1 ignored", "wrong category folder",
                       "sharing an id", "not the file name", "memindex doctor"):
            assert needle in line, (needle, line)


def test_status_counts_them(untidy: Path) -> None:
    root = untidy / ".claude" / "memory"
    out = subprocess.run(cli_cmd("--root", str(root), "status", "--json"), capture_output=True, text=True, env=cli_env(), timeout=60)
    attention = json.loads(out.stdout)["attention"]
    assert attention == {"invalid": 1, "ignored": 1, "misplaced": 1, "duplicated": 2, "renamed": 1, "future": 0}
    text = subprocess.run(cli_cmd("--root", str(root), "status"), capture_output=True, text=True, env=cli_env(), timeout=60).stdout
    assert "1 with an id that is not the file name" in text


def test_session_start_tells_the_user_once(untidy: Path) -> None:
    """A message for the user (Claude Code shows `systemMessage`), not context for the model;
    at the session's start, not again when the conversation is compacted."""
    payload = {"cwd": str(untidy), "session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
    out = run_hook(json.dumps(payload), event="session-start")
    assert out.returncode == 0
    said = json.loads(out.stdout)
    assert "decisions/broken.json" in said["systemMessage"] and "memindex doctor" in said["systemMessage"]
    assert "hookSpecificOutput" not in said  # nothing for the model
    compact = run_hook(json.dumps({**payload, "source": "compact"}), event="session-start")
    assert compact.stdout == b""


def test_a_tidy_store_says_nothing(hook_project: Path) -> None:
    root = hook_project / ".claude" / "memory"
    out = subprocess.run(cli_cmd("--root", str(root), "search", "stripe webhook"), capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.stderr == ""
    start = run_hook(json.dumps({"cwd": str(hook_project), "session_id": "s", "source": "startup"}), event="session-start")
    assert start.stdout == b""


# --- finding 8: the first hour ----------------------------------------------------------------


def test_init_in_a_subfolder_refuses_and_points_at_the_store(tmp_path: Path) -> None:
    """Finding 8: `memindex init` in a subfolder silently created a nested second store."""
    project = tmp_path / "proj"
    (project / ".claude" / "memory").mkdir(parents=True)
    sub = project / "services" / "api"
    sub.mkdir(parents=True)
    out = subprocess.run(cli_cmd("init"), cwd=sub, capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.returncode != 0
    assert str(project / ".claude" / "memory") in out.stderr and "--nested" in out.stderr
    assert not (sub / ".claude").exists()
    forced = subprocess.run(cli_cmd("init", "--nested"), cwd=sub, capture_output=True, text=True, env=cli_env(), timeout=60)
    assert forced.returncode == 0 and (sub / ".claude" / "memory").is_dir()


def test_outside_a_project_the_error_says_what_to_do(tmp_path: Path) -> None:
    """Finding 8: outside a project the error did not suggest `memindex init` or `--root`."""
    out = subprocess.run(cli_cmd("search", "anything"), cwd=tmp_path, capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.returncode != 0
    assert "memindex init" in out.stderr and "--root" in out.stderr


def fake_plugin(home: Path, index_version: int) -> Path:
    tree = home / ".claude" / "plugins" / "cache" / "memindex" / "memindex" / "0.1.0"
    (tree / "hooks").mkdir(parents=True)
    (tree / "hooks" / "memindex_hook.py").write_text("raise SystemExit('never run by doctor')\n")
    (tree / "memindex").mkdir()
    (tree / "memindex" / "__init__.py").write_text('__version__ = "0.0.9"\n')
    (tree / "memindex" / "defaults.py").write_text(f"INDEX_VERSION = {index_version}\n")
    return tree


def doctor(project: Path, home: Path, path_dirs: list[Path]) -> subprocess.CompletedProcess:
    env = cli_env()
    env["HOME"] = str(home)
    env["PATH"] = os.pathsep.join([*map(str, path_dirs), "/usr/bin", "/bin"])  # no venv bin/: its memindex
    return subprocess.run(cli_cmd("doctor", "--json"), cwd=project, capture_output=True, text=True, env=env, timeout=120)


def test_doctor_finds_what_the_user_cannot_see(untidy: Path, tmp_path: Path) -> None:
    """Finding 8 (the CLI missing from PATH, another version in the plugin) and finding 7
    (broken files), plus a derived file committed to git: each failed check says its fix."""
    from memindex.defaults import INDEX_VERSION

    home = tmp_path / "home"
    fake_plugin(home, INDEX_VERSION - 1)
    subprocess.run(["git", "init", "-q", str(untidy)], check=True)
    subprocess.run(["git", "-C", str(untidy), "add", "-f", ".claude/memory/.index.db", ".claude/memory/decisions"], check=True)
    out = doctor(untidy, home, [])
    assert out.returncode == 1, out.stderr
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["cli"]["ok"] is False and "command not found" in checks["cli"]["detail"] and checks["cli"]["fix"]
    assert checks["files"]["ok"] is False and "decisions/broken.json" in checks["files"]["detail"]
    assert checks["git"]["ok"] is False and ".index.db" in checks["git"]["detail"] and "git rm --cached" in checks["git"]["fix"]
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "memindex").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "memindex").chmod(0o755)
    out = doctor(untidy, home, [bindir])
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["cli"]["ok"] is False and "differs from the plugin's hooks" in checks["cli"]["detail"]


def test_doctor_passes_on_a_healthy_project(hook_project: Path, tmp_path: Path) -> None:
    from memindex.defaults import INDEX_VERSION

    home = tmp_path / "home"
    fake_plugin(home, INDEX_VERSION)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "memindex").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "memindex").chmod(0o755)
    out = doctor(hook_project, home, [bindir])
    assert out.returncode == 0, out.stdout
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert all(c["ok"] is not False for c in checks.values())
    assert checks["trust"]["ok"] is True and "no trust needed" in checks["trust"]["detail"]


def test_periodic_check_is_cheap_when_nothing_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`sync --if-changed` (the hook's periodic sync) takes no lock and reads nothing when
    every stat is as the last sync saw it, and syncs when one moved."""
    root = tmp_path / "p" / ".claude" / "memory"
    path = write_mem(root, "decision", "db", "Chose postgres", ["db"], {"context": "relational data"})
    monkeypatch.setattr(sync_mod, "RACY_WINDOW_NS", 0)
    sync(root, Config())
    taken: list[str] = []
    real_lock = sync_mod.writer_lock
    monkeypatch.setattr(sync_mod, "writer_lock", lambda *a: taken.append("lock") or real_lock(*a))
    assert not sync(root, Config(), if_changed=True).changed and taken == []
    rewrite_in_place(path, "relational", "hierarchic")
    assert sync(root, Config(), if_changed=True).updated == 1 and taken == ["lock"]


# --- what the freshness check costs, and that its shortcuts stay sound (issue 26) ----------


def last_sync(root: Path) -> int:
    conn = index.open_reader(root)
    try:
        return int(index.get_meta(conn)["last_sync_ns"])
    finally:
        conn.close()


def test_search_after_a_pass_answers_without_syncing_and_sees_a_same_stat_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steady state costs `search` one stat per file and no sync; an in-place edit of
    the same size, made in the same second and with its mtime put back, is still seen by
    the very next search (its ctime moved)."""
    from memindex.policy.recall import search_hits

    root, path = settled_store(tmp_path, monkeypatch)
    before = last_sync(root)
    assert [h.path for h in search_hits(str(root), Config(), "alpha")] == ["decisions/db.json"]
    assert last_sync(root) == before  # nothing changed: answered from the index as it is
    forge_same_stat(path, "alpha", "gamma")
    assert [h.path for h in search_hits(str(root), Config(), "gamma")] == ["decisions/db.json"]
    assert search_hits(str(root), Config(), "alpha") == []
    assert last_sync(root) > before


def test_status_shortcut_is_sound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """`status` skips the full walk only when every stat is as the last full sync saw it,
    and still counts an edit that moved nothing but the file's ctime."""
    from memindex.cli.main import main

    root, path = settled_store(tmp_path, monkeypatch)
    walks: list[str] = []
    real_walk = sync_mod.walk
    monkeypatch.setattr(sync_mod, "walk", lambda *a, **k: walks.append("walk") or real_walk(*a, **k))
    assert main(["--root", str(root), "status", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["stale"], info["pending"]) == (False, {"changed_or_new": 0, "removed": 0})
    assert walks == []  # one stat per file, no walk and diff
    forge_same_stat(path, "alpha", "gamma")
    assert main(["--root", str(root), "status", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["stale"], info["pending"]) == (True, {"changed_or_new": 1, "removed": 0})
    assert walks == ["walk"]


def test_status_counts_a_new_and_a_removed_file_after_a_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from memindex.cli.main import main

    root, _ = settled_store(tmp_path, monkeypatch)
    (root / "runbooks" / "deploy.json").unlink()
    write_mem(root, "decision", "cache", "Chose redis", ["cache"], {"context": "fast"})
    assert main(["--root", str(root), "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pending"] == {"changed_or_new": 1, "removed": 1}


def test_no_sync_makes_no_stat_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`search --no-sync` reads the index as it is: the stat pass it would throw away is not
    made (it was 20 ms at 10k); without the flag it is, and it syncs a changed file first."""
    from memindex.policy import recall

    root, path = settled_store(tmp_path, monkeypatch)
    from memindex.index import fresh

    passes: list[str] = []
    real = fresh.stat_fingerprint
    monkeypatch.setattr(fresh, "stat_fingerprint", lambda r: passes.append("pass") or real(r))  # is_current's
    forge_same_stat(path, "alpha", "gamma")
    assert recall.search_hits(str(root), Config(), "gamma", allow_sync=False) == []  # as told: the old index
    assert passes == []
    assert [h.path for h in recall.search_hits(str(root), Config(), "gamma")] == ["decisions/db.json"]
    assert passes and passes[0] == "pass"
    (root / ".index.db").unlink()
    with pytest.raises(index.IndexUnavailable):
        recall.search_hits(str(root), Config(), "gamma", allow_sync=False)


def test_a_sync_stats_each_memory_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint pass lists and stats the files; the walk that follows takes their
    stats from it (a second `stat` per file cost a sync 20 ms at 10k, 300 ms at 100k), and
    the fingerprint it stores is the one `is_current` computes afterwards."""
    root, path = settled_store(tmp_path, monkeypatch)
    rewrite_in_place(path, "alpha", "gamma")
    stats: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: stats.append(str(p)) or real_stat(p, *a, **k))
    monkeypatch.setattr(sync_mod, "RACY_WINDOW_NS", 0)  # so that the fingerprint is stored
    assert sync(root, Config()).updated == 1
    monkeypatch.undo()
    assert not [p for p in stats if p.endswith(".json")]
    conn = index.open_reader(root)
    try:
        assert index.is_current(conn, root)
    finally:
        conn.close()
    assert search_paths(root, "gamma") == ["decisions/db.json"]
