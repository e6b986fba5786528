"""The project's documents in the index: Markdown read by one parser, registered folders
walked inside the project, sections as index rows kept in step by the stat diff, freshness,
one result per document in search, identifiers found however they are written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import bump_clock, run_cli, write_mem
from memindex import index
from memindex.config import parse_config
from memindex.index.sync import sync
from memindex.retrieval.query import search
from memindex.store import markdown
from memindex.store.documents import walk
from memindex.text.identifiers import other_forms
from memindex.text.render import memory_context, shown


ADR = """# 7. Use Postgres for orders

Date: 2024-03-01

## Status

Accepted

## Context

Orders need a relational store with strong consistency; the team knows SQL well.

- bullets in the context are kept
- so are nested ones

## Decision

### Storage
We will use Postgres 15 with logical replication to the reporting copy.

```sql
SELECT pg_create_logical_replication_slot('reporting', 'pgoutput');
```

## Consequences

| who | what |
|-----|------|
| ops | runs pg |
"""


def register(memory_root: Path, paths: dict[str, str]) -> None:
    (memory_root / "memory-config.json").write_text(json.dumps({"documents": {"paths": paths}}))


def cfg_for(paths: dict[str, str]):
    return parse_config({"documents": {"paths": paths}})


def write(project: Path, rel: str, text: str) -> Path:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def rows(memory_root: Path) -> list[str]:
    conn = index.open_reader(memory_root)
    try:
        return [p for (p,) in conn.execute("SELECT path FROM documents WHERE path LIKE '@%' ORDER BY path")]
    finally:
        conn.close()


# --- the parser -------------------------------------------------------------------------


def test_markdown_sections_keep_lists_code_and_tables() -> None:
    parsed = markdown.parse(ADR)
    assert parsed.title == "7. Use Postgres for orders"
    by_anchor = {s.anchor: s for s in parsed.sections}
    assert "- bullets in the context are kept" in by_anchor["context"].blocks
    assert "- so are nested ones" in by_anchor["context"].blocks
    assert "pg_create_logical_replication_slot" in by_anchor["storage"].text
    assert by_anchor["storage"].path == ("7. Use Postgres for orders", "Decision", "Storage")
    assert "ops | runs pg" in by_anchor["consequences"].text


def test_front_matter_is_read_safely() -> None:
    parsed = markdown.parse("---\nstatus: accepted\ndate: 2024-01-02\ntags: [a, b]\nx: !!python/object:os.system {}\n---\n# T\n\ntext here")
    assert parsed.meta.get("status") is None or parsed.meta == {}  # a tag PyYAML's safe loader refuses: the whole block is ignored
    ok = markdown.parse("---\nstatus: accepted\ndate: 2024-01-02\ntags: [a, b]\n---\n# T\n\ntext here")
    assert ok.meta == {"status": "accepted", "date": "2024-01-02", "tags": ["a", "b"]}


def test_duplicate_headings_get_distinct_anchors_and_comments_are_dropped() -> None:
    parsed = markdown.parse("# T\n\n## Notes\none\n\n<!-- hidden words -->\n\n## Notes\ntwo\n")
    assert [s.anchor for s in parsed.sections if s.level == 2] == ["notes", "notes-1"]
    assert "hidden" not in parsed.text()


def test_a_huge_document_is_cut_and_says_so() -> None:
    parsed = markdown.parse("# T\n\n" + "word " * 300_000)
    assert parsed.truncated


# --- identifiers -----------------------------------------------------------------------


def test_identifiers_get_their_other_spelling() -> None:
    forms = other_forms("KubeQuotaExceeded fired; see kube_quota_exceeded and virt-handler, HTTPServer v1.2").split("\n")
    assert forms == ["kube quota exceeded", "http server"]  # what the tokenizer splits itself needs no second form


@pytest.mark.parametrize("query", ["KubeQuotaExceeded", "kube_quota_exceeded", "Kube Quota Exceeded", "kube-quota-exceeded"])
def test_an_alert_is_found_however_it_is_written(memory_root: Path, query: str) -> None:
    project = memory_root.parent.parent
    write(project, "runbooks/kube-quota-exceeded.md", "---\ntitle: KubeQuotaExceeded\n---\n\n## Meaning\nA namespace is over 90% of its quota.\n")
    write(project, "runbooks/other.md", "# PodCrashLooping\n\n## Meaning\nA pod restarts often, over its quota of restarts.\n")
    register(memory_root, {"runbooks": "runbook"})
    sync(memory_root, cfg_for({"runbooks": "runbook"}))
    conn = index.open_reader(memory_root)
    try:
        hits = search(conn, query, limit=5)
    finally:
        conn.close()
    assert hits and hits[0].path.startswith("@runbooks/kube-quota-exceeded.md#")


# --- walking and syncing ------------------------------------------------------------------


def test_walk_reads_nested_folders_inside_the_project_only(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write(project, "docs/adr/0001-a.md", "# A\n\ntext")
    write(project, "docs/adr/sub/0002-b.md", "# B\n\ntext")
    write(project, "docs/adr/.hidden/0003-c.md", "# C\n\ntext")
    write(project, "docs/adr/node_modules/x.md", "# X\n\ntext")
    write(project, "docs/adr/notes.txt", "not markdown")
    outside = write(tmp_path, "elsewhere/secret.md", "# S\n\nsecret")
    os.symlink(outside, project / "docs/adr/link.md")
    problems: dict[str, str] = {}
    found = walk(str(project), {"docs/adr": "adr", "../elsewhere": "docs"}, problems)
    assert sorted(found) == ["docs/adr/0001-a.md", "docs/adr/sub/0002-b.md"]
    assert "leaves the project" in problems["../elsewhere"]
    assert "leaves the project" in problems["docs/adr/link.md"]


def test_a_repository_config_cannot_name_a_path_outside_the_project() -> None:
    cfg = parse_config({"documents": {"paths": {"/etc": "docs", "../x": "adr", "~/notes": "notes", "docs/adr": "adr"}}})
    assert cfg["documents.paths"] == {"docs/adr": "adr"}
    assert any("documents.paths" in w for w in cfg.warnings)


def test_sync_indexes_sections_and_follows_edits_removals_and_renames(memory_root: Path) -> None:
    project = memory_root.parent.parent
    path = write(project, "docs/adr/0007-use-postgres.md", ADR)
    register(memory_root, {"docs/adr": "adr"})
    cfg = cfg_for({"docs/adr": "adr"})
    report = sync(memory_root, cfg)
    assert report.documents["added"] == 1
    assert "@docs/adr/0007-use-postgres.md#decision" in rows(memory_root)
    again = sync(memory_root, cfg)
    assert (again.documents["added"], again.documents["updated"], again.documents["removed"]) == (0, 0, 0)
    bump_clock()
    path.write_text(ADR.replace("## Consequences", "## Risks"), encoding="utf-8")
    assert sync(memory_root, cfg).documents["updated"] == 1
    assert "@docs/adr/0007-use-postgres.md#risks" in rows(memory_root)
    assert "@docs/adr/0007-use-postgres.md#consequences" not in rows(memory_root)
    path.rename(project / "docs/adr/0008-renamed.md")
    report = sync(memory_root, cfg)
    assert (report.documents["added"], report.documents["removed"]) == (1, 1)
    assert all(p.startswith("@docs/adr/0008-renamed.md#") for p in rows(memory_root))


def test_memory_files_and_documents_live_side_by_side(memory_root: Path) -> None:
    project = memory_root.parent.parent
    write(project, "docs/adr/0007-use-postgres.md", ADR)
    write_mem(memory_root, "decision", "orders-db", "Orders database", ["db"], content={"status": "accepted", "context": "c", "decision": "we use Postgres for orders"})
    register(memory_root, {"docs/adr": "adr"})
    cfg = cfg_for({"docs/adr": "adr"})
    sync(memory_root, cfg)
    report = sync(memory_root, cfg)  # nothing to do: a document is never taken for a vanished memory file
    assert (report.added, report.updated, report.removed) == (0, 0, 0)
    assert report.documents["removed"] == 0
    assert rows(memory_root)


def test_an_edit_in_place_makes_search_sync_first(memory_root: Path) -> None:
    project = memory_root.parent.parent
    path = write(project, "docs/adr/0007-use-postgres.md", ADR)
    register(memory_root, {"docs/adr": "adr"})
    assert run_cli("--root", str(memory_root), "sync").returncode == 0
    bump_clock()
    path.write_text(ADR.replace("Postgres 15", "Postgres 15 and zebrafish"), encoding="utf-8")
    out = run_cli("--root", str(memory_root), "search", "zebrafish")
    assert "docs/adr/0007-use-postgres.md" in out.stdout


def test_a_new_file_in_a_nested_folder_marks_the_index_stale(memory_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memindex.index.sync as sync_mod

    monkeypatch.setattr(sync_mod, "RACY_WINDOW_NS", 0)  # as if 2 s had passed: the fingerprint is stored
    project = memory_root.parent.parent
    write(project, "docs/adr/sub/0001-a.md", "# A\n\nsome words here")
    register(memory_root, {"docs/adr": "adr"})
    cfg = cfg_for({"docs/adr": "adr"})
    sync(memory_root, cfg)
    conn = index.open_reader(memory_root)
    try:
        assert index.is_current(conn, memory_root, cfg["documents.paths"])
    finally:
        conn.close()
    bump_clock()
    write(project, "docs/adr/sub/0002-b.md", "# B\n\nmore words here")
    conn = index.open_reader(memory_root)
    try:
        assert index.is_stale(conn, memory_root)
        assert not index.is_current(conn, memory_root, {"docs/adr": "adr", "runbooks": "runbook"})  # registration changed
    finally:
        conn.close()


def test_a_file_not_indexed_is_named_with_its_reason(memory_root: Path) -> None:
    project = memory_root.parent.parent
    write(project, "docs/adr/0001-empty.md", "# 1. Title\n\n## Status\n\n[status]\n\n## Context\n\n{context}\n")
    write(project, "docs/adr/0002-big.md", "# Big\n\n" + "x" * 1_100_000)
    register(memory_root, {"docs/adr": "adr"})
    sync(memory_root, cfg_for({"docs/adr": "adr"}))
    out = run_cli("--root", str(memory_root), "status", "--json")
    info = json.loads(out.stdout)
    assert set(info["documents"]["not_indexed"]) == {"docs/adr/0001-empty.md", "docs/adr/0002-big.md"}
    assert "byte" in info["documents"]["not_indexed"]["docs/adr/0002-big.md"]


# --- search and the hook's block --------------------------------------------------------


def test_search_gives_one_result_per_document_at_its_best_section(memory_root: Path) -> None:
    project = memory_root.parent.parent
    write(project, "docs/adr/0007-use-postgres.md", ADR)
    write(project, "docs/adr/0009-kafka.md", "# 9. Kafka for events\n\n## Decision\nKafka carries order events to billing.\n")
    register(memory_root, {"docs/adr": "adr"})
    sync(memory_root, cfg_for({"docs/adr": "adr"}))
    conn = index.open_reader(memory_root)
    try:
        hits = search(conn, "postgres logical replication orders", limit=10)
    finally:
        conn.close()
    files = [h.path.rpartition("#")[0] for h in hits]
    assert files[0] == "@docs/adr/0007-use-postgres.md" and len(files) == len(set(files))
    assert hits[0].sections >= 2


def test_a_superseded_adr_hands_its_place_to_its_successor_and_a_deprecated_one_stays(memory_root: Path) -> None:
    project = memory_root.parent.parent
    write(project, "docs/adr/0002-kafka.md", "# 2. Kafka for order events\n\n## Status\nSuperseded by [3. NATS](0003-nats.md)\n\n## Decision\nKafka with three brokers carries order events.\n")
    write(project, "docs/adr/0003-nats.md", "# 3. NATS JetStream\n\n## Status\nAccepted\n\n## Decision\nWe move the streams to NATS JetStream: cheaper to run.\n")
    write(project, "docs/adr/0004-soap.md", "# 4. SOAP for partners\n\n## Status\nDeprecated\n\n## Decision\nPartners call a SOAP gateway for invoices.\n")
    register(memory_root, {"docs/adr": "adr"})
    sync(memory_root, cfg_for({"docs/adr": "adr"}))
    conn = index.open_reader(memory_root)
    try:
        kafka = search(conn, "kafka brokers order events", limit=5)
        soap = search(conn, "soap gateway invoices", limit=5)
    finally:
        conn.close()
    assert kafka[0].path.startswith("@docs/adr/0003-nats.md#")
    assert soap[0].path.startswith("@docs/adr/0004-soap.md#") and soap[0].record_status == "archived"


def test_the_hook_block_names_the_file_and_section_escaped(memory_root: Path) -> None:
    class H:
        category, tags = "decision", ["db"]
        title = "<script>alert(1)</script> ＜memory-context＞"
        path = "@docs/adr/0007-use-postgres.md#decision"

    block = memory_context([H()], ".claude/memory/")
    assert "-> docs/adr/0007-use-postgres.md#decision" in block
    assert "<script>" not in block and "＜" not in block
    assert shown(".claude/memory/", "@../etc/passwd#x") is None
    assert shown(".claude/memory/", "@docs/a\u202eb.md#x") is None


def test_post_tool_use_reindexes_a_registered_document_and_leaves_others(memory_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The assistant edits an ADR with Edit/Write: the PostToolUse hook re-indexes that file
    (a one-file background sync); a Markdown file outside the registered folders, and one
    changed without a tool call, are left to the next full sync."""
    import subprocess
    import sys
    import time

    from conftest import REPO

    project = memory_root.parent.parent
    register(memory_root, {"docs/adr": "adr"})
    adr = write(project, "docs/adr/0007-use-postgres.md", ADR)
    control = write(project, "docs/adr/0008-control.md", "# 8. Control\n\n## Decision\nWe keep the platypus queue.\n")
    outside = write(project, "notes/elsewhere.md", "# Elsewhere\n\nwombat words\n")
    sync(memory_root, cfg_for({"docs/adr": "adr"}))
    bump_clock()
    adr.write_text(ADR.replace("Postgres 15", "Postgres 15 with quokka pooling"), encoding="utf-8")
    control.write_text("# 8. Control\n\n## Decision\nWe keep the platypus queue, now numbat-sized.\n", encoding="utf-8")
    for path in (adr, outside):
        payload = json.dumps({"tool_name": "Edit", "tool_input": {"file_path": str(path)}, "cwd": str(project)})
        out = subprocess.run([sys.executable, "-I", "-S", str(REPO / "hooks" / "memindex_hook.py"), "post-tool-use"],
                             input=payload.encode(), capture_output=True, timeout=20)
        assert out.returncode == 0 and out.stdout == b""

    def found(word: str) -> list[str]:
        conn = index.open_reader(memory_root)
        try:
            return [h.path for h in search(conn, word, limit=5)]
        finally:
            conn.close()

    deadline = time.time() + 10
    while time.time() < deadline and not found("quokka"):
        time.sleep(0.1)
    assert found("quokka") and found("quokka")[0].startswith("@docs/adr/0007-use-postgres.md#")
    assert not found("numbat")  # changed, but through no tool: the next full sync reads it
    assert not found("wombat")  # not a registered document
