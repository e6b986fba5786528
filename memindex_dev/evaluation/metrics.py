"""Shared pieces of the evaluations and benchmarks: metrics through ir-measures, Markdown
tables, memory files written as-is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Mapping

import ir_measures
from ir_measures import AP, RR, R, nDCG

SEARCH_MEASURES = [nDCG @ 10, R @ 10, RR, R @ 100, AP @ 100]


def evaluate(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], measures=None) -> dict[str, float]:
    """Aggregate metrics; queries with no results count as zeros (ir-measures skips them)."""
    measures = measures or SEARCH_MEASURES
    full_run = {q: dict(run.get(q, {})) or {"__none__": 0.0} for q in qrels}
    agg = ir_measures.calc_aggregate(measures, qrels, full_run)
    return {str(m): float(v) for m, v in agg.items()}


def per_query(qrels, run, measures=None) -> dict[str, dict[str, float]]:
    measures = measures or SEARCH_MEASURES
    full_run = {q: dict(run.get(q, {})) or {"__none__": 0.0} for q in qrels}
    out: dict[str, dict[str, float]] = {q: {} for q in qrels}
    for m in ir_measures.iter_calc(measures, qrels, full_run):
        out[m.query_id][str(m.measure)] = float(m.value)
    return out


def table(headers: list[str], rows: Iterable[list[object]]) -> str:
    """A Markdown table (readable in a terminal and pasteable into docs)."""
    rows = [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def write_memory(root: Path, category_folder: str, mem_id: str, record: dict) -> Path:
    path = root / category_folder / f"{mem_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, ensure_ascii=False))
    return path
