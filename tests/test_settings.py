"""Issue 38, point 2: one settings table (memindex/settings.py). Validation, the trust rule,
the config template `memindex init` writes, the docs' tables and the search's Params all
read it; nothing states a setting's default a second time."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from memindex.config import DEFAULTS, LOOSER, RULE_THRESHOLDS, SPEC, Config, parse_config
from memindex.settings import BY_NAME, SECTIONS, SETTINGS

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "memindex" / "data" / "memory-config.template.json"
DOC = REPO / "docs" / "configuration.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_settings", REPO / "scripts" / "gen_settings.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_each_setting_once_with_a_default_that_passes_its_own_check() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names)) and set(names) == set(DEFAULTS) == set(BY_NAME)
    for s in SETTINGS:
        assert s.help and not s.help.endswith("."), s.name  # one phrase; the renderers add the stop
        assert s.check(s.default) == (s.default, None), s.name
        assert s.looser in (None, "up", "down", "any"), s.name
        if s.looser in ("up", "down"):  # a direction needs an order
            assert (s.kind or type(s.default)) in (bool, int, float), s.name
        if s.choices:
            assert s.default in s.choices, s.name
        if s.lo is not None and s.default is not None:
            assert s.lo <= s.default <= s.hi, s.name  # type: ignore[operator]
        section = s.name.rsplit(".", 1)[0]
        assert section in SECTIONS or s.name.split(".")[0] in SECTIONS, s.name


def test_validation_and_the_trust_rule_read_the_table() -> None:
    assert LOOSER == {s.name: s.looser for s in SETTINGS if s.looser}
    assert set(RULE_THRESHOLDS) == {s.name for s in SETTINGS if s.rules}
    node: object = SPEC
    for part in "retrieval.max_inject".split("."):
        node = node[part]  # type: ignore[index]
    assert node is BY_NAME["retrieval.max_inject"]
    cfg = parse_config({"retrieval": {"match_strategy": "calibrated", "min_coverage": 0.1}, "semantic": {"min_standout": 0.5}})
    assert any("retrieval.min_coverage, semantic.min_standout apply to match_strategy fts5_bm25 only" in w for w in cfg.warnings)


def test_params_take_their_defaults_from_the_table() -> None:
    from memindex.retrieval.query import SETTING_FIELDS, Params

    plain = Params()
    for field, key in SETTING_FIELDS.items():
        assert getattr(plain, field) == BY_NAME[key].default, field
    cfg = Config()
    cfg.values["retrieval.column_weights.questions"] = 2.0
    assert Params.from_config(cfg).questions_weight == 2.0 and Params.from_config(Config()).title_weight == plain.title_weight
    assert set(SETTING_FIELDS.values()) == {k for k in DEFAULTS if k.startswith("retrieval.column_weights.")}


def test_the_template_is_generated_from_the_table_and_sets_nothing() -> None:
    """The template shows the settings flagged for it, each at the table's default, under an
    ignored `_` name: it sets nothing (issue 36, finding 10), so it never asks for trust."""
    gen = _generator()
    text = TEMPLATE.read_text(encoding="utf-8")
    assert text == gen.template(), "run python scripts/gen_settings.py"
    data = json.loads(text)
    assert parse_config(data).given == set() and parse_config(data).warnings == []

    shown: dict[str, object] = {}

    def walk(node: dict, prefix: str) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            elif key != "_comment":
                assert key.startswith("_"), prefix + key  # a real key would set something
                shown[prefix + key[1:]] = value

    walk(data, "")
    assert shown == {s.name: s.default for s in SETTINGS if s.template}
    assert {"retrieval.max_inject", "semantic.enabled", "semantic.model", "capture.location"} <= set(shown)


def test_the_docs_tables_are_generated_from_the_table() -> None:
    gen = _generator()
    text = DOC.read_text(encoding="utf-8")
    assert text == gen.doc(text), "run python scripts/gen_settings.py"
    for s in SETTINGS:
        name = s.name if not s.name.startswith("categories.") else "categories.<category>." + s.name.rsplit(".", 1)[1]
        assert f"| `{name}` |" in text, name
    assert "| `retrieval.max_inject` | `3` | 0..20, clamped | lower it |" in text
    assert "| `semantic.model` | `\"sentence-transformers/all-MiniLM-L6-v2\"` | text | not change it |" in text
    assert "| `retrieval.search_limit` | `10` | 1..1000 | set it |" in text
    assert "docs/configuration.md" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_generator_s_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_settings.py"), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    gen = _generator()
    stale = DOC.read_text(encoding="utf-8").replace("| `retrieval.max_inject` | `3` |", "| `retrieval.max_inject` | `5` |")
    assert gen.doc(stale) != stale  # what --check compares
