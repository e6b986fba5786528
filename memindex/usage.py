"""The use log: what this user's sessions were shown of a store's memories and which of
them the model then opened, kept outside the repository, per user, bounded.

Where: `$XDG_STATE_HOME/memindex/usage/<hash of the root's real path>/` (default
`~/.local/state/memindex/...`), a private folder (0700) of this user. It survives a
reboot (the runtime folder would not) and never enters the repository: a use count says
how one person works, not what the project knows.

What: one JSON-lines file per session (`s-<hash of the session id>.jsonl`; events with no
session, a `memindex search` typed at a terminal by a script, go to `cli-<YYYYMMDD>.jsonl`).
Each line is one event:

    {"t": 1767225600.0, "e": "prompt", "c": "hook", "h": "<hash of the prompt>",
     "k": [["decisions/x.json", "P(relevant) 0.91"]], "d": [["runbooks/y.json", "P(relevant) 0.12"]]}
    {"t": ..., "e": "shown", "c": "search" | "mcp" | "recent", "k": ["decisions/x.json", ...]}
    {"t": ..., "e": "open", "c": "read" | "get" | "mcp-get" | "bash", "k": "decisions/x.json", "i": "<tool_use id>"}

`prompt`: what the prompt hook injected (`k`) and what it considered and dropped (`d`),
each with the reason it gives (`memindex explain`'s decision: the rule's words, or the
relevance model's probability; the explanation of the features is left to `explain`).
The prompt itself is never stored, only a hash (to find its turn in the transcript).
`open`: a Read of the memory's file, `memindex get`, the MCP `get`, a command that
prints the file, as the transcript shows them (counted once per tool call id at Stop and
SessionEnd, by the capture job). Paths are the memory's path in the root
(`decisions/x.json`), or a document's row (`@docs/adr/0007.md#decision`).

Bounds (memindex/defaults.py): a session's file stops growing at USAGE_SESSION_MAX_BYTES;
files untouched for USAGE_TTL_DAYS, and past the newest USAGE_MAX_SESSIONS, are removed
when a new session starts its file; a reader reads at most USAGE_READ_MAX_BYTES, newest
files first. Writing never fails a caller: errors are swallowed (a use count is a hint).
Standard library only: the prompt hook writes here.
"""

from __future__ import annotations

import os
import time

from .defaults import USAGE_MAX_SESSIONS, USAGE_READ_MAX_BYTES, USAGE_SESSION_MAX_BYTES, USAGE_TTL_DAYS
from .errors import UnsafeFile
from .lean import dumps, loads
from .runtime import name_hash, user_folder
from .store import rootfs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"  # what Claude Code gives the commands and MCP servers it starts
WHY_MAX = 160  # characters of one decision's reason kept


def folder(root: str | os.PathLike[str]) -> str:
    """This user's use-log folder for `root` (not created here)."""
    real = os.path.realpath(os.fspath(root))
    return user_folder("state", "memindex", "usage", name_hash(real.encode("utf-8", "surrogateescape")))


def _file_name(session_id: object) -> str:
    if not isinstance(session_id, str) or not session_id:
        session_id = os.environ.get(SESSION_ENV) or ""
    if session_id:
        return f"s-{name_hash(session_id.encode('utf-8', 'surrogateescape'))}.jsonl"
    return "cli-" + time.strftime("%Y%m%d", time.gmtime()) + ".jsonl"


def session_file(root: str | os.PathLike[str], session_id: object) -> str:
    """The file a session's events go to (the environment's session when `session_id` is None)."""
    return os.path.join(folder(root), _file_name(session_id))


def _append(root: str | os.PathLike[str], session_id: object, event: dict) -> None:
    """One event, appended in one write (O_APPEND: concurrent writers do not interleave
    within a line); dropped once the file holds USAGE_SESSION_MAX_BYTES."""
    try:
        line = (dumps(event) + "\n").encode("utf-8", "surrogateescape")
        where = folder(root)
        path = os.path.join(where, _file_name(session_id))
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        try:
            fd = rootfs.open_fd(path, flags, 0o600)
        except FileNotFoundError:
            os.makedirs(where, mode=0o700, exist_ok=True)
            fd = rootfs.open_fd(path, flags, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size + len(line) <= USAGE_SESSION_MAX_BYTES:
                os.write(fd, line)
        finally:
            os.close(fd)
        if size == 0:
            prune(where)
    except (OSError, ValueError, UnsafeFile):
        pass


def _clean(path: object) -> str | None:
    return path if isinstance(path, str) and 0 < len(path) <= 1000 and "\n" not in path else None


def record_prompt(root: str | os.PathLike[str], session_id: object, prompt: str,
                  kept: Iterable[tuple[str, str]], dropped: Iterable[tuple[str, str]]) -> None:
    """The prompt hook's decision: the memories it injected and those it dropped, each
    (path in the root, reason)."""
    _append(root, session_id, {
        "t": round(time.time(), 3), "e": "prompt", "c": "hook",
        "h": name_hash(prompt.encode("utf-8", "surrogateescape")),
        "k": [[p, w[:WHY_MAX]] for p, w in kept], "d": [[p, w[:WHY_MAX]] for p, w in dropped],
    })


def decision_lists(outcome) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(injected, dropped) of a policy Outcome, each (path, reason): a memory kept by the
    rules and then dropped (shown earlier in the session) counts as dropped, with that reason."""
    injected = {h.path for h in outcome.hits}
    why: dict[str, str] = {}
    for d in outcome.decisions:  # the last word on each memory
        why[d.path] = d.brief
    kept = [(h.path, why.get(h.path, "kept")) for h in outcome.hits]
    return kept, [(p, w) for p, w in why.items() if p not in injected]


def record_shown(root: str | os.PathLike[str], session_id: object, channel: str, paths: Iterable[str]) -> None:
    """Memories listed to the model by `channel` (search, mcp, recent)."""
    shown = [p for p in paths if _clean(p)]
    if shown:
        _append(root, session_id, {"t": round(time.time(), 3), "e": "shown", "c": channel, "k": shown})


def in_assistant_session() -> bool:
    """Whether this process was started by a coding assistant's session (Claude Code sets
    CLAUDE_CODE_SESSION_ID for the commands and servers it starts): a search typed by a
    person at a terminal shows nothing to the model and is not counted."""
    return bool(os.environ.get(SESSION_ENV))


def record_opens(root: str | os.PathLike[str], session_id: object, opens: Iterable[tuple[str, str, str]]) -> int:
    """Opens seen in a session's transcript, each (tool call id, channel, path): those not
    recorded yet (by their id) are added. Returns how many were new."""
    known = {ev.get("i") for ev in _events(session_file(root, session_id)) if ev.get("e") == "open"}
    new = 0
    for tool_id, channel, path in opens:
        if tool_id in known or not _clean(path):
            continue
        known.add(tool_id)
        _append(root, session_id, {"t": round(time.time(), 3), "e": "open", "c": channel, "k": path, "i": tool_id})
        new += 1
    return new


def prune(where: str, now: float | None = None) -> None:
    """Remove session files untouched for USAGE_TTL_DAYS, and the oldest past USAGE_MAX_SESSIONS."""
    now = time.time() if now is None else now
    try:
        with os.scandir(where) as entries:
            files = [(e.stat(follow_symlinks=False).st_mtime, e.path) for e in entries
                     if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)]
    except OSError:
        return
    files.sort(reverse=True)
    for i, (mtime, path) in enumerate(files):
        if i >= USAGE_MAX_SESSIONS or now - mtime > USAGE_TTL_DAYS * 86_400:
            try:
                os.unlink(path)
            except OSError:
                pass


# --- reading ---------------------------------------------------------------------------


def _events(path: str, limit: int = USAGE_SESSION_MAX_BYTES) -> Iterator[dict]:
    try:
        data = rootfs.read(path, limit * 2) or b""
    except (OSError, UnsafeFile):
        return
    for line in data.split(b"\n"):
        if not line:
            continue
        try:
            ev = loads(line)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        if isinstance(ev, dict) and isinstance(ev.get("e"), str):
            yield ev


class Session:
    """One session's file, read: its events in order."""

    __slots__ = ("name", "mtime", "events")

    def __init__(self, name: str, mtime: float, events: list[dict]) -> None:
        self.name, self.mtime, self.events = name, mtime, events

    def to_json(self) -> dict[str, object]:
        return {"session": self.name, "mtime": self.mtime, "events": self.events}


def sessions(root: str | os.PathLike[str], limit: int | None = None) -> list[Session]:
    """The sessions' logs, newest first (at most `limit`, and USAGE_READ_MAX_BYTES in all)."""
    where = folder(root)
    try:
        with os.scandir(where) as entries:
            files = [(e.stat(follow_symlinks=False).st_mtime, e.stat(follow_symlinks=False).st_size, e.name, e.path)
                     for e in entries if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)]
    except OSError:
        return []
    files.sort(reverse=True)
    out: list[Session] = []
    budget = USAGE_READ_MAX_BYTES
    for mtime, size, name, path in files:
        if (limit is not None and len(out) >= limit) or size > budget:
            break
        budget -= size
        out.append(Session(name[: -len(".jsonl")], mtime, list(_events(path))))
    return out


def session(root: str | os.PathLike[str], name: str) -> Session | None:
    """One session's log by its name as `sessions` gives it (`s-<hash>`, `cli-<date>`); None
    when there is none (a name of any other shape is never a path)."""
    stem = name[2:] if name.startswith("s-") else name[4:] if name.startswith("cli-") else ""
    if not (0 < len(stem) <= 16 and stem.isalnum() and stem.isascii()):
        return None
    path = os.path.join(folder(root), name + ".jsonl")
    try:
        mtime = os.stat(path, follow_symlinks=False).st_mtime
    except OSError:
        return None
    return Session(name, mtime, list(_events(path)))


class Use:
    """How one memory was used: shown (per channel), opened (per channel), when last."""

    __slots__ = ("shown", "opened", "shown_by", "opened_by", "last_shown", "last_opened", "sessions", "dropped")

    def __init__(self) -> None:
        self.shown = self.opened = self.sessions = self.dropped = 0
        self.shown_by: dict[str, int] = {}
        self.opened_by: dict[str, int] = {}
        self.last_shown: float | None = None
        self.last_opened: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"shown": self.shown, "opened": self.opened, "shown_by": self.shown_by, "opened_by": self.opened_by,
                "last_shown": self.last_shown, "last_opened": self.last_opened, "sessions": self.sessions,
                "dropped": self.dropped}


def key(path: str) -> str:
    """What a use counts against: a memory's path, or a document's file (`@docs/x.md`) for
    each of its sections (`@docs/x.md#decision`): the model opens the file, not a section."""
    return path.partition("#")[0] if path.startswith("@") else path


def tally(logs: Iterable[Session]) -> dict[str, Use]:
    """Per memory path (`key`), its use in these sessions' logs (an open counted once per
    tool call)."""
    out: dict[str, Use] = {}
    for log in logs:
        seen_here: set[str] = set()
        opened_ids: set[object] = set()
        for ev in log.events:
            kind, t = ev["e"], ev.get("t") if isinstance(ev.get("t"), (int, float)) else None
            channel = ev.get("c") if isinstance(ev.get("c"), str) else "?"
            if kind == "prompt" or kind == "shown":
                shown = [p[0] if isinstance(p, list) and p else p for p in ev.get("k") or ()]
                for path in shown:
                    if not isinstance(path, str):
                        continue
                    path = key(path)
                    use = out.setdefault(path, Use())
                    use.shown += 1
                    use.shown_by[channel] = use.shown_by.get(channel, 0) + 1
                    use.last_shown = max(use.last_shown or 0.0, t or 0.0) or None
                    if path not in seen_here:
                        seen_here.add(path)
                        use.sessions += 1
                for p in ev.get("d") or ():
                    if isinstance(p, list) and p and isinstance(p[0], str):
                        out.setdefault(key(p[0]), Use()).dropped += 1
            elif kind == "open" and isinstance(ev.get("k"), str) and ev.get("i") not in opened_ids:
                opened_ids.add(ev.get("i"))
                use = out.setdefault(key(ev["k"]), Use())
                use.opened += 1
                use.opened_by[channel] = use.opened_by.get(channel, 0) + 1
                use.last_opened = max(use.last_opened or 0.0, t or 0.0) or None
    return out


def counts(root: str | os.PathLike[str]) -> dict[str, Use]:
    """Per memory path (in the root), its use across this user's recent sessions."""
    return tally(sessions(root))


def summary(uses: dict[str, Use]) -> dict[str, int]:
    """Store-wide: memories shown, opened, shown and never opened; events counted."""
    return {
        "memories_shown": sum(1 for u in uses.values() if u.shown),
        "memories_opened": sum(1 for u in uses.values() if u.opened),
        "shown_never_opened": sum(1 for u in uses.values() if u.shown and not u.opened),
        "times_shown": sum(u.shown for u in uses.values()),
        "times_opened": sum(u.opened for u in uses.values()),
    }
