"""The hooks' input and output in each client's format (`memindex_hook.py EVENT --client
NAME`): the policy is the same for all (memindex/hook/__init__.py); only where the payload keeps
its fields and how the answer is printed differ.

    claude  Claude Code: the payload as documented; the block printed as plain text
    codex   Codex CLI (hooks.json, UserPromptSubmit / SessionStart): Claude Code's payload
            fields; the block as hookSpecificOutput.additionalContext JSON
    gemini  Gemini CLI (settings.json, BeforeAgent / SessionStart): the same fields; stdout
            must be JSON only, so "{}" when there is nothing to add
    cursor  Cursor (hooks.json, beforeSubmitPrompt): its output is {continue, user_message}
            only, it cannot add context; the hook keeps the index fresh and lets the
            prompt through (recall in Cursor is the MCP server's)

A message for the user alone (`Shown`: SessionStart's "memory files need attention", which
names files the repository chose) goes to each client's user channel, never into the
model's context: the top-level `systemMessage` of all three. Claude Code: "Warning message
shown to the user"; Codex CLI (codex-rs/hooks/src/events/session_start.rs, 0.169): a warning
entry of the hook's run, apart from the model's `additionalContext`; Gemini CLI
(docs/hooks/reference.md, 0.61): "Shown at the start of the session", printed on stderr by
`gemini -p`.

Only Claude Code's transcript is read: the others' session files have other formats.
"""

from __future__ import annotations

from ..lean import dumps

CLIENTS = ("claude", "codex", "gemini", "cursor")
EVENT_NAMES = {  # (client, hook event) -> the event name its JSON answer carries
    ("claude", "session-start"): "SessionStart",
    ("codex", "prompt"): "UserPromptSubmit", ("codex", "session-start"): "SessionStart",
    ("gemini", "prompt"): "BeforeAgent", ("gemini", "session-start"): "SessionStart",
}
EMPTY = {"gemini": "{}", "cursor": '{"continue":true}'}  # what "nothing to add" prints


class Shown:
    """A handler's answer with a message for the user alone beside the block for the model."""

    __slots__ = ("message", "block")

    def __init__(self, message: str, block: str = "") -> None:
        self.message, self.block = message, block


def supports(client: str, event: str) -> bool:
    """Whether memindex has this hook for this client."""
    if client == "claude":
        return True
    return (client, event) in EVENT_NAMES or (client, event) == ("cursor", "prompt")


def normalize(client: str, data: dict) -> dict:
    """The payload with the fields the handlers read (cwd, prompt, session_id)."""
    if client == "claude":
        return data
    data = dict(data)
    data.pop("transcript_path", None)
    if client == "cursor" and not isinstance(data.get("cwd"), str):
        roots = data.get("workspace_roots")
        if isinstance(roots, list) and roots and isinstance(roots[0], str):
            data["cwd"] = roots[0]
    return data


def render(client: str, event: str, answer: "str | Shown") -> str:
    """What the hook prints for a handler's answer: a block for the model (possibly empty:
    then nothing, or the client's "no change" JSON), or a `Shown` whose message goes to the
    user's channel (`systemMessage`) and never to the model."""
    message, block = (answer.message, answer.block) if isinstance(answer, Shown) else (None, answer)
    if client == "cursor":
        return EMPTY[client]
    if client == "claude" and not message:
        return block  # plain stdout: context for the model
    out: dict = {"systemMessage": message} if message else {}
    if block:
        out["hookSpecificOutput"] = {"hookEventName": EVENT_NAMES[(client, event)], "additionalContext": block}
    return dumps(out) if out else EMPTY.get(client, "")
