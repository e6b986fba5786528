"""The pictures' geometry: plain server-drawn SVG (no chart library, no script). Each
function turns memindex/catalog/figures.py's numbers into shapes with coordinates; the
template (templates/charts.html) draws them, every label escaped like any other text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

COLORS = {  # category -> fill
    "decision": "#4c72b0", "runbook": "#dd8452", "constraint": "#c44e52", "tech_debt": "#8172b3",
    "preference": "#55a868", "session_summary": "#937860",
}
USE_COLORS = {"injected": "#4c72b0", "listed": "#8fb0d9", "opened": "#55a868"}
W, H = 760, 240  # the drawing area of a chart (the SVG adds margins)
LEFT, BOTTOM, TOP = 48, 28, 10


def _nice(top: float) -> float:
    """A round axis maximum at or above `top`."""
    if top <= 5:
        return max(1, int(-(-top // 1)))
    step = 10 ** (len(str(int(top))) - 1)
    for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * step >= top:
            return m * step
    return 10 * step


def _ticks(top: float) -> list[dict[str, Any]]:
    """Five intervals (fewer for a top under 5: whole numbers only)."""
    n = int(top) if top < 5 else 5
    return [{"value": f"{top * i / n:g}", "y": round(TOP + H - H * i / n, 1)} for i in range(n + 1)]


def stacked(months: list[str], series: dict[str, list[int]]) -> dict[str, Any]:
    """Memories written per month, stacked by category."""
    n = len(months)
    if not n:
        return {"empty": True}
    totals = [sum(v[i] for v in series.values()) for i in range(n)]
    top = _nice(max(totals))
    slot = W / n
    bars = []
    for i, month in enumerate(months):
        y = TOP + H
        for category, values in series.items():
            count = values[i]
            if not count:
                continue
            h = H * count / top
            y -= h
            bars.append({"x": round(LEFT + i * slot + slot * 0.1, 1), "y": round(y, 1), "w": round(slot * 0.8, 1),
                         "h": round(h, 1), "fill": COLORS.get(category, "#999"), "label": f"{month} {category}: {count}"})
    every = max(1, n // 12)
    labels = [{"x": round(LEFT + i * slot + slot / 2, 1), "text": m} for i, m in enumerate(months) if i % every == 0]
    legend = [{"category": c, "fill": COLORS.get(c, "#999")} for c in series]
    return {"empty": False, "bars": bars, "labels": labels, "ticks": _ticks(top), "legend": legend, **_frame()}


def line(months: list[str], values: list[int]) -> dict[str, Any]:
    """The store's size (memories in all) at the end of each month."""
    n = len(months)
    if not n:
        return {"empty": True}
    top = _nice(max(values))
    slot = W / n
    points = [(round(LEFT + i * slot + slot / 2, 1), round(TOP + H - H * v / top, 1)) for i, v in enumerate(values)]
    every = max(1, n // 12)
    return {
        "empty": False, "points": " ".join(f"{x},{y}" for x, y in points),
        "dots": [{"x": x, "y": y, "label": f"{months[i]}: {values[i]}"} for i, (x, y) in enumerate(points)],
        "labels": [{"x": round(LEFT + i * slot + slot / 2, 1), "text": m} for i, m in enumerate(months) if i % every == 0],
        "ticks": _ticks(top), **_frame(),
    }


def hbars(items: list[dict[str, Any]], keys: tuple[str, ...], label: str = "title",
          total: Callable[[dict[str, Any]], str] | None = None) -> dict[str, Any]:
    """One horizontal bar per item, its `keys` side by side in one stack (use per memory,
    bytes per category); `total` words the number after each bar."""
    if not items:
        return {"empty": True}
    row_h, left, width = 22, 300, W + LEFT - 300
    top = _nice(max(sum(item[k] for k in keys) for item in items))
    rows = []
    for i, item in enumerate(items):
        x, parts = left, []
        for k in keys:
            w = width * item[k] / top
            if w > 0:
                parts.append({"x": round(x, 1), "w": round(w, 1), "fill": USE_COLORS.get(k) or COLORS.get(item.get("category", ""), "#999"),
                              "label": f"{k}: {item[k]}"})
            x += w
        rows.append({"y": TOP + i * row_h, "h": row_h - 6, "text": item.get(label) or item.get("path") or "",
                     "href": item.get("href"), "parts": parts,
                     "total": total(item) if total else " / ".join(str(item[k]) for k in keys), "tx": round(x + 4, 1)})
    return {"empty": False, "rows": rows, "width": W + LEFT + 80, "height": TOP + len(items) * row_h + 8,
            "left": left, "legend": [{"category": k, "fill": USE_COLORS.get(k, "#999")} for k in keys]}


def _frame() -> dict[str, Any]:
    return {"width": W + LEFT + 12, "height": TOP + H + BOTTOM, "left": LEFT, "top": TOP, "bottom": TOP + H,
            "right": LEFT + W}
