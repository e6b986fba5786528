"""memindex_dev.evaluation.locomo: LoCoMo conversations as judged memory stores.

Built on a tiny synthetic LoCoMo-shaped conversation; the real file (CC BY-NC 4.0, never in
this repository) is used only by the tests that find it at ../shared/data/locomo/."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from memindex_dev.evaluation import locomo

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"

REQUIRED = {
    "schema_version", "category", "id", "title", "created_at", "updated_at", "tags", "content",
    "related_files", "confidence", "record_status", "changes", "times_updated",
    "retired_at", "retired_reason", "archived_at", "archived_reason",
}
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def tiny() -> dict[str, Any]:
    """One conversation in LoCoMo's shape, with the edge formats of the public file."""
    return {
        "sample_id": "conv-t",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I went to a pottery class."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice! I adopted a dog."},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "I also started running."},
            ],
            "session_2_date_time": "12:06 am on 11 November, 2022",
            "session_2": [
                {"speaker": "Bob", "dia_id": "D2:1", "text": "My dog is called Rex."},
                {"speaker": "Ann", "dia_id": "D2:2", "text": "Rex! I ran a marathon."},
                {"speaker": "Bob", "dia_id": "D2:3", "text": "Congrats."},
            ],
            "session_3_date_time": "12:30 pm on 1 January, 2024",  # a date without a session
        },
        "observation": {
            "session_1_observation": {
                "Ann": [
                    ["Ann went to a pottery class and enjoyed shaping clay bowls with friends.", "D1:1"],
                    ["Ann started running in the mornings.", "D1:3"],
                    ["Ann likes pottery and running.", ["D1:1", "D1:3"]],
                ],
                "Bob": [["Bob adopted a dog.", "D1:2"]],
            },
            "session_2_observation": {
                "Bob": [["Bob's dog is called Rex.", "D2:1"]],
                "Ann": [["Ann ran a marathon.", "D2:2, D2:1"]],  # several ids in one string
            },
        },
        "qa": [
            {"question": "What class did Ann take?", "answer": "pottery", "evidence": ["D1:1"], "category": 4},
            {"question": "When did Ann run a marathon?", "answer": "Nov 2022", "evidence": ["D2:2"], "category": 2},
            {"question": "What is Bob's dog called?", "answer": "Rex", "evidence": ["D:2:1"], "category": 1},
            {"question": "What do Ann and Bob both do?", "answer": "-", "evidence": ["D1:3; D1:2"], "category": 3},
            {"question": "What did Bob say last?", "answer": "Congrats", "evidence": ["D2:3"], "category": 4},
            {"question": "What did Ann say?", "answer": "?", "evidence": [], "category": 1},
            {"question": "What did Ann say?", "answer": "?", "evidence": ["D"], "category": 2},
            {"question": "What is Ann's dog called?", "adversarial_answer": "Rex", "evidence": ["D2:1"], "category": 5},
            {"question": "Which dance class did Bob take?", "adversarial_answer": "salsa", "evidence": [], "category": 5},
        ],
    }


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    dest = tmp_path / "conv-3"
    return dest, locomo.build_store(tiny(), dest, conv=3)


def memory_files(dest: Path) -> list[Path]:
    return sorted((dest / ".claude" / "memory").glob("*/*.json"))


def test_one_valid_file_per_fact(built: tuple[Path, list[dict[str, Any]]]) -> None:
    dest, _ = built
    files = memory_files(dest)
    assert len(files) == 6
    ids = []
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        assert REQUIRED <= set(data)
        assert data["schema_version"] == "1.0" and data["category"] == "preference"
        assert f.parent.name == "preferences" and data["id"] == f.stem and SLUG.match(data["id"])
        assert 0 < len(data["title"]) <= 120
        assert ISO.match(data["created_at"]) and data["updated_at"] == data["created_at"]
        assert data["record_status"] == "active"
        assert {"topic", "value"} <= set(data["content"])
        assert data["content"]["value"].startswith(data["title"])  # title: first words, nothing added
        assert all(t == t.lower() for t in data["tags"]) and 1 <= len(data["tags"]) <= 12
        ids.append(data["id"])
    assert len(ids) == len(set(ids))
    # all six category folders exist, as in any store
    assert sorted(p.name for p in (dest / ".claude" / "memory").iterdir()) == sorted(locomo.CATEGORY_FOLDERS)


def test_files_pass_the_project_validator(built: tuple[Path, list[dict[str, Any]]]) -> None:
    schema = pytest.importorskip("memindex.store.schema")
    dest = built[0]
    root = dest / ".claude" / "memory"
    for f in memory_files(dest):
        rel = f.relative_to(root).as_posix()
        assert schema.validate_memory(json.loads(f.read_text(encoding="utf-8")), rel) == [], rel


def test_ids_tags_dates_and_content(built: tuple[Path, list[dict[str, Any]]]) -> None:
    dest = built[0]
    mem = {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in memory_files(dest)}
    assert set(mem) == {"d1-1-f1", "d1-1-f2", "d1-3-f1", "d1-2-f1", "d2-1-f1", "d2-2-f1"}
    assert mem["d1-1-f1"]["tags"] == ["ann", "session-1"]
    assert mem["d1-1-f1"]["created_at"] == "2023-05-08T13:56:00Z"
    assert mem["d2-1-f1"]["tags"] == ["bob", "session-2"]
    assert mem["d2-1-f1"]["created_at"] == "2022-11-11T00:06:00Z"  # 12:06 am is just after midnight
    assert mem["d1-2-f1"]["content"] == {"topic": "Bob", "value": "Bob adopted a dog."}
    assert mem["d1-1-f1"]["title"] == "Ann went to a pottery class and enjoyed"
    assert mem["d1-2-f1"]["title"] == "Bob adopted a dog"


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00Z"),
        ("12:06 am on 11 November, 2022", "2022-11-11T00:06:00Z"),
        ("12:45 am on 8 May, 2022", "2022-05-08T00:45:00Z"),
        ("12:30 pm on 1 January, 2024", "2024-01-01T12:30:00Z"),
        ("11:59 pm on 31 December, 2023", "2023-12-31T23:59:00Z"),
        ("9:05 AM on 2 February, 2023", "2023-02-02T09:05:00Z"),
        ("10:04 am on 19 June, 2023", "2023-06-19T10:04:00Z"),
        ("4:30 p.m. on 9 Sept 2023", "2023-09-09T16:30:00Z"),
        (" 7:00 pm  on  1 Mar,  2022 ", "2022-03-01T19:00:00Z"),
    ],
)
def test_parse_date_time(raw: str, iso: str) -> None:
    assert locomo.parse_date_time(raw) == iso


@pytest.mark.parametrize(
    "raw", ["", "8 May, 2023", "13:00 pm on 8 May, 2023", "0:10 am on 8 May, 2023", "1:60 pm on 8 May, 2023",
            "1:56 pm on 30 February, 2023", "1:56 pm on 8 Mai, 2023", "2023-05-08T13:56:00Z"],
)
def test_parse_date_time_rejects(raw: str) -> None:
    with pytest.raises(ValueError):
        locomo.parse_date_time(raw)


def test_parse_dia_ids() -> None:
    assert locomo.parse_dia_ids("D3:14") == ["D3:14"]
    assert locomo.parse_dia_ids(["D1:3", "D1:3", "D2:1"]) == ["D1:3", "D2:1"]
    assert locomo.parse_dia_ids("D26:14, D26:34, D26:42") == ["D26:14", "D26:34", "D26:42"]
    assert locomo.parse_dia_ids(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert locomo.parse_dia_ids(["D9:1 D4:4 D4:6"]) == ["D9:1", "D4:4", "D4:6"]
    assert locomo.parse_dia_ids(["D:11:26"]) == ["D11:26"]
    assert locomo.parse_dia_ids(["D", "", None, 3]) == []


def test_queries(built: tuple[Path, list[dict[str, Any]]]) -> None:
    dest, queries = built
    by_id = {q["id"]: q for q in queries}
    for q in queries:
        assert set(q) == {"id", "kind", "query", "transcript", "judgments", "note"}
        assert q["transcript"] == []
    # D1:1 is cited by two facts, both judged
    assert by_id["c3-q0"]["kind"] == "locomo-single-hop"
    assert by_id["c3-q0"]["judgments"] == {"preferences/d1-1-f1.json": 2, "preferences/d1-1-f2.json": 2}
    assert by_id["c3-q1"]["kind"] == "locomo-temporal"
    assert by_id["c3-q1"]["judgments"] == {"preferences/d2-2-f1.json": 2}
    # "D:2:1" is D2:1; the marathon fact also cites D2:1 in its "D2:2, D2:1" string
    assert by_id["c3-q2"]["kind"] == "locomo-multi-hop"
    assert by_id["c3-q2"]["judgments"] == {"preferences/d2-1-f1.json": 2, "preferences/d2-2-f1.json": 2}
    assert by_id["c3-q3"]["kind"] == "locomo-open-domain"
    assert set(by_id["c3-q3"]["judgments"]) == {
        "preferences/d1-3-f1.json", "preferences/d1-1-f2.json", "preferences/d1-2-f1.json"}
    # judgments point at files that exist
    root = dest / ".claude" / "memory"
    for q in queries:
        for path, grade in q["judgments"].items():
            assert grade == 2 and (root / path).is_file(), path


def test_questions_without_facts_are_skipped(built: tuple[Path, list[dict[str, Any]]]) -> None:
    ids = [q["id"] for q in built[1]]
    assert "c3-q4" not in ids  # evidence D2:3 has no fact
    assert "c3-q5" not in ids  # no evidence
    assert "c3-q6" not in ids  # unreadable evidence "D"
    assert ids == ["c3-q0", "c3-q1", "c3-q2", "c3-q3", "c3-q7", "c3-q8"]


def test_adversarial_becomes_negative(built: tuple[Path, list[dict[str, Any]]]) -> None:
    by_id = {q["id"]: q for q in built[1]}
    for qid in ("c3-q7", "c3-q8"):  # with and without a fact behind the evidence
        assert by_id[qid]["kind"] == "negative"
        assert by_id[qid]["judgments"] == {}
    assert "preferences/d2-1-f1.json" in by_id["c3-q7"]["note"]  # the trap fact is named


def test_refuses_a_used_store(built: tuple[Path, list[dict[str, Any]]]) -> None:
    with pytest.raises(FileExistsError):
        locomo.build_store(tiny(), built[0], conv=3)


def test_unknown_category_and_missing_date_are_errors(tmp_path: Path) -> None:
    conv = tiny()
    conv["qa"].append({"question": "?", "answer": "?", "evidence": [], "category": 9})
    with pytest.raises(ValueError):
        locomo.build_store(conv, tmp_path / "a")
    conv = tiny()
    del conv["conversation"]["session_2_date_time"]
    with pytest.raises(ValueError):
        locomo.build_store(conv, tmp_path / "b")


def test_build_all_and_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    second = copy.deepcopy(tiny())
    second["sample_id"] = "conv-u"
    src = tmp_path / "locomo.json"
    src.write_text(json.dumps([tiny(), second]), encoding="utf-8")
    assert locomo.main([str(src), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "conv-0\t6\t6\t" in out and "total\t12\t12\t" in out
    for i in range(2):
        queries = json.loads((tmp_path / "out" / f"conv-{i}" / "queries.json").read_text(encoding="utf-8"))
        assert [q["id"] for q in queries][0] == f"c{i}-q0"
        assert f"conv-{'tu'[i]}" in queries[0]["note"]
        assert len(memory_files(tmp_path / "out" / f"conv-{i}")) == 6
    stores = locomo.build_all(src, tmp_path / "again")
    assert sorted(stores) == ["conv-0", "conv-1"]


# --- the real file, only where it is present -------------------------------------------------

real = pytest.mark.skipif(not REAL.is_file(), reason=f"LoCoMo not found at {REAL}")


@real
def test_real_dates_all_parse() -> None:
    values = [
        v for conv in locomo.load(REAL) for k, v in conv["conversation"].items() if re.match(r"session_\d+_date_time$", k)
    ]
    assert len(values) > 250
    for value in values:
        assert ISO.match(locomo.parse_date_time(value)), value


@real
def test_real_counts(tmp_path: Path) -> None:
    stores = locomo.build_all(REAL, tmp_path)
    assert sorted(stores) == [f"conv-{i}" for i in range(10)]
    memories = {name: memory_files(tmp_path / name) for name in stores}
    assert sum(len(m) for m in memories.values()) == 2541
    assert all(169 <= len(m) <= 324 for m in memories.values())
    queries = [q for qs in stores.values() for q in qs]
    judged = [q for q in queries if q["judgments"]]
    negative = [q for q in queries if q["kind"] == "negative"]
    assert len(judged) == 1312  # categories 1-4 with at least one evidence fact (of 1,540)
    assert len(negative) == 446  # every adversarial question (364 of them cite a fact)
    assert len(queries) == len(judged) + len(negative) == 1758
    assert len({q["id"] for q in queries}) == len(queries)
    for name, qs in stores.items():
        root = tmp_path / name / ".claude" / "memory"
        ids = [f.stem for f in memories[name]]
        assert len(ids) == len(set(ids))
        for q in qs:
            assert all((root / p).is_file() for p in q["judgments"])
