"""Retrieval quality on a judged memory set: the old keyword matcher against the FTS5 engine
and its variants, side by side (scripts/eval_memory.py is the command).

Auto-inject (what the prompt hook injects): precision of injected memories, recall of the
grade-2 ("must inject") memories, false-inject rate on negative prompts, silent rate.
On-demand search (top 10): Recall@10, MRR, nDCG@10 (ir-measures). Per query kind on request.

A set is a folder holding `.claude/memory/<folder>/<id>.json` and `queries.json`
(evalsets/harbor is the committed one; its README describes the format).
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from ir_measures import RR, R, nDCG

from memindex import index
from memindex.config import Config, parse_config
from memindex.policy.inject import auto_inject
from memindex.policy.prompt import enrich
from memindex_dev.evaluation.legacy import match as legacy_match
from memindex.retrieval.query import Filters, Params, search
from memindex.text.render import memory_context
from memindex.index.sync import sync
from memindex.policy.transcript import recent_user_turns

from .metrics import evaluate, table
from .sets import add_questions, copy_store

NOW = datetime(2026, 11, 22, tzinfo=timezone.utc)  # fixed: recency and retention are reproducible
SEARCH = [R @ 10, R(rel=2) @ 10, RR, nDCG @ 10]
# The semantic channel, as `memindex search` runs it with `semantic.enabled` (the real model).
RULES_NAME = "fts5_bm25 (the hand-set rules)"
CALIBRATED_NAME = "calibrated (product default)"
SEMANTIC_NAME = "fts5_bm25 + semantic (the rules; search as memindex search)"
CALIBRATED_SEMANTIC_NAME = "calibrated + semantic (product default)"
RULES = {"retrieval": {"match_strategy": "fts5_bm25"}}
CALIBRATED = {"retrieval": {"match_strategy": "calibrated"}}
RRF_NAME = "fts5_bm25 + semantic, search fused by RRF k=60 (baseline)"
SEMANTIC_CFG = parse_config({"semantic": {"enabled": True}})


def write_transcript(path: Path, turns: list[str]) -> None:
    """A Claude Code style JSONL transcript: each user turn followed by tool noise."""
    lines = []
    for i, turn in enumerate(turns):
        lines.append({"type": "user", "message": {"role": "user", "content": turn}, "uuid": f"u{i}"})
        lines.append({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Looking into it."},
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "pytest -q"}}]}})
        lines.append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 3000}]}})
        lines.append({"type": "user", "isMeta": True, "message": {"role": "user", "content": "<system-reminder>meta</system-reminder>"}})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")


def earlier_turns(path: Path, query: dict) -> list[str]:
    """A query's earlier turns written as a transcript at `path`, and read back as the hook
    reads them (its recent user turns, the prompt itself skipped)."""
    write_transcript(path, query.get("transcript") or [])
    return recent_user_turns(str(path), max_turns=3, tail_bytes=4096, skip=query["query"])


class Strategy:
    """One way of choosing memories: a name, a config, and whether it is the old matcher."""

    def __init__(self, name: str, config: dict | None = None, params: dict | None = None,
                 legacy_inject: int | None = None, min_results: int = 0, related: bool = True,
                 semantic: bool = False, fusion: str = "minmax", now: datetime | None = NOW):
        self.name = name
        self.now = now  # the clock recency is scored at: NOW (reproducible), or None for the wall clock as the hook has it
        self.related = related  # on-demand search as `memindex search` runs it
        self.min_results = min_results
        # the hand-set rules unless the config names a strategy: the variants below vary the rules' settings
        config = dict(config or {})
        config["retrieval"] = {**RULES["retrieval"], **(config.get("retrieval") or {})}
        self.cfg = parse_config(config)
        self.params = Params.from_config(self.cfg).replace(**(params or {}))
        self.legacy_inject = legacy_inject
        # with the real model: search fuses BM25 with its dense ranking, and the
        # injection policy gets the worker's view of the prompt (rule 6)
        self.semantic = semantic
        self.fusion = fusion  # how search fuses the channels: "minmax" (the product) or "rrf" (the baseline)
        self._dense: tuple[object, object] | None = None  # (connection, its in-process dense channel)

    def inject(self, conn, prompt: str, turns: list[str]) -> list[str]:
        return [h.path for h in self.inject_hits(conn, prompt, turns)]

    def inject_hits(self, conn, prompt: str, turns: list[str]) -> list:
        if self.legacy_inject is not None:
            if len(prompt.strip()) < 10:
                return []
            return legacy_match(conn, prompt, max_inject=self.legacy_inject, now=self.now)
        dense = self.worker_view(conn, prompt, turns) if self.semantic else None
        got = auto_inject(conn, prompt, self.cfg, turns=turns, now=self.now, params=self.params, dense=dense)
        if got and len(got) < self.min_results:  # the reference plan's "at least top 2" rule
            seen = {h.path for h in got}
            ranked = search(conn, enrich(prompt, turns, self.cfg), limit=10, params=self.params,
                            filters=Filters.from_config(self.cfg), now=self.now, related=self.related)
            got += [h for h in ranked if h.path not in seen][: self.min_results - len(got)]
        return got

    def rank(self, conn, prompt: str, turns: list[str]) -> list[tuple[str, float]]:
        if self.legacy_inject is not None:
            return [(h.path, h.score) for h in legacy_match(conn, prompt, max_inject=10, now=self.now)]
        text = enrich(prompt, turns, self.cfg)
        if self.semantic:
            from memindex.semantic.fusion import fused_search

            hits, _ = fused_search(conn, text, self.dense(conn), limit=10, params=self.params,
                                   filters=Filters.from_config(self.cfg), now=self.now, method=self.fusion)
            return [(h.path, h.score) for h in hits]
        hits = search(conn, text, limit=10, params=self.params, filters=Filters.from_config(self.cfg), now=self.now,
                      related=self.related)
        return [(h.path, h.score) for h in hits]

    def worker_view(self, conn, prompt: str, turns: list[str]):
        """What the resident worker would tell the hook (the same model, in this process)."""
        from memindex.defaults import DENSE_K
        from memindex.policy.dense import Dense
        from memindex.policy.prompt import dense_text

        channel, text = self.dense(conn), dense_text(prompt, turns, self.cfg)
        return lambda rowids: Dense(channel.cosines(text, rowids), channel(text, None, False, DENSE_K) or [])

    def dense(self, conn):
        """The in-process dense channel of this store (its matrix and query vectors cached)."""
        if self._dense is None or self._dense[0] is not conn:
            from memindex.semantic.fusion import InProcess
            from memindex.semantic.vectors import get_embedder

            self._dense = (conn, InProcess(conn, get_embedder(str(SEMANTIC_CFG["semantic.model"]))))
        return self._dense[1]


def strategies(variants: bool, semantic: bool = False) -> list[Strategy]:
    out = [
        Strategy("old matcher (baseline, max_inject 5)", legacy_inject=5),
        Strategy("old matcher (max_inject 3)", legacy_inject=3),
        Strategy(RULES_NAME),
        Strategy(CALIBRATED_NAME, CALIBRATED),
    ]
    if semantic:
        out.append(Strategy(SEMANTIC_NAME, semantic=True))
        out.append(Strategy(CALIBRATED_SEMANTIC_NAME, CALIBRATED, semantic=True))
        out.append(Strategy(RRF_NAME, semantic=True, fusion="rrf"))
        if variants:
            out.append(Strategy(SEMANTIC_NAME + ", no cosine gap", {"semantic": {"max_cosine_gap": 2.0}}, semantic=True))
    if variants:
        out += [
            Strategy("fts5: no coverage gate", {"retrieval": {"min_coverage": 0.0}}),
            Strategy("fts5: coverage 0.3", {"retrieval": {"min_coverage": 0.3}}),
            Strategy("fts5: coverage 0.5", {"retrieval": {"min_coverage": 0.5}}),
            Strategy("fts5: relative cutoff 0.5", {"retrieval": {"relative_cutoff": 0.5}}),
            Strategy("fts5: relative cutoff 0.9", {"retrieval": {"relative_cutoff": 0.9}}),
            Strategy("fts5: min 2 results (if any qualifies)", min_results=2),
            Strategy("fts5: max_inject 2", {"retrieval": {"max_inject": 2}}),
            Strategy("fts5: max_inject 5", {"retrieval": {"max_inject": 5}}),
            Strategy("fts5: no transcript context", {"retrieval": {"transcript_context": {"enabled": False}}}),
            Strategy("fts5: prefix none", params={"prefix_mode": "none"}),
            Strategy("fts5: no category words", params={"kind_weight": 0.0}),
            Strategy("fts5: search without tag-related memories", related=False),
            Strategy("fts5: tag-related weight 0.25", params={"related_weight": 0.25}),
            Strategy("fts5: tag-related weight 1.0", params={"related_weight": 1.0}),
            Strategy("fts5: category words x2", params={"kind_weight": 2.0}),
            Strategy("fts5: transcript if <= 3 terms (reference plan)", {"retrieval": {"transcript_context": {"max_prompt_terms": 3}}}),
            Strategy("fts5: transcript if <= 2 terms", {"retrieval": {"transcript_context": {"max_prompt_terms": 2}}}),
            Strategy("fts5: prefix exact + w*", params={"prefix_mode": "both"}),
            Strategy("fts5: max df ratio 0.5", params={"max_df_ratio": 0.5}),
            Strategy("fts5: posting budget 1,000", params={"max_postings": 1000}),
            Strategy("fts5: weights 1/1/1", {"retrieval": {"column_weights": {"title": 1.0, "tags": 1.0, "body": 1.0}}}),
            Strategy("fts5: weights 2/2/1", {"retrieval": {"column_weights": {"title": 2.0, "tags": 2.0, "body": 1.0}}}),
            Strategy("fts5: weights 10/5/1", {"retrieval": {"column_weights": {"title": 10.0, "tags": 5.0, "body": 1.0}}}),
        ]
    return out


def run(conn, queries: list[dict], strategy: Strategy, tmp: Path) -> dict[str, dict]:
    """Per query: injected paths and the top-10 ranking."""
    results = {}
    for q in queries:
        turns = earlier_turns(tmp / f"{q['id']}.jsonl", q) if q.get("transcript") else []
        hits = strategy.inject_hits(conn, q["query"], turns)
        results[q["id"]] = {
            "inject": [h.path for h in hits],
            "chars": len(memory_context(hits, ".claude/memory/")),
            "rank": strategy.rank(conn, q["query"], turns),
        }
    return results


def inject_metrics(queries: list[dict], results: dict[str, dict]) -> dict[str, float]:
    """Micro precision of injected memories, micro recall of grade-2, negatives, silence."""
    injected = relevant = must = must_hit = 0
    neg = neg_inject = silent = positives = 0
    for q in queries:
        got = results[q["id"]]["inject"]
        judged = q["judgments"]
        if not judged:
            neg += 1
            neg_inject += bool(got)
            continue
        positives += 1
        silent += not got
        injected += len(got)
        relevant += sum(1 for p in got if judged.get(p, 0) >= 1)
        grade2 = [p for p, g in judged.items() if g >= 2]
        must += len(grade2)
        must_hit += sum(1 for p in grade2 if p in got)
    return {
        "precision": relevant / injected if injected else 0.0,
        "recall_g2": must_hit / must if must else 0.0,
        "false_inject": neg_inject / neg if neg else 0.0,
        "silent": silent / positives if positives else 0.0,
        "per_prompt": injected / positives if positives else 0.0,
    }


def search_metrics(queries: list[dict], results: dict[str, dict]) -> dict[str, float]:
    qrels = {q["id"]: q["judgments"] for q in queries if q["judgments"]}
    run_ = {qid: {p: 100.0 - i for i, (p, _) in enumerate(results[qid]["rank"])} for qid in qrels}
    m = evaluate(qrels, run_, SEARCH)
    return {"R@10": m["R@10"], "R2@10": m["R(rel=2)@10"], "MRR": m["RR"], "nDCG@10": m["nDCG@10"]}


def by_kind(queries: list[dict], results: dict[str, dict]) -> list[list[object]]:
    kinds: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        kinds[q["kind"]].append(q)
    rows = []
    for kind in sorted(kinds):
        qs = kinds[kind]
        im = inject_metrics(qs, results)
        if kind == "negative":
            rows.append([kind, len(qs), "-", "-", im["false_inject"], "-", "-", "-", "-"])
            continue
        sm = search_metrics(qs, results)
        rows.append([kind, len(qs), im["precision"], im["recall_g2"], "-", im["silent"], sm["R@10"], sm["R2@10"], sm["nDCG@10"]])
    return rows


def evaluate_set(folder: Path, variants: bool = False, kinds: bool = False, out=print,
                 semantic: bool = False, questions: bool = False) -> dict[str, dict]:
    """Run every strategy; print the tables; return the metrics per strategy. `semantic`
    adds the fused search (the store embedded once by the product's own sync); with
    `questions`, each memory carries its questions from the set's questions.json."""
    queries = json.loads((folder / "queries.json").read_text(encoding="utf-8"))
    summary: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="memindex-eval-") as tmp_name:
        tmp = Path(tmp_name)
        root = copy_store(folder, tmp / "proj")  # `<folder>/.claude/memory/` or the category folders in `<folder>`
        if questions:
            add_questions(folder, root)
        report = sync(root, SEMANTIC_CFG if semantic else Config())
        conn = index.open_reader(root)
        n_neg = sum(1 for q in queries if not q["judgments"])
        out(f"judged set: {report.added} memories, {len(queries)} queries ({n_neg} negative); now = {NOW.date()}")
        if semantic:
            out(f"semantic: {report.semantic}")
        rows, per_kind = [], {}
        for strategy in strategies(variants, semantic):
            results = run(conn, queries, strategy, tmp)
            im, sm = inject_metrics(queries, results), search_metrics(queries, results)
            summary[strategy.name] = {**im, **sm}
            rows.append([strategy.name, im["precision"], im["recall_g2"], im["false_inject"], im["silent"], im["per_prompt"], sm["R@10"], sm["R2@10"], sm["MRR"], sm["nDCG@10"]])
            per_kind[strategy.name] = results
        conn.close()
    out("")
    out(table(["strategy", "inject precision", "grade-2 recall", "false inject (neg)", "silent", "injected/prompt", "Recall@10", "Recall@10 (grade 2)", "MRR", "nDCG@10"], rows))
    if kinds:
        for name in list(per_kind)[:1] + [RULES_NAME, CALIBRATED_NAME] + ([SEMANTIC_NAME, CALIBRATED_SEMANTIC_NAME] if semantic else []):
            out(f"\nper query kind: {name}")
            out(table(["kind", "n", "precision", "grade-2 recall", "false inject", "silent", "Recall@10", "Recall@10 (grade 2)", "nDCG@10"], by_kind(queries, per_kind[name])))
    return summary
