"""config.py: memory-config.json never crashes anything; one warning and the default per bad value."""

from __future__ import annotations

import json

import pytest

from memindex.config import DEFAULTS, Config, load_config, parse_config
from memindex.defaults import CATEGORIES, CONFIG_FILE


def nested(dotted: str, value: object) -> dict:
    """{"a": {"b": value}} from "a.b"."""
    out: object = value
    for part in reversed(dotted.split(".")):
        out = {part: out}
    return out  # type: ignore[return-value]


def write_config(root, data) -> None:
    path = root / CONFIG_FILE
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_text(json.dumps(data), encoding="utf-8")


class TestDefaults:
    def test_missing_file_gives_defaults_without_warning(self, memory_root):
        cfg = load_config(memory_root)
        assert cfg.warnings == []
        assert cfg.values == DEFAULTS

    def test_empty_object(self):
        cfg = parse_config({})
        assert cfg.warnings == [] and cfg.values == DEFAULTS

    def test_every_category_has_retention_zero(self):
        cfg = Config()
        assert all(cfg.retention_days(c) == 0 for c in CATEGORIES)

    def test_unknown_keys_are_ignored_silently(self):
        cfg = parse_config({"legacy_option": 1, "retrieval": {"old_knob": "x", "max_inject": 5}, "categories": {"notes": {}}})
        assert cfg.warnings == []
        assert cfg["retrieval.max_inject"] == 5


class TestValidValues:
    def test_values_are_used(self):
        cfg = parse_config({
            "retrieval": {"enabled": False, "max_inject": 7, "match_strategy": "fts5_bm25",
                          "relative_cutoff": 0.25, "column_weights": {"title": 2, "body": 0.5}},
            "categories": {"session_summary": {"retention_days": 30}},
            "index": {"lock_timeout_s": 2, "max_file_bytes": 4096},
        })
        assert cfg.warnings == []
        assert cfg["retrieval.enabled"] is False
        assert cfg["retrieval.max_inject"] == 7
        assert cfg["retrieval.match_strategy"] == "fts5_bm25"
        assert cfg["retrieval.relative_cutoff"] == 0.25
        assert cfg["retrieval.column_weights.title"] == 2.0 and isinstance(cfg["retrieval.column_weights.title"], float)
        assert cfg["retrieval.column_weights.body"] == 0.5
        assert cfg["retrieval.column_weights.tags"] == DEFAULTS["retrieval.column_weights.tags"]
        assert cfg.retention_days("session_summary") == 30 and cfg.retention_days("decision") == 0
        assert cfg["index.lock_timeout_s"] == 2.0
        assert cfg["index.max_file_bytes"] == 4096

    def test_integral_float_for_an_integer(self):
        cfg = parse_config({"retrieval": {"search_limit": 25.0}})
        assert cfg.warnings == [] and cfg["retrieval.search_limit"] == 25 and isinstance(cfg["retrieval.search_limit"], int)

    def test_from_file(self, memory_root):
        write_config(memory_root, {"retrieval": {"max_inject": 2}})
        cfg = load_config(memory_root)
        assert cfg.warnings == [] and cfg["retrieval.max_inject"] == 2
        assert cfg.source == str(memory_root / CONFIG_FILE)


BAD_VALUES = [
    # (dotted key, bad value, words the warning should contain)
    ("retrieval.enabled", "yes", "true or false"),
    ("retrieval.enabled", 1, "true or false"),
    ("retrieval.enabled", None, "true or false"),
    ("retrieval.search_limit", "10", "number"),
    ("retrieval.search_limit", True, "number"),
    ("retrieval.search_limit", [10], "number"),
    ("retrieval.search_limit", {"n": 10}, "number"),
    ("retrieval.search_limit", 2.5, "integer"),
    ("retrieval.search_limit", 0, "outside"),
    ("retrieval.search_limit", 100_000, "outside"),
    ("retrieval.relative_cutoff", 1.5, "outside"),
    ("retrieval.relative_cutoff", -0.1, "outside"),
    ("retrieval.relative_cutoff", float("nan"), "finite"),
    ("retrieval.relative_cutoff", float("inf"), "finite"),
    ("retrieval.match_strategy", "bm25", "not one of"),
    ("retrieval.match_strategy", 3, "string"),
    ("retrieval.column_weights.title", -1, "outside"),
    ("retrieval.column_weights.body", "heavy", "number"),
    ("retrieval.transcript_context.max_turns", 11, "outside"),
    ("categories.session_summary.retention_days", -5, "outside"),
    ("categories.decision.retention_days", 1.5, "integer"),
    ("retrieval.match_strategy", "title_tags", "was removed (the old keyword matcher"),
    ("index.lock_timeout_s", -1, "outside"),
    ("index.max_file_bytes", 10, "outside"),
    ("watch.debounce_ms", "fast", "number"),
]


class TestBadValues:
    @pytest.mark.parametrize("key, value, words", BAD_VALUES, ids=[f"{k}={v!r}" for k, v, _ in BAD_VALUES])
    def test_one_warning_and_the_default(self, key, value, words):
        cfg = parse_config(nested(key, value))
        assert cfg[key] == DEFAULTS[key] and type(cfg[key]) is type(DEFAULTS[key])
        assert len(cfg.warnings) == 1, cfg.warnings
        assert cfg.warnings[0].startswith(key + ":")
        assert words in cfg.warnings[0]
        # every other value is untouched
        assert {k: v for k, v in cfg.values.items() if k != key} == {k: v for k, v in DEFAULTS.items() if k != key}

    def test_several_bad_values_give_one_warning_each(self):
        cfg = parse_config({
            "retrieval": {"enabled": "no", "search_limit": -1, "max_inject": 4, "column_weights": {"title": "x", "tags": 2}},
            "index": {"lock_timeout_s": "slow"},
        })
        assert len(cfg.warnings) == 4
        assert sorted(w.split(":")[0] for w in cfg.warnings) == [
            "index.lock_timeout_s", "retrieval.column_weights.title", "retrieval.enabled", "retrieval.search_limit",
        ]
        assert cfg["retrieval.max_inject"] == 4 and cfg["retrieval.column_weights.tags"] == 2.0

    @pytest.mark.parametrize("section, value", [
        ("retrieval", 5), ("retrieval", "x"), ("retrieval", []), ("retrieval", None), ("index", True),
    ])
    def test_section_that_is_not_an_object(self, section, value):
        cfg = parse_config({section: value, "watch": {"debounce_ms": 100}})
        assert len(cfg.warnings) == 1 and cfg.warnings[0].startswith(section + ":")
        assert "expected an object" in cfg.warnings[0]
        assert cfg["watch.debounce_ms"] == 100
        assert all(cfg[k] == v for k, v in DEFAULTS.items() if k.startswith(section + "."))

    def test_nested_section_not_an_object(self):
        cfg = parse_config({"retrieval": {"column_weights": [1, 2, 3]}, "categories": {"decision": "keep"}})
        assert sorted(w.split(":")[0] for w in cfg.warnings) == ["categories.decision", "retrieval.column_weights"]
        assert cfg.values == DEFAULTS

    @pytest.mark.parametrize("data", [[], [1, 2], "text", 3, None, True])
    def test_top_level_not_an_object(self, data):
        cfg = parse_config(data)
        assert len(cfg.warnings) == 1 and "expected an object" in cfg.warnings[0]
        assert cfg.values == DEFAULTS


class TestMaxInject:
    @pytest.mark.parametrize("value, expected", [
        (0, 0), (3, 3), (20, 20), (21, 20), (50, 20), (10**12, 20), (-1, 0), (-100, 0), (25.0, 20), (7.0, 7), (-2.0, 0),
    ])
    def test_clamped_to_0_20(self, value, expected):
        cfg = parse_config({"retrieval": {"max_inject": value}})
        assert cfg["retrieval.max_inject"] == expected
        assert isinstance(cfg["retrieval.max_inject"], int)

    @pytest.mark.parametrize("value", ["5", True, None, 2.5, [3], float("nan")])
    def test_wrong_type_warns_and_defaults(self, value):
        cfg = parse_config({"retrieval": {"max_inject": value}})
        assert cfg["retrieval.max_inject"] == DEFAULTS["retrieval.max_inject"]
        assert len(cfg.warnings) == 1 and cfg.warnings[0].startswith("retrieval.max_inject:")


class TestBrokenFiles:
    @pytest.mark.parametrize("content", [
        "{", "{'single': 'quotes'}", '{"retrieval": {"max_inject": 3,}}', "", "   ", "null null",
        b"\xff\xfe\x00garbage", b"\x00\x00\x00\x00", "[" * 100_000 + "]" * 100_000,
    ], ids=["open-brace", "single-quotes", "trailing-comma", "empty", "blank", "two-values", "binary", "nuls", "deep"])
    def test_invalid_json_gives_one_warning_and_defaults(self, memory_root, content):
        write_config(memory_root, content)
        cfg = load_config(memory_root)
        assert len(cfg.warnings) == 1, cfg.warnings
        assert str(memory_root / CONFIG_FILE) in cfg.warnings[0]
        assert cfg.values == DEFAULTS

    def test_invalid_json_names_the_problem(self, memory_root):
        write_config(memory_root, '{\n  "retrieval": {\n    "max_inject": 3,\n  }\n}')
        cfg = load_config(memory_root)
        assert "invalid JSON" in cfg.warnings[0] and "line 4" in cfg.warnings[0]

    @pytest.mark.parametrize("data", [[1, 2], "just a string", 42, None])
    def test_non_object_file(self, memory_root, data):
        (memory_root / CONFIG_FILE).write_text(json.dumps(data))
        cfg = load_config(memory_root)
        assert len(cfg.warnings) == 1 and "expected an object" in cfg.warnings[0]
        assert cfg.values == DEFAULTS

    def test_huge_file(self, memory_root):
        write_config(memory_root, '{"pad": "' + "x" * (1 << 20) + '"}')
        cfg = load_config(memory_root)
        assert len(cfg.warnings) == 1 and "larger than 1048576 bytes" in cfg.warnings[0]
        assert cfg.values == DEFAULTS

    def test_config_path_is_a_directory(self, memory_root):
        (memory_root / CONFIG_FILE).mkdir()
        cfg = load_config(memory_root)
        assert len(cfg.warnings) == 1 and "not a regular file" in cfg.warnings[0]
        assert cfg.values == DEFAULTS

    def test_utf8_bom_is_accepted(self, memory_root):
        write_config(memory_root, b'\xef\xbb\xbf{"retrieval": {"max_inject": 2}}')
        cfg = load_config(memory_root)
        assert cfg.warnings == [] and cfg["retrieval.max_inject"] == 2

    def test_valid_keys_survive_next_to_bad_ones(self, memory_root):
        write_config(memory_root, {"retrieval": {"max_inject": -5, "search_limit": "many", "enabled": False}})
        cfg = load_config(memory_root)
        assert cfg["retrieval.max_inject"] == 0  # clamped
        assert cfg["retrieval.enabled"] is False
        assert cfg["retrieval.search_limit"] == DEFAULTS["retrieval.search_limit"]
        assert [w.split(":")[0] for w in cfg.warnings] == ["retrieval.search_limit"]
