"""`unused`: memories this user's sessions were shown again and again (the prompt hook,
search, MCP) and the model never opened (memindex/usage.py): its title and tags may not
say what it holds, or it is no longer needed."""

from __future__ import annotations

from .. import usage
from .items import Item


def detect(ctx) -> list[Item]:
    cfg = ctx.cfg
    if not cfg["review.usage"]:
        return []
    uses = usage.counts(ctx.root)
    min_shown, min_sessions = int(cfg["review.unused_min_shown"]), int(cfg["review.unused_min_sessions"])
    items, seen = [], set()
    for e in ctx.entries:
        key = usage.key(e.rel)
        use = uses.get(key)
        if use is None or key in seen or use.opened or use.shown < min_shown or use.sessions < min_sessions:
            continue
        seen.add(key)  # one item per document, whichever section was shown
        evidence = {"shown": use.shown, "sessions": use.sessions, "opened": 0, "shown_by": use.shown_by,
                    "last_shown": use.last_shown}
        items.append(ctx.item("unused", e, f"shown {use.shown} times in {use.sessions} sessions, never opened",
                              evidence, "update", stable={"opened": 0}))
    return items
