"""Candidate selection (`memindex candidate`): which existing memory new information updates.

The existing memory that new information should update is the best BM25 hit of
`query.search` for the new text, restricted to the category and to active memories. Whether
it really is the same topic is decided with two corpus-relative measures, never with an
absolute BM25 number:

* containment: the share of the new text's IDF mass (Lucene IDF of every query term; a term
  absent from the whole store weighs as much as the rarest term in it, df = 1) that the
  candidate's title, tags and body match (the engine's own term expressions, so `auth` may
  match `authentication`);
* title overlap: the share of the candidate's title-and-tags IDF mass that the new text
  contains (the reverse direction: does the new text talk about *that* memory's subject?).

match = containment + title overlap (0..2). UPDATE when match >= UPDATE_THRESHOLD, NOOP
when, in addition, exact containment (same measure, no prefix matching) >= NOOP_THRESHOLD:
every meaningful word of the new text is already in the memory, so it adds nothing. The
thresholds (and CANDIDATE_POOL, the hits looked at) are in memindex/defaults.py.

The thresholds were set on hand-written texts against a judged store; the figures and the
test that re-runs them: docs/evaluation.md, "Candidate selection". A lexical measure has a
known limit: a short text that reuses a memory's title words for another object is proposed
as an UPDATE; the assistant sees the candidate's title and content and can still choose CREATE.
"""

from __future__ import annotations

import math
import os
import sqlite3
from pathlib import Path
from typing import Any

from ..config import Config
from ..defaults import CANDIDATE_POOL, KEY_FIELDS, NO_DELETE, NOOP_THRESHOLD, UPDATE_THRESHOLD
from ..errors import MemoryFileError, UsageError
from ..store.paths import display_prefix
from ..store.files import extract_body, parse_json, read_bytes
from ..index.reader import open_fresh_reader
from ..text.render import shown
from ..text.words import query_terms
from .validate import clean_title, normalize_category, sha256_hex

# What a memory says: not its category's name, nor its `questions` (phrasings of what it
# answers: found by them, a memory is still judged UPDATE or NOOP by what it says).
_CONTENT_COLUMNS = ("title", "tags", "body")


def _absent_weight(plan: Any) -> float:
    """The weight of a term no memory has: that of the rarest possible term (df = 1).
    Lucene's IDF at df = 0 would let one unknown word outweigh five known ones in a store
    of one memory and turn every early update into a CREATE."""
    n = max(plan.n_docs, 1)
    return math.log(1 + (n - 1 + 0.5) / (1 + 0.5))


def containment(conn: sqlite3.Connection, plan: Any, hit: Any) -> float:
    """Share of the query's whole IDF mass (every term, including terms no memory has)
    that one memory's title, tags and body match."""
    from ..retrieval.query import coverage

    coverage(conn, plan, [hit], top_terms=None, columns=_CONTENT_COLUMNS, absent=_absent_weight(plan))
    return float(hit.coverage or 0.0)


def title_overlap(conn: sqlite3.Connection, subject: str, text: str, params: Any) -> float:
    """Share of a memory's title-and-tags IDF mass that `text` contains (same tokenizer,
    same term expressions as the engine)."""
    from ..retrieval.query import plan_query

    plan = plan_query(conn, subject, params)
    total = sum(plan.idf(t) for t in plan.df)
    got = sum(plan.idf(t) for t in _matching_terms(plan, text))
    return got / total if total > 0 else 0.0


def _matching_terms(plan: Any, text: str) -> list[Any]:
    """The planned terms that a piece of text contains (FTS5 matching, scratch table)."""
    from ..index.reads import Scratch
    from ..text.words import has_cjk, spaceless

    Scratch.load_text(text)
    side = spaceless(text)
    if side:
        Scratch.load_text(side, spaceless=True)
    return [
        term for term in plan.df
        if (not has_cjk(term.text) and Scratch.matching(plan.expressions[term]))
        or (side and Scratch.matching(plan.expressions[term], spaceless=True))
    ]


class TopicMatch:
    """How far one memory holds the topic of a text (the module docstring's measures):
    `score` = containment + title_overlap (0..2); `same` when it reaches UPDATE_THRESHOLD;
    `restates` when, in addition, every meaningful word of the text is in it (NOOP)."""

    __slots__ = ("hit", "containment", "title_overlap", "exact_containment")

    def __init__(self, hit: Any, containment: float, title_overlap: float, exact_containment: float) -> None:
        self.hit, self.containment, self.title_overlap = hit, containment, title_overlap
        self.exact_containment = exact_containment

    @property
    def score(self) -> float:
        return self.containment + self.title_overlap

    @property
    def same(self) -> bool:
        return self.score >= UPDATE_THRESHOLD

    @property
    def restates(self) -> bool:
        return self.same and self.exact_containment >= NOOP_THRESHOLD

    def to_json(self) -> dict[str, float]:
        return {"score": round(self.score, 3), "containment": round(self.containment, 3),
                "title_overlap": round(self.title_overlap, 3), "exact_containment": round(self.exact_containment, 3),
                "bm25": round(self.hit.score, 3)}


class StoreWide:
    """The matching `Topic.measure` needs, for many memories against each other (the
    review's store-wide pass): a term's expression is matched once against every memory's
    title, tags and body (the index itself, the columns containment reads), and a memory's
    text is loaded once into a private FTS5 table (the index's tokenizer), where the
    one-at-a-time path loads both into a scratch table for each measure. Same expressions,
    same columns, same tokenizer: the same answers (tests/test_review_conflicts.py)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        from ..defaults import TOKENIZER

        self.conn = conn
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZER}')")
        self._rows: dict[str, set[int]] = {}
        self._texts: dict[tuple[str, int], bool] = {}
        self._loaded: set[int] = set()
        self.counts: dict = {}  # document frequencies, counted once for every plan of the pass
        self.plans: dict[str, Any] = {}  # a memory's title-and-tags plan, made once

    def rows(self, expression: str) -> set[int]:
        """Memories whose title, tags or body match."""
        if expression not in self._rows:
            only = "{" + " ".join(_CONTENT_COLUMNS) + "} : "
            self._rows[expression] = {r for (r,) in self.conn.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ?", (f"{only}({expression})",))}
        return self._rows[expression]

    def add_text(self, rowid: int, text: str) -> None:
        """A memory's text, for `has`."""
        if rowid not in self._loaded:
            self._loaded.add(rowid)
            self.db.execute("INSERT INTO t(rowid, body) VALUES (?, ?)", (rowid, text))

    def has(self, rowid: int, expression: str) -> bool:
        """Does this memory's text (`add_text`) match?"""
        key = (expression, rowid)
        if key not in self._texts:
            self._texts[key] = self.db.execute("SELECT 1 FROM t WHERE t MATCH ? AND rowid = ?",
                                               (f"({expression})", rowid)).fetchone() is not None
        return self._texts[key]

    def close(self) -> None:
        self.db.close()


def _share(plan: Any, rowid: int, matching: Any) -> float:
    """`containment` with a StoreWide's matching."""
    from ..retrieval.query import term_weights

    weights, total = term_weights(plan, _absent_weight(plan), None)
    if total <= 0:
        return 0.0
    got = sum(weights[t] for t, df in plan.df.items() if df and rowid in matching(plan.expressions[t]))
    return min(got / total, 1.0)


class Topic:
    """A text's query plans, made once for every memory it is measured against; with a
    StoreWide (`store`, and `own`: the text's own memory there), measured through it."""

    __slots__ = ("text", "params", "plan", "_exact", "store", "own", "_conn")

    def __init__(self, conn: sqlite3.Connection, text: str, params: Any, store: StoreWide | None = None,
                 own: int | None = None) -> None:
        from ..retrieval.query import plan_query

        self.text, self.params, self.store, self.own, self._conn = text, params, store, own, conn
        self.plan = plan_query(conn, text, params, counts=store.counts if store is not None else None)
        self._exact: Any = None
        if self.plan.side_df or self.plan.runs:  # text without spaces: the one-at-a-time path knows `fts_cjk`
            self.store = None
        elif store is not None and own is not None:
            store.add_text(own, text)

    @property
    def exact(self) -> Any:
        """The plan without prefix matching (exact containment: NOOP), made when first asked."""
        if self._exact is None:
            from ..retrieval.query import plan_query

            counts = self.store.counts if self.store is not None else None
            self._exact = plan_query(self._conn, self.text, self.params.replace(prefix_mode="none"), counts=counts)
        return self._exact

    def measure(self, conn: sqlite3.Connection, hit: Any, exact: bool = True) -> TopicMatch:
        """The measures of one memory (a Hit) against this text: the one test of "same
        topic" that `memindex candidate`, the save path and the review's store-wide check
        (memindex/review/conflicts.py) share (`exact`: also exact containment, NOOP's
        measure; nan when not asked)."""
        subject = hit.title + " " + " ".join(hit.tags)
        if self.store is None or self.own is None:
            cont = containment(conn, self.plan, hit)
            overlap = title_overlap(conn, subject, self.text, self.params)
            return TopicMatch(hit, cont, overlap, containment(conn, self.exact, hit) if exact else float("nan"))
        from ..retrieval.query import plan_query

        store = self.store
        plan = store.plans.get(subject)
        if plan is None:
            plan = store.plans[subject] = plan_query(conn, subject, self.params, counts=store.counts)
        total = sum(plan.idf(t) for t in plan.df)
        got = sum(plan.idf(t) for t in plan.df if store.has(self.own, plan.expressions[t]))
        return TopicMatch(hit, _share(self.plan, hit.rowid, store.rows), got / total if total > 0 else 0.0,
                          _share(self.exact, hit.rowid, store.rows) if exact else float("nan"))


def same_topic(conn: sqlite3.Connection, text: str, params: Any, categories: tuple[str, ...] = (),
               limit: int = CANDIDATE_POOL) -> tuple[list[Any], TopicMatch | None]:
    """The active memories (of `categories`, or all) that best match `text` by BM25, and
    the measures of the best one (None when none shares a word)."""
    from ..retrieval.query import Filters, search

    topic = Topic(conn, text, params)
    hits = search(conn, text, limit=limit, params=params, filters=Filters(categories=categories), plan=topic.plan)
    hits = [h for h in hits if h.record_status == "active" and (not categories or h.category in categories)]
    return hits, (topic.measure(conn, hits[0]) if hits else None)


def _key_content(category: str, content: object) -> dict[str, Any]:
    if not isinstance(content, dict):
        return {}
    return {k: content[k] for k in KEY_FIELDS.get(category, ()) if k in content}


def memory_text(category: str, data: object) -> str:
    """The new information a whole memory object carries, as candidate matches it: its
    title and the text of its content."""
    if not isinstance(data, dict):
        return ""
    title = data.get("title") if isinstance(data.get("title"), str) else ""
    return f"{title}\n{extract_body(category, data.get('content'))}".strip()


def find_candidate(
    root: str | os.PathLike[str],
    cfg: Config,
    category: str,
    new_info: str,
    *,
    conn: sqlite3.Connection | None = None,
) -> dict[str, Any]:
    """Which existing memory should `new_info` update? A JSON-ready answer with the
    candidate (or null), the recommendation CREATE / UPDATE / UPDATE_OR_DELETE / NOOP, the
    measures behind it, and the veto on deleting decisions, preferences and sessions."""
    from ..retrieval.query import Params

    root = Path(root)
    category = normalize_category(category)
    if not isinstance(new_info, str) or not new_info.strip():
        raise UsageError("the new information is empty")
    delete_allowed = category not in NO_DELETE
    veto = None
    if not delete_allowed:
        veto = f"DELETE is vetoed for {category} memories: they are history; update them instead"
        if category == "decision":
            veto += " (a decision that no longer holds gets status 'superseded')"
    answer: dict[str, Any] = {
        "category": category,
        "recommendation": "CREATE",
        "candidate": None,
        "match": None,
        "thresholds": {"update": UPDATE_THRESHOLD, "noop": NOOP_THRESHOLD},
        "reason": "",
        "delete_allowed": delete_allowed,
        "veto": veto,
        "others": [],
    }
    if not query_terms(new_info):
        answer["reason"] = "the new information has no meaningful words to match"
        return answer
    own = conn is None
    conn = open_fresh_reader(root, cfg) if conn is None else conn
    try:
        hits, match = same_topic(conn, new_info, Params.from_config(cfg), (category,))
        if match is None:
            answer["reason"] = f"no active {category} memory shares a word with the new information"
            return answer
        best, score, exact = match.hit, match.score, match.exact_containment
        prefix = display_prefix(root)
        answer["match"] = match.to_json()
        answer["others"] = [{"path": shown(prefix, h.path) or "", "title": clean_title(h.title), "bm25": round(h.score, 3)} for h in hits[1:3]]
    finally:
        if own:
            conn.close()
    if score < UPDATE_THRESHOLD:
        answer["reason"] = (
            f"nearest {category} memory {prefix + best.path} matches {score:.2f} < {UPDATE_THRESHOLD}: a new topic"
        )
        answer["nearest"] = {"path": prefix + best.path, "title": clean_title(best.title)}
        return answer
    candidate: dict[str, Any] = {
        "path": prefix + best.path,
        "id": best.id,
        "title": clean_title(best.title),
        "tags": best.tags,
        "updated_at": best.updated_at,
        "record_status": best.record_status,
    }
    try:
        data, _ = read_bytes(root, best.path, int(cfg["index.max_file_bytes"]))
        parsed = parse_json(data)
        candidate["sha256"] = sha256_hex(data)
        candidate["content"] = _key_content(category, parsed.get("content") if isinstance(parsed, dict) else None)
        if isinstance(parsed, dict) and isinstance(parsed.get("questions"), list):
            candidate["questions"] = parsed["questions"]  # an update may add to them
    except MemoryFileError:
        candidate["content"] = {}
    answer["candidate"] = candidate
    if exact >= NOOP_THRESHOLD:
        answer["recommendation"] = "NOOP"
        answer["reason"] = f"the memory already contains {exact:.0%} of the new information's terms: nothing to add"
    elif delete_allowed:
        answer["recommendation"] = "UPDATE_OR_DELETE"
        answer["reason"] = (
            f"same topic (match {score:.2f} >= {UPDATE_THRESHOLD}): update it, or retire it "
            "(`memindex retire`) if the new information makes it obsolete"
        )
    else:
        answer["recommendation"] = "UPDATE"
        answer["reason"] = f"same topic (match {score:.2f} >= {UPDATE_THRESHOLD}): update it"
    return answer
