"""The query engine shared by the hook, the CLI and the evaluation: terms -> FTS5 -> hits.

User text never reaches FTS5 raw: every term is a double-quoted phrase of word characters
(`"user id"`), so quotes, parentheses, `-`, `:`, `*`, `^` and AND/OR/NOT/NEAR are inert.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone

from .config import DEFAULTS, Config
from .defaults import (
    CATEGORIES,
    CATEGORY_PRIORITY,
    COVERAGE_TERMS,
    DF_SAMPLE,
    KIND_WEIGHT,
    MAX_DF_RATIO,
    MAX_POSTINGS,
    MAX_QUERY_TERMS,
    PREFIX_MIN_LEN,
    PREFIX_MODE,
    RELATED_ANCHOR_FLOOR,
    RELATED_ANCHORS,
    RELATED_DEPTH,
    RELATED_WEIGHT,
    TOKENIZER,
)
from .text import Term, query_terms, valid_unicode


class Params:
    """Ranking knobs; defaults come from `defaults` and `memory-config.json`."""

    __slots__ = (
        "title_weight", "tags_weight", "body_weight", "prefix_min_len", "prefix_mode",
        "max_terms", "max_postings", "max_df_ratio", "kind_weight", "related_weight",
    )

    def __init__(
        self,
        title_weight: float = DEFAULTS["retrieval.column_weights.title"],  # type: ignore[assignment]
        tags_weight: float = DEFAULTS["retrieval.column_weights.tags"],  # type: ignore[assignment]
        body_weight: float = DEFAULTS["retrieval.column_weights.body"],  # type: ignore[assignment]
        prefix_min_len: int = PREFIX_MIN_LEN,
        prefix_mode: str = PREFIX_MODE,  # "none" | "prefix" | "both"
        max_terms: int = MAX_QUERY_TERMS,
        max_postings: int = MAX_POSTINGS,
        max_df_ratio: float = MAX_DF_RATIO,
        kind_weight: float = KIND_WEIGHT,
        related_weight: float = RELATED_WEIGHT,
    ) -> None:
        self.title_weight, self.tags_weight, self.body_weight = title_weight, tags_weight, body_weight
        self.kind_weight, self.related_weight = kind_weight, related_weight
        self.prefix_min_len, self.prefix_mode = prefix_min_len, prefix_mode
        self.max_terms, self.max_postings, self.max_df_ratio = max_terms, max_postings, max_df_ratio

    def replace(self, **changes: object) -> "Params":
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return Params(**values)  # type: ignore[arg-type]

    @classmethod
    def from_config(cls, cfg: Config) -> "Params":
        return cls(
            title_weight=cfg["retrieval.column_weights.title"],
            tags_weight=cfg["retrieval.column_weights.tags"],
            body_weight=cfg["retrieval.column_weights.body"],
        )


class Hit:
    """One ranked memory."""

    __slots__ = (
        "rowid", "path", "id", "category", "title", "tags", "updated_at", "record_status", "score", "coverage", "via",
    )

    def __init__(
        self, rowid: int, path: str, id: str, category: str, title: str, tags: list[str],
        updated_at: str, record_status: str, score: float, coverage: float | None = None,
        via: int | None = None,
    ) -> None:
        self.rowid, self.path, self.id, self.category, self.title = rowid, path, id, category, title
        self.tags, self.updated_at, self.record_status = tags, updated_at, record_status
        self.score = score  # -bm25: higher is better
        self.coverage = coverage  # share of the query's IDF mass this memory matches
        self.via = via  # rowid of the retired memory this one replaces in the results

    def __repr__(self) -> str:
        return f"Hit({self.path!r}, score={self.score:.4g})"


class QueryPlan:
    """The terms of one query with their document frequencies, and what FTS5 is asked."""

    def __init__(self, terms: list[Term], n_docs: int) -> None:
        self.terms = terms
        self.n_docs = n_docs
        self.df: dict[Term, int] = {}
        self.used: list[Term] = []
        self.expressions: dict[Term, str] = {}

    def idf(self, term: Term) -> float:
        """Lucene's always-positive IDF: meaningful even in a store of three memories."""
        n, df = self.n_docs, self.df.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    @property
    def match(self) -> str | None:
        parts = [self.expressions[t] for t in self.used]
        return " OR ".join(parts) if parts else None


_SCRATCH: sqlite3.Connection | None = None


def _scratch() -> sqlite3.Connection:
    """A private in-memory FTS5 with the index's tokenizer, to re-check matches on a
    handful of hits (exact FTS5 semantics, no second matcher to drift)."""
    global _SCRATCH
    if _SCRATCH is None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute(f"CREATE VIRTUAL TABLE h USING fts5(title, tags, body, kind, tokenize='{TOKENIZER}')")
        _SCRATCH = conn
    return _SCRATCH


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def plan_query(conn: sqlite3.Connection, text: str, params: Params, n_docs: int | None = None) -> QueryPlan:
    """Terms, their document frequencies, and the bounded set actually queried."""
    terms = query_terms(text)[: params.max_terms * 2]
    n_docs = _doc_count(conn) if n_docs is None else n_docs
    plan = QueryPlan(terms, n_docs)
    # A term in more than `max_df_ratio` of the memories, or beyond the posting budget on
    # its own, is common: its IDF is small and its postings many. Counting stops there,
    # so planning costs at most `cap` rows a term however large the store.
    cap = min(max(1, int(n_docs * params.max_df_ratio)), params.max_postings) + 1
    top_rowid = _top_rowid(conn)
    for term in terms:
        quoted = _quote(term.text)
        if term.is_phrase or params.prefix_mode == "none" or len(term.parts[0]) < params.prefix_min_len:
            expression = quoted
        elif params.prefix_mode == "both":
            expression = f"{quoted} OR {quoted}*"
        else:
            # Prefix matching (auth -> authentication), as the old matcher did; its IDF is
            # that of all the words it reaches, so a broad prefix weighs little.
            expression = quoted + "*"
        plan.expressions[term] = expression
        df = _count(conn, quoted, cap, top_rowid)
        if expression != quoted and df < cap:
            # A prefix reaches at least the word's own memories: a common word is common
            # as a prefix too, and its (costly, merged) prefix count is skipped.
            df = _count(conn, expression, cap, top_rowid)
        plan.df[term] = df
    # Rarest first; terms in no memory cost and score nothing. Past the posting budget the
    # commonest terms go: latency stays near flat as the store grows.
    ranked = sorted((t for t in plan.df if 0 < plan.df[t] < cap), key=lambda t: plan.df[t])
    budget = params.max_postings
    for term in ranked[: params.max_terms]:
        if plan.used and plan.df[term] > budget:
            break
        plan.used.append(term)
        budget -= plan.df[term]
    if not plan.used:
        # Only common terms: keep one so that "deploy" alone still answers.
        plan.used = [t for t in plan.df if plan.df[t] > 0][:1]
    return plan


def _count(conn: sqlite3.Connection, expression: str, cap: int, top_rowid: int) -> int:
    """Memories matching an FTS5 expression: exact up to DF_SAMPLE (`"user id"` counts
    adjacent pairs, `"auth"*` every word it starts), estimated above it from where the
    DF_SAMPLE-th match falls (sync inserts in shuffled order, so rowids are an unbiased
    sample), and never counted past `cap`. Planning costs at most DF_SAMPLE rows a term."""
    sample = min(cap, DF_SAMPLE)
    found, last = conn.execute(
        "SELECT count(*), max(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)", (expression, sample)
    ).fetchone()
    if found < sample or sample == cap:
        return found
    return min(cap, max(found, round(found * top_rowid / max(last, 1))))


def _top_rowid(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(rowid) FROM documents").fetchone()
    return row[0] or 0


def _doc_count(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'doc_count'").fetchone()
    if row is not None:
        return int(json.loads(row[0]))
    return conn.execute("SELECT count(*) FROM documents").fetchone()[0]


class Filters:
    """Which memories a search may return."""

    __slots__ = ("categories", "tag", "include_inactive", "retention_days")

    def __init__(
        self,
        categories: tuple[str, ...] = (),
        tag: str | None = None,
        include_inactive: bool = False,
        retention_days: tuple[tuple[str, int], ...] = (),  # (category, days) with days > 0
    ) -> None:
        self.categories, self.tag = categories, tag
        self.include_inactive, self.retention_days = include_inactive, retention_days

    @classmethod
    def from_config(cls, cfg: Config, **kw: object) -> "Filters":
        keep = tuple((c, cfg.retention_days(c)) for c in CATEGORIES if cfg.retention_days(c) > 0)
        return cls(retention_days=keep, **kw)  # type: ignore[arg-type]


def _where(filters: Filters, now: datetime) -> tuple[str, list[object]]:
    """SQL for every filter but the record status (retired memories are needed to find
    their replacements; `search` drops them after)."""
    clauses, args = [], []
    if filters.categories:
        clauses.append(f"d.category IN ({','.join('?' * len(filters.categories))})")
        args.extend(filters.categories)
    if filters.tag:
        clauses.append("instr(d.tag_key, ?) > 0")
        args.append("," + valid_unicode(filters.tag).lower().replace(",", " ") + ",")
    for category, days in filters.retention_days:
        cutoff = (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S")
        clauses.append("NOT (d.category = ? AND d.updated_at != '' AND substr(d.updated_at, 1, 19) < ?)")
        args.extend((category, cutoff))
    return "".join(f" AND {c}" for c in clauses), args


def _rank_key(hit: Hit) -> tuple[float, int, str]:
    """Best score first; category priority only breaks ties (equal to 9 significant digits)."""
    return (-float(f"{hit.score:.9g}"), CATEGORY_PRIORITY.get(hit.category, 99), hit.path)


_HIT_COLUMNS = "d.rowid, d.path, d.id, d.category, d.title, d.tags, d.updated_at, d.record_status"


_IN = "(SELECT value FROM json_each(?))"  # an IN list bound as one JSON array (`_json_list`)


def _json_list(values: Iterable[object]) -> str:
    """Any number of values as one bound parameter: SQLite builds cap bound variables
    (999 in older ones), and a long search binds one per memory."""
    return json.dumps(list(values))


def _documents(conn: sqlite3.Connection, rowids: Iterable[int], where: str = "", args: Sequence[object] = ()) -> list[tuple]:
    """The `_HIT_COLUMNS` of these memories that pass the filters `where`."""
    return conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM documents d WHERE d.rowid IN {_IN}{where}", (_json_list(rowids), *args)
    ).fetchall()


def _hit(row: tuple, score: float, via: int | None = None) -> Hit:
    return Hit(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6], row[7], score, via=via)


def _replace_inactive(conn: sqlite3.Connection, hits: list[Hit], where: str, args: list[object]) -> list[Hit]:
    """Drop retired and archived hits, putting in their place the active memories they name
    as replacements ("Replaced by ruff (preferences/ruff-lint-and-format)"), at their score:
    a prompt worded like the old decision finds the one that holds now."""
    inactive = [h for h in hits if h.record_status != "active"]
    active = [h for h in hits if h.record_status == "active"]
    if not inactive:
        return active
    refs = {
        rowid: json.loads(raw)
        for rowid, raw in conn.execute(
            f"SELECT rowid, successors FROM documents WHERE successors IS NOT NULL"
            f" AND rowid IN {_IN}",
            (_json_list(h.rowid for h in inactive),),
        )
    }
    wanted = {ref for refs_ in refs.values() for ref in refs_}
    if not wanted:
        return active
    ids = [r for r in wanted if "/" not in r]
    paths = [r + ".json" for r in wanted if "/" in r]
    found = conn.execute(
        f"SELECT {_HIT_COLUMNS} FROM documents d WHERE d.record_status = 'active'"
        f" AND (d.id IN ({','.join('?' * len(ids)) or 'NULL'}) OR d.path IN ({','.join('?' * len(paths)) or 'NULL'})){where}",
        (*ids, *paths, *args),
    ).fetchall()
    by_ref = {}
    for row in found:
        by_ref.setdefault(row[2], row)
        by_ref.setdefault(row[1][: -len(".json")], row)
    present = {h.rowid: h for h in active}
    for old in inactive:
        for ref in refs.get(old.rowid, ()):
            row = by_ref.get(ref)
            if row is None:
                continue
            hit = present.get(row[0])
            if hit is None:
                present[row[0]] = hit = _hit(row, old.score, via=old.rowid)
                active.append(hit)
            elif hit.score < old.score:
                hit.score, hit.via = old.score, old.rowid
    active.sort(key=lambda h: -h.score)
    return active


def search(
    conn: sqlite3.Connection,
    text: str,
    *,
    limit: int = 10,
    params: Params | None = None,
    filters: Filters | None = None,
    now: datetime | None = None,
    plan: QueryPlan | None = None,
    related: bool = False,
) -> list[Hit]:
    """Ranked hits for free text: BM25 with column weights, category priority on ties.

    With `related` (on-demand search), memories tagged like the best matches gain score
    (`_tag_related`): a memory about the same topic in other words can still be found."""
    params = params or Params()
    filters = filters or Filters()
    plan = plan or plan_query(conn, text, params)
    match = plan.match
    if match is None or limit <= 0:
        return []
    where, args = _where(filters, now or datetime.now(timezone.utc))
    weights = (params.title_weight, params.tags_weight, params.body_weight, params.kind_weight)
    depth = limit * RELATED_DEPTH if related else limit  # word matches ranked
    want = depth + 5  # a few more, so that exact ties can be ordered by category
    fetch = 2 * want  # retired memories take places until they are replaced
    rows: list[tuple] = []
    if not (filters.categories or filters.tag or filters.retention_days):
        # Rank in FTS5 alone, then look the few winners up: joining every matching row
        # with `documents` before sorting costs more than the ranking itself.
        ranked = conn.execute(
            "SELECT rowid, bm25(fts, ?, ?, ?, ?) AS s FROM fts WHERE fts MATCH ? ORDER BY s LIMIT ?",
            (*weights, match, fetch),
        ).fetchall()
        score = dict(ranked)
        if score:
            rows = sorted((r + (score[r[0]],) for r in _documents(conn, score, where, args)), key=lambda r: r[8])
        if len(rows) < want and len(ranked) == fetch:
            rows = []  # too many filtered out: rank with the filter inside SQL
    if not rows:
        rows = conn.execute(
            f"SELECT {_HIT_COLUMNS}, bm25(fts, ?, ?, ?, ?) AS s FROM fts JOIN documents d ON d.rowid = fts.rowid"
            f" WHERE fts MATCH ?{where} ORDER BY s LIMIT ?",
            (*weights, match, *args, fetch),
        ).fetchall()
    hits = [_hit(r, -r[8]) for r in rows]
    if not filters.include_inactive:
        hits = _replace_inactive(conn, hits, where, args)
    hits.sort(key=_rank_key)
    hits = hits[:depth]
    if related and hits:
        hits = _tag_related(conn, hits, limit, params.related_weight, plan.n_docs, where, args, filters)
    return hits[:limit]


def _tag_related(
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
            (df,) = conn.execute("SELECT count(*) FROM (SELECT 1 FROM tag_index WHERE tag = ? LIMIT ?)", (tag, cap + 1)).fetchone()
            idf[tag] = math.log(n_docs / df) if 0 < df <= cap else 0.0
        mass = sum(idf[t] for t in tags)
        for tag in tags:
            if idf[tag] > 0:
                lend[tag] = lend.get(tag, 0.0) + weight * anchor.score * idf[tag] / mass
    if not lend:
        return hits
    by_rowid = {h.rowid: h for h in hits}
    boost = dict(_tag_boosts(conn, lend, f"t.doc IN {_IN}", [_json_list(by_rowid)]))
    for anchor in anchors:  # an anchor does not lend to itself: its share is weight x its score
        if anchor.rowid in boost:
            boost[anchor.rowid] -= weight * anchor.score
    # Memories found through tags alone score their boost: only the best `want` can place.
    status = "" if filters.include_inactive else " AND d.record_status = 'active'"
    for rowid, extra in boost.items():
        by_rowid[rowid].score += extra
    by_rowid.update((h.rowid, h) for h in _tag_only(conn, lend, by_rowid, want, status + where, args))
    return sorted(by_rowid.values(), key=_rank_key)


def _tag_only(
    conn: sqlite3.Connection, lend: dict[str, float], seen: dict[int, Hit], want: int, where: str, args: list[object]
) -> list[Hit]:
    """The `want` memories outside `seen` with the largest boost that pass the filters
    `where`, scored by their boost. Summed without the filters first (cheap); when those
    filter out too many, again with the filters inside SQL (as `search` ranks its word
    matches). One joined, filtered query instead measured 1.6x slower at 10k."""
    limit = len(seen) + 2 * want
    ranked = _tag_boosts(conn, lend, "1", [], limit=limit)
    fresh = {d: b for d, b in ranked if d not in seen}
    rows = _documents(conn, fresh, where, args)
    if len(rows) < want and len(ranked) == limit:
        unseen = f"d.rowid NOT IN {_IN}{where}"
        fresh = dict(_tag_boosts(conn, lend, unseen, [_json_list(seen), *args], limit=want, join=True))
        rows = _documents(conn, fresh)
    return [_hit(r, fresh[r[0]]) for r in rows]


def _tag_boosts(
    conn: sqlite3.Connection, lend: dict[str, float], condition: str, args: list[object],
    limit: int = -1, join: bool = False,
) -> list[tuple[int, float]]:
    """(memory, sum of what its tags lend), largest first, summed by SQLite."""
    values = ",".join(["(?,?)"] * len(lend))
    documents = " JOIN documents d ON d.rowid = t.doc" if join else ""
    return conn.execute(
        f"WITH w(tag, lend) AS (VALUES {values}) SELECT t.doc, sum(w.lend) AS b FROM w"
        f" JOIN tag_index t ON t.tag = w.tag{documents} WHERE {condition} GROUP BY t.doc ORDER BY b DESC, t.doc LIMIT ?",
        (*(x for item in lend.items() for x in item), *args, limit),
    ).fetchall()


def coverage(
    conn: sqlite3.Connection,
    plan: QueryPlan,
    hits: Sequence[Hit],
    top_terms: int | None = COVERAGE_TERMS,
    columns: tuple[str, ...] = (),
    absent: float | None = None,
) -> None:
    """Set each hit's share of the query's IDF mass that it matches: near 1 when the memory
    explains the prompt, near 0 when it only shares a generic word with it. Corpus-relative,
    unlike an absolute BM25 threshold.

    Terms no memory has weigh their full IDF (or `absent`); the mass is that of the
    `top_terms` heaviest terms (None: all), so a long, specific prompt is not diluted by
    its incidental words; `columns` limits what may match (the write path ignores the
    category words). Hits are re-matched term by term in a scratch FTS5 table: exact FTS5
    semantics at the cost of a few tiny queries."""
    weights = {t: plan.idf(t) if df or absent is None else absent for t, df in plan.df.items()}
    ranked = sorted(weights.values(), reverse=True)
    total = sum(ranked[:top_terms] if top_terms is not None else ranked)
    for hit in hits:
        hit.coverage = 0.0
    if total <= 0 or not hits:
        return
    # A replacement found through a retired memory is judged by the words that found it.
    by_rowid = {hit.via or hit.rowid: hit for hit in hits}
    rows = conn.execute(
        f"SELECT rowid, title, tags, body, kind FROM fts WHERE rowid IN {_IN}",
        (_json_list(by_rowid),),
    ).fetchall()
    scratch = _scratch()
    scratch.execute("DELETE FROM h")
    scratch.executemany("INSERT INTO h(rowid, title, tags, body, kind) VALUES (?,?,?,?,?)", rows)
    only = "{" + " ".join(columns) + "} : " if columns else ""
    got = {rowid: 0.0 for rowid in by_rowid}
    for term, df in plan.df.items():
        if df == 0:
            continue
        for (rowid,) in scratch.execute("SELECT rowid FROM h WHERE h MATCH ?", (f"{only}({plan.expressions[term]})",)):
            got[rowid] += weights[term]
    for rowid, hit in by_rowid.items():
        hit.coverage = min(got[rowid] / total, 1.0)


def matching_terms(plan: QueryPlan, text: str) -> list[Term]:
    """The planned terms that a piece of text contains (FTS5 matching, scratch table)."""
    scratch = _scratch()
    scratch.execute("DELETE FROM h")
    scratch.execute("INSERT INTO h(rowid, body) VALUES (1, ?)", (text,))
    return [
        term for term in plan.df
        if scratch.execute("SELECT 1 FROM h WHERE h MATCH ?", (plan.expressions[term],)).fetchone()
    ]


def select_for_injection(
    conn: sqlite3.Connection,
    plan: QueryPlan,
    hits: list[Hit],
    *,
    max_inject: int,
    relative_cutoff: float,
    min_coverage: float,
) -> list[Hit]:
    """The "slam dunk" subset: top-K active hits scoring within `relative_cutoff` of the
    best, each of which covers at least `min_coverage` of the prompt's IDF mass. Both rules
    are relative to the query and the store: no absolute BM25 threshold."""
    active = [h for h in hits if h.record_status == "active"]
    if not active or max_inject <= 0:
        return []
    best = active[0].score
    candidates = [h for h in active[:max_inject] if h.score >= relative_cutoff * best]
    coverage(conn, plan, candidates)
    return [h for h in candidates if h.coverage is not None and h.coverage >= min_coverage]


def wants_injection(prompt: str, cfg: Config) -> bool:
    """Is injection on, and is the prompt long enough to be worth a look?"""
    if not cfg["retrieval.enabled"] or cfg["retrieval.max_inject"] <= 0:
        return False
    return len(prompt.strip()) >= cfg["retrieval.min_prompt_chars"]


def needs_context(prompt: str, cfg: Config) -> bool:
    """Should earlier user turns enrich this prompt? Only short ones ("fix that again"):
    more terms would dilute a specific prompt."""
    if not cfg["retrieval.transcript_context.enabled"]:
        return False
    return len(query_terms(prompt)) <= cfg["retrieval.transcript_context.max_prompt_terms"]


def enrich(prompt: str, turns: Sequence[str], cfg: Config) -> str:
    """The prompt preceded by the last user turns, when it needs them."""
    if not turns or not needs_context(prompt, cfg):
        return prompt
    keep = list(turns)[-cfg["retrieval.transcript_context.max_turns"]:]
    return "\n".join([*keep, prompt])


def auto_inject(
    conn: sqlite3.Connection,
    prompt: str,
    cfg: Config,
    *,
    turns: Sequence[str] = (),
    now: datetime | None = None,
    params: Params | None = None,
) -> list[Hit]:
    """What the prompt hook injects: the whole selection policy, shared with the evaluation."""
    if not wants_injection(prompt, cfg):
        return []
    max_inject = cfg["retrieval.max_inject"]
    if cfg["retrieval.match_strategy"] == "title_tags":
        from .legacy import match

        descriptions = {c: cfg[f"categories.{c}.description"] for c in CATEGORY_PRIORITY}
        return match(conn, prompt, max_inject=max_inject, descriptions=descriptions, now=now)
    params = params or Params.from_config(cfg)
    text = enrich(prompt, turns, cfg)
    plan = plan_query(conn, text, params)
    hits = search(conn, text, limit=max(10, max_inject), params=params, filters=Filters.from_config(cfg), now=now, plan=plan)
    return select_for_injection(
        conn,
        plan,
        hits,
        max_inject=max_inject,
        relative_cutoff=cfg["retrieval.relative_cutoff"],
        min_coverage=cfg["retrieval.min_coverage"],
    )
