"""store.py and schema.py: validating, extracting and tolerantly reading memory files."""

from __future__ import annotations

import json

import pytest

from conftest import make_memory, write_json, write_mem, write_raw
from memindex.store import schema
from memindex.store import files as store
from memindex.defaults import CATEGORIES, CATEGORY_FOLDER
from memindex.store.files import MemoryFileError, extract_body, load_memory, parse_json, read_bytes, to_memory

RICH_CONTENT = {
    "session_summary": {
        "goal": "goalword", "outcome": "partial", "completed": ["completedword"],
        "in_progress": ["progressword"], "blockers": ["blockerword"],
        "next_actions": ["nextword"], "key_changes": ["changeword"],
    },
    "decision": {
        "status": "superseded", "context": "contextword", "decision": "decisionword",
        "alternatives": [{"option": "optionword", "rejected_reason": "rejectedword"}],
        "rationale": ["rationaleword"], "consequences": ["consequenceword"],
    },
    "runbook": {
        "trigger": "triggerword", "symptoms": ["symptomword"], "steps": ["stepone", "steptwo"],
        "verification": "verifyword", "root_cause": "causeword", "environment": "envword",
    },
    "constraint": {
        "kind": "limitation", "rule": "ruleword", "impact": ["impactword"],
        "workarounds": ["workaroundword"], "severity": "high", "active": True,
        "expires": "2027-01-01",
    },
    "tech_debt": {
        "status": "in_progress", "priority": "critical", "description": "descword",
        "reason_deferred": "deferword", "impact": ["impactword"], "suggested_fix": ["fixword"],
        "acceptance_criteria": ["criteriaword"],
    },
    "preference": {
        "topic": "topicword", "value": "valueword", "reason": "reasonword", "strength": "strong",
        "examples": {"prefer": ["preferword"], "avoid": ["avoidword"]},
    },
}

TEXT_WORDS = {
    "session_summary": ["goalword", "completedword", "progressword", "blockerword", "nextword", "changeword"],
    "decision": ["contextword", "decisionword", "optionword", "rejectedword", "rationaleword", "consequenceword"],
    "runbook": ["triggerword", "symptomword", "stepone", "steptwo", "verifyword", "causeword", "envword"],
    "constraint": ["ruleword", "impactword", "workaroundword"],
    "tech_debt": ["descword", "deferword", "impactword", "fixword", "criteriaword"],
    "preference": ["topicword", "valueword", "reasonword", "preferword", "avoidword"],
}

ENUM_VALUES = {
    "session_summary": ["partial"],
    "decision": ["superseded"],
    "runbook": [],
    "constraint": ["limitation", "high", "2027-01-01", "True"],
    "tech_debt": ["in_progress", "critical"],
    "preference": ["strong"],
}


def valid(category: str, id: str = "sample") -> dict:
    return make_memory(category, id, "A sample title", ["alpha", "beta"], RICH_CONTENT[category])


def rel(category: str, id: str = "sample") -> str:
    return f"{CATEGORY_FOLDER[category]}/{id}.json"


# --- schema.validate_memory -------------------------------------------------------------


class TestValidate:
    @pytest.mark.parametrize("category", CATEGORIES)
    def test_valid_file_has_no_problems(self, category):
        assert schema.validate_memory(valid(category), rel(category)) == []

    @pytest.mark.parametrize("category", CATEGORIES)
    @pytest.mark.parametrize("field", ["title", "tags", "created_at", "updated_at", "content", "record_status", "schema_version"])
    def test_missing_top_level_field(self, category, field):
        data = valid(category)
        del data[field]
        problems = schema.validate_memory(data, rel(category))
        assert problems == [f"missing field '{field}'"]

    @pytest.mark.parametrize(
        "category, field",
        [
            ("session_summary", "goal"), ("session_summary", "outcome"),
            ("decision", "status"), ("decision", "context"), ("decision", "decision"),
            ("runbook", "trigger"), ("runbook", "steps"),
            ("constraint", "kind"), ("constraint", "rule"), ("constraint", "severity"),
            ("tech_debt", "status"), ("tech_debt", "priority"), ("tech_debt", "description"),
            ("preference", "topic"), ("preference", "value"),
        ],
    )
    def test_missing_content_field(self, category, field):
        data = valid(category)
        del data["content"][field]
        assert schema.validate_memory(data, rel(category)) == [f"missing field '{field}' in content"]

    @pytest.mark.parametrize(
        "category, field, allowed",
        [
            ("session_summary", "outcome", "success, partial, blocked, abandoned"),
            ("decision", "status", "proposed, accepted, deprecated, superseded"),
            ("constraint", "kind", "limitation, gap, policy, technical"),
            ("constraint", "severity", "high, medium, low"),
            ("tech_debt", "status", "open, in_progress, resolved, wont_fix"),
            ("tech_debt", "priority", "critical, high, medium, low"),
            ("preference", "strength", "strong, default, soft"),
        ],
    )
    def test_bad_content_enum(self, category, field, allowed):
        data = valid(category)
        data["content"][field] = "sometimes"
        assert schema.validate_memory(data, rel(category)) == [
            f"bad value for 'content.{field}': 'sometimes' (expected one of {allowed})"
        ]

    def test_bad_record_status(self):
        data = valid("decision")
        data["record_status"] = "deleted"
        assert schema.validate_memory(data, rel("decision")) == [
            "bad value for 'record_status': 'deleted' (expected one of active, retired, archived)"
        ]

    def test_bad_schema_version(self):
        data = valid("runbook")
        data["schema_version"] = "2.0"
        assert schema.validate_memory(data, rel("runbook")) == ["bad value for 'schema_version': '2.0' (expected '1.0')"]

    def test_unknown_category(self):
        data = valid("decision")
        data["category"] = "note"
        problems = schema.validate_memory(data, rel("decision"))
        assert problems == [
            "bad value for 'category': 'note' (expected one of session_summary, decision, runbook, "
            "constraint, tech_debt, preference)"
        ]

    def test_missing_category(self):
        data = valid("decision")
        del data["category"]
        assert schema.validate_memory(data, rel("decision")) == ["missing field 'category'"]

    def test_id_does_not_match_file_name(self):
        data = valid("decision", id="jwt-over-cookies")
        problems = schema.validate_memory(data, "decisions/jwt.json")
        assert problems == ["id 'jwt-over-cookies' does not match the file name 'jwt.json'"]

    def test_file_outside_its_category_folder(self):
        data = valid("decision")
        problems = schema.validate_memory(data, "runbooks/sample.json")
        assert problems == [
            "file is outside its category folder: decision belongs in decisions/, not runbooks/"
        ]

    def test_id_not_a_slug(self):
        data = valid("decision", id="Bad_Id")
        assert schema.validate_memory(data, "decisions/Bad_Id.json") == ["'id' is not a lowercase slug: 'Bad_Id'"]

    def test_timestamp_not_iso_utc(self):
        data = valid("decision")
        data["created_at"] = "2026-02-10 14:03"
        assert schema.validate_memory(data, rel("decision")) == [
            "'created_at' is not an ISO 8601 UTC timestamp: '2026-02-10 14:03'"
        ]

    def test_retired_without_retired_at(self):
        data = make_memory("decision", "sample", "T", ["a"], record_status="retired", retired_at=None)
        assert schema.validate_memory(data, rel("decision")) == ["record_status is 'retired' but 'retired_at' is not set"]

    def test_archived_without_archived_at(self):
        data = make_memory("decision", "sample", "T", ["a"], record_status="archived", archived_at=None)
        assert schema.validate_memory(data, rel("decision")) == ["record_status is 'archived' but 'archived_at' is not set"]

    def test_title_too_long_and_tags_bounds(self):
        data = valid("preference")
        data["title"] = "x" * 121
        data["tags"] = []
        problems = schema.validate_memory(data, rel("preference"))
        assert len(problems) == 2
        assert any(p.startswith("'title':") for p in problems)
        assert any(p.startswith("'tags':") for p in problems)
        data = valid("preference")
        data["tags"] = [f"t{i}" for i in range(13)]
        assert [p.split(":")[0] for p in schema.validate_memory(data, rel("preference"))] == ["'tags'"]

    def test_confidence_out_of_range(self):
        data = valid("decision")
        data["confidence"] = 1.5
        problems = schema.validate_memory(data, rel("decision"))
        assert len(problems) == 1 and problems[0].startswith("'confidence':")

    def test_runbook_needs_a_step(self):
        data = valid("runbook")
        data["content"]["steps"] = []
        problems = schema.validate_memory(data, rel("runbook"))
        assert len(problems) == 1 and problems[0].startswith("'content.steps':")

    def test_wrong_type_in_nested_list(self):
        data = valid("preference")
        data["content"]["examples"] = {"prefer": "not a list"}
        problems = schema.validate_memory(data, rel("preference"))
        assert len(problems) == 1 and problems[0].startswith("'content.examples.prefer':")

    def test_several_problems_are_all_reported(self):
        data = valid("decision", id="other")
        del data["title"]
        data["content"]["status"] = "maybe"
        problems = schema.validate_memory(data, "runbooks/sample.json")
        assert "missing field 'title'" in problems
        assert any(p.startswith("bad value for 'content.status'") for p in problems)
        assert any(p.startswith("file is outside its category folder") for p in problems)
        assert "id 'other' does not match the file name 'sample.json'" in problems
        assert len(problems) == 4

    @pytest.mark.parametrize("value, kind", [([1, 2], "list"), ("text", "str"), (None, "NoneType"), (3, "int")])
    def test_non_object(self, value, kind):
        assert schema.validate_memory(value, "decisions/x.json") == [f"top level is {kind}, expected an object"]

    def test_extra_keys_are_allowed(self):
        data = valid("decision")
        data["x_custom"] = {"anything": 1}
        data["content"]["notes"] = "free text"
        assert schema.validate_memory(data, rel("decision")) == []

    # Rules stated in docs/memory-format.md that the JSON Schema does not express.

    def test_uppercase_tag_is_reported(self):
        """memory-format.md: `tags`: list of 1..12 *lowercase* strings."""
        data = valid("decision")
        data["tags"] = ["Auth", "jwt"]
        problems = schema.validate_memory(data, rel("decision"))
        assert len(problems) == 1 and "tags" in problems[0]

    def test_updated_before_created_is_reported(self):
        """memory-format.md: updated_at >= created_at."""
        data = valid("decision")
        data["created_at"] = "2026-03-01T00:00:00Z"
        data["updated_at"] = "2026-01-01T00:00:00Z"
        problems = schema.validate_memory(data, rel("decision"))
        assert len(problems) == 1 and "updated_at" in problems[0]


class TestSchemaDocument:
    @pytest.mark.parametrize("category", CATEGORIES)
    def test_schema_is_a_valid_json_schema(self, category):
        from jsonschema import Draft202012Validator

        doc = schema.memory_schema(category)
        Draft202012Validator.check_schema(doc)
        assert doc["properties"]["category"] == {"const": category}
        assert set(doc["required"]) >= {"schema_version", "category", "id", "title", "tags", "content"}
        json.dumps(doc)  # serializable for `memindex schema`

    def test_all_schemas(self):
        assert sorted(schema.all_schemas()) == sorted(CATEGORIES)


# --- store.extract_body -----------------------------------------------------------------


class TestExtractBody:
    @pytest.mark.parametrize("category", CATEGORIES)
    def test_all_text_fields_are_included(self, category):
        body = extract_body(category, RICH_CONTENT[category])
        lines = body.split("\n")
        for word in TEXT_WORDS[category]:
            assert word in lines, f"{word} missing from {category} body {body!r}"

    @pytest.mark.parametrize("category", CATEGORIES)
    def test_enum_fields_are_left_out(self, category):
        body = extract_body(category, RICH_CONTENT[category])
        for value in ENUM_VALUES[category]:
            assert value not in body, f"enum value {value!r} leaked into the {category} body"

    def test_decision_alternatives_option_and_reason(self):
        body = extract_body(
            "decision",
            {
                "status": "accepted", "context": "ctx", "decision": "dec",
                "alternatives": [
                    {"option": "Redis sessions", "rejected_reason": "extra infrastructure"},
                    {"option": "Opaque tokens"},
                ],
            },
        )
        assert body.split("\n") == ["ctx", "dec", "Redis sessions", "extra infrastructure", "Opaque tokens"]

    def test_preference_examples_prefer_and_avoid(self):
        body = extract_body(
            "preference",
            {"topic": "quotes", "value": "double", "strength": "strong",
             "examples": {"prefer": ['"a"', '"b"'], "avoid": ["'c'"]}},
        )
        assert body.split("\n") == ["quotes", "double", '"a"', '"b"', "'c'"]

    def test_known_fields_come_first_then_unknown_text(self):
        body = extract_body("runbook", {"extra_notes": "zzz last", "steps": ["one"], "trigger": "first"})
        assert body.split("\n") == ["first", "one", "zzz last"]

    def test_blank_strings_and_non_strings_are_skipped(self):
        body = extract_body("session_summary", {"goal": "  ", "completed": ["", "done", 3, None, True], "outcome": "success"})
        assert body == "done"

    def test_non_dict_content_still_yields_text(self):
        assert extract_body("decision", ["one", {"x": "two"}]) == "one\ntwo"
        assert extract_body("decision", "just text") == "just text"
        assert extract_body("decision", None) == ""

    def test_deep_nesting_does_not_recurse_forever(self):
        value: object = "bottom"
        for _ in range(5000):
            value = [value]
        body = extract_body("decision", {"context": "top", "notes": value})
        assert body.split("\n")[0] == "top"


# --- store.to_memory (tolerant) ----------------------------------------------------------


class TestToMemory:
    def test_valid_file(self):
        data = valid("decision", id="jwt")
        data["related_files"] = ["api/auth.py"]
        data["tags"] = ["Auth", " jwt "]
        mem = to_memory("decisions/jwt.json", data)
        assert mem.path == "decisions/jwt.json"
        assert mem.id == "jwt"
        assert mem.category == "decision"
        assert mem.title == "A sample title"
        assert mem.tags == ["auth", "jwt"]
        assert mem.record_status == "active"
        assert mem.related_files == ["api/auth.py"]
        assert mem.confidence == 0.8
        assert mem.problems == []
        assert "decisionword" in mem.body

    def test_category_and_title_are_enough(self):
        mem = to_memory("decisions/bare.json", {"category": "decision", "title": "  Bare minimum  "})
        assert (mem.id, mem.title, mem.tags, mem.body, mem.record_status) == ("bare", "Bare minimum", [], "", "active")
        assert mem.problems == ["missing field 'id'"]

    def test_wrong_fields_are_tolerated_and_noted(self):
        data = {
            "category": "decision",
            "title": "Still indexed",
            "id": "other-name",
            "tags": "single-tag",
            "content": "free text content",
            "record_status": "deleted",
            "confidence": "high",
            "created_at": 12,
            "related_files": [1, "a.py"],
        }
        mem = to_memory("runbooks/thing.json", data)
        assert mem.title == "Still indexed"
        assert mem.category == "decision"
        assert mem.tags == ["single-tag"]
        assert mem.body == "free text content"
        assert mem.record_status == "active"
        assert mem.confidence is None
        assert mem.created_at == ""
        assert mem.related_files == ["a.py"]
        assert any("belongs in decisions/" in p for p in mem.problems)
        assert any("does not match the file name" in p for p in mem.problems)
        assert any("record_status" in p for p in mem.problems)

    @pytest.mark.parametrize(
        "data, message",
        [
            ({"title": "x"}, "missing field 'category'"),
            ({"category": "", "title": "x"}, "missing field 'category'"),
            ({"category": "notes", "title": "x"}, "bad value for 'category'"),
            ({"category": "decision"}, "missing field 'title'"),
            ({"category": "decision", "title": "   "}, "missing field 'title'"),
            ({"category": "decision", "title": 5}, "missing field 'title'"),
        ],
    )
    def test_unindexable(self, data, message):
        with pytest.raises(MemoryFileError, match=message):
            to_memory("decisions/x.json", data)

    @pytest.mark.parametrize("value, kind", [([], "list"), ("s", "str"), (1.5, "float"), (None, "NoneType"), (True, "bool")])
    def test_non_object_json(self, value, kind):
        with pytest.raises(MemoryFileError, match=f"top level is {kind}, expected an object"):
            to_memory("decisions/x.json", value)

    def test_boolean_confidence_is_ignored(self):
        mem = to_memory("decisions/x.json", {"category": "decision", "title": "t", "confidence": True})
        assert mem.confidence is None


# --- parse_json / read_bytes / load_memory ----------------------------------------------


class TestParsing:
    def test_json_error_has_line_and_column(self):
        text = '{\n  "category": "decision",\n  "title": "x",,\n}'
        with pytest.raises(MemoryFileError) as exc:
            parse_json(text.encode())
        assert str(exc.value).startswith("invalid JSON:")
        assert "line 3 column 16" in str(exc.value)

    def test_truncated_json(self):
        with pytest.raises(MemoryFileError, match=r"invalid JSON: .* at line 1 column \d+"):
            parse_json(b'{"category": "decision", "title": "x"')

    def test_empty_file(self):
        with pytest.raises(MemoryFileError, match="invalid JSON: .* line 1 column 1"):
            parse_json(b"")

    def test_nul_bytes_are_binary(self):
        with pytest.raises(MemoryFileError, match="binary file"):
            parse_json(b'{"title": "a\x00b"}')

    def test_random_binary(self):
        with pytest.raises(MemoryFileError):
            parse_json(bytes(range(256)) * 4)

    def test_not_utf8(self):
        with pytest.raises(MemoryFileError, match=r"not UTF-8: invalid byte at offset 11"):
            parse_json(b'{"title": "\xff\xfe"}')

    def test_utf8_bom_is_accepted(self):
        assert parse_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}

    def test_deeply_nested_json(self):
        with pytest.raises(MemoryFileError, match="invalid JSON"):
            parse_json(b"[" * 200_000 + b"]" * 200_000)

    def test_file_over_size_limit(self, memory_root):
        path = write_mem(memory_root, "decision", "big", "Big", ["a"], {"context": "x" * 5000})
        size = path.stat().st_size
        with pytest.raises(MemoryFileError, match=f"file is {size} bytes, over the 2000-byte limit"):
            read_bytes(memory_root, "decisions/big.json", 2000)
        data, st = read_bytes(memory_root, "decisions/big.json", size)
        assert len(data) == size and st.size == size

    def test_load_memory_reads_and_converts(self, memory_root):
        write_mem(memory_root, "runbook", "fix-ci", "Fix CI", ["ci"], {"steps": ["rerun the job"]})
        mem, st = load_memory(memory_root, "runbooks/fix-ci.json", 1 << 20)
        assert mem.title == "Fix CI" and "rerun the job" in mem.body
        assert st.size == (memory_root / "runbooks/fix-ci.json").stat().st_size

    def test_load_memory_errors(self, memory_root):
        write_raw(memory_root, "decisions/bad.json", '{"category": "decision",\n "title": }')
        with pytest.raises(MemoryFileError, match="line 2 column 11"):
            load_memory(memory_root, "decisions/bad.json", 1 << 20)
        write_raw(memory_root, "decisions/bin.json", b"\x00\x01\x02binary")
        with pytest.raises(MemoryFileError, match="binary"):
            load_memory(memory_root, "decisions/bin.json", 1 << 20)
        write_json(memory_root, "decisions/list.json", [1, 2])
        with pytest.raises(MemoryFileError, match="top level is list"):
            load_memory(memory_root, "decisions/list.json", 1 << 20)
        with pytest.raises(MemoryFileError, match="cannot open"):
            load_memory(memory_root, "decisions/missing.json", 1 << 20)

    def test_symlink_out_of_root_is_refused(self, memory_root, tmp_path):
        outside = tmp_path / "outside.json"
        outside.write_text(json.dumps(make_memory("decision", "outside", "Secret", ["a"])))
        (memory_root / "decisions" / "outside.json").symlink_to(outside)
        with pytest.raises(MemoryFileError, match="leaves the memory root"):
            read_bytes(memory_root, "decisions/outside.json", 1 << 20)

    def test_iter_memories_reports_each_file(self, memory_root):
        write_mem(memory_root, "decision", "good", "Good", ["a"])
        write_raw(memory_root, "decisions/bad.json", "{")
        out = {rel: (mem is not None, err) for rel, mem, err in store.iter_memories(memory_root, 1 << 20)}
        assert out["decisions/good.json"] == (True, None)
        assert out["decisions/bad.json"][0] is False and "invalid JSON" in out["decisions/bad.json"][1]
