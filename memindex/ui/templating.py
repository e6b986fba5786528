"""The pages' templates (Jinja2, package data under memindex/ui/templates) and how every
value reaches them: escaped, always.

Memory files are untrusted text. Every `{{ value }}` goes through `visible` (the
environment's `finalize`, on top of autoescape): HTML-escaped, and each look-alike of
`<`, `>`, `&` and each invisible, direction or line-breaking character the prompt hook
escapes (memindex/text/render.py's table) shown as a visible `U+XXXX` mark instead of the
character, so nothing can pass for markup or hide text. The mark's own tag carries no
quote, so it cannot end an attribute either. `|value` is for form fields, where the text
must come back as it was: escaped, characters kept.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from markupsafe import Markup, escape

from ..text.render import unsafe_characters

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
KEPT = frozenset((0x09, 0x0A, 0x0D))  # tab and line breaks: plain layout in HTML, not a disguise

_POINTS: frozenset[int] | None = None


def _points() -> frozenset[int]:
    global _POINTS
    if _POINTS is None:
        _POINTS = frozenset(unsafe_characters()) - KEPT
    return _POINTS


def visible(value: Any) -> Markup:
    """`value` as HTML text: escaped, its unsafe characters shown as `U+XXXX` marks."""
    if isinstance(value, Markup):  # made here or by a filter below, already escaped
        return value
    if value is None:
        return Markup("")
    text = str(escape(str(value)))
    if text.isascii() and text.isprintable():
        return Markup(text)
    points = _points()
    if not any(ord(ch) in points for ch in text):
        return Markup(text)
    return Markup("".join(f"<span class=cp>U+{ord(ch):04X}</span>" if ord(ch) in points else ch for ch in text))


def plain(value: Any) -> Markup:
    """For text that cannot hold markup (the page's <title>): escaped, unsafe characters as `U+XXXX`."""
    text = str(escape("" if value is None else str(value)))
    points = _points()
    return Markup("".join(f"U+{ord(ch):04X}" if ord(ch) in points else ch for ch in text))


def value(text: Any) -> Markup:
    """A form field's value: escaped (quotes too), the characters themselves kept."""
    return escape("" if text is None else str(text))


def pretty_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False, default=str)


def when(epoch: Any) -> str:
    if not isinstance(epoch, (int, float)):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def size(n: Any) -> str:
    n = int(n or 0)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def qs(query: Any, **changes: Any) -> str:
    """`?a=1&b=2`: the page's query (a multi-dict) with `changes` (None removes a key)."""
    from urllib.parse import urlencode

    pairs = [(k, v) for k, v in query.multi_items() if k not in changes and k != "token"]
    for k, v in changes.items():
        if v is None or v == "":
            continue
        pairs.extend((k, x) for x in v) if isinstance(v, (list, tuple)) else pairs.append((k, v))
    return "?" + urlencode(pairs) if pairs else "?"


def memory_link(path: Any) -> str:
    """The memory page of a row's path (`decisions/x.json`, `@docs/x.md#a`) or a shown path."""
    from urllib.parse import quote

    return "/memory?path=" + quote(str(path), safe="")


def environment():  # type: ignore[no-untyped-def]
    """The one Jinja2 environment: autoescape on for every template, `visible` on every value."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, finalize=visible, trim_blocks=True,
        lstrip_blocks=True, undefined=jinja2.StrictUndefined, auto_reload=False,
    )
    env.filters.update(value=value, plain=plain, pretty_json=pretty_json, when=when, size=size, memory_link=memory_link)
    env.globals.update(qs=qs)
    return env
