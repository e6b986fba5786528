"""Score regularization by tags (`memindex search`): memories tagged like the best matches
gain score, so the same topic in other words still makes the list."""

from __future__ import annotations

import math

from ..defaults import MAX_DF_RATIO, RELATED_ANCHOR_FLOOR, RELATED_ANCHORS
from ..index import reads
from ..lean import sqlite3
from .hits import Hit, rank_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .query import Filters


def tag_related(
    conn: sqlite3.Connection, hits: list[Hit], want: int, weight: float, n_docs: int, where: str,
    args: list[object], filters: Filters,
) -> list[Hit]:
    """Score regularization by tags (the cluster hypothesis): a memory tagged like the best
    matches is probably about the same topic, even in other words. Each memory gains

        weight x sum over anchors a of  score(a) x IDF(tags shared with a) / IDF(tags of a)

    where the anchors are the top RELATED_ANCHORS hits scoring at least RELATED_ANCHOR_FLOOR
    of the best. Tags are a store's curated topics: "the caching stuff" also finds the
    eviction constraint tagged like the cache decision it matched. Tags on more than
    MAX_DF_RATIO of the memories relate nothing, so a store without informative tags keeps
    its word ranking."""
    best = hits[0].score
    anchors = [h for h in hits[:RELATED_ANCHORS] if best > 0 and h.score >= RELATED_ANCHOR_FLOOR * best]
    if weight <= 0 or not anchors:
        return hits
    cap = int(min(1000, n_docs * MAX_DF_RATIO))
    idf: dict[str, float] = {}
    lend: dict[str, float] = {}  # what carrying each tag is worth
    for anchor in anchors:
        tags = set(anchor.tags)
        for tag in tags - idf.keys():
            df = reads.tag_count(conn, tag, cap + 1)
            idf[tag] = math.log(n_docs / df) if 0 < df <= cap else 0.0
        mass = sum(idf[t] for t in tags)
        for tag in tags:
            if idf[tag] > 0:
                lend[tag] = lend.get(tag, 0.0) + weight * anchor.score * idf[tag] / mass
    if not lend:
        return hits
    by_rowid = {h.rowid: h for h in hits}
    boost = dict(reads.tag_boosts(conn, lend, among=by_rowid))
    for anchor in anchors:  # an anchor does not lend to itself: its share is weight x its score
        if anchor.rowid in boost:
            boost[anchor.rowid] -= weight * anchor.score
    # Memories found through tags alone score their boost: only the best `want` can place.
    status = "" if filters.include_inactive else " AND d.record_status = 'active'"
    for rowid, extra in boost.items():
        by_rowid[rowid].score += extra
    by_rowid.update((h.rowid, h) for h in tag_only(conn, lend, by_rowid, want, status + where, args))
    return sorted(by_rowid.values(), key=rank_key)


def tag_only(
    conn: sqlite3.Connection, lend: dict[str, float], seen: dict[int, Hit], want: int, where: str, args: list[object]
) -> list[Hit]:
    """The `want` memories outside `seen` with the largest boost that pass the filters
    `where`, scored by their boost. Summed without the filters first (cheap); when those
    filter out too many, again with the filters inside SQL (as `search` ranks its word
    matches): quicker than one joined, filtered query."""
    limit = len(seen) + 2 * want
    ranked = reads.tag_boosts(conn, lend, limit=limit)
    fresh = {d: b for d, b in ranked if d not in seen}
    rows = reads.documents(conn, fresh, where, args)
    if len(rows) < want and len(ranked) == limit:
        fresh = dict(reads.tag_boosts(conn, lend, outside=seen, where=where, args=args, limit=want))
        rows = reads.documents(conn, fresh)
    return [Hit.from_row(r, fresh[r[0]]) for r in rows]
