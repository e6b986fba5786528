"""The latest turn of a Claude Code session, read from the end of its transcript: what the
Stop hook's triage looks at.

A turn starts at the user's latest real prompt (not a tool result, not a meta entry such
as the "Stop hook feedback" Claude Code records for a blocked stop, not a slash-command
wrapper) and holds the assistant's text blocks, tool calls and the end of tool results
since, with the assistant's last words before the prompt (the options a "sqs then" picks). Only the tail is
read: the window doubles from TURN_TAIL_BYTES while it holds no prompt, up to
TURN_MAX_BYTES (a turn of huge tool output is then judged on what the window holds).
Standard library only: the Stop hook imports it.
"""

from __future__ import annotations

from ..defaults import TOOL_RESULT_CHARS, TOOL_RESULTS_MAX, TURN_MAX_BYTES, TURN_TAIL_BYTES
from ..lean import loads
from ..policy.transcript import read_tail, user_text

# What shows that the model saved or updated a memory during the turn (Bash commands and
# the Skill tool's argument): the triage then has nothing to ask.
_SAVE_COMMANDS = ("memindex save", "memindex update", "memindex candidate")
_SAVE_SKILL = "memory-save"


class Turn:
    """The user's prompt(s) and the assistant's words of the latest turn, oldest first."""

    __slots__ = ("user", "assistant", "tools", "before", "saved")

    def __init__(self) -> None:
        self.user: list[str] = []
        self.assistant: list[str] = []
        self.tools: list[str] = []  # the tool results' texts (their last TOOL_RESULT_CHARS each)
        self.before = ""  # the assistant's last words before the prompt (what the user answers)
        self.saved = False  # the model ran the memory-save skill or `memindex save/update` this turn


def latest_turn(path: object, last_assistant_message: object = None) -> Turn:
    """The latest turn of the transcript at `path`; `last_assistant_message` (what Claude
    Code 2.1.x passes the Stop hook) is added when the transcript does not end with it yet."""
    turn = Turn()
    window = TURN_TAIL_BYTES
    while True:
        tail = read_tail(path, window)
        if tail is None:
            break
        lines = tail.data.split(b"\n")
        if tail.start > 0:
            lines = lines[1:]  # the first line may be cut in the middle
        turn = _parse(lines)
        if turn.user or tail.start == 0 or window >= TURN_MAX_BYTES:
            break
        window *= 4
    if isinstance(last_assistant_message, str) and last_assistant_message.strip():
        text = last_assistant_message.strip()
        if not turn.assistant or turn.assistant[-1].strip() != text:
            turn.assistant.append(text)
    return turn


def _parse(lines: list[bytes]) -> Turn:
    """Back from the end to the latest real user prompt, and the assistant's text before it."""
    turn = Turn()
    prompt_seen = False
    for line in reversed(lines):
        if b'"user"' not in line and b'"assistant"' not in line:
            continue  # attachments, progress, queue operations: never parsed
        try:
            entry = loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict) or entry.get("isSidechain"):
            continue
        kind = entry.get("type")
        if prompt_seen:
            if kind == "assistant":
                before = Turn()
                _assistant(entry, before)
                if before.assistant:
                    turn.before = before.assistant[-1]
                    break
            elif kind == "user" and user_text(entry) is not None:
                break
            continue
        if kind == "user":
            text = user_text(entry)
            if text is not None:
                turn.user.append(text)
                prompt_seen = True
            elif len(turn.tools) < TOOL_RESULTS_MAX:
                turn.tools.extend(_tool_results(entry))
        elif kind == "assistant":
            _assistant(entry, turn)
    turn.user.reverse()
    turn.assistant.reverse()
    turn.tools.reverse()
    return turn


def _tool_results(entry: dict) -> list[str]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    out = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_result":
            value = block.get("content")
            if isinstance(value, list):
                value = "\n".join(b.get("text", "") for b in value if isinstance(b, dict) and isinstance(b.get("text"), str))
            if isinstance(value, str) and value:
                out.append(value[-TOOL_RESULT_CHARS:])
    return out


def _assistant(entry: dict, turn: Turn) -> None:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    texts = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            args = block.get("input")
            args = args if isinstance(args, dict) else {}
            command = args.get("command") if block.get("name") == "Bash" else None
            skill = args.get("skill") if block.get("name") == "Skill" else None
            if isinstance(command, str) and any(c in command for c in _SAVE_COMMANDS):
                turn.saved = True
            if isinstance(skill, str) and _SAVE_SKILL in skill:
                turn.saved = True
    turn.assistant.extend(reversed(texts))  # reversed again with the whole list
