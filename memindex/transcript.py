"""The last real user turns of a Claude Code transcript (JSONL), read from the end.

Enrichment only: any problem means no turns, never an error.
"""

from __future__ import annotations

import json
import os
import stat

_MAX_WINDOW = 4 * 1024 * 1024


def _user_text(entry: object) -> str | None:
    if not isinstance(entry, dict) or entry.get("type") != "user":
        return None
    if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        text = "\n".join(parts)  # tool_result and image blocks are skipped
    else:
        return None
    text = text.strip()
    # Slash-command wrappers and local command output are not the user's words.
    if not text or text.startswith(("<command-", "<local-command", "<system-reminder", "Caveat:")):
        return None
    return text


def recent_user_turns(path: object, max_turns: int = 3, tail_bytes: int = 65_536, skip: str | None = None) -> list[str]:
    """Up to `max_turns` user turns, oldest first. The window doubles (up to 4 MiB) while
    the tail holds only tool output. `skip` drops the current prompt if already written."""
    if not isinstance(path, str) or not path or max_turns <= 0:
        return []
    try:
        # Non-blocking and regular files only: a FIFO or a device must not stall a prompt.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return []
            size = st.st_size
            window = max(1024, tail_bytes)
            while True:
                start = max(0, size - window)
                fh.seek(start)
                chunk = fh.read(size - start)
                turns = _parse_tail(chunk, start > 0, skip)
                if len(turns) >= max_turns or start == 0 or window >= _MAX_WINDOW:
                    return turns[-max_turns:]
                window *= 2
    except (OSError, ValueError, MemoryError):
        return []


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
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue
        text = _user_text(entry)
        if text is not None:
            turns.append(text)
    if skip is not None and turns and turns[-1] == skip.strip():
        turns.pop()
    return turns
