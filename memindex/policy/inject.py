"""The injection policy: which memories the prompt hook puts in front of the assistant.

Every adapter reaches it through one door (`policy.door`: the hooks, `memindex explain`,
the MCP server), and the evaluation calls `decide` itself, so all see the same policy:

- what is not about relevance holds under every strategy: a prompt that asks to resume
  earlier work ("where did we leave off?") gets the session summary on its topic, or the
  latest (`_resume`); a prompt that asks for one kind of memory ("is there a runbook for
  ...", `policy.prompt`) gets only that kind on its topic, or nothing; a memory this session
  was already shown is not shown again unless it changed (`_not_again`); captured session
  summaries answer only the resume rule (they restate the user's own prompts);
- the candidates (`candidate_pool`): the ten best word matches of the prompt's topic, the
  memories whose `related_files` name a file the prompt names or the session touched, and
  with the semantic worker the prompt's nearest memories by meaning;
- the default (`match_strategy: calibrated`, from CALIBRATED_MIN_DOCS memories on): the
  relevance model (`memindex.relevance`) decides among them, P(relevant) against its bar,
  at most `max_inject`;
- otherwise the hand-set rules (`by_rules`: `match_strategy: fts5_bm25`, and stores under
  CALIBRATED_MIN_DOCS memories): the top hits scoring at least `relative_cutoff` of the
  best, each covering `min_coverage` of the prompt's IDF mass and `min_relative_coverage`
  of the best pick's (half for a file-anchored memory); a question about the world ("how
  does X work?") only by a memory holding all its words; with the worker, a word match
  whose cosine trails the nearest memory's by `semantic.max_cosine_gap` dropped, and the
  nearest memory added when it stands `semantic.min_standout` above the next nine;
- the file at hand (`on_file`, the PreToolUse hook, off unless `retrieval.tool_anchors`):
  memories anchored to the file the assistant is about to open, when they still fit the
  user's latest prompt (half `min_coverage`) and this session was not shown them yet.
None of it is an absolute BM25 threshold.
"""

from __future__ import annotations

from ..config import Config
from ..defaults import CALIBRATED_MIN_DOCS, CAPTURE_FOLDER, CAPTURE_TAG, FILE_ANCHOR_MAX
from ..defaults import NEAREST_CANDIDATES, STANDOUT_PEERS
from ..retrieval.hits import Hit
from ..index import reads
from ..index.reads import file_key
from ..lean import sqlite3
from ..text.render import shown
from ..retrieval.query import Filters, Params, QueryPlan, coverage, latest, plan_query, search, where_clause
from .prompt import category_asked, enrich, files_named, intents_of, wants_injection, without_intent

TYPE_CHECKING = False  # annotations only: the hook never imports typing or datetime
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from .dense import Dense  # the worker's view: loaded only when the worker answers
    from .transcript import Session

class Decision:
    """What the policy did with one memory, for `memindex explain`."""

    __slots__ = ("path", "kept", "_rule", "score", "coverage", "probability")

    def __init__(self, path: str, kept: bool, rule: str | Callable[[], str], score: float, coverage: float | None,
                 probability: float | None = None) -> None:
        self.path, self.kept, self._rule, self.score, self.coverage = path, kept, rule, score, coverage
        self.probability = probability  # P(relevant), under the calibrated policy

    @property
    def rule(self) -> str:
        """Why: put into words only when asked (`explain`), not on every prompt the hook sees."""
        if callable(self._rule):
            self._rule = self._rule()
        return self._rule

    @property
    def brief(self) -> str:
        """Why, without wording it: the rule when it is already words, else the relevance
        model's probability (the use log's reason; `explain` gives the features)."""
        if not callable(self._rule):
            return self._rule
        return f"P(relevant) {self.probability:.2f}" if self.probability is not None else "relevance model"


class Outcome:
    """The memories to inject, and a Decision for every memory considered."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.decisions: list[Decision] = []
        self.intent: str | None = None
        self.dense: Dense | None = None  # the semantic worker's view, when it answered

    def note(self, hit: Hit, kept: bool, rule: str | Callable[[], str], probability: float | None = None) -> None:
        self.decisions.append(Decision(hit.path, kept, rule, hit.score, hit.coverage, probability))


def select_for_injection(
    conn: sqlite3.Connection,
    plan: QueryPlan,
    hits: list[Hit],
    cfg: Config,
    outcome: Outcome,
    anchored: set[int] = frozenset(),  # type: ignore[assignment]
    whole_topic: bool = False,
) -> list[Hit]:
    """Rules 1 and 2: the "slam dunk" subset of the word matches (`whole_topic`: each must
    match every one of the prompt's terms, rule 9, not just `min_coverage` of them)."""
    active = [h for h in hits if h.record_status == "active"]
    max_inject = cfg["retrieval.max_inject"]
    if not active or max_inject <= 0:
        return []
    ratio = cfg["retrieval.relative_cutoff"]
    cutoff = ratio * active[0].score
    candidates = [h for h in active[:max_inject] if h.score >= cutoff]
    candidates += [h for h in active if h.rowid in anchored and h not in candidates]  # rule 4
    for h in active[: max_inject * 2]:
        if h not in candidates:
            outcome.note(h, False, f"score below {ratio:g} of the best" if h.score < cutoff else f"beyond max_inject {max_inject}")
    coverage(conn, plan, candidates)
    floor = 1.0 if whole_topic else cfg["retrieval.min_coverage"]
    passing = [h for h in candidates if (h.coverage or 0.0) >= (floor / 2 if h.rowid in anchored else floor)]
    top = max((h.coverage or 0.0 for h in passing), default=0.0)
    relative = cfg["retrieval.min_relative_coverage"]
    kept = []
    for h in candidates:
        if h not in passing:
            need = "1: a general question needs all its words" if whole_topic else f"min_coverage {floor:g}"
            outcome.note(h, False, f"covers {h.coverage or 0:.2f} of the prompt, under {need}")
        elif (h.coverage or 0.0) < relative * top:
            outcome.note(h, False, f"covers {h.coverage:.2f}, under {relative:g} x the best pick's {top:.2f}")
        else:
            kept.append(h)
    return kept


def _resume(
    conn: sqlite3.Connection, prompt: str, turns: Sequence[str], cfg: Config, params: Params, now: datetime | None,
    own: str | None = None,
) -> list[Hit]:
    """Rule 3: the latest session summary on the prompt's topic (one of the closest word
    matches that covers the topic as a pick must), else the latest one; never the summary
    capture keeps of this very session (`own`, its id). Where capture writes to sessions-local/
    (git never brings a file there) the user's own captures come first: a repository's summary
    cannot stand in for the user's last session (issue 36; a date past the clock is none)."""
    local = CAPTURE_FOLDER if cfg["capture.enabled"] and cfg["capture.location"] == "local" else None

    def mine(h: Hit) -> bool:  # captured on this machine
        return local is not None and h.path.startswith(local + "/") and CAPTURE_TAG in h.tags

    text = enrich(without_intent(prompt, "resume"), turns, cfg)
    plan = plan_query(conn, text, params)
    filters = Filters.from_config(cfg, categories=("session_summary",))
    on_topic = search(conn, text, limit=cfg["retrieval.max_inject"] + 1, params=params, filters=filters, now=now, plan=plan)
    on_topic = [h for h in on_topic if h.id != own][: cfg["retrieval.max_inject"]]
    if on_topic:
        cutoff = cfg["retrieval.relative_cutoff"] * on_topic[0].score
        on_topic = [h for h in on_topic if h.score >= cutoff]
        coverage(conn, plan, on_topic)
        covering = [h for h in on_topic if (h.coverage or 0.0) >= cfg["retrieval.min_coverage"]]
        if covering:
            return [max(covering, key=lambda h: (mine(h), h.updated_at))]
    captured = [h for h in latest(conn, "session_summary", 3, captured_here=True) if mine(h)] if local else []
    return [h for h in captured + latest(conn, "session_summary", 2) if h.id != own][:1]


def _spelling(path: str) -> str:
    return path.replace("\\", "/").lstrip("./").lower()


def anchored_by(conn: sqlite3.Connection, files: Sequence[str]) -> dict[int, str]:
    """Memories whose related_files name one of these files -> that file: the same base
    name (`file_key`), and one path equal to or a suffix of the other (`src/api/auth.py`,
    `./api/auth.py`, an absolute path). A file named by more than FILE_ANCHOR_MAX memories
    anchors nothing (README.md, package.json)."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    for f in files:
        if key := file_key(f):
            by_key.setdefault(key, []).append((f, _spelling(f)))
    if not by_key:
        return {}
    by_file: dict[str, set[int]] = {}
    for related, doc in reads.by_related_file(conn, by_key):
        a = _spelling(related)
        for f, b in by_key.get(file_key(related), ()):
            if a == b or a.endswith("/" + b) or b.endswith("/" + a):
                by_file.setdefault(f, set()).add(doc)
    return {doc: f for f, docs in by_file.items() if len(docs) <= FILE_ANCHOR_MAX for doc in docs}


class Pool:
    """The word matches a prompt's policy chooses among, with what it knows about them:
    the query plan, the memories anchored by a file (rowid -> file), the kind of memory the
    prompt asks for (rule 8) and whether it is a question about the world (rule 9)."""

    __slots__ = ("hits", "plan", "anchored", "asked", "general", "intent", "filters", "extra")

    def __init__(self, hits: list[Hit], plan: QueryPlan, anchored: dict[int, str], asked: str | None,
                 intent: str | None, filters: Filters) -> None:
        self.hits, self.plan, self.anchored, self.asked, self.intent = hits, plan, anchored, asked, intent
        self.general = intent == "general"
        self.filters = filters
        self.extra: list[Hit] = []  # the semantic worker's nearest memories that no word found


def candidate_pool(
    conn: sqlite3.Connection,
    prompt: str,
    cfg: Config,
    *,
    turns: Sequence[str] = (),
    session: Session | None = None,
    now: datetime | None = None,
    params: Params | None = None,
    names: list[str] | None = None,
) -> Pool:
    """The ten best word matches for the prompt's topic (a kind request's words taken out,
    its kind only: rule 8), the memories anchored by the files it names or the session
    touched (rule 4), and the prompt's intent."""
    params = params or Params.from_config(cfg)
    if names is None:
        names = intents_of(prompt) if cfg["retrieval.intents"] else []
    files = [*files_named(prompt), *(session.files[-10:] if session else [])]
    anchored = anchored_by(conn, files) if cfg["retrieval.file_anchors"] else {}
    asked = category_asked(names)
    intent = asked or ("general" if "general" in names else None)
    topic = without_intent(prompt, intent) if intent else prompt
    # captured session summaries repeat the user's own prompts: found by resume, not words
    filters = Filters.from_config(cfg, categories=(asked,) if asked else (), without_tag=CAPTURE_TAG)
    text = enrich(topic, turns, cfg)
    plan = plan_query(conn, text, params)
    hits = search(conn, text, limit=max(10, cfg["retrieval.max_inject"]), params=params, filters=filters, now=now, plan=plan)
    return Pool(hits, plan, anchored, asked, intent, filters)


def with_nearest(conn: sqlite3.Connection, pool: Pool, dense: Dense | None, now: datetime | None,
                 k: int = NEAREST_CANDIDATES) -> Pool:
    """The pool plus the `k` memories nearest the prompt by meaning that no word found (the
    candidates rule 7 drew from), when the semantic worker answered."""
    if dense is None or pool.general:
        return pool
    have = {h.rowid for h in pool.hits}
    more = [rowid for rowid, _ in dense.top[:k] if rowid not in have]
    pool.extra = _active(conn, more, pool.filters, now) if more else []
    return pool


def decide(
    conn: sqlite3.Connection,
    prompt: str,
    cfg: Config,
    *,
    turns: Sequence[str] = (),
    session: Session | None = None,
    shown_prefix: str = "",
    now: datetime | None = None,
    params: Params | None = None,
    dense: Dense | Callable[[list[int]], Dense | None] | None = None,
    session_id: object = None,
) -> Outcome:
    """The whole policy, with the reason for each memory considered. `dense` is the
    semantic worker's view, or a callable that asks for it given the lexical candidates'
    rowids; with it, rule 6 (`by_meaning`) checks the word matches' meaning.
    `session_id`: this session's, whose own captured summary rule 3 never offers."""
    outcome = Outcome()
    if not wants_injection(prompt, cfg):
        return outcome
    max_inject = cfg["retrieval.max_inject"]
    params = params or Params.from_config(cfg)
    names = intents_of(prompt) if cfg["retrieval.intents"] else []
    if "resume" in names:
        outcome.intent = "resume"
        from ..store.ids import summary_id

        picks = _resume(conn, prompt, turns, cfg, params, now, summary_id(session_id))
        outcome.dense = _dense(conn, dense, picks)
        for h in picks:
            outcome.note(h, True, "the prompt asks to resume earlier work: the session summary")
    else:
        pool = candidate_pool(conn, prompt, cfg, turns=turns, session=session, now=now, params=params, names=names)
        outcome.intent = pool.intent
        outcome.dense = _dense(conn, dense, pool.hits)
        if cfg["retrieval.match_strategy"] == "calibrated" and pool.plan.n_docs >= CALIBRATED_MIN_DOCS:
            from ..relevance import choose

            picks = choose(conn, with_nearest(conn, pool, outcome.dense, now), cfg, now, outcome)
        else:
            picks = by_rules(conn, pool, cfg, now, outcome)
    outcome.hits = _not_again(conn, picks[:max_inject], session, shown_prefix, cfg, outcome)
    return outcome


def by_rules(conn: sqlite3.Connection, pool: Pool, cfg: Config, now: datetime | None, outcome: Outcome) -> list[Hit]:
    """Rules 1, 2, 4, 6 and 7 with their hand-set thresholds (`match_strategy: fts5_bm25`)."""
    anchored, general = pool.anchored, pool.general
    picks = select_for_injection(conn, pool.plan, pool.hits, cfg, outcome, set(anchored), general)
    if outcome.dense is not None:
        picks = by_meaning(picks, outcome.dense, cfg["semantic.max_cosine_gap"], outcome)
    for h in picks:
        why = f" (its related_files name {anchored[h.rowid]})" if h.rowid in anchored else ""
        outcome.note(h, True, "a clear word match" + why)
    if outcome.dense is not None and len(picks) < cfg["retrieval.max_inject"] and not general:
        picks += standout(conn, picks, outcome.dense, pool.filters, cfg, now, outcome)
    return picks


def by_meaning(picks: list[Hit], dense: Dense, max_gap: float, outcome: Outcome) -> list[Hit]:
    """Rule 6 (with the semantic worker): a word match whose cosine to the prompt trails the
    prompt's nearest memory by more than `max_gap` shares words with the prompt, not its
    meaning ("big" invoices -> "plan before large refactors"). Picks without a vector stay."""
    if not dense.top:
        return picks
    nearest = dense.top[0][1]
    kept = []
    for h in picks:
        cos = dense.cos.get(h.rowid)
        if cos is not None and cos < nearest - max_gap:
            outcome.note(h, False, f"cosine {cos:.2f} trails the nearest memory's {nearest:.2f} by more than "
                                   f"semantic.max_cosine_gap {max_gap:g}")
        else:
            kept.append(h)
    return kept


def standout(
    conn: sqlite3.Connection, picks: list[Hit], dense: Dense, filters: Filters, cfg: Config, now: datetime | None,
    outcome: Outcome,
) -> list[Hit]:
    """Rule 7 (with the semantic worker): the prompt's nearest memory, when its cosine stands
    at least `semantic.min_standout` above the mean of the next STANDOUT_PEERS, and it passes
    the filters the word matches passed (retention cut-offs)."""
    if len(dense.top) < 2:
        return []
    (rowid, best), peers = dense.top[0], [c for _, c in dense.top[1 : 1 + STANDOUT_PEERS]]
    margin, floor = best - sum(peers) / len(peers), cfg["semantic.min_standout"]
    if margin < floor or any(h.rowid == rowid for h in picks):
        return []
    found = _active(conn, [rowid], filters, now, best)
    if not found:
        return []
    hit = found[0]
    outcome.note(hit, True, f"the model singles it out: cosine {best:.2f}, {margin:.2f} above the mean of the "
                            f"next {len(peers)} (semantic.min_standout {floor:g})")
    return [hit]


def on_file(
    conn: sqlite3.Connection,
    file: str,
    prompt: str,
    cfg: Config,
    *,
    turns: Sequence[str] = (),
    session: Session | None = None,
    shown_prefix: str = "",
    now: datetime | None = None,
    params: Params | None = None,
) -> Outcome:
    """Rule 10: the memories anchored to `file`, which the assistant is about to read or
    edit, that still fit the user's latest `prompt` (earlier `turns` enrich it as for the
    prompt hook) and that this session has not been shown."""
    outcome = Outcome()
    if not prompt.strip() or not cfg["retrieval.file_anchors"] or cfg["retrieval.max_inject"] <= 0:
        return outcome
    anchored = anchored_by(conn, [file])
    if not anchored:
        return outcome
    hits = _active(conn, list(anchored), Filters.from_config(cfg, without_tag=CAPTURE_TAG), now)
    plan = plan_query(conn, enrich(prompt, turns, cfg), params or Params.from_config(cfg))
    coverage(conn, plan, hits)
    floor = cfg["retrieval.min_coverage"] / 2
    picks = []
    for h in sorted(hits, key=lambda h: -(h.coverage or 0.0)):
        if (h.coverage or 0.0) < floor:
            outcome.note(h, False, f"anchored to {anchored[h.rowid]}, but covers {h.coverage or 0:.2f} of the "
                                   f"latest prompt, under half min_coverage ({floor:g})")
        else:
            picks.append(h)
            outcome.note(h, True, f"its related_files name {anchored[h.rowid]}, which the assistant is about to open")
    outcome.hits = _not_again(conn, picks[: cfg["retrieval.max_inject"]], session, shown_prefix, cfg, outcome)
    return outcome


def _active(conn: sqlite3.Connection, rowids: list[int], filters: Filters, now: datetime | None,
            score: float = 0.0) -> list[Hit]:
    """These memories as hits, the active ones that pass `filters` (retention cut-offs)."""
    where, args = where_clause(filters, now)
    return [Hit.from_row(row, score) for row in reads.documents(conn, rowids, where + " AND d.record_status = 'active'", args)]


def worker_view(pending) -> Callable[[list[int]], Dense | None]:
    """The policy's `dense` argument from a question already sent to the semantic worker
    (`semantic.client.begin`): its answer about the given lexical candidates."""

    def collect(rowids: list[int]) -> Dense | None:
        from .dense import Dense

        reply = pending.finish(rowids)
        return None if reply is None else Dense.from_reply(reply)

    return collect


def _dense(
    conn: sqlite3.Connection, dense: Dense | Callable[[list[int]], Dense | None] | None, candidates: Sequence[Hit]
) -> Dense | None:
    """The worker's view, if it speaks of the rows this connection reads: a reply from a
    worker whose vectors version differs (a rebuild renumbered the rows since it loaded)
    is dropped, and the word matches decide alone."""
    if dense is None:
        return None
    from .dense import Dense

    if not isinstance(dense, Dense):
        dense = dense([h.rowid for h in candidates])
    if dense is not None and dense.version is not None and dense.version != reads.vectors_version(conn):
        return None
    return dense


def _not_again(
    conn: sqlite3.Connection, picks: list[Hit], session: Session | None, prefix: str, cfg: Config, outcome: Outcome
) -> list[Hit]:
    """Rule 5: drop memories this session was already shown, unless they changed since."""
    if not session or not session.injected or not cfg["retrieval.skip_injected"]:
        return picks
    mtimes = reads.changed_since(conn, (h.rowid for h in picks))
    kept = []
    for h in picks:
        when = session.injected.get(shown(prefix, h.path) or "")
        if when is not None and mtimes.get(h.rowid, 0) / 1e9 <= when:
            outcome.note(h, False, "already injected earlier in this session (unchanged since)")
        else:
            kept.append(h)
    return kept


def auto_inject(conn: sqlite3.Connection, prompt: str, cfg: Config, **options: object) -> list[Hit]:
    """What the prompt hook injects: `decide(...).hits` (same options)."""
    return decide(conn, prompt, cfg, **options).hits  # type: ignore[arg-type]
