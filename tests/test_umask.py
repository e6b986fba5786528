"""Issue 36, finding 5: under `umask 000` memindex wrote what it then refused. A saved memory
and memory-config.json were created 0666, sessions-local/ 0777: sync refused them as
world-writable (the memory just saved missing from search, every capture failing) while any
local user could rewrite them. Everything memindex creates in a project gets an explicit
mode (files 0644, folders 0755; a umask only takes bits away), whatever the umask.

Each test sets the umask in this process (inherited by the commands and hooks it starts)
and restores it after.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import REPO, cli_env, run_cli, search_paths
from memindex.defaults import CAPTURE_FOLDER
from memindex_dev.evaluation.transcripts import TranscriptWriter, write_sessions
from memindex.store import rootfs
from memindex.store.atomic import create_exclusive, replace_atomic

pytestmark = pytest.mark.skipif(not hasattr(os, "umask") or sys.platform == "win32", reason="POSIX modes")
DATA = Path(__file__).parent / "data"


@pytest.fixture()
def loose_umask():
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def loose_entries(top: Path) -> list[str]:
    """Every file or folder below `top` that another user may write to."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & (stat.S_IWOTH | stat.S_IWGRP):
                out.append(f"{path.relative_to(top)} {stat.S_IMODE(st.st_mode):04o}")
    return sorted(out)


def cli(project: Path, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    done = run_cli(*args, cwd=project)
    assert done.returncode in ok, (args, done.stdout, done.stderr)
    return done


def test_init_save_capture_import_and_sync_under_umask_000(tmp_path: Path, loose_umask) -> None:
    project = tmp_path / "proj"
    project.mkdir(mode=0o755)
    cli(project, "init", "--write-settings")
    root = project / ".claude" / "memory"
    saved = json.loads(cli(project, "save", "--category", "decision", "--data", json.dumps({
        "title": "Quokka queues carry the billing events", "tags": ["billing"],
        "content": {"status": "accepted", "context": "billing events got lost", "decision": "use quokka queues"}})).stdout)
    assert saved["indexed"] is True, saved
    # capture, as the Stop hook runs it: sessions-local/ and the summary in the background
    sid = "5d0a4f52-0000-4000-8000-00000000cafe"
    w = TranscriptWriter(sid, str(project), datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc))
    w.prompt("Make the wombat export skip cancelled orders")
    w.text("Done: the wombat export filters cancelled orders now.")
    transcript = w.write(tmp_path / f"{sid}.jsonl")
    (root / "memory-config.json").write_text(json.dumps({"capture": {"min_interval_s": 0}}))
    os.chmod(root / "memory-config.json", 0o644)  # written by the test, not by memindex
    payload = {"cwd": str(project), "transcript_path": str(transcript), "session_id": sid, "hook_event_name": "Stop",
               "stop_hook_active": False}
    stop = subprocess.run([sys.executable, "-I", "-S", str(REPO / "hooks" / "memindex_hook.py"), "stop"],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=30, env=cli_env())
    assert stop.returncode == 0 and stop.stderr == "", stop.stderr
    summary = root / CAPTURE_FOLDER / f"session-{sid}.json"
    deadline = time.monotonic() + 20
    while not summary.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert summary.exists(), (root / ".memindex.log").read_text() if (root / ".memindex.log").exists() else "no log"
    # importers: transcripts (the capture summariser) and ADRs (the write path's batches)
    folder = tmp_path / "transcripts"
    write_sessions(folder, 2, str(project), seed=5)
    cli(project, "import", "transcripts", "--from", str(folder))
    shutil.copytree(DATA / "adr", project / "docs" / "adr")
    for dirpath, _, names in os.walk(project / "docs"):  # the test's own copies: not what is judged
        os.chmod(dirpath, 0o755)
        for n in names:
            os.chmod(os.path.join(dirpath, n), 0o644)
    adrs = cli(project, "import", "adr", ok=(0, 1))  # registered in place: memory-config.json rewritten
    assert "registered in .claude/memory/memory-config.json" in adrs.stdout
    cli(project, "sync")
    # a memory replaced through the write path keeps its own bits
    cli(project, "update", saved["path"], "--data", json.dumps({"tags": ["billing", "queues"]}))

    assert loose_entries(project) == []
    status = json.loads(cli(project, "status", "--json").stdout)
    assert status["ok"] and status["refused"] == {} and status["invalid"] == {}, status
    validate = run_cli("validate", cwd=project)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert search_paths(root, "quokka queues billing")[0].endswith(saved["path"].split("/", 2)[-1])
    assert any(p.startswith(f"{CAPTURE_FOLDER}/session-{sid}") for p in search_paths(root, "wombat export cancelled"))
    assert len(list((root / CAPTURE_FOLDER).glob("*.json"))) == 3
    assert status["documents"]["indexed"].get("adr")  # the ADRs, indexed in place


def test_the_helpers_never_create_what_others_may_write(tmp_path: Path, loose_umask) -> None:
    """The three ways memindex creates things in a root, each under umask 000: a new file
    (create_exclusive, replace_atomic), folders with their parents (make_folders); a file
    that is already every user's to write loses that when memindex replaces it."""
    rootfs.make_folders(str(tmp_path / "a" / "b" / "c"))
    assert [stat.S_IMODE((tmp_path / p).stat().st_mode) for p in ("a", "a/b", "a/b/c")] == [0o755] * 3
    rootfs.make_folders(str(tmp_path / "a" / "b" / "c"))  # exists: nothing happens
    rootfs.make_folders(str(tmp_path / "private" / "x"), 0o700)
    assert stat.S_IMODE((tmp_path / "private" / "x").stat().st_mode) == 0o700
    (tmp_path / "file").write_text("in the way")
    with pytest.raises(FileExistsError):
        rootfs.make_folders(str(tmp_path / "file"))
    create_exclusive(str(tmp_path / "new.json"), b"{}")
    replace_atomic(str(tmp_path / "other.json"), b"{}")
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "other.json").stat().st_mode) == 0o644
    loose = tmp_path / "loose.json"
    loose.write_text("{}")
    os.chmod(loose, 0o666)
    replace_atomic(str(loose), b"[]")
    assert stat.S_IMODE(loose.stat().st_mode) == 0o664  # the user's own group may still write (sync allows it)
    os.chmod(loose, 0o600)
    replace_atomic(str(loose), b"{}")
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600  # the user's own choice is kept
