"""Text without spaces (memindex/text/cjk.py, memindex/retrieval/cjk_search.py): Chinese, Japanese and
Korean memories found by word queries, through `memindex search` and the prompt hook,
next to English ones; a store without CJK text is untouched."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cjk_memories import CJK_MEMORIES, write_memories
from conftest import run_cli, write_mem

from memindex import index
from memindex.text import cjk
from memindex.retrieval import cjk_search
from memindex.config import Config
from memindex.index import reads
from memindex.policy.inject import decide
from memindex.retrieval.query import Filters, Params, plan_query, search
from memindex.index.sync import sync
from memindex.text.words import query_terms

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "memindex_hook.py"

ENGLISH_MEMORIES = [
    ("decision", "jwt-en", "Chose JWT over session cookies", ["auth", "jwt"],
     {"decision": "Mobile clients cannot share the web session cookie, so access tokens are short-lived JWTs."}),
    ("runbook", "canary-en", "Roll back a failed canary", ["deploy"],
     {"trigger": "Canary error rate above 2%.", "steps": ["Run the rollback job.", "Page the owner."]}),
    ("constraint", "pg-en", "Postgres connection limit", ["postgres"],
     {"rule": "At most 20 connections per instance; pgbouncer pools them."}),
    ("preference", "tabs-en", "Tabs in Makefiles only", ["style"], {"topic": "indentation", "value": "tabs"}),
]
SESSIONS = [
    ("session_summary", f"session-{i}", f"Session {i}: routine maintenance", ["session"],
     {"goal": f"Dependency upgrades batch {i} and small refactors of the booking widget."})
    for i in range(6)
]


@pytest.fixture
def store(memory_root: Path) -> Path:
    write_memories(memory_root, CJK_MEMORIES + ENGLISH_MEMORIES + SESSIONS)
    sync(memory_root, Config())
    return memory_root


@pytest.fixture
def english_store(memory_root: Path) -> Path:
    write_memories(memory_root, ENGLISH_MEMORIES + SESSIONS)
    sync(memory_root, Config())
    return memory_root


def ids(root: Path, query: str, **kw) -> list[str]:
    conn = index.open_reader(root)
    try:
        return [h.id for h in search(conn, query, **kw)]
    finally:
        conn.close()


def cli_ids(root: Path, query: str, *flags: str) -> list[str]:
    out = run_cli("--root", str(root), "search", "--json", *flags, "--", query)
    assert out.returncode == 0, out.stderr
    return [hit["id"] for hit in json.loads(out.stdout)]


# --- the text side --------------------------------------------------------------------


def test_query_terms_cut_cjk_runs_into_bigrams_and_free_glued_words() -> None:
    assert [t.text for t in query_terms("数据库迁移")] == ["数据", "据库", "库迁", "迁移"]
    assert [t.text for t in query_terms("Redis缓存 session")] == ["redis", "缓存", "session"]
    assert [t.text for t in query_terms("배포를 서버에서")] == ["배포", "포를", "서버", "버에", "에서"]
    assert [t.text for t in query_terms("的 の 는")] == []  # single characters are no terms
    assert [t.text for t in query_terms("user_id字段")] == ["user id", "字段"]


def test_segment_holds_only_what_unicode61_cannot_split() -> None:
    assert cjk.segment("plain English, café naïve") == ""
    assert cjk.segment("使用Redis缓存") == "使用 Redis 缓存"
    assert cjk.segment("PostgreSQLのインデックス") == "PostgreSQL のイ イン ンデ デッ ック クス"
    assert cjk.segment("deploy 배포를") == "배포 포를"  # "deploy" is a word of fts already
    # decomposed Hangul (NFD, as some macOS tools write it) is composed first
    import unicodedata
    assert cjk.segment(unicodedata.normalize("NFD", "배포")) == "배포"


# --- search: each language, two-character words, mixed queries ---------------------------


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("数据库", "db-migration-zh"),  # inside the longer runs 数据库迁移使用 and 所有数据库迁移脚本
        ("缓存", "cache-penetration-zh"),  # two characters
        ("认证", "token-lifetime-zh"),
        ("布隆过滤器", "cache-penetration-zh"),
        ("認証", "auth-jwt-ja"),
        ("インデックス", "reindex-ja"),
        ("再構築", "reindex-ja"),
        ("배포", "rollback-ko"),  # inside 배포에서
        ("롤백", "rollback-ko"),
        ("리뷰", "review-ko"),  # inside 리뷰는 and 코드리뷰
        ("승인", "review-ko"),
    ],
)
def test_a_cjk_word_finds_its_memory(store: Path, query: str, first: str) -> None:
    assert ids(store, query)[0] == first


def test_cli_search_finds_each_language(store: Path) -> None:
    assert cli_ids(store, "数据库迁移")[0] == "db-migration-zh"
    assert cli_ids(store, "認証")[0] == "auth-jwt-ja"
    assert cli_ids(store, "배포 롤백")[0] == "rollback-ko"
    assert cli_ids(store, "认证", "-c", "constraint") == ["token-lifetime-zh"]
    assert cli_ids(store, "缓存", "-c", "decision") == []


def test_title_matches_outrank_body_matches(store: Path) -> None:
    # 数据库 is in the migration decision's title and tags, only in the cache runbook's body
    found = ids(store, "数据库")
    assert found[:2] == ["db-migration-zh", "cache-penetration-zh"]


def test_chinese_and_japanese_characters_are_distinct(store: Path) -> None:
    assert "auth-jwt-ja" not in ids(store, "认证")  # simplified 认证 vs Japanese 認証
    assert "token-lifetime-zh" not in ids(store, "認証")


def test_mixed_queries(store: Path) -> None:
    assert ids(store, "Redis 缓存")[0] == "cache-penetration-zh"
    found = ids(store, "JWT 認証")
    assert found[0] == "auth-jwt-ja" and "jwt-en" in found[:3]
    assert ids(store, "Flyway迁移")[0] == "db-migration-zh"  # glued in the query too


def test_an_english_word_glued_to_cjk_text_is_found(store: Path) -> None:
    assert "reindex-ja" in ids(store, "PostgreSQL")  # "PostgreSQLのインデックス" is one unicode61 token
    assert ids(store, "Flyway") == ["db-migration-zh"]
    assert ids(store, "REINDEX") == ["reindex-ja"]


def test_scores_add_up_on_one_bm25_scale(store: Path) -> None:
    conn = index.open_reader(store)
    try:
        both = {h.id: h.score for h in search(conn, "JWT 認証")}
        jwt = {h.id: h.score for h in search(conn, "JWT")}
        auth = {h.id: h.score for h in search(conn, "認証")}
    finally:
        conn.close()
    assert both["auth-jwt-ja"] == pytest.approx(jwt["auth-jwt-ja"] + auth["auth-jwt-ja"], rel=1e-6)
    assert both["jwt-en"] == pytest.approx(jwt["jwt-en"], rel=1e-6)


def test_the_idf_of_a_bigram_is_that_of_the_whole_store(store: Path) -> None:
    """fts_cjk holds 8 memories: alone, FTS5 would give a bigram in most of them no weight."""
    conn = index.open_reader(store)
    try:
        plan = plan_query(conn, "认证", Params())
        assert plan.spaceless == len(CJK_MEMORIES) and plan.n_docs == len(CJK_MEMORIES + ENGLISH_MEMORIES + SESSIONS)
        term = plan.used[0]
        (rowid, bm25), = reads.rank_spaceless(conn, plan.expressions[term], (5, 3, 1, 1, 1, 1))
        hit, = search(conn, "认证")
        assert hit.rowid == rowid
        assert hit.score == pytest.approx(-bm25 * cjk_search.fts5_idf(18, 1) / cjk_search.fts5_idf(8, 1))
    finally:
        conn.close()


def test_fts5_syntax_in_cjk_text_and_queries_is_inert(store: Path) -> None:
    for query in ['日志"格式', '"日志" OR 格式*', "NEAR(告警 规则)", "告警-规则^", "{title}: 日志", "混乱)*", "待整理*"]:
        found = ids(store, query)
        assert found and found[0] == "syntax-zh", query
    assert ids(store, '"数据库" AND (迁移)*')[0] == "db-migration-zh"
    assert ids(store, '认证" AND "x')[0] == "token-lifetime-zh"
    assert "syntax-zh" not in ids(store, "AND NOT OR")  # the operators in its text are not words of it


def test_include_inactive_and_retired_cjk_memories(store: Path) -> None:
    write_mem(store, "decision", "old-cache-zh", "旧的缓存方案", ["缓存"], {"decision": "本地缓存"},
              record_status="retired", retired_reason="replaced by runbooks/cache-penetration-zh")
    sync(store, Config())
    assert "old-cache-zh" not in ids(store, "本地缓存方案")
    assert "old-cache-zh" in ids(store, "本地缓存方案", filters=Filters(include_inactive=True))


# --- the index ---------------------------------------------------------------------------


def _spaceless_rows(root: Path) -> dict[int, tuple[str, str, str]]:
    conn = sqlite3.connect(root / ".index.db")
    try:
        return {r[0]: r[1:] for r in conn.execute("SELECT rowid, title, tags, body FROM fts_cjk")}
    finally:
        conn.close()


def test_only_memories_with_cjk_text_get_a_spaceless_row(store: Path) -> None:
    rows = _spaceless_rows(store)
    assert len(rows) == len(CJK_MEMORIES)
    conn = sqlite3.connect(store / ".index.db")
    try:
        fts = dict(conn.execute("SELECT d.id, f.title FROM fts f JOIN documents d ON d.rowid = f.rowid"))
    finally:
        conn.close()
    assert fts["db-migration-zh"] == "数据库迁移使用Flyway"  # fts keeps the text as it is


def test_edits_and_deletions_keep_the_spaceless_table_in_step(store: Path) -> None:
    path = store / "decisions" / "db-migration-zh.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"], data["tags"], data["content"]["decision"] = "Database migrations use Flyway", ["db"], "Always Flyway."
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    sync(store, Config())
    assert len(_spaceless_rows(store)) == len(CJK_MEMORIES) - 1
    assert "db-migration-zh" not in ids(store, "数据库迁移")
    (store / "runbooks" / "rollback-ko.json").unlink()
    sync(store, Config())
    assert len(_spaceless_rows(store)) == len(CJK_MEMORIES) - 2
    assert ids(store, "롤백") == []
    data["title"] = "数据库迁移"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    sync(store, Config())
    assert ids(store, "迁移")[0] == "db-migration-zh"


def test_an_english_store_is_untouched(english_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _spaceless_rows(english_store) == {}

    def never(*a, **k):
        raise AssertionError("fts_cjk asked for a query without CJK matches")

    monkeypatch.setattr(cjk_search, "rank", never)
    monkeypatch.setattr(reads, "rank_spaceless", never)
    monkeypatch.setattr(reads.Scratch, "load_from", _only_fts(reads.Scratch.load_from))
    conn = index.open_reader(english_store)
    try:
        for query in ("rollback canary", "JWT session cookies", "postgres connections", "tabs"):
            plan = plan_query(conn, query, Params())
            assert plan.spaceless == 0 and plan.side_df == {} and plan.runs == [] and not plan.fused
            hits = search(conn, query, plan=plan)
            # the ranking is FTS5's bm25 over fts alone, as before text without spaces existed
            direct = reads.rank(conn, plan.match, (5.0, 3.0, 1.0, 1.0, 0.25, 1.0), 50)
            assert [(h.rowid, round(h.score, 9)) for h in hits] == [(r, round(-s, 9)) for r, s in direct][: len(hits)]
        outcome = decide(conn, "the canary error rate is above 2%, how do we roll back?", Config())
        assert [h.id for h in outcome.hits] == ["canary-en"]
    finally:
        conn.close()


def _only_fts(load_from):
    def guarded(conn, rowids, spaceless=False):
        assert not spaceless, "fts_cjk loaded for a query without CJK matches"
        return load_from(conn, rowids)

    return classmethod(lambda cls, conn, rowids, spaceless=False: guarded(conn, rowids, spaceless))


def test_english_queries_on_a_cjk_store_take_the_old_path_unless_a_word_is_glued(store: Path, monkeypatch) -> None:
    conn = index.open_reader(store)
    try:
        plan = plan_query(conn, "rollback canary error rate", Params())
        assert plan.side_df == {} and not plan.fused
        plan = plan_query(conn, "flyway", Params())
        assert plan.fused
    finally:
        conn.close()


# --- the prompt hook ---------------------------------------------------------------------


def run_hook(project: Path, prompt: str) -> str:
    payload = json.dumps({"prompt": prompt, "cwd": str(project), "session_id": "s1", "hook_event_name": "UserPromptSubmit"})
    out = subprocess.run([sys.executable, "-I", "-S", str(HOOK), "prompt"], input=payload.encode(), check=False,
                         capture_output=True, timeout=30)
    assert out.returncode == 0 and "Traceback" not in out.stderr.decode()
    return out.stdout.decode()


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("数据库迁移应该用什么工具？", "decisions/db-migration-zh.json"),
        ("缓存命中率下降了，数据库压力很大怎么办", "runbooks/cache-penetration-zh.json"),
        ("認証トークンの仕組みを教えてください", "decisions/auth-jwt-ja.json"),
        ("카나리 배포가 실패하면 롤백은 어떻게 하나요?", "runbooks/rollback-ko.json"),
        ("Redis缓存穿透怎么处理？", "runbooks/cache-penetration-zh.json"),
    ],
)
def test_the_hook_injects_cjk_memories(store: Path, prompt: str, expected: str) -> None:
    out = run_hook(store.parent.parent, prompt)
    assert f".claude/memory/{expected}" in out, out
    assert out.count("\n- [") <= 3


def test_the_hook_stays_silent_on_an_unrelated_cjk_prompt(store: Path) -> None:
    assert run_hook(store.parent.parent, "今天天气怎么样，适合去公园散步吗？") == ""
    assert run_hook(store.parent.parent, "明日の会議の資料を作ってください") == ""


def test_coverage_credits_bigrams_and_counts_unknown_words(store: Path) -> None:
    conn = index.open_reader(store)
    try:
        cfg = Config()
        outcome = decide(conn, "数据库迁移应该用什么工具？", cfg)
        kept = {d.path: d.coverage for d in outcome.decisions if d.kept}
        assert set(kept) == {"decisions/db-migration-zh.json"} and kept["decisions/db-migration-zh.json"] >= 0.4
        # the same words next to a topic no memory has: less of the prompt is explained
        other = decide(conn, "数据库迁移和容器编排和服务网格和监控告警", cfg)
        cov = {d.path: d.coverage for d in other.decisions}
        assert cov.get("decisions/db-migration-zh.json", 0) < kept["decisions/db-migration-zh.json"]
    finally:
        conn.close()


def test_a_bigram_in_most_cjk_memories_still_weighs_its_store_idf(memory_root: Path) -> None:
    """FTS5 alone would floor its IDF at 1e-6 (in 3 of 4 rows of fts_cjk): the ranking
    would be noise. On the store's scale the title match wins and every score counts."""
    write_memories(memory_root, ENGLISH_MEMORIES + SESSIONS + [
        ("decision", "a", "数据校验", ["数据"], {"decision": "入库前校验"}),
        ("decision", "b", "缓存策略", ["缓存"], {"decision": "热点数据放在缓存里，冷数据不缓存，定期清理过期的键和无用的条目"}),
        ("decision", "c", "日志规范", ["日志"], {"decision": "日志里不能写用户数据"}),
        ("decision", "d", "部署流程", ["部署"], {"decision": "先灰度再全量"}),
    ])
    sync(memory_root, Config())
    conn = index.open_reader(memory_root)
    try:
        hits = search(conn, "数据")
    finally:
        conn.close()
    assert hits[0].id == "a" and {h.id for h in hits} == {"a", "b", "c"}
    assert all(h.score > 0.5 for h in hits)


def test_document_frequency_estimates_count_only_the_cjk_memories() -> None:
    """Past DF_SAMPLE matches df is extrapolated from where the sample ends: among the rows
    of fts_cjk, not among all rowids (1,000 CJK memories first, 9,000 others after them)."""
    from memindex.retrieval.query import _count

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE fts_cjk USING fts5(title, tags, body)")
    conn.executemany("INSERT INTO fts_cjk(rowid, title, tags, body) VALUES (?, '', '', '数据')", [(i,) for i in range(1, 1001)])
    assert _count(conn, '"数据"', 3001, 10_000, spaceless=True) == 1000
