"""The hooks' side of capture (Stop, SessionEnd): note that the session's summary is
wanted and start one detached `memindex capture` for it unless one is already running.
Returns at once; standard library and the package's lean modules only.

Coalescing, with two files per session in this user's private runtime folder (named by a
hash of the root and the session id): the hook touches `.again`, then starts a job only
when no job holds `.lock`. A job deletes `.again` before it reads the transcript and,
once done, looks for it again after releasing the lock: a Stop that came meanwhile is
never lost, and any number of Stops of one session make at most one job run at a time.
"""

from __future__ import annotations

import os

from ..defaults import SESSION_ID_MAX
from ..store import rootfs
from ..runtime import name_hash, private_dir

class Markers:
    """The coalescing files of one session of one root."""

    __slots__ = ("lock", "again", "done")

    def __init__(self, root: str, session_id: str, create: bool = False) -> None:
        key = name_hash(f"{os.path.realpath(root)}\0{session_id}".encode("utf-8", "surrogateescape"))
        base = os.path.join(private_dir(create), f"capture-{key}")
        self.lock, self.again, self.done = base + ".lock", base + ".again", base + ".done"


def valid_request(data: dict) -> tuple[str, str] | None:
    """(transcript path, session id) of a hook's input, or None when it names none."""
    path, session_id = data.get("transcript_path"), data.get("session_id")
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path or not path.endswith(".jsonl"):
        return None
    if not isinstance(session_id, str) or not session_id or len(session_id) > SESSION_ID_MAX or "\x00" in session_id:
        return None
    return path, session_id


def busy(lock: str) -> bool:
    """Whether a capture job holds the session's lock now."""
    from ..store.rootfs import try_lock

    fd = rootfs.open_fd(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        return not try_lock(fd)
    finally:
        os.close(fd)  # closing releases a lock just taken


def request_capture(root: str, data: dict, enabled: bool) -> bool:
    """Ask for the session's summary to be (re)written; True when a job was started.
    Raises OSError or UnsafeFile (the caller notes it) when the runtime folder is unusable."""
    request = valid_request(data) if enabled else None
    if request is None:
        return False
    transcript, session_id = request
    marks = Markers(root, session_id, create=True)
    rootfs.write(marks.again, b"")
    if busy(marks.lock):
        return False
    from ..background import start

    start(root, "capture", "--quiet", "--transcript", transcript, "--session-id", session_id, nice=True)
    return True
