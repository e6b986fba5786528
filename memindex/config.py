"""Read and validate `<root>/memory-config.json` once.

A wrong type or value never crashes anything: it yields one warning and the default.
"""

from __future__ import annotations

import math
import os

from . import rootfs
from .lean import loads
from .defaults import CATEGORIES, CONFIG_FILE, CONFIG_MAX_BYTES, DEFAULT_CATEGORY_DESCRIPTIONS
from .errors import UnsafeFile, short


class Leaf:
    """One configurable value: its default and what a valid value looks like. Out of range,
    a value is clamped (max_inject, as the old system did) or rejected."""

    __slots__ = ("default", "lo", "hi", "choices", "clamp", "kind")

    def __init__(
        self,
        default: object,
        lo: float | None = None,
        hi: float | None = None,
        choices: tuple[str, ...] | None = None,
        clamp: bool = False,
        kind: type | None = None,
    ) -> None:
        self.default, self.lo, self.hi, self.choices, self.clamp = default, lo, hi, choices, clamp
        self.kind = kind  # the value's type when the default is None ("unset": someone else decides)

    def check(self, value: object) -> tuple[object, str | None]:
        """Return (value to use, warning or None)."""
        if value is None and self.default is None:
            return None, None
        want = self.kind or type(self.default)
        if want is bool:
            if isinstance(value, bool):
                return value, None
            return self.default, f"expected true or false, got {short(value)}"
        if want in (int, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return self.default, f"expected a number, got {short(value)}"
            if isinstance(value, float) and not math.isfinite(value):
                return self.default, f"expected a finite number, got {short(value)}"
            if want is int and isinstance(value, float):
                if not value.is_integer():
                    return self.default, f"expected an integer, got {short(value)}"
                value = int(value)
            lo, hi = self.lo, self.hi
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                if self.clamp:
                    return want(min(max(value, lo), hi)), None
                return self.default, f"{short(value)} is outside {lo}..{hi}"
            return want(value), None
        if not isinstance(value, str):
            return self.default, f"expected a string, got {short(value)}"
        if self.choices and value not in self.choices:
            return self.default, f"{short(value)} is not one of {', '.join(self.choices)}"
        return value, None


SPEC: dict[str, object] = {
    "retrieval": {
        "enabled": Leaf(True),
        "max_inject": Leaf(3, 0, 20, clamp=True),
        # "calibrated": the relevance model (memindex/relevance) decides; "fts5_bm25": the
        # hand-set rules below (relative_cutoff, min_coverage, min_relative_coverage);
        # "title_tags": the old keyword matcher (the kill switch)
        "match_strategy": Leaf("fts5_bm25", choices=("calibrated", "fts5_bm25", "title_tags")),
        # calibrated: inject candidates whose P(relevant) reaches this; unset (null): the
        # threshold the shipped model was trained with (memindex/data/relevance.json)
        "min_confidence": Leaf(None, 0.0, 1.0, kind=float),
        # auto-inject keeps hits scoring at least this fraction of the best hit
        "relative_cutoff": Leaf(0.7, 0.0, 1.0),
        # auto-inject needs the best hit to cover this share of the prompt's term weight
        "min_coverage": Leaf(0.4, 0.0, 1.0),
        # ... and at least this share of what the best-covering pick covers
        "min_relative_coverage": Leaf(0.75, 0.0, 1.0),
        "intents": Leaf(True),  # "where did we leave off?" gets the session summary
        "file_anchors": Leaf(True),  # files named in the prompt or touched by the session
        # the PreToolUse hook: memories anchored to a file the assistant is about to read or
        # edit. Off by default: 10 of 15 memories it added on the judged sets were relevant,
        # under the prompt hook's bar (docs/evaluation.md, "The file at hand")
        "tool_anchors": Leaf(False),
        "skip_injected": Leaf(True),  # never the same memory twice in a session, unless it changed
        "min_prompt_chars": Leaf(10, 0, 10_000),
        "search_limit": Leaf(10, 1, 1000),
        "column_weights": {
            "title": Leaf(5.0, 0.0, 1000.0),
            "tags": Leaf(3.0, 0.0, 1000.0),
            "body": Leaf(1.0, 0.0, 1000.0),
        },
        "transcript_context": {
            "enabled": Leaf(True),
            "max_turns": Leaf(3, 0, 10),
            "tail_bytes": Leaf(65_536, 1024, 16 * 1024 * 1024),
            # enrich only prompts with at most this many meaningful terms
            "max_prompt_terms": Leaf(5, 0, 100),
            # how far back earlier injections and touched files are looked for
            "scan_bytes": Leaf(1_048_576, 0, 16 * 1024 * 1024),
        },
        "session_start": {
            "inject_recent": Leaf(0, 0, 3),
        },
    },
    "capture": {
        # the Stop hook asks the model, once per topic, to save a decision, fix, limit,
        # deferred work, preference or "remember this" of the latest turn (README.md)
        "save_prompts": Leaf(True),
    },
    "categories": {
        cat: {
            "retention_days": Leaf(0, 0, 36_500),
            "description": Leaf(DEFAULT_CATEGORY_DESCRIPTIONS[cat]),
        }
        for cat in CATEGORIES
    },
    "delete": {"grace_period_days": Leaf(30, 0, 36_500)},
    "index": {
        "lock_timeout_s": Leaf(10.0, 0.0, 3600.0),
        "max_file_bytes": Leaf(1_048_576, 1024, 64 * 1024 * 1024),
    },
    "semantic": {
        # off by default: needs `pip install 'memindex[semantic]'` and a model
        "enabled": Leaf(False),
        # a local folder, or a hub id found in the local cache / the model package;
        # "builtin:hashing" is the deterministic test/dev stand-in (semantic/standin.py, no model)
        "model": Leaf("sentence-transformers/all-MiniLM-L6-v2"),
        "idle_exit_s": Leaf(1800.0, 10.0, 7 * 86400.0),  # the worker exits after this long unused
        "hook_budget_ms": Leaf(150, 10, 2000),  # the prompt hook waits this long for the worker
        # injection drops a word match whose cosine to the prompt trails the prompt's nearest
        # memory by more than this (it shares words, not meaning); 1.0 turns the rule off.
        # Chosen for all-MiniLM-L6-v2 on every dev set (docs/evaluation.md)
        "max_cosine_gap": Leaf(0.2, 0.0, 2.0),
        # injection adds the prompt's nearest memory when its cosine stands this far above
        # the mean of the next nine: the model singles it out, even with no word in common.
        # 2.0 turns the rule off. Chosen on every dev set (docs/evaluation.md)
        "min_standout": Leaf(0.2, 0.0, 2.0),
        "batch_size": Leaf(32, 1, 512),
    },
    "watch": {
        "debounce_ms": Leaf(400, 10, 60_000),
        "poll_interval_s": Leaf(2.0, 0.1, 3600.0),
    },
}


def _defaults(spec: dict[str, object], prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, node in spec.items():
        if isinstance(node, Leaf):
            out[prefix + key] = node.default
        else:
            out.update(_defaults(node, f"{prefix}{key}."))
    return out


DEFAULTS: dict[str, object] = _defaults(SPEC)


class Config:
    """Validated settings, keyed by dotted path (`retrieval.max_inject`)."""

    def __init__(self, warnings: list[str] | None = None, source: str | None = None) -> None:
        self.values: dict[str, object] = dict(DEFAULTS)
        self.warnings: list[str] = list(warnings or [])
        self.source = source

    def __getitem__(self, key: str) -> object:
        return self.values[key]

    def retention_days(self, category: str) -> int:
        return int(self.values.get(f"categories.{category}.retention_days", 0))  # type: ignore[call-overload]


def _apply(spec: dict[str, object], data: object, prefix: str, cfg: Config) -> None:
    if not isinstance(data, dict):
        cfg.warnings.append(f"{prefix.rstrip('.') or 'config'}: expected an object, got {short(data)}; using defaults")
        return
    for key, node in spec.items():
        if key not in data:
            continue
        name = prefix + key
        if isinstance(node, Leaf):
            value, warning = node.check(data[key])
            cfg.values[name] = value
            if warning:
                cfg.warnings.append(f"{name}: {warning}; using {node.default!r}")
        else:
            _apply(node, data[key], name + ".", cfg)


# The hand-set relevance thresholds the calibrated policy replaces (retrieval.min_confidence).
RULE_THRESHOLDS = ("retrieval.relative_cutoff", "retrieval.min_coverage", "retrieval.min_relative_coverage",
                   "semantic.max_cosine_gap", "semantic.min_standout")


def _set_keys(data: object, prefix: str = "") -> set[str]:
    if not isinstance(data, dict):
        return set()
    out = set()
    for key, value in data.items():
        out |= _set_keys(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}"}
    return out


def parse_config(data: object, source: str | None = None) -> Config:
    """Validate already-parsed JSON; unknown keys are ignored (older configs carry many)."""
    cfg = Config(source=source)
    _apply(SPEC, data, "", cfg)
    if cfg["retrieval.match_strategy"] == "calibrated":
        for key in sorted(_set_keys(data) & set(RULE_THRESHOLDS)):
            cfg.warnings.append(f"{key} applies to match_strategy fts5_bm25 only; the calibrated policy "
                                "has one threshold, retrieval.min_confidence")
    return cfg


def load_config(root: str | os.PathLike[str]) -> Config:
    """Read `<root>/memory-config.json`; a missing file is the defaults, a broken one warns."""
    path = os.path.join(root, CONFIG_FILE)
    try:
        raw = rootfs.read(path, CONFIG_MAX_BYTES)
    except UnsafeFile as exc:
        return Config(warnings=[f"{exc}; using defaults"])
    except OSError as exc:
        return Config(warnings=[f"{path}: cannot read ({exc.strerror}); using defaults"])
    if raw is None:
        return Config()
    try:
        data = loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return Config(warnings=[f"{path}: invalid JSON ({exc}); using defaults"])
    return parse_config(data, path)
