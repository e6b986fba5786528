"""sync.py and index.py: incremental sync, index.md, rebuild, corruption, concurrency, kills."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import time
import unicodedata
from pathlib import Path

import pytest

from conftest import (
    bump_clock,
    cli_cmd,
    cli_env,
    doc_rows,
    index_snapshot,
    invalid_rows,
    make_memory,
    populate,
    remove_index,
    search_paths,
    write_json,
    write_mem,
    write_raw,
)
from memindex import index
from memindex.index import sync as sync_mod
from memindex.config import parse_config
from memindex.defaults import INDEX_FILE, INDEX_VERSION, LOCK_FILE
from memindex.index.sync import LockTimeout, sync

QUERIES = ["postgres", "redis cache", "deploy rollback canary", "jwt token rotation", "note 7", "kafka"]


def paths_of(root) -> list[str]:
    return [row[0] for row in doc_rows(root)]


def counts(report) -> tuple[int, int, int]:
    return report.added, report.updated, report.removed


@pytest.fixture
def settled(monkeypatch):
    """Files as if written longer ago than the racy-timestamp window (a clock with fine
    ticks): a second sync re-reads nothing. The rule itself: tests/test_freshness.py."""
    monkeypatch.setattr(sync_mod, "RACY_WINDOW_NS", 0)


def count_reads(monkeypatch) -> list[str]:
    """Record every file sync reads (load_memory calls)."""
    seen: list[str] = []
    real = sync_mod.load_memory

    def spy(root, rel, max_bytes):
        seen.append(rel)
        return real(root, rel, max_bytes)

    monkeypatch.setattr(sync_mod, "load_memory", spy)
    return seen


# --- adds, modifies, deletes, renames ------------------------------------------------------


class TestIncremental:
    def test_first_sync_adds_everything(self, memory_root):
        write_mem(memory_root, "decision", "jwt", "Chose JWT over cookies", ["auth"])
        write_mem(memory_root, "runbook", "fix-ci", "Fix flaky CI", ["ci"], {"steps": ["rerun"]})
        write_mem(memory_root, "preference", "quotes", "Double quotes", ["style"])
        report = sync(memory_root)
        assert counts(report) == (3, 0, 0)
        assert report.invalid == 0
        assert report.rebuilt == "index was missing"
        assert paths_of(memory_root) == ["decisions/jwt.json", "preferences/quotes.json", "runbooks/fix-ci.json"]
        assert (memory_root / INDEX_FILE).is_file()

    def test_empty_store(self, memory_root):
        report = sync(memory_root)
        assert counts(report) == (0, 0, 0)
        assert doc_rows(memory_root) == []
        assert (memory_root / "index.md").read_text().count("\n- [") == 0

    def test_second_sync_is_idempotent(self, memory_root, monkeypatch, settled):
        populate(memory_root, 30)
        write_raw(memory_root, "decisions/broken.json", "{")
        first = sync(memory_root)
        assert counts(first) == (30, 0, 0) and first.invalid == 1
        before = index_snapshot(memory_root, QUERIES)
        md_before = (memory_root / "index.md").stat().st_mtime_ns
        reads = count_reads(monkeypatch)
        second = sync(memory_root)
        assert counts(second) == (0, 0, 0)
        assert second.rebuilt is None and not second.changed
        assert second.problems == {}
        assert second.invalid == 1
        assert reads == []  # nothing was re-read
        assert index_snapshot(memory_root, QUERIES) == before
        assert (memory_root / "index.md").stat().st_mtime_ns == md_before  # not rewritten

    def test_modify(self, memory_root):
        path = write_mem(memory_root, "decision", "db", "Chose postgres", ["db"], {"context": "relational data"})
        sync(memory_root)
        write_mem(memory_root, "decision", "db", "Chose cockroachdb", ["db"], {"context": "relational data"})
        report = sync(memory_root)
        assert counts(report) == (0, 1, 0)
        assert doc_rows(memory_root) == [("decisions/db.json", "Chose cockroachdb", ["db"], "active")]
        assert search_paths(memory_root, "cockroachdb") == ["decisions/db.json"]
        assert search_paths(memory_root, "postgres") == []
        assert path.exists()

    def test_delete(self, memory_root):
        write_mem(memory_root, "decision", "keep", "Keep me", ["a"])
        gone = write_mem(memory_root, "runbook", "gone", "Restart kafka brokers", ["kafka"])
        sync(memory_root)
        gone.unlink()
        report = sync(memory_root)
        assert counts(report) == (0, 0, 1)
        assert paths_of(memory_root) == ["decisions/keep.json"]
        assert search_paths(memory_root, "kafka brokers") == []
        assert "gone.json" not in (memory_root / "index.md").read_text()

    def test_rename(self, memory_root):
        old = write_mem(memory_root, "runbook", "restart-kafka", "Restart kafka brokers", ["kafka"])
        sync(memory_root)
        old.rename(memory_root / "runbooks" / "kafka-restart.json")
        report = sync(memory_root)
        assert counts(report) == (1, 0, 1)
        assert paths_of(memory_root) == ["runbooks/kafka-restart.json"]
        assert search_paths(memory_root, "kafka") == ["runbooks/kafka-restart.json"]
        md = (memory_root / "index.md").read_text()
        assert "runbooks/kafka-restart.json" in md and "restart-kafka.json" not in md

    def test_move_between_folders(self, memory_root):
        old = write_mem(memory_root, "decision", "x", "Misfiled decision", ["a"], folder="runbooks")
        sync(memory_root)
        assert paths_of(memory_root) == ["runbooks/x.json"]
        old.rename(memory_root / "decisions" / "x.json")
        assert counts(sync(memory_root)) == (1, 0, 1)
        assert paths_of(memory_root) == ["decisions/x.json"]

    def test_mixed_changes_in_one_sync(self, memory_root):
        populate(memory_root, 12)
        sync(memory_root)
        (memory_root / "decisions" / "m00001.json").unlink()
        write_mem(memory_root, "runbook", "m00002", "Rewritten title", ["a"])
        write_mem(memory_root, "tech_debt", "new-one", "New debt", ["a"])
        report = sync(memory_root)
        assert counts(report) == (1, 1, 1)
        assert len(doc_rows(memory_root)) == 12

    def test_same_mtime_different_size_is_reread(self, memory_root):
        path = write_mem(memory_root, "decision", "x", "Original title", ["a"])
        sync(memory_root)
        st = path.stat()
        write_mem(memory_root, "decision", "x", "A considerably longer replacement title", ["a"])
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size != st.st_size
        report = sync(memory_root)
        assert counts(report) == (0, 1, 0)
        assert doc_rows(memory_root)[0][1] == "A considerably longer replacement title"

    def test_same_mtime_same_size_is_reread_via_ctime(self, memory_root):
        path = write_mem(memory_root, "decision", "x", "Title alpha", ["a"])
        sync(memory_root)
        st = path.stat()
        bump_clock()
        write_mem(memory_root, "decision", "x", "Title omega", ["a"])
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert (path.stat().st_mtime_ns, path.stat().st_size) == (st.st_mtime_ns, st.st_size)
        assert counts(sync(memory_root)) == (0, 1, 0)
        assert doc_rows(memory_root)[0][1] == "Title omega"

    def test_touch_without_change_counts_as_update(self, memory_root):
        path = write_mem(memory_root, "decision", "x", "Title", ["a"])
        sync(memory_root)
        before = doc_rows(memory_root)
        bump_clock()
        os.utime(path)
        report = sync(memory_root)
        assert (report.added, report.removed, report.invalid) == (0, 0, 0)
        assert doc_rows(memory_root) == before
        assert counts(sync(memory_root)) == (0, 0, 0)

    def test_status_change_to_retired(self, memory_root):
        write_mem(memory_root, "decision", "x", "Old decision", ["a"])
        sync(memory_root)
        write_mem(memory_root, "decision", "x", "Old decision", ["a"], record_status="retired")
        assert counts(sync(memory_root)) == (0, 1, 0)
        assert doc_rows(memory_root)[0][3] == "retired"

    def test_is_stale_follows_folder_changes(self, memory_root, settled):
        sync(memory_root)
        conn = index.open_reader(memory_root)
        try:
            assert not index.is_stale(conn, memory_root)
            bump_clock()
            write_mem(memory_root, "decision", "x", "New", ["a"])
            assert index.is_stale(conn, memory_root)
        finally:
            conn.close()
        sync(memory_root)
        conn = index.open_reader(memory_root)
        try:
            assert not index.is_stale(conn, memory_root)
        finally:
            conn.close()

    def test_only_given_paths(self, memory_root):
        sync(memory_root)  # an index exists: a one-file sync on a missing index would index all
        write_mem(memory_root, "decision", "a", "First", ["a"])
        write_mem(memory_root, "decision", "b", "Second", ["a"])
        report = sync(memory_root, only=["decisions/a.json", "../outside.json", "decisions/../x.json", "notes/a.json"])
        assert counts(report) == (1, 0, 0)
        assert paths_of(memory_root) == ["decisions/a.json"]
        assert counts(sync(memory_root)) == (1, 0, 0)

    def test_explicit_rebuild_rereads_everything(self, memory_root, monkeypatch):
        populate(memory_root, 10)
        sync(memory_root)
        reads = count_reads(monkeypatch)
        report = sync(memory_root, rebuild=True)
        assert report.rebuilt == "requested"
        assert counts(report) == (10, 0, 0)
        assert len(reads) == 10


# --- invalid and unreadable files ----------------------------------------------------------


class TestInvalid:
    def test_invalid_files_counted_reported_and_not_reread(self, memory_root, monkeypatch, settled):
        write_mem(memory_root, "decision", "good", "Good one", ["a"])
        write_raw(memory_root, "decisions/bad-json.json", '{"category": "decision",\n "title": ,}')
        write_raw(memory_root, "decisions/binary.json", b"\x00\x01\x02\x03")
        write_json(memory_root, "decisions/no-title.json", {"category": "decision"})
        write_json(memory_root, "decisions/array.json", [1, 2, 3])
        report = sync(memory_root)
        assert counts(report) == (1, 0, 0)
        assert report.invalid == 4
        assert set(report.problems) == {
            "decisions/bad-json.json", "decisions/binary.json", "decisions/no-title.json", "decisions/array.json",
        }
        assert "line 2 column 11" in report.problems["decisions/bad-json.json"]
        assert "binary" in report.problems["decisions/binary.json"]
        assert report.problems["decisions/no-title.json"] == "missing field 'title'"
        assert report.problems["decisions/array.json"] == "top level is list, expected an object"
        assert invalid_rows(memory_root) == report.problems
        assert paths_of(memory_root) == ["decisions/good.json"]

        reads = count_reads(monkeypatch)
        again = sync(memory_root)
        assert reads == []
        assert again.problems == {} and again.invalid == 4

        # fixed: read again and indexed
        write_mem(memory_root, "decision", "no-title", "Now it has one", ["a"])
        fixed = sync(memory_root)
        assert reads == ["decisions/no-title.json"]
        assert counts(fixed) == (1, 0, 0) and fixed.invalid == 3
        assert "decisions/no-title.json" in paths_of(memory_root)

        # deleted: forgotten
        (memory_root / "decisions" / "binary.json").unlink()
        gone = sync(memory_root)
        assert gone.invalid == 2
        assert "decisions/binary.json" not in invalid_rows(memory_root)

    def test_tolerant_file_is_indexed(self, memory_root):
        """A file with a category and a title is indexed even when the rest is wrong."""
        write_json(memory_root, "decisions/bare.json", {"category": "decision", "title": "Bare zebra crossing"})
        write_json(memory_root, "decisions/sloppy.json", {
            "category": "decision", "title": "Sloppy okapi", "id": "Not A Slug", "tags": "one",
            "record_status": "whatever", "content": ["free", "okapi text"], "confidence": "high",
        })
        report = sync(memory_root)
        assert counts(report) == (2, 0, 0) and report.invalid == 0 and report.problems == {}
        assert search_paths(memory_root, "zebra") == ["decisions/bare.json"]
        assert search_paths(memory_root, "okapi") == ["decisions/sloppy.json"]
        assert dict((p, s) for p, _, _, s in doc_rows(memory_root)) == {
            "decisions/bare.json": "active", "decisions/sloppy.json": "active",
        }

    def test_file_over_the_size_limit_is_invalid(self, memory_root):
        write_mem(memory_root, "decision", "big", "Big", ["a"], {"context": "word " * 1000})
        cfg = parse_config({"index": {"max_file_bytes": 2048}})
        report = sync(memory_root, cfg)
        assert report.invalid == 1
        assert "over the 2048-byte limit" in report.problems["decisions/big.json"]
        assert doc_rows(memory_root) == []
        # with the default limit the same file is fine (stat unchanged, but a rebuild re-reads)
        assert counts(sync(memory_root, rebuild=True)) == (1, 0, 0)

    def test_valid_file_turning_invalid_leaves_index_and_index_md(self, memory_root):
        write_mem(memory_root, "decision", "keep", "Keeper", ["a"])
        write_mem(memory_root, "decision", "soon-bad", "Soon broken", ["a"])
        sync(memory_root)
        assert "soon-bad.json" in (memory_root / "index.md").read_text()
        write_raw(memory_root, "decisions/soon-bad.json", "{ not json")
        report = sync(memory_root)
        assert report.invalid == 1 and "decisions/soon-bad.json" in report.problems
        assert paths_of(memory_root) == ["decisions/keep.json"]
        assert search_paths(memory_root, "broken") == []
        # index.md lists what the index holds: the broken memory must be gone from it too
        assert "soon-bad.json" not in (memory_root / "index.md").read_text()

    def test_unreadable_file_is_reread_after_chmod(self, memory_root, enforce_read_permissions, monkeypatch, settled):
        path = write_mem(memory_root, "decision", "locked", "Locked decision", ["a"])
        os.chmod(path, 0)
        try:
            report = sync(memory_root)
            assert report.invalid == 1
            assert report.problems["decisions/locked.json"].startswith("cannot open")
            assert doc_rows(memory_root) == []
            reads = count_reads(monkeypatch)
            assert counts(sync(memory_root)) == (0, 0, 0)
            assert reads == []
            bump_clock()
        finally:
            os.chmod(path, 0o644)
        # chmod changes only the ctime: mtime and size are the same as when it failed
        report = sync(memory_root)
        assert reads == ["decisions/locked.json"]
        assert counts(report) == (1, 0, 0) and report.invalid == 0
        assert paths_of(memory_root) == ["decisions/locked.json"]


# --- what the walk sees ---------------------------------------------------------------------


class TestWalk:
    def test_symlink_leaving_root_is_not_followed(self, memory_root, tmp_path):
        outside = tmp_path / "secret.json"
        outside.write_text(json.dumps(make_memory("decision", "secret", "Secret outside", ["a"])))
        (memory_root / "decisions" / "secret.json").symlink_to(outside)
        report = sync(memory_root)
        assert doc_rows(memory_root) == []
        assert "leaves the memory root" in report.problems["decisions/secret.json"]
        assert search_paths(memory_root, "secret") == []

    def test_category_folder_link_leaving_root_is_not_followed(self, memory_root, tmp_path):
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        write_mem(elsewhere, "runbook", "r", "Outside runbook", ["a"], folder=".")
        (memory_root / "runbooks").rmdir()
        (memory_root / "runbooks").symlink_to(elsewhere, target_is_directory=True)
        report = sync(memory_root)
        assert doc_rows(memory_root) == []
        assert "leaves the memory root" in report.problems["runbooks/"]

    def test_symlink_inside_root_is_followed(self, memory_root):
        shared = memory_root / "shared"
        shared.mkdir()
        target = write_mem(shared, "decision", "alias", "Linked decision", ["a"], folder=".")
        (memory_root / "decisions" / "alias.json").symlink_to(Path("..") / "shared" / "alias.json")
        report = sync(memory_root)
        assert counts(report) == (1, 0, 0) and report.problems == {}
        assert paths_of(memory_root) == ["decisions/alias.json"]
        # a change of the target is seen through the link
        bump_clock()
        target.write_text(json.dumps(make_memory("decision", "alias", "Linked decision, edited", ["a"])))
        assert counts(sync(memory_root)) == (0, 1, 0)
        assert doc_rows(memory_root)[0][1] == "Linked decision, edited"

    def test_dangling_and_looping_links_are_ignored(self, memory_root):
        (memory_root / "decisions" / "dangling.json").symlink_to(memory_root / "decisions" / "nowhere.json")
        (memory_root / "decisions" / "loop.json").symlink_to(memory_root / "decisions" / "loop.json")
        write_mem(memory_root, "decision", "real", "Real", ["a"])
        report = sync(memory_root)
        assert counts(report) == (1, 0, 0)
        assert report.invalid == 0
        assert paths_of(memory_root) == ["decisions/real.json"]

    def test_hidden_temp_and_foreign_files_are_ignored(self, memory_root, monkeypatch):
        write_mem(memory_root, "decision", "real", "Real", ["a"])
        data = json.dumps(make_memory("decision", "real", "Real", ["a"]))
        for name in [
            ".hidden.json", ".real.json.1234.tmp", "real.json.tmp", "real.json~", "real.json.swp",
            "#real.json#", "real.tmp", "README.md", "real.JSON.bak", "real",
        ]:
            write_raw(memory_root, f"decisions/{name}", data)
        write_raw(memory_root, "decisions/.garbage.json", "not json at all")
        (memory_root / "decisions" / "dir.json").mkdir()
        write_raw(memory_root, "stray.json", data)  # not in a category folder
        write_raw(memory_root, "notes/real.json", data)  # not a category folder
        write_raw(memory_root, "decisions/sub/deep.json", data)  # no recursion
        reads = count_reads(monkeypatch)
        report = sync(memory_root)
        assert counts(report) == (1, 0, 0)
        assert report.invalid == 0 and report.problems == {}
        assert reads == ["decisions/real.json"]
        assert paths_of(memory_root) == ["decisions/real.json"]

    def test_files_vanishing_and_appearing_during_sync(self, memory_root, monkeypatch):
        write_mem(memory_root, "decision", "stays", "Stays here", ["a"])
        write_mem(memory_root, "decision", "vanishes", "Vanishes soon", ["a"])
        sync(memory_root)
        bump_clock()
        write_mem(memory_root, "decision", "vanishes", "Vanishes soon, edited", ["a"])
        write_mem(memory_root, "decision", "brief", "Brief visitor", ["a"])
        real_walk = sync_mod.walk

        def racing_walk(root, problems=None, modes=None, ignored=None, listed=None):
            found = real_walk(root, problems, modes, ignored, listed)
            assert "decisions/vanishes.json" in found and "decisions/brief.json" in found
            (memory_root / "decisions" / "vanishes.json").unlink()
            (memory_root / "decisions" / "brief.json").unlink()
            write_mem(memory_root, "runbook", "late", "Late arrival", ["a"])
            return found

        monkeypatch.setattr(sync_mod, "walk", racing_walk)
        sync(memory_root)  # must not raise
        assert paths_of(memory_root) == ["decisions/stays.json"]
        conn = index.open_reader(memory_root)
        try:
            assert index.is_stale(conn, memory_root)  # the late file is not forgotten
        finally:
            conn.close()
        monkeypatch.setattr(sync_mod, "walk", real_walk)
        report = sync(memory_root)
        assert counts(report) == (1, 0, 0)
        assert report.invalid == 0
        assert paths_of(memory_root) == ["decisions/stays.json", "runbooks/late.json"]
        assert invalid_rows(memory_root) == {}


# --- index.md ------------------------------------------------------------------------------

LINE = re.compile(
    r"^- \[(?P<cat>SESSION_SUMMARY|DECISION|RUNBOOK|CONSTRAINT|TECH_DEBT|PREFERENCE)\] "
    r"(?P<title>.+?) -> (?P<path>\.claude/memory/[a-z-]+/[a-z0-9-]+\.json)"
    r"(?: #tags:(?P<tags>[^\s,]+(?:,[^\s,]+)*))?$"
)


def md_lines(root) -> list[str]:
    return [line for line in (root / "index.md").read_text(encoding="utf-8").splitlines() if line.startswith("- ")]


def parse_md(root) -> dict[str, tuple[str, str, list[str]]]:
    out = {}
    for line in md_lines(root):
        m = LINE.match(line)
        assert m, f"index.md line does not match the format: {line!r}"
        assert m["path"] not in out
        out[m["path"]] = (m["cat"], m["title"], m["tags"].split(",") if m["tags"] else [])
    return out


class TestIndexMd:
    def test_format_and_active_only(self, memory_root):
        write_mem(memory_root, "decision", "jwt", "Chose JWT over session cookies", ["auth", "jwt"])
        write_mem(memory_root, "tech_debt", "old-cache", "Cache layer is a mess", ["cache"])
        write_mem(memory_root, "runbook", "gone", "Retired runbook", ["ops"], record_status="retired")
        write_mem(memory_root, "preference", "arch", "Archived preference", ["style"], record_status="archived")
        write_mem(memory_root, "session_summary", "s1", "Session one", ["session"])
        sync(memory_root)
        text = (memory_root / "index.md").read_text(encoding="utf-8")
        assert "- [DECISION] Chose JWT over session cookies -> .claude/memory/decisions/jwt.json #tags:auth,jwt" in text.splitlines()
        assert "- [TECH_DEBT] Cache layer is a mess -> .claude/memory/tech-debt/old-cache.json #tags:cache" in text.splitlines()
        md = parse_md(memory_root)
        assert set(md) == {
            ".claude/memory/decisions/jwt.json",
            ".claude/memory/tech-debt/old-cache.json",
            ".claude/memory/sessions/s1.json",
        }
        assert "Retired runbook" not in text and "Archived preference" not in text
        # category priority order: decision first, session summary last
        assert [p.split("/")[2] for p in md] == ["decisions", "tech-debt", "sessions"]

    def test_regenerated_on_change(self, memory_root):
        write_mem(memory_root, "decision", "a", "First title", ["a"])
        sync(memory_root)
        assert [v[1] for v in parse_md(memory_root).values()] == ["First title"]
        write_mem(memory_root, "decision", "a", "Second title", ["a"])
        write_mem(memory_root, "constraint", "c", "A constraint", ["a"])
        sync(memory_root)
        assert sorted(v[1] for v in parse_md(memory_root).values()) == ["A constraint", "Second title"]
        write_mem(memory_root, "decision", "a", "Second title", ["a"], record_status="retired")
        sync(memory_root)
        assert [v[1] for v in parse_md(memory_root).values()] == ["A constraint"]

    def test_recreated_when_deleted(self, memory_root):
        write_mem(memory_root, "decision", "a", "First title", ["a"])
        sync(memory_root)
        (memory_root / "index.md").unlink()
        report = sync(memory_root)
        assert not report.changed
        assert [v[1] for v in parse_md(memory_root).values()] == ["First title"]

    HOSTILE_TITLES = {
        "arrow": "Use A -> B #tags:evil,injected",
        "arrow-tight": "a->b-->c",
        "tags-upper": "Shout #TAGS:loud",
        "fake-line": "[DECISION] fake -> .claude/memory/decisions/evil.json #tags:x",
        "bidi": "Right\u202eto\u202cleft \u2066isolate\u2069 \u200fmark",
        "zero-width": "zero\u200bwidth\u200djoin\ufeffbom\u2060wj",
        "newlines": "first line\nsecond line\r\n- [DECISION] injected -> x.json",
        "separators": "para\u2029graph\u2028line\u0085nel",
        "confidence": "Sure thing [confidence: 1.0] yes",
        "long": "long " * 60,
        "only-invisible": "\u200b\u200c\u200d",
    }

    def test_sanitized_titles_cannot_break_the_line_format(self, memory_root):
        for mem_id, title in self.HOSTILE_TITLES.items():
            write_mem(
                memory_root, "decision", mem_id, title,
                ["ok", "a,b", "x -> y", "#tags:z", "Upper", "sp ace", "\u202eevil"],
            )
        sync(memory_root)
        md = parse_md(memory_root)  # every line matches the format
        assert len(md_lines(memory_root)) == len(self.HOSTILE_TITLES)
        assert set(md) == {f".claude/memory/decisions/{i}.json" for i in self.HOSTILE_TITLES}
        for path, (cat, title, tags) in md.items():
            assert cat == "DECISION"
            assert " -> " not in title and "->" not in title
            assert "#tags:" not in title.lower()
            assert "[confidence:" not in title
            assert len(title) <= 120
            assert title == title.strip() and title
            for ch in title:
                assert unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp"), (path, title)
            for tag in tags:
                assert tag and "," not in tag and "#tags:" not in tag
                assert all(unicodedata.category(ch) not in ("Cc", "Cf") for ch in tag)
            assert "ok" in tags and "upper" in tags
        assert md[".claude/memory/decisions/only-invisible.json"][1] == "(untitled)"
        assert md[".claude/memory/decisions/zero-width.json"][1] == "zerowidthjoinbomwj"
        assert md[".claude/memory/decisions/arrow.json"][1].startswith("Use A B")

    def test_line_breaks_in_titles_become_spaces(self, memory_root):
        """A line or paragraph break inside a title separates words: it must not glue them."""
        write_mem(memory_root, "decision", "multi", "first line\nsecond line\r\nthird\u2028fourth\u2029fifth", ["a"])
        sync(memory_root)
        assert parse_md(memory_root)[".claude/memory/decisions/multi.json"][1] == "first line second line third fourth fifth"

    def test_path_with_spaces_is_left_out(self, memory_root):
        write_mem(memory_root, "decision", "odd", "Odd file name", ["a"], name="odd name")
        write_mem(memory_root, "decision", "fine", "Fine", ["a"])
        write_mem(memory_root, "decision", "forged", "Forged", ["a"], name="x\n2. [DECISION] Forged")
        report = sync(memory_root)
        assert paths_of(memory_root) == ["decisions/fine.json"]  # such names could forge output lines
        assert report.invalid == 2 and "rename it" in report.problems["decisions/odd name.json"]
        md = parse_md(memory_root)
        assert list(md) == [".claude/memory/decisions/fine.json"]

    def test_prefix_for_a_root_not_named_claude_memory(self, tmp_path):
        root = tmp_path / "mem"
        write_mem(root, "decision", "x", "Custom root", ["a"])
        sync(root)
        assert "- [DECISION] Custom root -> mem/decisions/x.json #tags:a" in (root / "index.md").read_text().splitlines()


# --- rebuild and readers ---------------------------------------------------------------------


class TestRebuild:
    def test_rebuild_keeps_an_open_reader_working(self, memory_root):
        populate(memory_root, 40)
        sync(memory_root)
        old_paths = paths_of(memory_root)
        conn = index.open_reader(memory_root)
        try:
            cur = conn.execute("SELECT path FROM documents ORDER BY path")
            first = cur.fetchone()  # a read transaction is open from here
            (memory_root / "decisions" / "m00001.json").unlink()
            write_mem(memory_root, "runbook", "fresh", "Freshly added zebra", ["a"])
            report = sync(memory_root, rebuild=True)
            assert report.rebuilt == "requested"
            rest = cur.fetchall()
            assert [first[0]] + [r[0] for r in rest] == old_paths  # its snapshot is intact
            # the same connection then sees the rebuilt index
            from memindex.retrieval.query import search

            assert [h.path for h in search(conn, "zebra")] == ["runbooks/fresh.json"]
            count = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
            assert count == 40
        finally:
            conn.close()

    def test_rebuild_equals_fresh_index(self, memory_root):
        populate(memory_root, 60, seed=3)
        write_raw(memory_root, "decisions/broken.json", "[")
        sync(memory_root)
        # churn: edits, deletes, adds, so the incremental index has a history
        for i in range(0, 60, 7):
            p = next(memory_root.glob(f"*/m{i:05d}.json"))
            p.unlink()
        populate(memory_root, 20, seed=4, marker="second")
        sync(memory_root)
        sync(memory_root, rebuild=True)
        rebuilt = index_snapshot(memory_root, QUERIES)
        remove_index(memory_root)
        sync(memory_root)
        fresh = index_snapshot(memory_root, QUERIES)
        assert rebuilt == fresh
        assert rebuilt["docs"] and rebuilt["invalid"] == ["decisions/broken.json"]
        assert any(rebuilt["search"].values())

    def test_incremental_equals_fresh_index(self, memory_root):
        populate(memory_root, 60, seed=5)
        sync(memory_root)
        populate(memory_root, 30, seed=6, marker="edited")
        for p in list(memory_root.glob("runbooks/*.json"))[:4]:
            p.unlink()
        sync(memory_root)
        incremental = index_snapshot(memory_root, QUERIES)
        remove_index(memory_root)
        sync(memory_root)
        assert index_snapshot(memory_root, QUERIES) == incremental


# --- a missing or corrupt index ----------------------------------------------------------------


def _corrupt_garbage(path: Path) -> None:
    path.write_bytes(os.urandom(64 * 1024))


def _corrupt_text(path: Path) -> None:
    path.write_text("this is not a database\n" * 100)


def _corrupt_zero(path: Path) -> None:
    path.write_bytes(b"")


def _corrupt_header_only(path: Path) -> None:
    with open(path, "r+b") as fh:
        fh.truncate(100)


def _corrupt_truncated_half(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)


def _corrupt_truncated_last_page(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size - 4096)


def _corrupt_middle(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 3)
        fh.write(b"\xff" * (size // 3))


def _wrong_version(path: Path) -> None:
    """An older version's index (a newer one's is refused, never rebuilt: test_freshness)."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={INDEX_VERSION - 1}")
    conn.commit()
    conn.close()


def _old_layout(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.unlink(f"{path}{suffix}")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE documents(path TEXT)")
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()


CORRUPTIONS = {
    "garbage": _corrupt_garbage,
    "text": _corrupt_text,
    "zero-bytes": _corrupt_zero,
    "header-only": _corrupt_header_only,
    "truncated-half": _corrupt_truncated_half,
    "truncated-last-page": _corrupt_truncated_last_page,
    "wrong-user-version": _wrong_version,
    "old-layout": _old_layout,
}


class TestCorruptIndex:
    def test_missing_index_is_reported_by_readers(self, memory_root):
        with pytest.raises(index.IndexUnavailable, match="no index"):
            index.open_reader(memory_root)

    @pytest.mark.parametrize("kind", list(CORRUPTIONS))
    def test_corrupt_index_is_reported_and_rebuilt(self, memory_root, kind):
        populate(memory_root, 150, seed=11)
        sync(memory_root)
        expected = index_snapshot(memory_root, QUERIES)
        wal = memory_root / (INDEX_FILE + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0  # everything is in the main file
        CORRUPTIONS[kind](memory_root / INDEX_FILE)

        with pytest.raises(index.IndexUnavailable):
            conn = index.open_reader(memory_root)
            # a reader that opened must not hand out a broken index: everything it reads works
            try:
                from memindex.retrieval.query import search

                for q in QUERIES:
                    search(conn, q)
                conn.execute("SELECT * FROM documents").fetchall()
            except sqlite3.DatabaseError as exc:  # pragma: no cover - reported as a failure below
                pytest.fail(f"open_reader accepted a corrupt index ({kind}); a query then raised {exc!r}")
            finally:
                conn.close()

        report = sync(memory_root)
        assert report.rebuilt, f"sync did not rebuild the {kind} index"
        assert report.added == 150
        conn = index.open_reader(memory_root)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
        assert index_snapshot(memory_root, QUERIES) == expected

    def _damaged(self, memory_root):
        """An index whose header is fine but whose data pages are overwritten."""
        populate(memory_root, 150, seed=11)
        sync(memory_root)
        expected = index_snapshot(memory_root, QUERIES)
        _corrupt_middle(memory_root / INDEX_FILE)
        return expected

    def test_damaged_data_pages_are_rebuilt_by_sync(self, memory_root):
        expected = self._damaged(memory_root)
        report = sync(memory_root)  # must not raise sqlite3.DatabaseError
        assert report.rebuilt
        assert index_snapshot(memory_root, QUERIES) == expected

    def test_damaged_data_pages_are_reported_by_readers(self, memory_root, capsys):
        from memindex import cli

        self._damaged(memory_root)
        code = cli.main(["--root", str(memory_root), "search", "--no-sync", "postgres"])
        assert code == 4
        assert "corrupt" in capsys.readouterr().err

    def test_index_path_is_a_directory(self, memory_root):
        (memory_root / INDEX_FILE).mkdir()
        with pytest.raises(index.IndexUnavailable, match="not a regular file"):
            index.open_reader(memory_root)
        with pytest.raises(index.IndexUnavailable, match="not a regular file"):
            sync(memory_root)


# --- concurrency: the lock, two processes, a killed sync -----------------------------------------


class TestConcurrency:
    def test_lock_timeout(self, memory_root):
        from filelock import FileLock

        write_mem(memory_root, "decision", "x", "X", ["a"])
        held = FileLock(str(memory_root / LOCK_FILE))
        held.acquire()
        try:
            started = time.perf_counter()
            with pytest.raises(LockTimeout, match="another memindex writer"):
                sync(memory_root, lock_timeout=0.2)
            assert 0.15 <= time.perf_counter() - started < 5
        finally:
            held.release()
        assert counts(sync(memory_root, lock_timeout=0.2)) == (1, 0, 0)

    def test_lock_timeout_from_config(self, memory_root):
        from filelock import FileLock

        held = FileLock(str(memory_root / LOCK_FILE))
        held.acquire()
        try:
            with pytest.raises(LockTimeout):
                sync(memory_root, parse_config({"index": {"lock_timeout_s": 0.1}}))
        finally:
            held.release()

    @pytest.mark.parametrize("lock_timeout", [None, "0"])
    def test_two_syncs_in_two_processes(self, memory_root, lock_timeout):
        populate(memory_root, 1500, seed=21)
        args = ["--root", str(memory_root), "sync", "--json"]
        if lock_timeout is not None:
            args += ["--lock-timeout", lock_timeout]
        procs = [
            subprocess.Popen(cli_cmd(*args), env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        results = [(p.wait(timeout=60), p.stdout.read(), p.stderr.read()) for p in procs]
        for p in procs:
            p.stdout.close()
            p.stderr.close()
        codes = [r[0] for r in results]
        assert set(codes) <= {0, 3}, results
        assert 0 in codes, results
        added = 0
        for code, out, err in results:
            if code == 0:
                added += json.loads(out)["added"]
            else:
                assert "another memindex writer" in err and out == ""
        assert added == 1500  # nothing indexed twice, nothing lost
        docs = doc_rows(memory_root)
        assert len(docs) == 1500 and len({d[0] for d in docs}) == 1500
        conn = index.open_reader(memory_root)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert conn.execute("SELECT count(*) FROM fts").fetchone()[0] == 1500
        finally:
            conn.close()
        assert counts(sync(memory_root)) == (0, 0, 0)

    def _kill_during_sync(self, memory_root, rounds: int, delays_ms: list[float]) -> None:
        n = 3000
        populate(memory_root, n, seed=31, marker="v0")
        sync(memory_root)
        wal = memory_root / (INDEX_FILE + "-wal")
        interrupted = 0
        for k in range(1, rounds + 1):
            populate(memory_root, n, seed=31, marker=f"v{k}")  # every file changes
            old_marker, new_marker = f"v{k - 1}", f"v{k}"
            proc = subprocess.Popen(
                cli_cmd("--root", str(memory_root), "sync", "--quiet"),
                env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 30
            # wait until the transaction writes to the WAL, then let it run a little
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    if wal.stat().st_size > 32:
                        break
                except FileNotFoundError:
                    pass
                time.sleep(0.0005)
            time.sleep(delays_ms[(k - 1) % len(delays_ms)] / 1000)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            code = proc.wait(timeout=30)

            # readers accept what is left, and it is one state or the other, never a mix
            conn = index.open_reader(memory_root)
            try:
                assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            finally:
                conn.close()
            markers = {row[1].rsplit(" ", 1)[1] for row in doc_rows(memory_root)}
            assert len(doc_rows(memory_root)) == n
            assert markers in ({old_marker}, {new_marker}), markers
            if markers == {old_marker}:
                assert code == -signal.SIGKILL
                interrupted += 1

            # the next sync repairs it, to exactly what a clean rebuild gives
            report = sync(memory_root)
            assert report.updated == (n if markers == {old_marker} else 0)
            assert {row[1].rsplit(" ", 1)[1] for row in doc_rows(memory_root)} == {new_marker}
            repaired = index_snapshot(memory_root, QUERIES + [new_marker])
            remove_index(memory_root)
            sync(memory_root)
            assert index_snapshot(memory_root, QUERIES + [new_marker]) == repaired
        assert interrupted >= 1, "no kill landed inside the sync transaction"

    def test_sync_killed_mid_transaction(self, memory_root):
        self._kill_during_sync(memory_root, rounds=3, delays_ms=[0, 40, 150])

    @pytest.mark.slow
    def test_sync_killed_mid_transaction_many_times(self, memory_root):
        self._kill_during_sync(memory_root, rounds=12, delays_ms=[0, 5, 20, 50, 100, 200, 300, 400, 500, 650, 800, 1000])

    def test_reader_during_sync_sees_a_consistent_snapshot(self, memory_root):
        populate(memory_root, 1500, seed=41, marker="v0")
        sync(memory_root)
        populate(memory_root, 1500, seed=41, marker="v1")
        proc = subprocess.Popen(
            cli_cmd("--root", str(memory_root), "sync", "--quiet"),
            env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        seen = []
        try:
            while proc.poll() is None:
                conn = index.open_reader(memory_root)
                try:
                    rows = conn.execute("SELECT title FROM documents").fetchall()
                finally:
                    conn.close()
                seen.append({t.rsplit(" ", 1)[1] for (t,) in rows})
                time.sleep(0.01)
        finally:
            assert proc.wait(timeout=60) == 0
        assert all(markers in ({"v0"}, {"v1"}) for markers in seen), seen
        assert {t.rsplit(" ", 1)[1] for _, t, _, _ in doc_rows(memory_root)} == {"v1"}


def test_a_one_file_sync_on_a_missing_index_indexes_everything(memory_root):
    """sync(only=...) must not leave a recreated index with only that file in it."""
    from memindex.config import Config
    from memindex.index.sync import sync

    for i in range(3):
        write_mem(memory_root, "decision", f"d{i}", f"Decision {i}", ["x"])
    sync(memory_root, Config())
    remove_index(memory_root)
    report = sync(memory_root, Config(), only=["decisions/d1.json"])
    assert report.rebuilt and report.added == 3
    assert sorted(r[0] for r in doc_rows(memory_root)) == [f"decisions/d{i}.json" for i in range(3)]


def test_the_writer_lock_excludes_filelock_holders_without_importing_it(memory_root, monkeypatch):
    """The writer lock is filelock's, or the same OS lock from the standard library where
    filelock is missing (a bare python3 runs the plugin's hooks and their syncs): each
    excludes the other."""
    import builtins

    from filelock import FileLock, Timeout

    from memindex.index import sync as sync_mod

    real_import = builtins.__import__

    def no_filelock(name, *args, **kwargs):
        if name == "filelock":
            raise ImportError("no filelock here")
        return real_import(name, *args, **kwargs)

    held = FileLock(str(memory_root / ".index.lock"))
    held.acquire()
    monkeypatch.setattr(builtins, "__import__", no_filelock)
    try:
        with pytest.raises(sync_mod.LockTimeout):
            with sync_mod.writer_lock(memory_root, timeout=0.2):
                pass
    finally:
        held.release()
    with sync_mod.writer_lock(memory_root, timeout=0.2):  # the stdlib lock, taken...
        with pytest.raises(Timeout):  # ...keeps a filelock writer out
            FileLock(str(memory_root / ".index.lock")).acquire(timeout=0)
    monkeypatch.setattr(builtins, "__import__", real_import)
    with sync_mod.writer_lock(memory_root, timeout=0.2):  # filelock's, taken...
        with pytest.raises(sync_mod.LockTimeout):  # ...keeps a stdlib writer out
            monkeypatch.setattr(builtins, "__import__", no_filelock)
            with sync_mod.writer_lock(memory_root, timeout=0.2):
                pass
    monkeypatch.setattr(builtins, "__import__", real_import)
