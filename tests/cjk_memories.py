"""Memories in Chinese, Japanese and Korean (and FTS5 syntax inside CJK text), for the CJK
tests (tests/test_cjk.py) and the relevance model's CJK case (tests/test_relevance.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import write_mem

CJK_MEMORIES = [
    # Chinese
    ("decision", "db-migration-zh", "数据库迁移使用Flyway", ["数据库", "迁移"],
     {"decision": "所有数据库迁移脚本都用Flyway管理，禁止手工修改表结构。"}),
    ("runbook", "cache-penetration-zh", "Redis缓存穿透的处理", ["缓存"],
     {"trigger": "缓存命中率突然下降，数据库压力升高。", "steps": ["检查热点键是否过期", "开启布隆过滤器"]}),
    ("constraint", "token-lifetime-zh", "认证令牌有效期为十五分钟", ["认证"],
     {"rule": "访问令牌十五分钟过期，刷新令牌七天过期。"}),
    # Japanese
    ("decision", "auth-jwt-ja", "認証はJWTで行う", ["認証"],
     {"context": "モバイルアプリはセッションクッキーを共有できないため、短命なJWTアクセストークンを使う。"}),
    ("runbook", "reindex-ja", "PostgreSQLのインデックス再構築手順", ["データベース"],
     {"trigger": "クエリが遅くなった", "steps": ["メンテナンス時間にREINDEXを実行する"]}),
    # Korean
    ("runbook", "rollback-ko", "카나리 배포 롤백 절차", ["배포"],
     {"trigger": "카나리 배포에서 오류율이 2%를 넘으면", "steps": ["롤백 작업을 실행한다"]}),
    ("preference", "review-ko", "코드 리뷰는 두 명이 승인해야 한다", ["리뷰"],
     {"topic": "코드리뷰", "value": "모든 PR은 두 명의 승인이 필요하다"}),
    # FTS5 syntax inside CJK text
    ("tech_debt", "syntax-zh", '日志"格式" OR (混乱)* NEAR 告警-规则^', ["日志"],
     {"description": '告警规则 AND "日志格式" NOT 统一: {title}: 待整理*'}),
]


def write_memories(root: Path, memories) -> None:
    """Write each (category, id, title, tags, content) as a valid memory file below `root`."""
    for category, mem_id, title, tags, content in memories:
        write_mem(root, category, mem_id, title, tags, content)
