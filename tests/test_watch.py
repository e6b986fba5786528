"""`memindex watch`: real watchdog observers (native and polling) on temporary folders.

Process-level behaviour (the pid marker, signals, the CLI) runs `python -m memindex watch`
in a subprocess; finer behaviour runs a `Watcher` on a thread with a record sink. Every
wait polls for a condition with a timeout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memindex import index
from memindex.defaults import FOLDERS, INDEX_FILE, INDEX_MD
from memindex.errors import WatcherRunning
from memindex_dev.evaluation.bench import wait_for
from memindex.index.sync import sync, writer_lock
from memindex.watch import PollScanner, mount_of, needs_polling, read_mounts
from memindex.store.marker import Marker, marker_path, watcher_pid
from watchkit import Running

CATEGORY = dict(FOLDERS)
MODES = ["native", "polling"]


# --- helpers --------------------------------------------------------------------------------


def memory_json(folder: str, mem_id: str, title: str, body: str = "") -> str:
    return json.dumps(
        {
            "schema_version": "1.0",
            "category": CATEGORY[folder],
            "id": mem_id,
            "title": title,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "tags": ["watch"],
            "content": {"context": body or f"body of {title}"},
            "related_files": [],
            "confidence": 0.9,
            "record_status": "active",
        }
    )


def write_mem(root: Path, folder: str, mem_id: str, title: str, body: str = "", atomic: bool = False) -> Path:
    """Write a memory in place, or as editors and agents do: a temp file, then a rename."""
    path = root / folder / f"{mem_id}.json"
    text = memory_json(folder, mem_id, title, body)
    if atomic:
        tmp = root / folder / f".{mem_id}.json.tmp{os.getpid()}"
        tmp.write_text(text)
        os.replace(tmp, path)
    else:
        path.write_text(text)
    return path


def indexed(root: Path) -> dict[str, str] | None:
    """path -> title as a reader sees the index now, or None if it cannot be opened."""
    try:
        conn = index.open_reader(root)
    except index.IndexUnavailable:
        return None
    try:
        return dict(conn.execute("SELECT path, title FROM documents"))
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def index_rows(root: Path) -> list[tuple]:
    """Everything a search can see, keyed by path (rowids may differ after a rebuild; the
    size of a file stored as racy, -1 until re-read, depends on when the sync ran)."""
    conn = index.open_reader(root)
    try:
        return conn.execute(
            "SELECT d.path, d.mtime_ns, 0, d.ctime_ns, d.id, d.category, d.title, d.tags,"
            " d.record_status, f.title, f.tags, f.body FROM documents d JOIN fts f ON f.rowid = d.rowid"
            " ORDER BY d.path"
        ).fetchall()
    finally:
        conn.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "proj" / ".claude" / "memory"
    for folder in FOLDERS:
        (r / folder).mkdir(parents=True)
    return r


class Proc:
    """`python -m memindex --root R watch ...` with its JSON records and stderr collected."""

    def __init__(self, root: Path, *args: str, json_mode: bool = True) -> None:
        cmd = [sys.executable, "-m", "memindex", "--root", str(root), "watch", *args]
        if json_mode:
            cmd.append("--json")
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.pid = self.p.pid
        self.records: list[dict] = []
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._threads = [
            threading.Thread(target=self._pump, args=(self.p.stdout, True), daemon=True),
            threading.Thread(target=self._pump, args=(self.p.stderr, False), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _pump(self, stream, is_stdout: bool) -> None:
        for line in stream:
            (self.stdout if is_stdout else self.stderr).append(line)
            if is_stdout:
                try:
                    self.records.append(json.loads(line))
                except ValueError:
                    pass

    def events(self, name: str) -> list[dict]:
        return [r for r in list(self.records) if r["event"] == name]

    def wait_started(self, timeout: float = 20.0) -> None:
        wait_for(lambda: self.events("sync") or self.p.poll() is not None, timeout, "the initial sync")
        assert self.p.poll() is None, f"watcher exited early: {''.join(self.stderr)}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        if self.p.poll() is None:
            self.p.send_signal(sig)
        rc = self.p.wait(timeout)
        for t in self._threads:
            t.join(5)
        return rc

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(10)


@pytest.fixture
def procs():
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.kill()


# --- file events ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_create_modify_atomic_move_delete(root: Path, mode: str) -> None:
    key = "decisions/alpha.json"
    with Running(root, mode) as w:
        write_mem(root, "decisions", "alpha", "Alpha first")
        wait_for(lambda: (indexed(root) or {}).get(key) == "Alpha first", what="a created file")
        w.settle()
        n = len(w.syncs())
        write_mem(root, "decisions", "alpha", "Alpha edited in place")
        wait_for(lambda: (indexed(root) or {}).get(key) == "Alpha edited in place", what="an in-place edit")
        w.settle()
        edit_syncs = w.syncs()[n:]
        # an in-place edit of a known file is a targeted sync of that file (no walk)
        assert edit_syncs and all(r["paths"] == [key] and r["full"] is False for r in edit_syncs)

        write_mem(root, "decisions", "alpha", "Alpha written atomically", atomic=True)
        wait_for(lambda: (indexed(root) or {}).get(key) == "Alpha written atomically", what="an atomic write")

        os.rename(root / key, root / "decisions" / "beta.json")
        wait_for(lambda: indexed(root) == {"decisions/beta.json": "Alpha written atomically"}, what="a move")

        os.rename(root / "decisions" / "beta.json", root / "runbooks" / "beta.json")
        wait_for(lambda: set(indexed(root) or {}) == {"runbooks/beta.json"}, what="a move across folders")

        (root / "runbooks" / "beta.json").unlink()
        wait_for(lambda: indexed(root) == {}, what="a deletion")
        w.settle()
    assert w.ok is True and w.exc is None
    assert not marker_path(root).exists()


@pytest.mark.parametrize("mode", MODES)
def test_burst_of_500_files_is_a_few_syncs(root: Path, mode: str) -> None:
    with Running(root, mode, debounce_ms=300) as w:
        before = len(w.syncs())
        folders = list(FOLDERS)
        for i in range(500):
            write_mem(root, folders[i % len(folders)], f"burst-{i}", f"Burst {i}", atomic=i % 2 == 0)
        wait_for(lambda: len(indexed(root) or {}) == 500, 30, "500 files indexed")
        w.settle()
        burst = w.syncs()[before:]
    assert 1 <= len(burst) <= 5, [r["changes"] for r in burst]
    assert sum(r["added"] for r in burst) == 500
    assert all(r["ms"] < 20_000 for r in burst)


@pytest.mark.parametrize("mode", MODES)
def test_ignored_files_cause_no_sync(root: Path, mode: str) -> None:
    (root / "decisions" / "sub").mkdir()
    with Running(root, mode) as w:
        w.settle()
        before = len(w.syncs())
        d = root / "decisions"
        for name in (".alpha.json.swp", "alpha.json~", "alpha.json.tmp", "4913", ".#alpha.json", "notes.txt"):
            (d / name).write_text("{}")
        (d / "sub" / "nested.json").write_text(memory_json("decisions", "nested", "Nested"))
        (root / "stray").mkdir()
        (root / "stray" / "x.json").write_text(memory_json("decisions", "x", "Stray"))
        for name in ("notes.json", ".memindex.log", ".sync.spawned", INDEX_MD):
            (root / name).write_text("x\n")
        os.unlink(d / "4913")  # vim's write probe: created and deleted at once
        # a real change afterwards: only it may cause a sync
        write_mem(root, "decisions", "sentinel", "Sentinel")
        wait_for(lambda: "decisions/sentinel.json" in (indexed(root) or {}), what="the sentinel")
        w.settle()
        after = w.syncs()[before:]
    assert after and all(r["paths"] == ["decisions/sentinel.json"] for r in after), after
    assert set(indexed(root) or {}) == {"decisions/sentinel.json"}


@pytest.mark.parametrize("mode", MODES)
def test_category_folder_removed_and_recreated(root: Path, mode: str) -> None:
    for i in range(3):
        write_mem(root, "decisions", f"d{i}", f"Decision {i}")
    write_mem(root, "runbooks", "r0", "Runbook 0")
    with Running(root, mode) as w:
        assert len(indexed(root) or {}) == 4
        shutil.rmtree(root / "decisions")
        wait_for(lambda: set(indexed(root) or {}) == {"runbooks/r0.json"}, what="a removed folder")
        (root / "decisions").mkdir()
        write_mem(root, "decisions", "new-a", "New A")
        write_mem(root, "decisions", "new-b", "New B", atomic=True)
        wait_for(lambda: len(indexed(root) or {}) == 3, what="files in a recreated folder")
        # the recreated folder is watched too: a later edit in it is seen
        write_mem(root, "decisions", "new-a", "New A edited")
        wait_for(lambda: (indexed(root) or {}).get("decisions/new-a.json") == "New A edited", what="an edit")
        # a folder moved away counts as removed
        os.rename(root / "runbooks", root / "runbooks-old")
        wait_for(lambda: "runbooks/r0.json" not in (indexed(root) or {"runbooks/r0.json": ""}), what="a moved folder")
    assert w.ok is True


@pytest.mark.parametrize("mode", MODES)
def test_deleted_index_is_rebuilt(root: Path, mode: str) -> None:
    write_mem(root, "decisions", "keep", "Keep me")
    write_mem(root, "preferences", "tabs", "Tabs")
    with Running(root, mode) as w:
        assert len(indexed(root) or {}) == 2
        w.settle()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{root / INDEX_FILE}{suffix}")
            except FileNotFoundError:
                pass
        assert indexed(root) is None
        wait_for(lambda: len(indexed(root) or {}) == 2, what="the index rebuilt")
        w.settle()
        rebuilt = [r for r in w.syncs() if "index missing" in r["trigger"]]
        assert rebuilt and rebuilt[-1]["full"] and rebuilt[-1]["rebuilt"] == "index was missing"

        (root / INDEX_MD).unlink()
        wait_for(lambda: (root / INDEX_MD).exists(), what="index.md regenerated")
        assert "Keep me" in (root / INDEX_MD).read_text()


def test_native_observer_keeps_the_configured_debounce(root: Path) -> None:
    (root / "memory-config.json").write_text(json.dumps({"watch": {"debounce_ms": 250}}))
    with Running(root, debounce_ms=None) as w:
        start = next(r for r in w.records if r["event"] == "start")
        assert start["observer"] == "native" and start["debounce_ms"] == 250
        assert w.watcher.max_delay == pytest.approx(2.5)
        t0 = time.monotonic()
        write_mem(root, "decisions", "slow", "Slow", atomic=True)
        wait_for(lambda: "decisions/slow.json" in (indexed(root) or {}), what="a debounced sync")
        assert time.monotonic() - t0 >= 0.25  # not before the debounce window closed


def test_polling_is_chosen_where_native_events_do_not_arrive(root: Path, monkeypatch) -> None:
    import memindex.watch.watcher as watcher

    monkeypatch.setattr(watcher, "needs_polling", lambda r: (True, "/mnt/c is a 9p file system (fake)"))
    with Running(root, polling=None, interval=0.1) as w:
        assert w.watcher.observer_kind == "polling"
        start = next(r for r in w.records if r["event"] == "start")
        assert start["observer"] == "polling" and "9p" in start["why"]
        write_mem(root, "decisions", "polled", "Polled")
        wait_for(lambda: "decisions/polled.json" in (indexed(root) or {}), what="a polled change")


def test_polling_cost_is_measured_and_bounded(root: Path, monkeypatch) -> None:
    import memindex.watch.poll as polling

    for i in range(20):
        write_mem(root, "decisions", f"f{i}", f"F {i}")
    (root / "decisions" / "skip.tmp").write_text("x")
    with Running(root, "polling", interval=0.1) as w:
        poll = wait_for(lambda: [r for r in w.records if r["event"] == "poll"], what="a poll record")[0]
        write_mem(root, "decisions", "f20", "F 20")
        wait_for(lambda: len(indexed(root) or {}) == 21, what="a polled change")
    # one stat per memory file, plus the root, its 3 files and the category folders
    per_scan = 20 + 4 + len(FOLDERS)
    assert poll["files"] == 20
    assert poll["stat_calls_per_scan"] == per_scan
    assert poll["interval_s"] == pytest.approx(0.1)  # --interval is used as given
    assert poll["stat_calls_per_s"] == pytest.approx(per_scan / 0.1, rel=0.01)
    stop = next(r for r in w.records if r["event"] == "stop")
    assert stop["poll"]["scans"] >= 2 and stop["poll"]["stat_calls_total"] >= 2 * per_scan

    # the default interval stretches when a scan costs more than the CPU budget
    monkeypatch.setattr(polling, "POLL_CPU_BUDGET", 1e-7)
    with Running(root, polling=True, interval=None, debounce_ms=None) as w:
        poll = wait_for(lambda: [r for r in w.records if r["event"] == "poll"], what="a poll record")[0]
    # a scan delivers its events at once: the default debounce (400 ms) is cut when polling
    assert next(r for r in w.records if r["event"] == "start")["debounce_ms"] == 50
    assert poll["base_interval_s"] == 2.0
    assert poll["interval_s"] > 2.0
    assert poll["cpu_pct"] <= 1e-5 * 100 * 1.01


# --- errors -----------------------------------------------------------------------------------


def test_locked_index_is_logged_and_retried(root: Path) -> None:
    (root / "memory-config.json").write_text(json.dumps({"index": {"lock_timeout_s": 0.1}}))
    with Running(root) as w:
        w.settle()
        with writer_lock(root, 5):
            write_mem(root, "decisions", "late", "Late")
            err = wait_for(lambda: [r for r in w.records if r["event"] == "error"], what="a sync error")[0]
            assert "LockTimeout" in err["error"] and err["retry_in_s"] > 0
            assert "decisions/late.json" not in (indexed(root) or {})
        wait_for(lambda: "decisions/late.json" in (indexed(root) or {}), what="the retried sync")
        w.settle()
        assert "retry" in w.syncs()[-1]["trigger"]
        assert w.watcher.errors >= 1
    assert w.ok is True


def test_invalid_file_is_logged_and_watching_goes_on(root: Path) -> None:
    with Running(root) as w:
        (root / "decisions" / "broken.json").write_text('{"category": "decision", "title": ')
        bad = wait_for(lambda: [r for r in w.records if r["event"] == "invalid"], what="an invalid-file record")[0]
        assert bad["path"] == "decisions/broken.json" and "invalid JSON" in bad["reason"]
        write_mem(root, "decisions", "broken", "Fixed now")
        wait_for(lambda: (indexed(root) or {}).get("decisions/broken.json") == "Fixed now", what="the fixed file")
    assert w.ok is True and w.watcher.errors == 0


# --- one watcher per root ---------------------------------------------------------------------


def test_second_watcher_is_refused_with_the_first_ones_pid(root: Path, procs) -> None:
    first = Proc(root, "--debounce", "50")
    procs.append(first)
    first.wait_started()
    assert marker_path(root).read_text().split()[0] == str(first.pid)
    second = subprocess.run(
        [sys.executable, "-m", "memindex", "--root", str(root), "watch"], capture_output=True, text=True, timeout=30
    )
    assert second.returncode == 1
    assert f"pid {first.pid}" in second.stderr and "already" in second.stderr
    status = subprocess.run(
        [sys.executable, "-m", "memindex", "--root", str(root), "status", "--json"], capture_output=True, text=True, timeout=30
    )
    assert json.loads(status.stdout)["watcher_pid"] == first.pid
    assert first.p.poll() is None  # the refused one did not disturb the first
    assert first.stop() == 0
    assert not marker_path(root).exists()
    assert watcher_pid(root) is None


def test_watchers_started_at_the_same_instant_one_wins(root: Path, procs) -> None:
    contenders = [Proc(root) for _ in range(3)]
    procs.extend(contenders)
    wait_for(lambda: sum(p.p.poll() is not None for p in contenders) == 2, 30, "two refusals")
    alive = [p for p in contenders if p.p.poll() is None]
    assert len(alive) == 1
    winner = alive[0]
    assert all(p.p.returncode == 1 for p in contenders if p is not winner)
    for loser in contenders:
        if loser is not winner:
            loser.stop()
            assert f"pid {winner.pid}" in "".join(loser.stderr)
    assert watcher_pid(root) == winner.pid
    assert winner.stop() == 0


def test_marker_claims_are_exclusive_in_process(root: Path) -> None:
    barrier = threading.Barrier(8)
    won: list[Marker] = []
    refused: list[WatcherRunning] = []

    def contend() -> None:
        marker = Marker(root)
        barrier.wait()
        try:
            marker.claim(wait_s=0.5)
            won.append(marker)
        except WatcherRunning as exc:
            refused.append(exc)

    threads = [threading.Thread(target=contend) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(refused) == 7
    assert all(exc.pid == os.getpid() for exc in refused)
    won[0].release()
    assert not marker_path(root).exists()


def test_stale_marker_does_not_block(root: Path, procs) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    marker_path(root).write_text(f"{dead.pid}\n")
    assert watcher_pid(root) is None
    # a live pid that holds no lock (a recycled pid) is stale too
    marker_path(root).write_text(f"{os.getpid()}\n")
    assert watcher_pid(root) is None

    proc = Proc(root)
    procs.append(proc)
    proc.wait_started()
    assert marker_path(root).read_text().split()[0] == str(proc.pid)
    assert watcher_pid(root) == proc.pid
    assert proc.stop() == 0
    assert not marker_path(root).exists()


def test_killed_watcher_leaves_a_marker_that_does_not_block(root: Path, procs) -> None:
    first = Proc(root)
    procs.append(first)
    first.wait_started()
    first.p.kill()
    first.p.wait(10)
    assert marker_path(root).exists()  # SIGKILL: no cleanup
    assert watcher_pid(root) is None
    second = Proc(root)
    procs.append(second)
    second.wait_started()
    assert watcher_pid(root) == second.pid
    assert second.stop() == 0


# --- signals ----------------------------------------------------------------------------------


def test_sigterm_during_a_burst_finishes_the_sync_and_exits_0(root: Path, procs) -> None:
    proc = Proc(root, "--debounce", "100")
    procs.append(proc)
    proc.wait_started()
    folders = list(FOLDERS)
    for i in range(1500):
        write_mem(root, folders[i % len(folders)], f"m{i}", f"Memory {i}", body=f"token{i} " * 20)
    started = wait_for(
        lambda: [r for r in proc.events("sync_start") if r["trigger"] != "start"], 20, "a sync of the burst"
    )[0]
    assert proc.stop(signal.SIGTERM) == 0
    records = list(proc.records)
    assert records[-1]["event"] == "stop" and records[-1]["reason"] == "SIGTERM"
    after_start = records[records.index(started) :]
    assert any(r["event"] == "sync" for r in after_start), "the sync in progress was not finished"
    assert not marker_path(root).exists()

    conn = index.open_reader(root)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    sync(root)
    synced = index_rows(root)
    sync(root, rebuild=True)
    assert synced == index_rows(root)
    assert len(synced) == 1500


def test_sigint_stops_cleanly(root: Path, procs) -> None:
    proc = Proc(root)
    procs.append(proc)
    proc.wait_started()
    assert proc.stop(signal.SIGINT) == 0
    assert proc.events("stop")[-1]["reason"] == "SIGINT"
    assert not marker_path(root).exists()


# --- output and CLI ---------------------------------------------------------------------------


def test_text_log_and_quiet(root: Path, procs) -> None:
    loud = Proc(root, "--debounce", "50", json_mode=False)
    procs.append(loud)
    wait_for(lambda: any("initial sync" in line for line in loud.stderr), 20, "the text start lines")
    write_mem(root, "decisions", "texty", "Texty", atomic=True)  # never seen half-written
    line = wait_for(lambda: [x for x in loud.stderr if "decisions/texty.json" in x], what="a text sync line")[0]
    assert re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d memindex watch: 1 changed file", line)
    assert re.search(r"1 added, 0 updated, 0 removed, 0 invalid in \d+ ms", line)
    assert loud.stdout == []
    assert loud.stop() == 0

    quiet = Proc(root, "--debounce", "50", "--quiet", json_mode=False)
    procs.append(quiet)
    wait_for(lambda: marker_path(root).exists() and watcher_pid(root) == quiet.pid, 20, "the quiet watcher")
    write_mem(root, "decisions", "hush", "Hush", atomic=True)
    wait_for(
        lambda: "decisions/hush.json" in (indexed(root) or {}),
        what=f"a quiet sync (stderr: {quiet.stderr}, rc: {quiet.p.poll()})",
    )
    assert quiet.stop() == 0
    assert quiet.stderr == [] and quiet.stdout == []


def test_cli_rejects_bad_values(root: Path, capsys) -> None:
    from memindex.cli import main

    for args in (["--interval", "0"], ["--interval", "x"], ["--debounce", "-1"]):
        with pytest.raises(SystemExit) as exc:
            main(["--root", str(root), "watch", *args])
        assert exc.value.code == 2
    assert "--interval" in capsys.readouterr().err


def test_other_commands_do_not_import_watchdog(root: Path) -> None:
    code = (
        "import sys, contextlib, io\n"
        "from memindex.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['--root', {str(root)!r}, 'sync', '--quiet'])\n"
        f"    main(['--root', {str(root)!r}, 'status'])\n"
        "print(any(m == 'watchdog' or m.startswith('watchdog.') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# --- units ------------------------------------------------------------------------------------

MOUNTINFO = r"""22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
95 22 0:50 / /mnt/c rw,noatime shared:40 - 9p C:\134 rw,dirsync,aname=drvfs;path=C:\;uid=1000
96 22 0:51 / /mnt/share\040dir rw,relatime - cifs //server/share rw
97 22 0:52 / /home/u/nfs rw,relatime - nfs4 server:/export rw
98 97 0:53 / /home/u/nfs/local rw,relatime - tmpfs tmpfs rw
99 22 0:54 / /mnt/c rw,relatime - ext4 /dev/sdb1 rw
"""


def test_mount_detection() -> None:
    mounts = read_mounts(MOUNTINFO)
    assert ("/mnt/share dir", "cifs", "//server/share") in mounts
    # /mnt/c was mounted over by ext4 (listed last): native events
    assert needs_polling("/mnt/c/Users/me/proj/.claude/memory", mounts)[0] is False
    wsl = read_mounts(MOUNTINFO.replace("99 22 0:54 / /mnt/c", "99 22 0:54 / /mnt/x"))
    polling, why = needs_polling("/mnt/c/Users/me/proj/.claude/memory", wsl)
    assert polling and "9p" in why and "/mnt/c" in why
    assert needs_polling("/mnt/share dir/p/.claude/memory", mounts)[0] is True
    assert needs_polling("/home/u/nfs/p/.claude/memory", mounts)[0] is True
    assert needs_polling("/home/u/nfs/local/p", mounts)[0] is False  # a local mount inside NFS
    assert needs_polling("/home/u/other", mounts)[0] is False
    assert mount_of("/home/u/nfsx", mounts)[0] == "/"  # a prefix of the name is not a parent
    # /proc/mounts format (WSL 1 drvfs, WSL 2 9p)
    proc_mounts = "drvfs /mnt/d drvfs rw,noatime 0 0\nC:\\134 /mnt/e 9p rw,aname=drvfs 0 0\n/dev/sda1 / ext4 rw 0 0\n"
    assert needs_polling("/mnt/d/x", read_mounts(proc_mounts))[0] is True
    assert needs_polling("/mnt/e/x", read_mounts(proc_mounts))[0] is True
    assert needs_polling("/srv/x", read_mounts(proc_mounts))[0] is False
    assert needs_polling("/srv/x", [])[0] is False


def test_poll_scanner_diff(root: Path) -> None:
    scanner = PollScanner(root)
    s0 = scanner.scan()
    assert s0 is not None and s0.stats == 1 + 3 + len(FOLDERS) and s0.files == {}
    write_mem(root, "decisions", "a", "A")
    (root / "decisions" / ".a.json.swp").write_text("x")
    s1 = scanner.scan()
    assert PollScanner.diff(s0, s1) == [("created", "decisions/a.json", False)]
    assert s1.stats == 1 + 3 + len(FOLDERS) + 1  # the temp file is not even stat'ed
    time.sleep(0.01)
    write_mem(root, "decisions", "a", "A changed")
    s2 = scanner.scan()
    assert PollScanner.diff(s1, s2) == [("modified", "decisions/a.json", False)]
    assert PollScanner.diff(s2, scanner.scan()) == []
    shutil.rmtree(root / "decisions")
    s3 = scanner.scan()
    assert set(PollScanner.diff(s2, s3)) == {("deleted", "decisions", True), ("deleted", "decisions/a.json", False)}
    (root / "decisions").mkdir()
    sync(root)
    s4 = scanner.scan()
    assert {e for e in PollScanner.diff(s3, s4)} >= {("created", "decisions", True), ("created", INDEX_FILE, False)}
    os.unlink(root / INDEX_FILE)
    assert ("deleted", INDEX_FILE, False) in PollScanner.diff(s4, scanner.scan())
    shutil.rmtree(root)
    assert scanner.scan() is None
