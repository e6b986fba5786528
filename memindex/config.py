"""Read and validate the settings once: the defaults, the user's own config, the
environment, `<root>/memory-config.json` (the project's, untrusted).

A wrong type or value never crashes anything: it yields one warning and the default. A
project's config may make memindex do less, never more (LOOSER, `memindex trust`); a
project's value equal to the default is no request for more: where the user's own settings
do less, it is left out, without a warning.
"""

from __future__ import annotations

import os

from .store import rootfs
from .lean import loads
from .defaults import CATEGORIES, CONFIG_FILE, CONFIG_MAX_BYTES, DEFAULT_CATEGORY_DESCRIPTIONS
from .errors import UnsafeFile, short
from .runtime import user_folder

USER_CONFIG = ("memindex", "config.json")  # under $XDG_CONFIG_HOME (default ~/.config)
ENV_CONFIG = "MEMINDEX_CONFIG_JSON"  # the same JSON as the user's file, for one process

TYPE_CHECKING = False  # the prompt hook imports this module: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable


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
            # inf, -inf and nan give nan here (math would cost the hook 0.3 ms to import)
            if isinstance(value, float) and value - value != 0.0:
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
        "match_strategy": Leaf("calibrated", choices=("calibrated", "fts5_bm25", "title_tags")),
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
            # a memory's `questions` (written at save time; docs/evaluation.md, "Questions at save time")
            "questions": Leaf(0.25, 0.0, 1000.0),
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
        # the learned scorer over the turn (capture/score.py) decides when to ask, the patterns
        # among its features, in turns that show software work; false: the patterns alone
        # (recall about 0.45 against 0.57-0.95 on held-out coding sessions; docs/evaluation.md,
        # "Fourth round")
        "save_prompt_scorer": Leaf(True),
        # session summaries from transcripts (docs/capture.md): the Stop and SessionEnd
        # hooks summarise the session in the background
        "enabled": Leaf(True),
        # "local": sessions-local/, indexed but ignored by git; "shared": sessions/, committed
        "location": Leaf("local", choices=("local", "shared")),
        # a running session's summary is rewritten at most this often (Stop fires after every
        # turn); the turn that ends the session is always captured, at most this much later
        "min_interval_s": Leaf(30.0, 0.0, 3600.0),
        # captured summaries kept as they are: the newest keep_sessions and all of the last
        # keep_days (0: that limit off); the others are folded into one digest a month
        # ("fold") or archived ("archive"), by the capture job (memindex/capture/fold.py)
        "keep_sessions": Leaf(50, 0, 1_000_000),
        "keep_days": Leaf(90, 0, 36_500),
        "older": Leaf("fold", choices=("fold", "archive")),
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
    "documents": {
        # the project's own documents indexed in place (memindex/store/documents.py): a folder
        # or file relative to the project -> what it holds (adr, runbook, docs, claude-md, notes)
        "paths": Leaf({}, kind=dict),
        # Claude Code's auto memory notes of this project (outside the repository)
        "claude_memory": Leaf(False),
    },
    "review": {
        # record what each session was shown of the store and which memories the model then
        # opened, in this user's state folder (memindex/usage.py); never in the repository
        "usage": Leaf(True),
        # a memory shown at least this often, in at least this many sessions, and never opened
        # is an `unused` review item
        "unused_min_shown": Leaf(5, 1, 100_000),
        "unused_min_sessions": Leaf(3, 1, 100_000),
        # SessionStart starts a background `memindex review --refresh` (the checks, git's too)
        # when the last one is older than interval_s
        "background": Leaf(True),
        # the prompt hook says "(may be stale: ...)" after a memory the last review found stale,
        # and leaves out one that is clearly dead (every file it names deleted, half its names gone)
        "notes": Leaf(True),
        "skip_dead": Leaf(True),
        # staleness from the working tree and git (memindex/review/stale.py), within this budget
        "code": Leaf(True),
        "git_timeout_s": Leaf(20.0, 1.0, 600.0),
        # a memory whose files (those still there) changed by at least this share of their
        # lines since it was written is `stale` too; 0 turns churn off as a reason (it stays
        # evidence of the other reasons)
        "churn_ratio": Leaf(1.0, 0.0, 100.0),
        # the store-wide duplicate and contradiction check measures pairs (the save path's
        # same-topic test) for at most this long a run; measures are kept, the rest come next run
        "conflict_budget_s": Leaf(1.0, 0.1, 600.0),
        "interval_s": Leaf(3600.0, 60.0, 30 * 86400.0),
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

# Which way each setting makes memindex do more: load or download a model, start or keep a
# worker, wait longer, inject more, delete sooner. A repository's memory-config.json may move
# these only the other way (from what the user's own config and environment say), unless the
# user ran `memindex trust` for exactly that file. "up": a higher value (or true) does more;
# "down": a lower one (or false); "any": any other value (a model to load). One line per key.
LOOSER: dict[str, str] = {
    "retrieval.enabled": "up",
    "retrieval.max_inject": "up",
    "retrieval.match_strategy": "any",
    "retrieval.relative_cutoff": "down",
    "retrieval.min_coverage": "down",
    "retrieval.min_relative_coverage": "down",
    "retrieval.min_confidence": "down",
    "retrieval.intents": "up",
    "retrieval.file_anchors": "up",
    "retrieval.tool_anchors": "up",
    "retrieval.skip_injected": "down",
    "retrieval.min_prompt_chars": "down",
    "retrieval.session_start.inject_recent": "up",
    "delete.grace_period_days": "down",
    "index.max_file_bytes": "up",
    "semantic.enabled": "up",
    "semantic.model": "any",
    "semantic.idle_exit_s": "up",
    "semantic.hook_budget_ms": "up",
    "semantic.max_cosine_gap": "up",
    "semantic.min_standout": "down",
    "capture.save_prompts": "up",
    "capture.save_prompt_scorer": "up",
    "capture.enabled": "up",
    "capture.location": "any",  # "shared" publishes session text in the repository's history
    "review.usage": "up",
    "review.background": "up",  # runs git over the working tree in the background
    "review.interval_s": "down",
    "review.code": "up",
    "review.conflict_budget_s": "up",  # CPU time a run
    "review.notes": "up",  # words added to the block the model reads
    "review.churn_ratio": "down",  # a lower ratio notes more memories
    "review.skip_dead": "down",  # off injects memories the review found dead
    "review.git_timeout_s": "up",  # a record kept on this machine: a repository may turn it off, not on
    "documents.claude_memory": "up",  # Claude Code's auto memory: files outside the repository
}


# How the memory-config.json of an older `memindex init` begins (its top-level "_comment"): that
# template held every setting at its default. In such a file a value equal to the default is
# init's, not the project's: left out both ways (it neither asks for more nor overrides the
# user's own settings); a value someone changed there is the project's, as in any file.
OLD_TEMPLATE_COMMENT = "memindex settings for this project. Every key is optional: delete what you do not change"


def looser(key: str, value: object, than: object) -> bool:
    """Whether `value` makes memindex do more than `than` does (LOOSER's rule for `key`)."""
    way = LOOSER.get(key)
    if way is None or value == than:
        return False
    if way == "any" or value is None or than is None:  # "unset" (someone else decides) has no direction
        return True
    return value > than if way == "up" else value < than  # type: ignore[operator]


class Config:
    """Validated settings, keyed by dotted path (`retrieval.max_inject`)."""

    def __init__(self, warnings: list[str] | None = None, source: str | None = None) -> None:
        self.values: dict[str, object] = dict(DEFAULTS)
        self.warnings: list[str] = list(warnings or [])
        self.source = source
        self.given: set[str] = set()  # keys this layer set to a valid value
        self.more: list[str] = []  # the project's keys that would make memindex do more
        self.ignored: list[str] = []  # ... those not applied (the user does not trust the file)
        self.trust: str | None = None  # trust.TRUSTED/UNTRUSTED/CHANGED when the project asks for more
        self.notice: str | None = None  # the one line that says what was ignored (also in warnings)

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
                kept = "those are left out" if isinstance(node.default, dict) and value else f"using {node.default!r}"
                cfg.warnings.append(f"{name}: {warning}; {kept}")
            if not warning or isinstance(node.default, dict) and value:  # a mapping keeps its good entries
                cfg.given.add(name)
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
        refused = {w.split(":", 1)[0] for w in cfg.warnings}  # one warning a key: a bad value says so already
        keys = sorted(_set_keys(data) & set(RULE_THRESHOLDS) - refused)
        if keys:  # one line for them all: the hook's stderr line is bounded
            cfg.warnings.append(f"{', '.join(keys)} {'apply' if len(keys) > 1 else 'applies'} to match_strategy "
                                "fts5_bm25 only; the calibrated policy has one threshold, retrieval.min_confidence")
    return cfg


def _read_json(path: str, read: "Callable[[str, int], bytes | None] | None" = None) -> tuple[object, bytes | None, str | None]:
    """(parsed JSON or None, raw bytes or None, warning or None) of one config file."""
    try:
        raw = read(path, CONFIG_MAX_BYTES) if read else _read_user(path)
    except UnsafeFile as exc:
        return None, None, f"{exc}; using defaults"
    except OSError as exc:
        return None, None, f"{path}: cannot read ({exc.strerror}); using defaults"
    if raw is None:
        return None, None, None
    try:
        return loads(raw), raw, None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return None, raw, f"{path}: invalid JSON ({exc}); using defaults"


def _read_user(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(CONFIG_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    if len(raw) > CONFIG_MAX_BYTES:
        raise UnsafeFile(path, f"is larger than {CONFIG_MAX_BYTES} bytes")
    return raw


def user_config_path() -> str:
    """The user's own config: `$XDG_CONFIG_HOME/memindex/config.json`."""
    return user_folder("config", *USER_CONFIG)


def load_config(root: str | os.PathLike[str]) -> Config:
    """The settings for `root`, highest first: the environment (MEMINDEX_CONFIG_JSON), the
    project's `<root>/memory-config.json` (only what does less, unless the user trusts the
    file: `memindex trust`), the user's `$XDG_CONFIG_HOME/memindex/config.json`, the
    defaults. A missing file is nothing; a broken one warns and is skipped."""
    cfg = Config()
    user_path = user_config_path()
    data, raw, warning = _read_json(user_path)
    if warning:
        cfg.warnings.append(warning)
    elif raw is not None:
        _apply(SPEC, data, "", cfg)
    env_given: set[str] = set()
    text = os.environ.get(ENV_CONFIG)
    if text:
        env = Config()
        try:
            _apply(SPEC, loads(text), "", env)
        except (ValueError, RecursionError) as exc:
            env.warnings.append(f"invalid JSON ({exc}); ignored")
        cfg.warnings += [f"${ENV_CONFIG}: {w}" for w in env.warnings]
        cfg.values.update((k, env.values[k]) for k in env.given)
        env_given = env.given
    path = os.path.join(root, CONFIG_FILE)
    data, raw, warning = _read_json(path, rootfs.read)
    if warning:
        cfg.warnings.append(warning)
        return cfg
    if raw is None:
        return cfg
    project = parse_config(data, path)
    cfg.source = path
    cfg.warnings += project.warnings
    further = [k for k in project.given if looser(k, project.values[k], cfg.values[k])]
    # A project's value equal to the default asks for nothing more (`memindex init` once wrote
    # every default into the file): where the user's own settings go further it is left out,
    # without a word, and the user's value stands.
    as_default = {k for k in further if project.values[k] == DEFAULTS[k]}
    if isinstance(data, dict) and str(data.get("_comment", "")).startswith(OLD_TEMPLATE_COMMENT):
        as_default |= {k for k in project.given if project.values[k] == DEFAULTS[k]}
    more = sorted(set(further) - as_default)
    cfg.more = more
    if more:
        from . import trust  # only when the project's config asks for more

        cfg.trust = trust.state(root, raw or b"")
        if cfg.trust != trust.TRUSTED:
            cfg.ignored = more
            again = " again (the file changed since you trusted it)" if cfg.trust == trust.CHANGED else ""
            cfg.notice = (f"{path}: ignored {', '.join(more)}: a project's config may make memindex do less, not more; "
                          f"run `memindex trust`{again} to allow this file, or set them in {user_path}")
            cfg.warnings.insert(0, cfg.notice)  # what was refused comes first: a hook's stderr line is bounded
    for key in project.given - env_given - set(cfg.ignored) - as_default:
        cfg.values[key] = project.values[key]
    return cfg
