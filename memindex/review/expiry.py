"""`expired`: memories whose own fields say they no longer hold while they are still
active: a constraint past its `expires` date or marked `active: false`, a decision whose
status is deprecated or superseded, tech debt resolved or dropped (wont_fix)."""

from __future__ import annotations

from datetime import datetime, timezone

from .items import Item


def _date(value: object) -> datetime | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        try:
            when = datetime.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def detect(ctx) -> list[Item]:
    items = []
    for e in ctx.entries:
        if e.document:
            continue
        c = e.content
        if e.category == "constraint":
            when = _date(c.get("expires"))
            if when is not None and when <= ctx.now:
                items.append(ctx.item("expired", e, f"the constraint expired on {c['expires'][:10]}",
                                      {"expires": c["expires"]}, "retire"))
            elif c.get("active") is False:
                items.append(ctx.item("expired", e, "the constraint says it is no longer active (content.active is false)",
                                      {"active": False}, "retire"))
        elif e.category == "decision" and c.get("status") in ("deprecated", "superseded"):
            items.append(ctx.item("expired", e, f"the decision's status is {c['status']}, but the memory is still active",
                                  {"status": c["status"]}, "retire"))
        elif e.category == "tech_debt" and c.get("status") in ("resolved", "wont_fix"):
            items.append(ctx.item("expired", e, f"the tech debt is {c['status'].replace('_', ' ')}, but the memory is still active",
                                  {"status": c["status"]}, "archive"))
    return items
