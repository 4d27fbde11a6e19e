"""The searches behind the answers: top_search_queries over the queries a platform's response
shows (raw_ai_responses.search_queries)."""

from datetime import timedelta

from tests.sql_models_harness import DAY, Warehouse, response
from visibility_assets.core.partitions import Partition


def test_queries_are_counted_per_category_platform_and_day_with_their_rank_and_first_day():
    before = DAY - timedelta(days=1)
    warehouse = Warehouse().insert("raw_ai_responses", [
        response("b1", before, category="cloud", search_queries=["云数据库 推荐"]),
        response("a1", category="cloud", search_queries=["云数据库 推荐", "RDS 价格"]),
        response("a2", category="cloud", search_queries=["云数据库  推荐"]),  # the same, spaced otherwise
        response("a3", category="cloud", search_queries=["RDS 价格", "rds 价格"]),  # twice in one answer
        response("a4", category="cloud", search_queries=[]),  # searched, queries not shown: not counted
        response("c1", category="canary", search_queries=["canary"]),
        response("k1", platform="kimi", category="cloud", search_queries=["CRM"]),
    ])
    partitions = [Partition(DAY, "deepseek"), Partition(before, "deepseek"), Partition(DAY, "kimi")]
    rows = {(r["platform"], r["date"], r["query_key"]): r for r in warehouse.build("top_search_queries", partitions)}
    assert set(rows) == {("deepseek", before, "云数据库 推荐"), ("deepseek", DAY, "云数据库 推荐"),
                         ("deepseek", DAY, "rds 价格"), ("kimi", DAY, "crm")}
    popular, rds = rows[("deepseek", DAY, "云数据库 推荐")], rows[("deepseek", DAY, "rds 价格")]
    assert (popular["answers"], popular["answers_with_queries"], popular["rank_in_day"]) == (2, 3, 1)
    assert popular["answer_share"] == 2 / 3 and popular["first_seen"] == before
    assert (rds["answers"], rds["rank_in_day"], rds["first_seen"]) == (2, 1, DAY)  # a tie shares the rank
    assert rows[("kimi", DAY, "crm")]["query"] == "CRM"
    assert not any(warehouse.failing_checks(partitions).values())
