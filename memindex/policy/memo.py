"""What one session's hooks tell each other: the prompt hook leaves the user's latest
prompt, its earlier turns and the memories it injected for the PreToolUse hook.

The transcript cannot carry them: Claude Code writes it lazily (in `-p` mode the first
turn's file does not exist yet when the first tool runs, `tests/e2e`), so a tool hook
reading it would see an older prompt or none, and would repeat what the prompt hook just
showed. The memo is one small JSON file per session in this user's private runtime folder
(`memindex.runtime`: mode 0700, owned by this user), named by a hash of the session id;
memos older than MEMO_TTL_S are removed when a new session writes its first. Standard
library only, and every function swallows its errors: a memo is an optimisation of
relevance, never a reason to fail a hook.
"""

from __future__ import annotations

import os
import time

from ..store import rootfs
from ..errors import UnsafeFile
from ..lean import dumps, loads
from ..runtime import name_hash, private_dir

MEMO_MAX = 65_536  # bytes of one memo file
MEMO_TTL_S = 2 * 86_400  # a session's memo is removed this long after its last prompt
PROMPT_MAX = 8_000  # characters of the prompt kept (coverage reads its rarest terms)


def _path(session_id: str, create: bool = False) -> str:
    return os.path.join(private_dir(create), f"session-{name_hash(session_id.encode('utf-8', 'surrogateescape'))}.json")


def recall(session_id: object) -> dict | None:
    """The session's memo {"prompt", "turns", "shown"}, or None (absent, unsafe, garbled)."""
    if not isinstance(session_id, str) or not session_id:
        return None
    try:
        data = loads(rootfs.read(_path(session_id), MEMO_MAX) or b"")
    except (OSError, ValueError, RecursionError, UnsafeFile):
        return None
    ok = isinstance(data, dict) and isinstance(data.get("prompt"), str)
    return data if ok and _strings(data.get("turns")) and _strings(data.get("shown")) else None


def remember(session_id: object, prompt: str, turns: list[str], shown: list[str]) -> None:
    """Leave the latest prompt (replacing the memo: what earlier prompts' hooks showed is
    in the transcript by the time a new prompt comes)."""
    _write(session_id, {"prompt": prompt[:PROMPT_MAX], "turns": [t[:PROMPT_MAX] for t in turns], "shown": shown})


def add_shown(session_id: object, memo: dict, shown: list[str]) -> None:
    """Add what a tool hook injected to the memo it read."""
    _write(session_id, {**memo, "shown": [*memo["shown"], *(p for p in shown if p not in memo["shown"])]})


def _write(session_id: object, memo: dict) -> None:
    if not isinstance(session_id, str) or not session_id:
        return
    try:
        path = _path(session_id, create=True)
        data = dumps(memo).encode("utf-8", "surrogateescape")
        if len(data) > MEMO_MAX:
            return
        scratch = f"{path}.{os.getpid()}.tmp"
        rootfs.write(scratch, data)
        # Never a rename over the old memo: ext4 then forces the new file's blocks out first
        # (auto_da_alloc), 0.1-4 ms of every prompt. A reader sees the old memo, none (the
        # memo is a hint: every reader falls back to the transcript), or the new one; never half.
        try:
            os.unlink(path)
            new = False
        except FileNotFoundError:
            new = True
        os.rename(scratch, path)
        if new:
            _prune(os.path.dirname(path))
    except (OSError, ValueError, UnsafeFile):
        pass


def _prune(folder: str) -> None:
    cutoff = time.time() - MEMO_TTL_S
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith("session-") and entry.is_file(follow_symlinks=False):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
