"""memindex/cli/: the `memindex` command line, in-process via cli.main and once as a real process."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest

from conftest import run_cli, write_json, write_mem, write_raw
from memindex import cli
from memindex.defaults import CONFIG_FILE, INDEX_FILE, LOCK_FILE


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(memory_root):
    write_mem(memory_root, "decision", "jwt-over-cookies", "Chose JWT over session cookies", ["auth", "jwt"],
              {"context": "The mobile client cannot share the web session cookie."},
              updated_at="2026-02-15T09:30:00Z", created_at="2026-02-10T14:03:00Z")
    write_mem(memory_root, "runbook", "canary-rollback", "Roll back a failed canary", ["deploy"],
              {"trigger": "Canary error rate above 2%.", "steps": ["Run the rollback job.", "Page the owner."]})
    write_mem(memory_root, "constraint", "pg-connections", "Postgres connection limit", ["postgres"],
              {"rule": "At most 20 connections per instance."})
    write_mem(memory_root, "tech_debt", "old-jwt-lib", "Old JWT library", ["jwt"],
              {"description": "The jwt library is two majors behind."}, record_status="retired")
    write_mem(memory_root, "preference", "tabs", "Tabs in Makefiles only", ["style"], {"topic": "indentation"})
    return memory_root


# --- finding the root -----------------------------------------------------------------------


class TestRoot:
    def test_root_is_the_memory_folder(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "sync", "--json")
        assert code == 0 and json.loads(out)["added"] == 5
        assert (store / INDEX_FILE).is_file()

    def test_root_is_the_project_folder(self, capsys, store, project_dir):
        code, out, _ = run(capsys, "--root", str(project_dir), "sync", "--json")
        assert code == 0 and json.loads(out)["added"] == 5
        assert (store / INDEX_FILE).is_file()
        assert not (project_dir / INDEX_FILE).exists()

    def test_walks_up_from_the_working_directory(self, capsys, store, project_dir, monkeypatch):
        deep = project_dir / "src" / "api" / "handlers"
        deep.mkdir(parents=True)
        monkeypatch.chdir(deep)
        code, out, _ = run(capsys, "sync", "--json")
        assert code == 0 and json.loads(out)["added"] == 5
        assert (store / INDEX_FILE).is_file()
        code, out, _ = run(capsys, "search", "--json", "canary")
        assert code == 0 and json.loads(out)[0]["path"] == ".claude/memory/runbooks/canary-rollback.json"

    def test_walks_up_from_inside_the_memory_folder(self, capsys, store, monkeypatch):
        monkeypatch.chdir(store / "decisions")
        code, out, _ = run(capsys, "sync", "--json")
        assert code == 0 and json.loads(out)["added"] == 5

    def test_no_root(self, capsys, tmp_path, monkeypatch):
        empty = tmp_path / "nowhere" / "deeper"
        empty.mkdir(parents=True)
        monkeypatch.chdir(empty)
        code, out, err = run(capsys, "sync")
        assert code == 5
        assert out == ""
        assert "no .claude/memory folder" in err and str(empty) in err

    @pytest.mark.parametrize("where", ["missing", "empty-dir", "file"])
    def test_explicit_root_that_is_not_a_store(self, capsys, tmp_path, where):
        target = tmp_path / "target"
        if where == "empty-dir":
            target.mkdir()
        elif where == "file":
            target.write_text("x")
        code, out, err = run(capsys, "--root", str(target), "search", "anything")
        assert code == 5 and out == ""
        assert "no .claude/memory folder" in err

    def test_explicit_root_does_not_walk_up(self, capsys, store, project_dir):
        sub = project_dir / "src"
        sub.mkdir()
        code, _, err = run(capsys, "--root", str(sub), "sync")
        assert code == 5 and "no .claude/memory folder" in err


# --- sync / rebuild ---------------------------------------------------------------------------


class TestSync:
    def test_sync_json(self, capsys, store):
        write_raw(store, "decisions/broken.json", "{")
        code, out, err = run(capsys, "--root", str(store), "sync", "--json")
        assert code == 0
        report = json.loads(out)
        assert {"added", "updated", "removed", "invalid", "ms"} <= set(report)
        assert (report["added"], report["updated"], report["removed"], report["invalid"]) == (5, 0, 0, 1)
        assert isinstance(report["ms"], (int, float)) and report["ms"] >= 0
        assert out.count("\n") == 1  # one JSON document on one line
        code, out, _ = run(capsys, "--root", str(store), "sync", "--json")
        report = json.loads(out)
        assert (report["added"], report["updated"], report["removed"], report["invalid"]) == (0, 0, 0, 1)

    def test_sync_text_reports_problems_on_stderr(self, capsys, store):
        write_raw(store, "decisions/broken.json", '{"a": }')
        code, out, err = run(capsys, "--root", str(store), "sync")
        assert code == 0
        assert re.match(r"synced: 5 added, 0 updated, 0 removed, 1 invalid in \d+ ms", out)
        assert "decisions/broken.json: invalid JSON" in err and "line 1 column 7" in err

    def test_sync_quiet(self, capsys, store):
        code, out, err = run(capsys, "--root", str(store), "sync", "--quiet")
        assert (code, out, err) == (0, "", "")

    def test_rebuild(self, capsys, store):
        run(capsys, "--root", str(store), "sync")
        code, out, _ = run(capsys, "--root", str(store), "rebuild", "--json")
        report = json.loads(out)
        assert code == 0 and report["added"] == 5 and report["rebuilt"] == "requested"

    def test_lock_held_gives_exit_3(self, capsys, store):
        from filelock import FileLock

        lock = FileLock(str(store / LOCK_FILE))
        lock.acquire()
        try:
            code, out, err = run(capsys, "--root", str(store), "sync", "--lock-timeout", "0.1")
        finally:
            lock.release()
        assert code == 3
        assert "another memindex writer" in err and out == ""


# --- search -------------------------------------------------------------------------------------

HIT_KEYS = {"path", "id", "category", "title", "tags", "updated_at", "score"}


class TestSearch:
    def test_search_json(self, capsys, store, project_dir):
        code, out, _ = run(capsys, "--root", str(project_dir), "search", "--json", "jwt", "cookies")
        assert code == 0
        hits = json.loads(out)
        assert isinstance(hits, list) and hits
        first = hits[0]
        assert HIT_KEYS <= set(first)
        assert first["path"] == ".claude/memory/decisions/jwt-over-cookies.json"
        assert first["id"] == "jwt-over-cookies"
        assert first["category"] == "decision"
        assert first["title"] == "Chose JWT over session cookies"
        assert first["tags"] == ["auth", "jwt"]
        assert first["updated_at"] == "2026-02-15T09:30:00Z"
        assert isinstance(first["score"], (int, float)) and first["score"] > 0
        assert all(re.fullmatch(r"\.claude/memory/[a-z-]+/[a-z0-9-]+\.json", h["path"]) for h in hits)
        assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)

    def test_search_path_is_relative_to_the_project_with_memory_root_too(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "canary")
        assert json.loads(out)[0]["path"] == ".claude/memory/runbooks/canary-rollback.json"

    def test_search_syncs_a_missing_index_first(self, capsys, store):
        assert not (store / INDEX_FILE).exists()
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "postgres")
        assert code == 0 and [h["id"] for h in json.loads(out)] == ["pg-connections"]

    def test_search_sees_new_files(self, capsys, store):
        run(capsys, "--root", str(store), "sync")
        write_mem(store, "decision", "graphql", "Adopt GraphQL gateway", ["api"])
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "graphql")
        assert [h["id"] for h in json.loads(out)] == ["graphql"]

    def test_query_starting_with_a_dash(self, capsys, store):
        code, out, err = run(capsys, "--root", str(store), "search", "--json", "--", "-x rollback canary")
        assert code == 0, err
        assert json.loads(out)[0]["id"] == "canary-rollback"

    def test_no_match_json(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "kubernetes")
        assert code == 0 and json.loads(out) == [] and out.strip() == "[]"

    def test_no_match_text(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "kubernetes")
        assert code == 0 and out == ""

    def test_stop_words_only(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "what", "is", "the")
        assert code == 0 and json.loads(out) == []

    def test_text_format(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "jwt")
        assert code == 0
        lines = out.splitlines()
        assert lines[0] == (
            "1. [DECISION] Chose JWT over session cookies | #auth,jwt | 2026-02-15 | "
            ".claude/memory/decisions/jwt-over-cookies.json"
        )
        assert all(re.match(r"\d+\. \[[A-Z_, a-z]+\] .+ \| #.* \| [\d-]+ \| \.claude/memory/\S+\.json$", l) for l in lines)

    def test_inactive_memories(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "library", "majors")
        assert json.loads(out) == []
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "--include-inactive", "library", "majors")
        hits = json.loads(out)
        assert [h["id"] for h in hits] == ["old-jwt-lib"]
        code, out, _ = run(capsys, "--root", str(store), "search", "--include-inactive", "library", "majors")
        assert out.startswith("1. [TECH_DEBT, retired] Old JWT library")

    def test_category_filter_is_repeatable(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "-c", "runbook", "-c", "constraint",
                           "postgres", "canary", "jwt")
        assert sorted(h["category"] for h in json.loads(out)) == ["constraint", "runbook"]

    def test_unknown_category_is_a_usage_error(self, capsys, store):
        with pytest.raises(SystemExit) as exc:
            cli.main(["--root", str(store), "search", "-c", "notes", "x"])
        assert exc.value.code == 2

    def test_tag_filter(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "--tag", "jwt", "--include-inactive",
                           "jwt")
        assert sorted(h["id"] for h in json.loads(out)) == ["jwt-over-cookies", "old-jwt-lib"]
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "--tag", "auth", "jwt")
        assert [h["id"] for h in json.loads(out)] == ["jwt-over-cookies"]

    def test_limit(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "-n", "1", "jwt", "postgres", "canary")
        assert len(json.loads(out)) == 1
        with pytest.raises(SystemExit):
            cli.main(["--root", str(store), "search", "-n", "0", "x"])

    def test_retention_from_config_file(self, capsys, memory_root):
        write_mem(memory_root, "session_summary", "ancient", "Ancient planning session", ["plan"],
                  created_at="2000-01-01T00:00:00Z", updated_at="2000-01-01T00:00:00Z")
        write_mem(memory_root, "decision", "ancient-decision", "Ancient planning decision", ["plan"],
                  created_at="2000-01-01T00:00:00Z", updated_at="2000-01-01T00:00:00Z")
        write_json(memory_root, CONFIG_FILE, {"categories": {"session_summary": {"retention_days": 30}}})
        code, out, err = run(capsys, "--root", str(memory_root), "search", "--json", "planning")
        assert code == 0 and err == ""
        assert [h["id"] for h in json.loads(out)] == ["ancient-decision"]

    def test_bad_config_warns_but_works(self, capsys, store):
        write_raw(store, CONFIG_FILE, '{"retrieval": {"search_limit": "lots"}}')
        code, out, err = run(capsys, "--root", str(store), "search", "--json", "postgres")
        assert code == 0 and json.loads(out)[0]["id"] == "pg-connections"
        assert "config: retrieval.search_limit" in err
        assert err.count("\n") == 1

    def test_invalid_config_json_warns_but_works(self, capsys, store):
        write_raw(store, CONFIG_FILE, "{not json")
        code, out, err = run(capsys, "--root", str(store), "sync", "--json")
        assert code == 0 and json.loads(out)["added"] == 5
        assert "config:" in err and "invalid JSON" in err

    def test_no_sync_without_index(self, capsys, store):
        code, out, err = run(capsys, "--root", str(store), "search", "--no-sync", "postgres")
        assert code == 4 and out == "" and "no index" in err

    def test_corrupt_index_is_repaired_by_search(self, capsys, store):
        run(capsys, "--root", str(store), "sync")
        (store / INDEX_FILE).write_bytes(b"garbage" * 1000)
        for suffix in ("-wal", "-shm"):
            if (store / (INDEX_FILE + suffix)).exists():
                (store / (INDEX_FILE + suffix)).unlink()
        code, out, err = run(capsys, "--root", str(store), "search", "--no-sync", "--json", "postgres")
        assert code == 4 and out == "" and "corrupt" in err
        code, out, _ = run(capsys, "--root", str(store), "search", "--json", "postgres")
        assert code == 0 and [h["id"] for h in json.loads(out)] == ["pg-connections"]


# --- status -------------------------------------------------------------------------------------


class TestStatus:
    def test_status_json(self, capsys, store):
        write_raw(store, "decisions/broken.json", "[")
        run(capsys, "--root", str(store), "sync")
        code, out, _ = run(capsys, "--root", str(store), "status", "--json")
        assert code == 0
        info = json.loads(out)
        assert info["ok"] is True
        assert info["root"] == str(store)
        assert info["memories"] == 5
        assert info["counts"]["decision"] == {"active": 1, "retired": 0, "archived": 0}
        assert info["counts"]["tech_debt"]["retired"] == 1
        assert list(info["invalid"]) == ["decisions/broken.json"]
        assert info["stale"] is False
        assert info["pending"] == {"changed_or_new": 0, "removed": 0}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", info["last_sync"])
        assert info["index_bytes"] > 0

    def test_status_sees_pending_changes(self, capsys, store):
        run(capsys, "--root", str(store), "sync")
        write_mem(store, "decision", "new-one", "New", ["a"])
        (store / "preferences" / "tabs.json").unlink()
        code, out, _ = run(capsys, "--root", str(store), "status", "--json")
        info = json.loads(out)
        assert info["stale"] is True
        assert info["pending"] == {"changed_or_new": 1, "removed": 1}

    def test_status_without_index(self, capsys, store):
        code, out, _ = run(capsys, "--root", str(store), "status", "--json")
        assert code == 4
        info = json.loads(out)
        assert info["ok"] is False and info["files"] == 5 and "no index" in info["error"]

    def test_status_text(self, capsys, store):
        run(capsys, "--root", str(store), "sync")
        code, out, _ = run(capsys, "--root", str(store), "status")
        assert code == 0
        assert "memories: 5" in out and "up to date" in out


# --- validate / schema ----------------------------------------------------------------------------


class TestValidate:
    def test_clean_store(self, capsys, store):
        code, out, err = run(capsys, "--root", str(store), "validate")
        assert code == 0 and out == ""
        assert "5 files checked, 0 invalid" in err

    def test_problems_one_line_each(self, capsys, store):
        bad = json.loads((store / "decisions" / "jwt-over-cookies.json").read_text())
        del bad["title"]
        bad["content"]["status"] = "maybe"
        write_json(store, "decisions/jwt-over-cookies.json", bad)
        write_raw(store, "runbooks/broken.json", '{"category": "runbook",\n "title": }')
        write_mem(store, "preference", "misplaced", "Misplaced", ["a"], folder="constraints")
        write_mem(store, "decision", "stray", "Stray", ["a"], folder="notes")
        code, out, _ = run(capsys, "--root", str(store), "validate")
        assert code == 1
        lines = out.splitlines()
        p = ".claude/memory/"
        assert f"{p}decisions/jwt-over-cookies.json: missing field 'title'" in lines
        assert any(l.startswith(f"{p}decisions/jwt-over-cookies.json: bad value for 'content.status': 'maybe'") for l in lines)
        assert any(l.startswith(f"{p}runbooks/broken.json: invalid JSON") and "line 2 column 11" in l for l in lines)
        assert f"{p}constraints/misplaced.json: file is outside its category folder: preference belongs in preferences/, not constraints/" in lines
        assert any(l.startswith(f"{p}notes/stray.json: not in a category folder") for l in lines)
        assert len(lines) == 5
        assert all(re.match(rf"{re.escape(p)}[a-z-]+/[a-z0-9-]+\.json: \S", l) for l in lines)

    def test_validate_json(self, capsys, store):
        write_raw(store, "runbooks/broken.json", "{")
        code, out, _ = run(capsys, "--root", str(store), "validate", "--json")
        assert code == 1
        data = json.loads(out)
        assert data["checked"] == 6
        assert list(data["invalid"]) == [".claude/memory/runbooks/broken.json"]

    def test_validate_does_not_touch_the_index(self, capsys, store):
        run(capsys, "--root", str(store), "validate")
        assert not (store / INDEX_FILE).exists()


class TestSchema:
    def test_schema_decision(self, capsys, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)  # no memory root needed
        code, out, _ = run(capsys, "schema", "decision")
        assert code == 0
        doc = json.loads(out)
        assert doc["$schema"].startswith("https://json-schema.org/")
        assert doc["type"] == "object"
        assert doc["properties"]["category"] == {"const": "decision"}
        assert {"status", "context", "decision"} <= set(doc["properties"]["content"]["required"])
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(doc)

    def test_schema_all(self, capsys, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        code, out, _ = run(capsys, "schema")
        assert code == 0
        assert sorted(json.loads(out)) == sorted(
            ["session_summary", "decision", "runbook", "constraint", "tech_debt", "preference"]
        )

    def test_schema_validates_a_real_file(self, capsys, store):
        from jsonschema import Draft202012Validator

        code, out, _ = run(capsys, "schema", "runbook")
        data = json.loads((store / "runbooks" / "canary-rollback.json").read_text())
        assert list(Draft202012Validator(json.loads(out)).iter_errors(data)) == []


# --- as a real process ------------------------------------------------------------------------------


class TestSubprocess:
    def test_module_entry_point(self, store, project_dir, tmp_path):
        proc = run_cli("--root", str(project_dir), "sync", "--json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["added"] == 5
        proc = run_cli("search", "--json", "--", "-rollback canary", cwd=project_dir)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)[0]["path"] == ".claude/memory/runbooks/canary-rollback.json"
        proc = run_cli("search", "nothing-matches-this", cwd=project_dir)
        assert (proc.returncode, proc.stdout) == (0, "")
        proc = run_cli("status", cwd=tmp_path)
        assert proc.returncode == 5 and "no .claude/memory folder" in proc.stderr
        assert "Traceback" not in proc.stderr

    def test_console_script(self, store, project_dir):
        script = os.path.join(os.path.dirname(sys.executable), "memindex")
        if not os.path.exists(script):
            pytest.skip("console script not installed")
        import subprocess

        proc = subprocess.run([script, "--root", str(project_dir), "validate"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert "5 files checked, 0 invalid" in proc.stderr


_PROBE = ("import atexit, runpy, sys\n"
          "atexit.register(lambda: print('TEARDOWN', file=sys.stderr))\n"
          "sys.argv = ['memindex', *sys.argv[1:]]\n"
          "runpy.run_module('memindex', run_name='__main__', alter_sys=True)\n")


@pytest.mark.parametrize("command", ["search", "status", "sync"])
def test_reading_commands_end_without_the_interpreters_teardown(memory_root, command: str) -> None:
    """`search`, `explain` and `status` end with `os._exit` once their answer is flushed
    (`cli.main.run`: about 3.7 ms of a search at 10k memories); a writer such as `sync` exits
    the ordinary way. The answer is whole and the exit code kept either way."""
    import subprocess

    from conftest import cli_env

    write_mem(memory_root, "runbook", "stripe-webhook", "Stripe webhook signature failures", ["stripe"],
              {"trigger": "webhook returns 400 because the signing secret differs", "steps": ["rotate it"]})
    args = {"search": ["search", "stripe webhook signature"], "status": ["status"], "sync": ["sync"]}[command]
    if command == "status":  # no index yet: exit 4, kept through os._exit
        first = subprocess.run([sys.executable, "-c", _PROBE, "--root", str(memory_root), *args],
                               capture_output=True, text=True, env=cli_env(), timeout=60)
        assert first.returncode == 4 and "TEARDOWN" not in first.stderr, first.stderr
        assert run_cli("--root", str(memory_root), "sync").returncode == 0
    out = subprocess.run([sys.executable, "-c", _PROBE, "--root", str(memory_root), *args],
                         capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.returncode == 0, out.stderr
    assert ("TEARDOWN" in out.stderr) == (command == "sync")
    if command == "search":
        assert "stripe-webhook" in out.stdout
    missing = subprocess.run([sys.executable, "-c", _PROBE, "--root", str(memory_root / "nowhere"), "search", "x"],
                             capture_output=True, text=True, env=cli_env(), timeout=60)
    assert missing.returncode != 0 and "TEARDOWN" not in missing.stderr
