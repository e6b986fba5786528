"""The latest turn of a Claude Code session, read from the end of its transcript: what the
Stop hook's triage looks at.

A turn starts at the user's latest real prompt (not a tool result, not a meta entry such
as the "Stop hook feedback" Claude Code records for a blocked stop, not a slash-command
wrapper, not the output of a `!` shell command or a background task) and holds the
assistant's text blocks and tool calls since, with the assistant's words of the
BEFORE_TURNS turns before the prompt (the options a "sqs then" picks, the fix a "works
now" confirms) and the user's prompt before it. Only the user's words and the assistant's
own prose reach the triage: of the tool results, only the verdict of a command the
assistant ran (the last lines of a Bash command's output that did not fail and does not
print files: "BUILD SUCCESSFUL", "12 passed"), never a file's text, a search's hits or a
page fetched. Only the tail is read: the window doubles from TURN_TAIL_BYTES while it
holds no prompt, up to TURN_MAX_BYTES (a turn of huge tool output is then judged on what
the window holds). Standard library only: the Stop hook imports it.
"""

from __future__ import annotations

from ..defaults import (BEFORE_CHARS, BEFORE_TURNS, SAVED_TEXT_CHARS, TOOL_RESULT_CHARS, TOOL_RESULTS_MAX, TURN_MAX_BYTES,
                        TURN_TAIL_BYTES, TURN_TEXT_CHARS)
from ..lean import loads
from ..policy.transcript import read_tail
from .prompts import prompt_text

# What shows that the model saved or updated a memory during the turn (Bash commands and
# the Skill tool's argument): the triage then has nothing to ask.
_SAVE_COMMANDS = ("memindex save", "memindex update", "memindex candidate")
_SAVE_SKILL = "memory-save"
# Commands whose output is a file's or a search's text, not a verdict (see _verdict).
_PRINTS = frozenset("cat head tail less more bat grep egrep rg ag ack find ls tree echo printf sed awk jq yq curl wget "
                    "strings xxd od hexdump diff type nl sort uniq cut tr base64".split())
_PRINTS_GIT = ("git show", "git log", "git diff", "git blame", "git cat-file", "git grep")


class Turn:
    """The user's prompt(s) and the assistant's words of the latest turn, oldest first."""

    __slots__ = ("user", "assistant", "tools", "before", "earlier", "saved", "saved_text", "calls", "calls_before", "worked", "_commands")

    def __init__(self) -> None:
        self.user: list[str] = []
        self.assistant: list[str] = []
        self.tools: list[str] = []  # the verdicts of the commands run (the last TOOL_RESULT_CHARS of each output)
        self.before = ""  # the assistant's words of the turns before the prompt (what the user answers)
        self.earlier = ""  # the user's prompt before those words (the problem a "works now" was about)
        self.saved = False  # the model ran the memory-save skill or `memindex save/update` this turn
        self.saved_text = ""  # ... the commands' text (what it saved: a later restatement is no new topic)
        self.calls = 0  # the tool calls the assistant made in the turn (reading, editing, running: coding work)
        self.calls_before = 0  # ... and in the turns before the prompt that `before` reads
        self.worked = False  # the transcript's tail read holds a tool call: the session is doing work
        self._commands: dict[str, str] = {}  # tool_use id -> the Bash command the assistant ran


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
        turn.worked = b'"tool_use"' in tail.data  # structural only: in a text, JSON escapes the quotes
        if turn.user or tail.start == 0 or window >= TURN_MAX_BYTES:
            break
        window *= 4
    if isinstance(last_assistant_message, str) and last_assistant_message.strip():
        text = last_assistant_message.strip()
        if not turn.assistant or turn.assistant[-1].strip() != text:
            turn.assistant.append(text)
    turn.user = [_bounded(t) for t in turn.user]
    turn.assistant = [_bounded(t) for t in turn.assistant]
    return turn


def _bounded(text: str) -> str:
    """At most TURN_TEXT_CHARS of a prompt or an answer: its first three quarters and its
    last quarter (a pasted megabyte of log would cost the triage seconds; what the user
    says about it comes before or after it)."""
    if len(text) <= TURN_TEXT_CHARS:
        return text
    head = TURN_TEXT_CHARS * 3 // 4
    return text[:head] + "\n" + text[-(TURN_TEXT_CHARS - head):]


def _parse(lines: list[bytes]) -> Turn:
    """Back from the end to the latest real user prompt, then the assistant's words of the
    BEFORE_TURNS turns before it and the user's prompt that opened the first of them."""
    turn = Turn()
    results: list[tuple[str, str]] = []  # (tool_use id, output) of commands that did not fail, newest first
    prompts = 0  # real prompts seen: 1 is the turn's own
    before: list[str] = []  # newest first
    for line in reversed(lines):
        if b'"user"' not in line and b'"assistant"' not in line:
            continue  # attachments, progress, queue operations: never parsed
        if prompts and b'"tool_result"' in line:
            continue  # before the prompt a tool's output is neither a prompt nor the assistant's words: never parsed
        try:
            entry = loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict) or entry.get("isSidechain"):
            continue
        kind = entry.get("type")
        if prompts:
            if kind == "assistant":
                prior = Turn()
                _assistant(entry, prior)
                before.extend(reversed(prior.assistant))
                turn.calls_before += prior.calls
                if sum(len(b) for b in before) >= BEFORE_CHARS:
                    break
            elif kind == "user":
                text = prompt_text(entry)
                if text is not None:
                    prompts += 1
                    if prompts == 2:
                        turn.earlier = text
                    if prompts > BEFORE_TURNS:
                        break
            continue
        if kind == "user":
            text = prompt_text(entry)
            if text is not None:
                turn.user.append(text)
                prompts = 1
            elif len(results) < TOOL_RESULTS_MAX:
                results.extend(_tool_results(entry))
        elif kind == "assistant":
            _assistant(entry, turn)
    turn.user.reverse()
    turn.assistant.reverse()
    turn.before = "\n".join(reversed(before))[-BEFORE_CHARS:]
    turn.tools = [out for tid, out in reversed(results) if _verdict(turn._commands.get(tid))]
    return turn


def _verdict(command: str | None) -> bool:
    """Whether a Bash command's output is a verdict (a build, a test run, a deploy), not a
    file's or a search's text: the last command of a chain (the first of its pipe: a
    build piped to `tail` is still the build) does not print files."""
    if not command:
        return False
    last = command.replace("&&", ";").replace("||", ";").split(";")[-1].split("|")[0].split()
    while last and ("=" in last[0] or last[0] in ("sudo", "env", "time", "command", "exec", "nohup")):
        last = last[1:]
    if not last:
        return False
    name = last[0].rsplit("/", 1)[-1]
    return name not in _PRINTS and not " ".join(last).startswith(_PRINTS_GIT)


def _tool_results(entry: dict) -> list[tuple[str, str]]:
    """(tool_use id, the end of its output) of the entry's tool results that did not fail."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    out = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error") is not True:
            value = block.get("content")
            if isinstance(value, list):
                value = "\n".join(b.get("text", "") for b in value if isinstance(b, dict) and isinstance(b.get("text"), str))
            if isinstance(value, str) and value and isinstance(block.get("tool_use_id"), str):
                out.append((block["tool_use_id"], value[-TOOL_RESULT_CHARS:]))
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
            turn.calls += 1
            args = block.get("input")
            args = args if isinstance(args, dict) else {}
            command = args.get("command") if block.get("name") == "Bash" else None
            skill = args.get("skill") if block.get("name") == "Skill" else None
            if isinstance(command, str) and isinstance(block.get("id"), str):
                turn._commands[block["id"]] = command
            if isinstance(command, str) and any(c in command for c in _SAVE_COMMANDS):
                turn.saved = True
                turn.saved_text = (turn.saved_text + "\n" + command)[-SAVED_TEXT_CHARS:]
            if isinstance(skill, str) and _SAVE_SKILL in skill:
                turn.saved = True
                if isinstance(args.get("args"), str):
                    turn.saved_text = (turn.saved_text + "\n" + args["args"])[-SAVED_TEXT_CHARS:]
    turn.assistant.extend(reversed(texts))  # reversed again with the whole list
