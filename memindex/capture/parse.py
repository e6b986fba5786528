"""A Claude Code transcript (`<session-id>.jsonl`) read into what the session did: the
user's prompts in their own words, the assistant's texts, the files it changed, the
commands and tests it ran with their outcome, its commits and its todo list.

Everything else is noise and stays out: tool results (only their outcome is read),
file contents, hook and skill records (attachments), thinking, `isMeta` entries, every
wrapper Claude Code adds to a prompt (reminders, slash commands, `!` shell commands, task
notifications, hook output: capture.prompts), sidechains (subagents), compaction summaries
and API error messages.
Reading never fails on a bad line: it is skipped. Reading is bounded whatever the file
holds: lines are read at most CAPTURE_LINE_MAX_BYTES at a time (a longer line is skipped
without being held), each prompt and text is kept to CAPTURE_TEXT_KEEP characters and each command
to CAPTURE_COMMAND_KEEP, and past CAPTURE_KEPT_CHARS in all the oldest assistant texts go, then the
oldest requests (never the goal, never the latest text: what the summary keeps last).
Prompts, texts and commands are redacted (store.secrets) before they are cut, so a cut
never leaves part of a credential that the whole would have matched.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

from ..defaults import CAPTURE_KEPT_CHARS, CAPTURE_LINE_MAX_BYTES, CAPTURE_TRANSCRIPT_MAX_BYTES
from ..defaults import (
    CAPTURE_COMMAND_KEEP, CAPTURE_MAX_ITEMS, CAPTURE_PENDING_MAX, CAPTURE_SKIP_CHUNK, CAPTURE_TEXT_KEEP,
    REDACT_MARGIN, SESSION_ID_MAX,
)
from ..lean import loads
from .prompts import prompt_text
from ..store.secrets import redact_text
from .tally import counts, shown

FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
_TEST_RE = re.compile(
    r"\b(?:pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|rspec|phpunit|ctest|"
    r"go\s+test|cargo\s+(?:test|nextest)|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test|"
    r"make\s+(?:test|check)|gradle\w*\s+test|mvn\s+test|dotnet\s+test|mix\s+test)\b"
)
_COMMIT_OUT_RE = re.compile(r"^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.M)
_COMMIT_CMD_RE = re.compile(r"\bgit\s+commit\b")
_SAVE_CMD_RE = re.compile(r"\bmemindex\b(?:\s+--root\s+\S+)?\s+(?:save|update)\b")
# the write path's answer: {"status": "created" | "updated", "path": "...json", ...}
_SAVED_RE = re.compile(r'"status":\s*"(?:created|updated)",\s*"path":\s*"([^"\\]{1,300}\.json)"')


@dataclass
class Command:
    """One Bash command the assistant ran, and how it ended (None: no result recorded)."""

    command: str
    ok: bool | None = None
    test: bool = False
    tally: str = ""  # a test run's counts, in fixed words ("12 passed, 1 failed": capture.tally), never its text


@dataclass
class Turn:
    """One user prompt and the assistant's texts that answered it."""

    prompt: str
    texts: list[str] = field(default_factory=list)


@dataclass
class Session:
    """What one transcript says the session did."""

    session_id: str = ""
    cwd: str = ""
    started: str = ""  # ISO timestamps of the first and last entries
    ended: str = ""
    turns: list[Turn] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)  # changed file -> edits, in first-change order
    commands: list[Command] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    todos: list[dict] = field(default_factory=list)  # the last TodoWrite list
    # tool calls that may read a memory (the use log's opens): (tool call id, tool, argument):
    # a Read's file_path, a Bash command, an MCP tool's path (capture/opens.py decides)
    reads: list[tuple[str, str, str]] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)  # memories the session saved or updated (their paths)

    @property
    def prompts(self) -> list[str]:
        return [t.prompt for t in self.turns]


def read_transcript(path: str, max_bytes: int = CAPTURE_TRANSCRIPT_MAX_BYTES) -> Session:
    """Parse one transcript. Raises OSError when it cannot be read as a regular file (a
    FIFO or a device is never waited on); past `max_bytes` the rest is ignored."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.set_blocking(fh.fileno(), True)
        reader = _Reader()
        read = 0
        while read <= max_bytes:
            line = fh.readline(CAPTURE_LINE_MAX_BYTES + 1)
            if not line:
                break
            read += len(line)
            if len(line) > CAPTURE_LINE_MAX_BYTES:  # over-long: read past the rest of it, holding none
                while not line.endswith(b"\n") and read <= max_bytes:
                    line = fh.readline(CAPTURE_SKIP_CHUNK)
                    if not line:
                        break
                    read += len(line)
                continue
            if read > max_bytes:
                break
            reader.feed(line)
    session = reader.session
    stem = os.path.basename(path).removesuffix(".jsonl")
    if stem and len(stem) <= SESSION_ID_MAX:  # `<session-id>.jsonl`: the id the hooks are given
        session.session_id = stem
    return session


def parse_lines(lines) -> Session:
    """Parse transcript lines (bytes or str) already in memory."""
    reader = _Reader()
    for line in lines:
        reader.feed(line)
    return reader.session


class _Reader:
    def __init__(self) -> None:
        self.session = Session()
        self.pending: dict[str, tuple[str, object]] = {}  # tool_use id -> (tool name, its Command or file path)
        self.last_message_id: str | None = None
        self.kept = 0  # characters of prompts and texts held (CAPTURE_KEPT_CHARS)
        self._texts_from = 0  # turns before this one hold no text any more
        self._prompts_from = 1  # ... and from the one after the goal's on, no request
        self._goal: int | None = None  # the turn of the first prompt (never dropped)

    def feed(self, line: bytes | str) -> None:
        line = line.strip()
        if not line:
            return
        try:
            entry = loads(line)
        except (ValueError, RecursionError, UnicodeDecodeError):
            return
        if not isinstance(entry, dict):
            return
        s = self.session
        stamp = entry.get("timestamp")
        if isinstance(stamp, str):
            s.started = s.started or stamp
            s.ended = stamp
        kind = entry.get("type")
        if kind not in ("user", "assistant") or entry.get("isSidechain") or entry.get("isMeta"):
            return
        if not s.session_id and isinstance(entry.get("sessionId"), str) and len(entry["sessionId"]) <= SESSION_ID_MAX:
            s.session_id = entry["sessionId"]
        if not s.cwd and isinstance(entry.get("cwd"), str) and len(entry["cwd"]) <= 4096:
            s.cwd = entry["cwd"]
        if kind == "user":
            self._user(entry)
        elif not entry.get("isApiErrorMessage"):
            self._assistant(entry)

    def _user(self, entry: dict) -> None:
        text = prompt_text(entry)
        if text is not None:
            if len(self.session.turns) < CAPTURE_MAX_ITEMS:
                text = _kept(text, CAPTURE_TEXT_KEEP)
                self.session.turns.append(Turn(text))
                self.last_message_id = None
                self._hold(len(text))
            return
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._result(block)

    def _result(self, block: dict) -> None:
        found = self.pending.pop(block.get("tool_use_id"), None) if isinstance(block.get("tool_use_id"), str) else None
        if found is None:
            return
        name, what = found
        failed = block.get("is_error") is True
        if name in FILE_TOOLS and not failed and isinstance(what, str):
            files = self.session.files
            if what in files or len(files) < CAPTURE_MAX_ITEMS:
                files[what] = files.get(what, 0) + 1
        elif isinstance(what, Command):
            what.ok = not failed
            output = _result_text(block.get("content"))
            if what.test:
                what.tally = shown(counts(output))
            if _COMMIT_CMD_RE.search(what.command) and not failed:
                for m in _COMMIT_OUT_RE.finditer(output):
                    self._commit(f"{m.group(2)[:7]} {m.group(3).strip()}")
            if _SAVE_CMD_RE.search(what.command) and not failed:
                self._saved(output)
        elif what == "save" and not failed:
            self._saved(_result_text(block.get("content")))

    def _saved(self, output: str) -> None:
        """The path a `memindex save`/`update` (or the MCP tool's) answer names."""
        for m in _SAVED_RE.finditer(output[:20_000]):
            path = m.group(1)
            if path not in self.session.saved and len(self.session.saved) < 50:
                self.session.saved.append(path)

    def _commit(self, text: str) -> None:
        if text not in self.session.commits and len(self.session.commits) < CAPTURE_MAX_ITEMS:
            self.session.commits.append(text)

    def _assistant(self, entry: dict) -> None:
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        message_id = message.get("id") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self._text(block["text"].strip(), message_id)
            elif block.get("type") == "tool_use":
                self._tool_use(block)

    def _text(self, text: str, message_id: object) -> None:
        if not text or text == "No response requested.":
            return
        turns = self.session.turns
        if not turns:  # an assistant text before any prompt (a resumed session): its own turn
            turns.append(Turn(""))
        texts = turns[-1].texts
        if texts and message_id is not None and message_id == self.last_message_id:
            joined = _kept(texts[-1] + "\n" + text, CAPTURE_TEXT_KEEP)  # one message written as several lines
            self._hold(len(joined) - len(texts[-1]))
            texts[-1] = joined
        elif len(texts) < CAPTURE_MAX_ITEMS:
            texts.append(_kept(text, CAPTURE_TEXT_KEEP))
            self._hold(len(texts[-1]))
        self.last_message_id = message_id if isinstance(message_id, str) else None

    def _hold(self, chars: int) -> None:
        """Count what is kept; past CAPTURE_KEPT_CHARS drop the oldest assistant texts (the
        summary's first cut), then the oldest requests (its third), never the goal nor
        the latest text."""
        self.kept += chars
        turns = self.session.turns
        last = len(turns) - 1
        while self.kept > CAPTURE_KEPT_CHARS:
            while self._texts_from < last and not turns[self._texts_from].texts:
                self._texts_from += 1
            texts = turns[self._texts_from].texts
            if len(texts) > (1 if self._texts_from == last else 0):
                self.kept -= len(texts.pop(0))
                continue
            if self._goal is None:
                self._goal = next((i for i, t in enumerate(turns) if t.prompt), None)
            self._prompts_from = max(self._prompts_from, (self._goal if self._goal is not None else last) + 1)
            while self._prompts_from < last and not turns[self._prompts_from].prompt:
                self._prompts_from += 1
            if self._prompts_from >= last:
                return  # the goal, the latest prompt and the latest text: all that is left
            self.kept -= len(turns[self._prompts_from].prompt)
            turns[self._prompts_from].prompt = ""

    def _tool_use(self, block: dict) -> None:
        name, args, tool_id = block.get("name"), block.get("input"), block.get("id")
        if not isinstance(args, dict) or not isinstance(tool_id, str):
            return
        if len(self.session.reads) < CAPTURE_MAX_ITEMS:
            arg = args.get("file_path") if name == "Read" else args.get("command") if name == "Bash" else (
                args.get("path") if isinstance(name, str) and name.startswith("mcp__") else None)
            if isinstance(arg, str) and arg and len(arg) <= 4096:
                self.session.reads.append((tool_id, name, arg))
        if name in FILE_TOOLS:
            path = args.get("file_path") or args.get("notebook_path")
            if isinstance(path, str) and path and "\x00" not in path and len(self.pending) < CAPTURE_PENDING_MAX:
                self.pending[tool_id] = (name, path[:4096])
        elif name == "Bash" and isinstance(args.get("command"), str):
            command = args["command"].strip()
            if command and len(self.session.commands) < CAPTURE_MAX_ITEMS:
                test = bool(_TEST_RE.search(command[:CAPTURE_COMMAND_KEEP]))
                cmd = Command(_kept(command, CAPTURE_COMMAND_KEEP), test=test)
                self.session.commands.append(cmd)
                if len(self.pending) < CAPTURE_PENDING_MAX:
                    self.pending[tool_id] = (name, cmd)
        elif isinstance(name, str) and name.startswith("mcp__") and name.endswith(("__save", "__update")) and "memindex" in name:
            if len(self.pending) < CAPTURE_PENDING_MAX:
                self.pending[tool_id] = (name, "save")
        elif name == "TodoWrite" and isinstance(args.get("todos"), list):
            self.session.todos = [t for t in args["todos"] if isinstance(t, dict) and isinstance(t.get("content"), str)]


def _kept(text: str, limit: int) -> str:
    """What is kept of a prompt, a text or a command: its credentials redacted (the write
    path's patterns) before it is cut to `limit` characters, so that a cut never leaves
    part of one; the redaction reads a margin past the cut, never the whole of a huge text."""
    return redact_text(text[: limit + REDACT_MARGIN])[0][:limit]


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
