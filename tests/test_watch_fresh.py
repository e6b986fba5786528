"""Readers ask a running watcher whether the index is current (issue 26): O(1) instead of one
stat per memory file, and never a wrong "yes" (memindex/index/watched.py,
memindex/watch/answer.py)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memindex import index
from memindex.config import Config
from memindex_dev.evaluation.bench import wait_for
from memindex.index import fresh, watched
from memindex.index import sync as sync_mod
from memindex.index.sync import sync
from memindex.policy.recall import search_hits

from conftest import cli_cmd, cli_env
from freshkit import forge_same_stat, rewrite_in_place, settled_store
from watchkit import Running

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private runtime folder of this test's own (the watcher's socket goes there)."""
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder / "memindex"


class Passes:
    """Counts what a reader does on this thread: stat passes and stats of memory files."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.passes = 0
        self.fallbacks = 0  # the reader's own check (`fresh.is_current`) instead of the watcher's word
        self.json_stats = 0
        self.scans: list[str] = []
        me = threading.get_ident()
        real_fp, real_stat, real_scandir = fresh.stat_fingerprint, os.stat, os.scandir

        def fingerprint(*a, **k):
            if threading.get_ident() == me:
                self.passes += 1
            return real_fp(*a, **k)

        def stat(p, *a, **k):
            if threading.get_ident() == me and str(p).endswith(".json"):
                self.json_stats += 1
            return real_stat(p, *a, **k)

        def scandir(p=".", *a, **k):
            if threading.get_ident() == me:
                self.scans.append(str(p))
            return real_scandir(p, *a, **k)

        real_current = watched.is_current

        def current(*a, **k):
            if threading.get_ident() == me:
                self.fallbacks += 1
            return real_current(*a, **k)

        monkeypatch.setattr(fresh, "stat_fingerprint", fingerprint)
        monkeypatch.setattr(watched, "is_current", current)
        monkeypatch.setattr(os, "stat", stat)
        monkeypatch.setattr(os, "scandir", scandir)


def hits(root: Path, word: str) -> list[str]:
    return [h.path for h in search_hits(str(root), Config(), word)]


def current(root: Path) -> bool:
    conn = index.open_reader(root)
    try:
        return watched.is_current_asking_watcher(conn, root)
    finally:
        conn.close()


def gen_of(root: Path) -> list:
    conn = index.open_reader(root)
    try:
        return watched.generation(conn)
    finally:
        conn.close()


# --- the watcher's answer is used, and is right ---------------------------------------------


def test_same_size_edit_with_its_mtime_put_back_is_seen_through_the_watcher(
    tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, path = settled_store(tmp_path, monkeypatch)
    with Running(root, debounce_ms=400) as run:
        run.settle()
        counted = Passes(monkeypatch)
        assert hits(root, "alpha") == ["decisions/db.json"]
        forge_same_stat(path, "alpha", "gamma")  # only the ctime moves
        counted.json_stats = 0  # (the edit's own)
        assert hits(root, "gamma") == ["decisions/db.json"]
        assert hits(root, "alpha") == []
        answers = dict(run.watcher.answerer.answers)
        assert run.watcher.answerer.adoptions == 0  # the reader held an index the watcher synced: nothing to check
    assert (counted.fallbacks, counted.passes, counted.json_stats) == (0, 0, 0)  # every answer came from the watcher
    assert answers["fresh"] >= 3 and answers["waited"] >= 1  # it synced the edit for the reader


def test_the_watchers_answer_costs_no_stat_per_file(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = settled_store(tmp_path, monkeypatch)
    for i in range(50):
        (root / "decisions" / f"n{i}.json").write_text((root / "decisions" / "db.json").read_text().replace('"db"', f'"n{i}"'))
    time.sleep(0.05)
    with monkeypatch.context() as patch:
        patch.setattr(sync_mod, "RACY_WINDOW_NS", 10**7)  # (settled_store's rule)
        sync(root, Config())
    with monkeypatch.context() as patch:  # without a watcher: the folders listed, each file stat-ed
        counted = Passes(patch)
        assert current(root)
    assert counted.passes == 1 and len(counted.scans) >= 2
    with Running(root) as run:
        run.settle()
        counted = Passes(monkeypatch)
        assert current(root)
    assert (counted.fallbacks, counted.passes, counted.json_stats, counted.scans) == (0, 0, 0, [])


def test_a_write_just_before_the_query_is_seen(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each edit lands microseconds before the search: the watcher has not synced it (its
    debounce is 400 ms), so it syncs at once for the reader, or the reader stats."""
    root, path = settled_store(tmp_path, monkeypatch)
    words = ["alpha", "bravo", "delta", "gamma", "kappa", "omega", "sigma", "theta"]
    with Running(root, debounce_ms=400) as run:
        run.settle()
        for i in range(1, 24):
            old, new = words[(i - 1) % len(words)], words[i % len(words)]
            rewrite_in_place(path, old, new)
            assert hits(root, new) == ["decisions/db.json"], (i, new)
            if i % 4 == 0:  # and a new file (the folder's mtime moves: the watcher makes a full sync)
                fresh_id = f"new{i}"
                (root / "decisions" / f"{fresh_id}.json").write_text(
                    path.read_text().replace('"db"', f'"{fresh_id}"').replace(new, f"zeta{i}x"))
                assert hits(root, f"zeta{i}x") == [f"decisions/{fresh_id}.json"]
        assert run.watcher.answerer.answers["waited"] >= 1


def test_events_still_on_their_way_are_waited_for(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy observer (each event handed over 10 ms late): the edit's event is still in the
    queue when the reader asks; the watcher's answer waits for its sentinel, behind it."""
    root, path = settled_store(tmp_path, monkeypatch)
    words = ["alpha", "bravo", "delta", "gamma", "kappa"]
    with Running(root, debounce_ms=400) as run:
        run.settle()
        slow = run.watcher.on_event
        monkeypatch.setattr(run.watcher, "on_event", lambda event: (time.sleep(0.01), slow(event)))
        for i in range(1, 9):
            old, new = words[(i - 1) % len(words)], words[i % len(words)]
            rewrite_in_place(path, old, new)
            assert hits(root, new) == ["decisions/db.json"], (i, new)


# --- anything uncertain: the reader makes its own stat pass ---------------------------------


def test_no_watcher_the_stat_pass(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, path = settled_store(tmp_path, monkeypatch)
    counted = Passes(monkeypatch)
    started = time.perf_counter()
    assert watched.ask(root, gen_of(root)) is None
    assert time.perf_counter() - started < 0.05
    forge_same_stat(path, "alpha", "gamma")
    assert hits(root, "gamma") == ["decisions/db.json"]
    assert counted.fallbacks >= 1


def test_a_polling_watcher_does_not_answer(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, path = settled_store(tmp_path, monkeypatch)
    with Running(root, mode="polling", interval=5) as run:
        assert run.watcher.answerer is None
        assert not os.path.exists(watched.socket_path(root))
        counted = Passes(monkeypatch)
        forge_same_stat(path, "alpha", "gamma")  # before the next scan
        assert hits(root, "gamma") == ["decisions/db.json"]
    assert counted.fallbacks >= 1


def test_lost_events_mean_unknown(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A queue overflow (watchdog says so in its log) queues a full sync: until it has
    committed nothing is vouched for; a sentinel whose event never comes: unknown."""
    root, path = settled_store(tmp_path, monkeypatch)
    with Running(root, debounce_ms=400) as run:
        run.settle()
        answerer = run.watcher.answerer
        gen = gen_of(root)
        assert answerer.answer(gen)["fresh"] is True
        logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed; filesystem events were lost")
        reply = answerer.answer(gen)
        assert reply == {"fresh": False, "why": "changes not synced yet"}
        run.settle()
        assert answerer.answer(gen_of(root))["fresh"] is True  # the full sync ran
        monkeypatch.setattr(answerer, "is_sentinel", lambda p: p.startswith(answerer.prefix))  # events lost
        assert answerer.answer(gen_of(root))["fresh"] is False
        counted = Passes(monkeypatch)
        forge_same_stat(path, "alpha", "gamma")
        assert hits(root, "gamma") == ["decisions/db.json"]
    assert counted.fallbacks >= 1


def test_a_starting_watcher_and_a_linked_memory_are_not_vouched_for(
    tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, path = settled_store(tmp_path, monkeypatch)
    with Running(root) as run:
        run.settle()
        answerer = run.watcher.answerer
        run.watcher.started.clear()
        assert answerer.answer(gen_of(root)) == {"fresh": False, "why": "starting"}
        run.watcher.started.set()
        # a memory that is a link to a file elsewhere in the root: edits through the target
        # raise their event in another folder
        target = root / "elsewhere.json"
        target.write_text(path.read_text().replace('"db"', '"ln"'))
        (root / "decisions" / "ln.json").symlink_to(target)
        run.settle()
        wait_for(lambda: run.watcher.answerer.linked, what="the link to be seen")
        assert "link" in answerer.answer(gen_of(root))["why"]
        counted = Passes(monkeypatch)
        rewrite_in_place(target, "alpha", "gamma")
        assert "decisions/ln.json" in hits(root, "gamma")
    assert counted.fallbacks >= 1


def test_a_memory_with_another_hard_link_is_not_vouched_for(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written through its other name (outside the watched folders), a hard-linked memory
    raises no event where the watcher looks: while one exists, readers stat. (Making the
    link raises no event in a watched folder either: the watcher finds links when it
    lists the folders, at each full sync; docs/watch.md says so.)"""
    root, path = settled_store(tmp_path, monkeypatch)
    with Running(root) as run:
        run.settle()
        answerer = run.watcher.answerer
        assert answerer.answer(gen_of(root))["fresh"] is True
        other = tmp_path / "backup-db.json"
        os.link(path, other)
        (root / "decisions" / "db.json.tmp").write_text("x")  # an editor's temporary file...
        os.replace(root / "decisions" / "db.json.tmp", root / "decisions" / "new.json")  # ...renamed: a full sync
        wait_for(lambda: answerer.linked, what="the hard link to be seen")
        assert "link" in answerer.answer(gen_of(root))["why"]
        counted = Passes(monkeypatch)
        rewrite_in_place(other, "alpha", "gamma")
        assert hits(root, "gamma") == ["decisions/db.json"]
        assert counted.fallbacks >= 1
        os.unlink(other)
        rewrite_in_place(path, "gamma", "delta")  # a targeted sync looks at the file again
        wait_for(lambda: not answerer.linked, what="the link to go")
        run.settle()
        assert answerer.answer(gen_of(root))["fresh"] is True


def test_an_index_written_elsewhere_is_checked_then_adopted(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = settled_store(tmp_path, monkeypatch)
    with Running(root) as run:
        run.settle()
        before = gen_of(root)
        assert run.watcher.answerer.answer(before)["fresh"] is True
        with monkeypatch.context() as patch:
            patch.setattr(sync_mod, "RACY_WINDOW_NS", 10**7)
            sync(root, Config())  # another writer: the index's generation moves
        conn = index.open_reader(root)
        try:
            assert not watched.vouches(conn, root)  # not the index the watcher synced
            wait_for(lambda: run.watcher.answerer.generation == watched.generation(conn), what="the adoption")
            assert watched.vouches(conn, root)  # checked (one stat pass in the watcher), then trusted
            assert run.watcher.syncs == 1  # no sync was needed for it
        finally:
            conn.close()



# --- only this user's watcher is asked ------------------------------------------------------


class FakeWatcher:
    """A listener at the watcher's socket path that always says "fresh"."""

    def __init__(self, path: str, gen: list) -> None:
        self.gen, self.path = gen, path
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o600)
        self.sock.listen(4)
        self.sock.settimeout(0.1)
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.recv(4096)
                conn.sendall(json.dumps({"ok": True, "fresh": True, "gen": self.gen}).encode() + b"\n")

    def close(self) -> None:
        self.stop = True
        self.thread.join(2)
        self.sock.close()


def test_only_a_private_socket_of_this_user_is_asked(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = settled_store(tmp_path, monkeypatch)
    path = watched.socket_path(root)
    assert not path.startswith(str(tmp_path / "p"))  # never inside the project
    gen = gen_of(root)
    fake = FakeWatcher(path, gen)
    try:
        conn = index.open_reader(root)
        try:
            assert watched.vouches(conn, root)  # ours, private: believed (the checks below can fail)
            os.chmod(path, 0o666)
            assert not watched.vouches(conn, root)  # open to others
            os.chmod(path, 0o600)
            if os.geteuid() == 0:
                os.chown(path, 65534, -1)
                assert not watched.vouches(conn, root)  # another user's socket
                os.chown(path, 0, -1)
            with monkeypatch.context() as patch:
                patch.setattr(watched.os, "geteuid", lambda: os.getuid() + 1)
                assert not watched.vouches(conn, root)  # seen from another user, this one is not theirs
            os.chmod(os.path.dirname(path), 0o755)
            assert not watched.vouches(conn, root)  # a folder others may enter
            os.chmod(os.path.dirname(path), 0o700)
            assert watched.vouches(conn, root)
        finally:
            conn.close()
    finally:
        fake.close()


def test_a_stale_socket_or_a_planted_file_is_ignored(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, path = settled_store(tmp_path, monkeypatch)
    sock_path = watched.socket_path(root)
    os.makedirs(os.path.dirname(sock_path), mode=0o700, exist_ok=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(sock_path)  # a killed watcher's socket: nobody listens
    dead.close()
    started = time.perf_counter()
    assert watched.ask(root, gen_of(root)) is None
    assert time.perf_counter() - started < 0.05
    forge_same_stat(path, "alpha", "gamma")
    assert hits(root, "gamma") == ["decisions/db.json"]
    with Running(root) as run:  # a watcher replaces a dead socket of its user (it holds the root's marker)
        assert run.watcher.answerer is not None
        assert watched.ask(root, gen_of(root))["fresh"] is True
    assert not os.path.exists(sock_path)
    (tmp_path / "elsewhere").write_text("{}")
    os.symlink(tmp_path / "elsewhere", sock_path)
    assert watched.ask(root, gen_of(root)) is None
    with Running(root) as run:  # a link is never replaced or followed: the watcher says so, readers stat
        assert run.watcher.answerer is None
        assert any("cannot listen" in r.get("message", r.get("msg", "")) or r["event"] == "warning" for r in run.records)
    assert os.path.islink(sock_path)


# --- as users run it ------------------------------------------------------------------------


def test_memindex_search_asks_memindex_watch(tmp_path: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, path = settled_store(tmp_path, monkeypatch)
    env = {**cli_env(), "XDG_RUNTIME_DIR": str(runtime.parent)}
    watcher = subprocess.Popen(cli_cmd("--root", str(root), "watch", "--json"), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        wait_for(lambda: os.path.exists(watched.socket_path(root)) and watched.ask(root, gen_of(root)), 20,
                 "the watcher to answer")
        forge_same_stat(path, "alpha", "gamma")
        out = subprocess.run(cli_cmd("--root", str(root), "search", "gamma", "--json"), env=env,
                             capture_output=True, text=True, check=True)
        assert [h["path"] for h in json.loads(out.stdout)] == [".claude/memory/decisions/db.json"]
    finally:
        watcher.terminate()
        watcher.wait(20)
    assert not os.path.exists(watched.socket_path(root))
