"""The injection policy: which memories the prompt hook puts in front of the assistant.

It sits above the search engine (`query`) and the old matcher (`legacy`): the hook and the
evaluation call `auto_inject`, so both measure the same rules.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from .config import Config
from .defaults import CATEGORY_PRIORITY
from .hits import Hit
from .legacy import match
from .query import Filters, Params, QueryPlan, coverage, plan_query, search
from .text import query_terms


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
