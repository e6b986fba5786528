"""The id of a session's captured summary, for the prompt hook (no imports: it must not
slow a prompt) and for the summariser, which slugifies the ids this does not take."""

from __future__ import annotations

_SLUG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def summary_id(session_id: object) -> str | None:
    """`session-<id>` when the session id is already a slug (Claude Code's are UUIDs),
    else None."""
    if not isinstance(session_id, str) or not 0 < len(session_id) <= 60 or not set(session_id) <= _SLUG_CHARS:
        return None
    if session_id[0] == "-" or session_id[-1] == "-" or "--" in session_id:
        return None
    return f"session-{session_id}"
