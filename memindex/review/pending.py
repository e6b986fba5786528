"""What the hooks read of the review, from the index alone (standard library and the
package's lean modules: the hooks import this): how many items wait, by kind, for
SessionStart's line to the user, and whether a background refresh is due."""

from __future__ import annotations

from ..lean import loads
from .acks import load as acked

KIND_ORDER = ("conflict", "stale", "expired", "duplicate", "unused")


def counts(conn, root) -> dict[str, int]:
    """kind -> items waiting (stored by the last refresh, of memories unchanged since,
    not acknowledged)."""
    from ..index.reads import review_rows

    kept = acked(root)
    out: dict[str, int] = {}
    for row in review_rows(conn):
        kind, key, basis = row[2], row[3], row[4]
        ack = kept.get(key)
        if isinstance(ack, dict) and ack.get("basis") == basis:
            continue
        out[kind] = out.get(kind, 0) + 1
    return out


def line(counts: dict[str, int]) -> str | None:
    """SessionStart's line to the user: "memindex: 3 memories to review (2 stale, 1
    duplicate): run `memindex review`", or None when the queue is empty."""
    total = sum(counts.values())
    if not total:
        return None
    parts = ", ".join(f"{counts[k]} {k}" for k in KIND_ORDER if counts.get(k))
    return f"memindex: {total} {'memory' if total == 1 else 'memories'} to review ({parts}): run `memindex review`"


def due(conn, interval_s: float, now_s: float) -> bool:
    """Is a background refresh due (none yet, or the last older than `interval_s`)?"""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'review'").fetchone()
        report = loads(row[0]) if row else None
    except Exception:
        return True
    stamp = report.get("checked_at") if isinstance(report, dict) else None
    if not isinstance(stamp, str):
        return True
    try:
        from _datetime import datetime  # the C class (docs: the hook avoids datetime's Python layer)
    except ImportError:  # pragma: no cover
        from datetime import datetime
    try:
        checked = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return True
    return now_s - checked >= interval_s
