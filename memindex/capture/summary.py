"""What a session did (capture.parse) -> one `session_summary` memory, at most
SUMMARY_MAX_BYTES, deterministic, without a model.

Fields (schema 1.0 `session_summary`, plus extra text fields the index reads like any
other): `goal` the user's first prompt in their words; `requests` their later prompts;
`saved_memories` the memories the session saved or updated (its work that became durable:
`completed` says so too);
`completed` the commands and tests that ran (with their outcome), the commits, the todo
items done; `key_changes` the files changed; `in_progress` / `next_actions` what is left
(the todo list's open items, a failing last test run, the "next steps" of the closing
summary); `closing_summary` the assistant's last text; `assistant_notes` its other texts.
`outcome`: `partial` while something is left or the last test run failed, else `success`.

When the summary is over the budget, the first things cut are (in this order, oldest
first within each): the assistant's intermediate notes, plain commands, the user's later
requests, files past the first 20, test runs; then the closing summary and the goal are
shortened. The user's goal, the outcome, the commits and what is left are what a later
session asks for ("where did we leave off?"), so they go last.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from typing import Any

from ..defaults import CAPTURE_SOURCE_KIND, CAPTURE_TAG, SUMMARY_MAX_BYTES, TITLE_MAX
from ..defaults import (
    SUMMARY_CLOSING_CHARS, SUMMARY_COMMAND_CHARS, SUMMARY_FILES_KEPT, SUMMARY_GOAL_CHARS, SUMMARY_ITEM_CHARS,
    SUMMARY_NOTE_CHARS, SUMMARY_REQUEST_CHARS, SUMMARY_TAGS_FROM_FILES,
)
from ..write.validate import iso, parse_utc, slugify
from .parse import Command, Session
from ..store.ids import summary_id

# Commands that only look (listing, reading, searching, git's read-only verbs): noise.
_LOOKING = frozenset({
    "ls", "cat", "head", "tail", "grep", "egrep", "rg", "ag", "find", "fd", "pwd", "echo", "printf", "wc", "which",
    "type", "file", "stat", "tree", "less", "more", "du", "df", "cd", "env", "date", "whoami", "sleep", "true",
    "sed", "awk", "jq", "diff", "realpath", "dirname", "basename", "readlink", "ps", "id", "uname",
})
_GIT_LOOKING = frozenset({"status", "diff", "log", "show", "branch", "remote", "blame", "ls-files", "rev-parse", "grep"})
_NEXT_HEADING = re.compile(
    r"^\W*(?:next steps?|remaining|still to do|left to do|to ?do|follow[- ]ups?|what'?s left|not (?:yet )?done|open items)\b",
    re.IGNORECASE,
)
_COMMIT = re.compile(r"\bgit\s+commit\b")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+(.*\S)")


def memory_id(session_id: str) -> str:
    """The summary's id: one file per session, found again on every update."""
    same = summary_id(session_id)  # what the prompt hook computes for its own session
    if same is not None:
        return same
    slug = slugify(session_id, 60)
    if not slug:
        from ..runtime import name_hash

        slug = name_hash(session_id.encode("utf-8", "surrogateescape"))
    return f"session-{slug}"


def shown_path(path: str) -> str:
    """A transcript path as stored in `source.path`: `~/...` under the home folder."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and path.startswith(home.rstrip("/") + "/"):
        return "~/" + path[len(home.rstrip("/")) + 1 :]
    return path


def summarise(session: Session, transcript: str, budget: int = SUMMARY_MAX_BYTES) -> dict[str, Any] | None:
    """The session_summary memory of a session (None when the user never asked anything),
    cut to `budget` bytes of JSON (everything but the write path's `changes` history)."""
    prompts = [p for p in session.prompts if p]
    if not prompts:
        return None
    parts = _Parts(session, prompts)
    while True:
        memory = parts.memory(session, transcript)
        size = _size(memory)
        if size <= budget or not parts.cut(size - budget):
            return memory


def _size(memory: dict[str, Any]) -> int:
    return len(json.dumps(memory, ensure_ascii=False, indent=2).encode("utf-8"))


def _cap(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "\u2026"


class _Parts:
    """The summary's pieces, and the cut order that keeps it within its budget."""

    def __init__(self, session: Session, prompts: list[str]) -> None:
        self.goal_chars, self.closing_chars = SUMMARY_GOAL_CHARS, SUMMARY_CLOSING_CHARS
        self.goal = prompts[0]
        asked = {self.goal}
        self.requests = [_cap(p, SUMMARY_REQUEST_CHARS) for p in prompts[1:] if not (p in asked or asked.add(p))]
        texts = [t for turn in session.turns for t in turn.texts]
        last = session.turns[-1].texts if session.turns else []
        self.closing = last[-1] if last else ""
        seen = {self.closing}
        self.notes = [_cap(t, SUMMARY_NOTE_CHARS) for t in texts if not (t in seen or seen.add(t))]
        self.files = [_relative(p, session.cwd) for p in session.files]
        runs = _runs(session.commands)
        self.tests = [c for c in runs if c.test]
        self.plain = [c for c in runs if not c.test]
        self.commits = [_cap(c, SUMMARY_ITEM_CHARS) for c in session.commits]
        todos = session.todos
        self.done = [_cap(t["content"], SUMMARY_ITEM_CHARS) for t in todos if t.get("status") == "completed"]
        self.doing = [_cap(t["content"], SUMMARY_ITEM_CHARS) for t in todos if t.get("status") == "in_progress"]
        self.todo = [_cap(t["content"], SUMMARY_ITEM_CHARS) for t in todos
                     if t.get("status") not in ("completed", "in_progress")]
        self.next = [_cap(b, SUMMARY_ITEM_CHARS) for b in _next_steps(self.closing) if b not in self.todo]
        self.failing = self.tests[-1] if self.tests and self.tests[-1].ok is False else None

    def cut(self, excess: int) -> bool:
        """Drop the next pieces in the cut order, about `excess` bytes of them from a list
        (one summary is serialised a few times, not once per item); False when nothing
        is left to cut."""
        for pieces, shown in ((self.notes, str), (self.plain, _command_line), (self.requests, str)):
            if pieces:
                dropped = 0
                while pieces and dropped < excess:
                    dropped += len(json.dumps(shown(pieces.pop(0)), ensure_ascii=False).encode("utf-8")) + 6
                return True
        if len(self.files) > SUMMARY_FILES_KEPT:
            del self.files[SUMMARY_FILES_KEPT:]
            return True
        if len(self.tests) > 1:  # the last run says where the tests stand
            self.tests.pop(0)
            return True
        for name, floor in (("closing_chars", 1_000), ("goal_chars", 500), ("closing_chars", 300), ("goal_chars", 200)):
            if getattr(self, name) > floor:
                setattr(self, name, floor)
                return True
        for pieces in (self.files, self.done, self.commits, self.next, self.todo, self.doing):
            if len(pieces) > 3:
                del pieces[3:]
                return True
        return False

    def memory(self, session: Session, transcript: str) -> dict[str, Any]:
        goal = _cap(self.goal, self.goal_chars)
        completed = [_command_line(c) for c in self.plain + self.tests]
        completed += [f"Committed {c}" for c in self.commits] + self.done
        in_progress = list(self.doing)
        if self.failing is not None:
            in_progress.append(f"Tests failing: {_command_line(self.failing)}")
        next_actions = self.todo + self.next
        content: dict[str, Any] = {
            "goal": goal,
            "outcome": "partial" if in_progress or next_actions else "success",
            "completed": completed,
            "in_progress": in_progress,
            "next_actions": next_actions,
            "key_changes": list(self.files),
        }
        if self.closing:
            content["closing_summary"] = _cap(self.closing, self.closing_chars)
        if self.requests:
            content["requests"] = list(self.requests)
        if self.notes:
            content["assistant_notes"] = list(self.notes)
        if session.saved:  # the session's work that became durable memories: said, so the summary is not the only record
            content["saved_memories"] = list(session.saved)
            completed.append("Saved as memories: " + ", ".join(session.saved[:5]) + (" ..." if len(session.saved) > 5 else ""))
        content = {k: v for k, v in content.items() if v not in ([], "")}
        content.setdefault("goal", goal)
        memory: dict[str, Any] = {
            "id": memory_id(session.session_id),
            "title": _title(self.goal),
            "tags": _tags(self.files),
            "content": content,
            "related_files": list(self.files),
            "source": {"kind": CAPTURE_SOURCE_KIND, "path": shown_path(transcript), "session_id": session.session_id},
        }
        created = _stamp(session.started)
        if created:
            memory["created_at"] = created
        return memory


def _title(goal: str) -> str:
    line = " ".join(goal.split())
    return "Session: " + _cap(line, TITLE_MAX - len("Session: "))


def _tags(files: list[str]) -> list[str]:
    """CAPTURE_TAG, then the commonest folders (or file stems) of the files changed."""
    counts: dict[str, int] = {}
    for path in files:
        parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..", "~")]
        word = parts[-2] if len(parts) > 1 else os.path.splitext(parts[0])[0] if parts else ""
        tag = slugify(word, 40)
        if tag and tag != CAPTURE_TAG:
            counts[tag] = counts.get(tag, 0) + 1
    top = sorted(counts, key=lambda t: -counts[t])[:SUMMARY_TAGS_FROM_FILES]
    return [CAPTURE_TAG, *top]


def _relative(path: str, cwd: str) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return shown_path(path)


def _stamp(value: str) -> str | None:
    when = parse_utc(value)
    if when is None or when > datetime.now(timezone.utc):
        return None
    return iso(when)


def _looking(command: str) -> bool:
    """Whether a command only looks (its every `&&`/`;`/`|` step does)."""
    for step in re.split(r"&&|\|\||;|\|", command):
        words = step.split()
        while words and "=" in words[0] and not words[0].startswith("="):
            words.pop(0)  # VAR=value prefixes
        if not words:
            continue
        name = os.path.basename(words[0])
        if name == "git" and len(words) > 1 and words[1] in _GIT_LOOKING:
            continue
        if name not in _LOOKING:
            return False
    return True


def _runs(commands: list[Command]) -> list[Command]:
    """The commands worth keeping: not the looking ones; a command run again keeps its last
    outcome, in the place of its last run."""
    kept: dict[str, Command] = {}
    for cmd in commands:
        if cmd.ok is not False and _COMMIT.search(cmd.command):
            continue  # its commit is listed as such
        if cmd.test or not _looking(cmd.command):
            kept.pop(cmd.command, None)
            kept[cmd.command] = cmd
    return list(kept.values())


def _command_line(cmd: Command) -> str:
    text = cmd.command.splitlines()[0] if cmd.command.strip() else cmd.command
    shown = "`" + _cap(text.replace("`", "'"), SUMMARY_COMMAND_CHARS) + "`"
    if cmd.test:
        result = cmd.tally or {True: "passed", False: "failed", None: "no result"}[cmd.ok]
        return f"Ran {shown}: {result}"
    return f"Ran {shown}" + (" (failed)" if cmd.ok is False else "")


def _next_steps(text: str) -> list[str]:
    """The bullets under a "Next steps" (remaining, TODO, ...) heading of the closing text."""
    out: list[str] = []
    in_list = False
    for line in text.splitlines():
        if _NEXT_HEADING.match(line.strip().lstrip("#").strip()):
            in_list = True
            continue
        if in_list:
            m = _BULLET.match(line)
            if m:
                out.append(m.group(1).strip("*_ "))
            elif line.strip() and out:
                in_list = False
    return out[:10]
