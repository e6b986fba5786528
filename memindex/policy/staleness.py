"""What the last review found about the memories the prompt hook is about to inject
(memindex/review, stored in the index: the hook never runs git): a stale memory gets a
few words in the block, "(may be stale: src/payments/retry.py was deleted)"; a clearly
dead one (every file it names deleted, at least half of the names it gives gone) is left
out, with that reason, unless `review.skip_dead` is false. One query, on the injected
rows only; the notes are about the memory as it is (a memory changed since the check
has none). Standard library only: the prompt hook imports it."""

from __future__ import annotations

from ..index import reads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config import Config
    from ..lean import sqlite3
    from .inject import Outcome


def apply(conn: sqlite3.Connection, outcome: Outcome, cfg: Config) -> dict[str, str]:
    """The notes for `outcome.hits` (path -> words), after leaving out the clearly dead
    ones (each noted as dropped, with its reason)."""
    if not outcome.hits or not cfg["review.notes"]:
        return {}
    found = reads.review_notes(conn, [h.rowid for h in outcome.hits])
    if not found:
        return {}
    kept, notes = [], {}
    for hit in outcome.hits:
        note = found.get(hit.rowid)
        if note is None:
            kept.append(hit)
        elif note[1] and cfg["review.skip_dead"]:
            outcome.note(hit, False, f"clearly dead ({note[0]}): review.skip_dead")
        else:
            kept.append(hit)
            notes[hit.path] = note[0]
    outcome.hits = kept
    return notes
