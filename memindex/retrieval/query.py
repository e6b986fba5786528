"""The search engine shared by the hook, the CLI and the evaluation: terms -> FTS5 -> hits.

User text never reaches FTS5 raw: every term is a double-quoted phrase of word characters
(`"user id"`), so quotes, parentheses, `-`, `:`, `*`, `^` and AND/OR/NOT/NEAR are inert.
"""

from __future__ import annotations

import math

from ..config import DEFAULTS, Config
from ..defaults import (
    CATEGORIES,
    COVERAGE_TERMS,
    DF_FLOOR,
    DF_SAMPLE,
    DOC_FETCH_FACTOR,
    FORMS_WEIGHT,
    KIND_WEIGHT,
    MAX_DF_RATIO,
    MAX_POSTINGS,
    MAX_QUERY_TERMS,
    PREFIX_MIN_LEN,
    PREFIX_MODE,
    RELATED_DEPTH,
    RELATED_WEIGHT,
)
from .hits import Hit, collapse, rank_key
from ..index import reads
from ..index.reads import Scratch
from ..lean import sqlite3
from ..text.words import Term, camel_alternatives, has_cjk, query_terms, valid_unicode

TYPE_CHECKING = False  # annotations only: the hook never imports typing
if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime


# The Params fields that are settings: their defaults are the settings table's.
SETTING_FIELDS = {
    "title_weight": "retrieval.column_weights.title", "tags_weight": "retrieval.column_weights.tags",
    "body_weight": "retrieval.column_weights.body", "questions_weight": "retrieval.column_weights.questions",
}


class Params:
    """Ranking knobs: the column weights are settings (SETTING_FIELDS), the rest constants."""

    __slots__ = (
        "title_weight", "tags_weight", "body_weight", "questions_weight", "prefix_min_len", "prefix_mode",
        "max_terms", "max_postings", "max_df_ratio", "kind_weight", "related_weight", "df_floor",
    )

    def __init__(
        self,
        title_weight: float = DEFAULTS[SETTING_FIELDS["title_weight"]],  # type: ignore[assignment]
        tags_weight: float = DEFAULTS[SETTING_FIELDS["tags_weight"]],  # type: ignore[assignment]
        body_weight: float = DEFAULTS[SETTING_FIELDS["body_weight"]],  # type: ignore[assignment]
        questions_weight: float = DEFAULTS[SETTING_FIELDS["questions_weight"]],  # type: ignore[assignment]
        prefix_min_len: int = PREFIX_MIN_LEN,
        prefix_mode: str = PREFIX_MODE,  # "none" | "prefix" | "both"
        max_terms: int = MAX_QUERY_TERMS,
        max_postings: int = MAX_POSTINGS,
        max_df_ratio: float = MAX_DF_RATIO,
        kind_weight: float = KIND_WEIGHT,
        related_weight: float = RELATED_WEIGHT,
        df_floor: int = DF_FLOOR,
    ) -> None:
        self.title_weight, self.tags_weight, self.body_weight = title_weight, tags_weight, body_weight
        self.questions_weight = questions_weight
        self.kind_weight, self.related_weight = kind_weight, related_weight
        self.prefix_min_len, self.prefix_mode = prefix_min_len, prefix_mode
        self.max_terms, self.max_postings, self.max_df_ratio = max_terms, max_postings, max_df_ratio
        self.df_floor = df_floor

    def replace(self, **changes: object) -> "Params":
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return Params(**values)  # type: ignore[arg-type]

    @classmethod
    def from_config(cls, cfg: Config) -> "Params":
        return cls(**{field: cfg[key] for field, key in SETTING_FIELDS.items()})  # type: ignore[arg-type]


class QueryPlan:
    """The terms of one query with their document frequencies, and what FTS5 is asked."""

    def __init__(self, terms: list[Term], n_docs: int) -> None:
        self.terms = terms
        self.n_docs = n_docs
        self.df: dict[Term, int] = {}
        self.used: list[Term] = []
        self.expressions: dict[Term, str] = {}
        # Text without spaces (memindex/text/cjk.py): memories with a `fts_cjk` row, each term's
        # matches there (included in `df`), the query's CJK runs.
        self.spaceless = 0
        self.side_df: dict[Term, int] = {}
        self.runs: list[str] = []
        self.documents = False  # does the index hold documents' sections (several rows a result)?

    def idf(self, term: Term) -> float:
        """Lucene's always-positive IDF: meaningful even in a store of three memories."""
        n, df = self.n_docs, self.df.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    @property
    def fused(self) -> bool:
        """Does a queried term match in `fts_cjk` (ranked by `cjk_search`)?"""
        return any(t in self.side_df for t in self.used)

    @property
    def match(self) -> str | None:
        parts = [self.expressions[t] for t in self.used]
        return " OR ".join(parts) if parts else None


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def plan_query(conn: sqlite3.Connection, text: str, params: Params, n_docs: int | None = None,
               counts: dict | None = None) -> QueryPlan:
    """Terms, their document frequencies, and the bounded set actually queried (`counts`:
    a frequency cache shared by many plans on one connection: the review's store-wide pass)."""
    terms = query_terms(text)[: params.max_terms * 2]
    n_docs = reads.doc_count(conn) if n_docs is None else n_docs
    plan = QueryPlan(terms, n_docs)
    # A term in more than `max_df_ratio` of the memories, or beyond the posting budget on
    # its own, is common: its IDF is small and its postings many. Counting stops there,
    # so planning costs at most `cap` rows a term however large the store.
    # In a small store nothing is costly: a term is dropped as common only past `df_floor`
    # memories too (in a store of 25, "a quarter" is 6 memories, and dropping the terms of
    # 6 memories starves recall where BM25's IDF already weighs them little).
    cap = min(max(params.df_floor, int(n_docs * params.max_df_ratio)), params.max_postings) + 1
    top_rowid = reads.top_rowid(conn)
    plan.spaceless = reads.spaceless_count(conn)  # 0 in a store without CJK text
    plan.documents = reads.has_documents(conn)
    camel = camel_alternatives(text) if not text.islower() else {}
    for term in terms:
        quoted = _quote(term.text)
        bigram = has_cjk(term.text)  # two CJK characters, a token of fts_cjk only
        if bigram or term.is_phrase or params.prefix_mode == "none" or len(term.parts[0]) < params.prefix_min_len:
            expression = quoted
        elif params.prefix_mode == "both":
            expression = f"{quoted} OR {quoted}*"
        else:
            # Prefix matching (auth -> authentication), as the old matcher did; its IDF is
            # that of all the words it reaches, so a broad prefix weighs little.
            expression = quoted + "*"
        if term.text in camel:  # KubeQuotaExceeded: also "kube quota exceeded" (text/identifiers.py)
            expression = f"{expression} OR {_quote(' '.join(camel[term.text]))}"
        plan.expressions[term] = expression
        df = 0 if bigram else _count(conn, quoted, cap, top_rowid, cache=counts)
        if expression != quoted and df < cap:
            # A prefix reaches at least the word's own memories: a common word is common
            # as a prefix too, and its (costly, merged) prefix count is skipped.
            df = _count(conn, expression, cap, top_rowid, cache=counts)
        if plan.spaceless and df < cap:
            side = _count(conn, expression, cap, top_rowid, spaceless=True, cache=counts)
            if side:
                plan.side_df[term] = side
                df += side
        if bigram and not plan.runs:
            from ..text import cjk

            plan.runs = cjk.runs(text[:20_000])  # as much as query_terms reads
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


def _count(conn: sqlite3.Connection, expression: str, cap: int, top_rowid: int, spaceless: bool = False,
           cache: dict | None = None) -> int:
    """Memories matching an FTS5 expression: exact up to DF_SAMPLE (`"user id"` counts
    adjacent pairs, `"auth"*` every word it starts), estimated above it from where the
    DF_SAMPLE-th match falls (sync inserts in shuffled order, so rowids are an unbiased
    sample), and never counted past `cap`. Planning costs at most DF_SAMPLE rows a term."""
    if cache is not None:
        key = (expression, cap, spaceless)
        return cache[key] if key in cache else cache.setdefault(key, _count(conn, expression, cap, top_rowid, spaceless))
    sample = min(cap, DF_SAMPLE)
    found, last = reads.sample_matches(conn, expression, sample, spaceless)
    if found < sample or sample == cap:
        return found
    if spaceless:  # the CJK memories are some of the rowids: how many of them the sample spans
        top_rowid, last = reads.spaceless_count(conn), reads.spaceless_count(conn, upto=last)
    return min(cap, max(found, round(found * top_rowid / max(last, 1))))


class Filters:
    """Which memories a search may return."""

    __slots__ = ("categories", "tag", "include_inactive", "retention_days", "without_tag")

    def __init__(
        self,
        categories: tuple[str, ...] = (),
        tag: str | None = None,
        include_inactive: bool = False,
        retention_days: tuple[tuple[str, int], ...] = (),  # (category, days) with days > 0
        without_tag: str | None = None,  # memories with this tag are left out
    ) -> None:
        self.categories, self.tag, self.without_tag = categories, tag, without_tag
        self.include_inactive, self.retention_days = include_inactive, retention_days

    @classmethod
    def from_config(cls, cfg: Config, **kw: object) -> "Filters":
        keep = tuple((c, days) for c in CATEGORIES if (days := cfg.retention_days(c)) > 0)
        return cls(retention_days=keep, **kw)  # type: ignore[arg-type]


def _now() -> "datetime":
    from datetime import datetime, timezone  # only here: the hook's imports stay lean

    return datetime.now(timezone.utc)


def where_clause(filters: Filters, now: datetime | None) -> tuple[str, list[object]]:
    """SQL for every filter but the record status (retired memories are needed to find
    their replacements; `search` drops them after)."""
    tag_key = "," + valid_unicode(filters.tag).lower().replace(",", " ") + "," if filters.tag else None
    cutoffs = []
    if filters.retention_days:  # the clock (and datetime) only where a cut-off needs it
        from datetime import timedelta

        now = now or _now()
        cutoffs = [
            (category, (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S"))
            for category, days in filters.retention_days
        ]
    without = "," + filters.without_tag + "," if filters.without_tag else None
    return reads.filter_sql(filters.categories, tag_key, cutoffs, without)


def replace_inactive(conn: sqlite3.Connection, hits: list[Hit], where: str, args: list[object]) -> list[Hit]:
    """Drop retired and archived hits, putting in their place the active memories they name
    as replacements ("Replaced by ruff (preferences/ruff-lint-and-format)"), at their score:
    a prompt worded like the old decision finds the one that holds now. A document that no
    longer holds and names no successor (a deprecated or rejected ADR) stays, as itself:
    it is the project's only record of what became of that decision."""
    inactive = [h for h in hits if h.record_status != "active"]
    active = [h for h in hits if h.record_status == "active"]
    if not inactive:
        return active
    refs = reads.successors(conn, (h.rowid for h in inactive))
    kept = [h for h in inactive if h.path.startswith("@") and not refs.get(h.rowid)]
    if kept:
        active = sorted(active + kept, key=lambda h: -h.score)
    wanted = {ref for refs_ in refs.values() for ref in refs_}
    if not wanted:
        return active
    ids = [r for r in wanted if "/" not in r]
    paths = [r if r.startswith("@") else r + ".json" for r in wanted if "/" in r]
    found = reads.active_by_ref(conn, ids, paths, where, args)
    by_ref = {}
    for row in found:
        if row[1].startswith("@"):  # a document's section, named by its path
            by_ref.setdefault(row[1], row)
            continue
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
                present[row[0]] = hit = Hit.from_row(row, old.score, via=old.rowid)
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
    where, args = where_clause(filters, now)
    weights = (params.title_weight, params.tags_weight, params.body_weight, params.kind_weight, params.questions_weight,
               FORMS_WEIGHT)
    depth = limit * RELATED_DEPTH if related else limit  # word matches ranked
    want = depth + 5  # a few more, so that exact ties can be ordered by category
    fetch = 2 * want  # retired memories take places until they are replaced
    if plan.documents:  # a document's sections take places until they are collapsed into one
        fetch *= DOC_FETCH_FACTOR
    rows: list[tuple] = []
    if plan.fused:  # a term matches text without spaces: both tables, one BM25 scale
        from . import cjk_search  # only for stores and prompts with CJK text

        rows = cjk_search.rank(conn, plan, weights, where, args, fetch)
    elif not (filters.categories or filters.tag or filters.retention_days):
        # Rank in FTS5 alone, then look the few winners up: joining every matching row
        # with `documents` before sorting costs more than the ranking itself.
        ranked = reads.rank(conn, match, weights, fetch)
        score = dict(ranked)
        if score:
            rows = sorted((r + (score[r[0]],) for r in reads.documents(conn, score, where, args)), key=lambda r: r[8])
        if len(rows) < want and len(ranked) == fetch:
            rows = []  # too many filtered out: rank with the filter inside SQL
    if not rows and not plan.fused:
        rows = reads.rank_filtered(conn, match, weights, where, args, fetch)
    hits = [Hit.from_row(r, -r[8]) for r in rows]
    if not filters.include_inactive:
        hits = replace_inactive(conn, hits, where, args)
    hits.sort(key=rank_key)
    if plan.documents:
        hits = collapse(hits)
    hits = hits[:depth]
    if related and hits:
        from .related import tag_related

        hits = tag_related(conn, hits, limit, params.related_weight, plan.n_docs, where, args, filters)
    return hits[:limit]


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
    semantics at the cost of a few tiny queries (one column set: a plain match a term, which
    is quicker here than every column at once, the relevance model's way)."""
    weights, total = term_weights(plan, absent, top_terms)
    for hit in hits:
        hit.coverage = 0.0
    if total <= 0 or not hits:
        return
    # A replacement found through a retired memory is judged by the words that found it.
    by_rowid = {hit.via or hit.rowid: hit for hit in hits}
    got = {rowid: 0.0 for rowid in by_rowid}
    Scratch.load_from(conn, by_rowid)
    if plan.side_df:
        Scratch.load_from(conn, by_rowid, spaceless=True)
    for term, df in plan.df.items():
        if df == 0:
            continue
        found = Scratch.matching(plan.expressions[term], columns) if df > plan.side_df.get(term, 0) else []
        if term in plan.side_df:
            found = {*found, *Scratch.matching(plan.expressions[term], columns, spaceless=True)}
        for rowid in found:
            got[rowid] += weights[term]
    for rowid, hit in by_rowid.items():
        hit.coverage = min(got[rowid] / total, 1.0)


def term_weights(plan: QueryPlan, absent: float | None, top_terms: int | None) -> tuple[dict[Term, float], float]:
    """Each term's weight in a coverage (its IDF, or `absent` for a term no memory has) and
    the mass a coverage is a share of (`coverage`; the relevance model's `_coverages`)."""
    weights = {t: plan.idf(t) if df or absent is None else absent for t, df in plan.df.items()}
    values = list(weights.values())
    if plan.runs:  # bigrams: seams between words weigh nothing, unknown words do
        from . import cjk_search

        values = cjk_search.coverage_mass(plan, weights, plan.idf(Term(())) if absent is None else absent)
    ranked = sorted(values, reverse=True)
    return weights, sum(ranked[:top_terms] if top_terms is not None else ranked)


def latest(conn: sqlite3.Connection, category: str, limit: int, captured_here: bool = False) -> list[Hit]:
    """The most recently updated active memories of a category ("where did we leave off"):
    `captured_here`, the session summaries captured on this machine only."""
    rows = reads.latest_captured(conn, limit) if captured_here else reads.latest(conn, category, limit)
    return [Hit.from_row(row, 0.0) for row in rows]
