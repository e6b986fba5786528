"""query.py: ranking, prefixes, identifiers, filters, retention, ties, hostile queries."""

from __future__ import annotations

import math
import sqlite3
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import search_paths, write_mem
from memindex import index
from memindex.config import parse_config
from memindex.defaults import CATEGORY_PRIORITY, FOLDERS
from memindex.retrieval.hits import Hit
from memindex.retrieval.query import Filters, Params, search
from memindex.index.sync import sync

# --- a shared store -------------------------------------------------------------------------

CORPUS = [
    # (category, id, title, tags, content, extra fields)
    ("decision", "jwt", "Chose JWT over session cookies", ["jwt", "auth"],
     {"context": "The mobile client cannot share the web session cookie.",
      "decision": "Issue short-lived JWT access tokens with rotating refresh tokens."}, {}),
    ("decision", "identity-service", "Centralize the login flow", ["login"],
     {"context": "All authentication goes through the identity service."}, {}),
    ("runbook", "flaky-ci", "Fix the flaky CI pipeline", ["pipeline"],
     {"trigger": "The nightly pipeline fails at random.", "steps": ["Re-run the failed job with a clean cache."]}, {}),
    ("constraint", "db-pool", "DB connection pool limit", ["postgres"],
     {"rule": "At most 20 connections per DB instance."}, {}),
    ("preference", "ui-tokens", "UI colors come from design tokens", ["design"],
     {"topic": "colors", "value": "Never hard-code hex colors in components."}, {}),
    ("session_summary", "city-import", "Explored the city dataset import", ["dataset"],
     {"goal": "Load city boundaries into the map layer."}, {}),
    ("decision", "user-id-key", "Key every table by account", ["schema"],
     {"context": "Every table uses the user_id column as its key."}, {}),
    ("session_summary", "support-call", "Support call notes", ["support"],
     {"goal": "The user asked about the id card printing feature."}, {}),
    ("preference", "react-props", "Typing components", ["typescript"],
     {"topic": "component types", "value": "Avoid React.FC and type the props explicitly."}, {}),
    ("runbook", "prod-secrets", "Rotate production secrets", ["secrets"],
     {"trigger": "A secret leaked.", "steps": ["Copy .env.production from the vault and restart."]}, {}),
    ("tech_debt", "env-mess", "Environment handling is messy", ["config"],
     {"description": "We read the env vars differently in production and staging."}, {}),
    ("constraint", "cluster-quota", "Cluster CPU quota", ["infra"],
     {"rule": "The k8s namespace has a hard CPU quota of 8 cores."}, {}),
    ("tech_debt", "migrations", "Hand-written migrations", ["postgres"],
     {"description": "Schema migrations are plain SQL files run by hand."}, {}),
    ("runbook", "restore", "Restore the postgres backup", ["postgres", "backup"],
     {"trigger": "Data loss in production.", "steps": ["Run pg_restore on the latest dump."]}, {}),
    ("decision", "legacy-auth", "Legacy authentication with sessions", ["auth"],
     {"context": "Old login used server sessions."}, {"record_status": "retired"}),
    ("runbook", "jenkins", "Restart the Jenkins server", ["ci"],
     {"trigger": "Jenkins hangs.", "steps": ["Restart jenkins via systemctl."]}, {"record_status": "archived"}),
    ("preference", "naive-cache", "Prefer naïve caching first", ["cache"],
     {"topic": "caching", "value": "Start with a naïve in-process cache."}, {}),
    ("decision", "cafe-api", "Café menu API", ["menu"],
     {"context": "The café wants an online menu."}, {}),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus") / ".claude" / "memory"
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True)
    for category, mem_id, title, tags, content, extra in CORPUS:
        write_mem(root, category, mem_id, title, tags, content, **extra)
    report = sync(root)
    assert report.added == len(CORPUS) and report.invalid == 0
    return root


@pytest.fixture(scope="module")
def conn(corpus):
    c = index.open_reader(corpus)
    yield c
    c.close()


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


# --- basic recall ---------------------------------------------------------------------------


class TestRecall:
    def test_hits_carry_the_memory(self, conn):
        hits = search(conn, "jwt")
        assert ids(hits)[0] == "jwt"
        hit = hits[0]
        assert hit.path == "decisions/jwt.json"
        assert hit.category == "decision"
        assert hit.title == "Chose JWT over session cookies"
        assert hit.tags == ["jwt", "auth"]
        assert hit.updated_at == "2026-01-15T10:00:00Z"
        assert hit.record_status == "active"
        assert hit.score > 0 and math.isfinite(hit.score)

    def test_results_are_sorted_best_first(self, conn):
        hits = search(conn, "postgres backup restore production")
        assert len(hits) >= 3
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert ids(hits)[0] == "restore"

    def test_limit(self, conn):
        assert len(search(conn, "postgres", limit=1)) == 1
        assert search(conn, "postgres", limit=0) == []

    def test_case_insensitive(self, conn):
        assert ids(search(conn, "JWT"))[:1] == ids(search(conn, "jwt"))[:1] == ["jwt"]

    def test_stemming(self, conn):
        assert "migrations" in ids(search(conn, "migration"))

    def test_prefix_auth_finds_authentication(self, conn):
        """The store also has memories tagged `auth`: `auth` must still reach the memory
        that only says `authentication`."""
        found = ids(search(conn, "auth"))
        assert "identity-service" in found  # only says "authentication"
        assert "jwt" in found  # tagged auth

    def test_prefix_auth_finds_authentication_alone(self, memory_root):
        _filler(memory_root)
        write_mem(memory_root, "decision", "idp", "Centralize the login flow", ["login"],
                  {"context": "All authentication goes through the identity service."})
        sync(memory_root)
        assert search_paths(memory_root, "auth") == ["decisions/idp.json"]
        assert search_paths(memory_root, "authen") == ["decisions/idp.json"]

    def test_short_words_are_not_prefix_expanded(self, conn):
        # "ci" must not match "city"
        assert ids(search(conn, "CI")) == ["flaky-ci"]

    @pytest.mark.parametrize(
        "query, expected",
        [
            ("user_id", "user-id-key"),
            ("React.FC", "react-props"),
            (".env.production", "prod-secrets"),
            ("k8s", "cluster-quota"),
            ("pg_restore", "restore"),
        ],
    )
    def test_identifiers(self, conn, query, expected):
        found = ids(search(conn, query))
        assert found and found[0] == expected

    def test_identifier_is_a_phrase_not_two_words(self, conn):
        assert ids(search(conn, "user_id")) == ["user-id-key"]  # not the call where a user asked about an id
        assert ids(search(conn, ".env.production")) == ["prod-secrets"]  # not "env vars ... in production"

    def test_identifier_inside_a_sentence(self, conn):
        assert ids(search(conn, "where do we read .env.production from?"))[0] == "prod-secrets"
        assert ids(search(conn, "why not React.FC here"))[0] == "react-props"

    @pytest.mark.parametrize("query, expected", [("CI", "flaky-ci"), ("DB", "db-pool"), ("UI", "ui-tokens"), ("db", "db-pool")])
    def test_two_letter_terms(self, conn, query, expected):
        found = ids(search(conn, query))
        assert found and found[0] == expected

    @pytest.mark.parametrize("query", ["what is the", "how do I", "please help", "the a an", "I", "x", "", "   ", "?!", "—"])
    def test_stop_words_only_give_nothing(self, conn, query):
        assert search(conn, query) == []

    def test_unknown_words_give_nothing(self, conn):
        assert search(conn, "zyxwvut qqqq") == []

    def test_diacritics_are_ignored(self, conn):
        assert ids(search(conn, "cafe"))[:1] == ["cafe-api"]
        assert ids(search(conn, "naive"))[:1] == ["naive-cache"]

    def test_decomposed_unicode_query_finds_composed_text(self, conn):
        """A query typed in NFD form ("nai" + U+0308 + "ve") must find "naïve" (NFC)."""
        assert ids(search(conn, "nai\u0308ve"))[:1] == ["naive-cache"]


# --- ranking --------------------------------------------------------------------------------


def _filler(root, n=12):
    """Memories about other things, so document frequencies look like a real store."""
    topics = ["kafka", "redis", "nginx", "terraform", "celery", "webpack", "grafana", "sentry", "vault", "stripe", "twilio", "s3"]
    for i in range(n):
        write_mem(root, "session_summary", f"filler-{i}", f"Worked on {topics[i % len(topics)]}", ["work"],
                  {"goal": f"Routine {topics[i % len(topics)]} maintenance and upgrades."})


class TestRanking:
    def test_title_match_outranks_body_only_match(self, memory_root):
        _filler(memory_root)
        write_mem(memory_root, "decision", "in-body", "Database connection settings", ["db"],
                  {"context": "We run pgbouncer in transaction mode in front of the primary."})
        write_mem(memory_root, "decision", "in-title", "Pgbouncer in transaction mode", ["db"],
                  {"context": "Connection pooling sits in front of the primary database."})
        sync(memory_root)
        assert search_paths(memory_root, "pgbouncer")[:2] == ["decisions/in-title.json", "decisions/in-body.json"]

    def test_tag_match_outranks_body_only_match(self, memory_root):
        _filler(memory_root)
        write_mem(memory_root, "runbook", "in-body", "Restart the workers", ["ops"],
                  {"steps": ["Drain the rabbitmq queue first."]})
        write_mem(memory_root, "runbook", "in-tags", "Restart the consumers", ["rabbitmq"],
                  {"steps": ["Drain the message queue first."]})
        sync(memory_root)
        assert search_paths(memory_root, "rabbitmq")[:2] == ["runbooks/in-tags.json", "runbooks/in-body.json"]

    def test_rare_term_outranks_common_term(self, memory_root):
        _filler(memory_root, 16)
        for i in range(3):
            write_mem(memory_root, "tech_debt", f"common-{i}", f"Debt item {i}", ["debt"],
                      {"description": f"The deployment script number {i} needs cleanup."})
        write_mem(memory_root, "tech_debt", "rare", "Debt item rare", ["debt"],
                  {"description": "The flyway setup needs cleanup."})
        sync(memory_root)
        found = search_paths(memory_root, "deployment flyway")
        assert found[0] == "tech-debt/rare.json"
        assert sorted(found[1:]) == [f"tech-debt/common-{i}.json" for i in range(3)]

    def test_more_matched_terms_rank_higher(self, memory_root):
        _filler(memory_root)
        write_mem(memory_root, "runbook", "one", "Broker notes", ["ops"], {"steps": ["Check the zookeeper ensemble."]})
        write_mem(memory_root, "runbook", "two", "Broker notes too", ["ops"], {"steps": ["Check the zookeeper ensemble quorum."]})
        sync(memory_root)
        assert search_paths(memory_root, "zookeeper quorum")[0] == "runbooks/two.json"

    def test_category_priority_breaks_exact_ties(self, memory_root):
        """Identical memories in every category: where scores tie exactly, the order is
        decision, constraint, preference, runbook, tech_debt, session_summary."""
        _filler(memory_root)
        field = {"session_summary": "goal", "tech_debt": "description", "decision": "context",
                 "constraint": "rule", "runbook": "trigger", "preference": "topic"}
        # written in reverse priority order, so that rowid or path order cannot pass for priority
        for category in ["session_summary", "tech_debt", "runbook", "preference", "constraint", "decision"]:
            write_mem(memory_root, category, "same", "Idempotency keys for payments", ["payments"],
                      {field[category]: "idempotency"})
        sync(memory_root)
        conn = index.open_reader(memory_root)
        try:
            hits = search(conn, "idempotency payments")
        finally:
            conn.close()
        assert len(hits) == 6
        groups: dict[str, list[str]] = {}
        for h in hits:
            groups.setdefault(f"{h.score:.9g}", []).append(h.category)
        ties = [cats for cats in groups.values() if len(cats) > 1]
        assert ties, f"no exact tie to break: {hits}"
        for cats in ties:
            assert cats == sorted(cats, key=CATEGORY_PRIORITY.__getitem__), cats
        tied = [c for cats in ties for c in cats]
        assert "decision" in tied and "session_summary" in tied
        order = [h.category for h in hits]
        assert order.index("decision") < order.index("session_summary")

    def test_category_priority_does_not_beat_a_better_score(self, memory_root):
        _filler(memory_root)
        write_mem(memory_root, "session_summary", "strong", "Idempotency keys for payments", ["payments"],
                  {"goal": "Add idempotency keys to the payments API."})
        write_mem(memory_root, "decision", "weak", "Retry policy", ["api"],
                  {"context": "Clients retry; the server needs idempotency somewhere."})
        sync(memory_root)
        assert search_paths(memory_root, "idempotency")[:2] == ["sessions/strong.json", "decisions/weak.json"]

    def test_same_category_tie_is_by_path(self, memory_root):
        _filler(memory_root)
        for mem_id in ["zeta", "alpha", "mid"]:
            write_mem(memory_root, "decision", mem_id, "Same title here", ["same"], {"context": "identical words"})
        sync(memory_root)
        assert search_paths(memory_root, "identical") == ["decisions/alpha.json", "decisions/mid.json", "decisions/zeta.json"]

    def test_column_weights_from_config_change_the_order(self, memory_root):
        _filler(memory_root)
        write_mem(memory_root, "decision", "in-body", "Database connection settings", ["db"],
                  {"context": "We run pgbouncer in transaction mode."})
        write_mem(memory_root, "decision", "in-title", "Pgbouncer mode", ["db"], {"context": "Pooling settings."})
        sync(memory_root)
        params = Params.from_config(parse_config({"retrieval": {"column_weights": {"title": 0.0, "body": 10.0}}}))
        assert search_paths(memory_root, "pgbouncer", params=params)[0] == "decisions/in-body.json"


# --- filters --------------------------------------------------------------------------------


class TestFilters:
    def test_inactive_excluded_by_default(self, conn):
        assert search(conn, "jenkins") == []
        assert "legacy-auth" not in ids(search(conn, "legacy authentication sessions"))

    def test_include_inactive(self, conn):
        hits = search(conn, "jenkins", filters=Filters(include_inactive=True))
        assert ids(hits) == ["jenkins"] and hits[0].record_status == "archived"
        hits = search(conn, "legacy authentication", filters=Filters(include_inactive=True))
        assert ids(hits)[0] == "legacy-auth" and hits[0].record_status == "retired"

    def test_one_category(self, conn):
        hits = search(conn, "postgres", filters=Filters(categories=("runbook",)))
        assert ids(hits) == ["restore"]

    def test_several_categories(self, conn):
        hits = search(conn, "postgres", filters=Filters(categories=("runbook", "tech_debt")))
        assert sorted(ids(hits)) == ["migrations", "restore"]
        assert all(h.category in ("runbook", "tech_debt") for h in hits)
        assert {h.category for h in search(conn, "postgres")} == {"runbook", "tech_debt", "constraint"}

    def test_tag(self, conn):
        assert sorted(ids(search(conn, "postgres", filters=Filters(tag="backup")))) == ["restore"]
        assert sorted(ids(search(conn, "auth", filters=Filters(tag="AUTH")))) == ["jwt"]

    def test_tag_matches_whole_tags_only(self, conn):
        assert search(conn, "postgres", filters=Filters(tag="post")) == []
        assert search(conn, "postgres", filters=Filters(tag="gres")) == []
        assert search(conn, "postgres", filters=Filters(tag="postgres,backup")) == []

    def test_filters_combine(self, conn):
        f = Filters(categories=("decision",), tag="auth", include_inactive=True)
        assert sorted(ids(search(conn, "auth sessions", filters=f))) == ["jwt", "legacy-auth"]


class TestRetention:
    NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)

    @pytest.fixture
    def store(self, memory_root):
        content = {"goal": "quarterly planning"}
        write_mem(memory_root, "session_summary", "old", "Old planning session", ["plan"], content,
                  created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
        write_mem(memory_root, "session_summary", "recent", "Recent planning session", ["plan"], content,
                  created_at="2026-05-25T00:00:00Z", updated_at="2026-05-25T00:00:00Z")
        write_mem(memory_root, "decision", "old-decision", "Old planning decision", ["plan"],
                  {"context": "quarterly planning"},
                  created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
        write_mem(memory_root, "runbook", "old-runbook", "Old planning runbook", ["plan"],
                  {"trigger": "quarterly planning"},
                  created_at="2025-01-01T00:00:00Z", updated_at="2025-01-01T00:00:00Z")
        sync(memory_root)
        return memory_root

    def _found(self, root, cfg_data):
        filters = Filters.from_config(parse_config(cfg_data))
        return sorted(search_paths(root, "quarterly planning", filters=filters, now=self.NOW))

    def test_no_retention_by_default(self, store):
        assert len(self._found(store, {})) == 4

    def test_retention_hides_old_memories_of_that_category_only(self, store):
        found = self._found(store, {"categories": {"session_summary": {"retention_days": 30}}})
        assert found == ["decisions/old-decision.json", "runbooks/old-runbook.json", "sessions/recent.json"]

    def test_retention_boundary(self, store):
        # recent is 7 days and 12 hours old
        assert "sessions/recent.json" in self._found(store, {"categories": {"session_summary": {"retention_days": 8}}})
        assert "sessions/recent.json" not in self._found(store, {"categories": {"session_summary": {"retention_days": 7}}})

    def test_retention_of_several_categories(self, store):
        found = self._found(store, {"categories": {"session_summary": {"retention_days": 30},
                                                   "runbook": {"retention_days": 200}}})
        assert found == ["decisions/old-decision.json", "sessions/recent.json"]

    def test_zero_means_keep_forever(self, store):
        assert len(self._found(store, {"categories": {"session_summary": {"retention_days": 0}}})) == 4


# --- hostile queries ------------------------------------------------------------------------

HOSTILE = [
    '"', '""', '"""', "'", "(", ")", "()", "(((", ")))", "-", "--", "---x", ":", "*", "**", "^", "^x",
    "AND", "OR", "NOT", "NEAR", "and or not near", "NEAR(", "NEAR(a b", "NEAR(jwt cookies, 2)",
    "jwt AND", "OR jwt", "NOT jwt", "jwt NOT cookies", "jwt -cookies", "title:jwt", "tags:auth",
    "body:postgres", "{title tags}: jwt", "jwt*", "*jwt", "^jwt", "jwt^", '"jwt', 'jwt"', "j\"w\"t",
    "\x00", "jwt\x00cookies", "\x00\x00\x00", "\\", "\\\"", "%", "_", "%_%", "'; DROP TABLE documents; --",
    "rowid", "fts", "fts MATCH 'x'", "\u202ejwt", "\u200b", "\ufeffjwt", "\ud7ff", "日本語のテキスト",
    "🙂🙃", "a" * 100_000, "jwt " * 20_000, "x_" * 30_000, ".".join(["seg"] * 5000), "/".join(["p"] * 5000),
    " ".join(f"word{i}" for i in range(2000)), "user_id_" * 1000, "-" * 10_000, "(" * 10_000,
    "\ud800jwt", "jwt\udcff", "NEAR/2", "col : term", "+jwt", "jwt + cookies", "a.b.c.d.e.f.g.h.i.j.k.l", "..", "../../etc/passwd",
]


class TestHostileQueries:
    @pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
    def test_never_raises(self, conn, query):
        hits = search(conn, query)
        assert isinstance(hits, list)
        assert all(isinstance(h, Hit) and math.isfinite(h.score) for h in hits)
        assert len(hits) <= 10

    @pytest.mark.parametrize(
        "query", ["NOT jwt", "jwt -cookies", "title:jwt", "jwt*", "^jwt", '"jwt', "(jwt)", "jwt\x00", "NEAR(jwt)", "\u202ejwt"]
    )
    def test_operators_are_inert(self, conn, query):
        """FTS5 syntax in user text is plain text: each of these still finds the jwt memory."""
        assert ids(search(conn, query))[:1] == ["jwt"]

    def test_index_is_untouched(self, corpus, conn):
        search(conn, "'; DROP TABLE documents; --")
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == len(CORPUS)


QUERY_TOKENS = st.sampled_from([
    '"', "'", "(", ")", "-", ":", "*", "^", "+", "{", "}", "[", "]", ",", ";", "\\", "/", ".", "_", "%",
    "AND", "and", "And", "OR", "or", "oR", "NOT", "not", "Not", "NEAR", "near", "NeAr", "NEAR/3", "NEAR(",
    "\x00", "\n", "\t", "\u202e", "\u200b", "\ufeff", "\ud800", "\udfff", "é", "e\u0301", "İ", "ß", "日本", "🙂",
    "jwt", "auth", "user_id", "React.FC", ".env.production", "k8s", "CI", "DB", "title:", "tags:", "body:",
    "rowid", "fts", "MATCH", "postgres", "a", "the",
])
QUERIES = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(QUERY_TOKENS, st.text(max_size=8)), max_size=40).map(" ".join),
    st.lists(st.one_of(QUERY_TOKENS, st.text(max_size=4)), max_size=40).map("".join),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=500, max_size=3000),
)


class TestProperty:
    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=QUERIES)
    def test_search_never_raises(self, conn, text):
        hits = search(conn, text)
        assert isinstance(hits, list)
        assert len(hits) <= 10
        for h in hits:
            assert isinstance(h, Hit) and h.record_status == "active" and math.isfinite(h.score)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    @settings(max_examples=100, deadline=None)
    @given(text=QUERIES, inactive=st.booleans(), tag=st.one_of(st.none(), st.text(max_size=10)),
           cats=st.lists(st.sampled_from(sorted(FOLDERS.values())), max_size=3, unique=True))
    def test_search_with_filters_never_raises(self, conn, text, inactive, tag, cats):
        hits = search(conn, text, filters=Filters(categories=tuple(cats), tag=tag, include_inactive=inactive))
        assert isinstance(hits, list)
        assert all(not cats or h.category in cats for h in hits)


class TestReplacements:
    """A retired memory that names its replacement hands its place to it."""

    def _store(self, memory_root: Path) -> Path:
        from memindex.config import Config
        from memindex.index.sync import sync

        write_mem(memory_root, "decision", "celery-beat-schedules", "Use Celery beat for scheduled jobs",
                  ["celery", "beat"], {"status": "superseded", "context": "periodic tasks via celery beat",
                                       "decision": "celery beat with a redis lock"},
                  record_status="retired", retired_at="2026-06-01T00:00:00Z",
                  retired_reason="Duplicate reminders; replaced by decisions/k8s-cronjobs.")
        write_mem(memory_root, "decision", "k8s-cronjobs", "Scheduled jobs run as Kubernetes CronJobs",
                  ["kubernetes", "cron"], {"status": "accepted", "context": "one CronJob per job", "decision": "manifests in deploy/cron"})
        write_mem(memory_root, "runbook", "unrelated", "Rotate the TLS certificate", ["tls"],
                  {"trigger": "certificate expiry", "steps": ["renew with certbot"]})
        sync(memory_root, Config())
        return memory_root

    def test_search_returns_the_replacement_in_the_retired_place(self, memory_root: Path) -> None:
        root = self._store(memory_root)
        paths = search_paths(root, "celery beat periodic tasks")
        assert paths[0] == "decisions/k8s-cronjobs.json"
        assert "decisions/celery-beat-schedules.json" not in paths

    def test_include_inactive_shows_the_retired_memory_itself(self, memory_root: Path) -> None:
        root = self._store(memory_root)
        from memindex.retrieval.query import Filters

        paths = search_paths(root, "celery beat periodic tasks", filters=Filters(include_inactive=True))
        assert paths[0] == "decisions/celery-beat-schedules.json"

    def test_a_reference_to_a_missing_or_retired_memory_adds_nothing(self, memory_root: Path) -> None:
        from memindex.config import Config
        from memindex.index.sync import sync

        root = self._store(memory_root)
        write_mem(root, "decision", "k8s-cronjobs", "Scheduled jobs run as Kubernetes CronJobs", ["kubernetes"],
                  {"status": "superseded", "context": "x", "decision": "y"},
                  record_status="retired", retired_at="2026-07-01T00:00:00Z", retired_reason="replaced by decisions/nothing-here")
        sync(root, Config())
        assert search_paths(root, "celery beat periodic tasks") == []

    def test_the_hook_injects_the_replacement(self, memory_root: Path) -> None:
        from memindex.config import Config
        from memindex.index import open_reader
        from memindex.policy.inject import auto_inject

        root = self._store(memory_root)
        conn = open_reader(root)
        try:
            hits = auto_inject(conn, "how do we configure celery beat for periodic tasks?", Config())
        finally:
            conn.close()
        assert [h.path for h in hits] == ["decisions/k8s-cronjobs.json"]


class TestTagRelated:
    """On-demand search (`related=True`): memories tagged like the best matches gain score."""

    @staticmethod
    def _results(root: Path, text: str, **kw: object) -> tuple[list[Hit], list[Hit]]:
        from memindex.config import Config

        sync(root, Config())
        conn = index.open_reader(root)
        try:
            return search(conn, text, **kw), search(conn, text, related=True, **kw)  # type: ignore[arg-type]
        finally:
            conn.close()

    @staticmethod
    def _others(root: Path, n: int = 6, tag: str | None = None) -> None:
        for i in range(n):
            write_mem(root, "runbook", f"other-{i}", f"Unrelated runbook {i}", [tag or f"topic{i}"],
                      {"trigger": "something else", "steps": ["do it"]})

    def test_a_memory_in_other_words_joins_through_its_tags(self, memory_root: Path) -> None:
        write_mem(memory_root, "decision", "redis-cache", "Cache availability in Redis", ["caching", "redis"],
                  {"status": "accepted", "context": "slot availability is cached", "decision": "ttl 60 s"})
        write_mem(memory_root, "constraint", "eviction", "Eviction policy allkeys-lru", ["redis"],
                  {"kind": "technical", "rule": "memory limit 1 GB", "severity": "medium"})
        self._others(memory_root)
        plain, related = self._results(memory_root, "availability cache", limit=5)
        assert [h.path for h in plain] == ["decisions/redis-cache.json"]
        assert [h.path for h in related] == ["decisions/redis-cache.json", "constraints/eviction.json"]
        # Found through its tag, not its words: ranked below the match that lent it.
        assert 0 < related[1].score < related[0].score == plain[0].score

    def test_a_shared_rare_tag_lifts_a_weak_match_over_an_unrelated_one(self, memory_root: Path) -> None:
        write_mem(memory_root, "decision", "pgbouncer", "PgBouncer transaction pooling for Postgres", ["databases", "ops-db"],
                  {"status": "accepted", "context": "too many connections", "decision": "pool in transaction mode"})
        # Two weak word matches; the unrelated one is the stronger ("connections" twice), the
        # other shares a tag (not a query word) with the best match.
        write_mem(memory_root, "runbook", "pool-errors", "Night alerts", ["ops-db"],
                  {"trigger": "connections pile up at night", "steps": ["look at the graphs"]})
        write_mem(memory_root, "runbook", "night-alerts", "Night alerts", ["alerting"],
                  {"trigger": "connections and more connections pile up at night", "steps": ["look at the graphs"]})
        self._others(memory_root, n=12)  # "connections" in 3 of 15: a word that counts
        plain, related = self._results(memory_root, "pgbouncer transaction pooling connections", limit=3)
        assert [h.path for h in plain] == ["decisions/pgbouncer.json", "runbooks/night-alerts.json", "runbooks/pool-errors.json"]
        assert [h.path for h in related] == ["decisions/pgbouncer.json", "runbooks/pool-errors.json", "runbooks/night-alerts.json"]

    def test_tags_on_many_memories_relate_nothing(self, memory_root: Path) -> None:
        write_mem(memory_root, "decision", "redis-cache", "Cache availability in Redis", ["backend"],
                  {"status": "accepted", "context": "slot availability is cached"})
        write_mem(memory_root, "constraint", "eviction", "Eviction policy allkeys-lru", ["backend"],
                  {"kind": "technical", "rule": "memory limit 1 GB"})
        self._others(memory_root, n=4, tag="backend")  # on 6 of 10 memories: not a topic
        self._others(memory_root, n=4)
        plain, related = self._results(memory_root, "availability cache", limit=5)
        assert [(h.path, h.score) for h in related] == [(h.path, h.score) for h in plain]

    def test_filters_and_status_hold_for_memories_found_through_tags(self, memory_root: Path) -> None:
        write_mem(memory_root, "decision", "redis-cache", "Cache availability in Redis", ["caching", "redis"],
                  {"status": "accepted", "context": "slot availability is cached"})
        write_mem(memory_root, "constraint", "eviction", "Eviction policy allkeys-lru", ["redis"],
                  {"kind": "technical", "rule": "memory limit 1 GB"})
        write_mem(memory_root, "runbook", "old-flush", "Flush keys by hand", ["redis"],
                  {"trigger": "stale keys", "steps": ["FLUSHDB"]}, record_status="retired",
                  retired_at="2026-01-01T00:00:00Z", retired_reason="obsolete")
        self._others(memory_root, n=12)  # "redis" on 3 of 15: a topic
        _, related = self._results(memory_root, "availability cache", limit=5)
        # The active neighbour comes through its tag; the retired one never does.
        assert [h.path for h in related] == ["decisions/redis-cache.json", "constraints/eviction.json"]
        _, only_decisions = self._results(memory_root, "availability cache", limit=5, filters=Filters(categories=("decision",)))
        assert [h.path for h in only_decisions] == ["decisions/redis-cache.json"]

    def test_a_filter_that_hides_the_strongest_neighbours_still_finds_the_rest(self, memory_root: Path) -> None:
        write_mem(memory_root, "decision", "redis-cache", "Cache availability in Redis", ["caching", "redis"],
                  {"status": "accepted", "context": "slot availability is cached"})
        for i in range(6):  # the strongest neighbours (both tags), all outside the filter
            write_mem(memory_root, "constraint", f"limit-{i}", f"Memory limit {i}", ["caching", "redis"], {"rule": "1 GB"})
        write_mem(memory_root, "decision", "redis-ops", "Managed service for the store", ["redis"],
                  {"status": "accepted", "context": "we do not run it ourselves"})
        self._others(memory_root, n=24)  # "redis" on 8 of 32: a topic
        _, related = self._results(memory_root, "availability cache", limit=3, filters=Filters(categories=("decision",)))
        assert [h.path for h in related] == ["decisions/redis-cache.json", "decisions/redis-ops.json"]


@pytest.mark.skipif(not hasattr(sqlite3.Connection, "setlimit"), reason="Connection.setlimit needs Python 3.11")
def test_long_result_lists_do_not_depend_on_sqlites_variable_limit(memory_root: Path) -> None:
    """Builds of SQLite cap bound variables (999 in older ones, 32766 by default): a search
    for hundreds of results, with tag-related memories, must not bind one per memory."""
    from memindex.config import Config

    for i in range(400):
        write_mem(memory_root, "runbook", f"deploy-{i}", f"Deploy step {i}", [f"area{i % 40}", "deploy"],
                  {"trigger": f"rollout of service {i} " + "canary " * (i % 7), "steps": ["roll out"]})
    sync(memory_root, Config())
    results = []
    for variables in (None, 99):  # a connection each: prepared statements are cached per connection
        conn = index.open_reader(memory_root)
        try:
            if variables:
                conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, variables)
            results.append([(h.path, h.score) for h in search(conn, "canary rollout", limit=300, related=True)])
        finally:
            conn.close()
    unlimited, limited = results
    assert len(unlimited) == 300 and len({p for p, _ in unlimited}) == 300
    assert limited == unlimited


def test_lookups_of_a_few_memories_never_walk_a_whole_category(corpus) -> None:
    """Hits, replacements of retired memories and tag boosts look up a few memories by rowid,
    id or path; with a category filter SQLite (no statistics) preferred the category's index
    and read every memory of that kind (35 ms of one prompt at 100k memories)."""
    from memindex.index import reads

    conn = index.open_reader(corpus)
    seen: list[tuple[str, tuple]] = []

    class Spy:
        def execute(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
            seen.append((sql, tuple(params)))
            return conn.execute(sql, params)

    try:
        where, args = reads.filter_sql(("decision",), None, ())
        reads.documents(Spy(), [1, 2], where, args)
        reads.active_by_ref(Spy(), ["redis-cache"], ["decisions/redis-ops.json"], where, args)
        reads.tag_boosts(Spy(), {"redis": 1.0}, outside=[1], where=where, args=args)
        assert len(seen) == 3
        for sql, params in seen:
            plan = " | ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
            assert "documents_category" not in plan, (sql, plan)
    finally:
        conn.close()


def test_the_scratch_table_stays_right_over_thousands_of_reloads() -> None:
    """A long-lived process (the MCP server, an evaluation) reloads the scratch table once a
    query; it is made anew each time, so deleted rows never pile up, and every reload
    answers exactly (merging with 'optimize' instead ended in 'database disk image is
    malformed' after thousands of reloads in `train_relevance.py --check`)."""
    import random
    import sqlite3

    from memindex.index.reads import Scratch

    index_conn = sqlite3.connect(":memory:")
    index_conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, tags, body, kind, questions, forms)")
    words = "webhook retry signature stripe postgres cache token deploy queue timeout".split()
    rng = random.Random(3)
    for rowid in range(1, 300):
        index_conn.execute("INSERT INTO fts(rowid, title, tags, body, kind, questions, forms) VALUES (?,?,?,?,?,?,?)",
                           (rowid, " ".join(rng.choices(words, k=3)), "misc", " ".join(rng.choices(words, k=40)), "runbook",
                            "why does it fail?" if rowid % 2 else "", ""))
    for n in range(3000):
        rowids = rng.sample(range(1, 300), rng.randrange(1, 14))
        Scratch.load_from(index_conn, rowids)
        expected = {r for r in rowids if "stripe" in index_conn.execute("SELECT title || ' ' || body FROM fts WHERE rowid = ?", (r,)).fetchone()[0]}
        assert set(Scratch.matching('"strip"*')) == expected, n
        assert Scratch.with_questions() == {r for r in rowids if r % 2}


def test_each_thread_re_matches_in_a_scratch_table_of_its_own() -> None:
    """The MCP server runs its tools in worker threads (`explain` and `save` re-match a few
    memories in the scratch table): one thread's load must never land in another's query."""
    import sqlite3
    import threading

    from memindex.index.reads import Scratch

    index_conn = sqlite3.connect(":memory:", check_same_thread=False)  # the index may be shared; the scratch may not
    index_conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, tags, body, kind, questions, forms)")
    for rowid in range(1, 41):
        index_conn.execute("INSERT INTO fts(rowid, title, tags, body, kind, questions) VALUES (?,?,?,?,?,?)",
                           (rowid, f"memory {rowid}", "", "stripe webhook" if rowid % 2 else "postgres pool", "runbook", ""))
    wrong: list[tuple[int, int, set[int]]] = []

    def work(first: int) -> None:
        for n in range(300):
            rows = [first + (n % 4) * 2, first + 1 + (n % 4) * 2]  # one with stripe, one without
            Scratch.load_from(index_conn, rows)
            got = set(Scratch.matching('"stripe"'))
            if got != {r for r in rows if r % 2}:
                wrong.append((first, n, got))

    threads = [threading.Thread(target=work, args=(1 + 10 * i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
