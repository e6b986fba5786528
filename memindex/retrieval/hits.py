"""`Hit`: one ranked memory, as every reader (search, injection, the old matcher) returns it."""

from __future__ import annotations

from ..defaults import CATEGORY_PRIORITY, SECTION_DECAY
from ..lean import loads


class Hit:
    """One ranked memory."""

    __slots__ = (
        "rowid", "path", "id", "category", "title", "tags", "updated_at", "record_status", "score", "coverage", "via",
        "sections",
    )

    def __init__(
        self, rowid: int, path: str, id: str, category: str, title: str, tags: list[str],
        updated_at: str, record_status: str, score: float, coverage: float | None = None,
        via: int | None = None,
    ) -> None:
        self.rowid, self.path, self.id, self.category, self.title = rowid, path, id, category, title
        self.tags, self.updated_at, self.record_status = tags, updated_at, record_status
        self.score = score  # higher is better (-bm25 for word matches)
        self.coverage = coverage  # share of the query's IDF mass this memory matches
        self.via = via  # rowid of the retired memory this one replaces in the results
        self.sections = 1  # a document's: how many of its sections matched (retrieval.hits.collapse)

    @classmethod
    def from_row(cls, row: tuple, score: float, via: int | None = None) -> "Hit":
        """From `index.reads.HIT_COLUMNS` (tags stored as JSON)."""
        return cls(row[0], row[1], row[2], row[3], row[4], loads(row[5]), row[6], row[7], score, via=via)

    def __repr__(self) -> str:
        return f"Hit({self.path!r}, score={self.score:.4g})"


def rank_key(hit: Hit) -> tuple[float, int, str]:
    """Best score first; category priority only breaks ties (equal to 9 significant digits)."""
    return (-float(f"{hit.score:.9g}"), CATEGORY_PRIORITY.get(hit.category, 99), hit.path)


def document_key(path: str) -> str:
    """What one result stands for: a memory file, or a document (all its sections: `@file#a`
    and `@file#b` are one document, `@file`)."""
    return path.rpartition("#")[0] if path.startswith("@") else path


def collapse(hits: list[Hit]) -> list[Hit]:
    """One hit per memory or document (`hits` in rank order). A document scores its best
    section's score plus SECTION_DECAY times the next one's, SECTION_DECAY squared times the
    third's...: a document that answers in several of its sections ranks above one that
    shares a few words in one. Its best section stands for it (its path, its anchor)."""
    seen: dict[str, Hit] = {}
    n: dict[str, int] = {}
    out = []
    for hit in hits:
        key = document_key(hit.path)
        if key not in seen:
            seen[key] = hit
            n[key] = 1
            out.append(hit)
        else:
            seen[key].score += hit.score * SECTION_DECAY ** n[key]
            n[key] += 1
            seen[key].sections = n[key]
    out.sort(key=rank_key)
    return out
