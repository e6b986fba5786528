"""`memindex import adr | claude-memory | claude-md | markdown` and the `source` field.

Inputs are real-world shaped (tests/data/adr: Nygard/adr-tools with a supersede link,
MADR 2.x, 3.x and 4.x, log4brains, a malformed ADR, a README and a template;
tests/data/claude-memory: Claude Code 2.1's auto memory layout; tests/data/claude-md).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli_cmd, cli_env

from memindex import cli
from memindex.config import load_config
from memindex.defaults import MEMORY_DIR
from memindex.errors import WriteError
from memindex.importers import adr, claude_memory
from memindex.importers.engine import Report
from memindex.store.schema import validate_memory
from memindex.store.scaffold import init_project
from memindex.store.files import walk
from memindex.index.sync import sync
from memindex.write import save_memory

DATA = Path(__file__).resolve().parent / "data"
ADR_IDS = [f"adr-000{n}-{s}" for n, s in (
    (1, "record-architecture-decisions"), (2, "use-mysql-for-orders"), (3, "use-postgresql-for-orders"),
    (4, "use-soap-for-partner-api"), (5, "use-kafka-for-order-events"), (6, "feature-flags-with-unleash"),
    (7, "openapi-first-contracts"), (8, "use-log4brains"),
)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "shop"
    proj.mkdir()
    sync(init_project(proj).root, progress=False)
    return proj


def run(capsys, project: Path, *argv: str) -> tuple[int, object, str]:
    code = cli.main(["--root", str(project), "import", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out) if "--json" in argv else out, err


def memories(project: Path) -> dict[str, dict]:
    root = project / ".claude" / "memory"
    return {rel: json.loads((root / rel).read_text()) for rel in sorted(walk(root))}


def decision(project: Path, mem_id: str) -> dict:
    return json.loads((project / ".claude/memory/decisions" / f"{mem_id}.json").read_text())


def with_adrs(project: Path) -> Path:
    shutil.copytree(DATA / "adr", project / "docs" / "adr")
    return project / "docs" / "adr"


# --- ADRs -----------------------------------------------------------------------------


def test_adr_import_reads_every_style(capsys, project):
    with_adrs(project)
    code, report, err = run(capsys, project, "adr", "--json")
    assert code == 1  # the malformed ADR is skipped, and says so
    assert report["found"] == 9  # README.md and template.md are not ADRs
    assert sorted(Path(p).stem for p in report["created"]) == ADR_IDS
    assert [s["source"] for s in report["skipped"]] == ["docs/adr/0009-caching-strategy.md"]
    assert "Decision" in report["skipped"][0]["problems"][0]
    assert "0009-caching-strategy.md" in err

    nygard = decision(project, "adr-0003-use-postgresql-for-orders")
    assert nygard["title"] == "ADR 3: Use PostgreSQL for the orders service"
    assert nygard["created_at"] == "2024-09-02T00:00:00Z"
    assert nygard["content"]["status"] == "accepted"
    assert "p99 4.2 s" in nygard["content"]["context"]
    assert nygard["content"]["decision"].startswith("Move the orders service to a dedicated PostgreSQL 16")
    assert nygard["source"]["kind"] == "adr" and nygard["source"]["path"] == "docs/adr/0003-use-postgresql-for-orders.md"

    madr2 = decision(project, "adr-0005-use-kafka-for-order-events")["content"]
    assert madr2["status"] == "accepted"
    assert [a["option"] for a in madr2["alternatives"]] == ["RabbitMQ", "Webhooks with a retry table"]
    assert "nobody here operates it" in madr2["alternatives"][0]["rejected_reason"]
    assert madr2["rationale"][0] == "it is the only option that gives replay without new infrastructure"
    assert "Negative: Consumers must be idempotent: the same event may arrive twice." in madr2["consequences"]
    assert "replay of the last 7 days" in madr2["context"]  # the decision drivers

    madr3 = decision(project, "adr-0006-feature-flags-with-unleash")
    assert madr3["created_at"] == "2024-07-08T00:00:00Z"
    assert [a["option"] for a in madr3["content"]["alternatives"]] == ["LaunchDarkly", "Keep environment variables"]
    assert madr3["content"]["consequences"][0].startswith("Good, because a flag flips in seconds")

    madr4 = decision(project, "adr-0007-openapi-first-contracts")
    assert madr4["content"]["status"] == "proposed" and madr4["record_status"] == "active"
    assert madr4["tags"] == ["adr", "api", "contracts"]

    log4brains = decision(project, "adr-0008-use-log4brains")
    assert log4brains["tags"] == ["adr", "dev-tools", "doc"] and log4brains["created_at"].startswith("2024-02-01")


def test_superseded_adr_is_retired_and_points_at_its_replacement(capsys, project):
    with_adrs(project)
    run(capsys, project, "adr")
    old = decision(project, "adr-0002-use-mysql-for-orders")
    assert old["record_status"] == "retired" and old["content"]["status"] == "superseded"
    assert "replaced by decisions/adr-0003-use-postgresql-for-orders" in old["retired_reason"]
    deprecated = decision(project, "adr-0004-use-soap-for-partner-api")
    assert deprecated["record_status"] == "archived" and deprecated["archived_reason"] == "ADR status: Deprecated"
    # search offers the replacement, never the retired decision
    code = cli.main(["--root", str(project), "search", "--json", "mysql", "orders", "service"])
    hits = json.loads(capsys.readouterr()[0])
    assert code == 0 and hits[0]["id"] == "adr-0003-use-postgresql-for-orders"
    assert "adr-0002-use-mysql-for-orders" not in [h["id"] for h in hits]
    assert hits[0]["source"] == {"kind": "adr", "path": "docs/adr/0003-use-postgresql-for-orders.md"}


ADR = "# {n}. {title}\n\nDate: 2024-01-0{n}\n\n## Status\n\n{status}\n\n## Context\n\nWhy {title}.\n\n## Decision\n\nWe {title}.\n"


def test_adr_tools_chain_resolved_from_either_side(capsys, project):
    """adr-tools writes "Supersedes" into the new ADR and "Superseded by" into the old
    one; a chain where only one side was written is still linked."""
    folder = project / "doc" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-use-cron.md").write_text(ADR.format(n=1, title="use cron", status="Accepted"))
    (folder / "0002-use-celery-beat.md").write_text(ADR.format(
        n=2, title="use celery beat", status="Accepted\n\nSupersedes [1. use cron](0001-use-cron.md)"))
    (folder / "0003-use-k8s-cronjobs.md").write_text(ADR.format(n=3, title="use k8s cronjobs", status="Accepted"))
    (folder / "0002-use-celery-beat.md").write_text(ADR.format(
        n=2, title="use celery beat", status="Superseded by ADR-0003\n\nSupersedes [1. use cron](0001-use-cron.md)"))
    code, report, _ = run(capsys, project, "adr", "--json")  # doc/adr: adr-tools' default folder
    assert code == 0 and len(report["created"]) == 3
    one, two = decision(project, "adr-0001-use-cron"), decision(project, "adr-0002-use-celery-beat")
    assert one["record_status"] == "retired" and "replaced by decisions/adr-0002-use-celery-beat" in one["retired_reason"]
    assert two["record_status"] == "retired" and "replaced by decisions/adr-0003-use-k8s-cronjobs" in two["retired_reason"]
    assert decision(project, "adr-0003-use-k8s-cronjobs")["record_status"] == "active"


def test_adr_dir_file_names_the_folder(project):
    (project / "design" / "records").mkdir(parents=True)
    (project / ".adr-dir").write_text("design/records\n")
    (project / "docs" / "adr").mkdir(parents=True)
    assert adr.find_folders(project)[0] == (project / "design" / "records").resolve()
    (project / ".adr-dir").write_text("../../etc\n")  # never outside the project
    assert all(f.is_relative_to(project.resolve()) for f in adr.find_folders(project))


def test_second_run_writes_nothing_and_a_changed_adr_updates_in_place(capsys, project):
    folder = with_adrs(project)
    run(capsys, project, "adr")
    before = {rel: (project / ".claude/memory" / rel).read_bytes() for rel in memories(project)}
    code, report, _ = run(capsys, project, "adr", "--json")
    assert report["created"] == report["updated"] == report["retired"] == report["archived"] == []
    assert report["unchanged"] == 8
    assert {rel: (project / ".claude/memory" / rel).read_bytes() for rel in memories(project)} == before

    path = folder / "0003-use-postgresql-for-orders.md"
    path.write_text(path.read_text().replace("PostgreSQL 16 instance", "PostgreSQL 17 instance"))
    code, report, _ = run(capsys, project, "adr", "--json")
    assert report["updated"] == [".claude/memory/decisions/adr-0003-use-postgresql-for-orders.json"]
    assert report["created"] == [] and report["unchanged"] == 7
    mem = decision(project, "adr-0003-use-postgresql-for-orders")
    assert "PostgreSQL 17 instance" in mem["content"]["decision"] and mem["times_updated"] == 1
    assert mem["created_at"] == "2024-09-02T00:00:00Z"


def test_dry_run_writes_nothing(capsys, project):
    with_adrs(project)
    code, report, _ = run(capsys, project, "adr", "--dry-run", "--json")
    assert report["dry_run"] is True and len(report["created"]) == 8
    assert report["retired"] == [".claude/memory/decisions/adr-0002-use-mysql-for-orders.json"]
    assert memories(project) == {}
    code, out, _ = run(capsys, project, "adr", "-n")
    assert "would be created .claude/memory/decisions/adr-0001-record-architecture-decisions.json" in out
    assert "(dry run, nothing written): 9 files read; would create 8, update 0, retire 1, archive 1" in out
    assert memories(project) == {}


def test_every_imported_memory_is_valid_and_carries_its_source(capsys, project):
    with_adrs(project)
    shutil.copy(DATA / "claude-md" / "CLAUDE.md", project / "CLAUDE.md")
    run(capsys, project, "adr")
    run(capsys, project, "claude-md")
    run(capsys, project, "claude-memory", "--from", str(DATA / "claude-memory"))
    found = memories(project)
    assert len(found) >= 20
    for rel, mem in found.items():
        assert validate_memory(mem, rel) == [], rel
        assert mem["source"]["kind"] in ("adr", "claude-md", "claude-memory")
        if mem["source"]["kind"] == "claude-memory":
            assert mem["source"]["path"].startswith(str(DATA / "claude-memory"))  # outside: absolute
        else:
            assert not mem["source"]["path"].startswith("/")  # inside the project: relative
    assert cli.main(["--root", str(project), "validate"]) == 0


def test_the_schema_checks_source():
    from conftest import make_memory

    mem = make_memory("decision", "x", "Chose X")
    mem["source"] = {"kind": "adr", "path": "docs/adr/0001-x.md", "sha256": "0" * 64}
    assert validate_memory(mem, "decisions/x.json") == []
    mem["source"] = {"kind": "Not A Slug", "path": ""}
    problems = validate_memory(mem, "decisions/x.json")
    assert any("source.kind" in p for p in problems) and any("source.path" in p for p in problems)
    mem["source"] = {"path": "a.md"}
    assert validate_memory(mem, "decisions/x.json") == ["missing field 'kind' in source"]


def test_a_secret_in_an_adr_gets_exactly_what_the_save_path_does(capsys, project, tmp_path):
    """The importer writes through save_memory: whatever the write path does with a
    secret (refuse it, or redact it), an imported ADR gets the same."""
    folder = project / "docs" / "adr"
    folder.mkdir(parents=True)
    key = "AKIA" + "Z7QW3RT5YU2IO4PL"  # an AWS access key id shape
    secret = "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY9"
    (folder / "0001-deploy-keys.md").write_text(ADR.format(n=1, title="keep deploy keys in CI", status="Accepted")
                                                + f"\nThe key {key} with {secret} lives in the CI settings.\n")
    report = Report("adr", dry_run=True)
    planned = adr.plan(project, adr.find_folders(project), report)[0]
    other = tmp_path / "other"
    other.mkdir()
    other_root = init_project(other).root
    try:
        expected = save_memory(other_root, load_config(str(other_root)), "decision", {**planned.data, "id": planned.id})
        refused = None
    except WriteError as exc:
        expected, refused = None, exc
    code, result, _ = run(capsys, project, "adr", "--json")
    if refused is not None:
        assert code == 1 and result["created"] == []
        assert result["skipped"][0]["source"] == "docs/adr/0001-deploy-keys.md"
        assert result["skipped"][0]["reason"] == refused.args[0] and result["skipped"][0]["problems"] == refused.problems
        assert memories(project) == {}
    else:
        assert code == 0
        mine = decision(project, planned.id)
        assert expected["status"] == "created"
        theirs = json.loads((other_root / "decisions" / f"{planned.id}.json").read_text())
        for key_name in ("title", "content", "tags", "source"):
            assert mine[key_name] == theirs[key_name]


def _adr(text_title: str) -> str:
    return (f"# 1. {text_title}\n\nDate: 2024-01-01\n\n## Status\n\nAccepted\n\n## Context\n\n"
            "We need a queue for the events.\n\n## Decision\n\nWe use kafka for the events.\n")


def test_import_never_prints_a_repository_file_name_raw(tmp_path: Path):
    project = tmp_path / "proj"
    project.joinpath(*MEMORY_DIR).mkdir(parents=True)
    adrs = project / "docs" / "adr"
    adrs.mkdir(parents=True)
    (adrs / "0001-use-kafka.md").write_text(_adr("Use kafka"))
    # An OSC title sequence and an SGR colour in a name, on a link (skipped, named on stderr),
    # and a name that forges a line of the report (ignored: it is no ADR).
    (adrs / "0002-\x1b]0;PWNED\x07\x1b[8mhidden.md").symlink_to("/etc/hostname")
    (adrs / "0003-x\ncreated .claude\x1b[1A\x1b[2K.md").write_text("hello\n")
    out = subprocess.run(cli_cmd("--root", str(project), "import", "adr"), capture_output=True, text=True,
                         cwd=project, timeout=60, env=cli_env())
    assert "created .claude/memory/decisions/adr-0001-use-kafka.json" in out.stdout, out
    text = out.stdout + out.stderr
    assert not any(ch in text for ch in "\x1b\x07"), repr(text)
    assert all(not line.startswith("created .claude\x1b") for line in text.splitlines()), repr(text)
    # init's offer names the folder `.adr-dir` gives: escaped too
    odd = project / "odd\x1b[2Jdir"
    odd.mkdir()
    (odd / "0001-use-kafka.md").write_text(_adr("Use kafka"))
    (project / ".adr-dir").write_text(odd.name + "\n")
    from memindex.importers.discover import offers

    assert [o.text for o in offers(project) if o.kind == "adr" and "odd" in o.where] == ["found 1 ADR in 'odd\\x1b[2Jdir'"]


# --- Claude Code's auto memory ---------------------------------------------------------


def test_project_key_is_claude_codes():
    # expected values computed with Claude Code 2.1's own function, run in node
    assert claude_memory.project_key("/home/dev/my.project_x") == "-home-dev-my-project-x"
    long = "/work/" + "très-long/dossier." * 15 + "é"
    assert claude_memory.project_key(long) == (
        "-work-tr-s-long-dossier-tr-s-long-dossier-tr-s-long-dossier-tr-s-long-dossier-tr-s-long-dossier-tr-s-long-"
        "dossier-tr-s-long-dossier-tr-s-long-dossier-tr-s-long-dossier-tr-s-long-dossier-tr-s-long-doss-w8pg18"
    )


def test_default_folder_uses_the_main_checkout_of_a_worktree(tmp_path, monkeypatch):
    main = tmp_path / "repo"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (main / ".git" / "worktrees" / "feature" / "commondir").write_text("../..\n")
    tree = tmp_path / "feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    (main / ".git" / "worktrees" / "feature" / "gitdir").write_text(f"{tree / '.git'}\n")  # git's back-link
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    key = claude_memory.project_key(str(main.resolve()))
    assert claude_memory.default_folder(tree) == tmp_path / "home" / ".claude" / "projects" / key / "memory"
    assert claude_memory.default_folder(main / "src") == claude_memory.default_folder(tree)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert claude_memory.default_folder(tree) == tmp_path / "cfg" / "projects" / key / "memory"


def test_a_git_file_of_the_project_cannot_pick_another_projects_auto_memory(tmp_path: Path):
    victim = tmp_path / "work" / "secret-monorepo"
    (victim / ".git").mkdir(parents=True)
    config = tmp_path / "claude-config"
    notes = config / "projects" / claude_memory.project_key(str(victim)) / "memory"
    notes.mkdir(parents=True)
    (notes / "MEMORY.md").write_text("# Memory\n\n## Prod access\n\nThe prod bastion is bastion.internal.corp, "
                                     "the break-glass account is ops-admin.\n")
    # An unpacked archive (no real .git folder): its `.git` file points at a worktree
    # record it ships itself, whose `commondir` names the other project's repository.
    project = tmp_path / "downloads" / "tarball-project"
    project.joinpath(*MEMORY_DIR).mkdir(parents=True)
    (project / "fake").mkdir()
    (project / ".git").write_text("gitdir: fake\n")
    (project / "fake" / "commondir").write_text(str(victim / ".git") + "\n")
    env = {**cli_env(), "CLAUDE_CONFIG_DIR": str(config)}
    out = subprocess.run(cli_cmd("--root", str(project), "import", "claude-memory", "--dry-run", "--json"),
                         capture_output=True, text=True, cwd=project, timeout=60, env=env)
    report = json.loads(out.stdout) if out.stdout.strip().startswith("{") else {}
    assert report.get("created", []) == [], out.stdout + out.stderr
    # nor with a back-link it ships too, nor with its record named after the other's worktrees
    (project / "fake" / "gitdir").write_text(str(project / ".git") + "\n")
    assert claude_memory.git_root(project) == project.resolve()
    (victim / ".git" / "worktrees" / "x").mkdir(parents=True)
    (victim / ".git" / "worktrees" / "x" / "commondir").write_text("../..\n")
    (victim / ".git" / "worktrees" / "x" / "gitdir").write_text(str(tmp_path / "elsewhere" / ".git") + "\n")
    (project / ".git").write_text(f"gitdir: {victim / '.git' / 'worktrees' / 'x'}\n")
    assert claude_memory.git_root(project) == project.resolve()
    (victim / ".git" / "worktrees" / "x" / "gitdir").write_text(str(project / ".git") + "\n")  # git's own record
    assert claude_memory.git_root(project) == victim.resolve()


def test_claude_memory_categories_follow_the_stated_rule(capsys, project, tmp_path, monkeypatch):
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = claude_memory.default_folder(project)
    shutil.copytree(DATA / "claude-memory", folder)
    code, report, _ = run(capsys, project, "claude-memory", "--json")  # the default folder
    assert code == 0 and report["found"] == 6
    got = {Path(p).stem: Path(p).parent.name for p in report["created"]}
    assert got == {
        "claude-memory-feedback-real-db-tests": "constraints",  # "must" in its first sentence
        "claude-memory-user-role": "preferences",  # type user
        "claude-memory-project-release-freeze": "constraints",  # "freeze" in its name
        "claude-memory-reference-dashboards": "preferences",  # the default
        "claude-memory-how-to-debug-the-flaky-checkout-test": "runbooks",  # "how to", and steps
        "claude-memory-known-issue-slow-cold-start": "tech-debt",  # "known issue"
        "claude-memory-quick-notes": "constraints",  # MEMORY.md's own note: "do not"
    }
    mems = memories(project)
    db = mems["constraints/claude-memory-feedback-real-db-tests.json"]
    assert db["title"] == "Integration tests hit a real database"  # MEMORY.md's link words
    assert db["content"]["impact"] == ["in Q3 the mocked tests passed while the production migration failed on a NOT NULL column."]
    assert db["content"]["how_to_apply"].startswith("any test under `tests/integration/`")
    steps = mems["runbooks/claude-memory-how-to-debug-the-flaky-checkout-test.json"]["content"]["steps"]
    assert len(steps) == 3 and steps[0].startswith("Run `pytest")
    assert run(capsys, project, "claude-memory", "--json")[1]["unchanged"] == 7


def test_claude_memory_without_a_folder_says_so(capsys, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nothing"))
    code, out, _ = run(capsys, project, "claude-memory")
    assert code == 0 and "no Claude Code auto memory for this project" in out and memories(project) == {}


# --- CLAUDE.md / AGENTS.md -------------------------------------------------------------


def test_claude_md_sections_become_constraints_and_preferences(capsys, project):
    for name in ("CLAUDE.md", "AGENTS.md"):
        shutil.copy(DATA / "claude-md" / name, project / name)
    code, report, _ = run(capsys, project, "claude-md", "--json")
    assert code == 0
    got = {Path(p).stem: Path(p).parent.name for p in report["created"]}
    assert got == {
        "claude-md-commands": "preferences", "claude-md-code-style": "preferences",
        "claude-md-code-style-naming": "preferences", "claude-md-security-rules": "constraints",
        "claude-md-architecture": "preferences", "agents-md-pull-requests": "preferences",
        "agents-md-testing": "constraints",
    }  # the "This file provides guidance" intro is not a memory
    mems = memories(project)
    rules = mems["constraints/claude-md-security-rules.json"]
    assert rules["content"]["severity"] == "high" and "NEVER log request bodies" in rules["content"]["rule"]
    assert rules["source"]["path"] == "CLAUDE.md" and rules["source"]["section"] == "Security rules"
    assert mems["preferences/claude-md-code-style-naming.json"]["title"] == "Code style > Naming"


def test_claude_md_renamed_heading_retires_the_old_memory(capsys, project):
    shutil.copy(DATA / "claude-md" / "CLAUDE.md", project / "CLAUDE.md")
    run(capsys, project, "claude-md")
    text = (project / "CLAUDE.md").read_text().replace("## Architecture", "## Layout")
    (project / "CLAUDE.md").write_text(text)
    code, report, _ = run(capsys, project, "claude-md", "--json")
    assert report["created"] == [".claude/memory/preferences/claude-md-layout.json"]
    assert report["retired"] == [".claude/memory/preferences/claude-md-architecture.json"]
    gone = memories(project)["preferences/claude-md-architecture.json"]
    assert gone["record_status"] == "retired" and gone["retired_reason"] == "No longer in CLAUDE.md"
    assert run(capsys, project, "claude-md", "--json")[1]["retired"] == []


def test_claude_md_is_never_imported_by_init(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    proj = tmp_path / "p"
    proj.mkdir()
    shutil.copy(DATA / "claude-md" / "CLAUDE.md", proj / "CLAUDE.md")
    shutil.copytree(DATA / "adr", proj / "docs" / "adr")
    shutil.copytree(DATA / "claude-memory", claude_memory.default_folder(proj))
    assert cli.main(["--root", str(proj), "init", "--json"]) == 0
    offers = {o["kind"]: o for o in json.loads(capsys.readouterr()[0])["imports"]}
    assert offers["adr"]["count"] == 9 and offers["adr"]["command"] == "memindex import adr"
    assert offers["claude-memory"]["count"] == 6
    assert offers["claude-md"]["count"] == 5 and offers["claude-md"]["opt_in"] is True
    assert memories(proj) == {}
    assert cli.main(["--root", str(proj), "init"]) == 0
    out = capsys.readouterr()[0]
    assert "found 9 ADRs in docs/adr: memindex import adr" in out
    assert "Claude Code auto memory: 6 files: memindex import claude-memory" in out
    assert "CLAUDE.md: 5 sections: memindex import claude-md CLAUDE.md (opt-in)" in out


# --- a Markdown note in a category folder -----------------------------------------------


def test_markdown_note_takes_its_folders_category(capsys, project):
    note = project / ".claude" / "memory" / "decisions" / "queue-choice.md"
    note.write_text("# Use SQS for the email queue\n\nWe chose SQS over RabbitMQ because the team runs no brokers.\n")
    code, report, _ = run(capsys, project, "markdown", str(note), "--json")
    assert code == 0 and report["created"] == [".claude/memory/decisions/note-queue-choice.json"]
    mem = decision(project, "note-queue-choice")
    assert mem["title"] == "Use SQS for the email queue" and "team runs no brokers" in mem["content"]["decision"]
    assert mem["source"]["kind"] == "markdown" and mem["source"]["path"] == ".claude/memory/decisions/queue-choice.md"
    assert note.exists()  # the note itself is left alone


def test_import_explain_shows_the_source(capsys, project):
    with_adrs(project)
    run(capsys, project, "adr")
    assert cli.main(["--root", str(project), "explain", "why move the orders service to postgresql jsonb"]) == 0
    assert "source: adr docs/adr/0003-use-postgresql-for-orders.md" in capsys.readouterr()[0]
    assert cli.main(["--root", str(project), "explain", "--json", "why move the orders service to postgresql jsonb"]) == 0
    considered = json.loads(capsys.readouterr()[0])["considered"]
    kept = [c for c in considered if c["kept"]]
    assert kept and kept[0]["source"]["path"] == "docs/adr/0003-use-postgresql-for-orders.md"
    assert all(c["source"]["kind"] == "adr" for c in considered)


def test_a_symlinked_source_is_refused_by_name(capsys, project, tmp_path):
    folder = with_adrs(project)
    outside = tmp_path / "secret.md"
    outside.write_text(ADR.format(n=10, title="leak", status="Accepted"))
    os.symlink(outside, folder / "0010-leak.md")
    code, report, _ = run(capsys, project, "adr", "--json")
    assert code == 1
    assert any(s["source"] == "docs/adr/0010-leak.md" and "symbolic link" in s["reason"] for s in report["skipped"])


def test_save_memories_checks_each_like_save_memory(project):
    """The batch the importers use: the same checks per memory, one refusal does not stop
    the others, and all are indexed by the one commit."""
    from memindex.errors import InvalidMemory
    from memindex.write import save_memories

    root = project / ".claude" / "memory"
    good = {"title": "Use ruff", "tags": ["lint"], "content": {"topic": "lint", "value": "ruff"}}
    bad = {"title": "No topic", "tags": ["x"], "content": {"value": "missing topic"}}
    answers = save_memories(root, load_config(str(root)), [("preference", good), ("preference", bad),
                                                          ("preference", {**good, "id": "use-ruff"})])
    assert answers[0]["status"] == "created" and answers[0]["indexed"] is True
    assert isinstance(answers[1], InvalidMemory) and "missing field 'topic' in content" in answers[1].problems
    assert isinstance(answers[2], WriteError) and "already exists" in str(answers[2])
    assert sorted(walk(root)) == ["preferences/use-ruff.json"]
    from conftest import search_paths

    assert search_paths(root, "ruff") == ["preferences/use-ruff.json"]


def test_the_readme_shows_the_real_output(capsys, tmp_path, monkeypatch):
    """README "Import what the project already knows": init's offer and `import adr`'s
    output, on tests/data's sources, are what the README shows (`...` elides lines)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## Import what the project already knows\n"):]
    section = section[: section.index("\n## ", 10)]
    shown = [block.split("```", 1)[0].strip("\n") for block in section.split("```text\n")[1:]]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "home"))
    proj = tmp_path / "p"
    proj.mkdir()
    shutil.copytree(DATA / "adr", proj / "docs" / "adr")
    shutil.copy(DATA / "claude-md" / "CLAUDE.md", proj / "CLAUDE.md")
    shutil.copytree(DATA / "claude-memory", claude_memory.default_folder(proj))
    cli.main(["--root", str(proj), "init"])
    assert shown[0] in capsys.readouterr()[0]
    cli.main(["--root", str(proj), "import", "adr"])
    out, err = capsys.readouterr()
    lines = (out + err).splitlines()
    for line in shown[1].splitlines():
        if line != "...":
            assert line in lines, line


def test_a_memory_the_write_path_refuses_is_named_and_the_rest_written(capsys, project):
    """A repository config can make memindex do less: with index.max_file_bytes at 4 KiB,
    save_memory refuses the long ADR; the import names it and writes the others."""
    folder = with_adrs(project)
    (folder / "0010-long.md").write_text(ADR.format(n=10, title="a long one", status="Accepted")
                                         + "\n".join(f"* consequence number {i} of many" for i in range(400)) + "\n")
    config = project / ".claude" / "memory" / "memory-config.json"
    config.write_text(json.dumps({"index": {"max_file_bytes": 4096}}))
    code, report, err = run(capsys, project, "adr", "--json")
    assert code == 1 and len(report["created"]) == 8
    long = [s for s in report["skipped"] if s["source"] == "docs/adr/0010-long.md"]
    assert long and "max_file_bytes" in " ".join(long[0]["problems"])
    assert "skipped docs/adr/0010-long.md" in err


def test_madr_superseded_by_link_and_odd_dates(capsys, project):
    folder = project / "docs" / "decisions"
    folder.mkdir(parents=True)
    (folder / "0001-use-moment.md").write_text(
        "---\nstatus: superseded by [ADR-0002](0002-use-date-fns.md)\ndate: 2031-01-01\n---\n# Use moment\n\n"
        "## Context and Problem Statement\n\nDates.\n\n## Decision Outcome\n\nChosen option: \"moment\"\n")
    (folder / "0002-use-date-fns.md").write_text(
        "---\nstatus: accepted\ndate: 2024-02-30\n---\n# Use date-fns\n\n## Context and Problem Statement\n\n"
        "moment is deprecated.\n\n## Decision Outcome\n\nChosen option: \"date-fns\", because it tree-shakes\n")
    code, report, _ = run(capsys, project, "adr", "--json")
    assert code == 0, report
    old, new = decision(project, "adr-0001-use-moment"), decision(project, "adr-0002-use-date-fns")
    assert old["record_status"] == "retired" and "replaced by decisions/adr-0002-use-date-fns" in old["retired_reason"]
    assert new["content"]["rationale"] == ["it tree-shakes"]
    # a future or impossible date is not a created_at: the import's time is
    assert not old["created_at"].startswith("2031") and not new["created_at"].startswith("2024-02-30")


def test_log4brains_dated_names_and_a_bare_chosen_option(capsys, project):
    """log4brains names ADRs `20201103-slug.md` (a date, not a number) and writes
    `Chosen option: "Option 2: Lunr.js".` with the reasons as a list, or none."""
    folder = project / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "20201103-use-lunr-for-search.md").write_text(
        "# Use Lunr for search\n\n- Status: accepted\n- Date: 2020-11-03\n\n## Context and Problem Statement\n\n"
        "We need full-text search.\n\n## Considered Options\n\n- Option 1: Fuse.js\n- Option 2: Lunr.js\n\n"
        "## Decision Outcome\n\nChosen option: \"Option 2: Lunr.js\".\n")
    (folder / "20201104-use-madr.md").write_text(
        "# Use MADR\n\n- Status: accepted\n\n## Context and Problem Statement\n\nWhich format?\n\n"
        "## Considered Options\n\n- [MADR](https://adr.github.io/madr/) 2.1.2\n- Nygard's template\n\n"
        "## Decision Outcome\n\nChosen option: \"MADR 2.1.2\", because\n\n- it is lean\n- it is structured\n")
    run(capsys, project, "adr")
    lunr = decision(project, "adr-20201103-use-lunr-for-search")
    assert lunr["title"] == "Use Lunr for search"
    assert lunr["content"]["alternatives"] == [{"option": "Option 1: Fuse.js"}]
    madr = decision(project, "adr-20201104-use-madr")["content"]
    assert madr["rationale"] == ["it is lean", "it is structured"]
    assert madr["alternatives"] == [{"option": "Nygard's template"}]


def test_two_sections_with_one_id_get_two_memories_and_keep_them(capsys, project, tmp_path):
    """Two auto memory files with the same heading make the same id: the second takes the
    id with a digest of its origin, on every run."""
    folder = tmp_path / "auto"
    folder.mkdir()
    for name in ("api.md", "web.md"):
        (folder / name).write_text(f"# Notes\n\n## Known issue: slow start\n\nThe {name[:3]} takes 8 s to start after a deploy.\n")
    code, report, _ = run(capsys, project, "claude-memory", "--from", str(folder), "--json")
    assert code == 0 and len(report["created"]) == 2
    assert report["created"][0].endswith("/claude-memory-known-issue-slow-start.json")
    assert report["created"][1].startswith(".claude/memory/tech-debt/claude-memory-known-issue-slow-start-")
    again = run(capsys, project, "claude-memory", "--from", str(folder), "--json")[1]
    assert again["created"] == [] and again["unchanged"] == 2


class _Overrun(Exception):
    pass


@pytest.mark.parametrize("text", [
    # a heading with a long run of spaces (a `\s*#*\s*$` tail backtracked cubically)
    "# Project rules\n\n## Build" + " " * 6000 + "x\n\nAlways run make before pushing.\n",
    # unclosed comment openers (a `<!--.*?-->` scan rescanned the rest of the file from each)
    "# Project rules\n\n## Build\n\nAlways run make before pushing.\n\n" + "<!--" * 100_000 + "\n",
    # link openers without an end (the link pattern rescanned the rest of the paragraph from each)
    "# Project rules\n\n## Build\n\nAlways run make before pushing. " + "[a](" * 20_000 + "\n",
], ids=["long-heading", "comment-openers", "link-openers"])
def test_init_offers_finish_quickly_on_a_hostile_claude_md(tmp_path: Path, text: str):
    import signal

    from memindex.importers.discover import offers

    project = tmp_path / "proj"
    project.mkdir()
    (project / "CLAUDE.md").write_text(text)

    def overrun(signum, frame):
        raise _Overrun()

    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, 3.0)  # the whole file parses in milliseconds once linear
    try:
        found = offers(project)
    except _Overrun:
        pytest.fail("`memindex init`'s offers took over 3 s on a CLAUDE.md of a few KB")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert [o.kind for o in found] == ["claude-md"]


def test_headings_lose_their_closing_hashes_and_comments_go():
    from memindex.importers.markdown import sections

    got = sections("# A ##\n## C#\n### Note #  \n#### ##\nx <!-- hint\n--> y <!-- z\n")
    assert [s.heading for s in got[1:]] == ["A", "C#", "Note", ""]
    assert got[-1].text == "x  y <!-- z"
