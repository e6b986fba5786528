"""The capture job (`memindex capture`, started detached by the Stop and SessionEnd hooks):
summarise one session's transcript into its summary, once for every burst of requests.

It holds the session's lock while it works (schedule.py explains the coalescing), waits
until `capture.min_interval_s` has passed since its session's last capture (a session's
turns come faster than its summary needs rewriting), and writes through the write path,
whose writes are atomic: a job killed at any point leaves the previous summary or the new
one, never a torn file, and the next Stop starts a new job.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..defaults import CAPTURE_LOCK_TRIES_S, CAPTURE_MARKER_TTL_S
from ..store import rootfs
from ..config import Config
from ..errors import UnsafeFile
from .parse import read_transcript
from .schedule import Markers
from .store import write_summary
from .summary import summarise



def capture_transcript(root: str, cfg: Config, transcript: str, *, dry_run: bool = False) -> dict[str, Any]:
    """Summarise one transcript and write (or update) its summary: the write path's answer,
    or {status: skipped, reason} when the session has no prompt yet."""
    session = read_transcript(transcript)
    if not dry_run and cfg["review.usage"]:
        record_use(root, session)
    if not cfg["capture.enabled"]:
        return {"status": "skipped", "reason": "capture.enabled is false (use recorded)", "session_id": session.session_id}
    memory = summarise(session, transcript)
    if memory is None:
        return {"status": "skipped", "reason": "no user prompt in the transcript", "session_id": session.session_id}
    result = write_summary(root, cfg, memory, dry_run=dry_run)
    result["session_id"] = session.session_id
    if not dry_run:
        from .fold import fold

        folded = fold(root, cfg)
        if folded["folded"] or folded["archived"] or folded["failed"]:
            result["folded"] = folded
    return result


def record_use(root: str, session) -> int:
    """The memories the session's model opened (capture/opens.py), into this user's use
    log (memindex/usage.py); returns how many opens were new."""
    from .. import usage
    from .opens import opens

    if not session.session_id or not session.reads:
        return 0
    return usage.record_opens(root, session.session_id, opens(root, session.reads, session.cwd))


def _acquire(lock: str) -> int | None:
    from ..store.rootfs import try_lock

    fd = rootfs.open_fd(lock, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + CAPTURE_LOCK_TRIES_S
    while not try_lock(fd):
        if time.monotonic() > deadline:
            os.close(fd)
            return None
        time.sleep(0.02)
    return fd


def _since_last(done: str) -> float:
    try:
        return time.time() - os.lstat(done).st_mtime
    except FileNotFoundError:
        return float("inf")


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def run_job(root: str, cfg: Config, transcript: str, session_id: str) -> dict[str, Any]:
    """Capture the session until no request is pending; the last answer, or
    {status: coalesced} when another job holds the session's lock (it will see the request)."""
    marks = Markers(root, session_id, create=True)
    result: dict[str, Any] = {"status": "coalesced", "session_id": session_id}
    interval = float(cfg["capture.min_interval_s"])  # type: ignore[arg-type]
    while True:
        fd = _acquire(marks.lock)
        if fd is None:
            return result
        try:
            while True:
                wait = interval - _since_last(marks.done)
                if wait > 0:
                    time.sleep(wait)
                _unlink(marks.again)  # requests from now on ask for another round
                result = capture_transcript(root, cfg, transcript)
                rootfs.write(marks.done, b"")
                if not os.path.lexists(marks.again):
                    break
        finally:
            os.close(fd)
        if not os.path.lexists(marks.again):  # a request between the last check and the release
            _sweep(os.path.dirname(marks.lock))
            return result


def _sweep(folder: str) -> None:
    """Remove capture markers untouched for CAPTURE_MARKER_TTL_S (sessions long over)."""
    now = time.time()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("capture-") and entry.is_file(follow_symlinks=False):
                    try:
                        if now - entry.stat(follow_symlinks=False).st_mtime > CAPTURE_MARKER_TTL_S:
                            os.unlink(entry.path)
                    except OSError:
                        continue
    except (OSError, UnsafeFile):
        pass
