"""One item of the review queue, and the memories the detectors read.

An item says what needs a human or the model about one memory (its kind, a one-line
reason, the evidence, the suggested action) in the shape `memindex review --json`, the
MCP tool and the UI give (`Item.to_json`). Its `key` names it across runs (kind, memory,
other memory); its `basis` is what an acknowledgment (`keep`) holds on to: the memory's
bytes, the other memory's, and the evidence's stable part. When any of them changes the
item comes back.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

KINDS = ("stale", "conflict", "duplicate", "unused", "expired")
SUGGESTED = ("retire", "archive", "update", "merge", "keep")
# queue order: what is wrong before what is unneeded
ORDER = {"conflict": 0, "stale": 1, "expired": 2, "duplicate": 3, "unused": 4}


@dataclass
class Entry:
    """One active memory (or document section) as the detectors read it."""

    rel: str  # its path in the root (`decisions/x.json`), or a document's row (`@docs/x.md#a`)
    doc: int  # its rowid in the index
    mtime_ns: int
    category: str
    title: str
    tags: list[str]
    created_at: str
    updated_at: str
    related_files: list[str]
    data: dict[str, Any]  # the parsed file ({} for a document section)
    sha: str  # sha256 of the file's bytes (a document's: of its text)
    text: str = ""  # title, content text and questions, as written

    @property
    def document(self) -> bool:
        return self.rel.startswith("@")

    @property
    def content(self) -> dict[str, Any]:
        c = self.data.get("content")
        return c if isinstance(c, dict) else {}


@dataclass
class Item:
    """One entry of the review queue."""

    kind: str
    entry: Entry
    reason: str
    evidence: dict[str, Any]
    suggested: str
    shown: str  # the memory's path as search shows it
    other: Entry | None = None
    other_shown: str | None = None
    note: str | None = None  # the prompt hook's few words, for stale memories
    dead: bool = False  # the prompt hook leaves the memory out
    stable: Any = None  # the part of the evidence an acknowledgment holds on to (default: all of it)
    kept: bool = False  # acknowledged (`keep`) for exactly this basis
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return self.entry.rel

    @property
    def other_path(self) -> str | None:
        return self.other.rel if self.other is not None else None

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.entry.rel}" + (f":{self.other.rel}" if self.other is not None else "")

    @property
    def basis(self) -> str:
        if "basis" in self.extra:  # read back from the index
            return self.extra["basis"]
        stable = self.evidence if self.stable is None else self.stable
        blob = json.dumps([self.entry.sha, self.other.sha if self.other else None, stable], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    def to_json(self) -> dict[str, Any]:
        """{"kind", "path", "reason", "evidence", "suggested", "other_path"?}: paths as search shows them."""
        out: dict[str, Any] = {"kind": self.kind, "path": self.shown, "reason": self.reason,
                               "evidence": self.evidence, "suggested": self.suggested}
        if self.other_shown is not None:
            out["other_path"] = self.other_shown
        return out


def stored(row: tuple, prefix: str) -> Item:
    """An item read back from the index (`index.reads.review_rows`)."""
    from ..text.render import shown

    doc, rel, kind, key, basis, reason, evidence, suggested, other, note, dead = row
    entry = Entry(rel, doc, 0, "", "", [], "", "", [], {}, "")
    other_entry = Entry(other, 0, 0, "", "", [], "", "", [], {}, "") if other else None
    return Item(kind, entry, reason, json.loads(evidence), suggested, shown(prefix, rel) or rel, other_entry,
                (shown(prefix, other) or other) if other else None, note, bool(dead), extra={"basis": basis})


def sort_items(items: list[Item]) -> list[Item]:
    return sorted(items, key=lambda i: (ORDER.get(i.kind, 9), i.shown, i.other_shown or ""))
