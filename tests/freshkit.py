"""Edits a stat diff finds hard to see, for the freshness tests (tests/test_freshness.py,
tests/test_watch_fresh.py): a rewrite in place, a same-size edit with its mtime put back,
and a store whose last sync recorded every file's stat."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import write_mem
from memindex import index
from memindex.config import Config
from memindex.index import sync as sync_mod
from memindex.index.sync import sync


def rewrite_in_place(path: Path, old: str, new: str) -> None:
    """`open(..., "r+")`: the same inode, the folder's mtime untouched."""
    ino = path.stat().st_ino
    with open(path, "r+", encoding="utf-8") as fh:
        text = fh.read().replace(old, new)
        fh.seek(0)
        fh.write(text)
        fh.truncate()
    assert path.stat().st_ino == ino


def settled_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A store whose last full sync recorded every file's stat (nothing left to re-read
    under the racy rule): the state a user meets every day. The files are made 50 ms
    before the sync, which runs with a 10 ms racy window instead of 2 s, so that the tests'
    edits land in a later timestamp tick than the files' creation, as the real window
    guarantees for anything a sync records."""
    root = tmp_path / "p" / ".claude" / "memory"
    path = write_mem(root, "decision", "db", "Chose postgres", ["db"], {"context": "alpha relational data"})
    write_mem(root, "runbook", "deploy", "Deploy the api", ["ops"], {"steps": ["push the tag"]})
    time.sleep(0.05)
    with monkeypatch.context() as patch:
        patch.setattr(sync_mod, "RACY_WINDOW_NS", 10**7)
        sync(root, Config())
    conn = index.open_reader(root)
    try:
        assert index.is_current(conn, root)  # the state the shortcuts below answer from
    finally:
        conn.close()
    return root, path


def forge_same_stat(path: Path, old: str, new: str) -> None:
    """An in-place, same-size edit whose mtime is put back (`touch -r`, `cp -p`, a tool that
    keeps timestamps): only the file's ctime moves. The hardest edit a stat diff can see."""
    st = path.stat()
    rewrite_in_place(path, old, new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
