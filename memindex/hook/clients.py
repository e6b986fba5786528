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

Only Claude Code's transcript is read: the others' session files have other formats.
"""

from __future__ import annotations

from ..lean import dumps

CLIENTS = ("claude", "codex", "gemini", "cursor")
EVENT_NAMES = {  # (client, hook event) -> the event name its JSON answer carries
    ("codex", "prompt"): "UserPromptSubmit", ("codex", "session-start"): "SessionStart",
    ("gemini", "prompt"): "BeforeAgent", ("gemini", "session-start"): "SessionStart",
}
EMPTY = {"gemini": "{}", "cursor": '{"continue":true}'}  # what "nothing to add" prints


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


def render(client: str, event: str, block: str) -> str:
    """What the hook prints for `block` (possibly empty: then nothing, or the client's
    "no change" JSON)."""
    if client == "claude":
        return block
    if not block or client == "cursor":
        return EMPTY.get(client, "")
    return dumps({"hookSpecificOutput": {"hookEventName": EVENT_NAMES[(client, event)], "additionalContext": block}})
