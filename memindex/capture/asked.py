"""What the Stop hook already asked the model to save in a session: the topics' keys and
how many asks, so that a topic is asked about at most once per session, whatever happens
in between.

One small JSON file per session in this user's private runtime folder (never in the
repository, where a clone could carry one or a `git clean` remove it), named by a hash of
the session id. Nothing but the age pruning removes it, and only after ASKED_TTL_S of
silence: guard files that a save's cleanup deletes or that expire during a long save let
the Stop hook fire again (idnotbe/claude-memory, fix-stop-hook-refire). A state that cannot be read
or written means no ask at all: without it the hook could not keep its promise of once per topic.
"""

from __future__ import annotations

import os
import time

from ..store import rootfs
from ..defaults import ASKED_MAX_BYTES, ASKED_MAX_TOPICS, ASKED_TTL_S
from ..errors import UnsafeFile
from ..lean import dumps, loads
from ..runtime import name_hash, private_dir

PREFIX = "triage-"


class Unavailable(Exception):
    """No private place for the session's state: the hook stays quiet."""


def _path(session: str, create: bool) -> str:
    return os.path.join(private_dir(create), f"{PREFIX}{name_hash(session.encode('utf-8', 'surrogateescape'))}.json")


def load(session: str) -> dict:
    """{"topics": [[word, ...], ...], "asks": N} of the session (empty when new). Raises
    Unavailable when the runtime folder is not private or the file is not this user's."""
    try:
        raw = rootfs.read(_path(session, create=True), ASKED_MAX_BYTES)
    except (OSError, UnsafeFile) as exc:
        raise Unavailable(str(exc)) from None
    state = {"topics": [], "asks": 0}
    if raw:
        try:
            data = loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            data = None
        if isinstance(data, dict):
            topics = data.get("topics")
            if isinstance(topics, list):
                state["topics"] = [t for t in topics if isinstance(t, list) and all(isinstance(w, str) for w in t)]
            asks = data.get("asks")
            if isinstance(asks, int) and not isinstance(asks, bool) and asks >= 0:
                state["asks"] = asks
    return state


def save(session: str, state: dict) -> None:
    """Replace the session's state (atomically: a reader sees the old or the new one),
    its last ASKED_MAX_TOPICS topics (the topics just asked about are the last). Raises
    Unavailable when it cannot be written: the caller must not ask then."""
    try:
        path = _path(session, create=True)
        state = {**state, "topics": state["topics"][-ASKED_MAX_TOPICS:]}
        data = dumps(state).encode("utf-8", "surrogateescape")
        while len(data) > ASKED_MAX_BYTES and len(state["topics"]) > 1:  # keys of an older version only
            state = {**state, "topics": state["topics"][1:]}  # the oldest topics go first, never the newest
            data = dumps(state).encode("utf-8", "surrogateescape")
        if len(data) > ASKED_MAX_BYTES:
            raise ValueError("the topic asked about does not fit the session's state")
        new = not os.path.lexists(path)
        scratch = f"{path}.{os.getpid()}.tmp"
        rootfs.write(scratch, data)
        os.replace(scratch, path)
    except (OSError, ValueError, UnsafeFile) as exc:
        raise Unavailable(str(exc)) from None
    if new:
        _prune(os.path.dirname(path))


def _prune(folder: str) -> None:
    """Remove the state of sessions silent for ASKED_TTL_S (errors ignored)."""
    cutoff = time.time() - ASKED_TTL_S
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(PREFIX) and entry.is_file(follow_symlinks=False):
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
    except OSError:
        pass
