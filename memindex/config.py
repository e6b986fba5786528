"""Read and validate the settings once: the defaults, the user's own config, the
environment, and `<root>/memory-config.json` (the project's, untrusted). The settings
themselves, each once, are the table in memindex/settings.py.

A wrong type or value never crashes anything: it yields one warning and the default. A
project's config may make memindex do less, never more (LOOSER, `memindex trust`); a
project's value equal to the default is no request for more: where the user's own settings
do less, it is left out, without a warning.
"""

from __future__ import annotations

import os

from .store import rootfs
from .lean import loads
from .defaults import CONFIG_FILE, CONFIG_MAX_BYTES
from .errors import UnsafeFile, short
from .runtime import user_folder
from .settings import SETTINGS, Setting

USER_CONFIG = ("memindex", "config.json")  # under $XDG_CONFIG_HOME (default ~/.config)
ENV_CONFIG = "MEMINDEX_CONFIG_JSON"  # the same JSON as the user's file, for one process

TYPE_CHECKING = False  # the prompt hook imports this module: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable


def _tree(settings: tuple[Setting, ...]) -> dict[str, object]:
    """The table as nested sections, the shape of a config file."""
    tree: dict[str, object] = {}
    for setting in settings:
        *path, leaf = setting.name.split(".")
        node = tree
        for part in path:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node[leaf] = setting
    return tree


SPEC: dict[str, object] = _tree(SETTINGS)
DEFAULTS: dict[str, object] = {s.name: s.default for s in SETTINGS}
# The trust rule: which way each setting makes memindex do more (Setting.looser). A
# repository's config may move these only the other way, unless the user trusted the file.
LOOSER: dict[str, str] = {s.name: s.looser for s in SETTINGS if s.looser}
# The hand-set relevance thresholds the calibrated policy replaces (retrieval.min_confidence).
RULE_THRESHOLDS: tuple[str, ...] = tuple(s.name for s in SETTINGS if s.rules)


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
        if isinstance(node, Setting):
            value, warning = node.check(data[key])
            cfg.values[name] = value
            if warning:
                kept = "those are left out" if isinstance(node.default, dict) and value else f"using {node.default!r}"
                cfg.warnings.append(f"{name}: {warning}; {kept}")
            if not warning or isinstance(node.default, dict) and value:  # a mapping keeps its good entries
                cfg.given.add(name)
        else:
            _apply(node, data[key], name + ".", cfg)


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
