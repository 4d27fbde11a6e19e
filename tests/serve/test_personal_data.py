"""Personal data an answer may carry (phone numbers, e-mail addresses, resident ID and bank card
numbers) is masked wherever a viewer or an export reads it, while an analyst reads it verbatim."""

from datetime import date

import pytest

from tests.conftest import IN_PROCESS_URL, write_config
from tests.workspace_lake import PASSWORD, Workspace, build_lake
from visibility_assets.config import load_config
from visibility_assets.core.personal_data import mask
from visibility_assets.notify.faults import FaultMessage, record_faults
from visibility_assets.warehouse.resource import WarehouseResource

PHONE, EMAIL, RESIDENT_ID, CARD = "138 1234 5678", "li.lei@corp-example.cn", "11010519491231002X", "6212260200000000006"
QUOTED = f"客服电话 {PHONE}，邮箱 {EMAIL}，身份证 {RESIDENT_ID}，卡号 {CARD}。"
DAY = date(2026, 11, 20)


@pytest.mark.parametrize(("text", "masked"), [
    ("电话 13812345678。", "电话 *******5678。"),
    ("call +86 138-1234-5678 now", "call *********5678 now"),
    ("座机 010-12345678，(0755) 1234 5678", "座机 *******5678，********5678"),
    ("US office +1 415 555 0132", "US office *******0132"),
    ("write to li.lei@corp-example.cn.", "write to ***@corp-example.cn."),
    ("身份证 11010519491231002X 号", "身份证 ****************** 号"),
    ("卡号 6212 2602 0000 0000 006", "卡号 ***************0006"),
    ("Visa 4111111111111111", "Visa ************1111"),
])
def test_each_kind_of_personal_data_is_masked_keeping_a_hint(text, masked):
    assert mask(text) == masked


@pytest.mark.parametrize("text", [
    "订单号 20261201123456，版本 1.13.27，2026-12-01 13:45",  # an order number passes Luhn 1 time in 10
    "身份证 110105194912310021 无效",  # its check digit does not hold
    "卡号 6212 2602 0000 0000 003",  # Luhn fails
    "阿里云 ECS 8核16G 年付 3999 元，QPS 120000", "https://example.com/p/13812345678x",
])
def test_numbers_that_are_no_personal_data_are_left_alone(text):
    assert mask(text) == text


@pytest.mark.loopback
@pytest.mark.slow  # over a second by design: builds a warehouse
def test_a_viewer_reads_personal_data_masked_and_an_analyst_verbatim(tmp_path):
    home = tmp_path / "home"
    config = load_config(write_config(home / "config", IN_PROCESS_URL, questions=6, rounds=1))
    lake = build_lake(home, config, DAY, 1, ("deepseek",))
    warehouse = WarehouseResource.from_settings(lake)
    fault = FaultMessage(date=DAY, platform="deepseek", kind="run_failed", fault_class="source",
                         subject="nightly_platform_job", detail=f"the platform answered: {QUOTED}", run_id="r1")
    warehouse.write(lambda conn: record_faults(conn, [fault]))
    with warehouse.read_only() as conn:
        key = conn.execute("SELECT min(request_key) FROM raw_ai_responses").fetchone()[0]
    warehouse.write(lambda conn: conn.execute("UPDATE raw_ai_responses SET answer_text = answer_text || $quoted"
                                              " WHERE request_key = $key", {"quoted": QUOTED, "key": key}))
    built = Workspace(home, config, lake)
    built.accounts.add("vera", "viewer", PASSWORD)
    built.accounts.add("ana", "analyst", PASSWORD)
    query = f"from={DAY}&to={DAY}"
    viewer, analyst = built.client("vera"), built.client("ana")

    seen_by_viewer = [viewer.get(f"/alerts?{query}").text, viewer.get(f"/api/alerts?{query}").text,
                      viewer.get(f"/api/alerts?{query}&format=csv&table=faults").text]
    for text in seen_by_viewer:
        assert "5678" in text and "corp-example.cn" in text  # the hints
        for secret in (PHONE, "13812345678", EMAIL, RESIDENT_ID, CARD):
            assert secret not in text
    assert viewer.get(f"/api/answers?brand=阿里云&date={DAY}&platform=deepseek").status_code == 403

    assert QUOTED in analyst.get(f"/api/alerts?{query}").json()["faults"][0]["details"]
    answers = analyst.get(f"/api/answers?date={DAY}&platform=deepseek&{query}&named=all").json()
    assert any(QUOTED in row["answer_text"] for row in answers["answers"] if row["request_key"] == key), answers.keys()
    with warehouse.read_only() as conn:  # the raw table keeps the verbatim answer
        assert QUOTED in conn.execute("SELECT answer_text FROM raw_ai_responses WHERE request_key = $k",
                                      {"k": key}).fetchone()[0]
