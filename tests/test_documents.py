"""Reading the project's documents (memindex/store: adr, pages, markdown, dates): ADRs in
every common template, status -> lifecycle, templates and index pages named, ids and dates;
runbooks, docs pages, CLAUDE.md sections and auto memory notes titled and categorised.

The fixtures are small texts written here in the shapes real collections have (adr-tools,
MADR 2 with plain and bold bullets, MADR 4 front matter, Tendermint changelogs, metadata
tables, Hugo RFC pages, alert runbooks, docs pages with front matter only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memindex.store import documents as docs
from memindex.store.adr import status_of
from memindex.store.dates import parse_date
from memindex.store.interpret import load
from memindex.store.markdown import parse

BODY = "\n\n## Context\n\nThe orders service needs a store for order lines.\n\n## Decision\n\nWe keep order lines in the service's own tables.\n"


def read(tmp_path: Path, files: dict[str, str], kind: str = "adr") -> dict[str, docs.Document | docs.NotIndexed]:
    """Write `files` (project-relative path -> text) and read each as a registered `kind`."""
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    out: dict[str, docs.Document | docs.NotIndexed] = {}
    for rel in files:
        try:
            out[rel] = load(str(tmp_path), rel, kind)[0]
        except docs.NotIndexed as exc:
            out[rel] = exc
    return out


def one(tmp_path: Path, text: str, name: str = "docs/adr/0004-keep-order-lines.md", kind: str = "adr",
        extra: dict[str, str] | None = None) -> docs.Document:
    got = read(tmp_path, {name: text, **(extra or {})}, kind)[name]
    assert isinstance(got, docs.Document), got
    return got


# --- status -> lifecycle, in each template ---------------------------------------------------


@pytest.mark.parametrize("head, state, record", [
    ("# 4. Keep order lines\n\nDate: 2024-01-15\n\n## Status\n\nAccepted", "accepted", "active"),  # adr-tools
    ("# 4. Keep order lines\n\n## Status\n\nIn Review", "proposed", "active"),
    ("# 4. Keep order lines\n\n## Status\n\nUnder Review", "proposed", "active"),
    ("# 4. Keep order lines\n\n## Status\n\nPending", "proposed", "active"),
    ("# 4. Keep order lines\n\n## Status\n\nTBD", "proposed", "active"),
    ("# 4. Keep order lines\n\n## Status\n\nDRAFT", "proposed", "active"),
    ("# 4. Keep order lines\n\n## Status\n\nRejected", "rejected", "archived"),
    ("# 4. Keep order lines\n\n## Status\n\nDeprecated (no superseding ADR)", "deprecated", "archived"),
    ("# 4. Keep order lines\n\n## Status\n\nReverted in March: the migration failed", "reverted", "archived"),
    ("# 4. Keep order lines\n\n## Status\n\nSuperseded", "superseded", "archived"),  # no successor named
    ("# 4. Keep order lines\n\n## Status\n\nImplemented in #1604", "accepted", "active"),  # Tendermint
    ("# 4. Keep order lines\n\n## Status\n\nImplemented. Parts of this ADR were superseded by ADR-020.", "accepted", "active"),
    ("# Keep order lines\n\n* Status: accepted\n* Deciders: Ana, Bo\n* Date: 2024-01-15", "accepted", "active"),  # MADR 2
    ("# Keep order lines\n\n- Status: proposed. **This ADR did not reach consensus**", "proposed", "active"),
    ("# Keep order lines\n\n* **Status:** Active\n* **Last Modified:** 2024-01-15", "accepted", "active"),  # bold bullets
    ("# Keep order lines\n\n**Status: Active**\\\n**Last Modified:** 2024-01-15", "accepted", "active"),  # hard breaks
    ("# Keep order lines\n\nStatus: **Accepted**", "accepted", "active"),
    ("# Keep order lines\n\nStatus: ✅ Accepted", "accepted", "active"),
    ("# Keep order lines\n\nStatus: 🚧 Work in progress", "proposed", "active"),
    ("# Keep order lines\n\n* **Status:** {Active}", "accepted", "active"),
    ("---\nstatus: accepted\ndate: 2024-01-15\n---\n# Keep order lines", "accepted", "active"),  # MADR 4
    ("---\nparent: Decision Records\nnav_order: 4\n---\n# Keep order lines", "accepted", "active"),  # MADR 4, no status
    ("# Keep order lines\n\n|  |  |\n|--|--|\n| Date | 22-10-2024 |\n| Status | Approved |\n| Supersedes | N/A |", "accepted", "active"),
    ("# Keep order lines\n\n| Status | Draft |\n|--|--|\n| Date | Sep 13th, 2024 |", "proposed", "active"),
    ("---\ntitle: Keep order lines\n---\n\n| Created | State | Summary |\n|-|-|-|\n"
     "| 2023-01-12 | <span style=\"color: gray\">obsolete</span> | Order lines in the service. |", "deprecated", "archived"),
])
def test_status_maps_to_a_lifecycle_in_every_template(tmp_path: Path, head: str, state: str, record: str) -> None:
    doc = one(tmp_path, head + BODY)
    assert (doc.state, doc.record_status) == (state, record), doc.status
    assert doc.category == "decision" and doc.title.endswith("Keep order lines")
    if record != "active":
        assert doc.reason.startswith("ADR status: ")


def test_superseded_points_at_its_successor_by_link_or_number(tmp_path: Path) -> None:
    new = "# 7. Use PostgreSQL\n\n## Status\n\nAccepted" + BODY
    got = read(tmp_path, {
        "docs/adr/0007-use-postgresql.md": new,
        "docs/adr/0009-use-cockroach.md": new.replace("7. Use PostgreSQL", "9. Use CockroachDB"),
        "docs/adr/0002-use-mysql.md": "# 2. Use MySQL\n\n## Status\n\nSuperseded by [7. Use PostgreSQL](0007-use-postgresql.md)" + BODY,
        # adr-tools leaves "Accepted" above the link it adds
        "docs/adr/0003-use-sqlite.md": "# 3. Use SQLite\n\n## Status\n\nAccepted\n\nSuperseded by [7. Use PostgreSQL](./0007-use-postgresql.md)" + BODY,
        "docs/adr/adr-005-use-redis.md": "# ADR 005: Use Redis\n\n## Status\n\nImplemented. Superseded by ADR-009." + BODY,
        "docs/adr/0006-use-memcached.md": "---\nstatus: superseded by ADR-0009\n---\n# Use Memcached" + BODY,
        "docs/adr/0008-use-mongo.md": "# 8. Use Mongo\n\n## Status\n\nsuperseded by ADR-0099" + BODY,  # no such file
        "docs/adr/0010-use-soap.md": "# 10. Use SOAP\n\n## Status\n\nDeprecated in favor of [ADR 9](0009-use-cockroach.md)" + BODY,
        "docs/adr/0011-use-kafka.md": "# 11. Use Kafka\n\n## Status\n\nDeprecated in favor of [events](https://example.com/events)" + BODY,
    })
    assert {k: (v.record_status, v.successors) for k, v in got.items() if isinstance(v, docs.Document)} == {
        "docs/adr/0007-use-postgresql.md": ("active", []),
        "docs/adr/0009-use-cockroach.md": ("active", []),
        "docs/adr/0002-use-mysql.md": ("retired", ["docs/adr/0007-use-postgresql.md"]),
        "docs/adr/0003-use-sqlite.md": ("retired", ["docs/adr/0007-use-postgresql.md"]),
        "docs/adr/adr-005-use-redis.md": ("retired", ["docs/adr/0009-use-cockroach.md"]),
        "docs/adr/0006-use-memcached.md": ("retired", ["docs/adr/0009-use-cockroach.md"]),
        "docs/adr/0008-use-mongo.md": ("archived", []),
        "docs/adr/0010-use-soap.md": ("retired", ["docs/adr/0009-use-cockroach.md"]),
        "docs/adr/0011-use-kafka.md": ("archived", []),
    }
    assert "not one of the project's files" in got["docs/adr/0008-use-mongo.md"].reason  # type: ignore[union-attr]
    assert got["docs/adr/0002-use-mysql.md"].units[0].anchor == ""  # type: ignore[union-attr]  # the row a link names


def test_what_an_adr_supersedes_once_it_took_effect(tmp_path: Path) -> None:
    old = "# 1. Use cron\n\n## Status\n\nAccepted" + BODY
    got = read(tmp_path, {
        "doc/adr/0001-use-cron.md": old,
        "doc/adr/0002-use-celery.md": "# 2. Use Celery\n\n## Status\n\nAccepted\n\nSupersedes [1. Use cron](0001-use-cron.md)" + BODY,
        "doc/adr/0003-use-k8s.md": "---\nstatus: accepted; supersedes ADR-0001\n---\n# Use k8s jobs" + BODY,
        "doc/adr/0004-use-lambda.md": "# 4. Use Lambda\n\n## Status\n\nProposed\n\nSupersedes [1. Use cron](0001-use-cron.md)" + BODY,
    })
    assert got["doc/adr/0002-use-celery.md"].supersedes == ["doc/adr/0001-use-cron.md"]  # type: ignore[union-attr]
    assert got["doc/adr/0003-use-k8s.md"].supersedes == ["doc/adr/0001-use-cron.md"]  # type: ignore[union-attr]
    assert got["doc/adr/0004-use-lambda.md"].supersedes == []  # type: ignore[union-attr]  # proposed: not yet
    assert got["doc/adr/0001-use-cron.md"].record_status == "active"  # type: ignore[union-attr]  # sync links across files
    from memindex.store.adr import replaced_by

    sup = {k: v.supersedes for k, v in got.items() if isinstance(v, docs.Document)}
    assert replaced_by(sup, set(sup)) == {"doc/adr/0001-use-cron.md": "doc/adr/0003-use-k8s.md"}


def test_status_sentences() -> None:
    assert status_of("") == ""
    assert status_of("Accepted -> Does not affect the spec") == "accepted"
    assert status_of("Accepted; supersedes ADR-0045") == "accepted"
    assert status_of("Refinement completed. TP in 3.4") == "proposed"
    assert status_of("Tech Preview") == "proposed"
    assert status_of("Frobnicated") == "unknown"


# --- not indexed, with the reason --------------------------------------------------------------


def test_templates_index_pages_stubs_and_guides_are_named_not_read_as_adrs(tmp_path: Path) -> None:
    adr = "# 1. Keep order lines\n\n## Status\n\nAccepted" + BODY
    got = read(tmp_path, {
        "docs/adr/0001-keep-order-lines.md": adr,
        "docs/adr/0002-split-orders.md": adr.replace("1. Keep order lines", "2. Split orders"),
        "docs/adr/README.md": "# Decisions\n\nThis folder holds the decisions of the orders team, one file each.\n",
        "docs/adr/index.md": "---\nhas_children: true\n---\n# Decision log\n\nEvery decision the team took, newest last.\n",
        "docs/adr/template.md": "# [short title]\n\n* Status: [proposed | rejected | accepted | deprecated]\n" + BODY,
        "docs/adr/adr-template.md": "# Title\n\n## Status\n\nAccepted" + BODY,
        "docs/adr/0000-TEMPLATE.md": "<!-- copy this file -->\n# 0. Title\n\nDate: today\n" + BODY,
        "docs/adr/ODH-ADR-0000-template.md": "# Open Data Hub - template\n" + BODY,
        "docs/adr/0003-draft.md": "# 3. Something\n\n* **Status:** {Active | deprecation reason, e.g. \"Superseded By [xxx](x.md)\"}" + BODY,
        "docs/adr/0005-use-ethnio.md": "# Use Ethnio for research\n",
        "docs/adr/design/onboarding-guide.md": "# Onboarding guide\n\n## API requirements\n\nEvery module declares its CRD and owns it.\n",
    })
    why = {k: (v.reason, v.deliberate) for k, v in got.items() if isinstance(v, docs.NotIndexed)}
    assert set(why) == {"docs/adr/README.md", "docs/adr/index.md", "docs/adr/template.md", "docs/adr/adr-template.md",
                        "docs/adr/0000-TEMPLATE.md", "docs/adr/ODH-ADR-0000-template.md", "docs/adr/0003-draft.md",
                        "docs/adr/0005-use-ethnio.md", "docs/adr/design/onboarding-guide.md"}
    assert all(deliberate for _, deliberate in why.values())
    assert why["docs/adr/README.md"][0].startswith("not an ADR: the folder's index page")
    assert why["docs/adr/template.md"][0].startswith("not an ADR: a template")
    assert why["docs/adr/0003-draft.md"][0] == "not an ADR: a template (its status lists the choices)"
    assert "stub" in why["docs/adr/0005-use-ethnio.md"][0]
    assert why["docs/adr/design/onboarding-guide.md"][0].startswith("not an ADR: no status, number or ADR section")


def test_an_adr_new_skeleton_is_a_stub(tmp_path: Path) -> None:
    """`adr new` writes its own sentences into each section: left as they are, no decision."""
    got = read(tmp_path, {"doc/adr/0002-use-x.md": (
        "# 2. Use X\n\nDate: 2026-11-30\n\n## Status\n\nAccepted\n\n## Context\n\nThe issue motivating this decision, "
        "and any context that influences or constrains the decision.\n\n## Decision\n\nThe change that we're proposing or "
        "have agreed to implement.\n\n## Consequences\n\nWhat becomes easier or more difficult to do and any risks "
        "introduced by the change that will need to be mitigated.\n")})
    stub = got["doc/adr/0002-use-x.md"]
    assert isinstance(stub, docs.NotIndexed) and stub.deliberate and "stub" in stub.reason


def test_an_rfc_folder_page_and_its_sub_pages_are_read(tmp_path: Path) -> None:
    """Hugo page bundles: `<name>/_index.md` is the RFC (its status in a table), the pages
    beside it are its parts; the top `_index.md` lists them all and is no RFC."""
    table = "| Created | State | Summary |\n|-|-|-|\n| 2024-09-26 | approved | Prefix the apps. |\n\n## Intro\n\nApps of two clusters share a namespace, so their names collide.\n"
    got = read(tmp_path, {
        "rfcs/_index.md": "---\ntitle: Decisions and RFCs\n---\n\n| Created | Title | State |\n|-|-|-|\n"
                          "| 2024-09-26 | [App prefix](./app-prefix) | approved |\n| 2023-01-12 | [Logs](./logs) | review |\n",
        "rfcs/app-prefix/_index.md": "---\ntitle: App prefix\n---\n\n" + table,
        "rfcs/app-prefix/cache.md": "# Caching the charts\n\n## Choosing a cache\n\nWe compared two pull-through caches for the charts.\n",
        "rfcs/logs/_index.md": "---\ntitle: Title\n---\n\n" + table.replace("approved", "review"),
    })
    assert isinstance(got["rfcs/_index.md"], docs.NotIndexed)
    page = got["rfcs/app-prefix/_index.md"]
    assert isinstance(page, docs.Document) and (page.title, page.state, page.created_at) == ("App prefix", "accepted", "2024-09-26T00:00:00Z")
    assert page.id == "adr-app-prefix"
    assert isinstance(got["rfcs/app-prefix/cache.md"], docs.Document)
    assert got["rfcs/logs/_index.md"].title == "logs"  # type: ignore[union-attr]  # a placeholder title: the folder's name


def test_fields_are_read_above_the_first_section_only(tmp_path: Path) -> None:
    doc = one(tmp_path, "# 4. Keep order lines\n\n## Status\n\nAccepted\n\n## Context\n\nThe CRD has a status field:\n\n"
                        "```yaml\nstatus: Rejected\ndate: 2019-01-01\n```\n\n## Decision\n\nWe keep order lines in the service.\n")
    assert doc.state == "accepted" and doc.created_at == ""


def test_a_status_heading_of_any_level(tmp_path: Path) -> None:
    doc = one(tmp_path, "# 28. Portfolio sessions\n\nDate: 2025-05-29\n\n# Status\n\nApproved" + BODY, "docs/adr/0028-portfolio.md")
    assert (doc.title, doc.state, doc.created_at) == ("ADR 28: Portfolio sessions", "accepted", "2025-05-29T00:00:00Z")


# --- titles, ids, dates ------------------------------------------------------------------------


@pytest.mark.parametrize("name, h1, title, doc_id", [
    ("docs/adr/0004-keep-order-lines.md", "# 4. Keep order lines", "ADR 4: Keep order lines", "adr-0004-keep-order-lines"),
    ("docs/architecture/adr-012-sequence-length.md", "# ADR 012: Sequence length", "ADR 12: Sequence length", "adr-012-sequence-length"),
    ("docs/architecture/adr-028-fee-token.md", "# ADR: Fee token", "ADR 28: Fee token", "adr-028-fee-token"),
    ("docs/adr/0010-django-templates.md", "# n. Django templates", "ADR 10: Django templates", "adr-0010-django-templates"),
    ("docs/adr/20201103-use-lunr.md", "# Use Lunr", "Use Lunr", "adr-20201103-use-lunr"),
    ("records/ODH-ADR-0002-pipelines.md", "# Pipelines multi-user", "Pipelines multi-user", "odh-adr-0002-pipelines"),
    ("docs/adr/2023-07-20-fe-server-rendering.md", "", "fe server rendering", "adr-2023-07-20-fe-server-rendering"),
])
def test_titles_and_ids_are_clean(tmp_path: Path, name: str, h1: str, title: str, doc_id: str) -> None:
    doc = one(tmp_path, h1 + "\n\n## Status\n\nAccepted" + BODY, name)
    assert (doc.title, doc.id) == (title, doc_id)


@pytest.mark.parametrize("head, name, created, updated", [
    ("# 4. X\n\nDate: 2023-13-10", "docs/adr/0004-x.md", "2023-10-13", "2023-10-13"),  # day and month swapped
    ("# 4. X\n\n## Changelog\n\n- 2022/12/14: initial draft\n- 2023/05/30: revised after review", "docs/adr/0004-x.md", "2022-12-14", "2023-05-30"),
    ("# X\n\n* **Status:** Active\n* **Last Modified:** 2025-08-12", "docs/adr/x.md", "2025-08-12", "2025-08-12"),
    ("# X\n\n* Status: accepted", "docs/adr/2023-06-26-x.md", "2023-06-26", "2023-06-26"),  # the file's name
    ("# X\n\n| Date | January, 2026 |\n|-|-|\n| Status | Approved |", "docs/adr/0004-x.md", "2026-01-01", "2026-01-01"),
    ("# 4. X\n\nDate: 2031-01-01", "docs/adr/0004-x.md", "", ""),  # after tomorrow: a typo
    ("# 4. X\n\nDate: 2025-02-30", "docs/adr/0004-x.md", "", ""),  # no such day
])
def test_dates_come_from_the_file(tmp_path: Path, head: str, name: str, created: str, updated: str) -> None:
    doc = one(tmp_path, head + "\n\n## Status\n\nAccepted" + BODY if "Status" not in head else head + BODY, name)
    assert (doc.created_at[:10], doc.updated_at[:10]) == (created, updated)


def test_date_formats() -> None:
    assert parse_date("11-April-2023") == "2023-04-11T00:00:00Z"
    assert parse_date("10/22/2024") == "2024-10-22T00:00:00Z"
    assert parse_date("insert date") == parse_date("Decision, 2020") == ""


def test_a_long_decision_keeps_all_its_text(tmp_path: Path) -> None:
    """Tendermint's Proposal and Detailed Design, a Decision of ### subsections, lists in
    the context: all of it is indexed, each top section a unit."""
    doc = one(tmp_path, "# ADR 007: Share prefix\n\n## Changelog\n\n- 2022-03-03: first\n\n## Status\n\nImplemented\n\n"
                        "## Context\n\n- compact shares hold many units\n- sparse shares hold one\n\n## Proposal\n\n"
                        "### Option A\n\nPrefix every share with a version byte.\n\n### Option B\n\nKeep the namespace first.\n\n"
                        "## Detailed Design\n\n```go\ntype Share []byte\n```\n", "docs/architecture/adr-007-share-prefix.md")
    anchors = {u.anchor: u for u in doc.units}
    assert {"context", "proposal", "detailed-design"} <= set(anchors)
    assert "- sparse shares hold one" in anchors["context"].text
    assert "Option A" in anchors["proposal"].text and "version byte" in anchors["proposal"].text
    assert "type Share []byte" in anchors["detailed-design"].text


# --- pages ---------------------------------------------------------------------------------------


def test_page_titles_as_the_page_has_them(tmp_path: Path) -> None:
    got = read(tmp_path, {
        "runbooks/KubeQuotaExceeded.md": "---\ntitle: KubeQuotaExceeded\ndescription: A namespace is over its quota.\n"
                                         "tags: [kubernetes, quota]\n---\n\n## Meaning\n\nThe namespace uses over 90% of a quota.\n",
        "runbooks/no-title.md": "## Diagnosis\n\nCheck the pods of the namespace with kubectl.\n",
        "runbooks/storage/index.md": "Every storage runbook of the team is in this folder.\n",
        "runbooks/patroni/README.md": "# Patroni\n\nThe Patroni clusters of the team and their runbooks.\n",
        "runbooks/patroni/failover.md": "# Patroni\n\n## Failover\n\nPromote the replica with patronictl failover.\n",
        "runbooks/patroni/upgrade.md": "# Patroni\n\n## Upgrade\n\nUpgrade one member at a time, the leader last.\n",
        "docs/guide.html.md": "---\ntitle: Deploy a change\nsummary: How a change reaches production.\n---\n\nMerge, then the pipeline deploys.\n",
        "runbooks/empty.md": "# Nothing\n",
    }, "runbook")
    title = {k: v.title for k, v in got.items() if isinstance(v, docs.Document)}
    assert title == {
        "runbooks/KubeQuotaExceeded.md": "KubeQuotaExceeded", "runbooks/no-title.md": "no-title",
        "runbooks/storage/index.md": "storage", "runbooks/patroni/README.md": "Patroni",
        "runbooks/patroni/failover.md": "Patroni (failover)", "runbooks/patroni/upgrade.md": "Patroni (upgrade)",
        "docs/guide.html.md": "Deploy a change",
    }
    quota = got["runbooks/KubeQuotaExceeded.md"]
    assert isinstance(quota, docs.Document) and quota.tags == ["kubernetes", "quota"] and quota.category == "runbook"
    assert quota.units[0].anchor == "" and "over its quota" in quota.units[0].text  # the description, with the head
    assert "How a change reaches production." in got["docs/guide.html.md"].units[0].text  # type: ignore[union-attr]
    assert isinstance(got["runbooks/empty.md"], docs.NotIndexed) and got["runbooks/empty.md"].deliberate


def test_a_deprecated_runbook_says_so_in_its_tags(tmp_path: Path) -> None:
    doc = one(tmp_path, "# KubeMacPoolDown [Deprecated]\n\n**Note:** replaced by the KubemacpoolDown runbook.\n\n## Meaning\n\n"
                        "The pool is down.\n", "docs/deprecated_runbooks/KubeMacPoolDown.md", "runbook")
    assert doc.tags == ["deprecated"] and doc.record_status == "active"


def test_a_runbook_without_list_items_keeps_its_code(tmp_path: Path) -> None:
    doc = one(tmp_path, "# Slow queries\n\n## Diagnosis\n\nRun this on the primary:\n\n```sql\nSELECT pid, query FROM pg_stat_activity;\n```\n\n"
                        "## Alert\n\n```promql\nrate(pg_slow_queries_total[5m]) > 1\n```\n", "runbooks/slow-queries.md", "runbook")
    text = "\n".join(u.text for u in doc.units)
    assert "SELECT pid, query FROM pg_stat_activity;" in text and "rate(pg_slow_queries_total[5m]) > 1" in text


@pytest.mark.parametrize("title, category", [
    ("Rules for getting production access", "constraint"), ("Policy on keeping software current", "constraint"),
    ("Restart the API", "runbook"), ("Architecture of the platform", "runbook"), ("Decision records", "decision"),
    ("Known issues with the CDN", "tech_debt"),
])
def test_docs_pages_take_the_stated_rule(tmp_path: Path, title: str, category: str) -> None:
    doc = one(tmp_path, f"# {title}\n\nThere is a warning here: you must read it all.\n", "manual/page.md", "docs")
    assert doc.category == category


def test_claude_md_sections_take_their_own_category(tmp_path: Path) -> None:
    data = Path(__file__).parent / "data" / "claude-md"
    got = read(tmp_path, {"CLAUDE.md": (data / "CLAUDE.md").read_text(), "AGENTS.md": (data / "AGENTS.md").read_text()}, "claude-md")
    cats = {(k, u.heading): u.category for k, d in got.items() for u in d.units if u.anchor}  # type: ignore[union-attr]
    assert cats == {
        ("CLAUDE.md", "Commands"): "preference", ("CLAUDE.md", "Code style"): "preference",
        ("CLAUDE.md", "Security rules"): "constraint", ("CLAUDE.md", "Architecture"): "preference",
        ("AGENTS.md", "Pull requests"): "preference", ("AGENTS.md", "Testing"): "constraint",
    }
    assert "This file provides guidance" not in " ".join(u.text for u in got["CLAUDE.md"].units)  # type: ignore[union-attr]
    assert "Use snake_case for modules" in next(u.text for u in got["CLAUDE.md"].units if u.heading == "Code style")  # type: ignore[union-attr]


def test_auto_memory_notes_follow_the_stated_rule(tmp_path: Path) -> None:
    data = Path(__file__).parent / "data" / "claude-memory"
    got = read(tmp_path, {f"notes/{p.name}": p.read_text() for p in data.iterdir()}, "notes")
    doc = {k.split("/")[1]: v for k, v in got.items()}
    assert {k: v.category for k, v in doc.items()} == {  # type: ignore[union-attr]
        "feedback_real_db_tests.md": "constraint",  # "must" in its first sentence
        "user_role.md": "preference",  # type user (metadata.type)
        "project_release_freeze.md": "constraint",  # "freeze" in its name
        "reference_dashboards.md": "preference",
        "debugging.md": "runbook",  # its first section's
        "MEMORY.md": "constraint",  # its one section: "do not"
    }
    debugging = {u.heading: u.category for u in doc["debugging.md"].units if u.anchor}  # type: ignore[union-attr]
    assert debugging == {"How to debug the flaky checkout test": "runbook", "Known issue: slow cold start": "tech_debt"}
    assert doc["feedback_real_db_tests.md"].title == "integration-tests-real-database"  # type: ignore[union-attr]  # its name
    assert "feedback" in doc["feedback_real_db_tests.md"].tags  # type: ignore[union-attr]


# --- the parser -----------------------------------------------------------------------------------


def test_headings_lose_their_closing_hashes_and_comments_go() -> None:
    got = parse("# A ##\n## C#\n### Note #  \n#### ##\nx <!-- hint\n--> y <!-- z\n")
    assert [s.heading for s in got.sections] == ["A", "C#", "Note", ""]
    assert "hint" not in got.text()


def test_lines_tables_and_code_are_kept_apart() -> None:
    got = parse("# T\n\nStatus: Accepted\nDate: 2024-01-02\n\n| Key | Value |\n|-|-|\n| a | <b>1</b> |\n\n```\ncode\n```\n")
    sec = got.sections[0]
    assert sec.blocks[0] == "Status: Accepted\nDate: 2024-01-02"
    assert sec.tables == [[["Key", "Value"], ["a", "1"]]]
    assert sec.blocks[sec.code.pop()] == "code"


def test_front_matter_is_data_only() -> None:
    got = parse("---\ntitle: !!python/object/apply:os.system ['echo pwned']\n---\n# T\n\nText here.\n")
    assert got.meta == {} and got.title == "T"  # safe_load refuses the tag: no front matter at all
    got = parse("---\nmetadata:\n  type: user\nlist: [a, 1, {x: 2}]\n---\nText.\n")
    assert got.meta == {"metadata.type": "user", "list": ["a", 1]}


@pytest.mark.parametrize("unit", [
    "[a](",  # link openers without an end
    "<!--",  # unclosed comment openers
    "*a **b ",  # emphasis runs
    "|a",  # a table row of many cells
])
def test_hostile_markdown_parses_in_linear_time(unit: str) -> None:
    import time

    def cost(n: int) -> float:
        text = "# Rules\n\n" + (("|a|b|\n|-|-|\n" + "|a" * n + "|\n") if unit == "|a" else unit * n) + "\n"
        start = time.perf_counter()
        parse(text)
        return time.perf_counter() - start

    small, large = cost(2_000), cost(8_000)
    assert large < 8 * small + 0.5, (small, large)  # quadratic would be 16x
