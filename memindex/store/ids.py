"""Ids: the slug every memory and document id is (`slugify`), and the id of a session's
captured summary, for the prompt hook (no imports at load: it must not slow a prompt)."""

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


def slugify(text: str, max_len: int = 80) -> str:
    """A lowercase ASCII slug (`[a-z0-9]+(-[a-z0-9]+)*`), cut at a word boundary."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    if len(slug) > max_len:
        cut = slug[: max_len + 1]
        slug = cut.rsplit("-", 1)[0] if "-" in cut else slug[:max_len]
        slug = slug[:max_len].strip("-")
    return slug
