"""What the hook learns from the session's Claude Code transcript (JSONL), read from the end:
the last real user turns, the memories earlier prompts already injected, and the files the
session read or edited.

Enrichment only: any problem means an empty answer, never an error.
"""

from __future__ import annotations

import os
import stat

from ..defaults import TRANSCRIPT_MAX_WINDOW
from ..lean import loads



def user_parts(entry: object) -> list[str] | None:
    """The text blocks of a user entry that can hold a prompt, or None (not one: another
    type, meta, sidechain and compaction entries; tool_result and image blocks are skipped).
    What is in them is not sorted out here: see user_text, and capture.prompts."""
    if not isinstance(entry, dict) or entry.get("type") != "user":
        return None
    if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return None
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, str):
            parts.append(block)
    return parts


def user_text(entry: object) -> str | None:
    """The user's own words in a transcript entry, or None (not a prompt: tool results,
    meta and sidechain entries, command wrappers, system reminders). The prompt hook's
    cheap reading; what capture keeps goes through capture.prompts.prompt_text."""
    parts = user_parts(entry)
    if parts is None:
        return None
    text = "\n".join(parts).strip()
    # Slash-command wrappers and local command output are not the user's words.
    if not text or text.startswith(("<command-", "<local-command", "<system-reminder", "Caveat:")):
        return None
    return text


class Tail:
    """The end of a transcript, read once: `data` starts at byte `start` of the file."""

    __slots__ = ("data", "start")

    def __init__(self, data: bytes, start: int) -> None:
        self.data, self.start = data, start

    def last(self, nbytes: int) -> Tail | None:
        """The last `nbytes` of the file from this copy, or None when it holds fewer and
        the file goes back further."""
        if nbytes > len(self.data) and self.start > 0:
            return None
        cut = max(0, len(self.data) - nbytes)
        return Tail(self.data[cut:], self.start + cut)


def read_tail(path: object, nbytes: int) -> Tail | None:
    """The last `nbytes` of a transcript; None if it is not a readable regular file (a FIFO
    or a device must not stall a prompt: opened non-blocking, never read)."""
    if not isinstance(path, str) or not path:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None
            start = max(0, st.st_size - nbytes)
            fh.seek(start)
            return Tail(fh.read(st.st_size - start), start)
    except (OSError, ValueError, MemoryError):
        return None


def _window(path: object, tail: Tail | None, nbytes: int) -> Tail | None:
    """The last `nbytes`, from `tail` when it holds them, else read from the file."""
    got = tail.last(nbytes) if tail is not None else None
    return got if got is not None else read_tail(path, nbytes)


def recent_user_turns(
    path: object, max_turns: int = 3, tail_bytes: int = 65_536, skip: str | None = None, tail: Tail | None = None
) -> list[str]:
    """Up to `max_turns` user turns, oldest first. The window doubles (up to 4 MiB) while
    the tail holds only tool output. `skip` drops the current prompt if already written.
    `tail`: the end of the file already read (the hook reads it once for every reader)."""
    if max_turns <= 0:
        return []
    window = max(1024, tail_bytes)
    while True:
        got = _window(path, tail, window)
        if got is None:
            return []
        turns = _parse_tail(got.data, got.start > 0, skip)
        if len(turns) >= max_turns or got.start == 0 or window >= TRANSCRIPT_MAX_WINDOW:
            return turns[-max_turns:]
        window *= 2


def _parse_tail(chunk: bytes, partial_first: bool, skip: str | None) -> list[str]:
    lines = chunk.split(b"\n")
    if partial_first:
        lines = lines[1:]  # the first line may be cut in the middle
    turns = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            entry = loads(line)
        except (ValueError, RecursionError):
            continue
        text = user_text(entry)
        if text is not None:
            turns.append(text)
    if skip is not None and turns and turns[-1] == skip.strip():
        turns.pop()
    return turns


# The hook's own block, as Claude Code records it: an attachment of type hook_success (the
# prompt hook's stdout) or hook_additional_context (the PreToolUse hook's additionalContext,
# a list of texts) whose content holds `<memory-context ...>` lines
# `- [CATEGORY] title -> PATH #tags:...`.
_INJECTED_LINE = r" -> (\S+\.json|\S+\.(?:md|markdown|mdx)(?:#\S*)?)(?: #tags:|$)"  # re.MULTILINE: what `injected_paths` finds
_FILE_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit"})


class Session:
    """What earlier turns of this session tell the hook."""

    __slots__ = ("injected", "files")

    def __init__(self) -> None:
        self.injected: dict[str, float] = {}  # shown path -> when it was last injected (epoch s)
        self.files: list[str] = []  # files read or edited, newest last


def read_session(path: object, scan_bytes: int, files_bytes: int, tail: Tail | None = None) -> Session:
    """Memories injected in the last `scan_bytes` of the transcript (older ones may be
    injected again: the conversation was likely compacted since), and files touched by
    tool calls in its last `files_bytes`. Only lines that can hold them are parsed.
    `tail`: the end of the file already read."""
    session = Session()
    got = _window(path, tail, scan_bytes)
    if got is None:
        return session
    chunk = got.data
    files_from = max(0, len(chunk) - files_bytes)
    offset = 0
    for line in chunk.split(b"\n"):
        here, offset = offset, offset + len(line) + 1
        if (b'"hook_success"' in line or b'"hook_additional_context"' in line) and b"memory-context" in line:
            _note_injection(line, session)
        elif here >= files_from and b'"tool_use"' in line:
            _note_files(line, session)
    return session


def _entry(line: bytes) -> dict | None:
    try:
        entry = loads(line)
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None


def _note_injection(line: bytes, session: Session) -> None:
    entry = _entry(line)
    attachment = entry.get("attachment") if entry else None
    if not isinstance(attachment, dict) or attachment.get("type") not in ("hook_success", "hook_additional_context"):
        return
    content = attachment.get("content") or attachment.get("stdout")
    if isinstance(content, list):  # hook_additional_context (PreToolUse): a list of texts
        content = "\n".join(c for c in content if isinstance(c, str))
    if not isinstance(content, str):
        return
    when = _epoch(entry.get("timestamp"))
    for shown in injected_paths(content):
        session.injected[shown] = max(when, session.injected.get(shown, float("-inf")))


def _note_files(line: bytes, session: Session) -> None:
    entry = _entry(line)
    message = entry.get("message") if entry else None
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in _FILE_TOOLS:
            args = block.get("input")
            path = args.get("file_path") or args.get("notebook_path") if isinstance(args, dict) else None
            if isinstance(path, str) and path and "\x00" not in path:
                if path in session.files:
                    session.files.remove(path)
                session.files.append(path)


def _is_document(shown: str) -> bool:
    """A document's section as the block shows it: `docs/adr/0007-x.md#decision`."""
    file = shown.rpartition("#")[0] or shown
    return file.endswith((".md", ".markdown", ".mdx"))


def injected_paths(content: str) -> list[str]:
    """The shown paths of the memory lines in a block the hook printed (`_INJECTED_LINE`,
    scanned: the hook does not load `re` for it)."""
    found: list[str] = []
    n, pos = len(content), 0
    while (i := content.find(" -> ", pos)) >= 0:
        end = i + 4
        while end < n and not content[end].isspace():
            end += 1
        path = content[i + 4 : end]
        if len(path) > 5 and (path.endswith(".json") or _is_document(path)):
            if end == n or content[end] == "\n":
                found.append(path)
                pos = end
                continue
            if content.startswith(" #tags:", end) or content.startswith(" (", end):  # tags, or a review note
                found.append(path)
                pos = end + 2
                continue
        pos = i + 1
    return found


def _epoch(value: object) -> float:
    """An ISO 8601 timestamp as epoch seconds; without one, the injection counts as recent
    (a memory is then not injected again until it changes after a dated one)."""
    if not isinstance(value, str):
        return float("inf")
    try:
        from _datetime import datetime  # the class `datetime` exports, without importing its Python fallback
    except ImportError:  # pragma: no cover
        from datetime import datetime
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return float("inf")
