"""Alerts reach chat webhooks in each service's documented format, signed, retried when the
service asks for it, never twice to the same webhook, and without their URL token or signing
secret in any error or log line. A real HTTP receiver on loopback stands in for the services."""

from __future__ import annotations

import base64
import datetime as dt
import email.utils
import hashlib
import hmac
import json
import logging
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote_plus

import duckdb
import httpx
import pytest

from visibility_assets.config.events import Webhook
from visibility_assets.notify import AlertMessage, deliver, delivered_ids, notify, render
from visibility_assets.warehouse.db import transaction
from visibility_assets.warehouse.tables import NOTIFICATION_DELIVERIES

from tests.webhook_receiver import Received, Receiver, Reply

TOKEN = "SECRET123"
SECRET = "SIGNSECRET456"
REPORT = "https://reports.example.com/visibility_report_2026-11-03.html"

ROW = {
    "date": dt.date(2026, 11, 3), "platform": "qwen", "kind": "mention_rate", "category": "云计算",
    "subject": "阿里云", "direction": "up", "rate": 0.30, "rate_low": 0.25, "rate_high": 0.35,
    "baseline_rate": 0.18, "baseline_low": 0.152, "baseline_high": 0.211, "change": 0.12, "z": 4.1,
    "p_value": 0.00004, "q_value": 0.002, "answers": 200, "baseline_answers": 1400, "baseline_days": 7,
    "run_id": "run-1", "decision": "alert", "tests_that_day": 40,
}
SHARE_ROW = {**ROW, "kind": "refusal_share", "category": None, "subject": "refusal", "direction": "down",
             "rate": 0.02, "rate_low": 0.01, "rate_high": 0.04, "baseline_rate": 0.08, "change": -0.06}

OK_BODIES = {
    "feishu": (200, {"code": 0, "msg": "success", "data": {}}), "lark": (200, {"code": 0, "msg": "success", "data": {}}),
    "dingtalk": (200, {"errcode": 0, "errmsg": "ok"}), "wecom": (200, {"errcode": 0, "errmsg": "ok"}),
    "slack": (200, "ok"), "json": (204, ""),
}


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


class Clock:
    """Epoch seconds that move on by one at each reading: every attempt signs a new timestamp."""

    def __init__(self, start: float = 1_793_000_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


class ListLog:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, text: str) -> None:
        self.lines.append(text)

    warning = error = debug = info


class DuckDBWarehouse:
    """The two warehouse operations notify uses, over a plain DuckDB file."""

    def __init__(self, path) -> None:
        self.path = str(path)
        duckdb.connect(self.path).close()

    def write(self, work):
        conn = duckdb.connect(self.path)
        try:
            with transaction(conn):
                return work(conn), None
        finally:
            conn.close()

    @contextmanager
    def read_only(self):
        conn = duckdb.connect(self.path, read_only=True)
        try:
            yield conn
        finally:
            conn.close()

    def rows(self, sql: str) -> list[tuple]:
        with self.read_only() as conn:
            return conn.execute(sql).fetchall()


@pytest.fixture
def warehouse(tmp_path) -> DuckDBWarehouse:
    return DuckDBWarehouse(tmp_path / "warehouse.duckdb")


def hook(monkeypatch, receiver: Receiver, name: str, format: str, *, secret: str | None = None,
         path: str | None = None, ok: Reply | None = None, **settings) -> Webhook:
    """A webhook on the receiver whose URL carries TOKEN, as the services' URLs carry theirs."""
    path = path or f"/{name}/hook"
    url_env, secret_env = f"TEST_{name.upper()}_URL", f"TEST_{name.upper()}_SECRET" if secret else None
    monkeypatch.setenv(url_env, f"{receiver.base}{path}?access_token={TOKEN}")
    if secret:
        monkeypatch.setenv(secret_env, secret)
    status, body = OK_BODIES[format]
    receiver.on(path, ok or Reply(status, body))
    return Webhook(name=name, format=format, url_env=url_env, secret_env=secret_env, **settings)


def message(row: dict = ROW, report_url: str | None = REPORT) -> AlertMessage:
    return AlertMessage.from_row(row, report_url)


def feishu_sign(timestamp: str, secret: str) -> str:
    # The service's documented recipe, written out again rather than imported.
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(timestamp: str, secret: str) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def assert_feishu_signed(request: Received, secret: str) -> str:
    body = request.json
    assert body["sign"] == feishu_sign(body["timestamp"], secret)
    return body["timestamp"]


def assert_dingtalk_signed(request: Received, secret: str) -> str:
    timestamp = request.params["timestamp"]
    assert request.params["access_token"] == TOKEN  # the URL's own query is kept
    # On the wire the sign is the url-encoded base64, as DingTalk documents it.
    assert f"sign={quote_plus(dingtalk_sign(timestamp, secret))}" in request.query
    return timestamp


# --- the message --------------------------------------------------------------------------------------------------


def test_the_alert_id_names_the_change_not_the_run_that_computed_it():
    first = message()
    rerun = message({**ROW, "run_id": "run-2", "rate": 0.31, "p_value": 0.00002, "decision": "borderline"})
    assert first.alert_id == rerun.alert_id
    assert re.fullmatch("[0-9a-f]{64}", first.alert_id)  # a SHA-256 in hex
    assert message({**ROW, "direction": "down"}).alert_id != first.alert_id
    assert message({**ROW, "date": "2026-11-04"}).alert_id != first.alert_id
    assert message(SHARE_ROW).alert_id != first.alert_id


def test_the_text_gives_the_change_both_intervals_the_test_and_the_report():
    alert = message()
    assert alert.title == "阿里云 mention rate up on qwen (2026-11-03)"
    text = "\n".join(alert.lines())
    for expected in ("Category: 云计算", "Change: +12.0 pp (18.0% → 30.0%)", "Today: 30.0% (95% CI 25.0–35.0%, n=200)",
                     "Baseline (7 d): 18.0% (95% CI 15.2–21.1%, n=1400)", "p = 4e-05, q = 0.002", f"Report: {REPORT}"):
        assert expected in text
    share = message(SHARE_ROW, report_url=None)
    assert share.title == "refusal share down on qwen (2026-11-03)"
    assert share.good_news and not message({**SHARE_ROW, "direction": "up"}).good_news
    assert not any(line.startswith("Report") for line in share.lines())
    assert "borderline" in "\n".join(message({**ROW, "decision": "borderline"}).lines())


# --- each format, as the receiver got it --------------------------------------------------------------------------


def sent_text(request: Received) -> str:
    return json.dumps(request.json, ensure_ascii=False)


@pytest.mark.parametrize("format", ["feishu", "lark", "dingtalk", "wecom", "slack", "json"])
def test_each_format_carries_the_alert_in_the_services_documented_shape(format, receiver, client, monkeypatch):
    signed = format in ("feishu", "lark", "dingtalk")
    webhook = hook(monkeypatch, receiver, format, format, secret=SECRET if signed else None)
    clock = Clock()

    delivery = deliver(webhook, message(), client, sleep=lambda s: None, now=clock)

    assert (delivery.state, delivery.attempts, delivery.error) == ("delivered", 1, None)
    [request] = receiver.requests
    assert request.headers["Content-Type"].startswith("application/json")
    body = request.json
    if format in ("feishu", "lark"):
        assert body["msg_type"] == "interactive"
        card = body["card"]
        assert card["header"]["title"] == {"tag": "plain_text", "content": message().title}
        assert card["elements"][0]["tag"] == "div" and card["elements"][0]["text"]["tag"] == "lark_md"
        assert card["elements"][1]["actions"][0]["url"] == REPORT
        timestamp = assert_feishu_signed(request, SECRET)
        assert abs(int(timestamp) - clock.t) <= 2  # seconds
    elif format == "dingtalk":
        assert body["msgtype"] == "markdown"
        assert body["markdown"]["title"] == message().title and body["markdown"]["text"].startswith("#### ")
        timestamp = assert_dingtalk_signed(request, SECRET)
        assert abs(int(timestamp) - clock.t * 1000) <= 2000  # milliseconds
    elif format == "wecom":
        assert body["msgtype"] == "markdown" and set(body["markdown"]) == {"content"}
        assert len(body["markdown"]["content"].encode()) <= 4096
    elif format == "slack":
        assert body["text"].startswith(message().title)
        assert body["blocks"] and all(b["type"] == "section" and b["text"]["type"] == "mrkdwn" for b in body["blocks"])
    else:
        assert body["alert_id"] == message().alert_id and body["title"] == message().title
        assert body["date"] == "2026-11-03" and body["rate_low"] == 0.25 and body["report_url"] == REPORT
        assert {"platform", "kind", "category", "subject", "direction", "p_value", "q_value"} <= set(body)
    # The brand, platform, change, both intervals and the report link, as text (or as fields).
    shown = ("阿里云", "qwen", REPORT) if format == "json" else ("阿里云", "qwen", "+12.0 pp", "25.0–35.0%",
                                                                  "15.2–21.1%", REPORT)
    assert all(part in sent_text(request) for part in shown)
    if format == "json":
        assert (body["change"], body["rate_high"], body["baseline_low"]) == (0.12, 0.35, 0.152)
    if not signed:
        assert "sign" not in body and "timestamp" not in request.params


def test_render_takes_no_secret_into_the_payload():
    for format in ("feishu", "lark", "dingtalk", "wecom", "slack", "json"):
        request = render(format, message(), SECRET, 1_793_000_000.0)
        assert SECRET not in json.dumps(request.json) + json.dumps(request.params)
    with pytest.raises(ValueError, match="teams"):
        render("teams", message(), None, 0.0)


# --- retries ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("format, status, error_body", [
    ("feishu", 200, {"code": 11232, "msg": "frequency limited"}),
    ("lark", 400, {"code": 9499, "msg": "too many request", "data": {}}),
    ("dingtalk", 200, {"errcode": 130101, "errmsg": "send too fast, exceed 20 times per minute"}),
    ("wecom", 200, {"errcode": 45009, "errmsg": "api freq out of limit"}),
])
def test_a_503_then_a_rate_limit_body_then_success_gives_one_message_in_three_attempts(
        format, status, error_body, receiver, client, monkeypatch):
    signed = format != "wecom"
    webhook = hook(monkeypatch, receiver, format, format, secret=SECRET if signed else None)
    receiver.scripts[f"/{format}/hook"].extend([Reply(503, "upstream busy"), Reply(status, error_body)])
    sleeps: list[float] = []

    delivery = deliver(webhook, message(), client, sleep=sleeps.append, now=Clock())

    assert (delivery.state, delivery.attempts, delivery.http_status, delivery.error) == ("delivered", 3, 200, None)
    assert len(receiver.requests) == 3 and len(sleeps) == 2  # the third request was the one accepted
    if format in ("feishu", "lark"):
        timestamps = [assert_feishu_signed(r, SECRET) for r in receiver.requests]
    elif format == "dingtalk":
        timestamps = [assert_dingtalk_signed(r, SECRET) for r in receiver.requests]
    else:
        timestamps = ["unsigned"] * 3
    assert len(set(timestamps)) == (3 if signed else 1)  # signed again at every attempt


def test_a_400_is_not_retried(receiver, client, monkeypatch):
    webhook = hook(monkeypatch, receiver, "slack", "slack")
    receiver.scripts["/slack/hook"].append(Reply(400, "invalid_payload"))

    delivery = deliver(webhook, message(), client, sleep=lambda s: pytest.fail("slept"), now=Clock())

    assert (delivery.state, delivery.attempts, delivery.http_status) == ("failed", 1, 400)
    assert "invalid_payload" in delivery.error and len(receiver.requests) == 1


@pytest.mark.parametrize("format, body", [
    ("feishu", {"code": 19021, "msg": "sign match fail or timestamp is not within one hour from current time"}),
    ("dingtalk", {"errcode": 310000, "errmsg": "keywords not in content"}),
    ("wecom", {"errcode": 93000, "errmsg": "invalid webhook url"}),
])
def test_a_refusal_in_a_200_body_fails_without_a_retry(format, body, receiver, client, monkeypatch):
    webhook = hook(monkeypatch, receiver, format, format, ok=Reply(200, body))

    delivery = deliver(webhook, message(), client, sleep=lambda s: pytest.fail("slept"), now=Clock())

    assert (delivery.state, delivery.attempts, delivery.http_status) == ("failed", 1, 200)
    assert str(next(iter(body.values()))) in delivery.error


def test_retry_after_is_honoured_in_seconds_and_as_a_date_up_to_a_cap(receiver, client, monkeypatch):
    webhook = hook(monkeypatch, receiver, "json", "json")
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    receiver.scripts["/json/hook"].extend([
        Reply(429, "slow down", {"Retry-After": "7"}), Reply(429, "slow down", {"Retry-After": when}),
        Reply(503, "busy", {"Retry-After": "3600"})])
    sleeps: list[float] = []

    delivery = deliver(webhook.model_copy(update={"max_attempts": 4}), message(), client, sleep=sleeps.append,
                       now=Clock())

    assert (delivery.state, delivery.attempts) == ("delivered", 4)
    assert sleeps[0] == 7 and 15 <= sleeps[1] <= 21 and sleeps[2] == 60


def test_backoff_doubles_with_jitter_and_stops_at_max_attempts(receiver, client, monkeypatch):
    webhook = hook(monkeypatch, receiver, "json", "json", ok=Reply(502, "bad gateway"), max_attempts=5)
    sleeps: list[float] = []

    delivery = deliver(webhook, message(), client, sleep=sleeps.append, now=Clock())

    assert (delivery.state, delivery.attempts, delivery.http_status) == ("failed", 5, 502)
    assert len(receiver.requests) == 5 and len(sleeps) == 4
    for attempt, slept in enumerate(sleeps, start=1):
        ceiling = 0.5 * 2 ** (attempt - 1)
        assert ceiling / 2 <= slept <= ceiling


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_errors_and_timeouts_are_retried(receiver, client, monkeypatch):
    monkeypatch.setenv("TEST_CLOSED_URL", f"http://127.0.0.1:{free_port()}/robot/send?access_token={TOKEN}")
    closed = Webhook(name="closed", format="dingtalk", url_env="TEST_CLOSED_URL", max_attempts=3)
    slow = hook(monkeypatch, receiver, "slow", "wecom", ok=Reply(200, {"errcode": 0, "errmsg": "ok"}, delay=0.5),
                max_attempts=2, timeout_s=0.1)

    refused = deliver(closed, message(), client, sleep=lambda s: None, now=Clock())
    timed_out = deliver(slow, message(), client, sleep=lambda s: None, now=Clock())

    assert (refused.state, refused.attempts, refused.http_status) == ("failed", 3, None)
    assert refused.error.startswith("ConnectError")
    assert (timed_out.state, timed_out.attempts) == ("failed", 2) and "timed out" in timed_out.error


def test_a_missing_url_or_secret_variable_skips_the_webhook_and_names_the_variable(client, monkeypatch):
    monkeypatch.delenv("TEST_NOWHERE_URL", raising=False)
    nowhere = Webhook(name="nowhere", format="slack", url_env="TEST_NOWHERE_URL")
    monkeypatch.setenv("TEST_UNSIGNED_URL", f"http://127.0.0.1:9/hook?access_token={TOKEN}")
    unsigned = Webhook(name="unsigned", format="feishu", url_env="TEST_UNSIGNED_URL", secret_env="TEST_UNSET_SECRET")

    for webhook, variable in ((nowhere, "TEST_NOWHERE_URL"), (unsigned, "TEST_UNSET_SECRET")):
        delivery = deliver(webhook, message(), client, sleep=lambda s: pytest.fail("slept"), now=Clock())
        assert (delivery.state, delivery.attempts, delivery.first_attempt_at) == ("skipped", 0, None)
        assert variable in delivery.error


# --- secrets ------------------------------------------------------------------------------------------------------


def test_the_url_token_and_the_secret_appear_in_no_error_and_no_log_line(receiver, client, monkeypatch, caplog,
                                                                        warehouse):
    caplog.set_level(logging.DEBUG)
    echo = f"no such robot: POST /echo/hook?access_token={TOKEN} signed with {SECRET}"
    webhooks = [
        hook(monkeypatch, receiver, "echo", "dingtalk", secret=SECRET, ok=Reply(400, echo)),
        hook(monkeypatch, receiver, "errbody", "dingtalk", secret=SECRET,
             ok=Reply(200, {"errcode": 400101, "errmsg": f"access_token {TOKEN} does not exist"})),
        hook(monkeypatch, receiver, "flaky", "feishu", secret=SECRET, path=f"/open-apis/bot/v2/hook/{TOKEN}-hook"),
    ]
    receiver.scripts[f"/open-apis/bot/v2/hook/{TOKEN}-hook"].append(Reply(503, f"try later {TOKEN}"))
    monkeypatch.setenv("TEST_REFUSED_URL", f"http://127.0.0.1:{free_port()}/robot/send?access_token={TOKEN}")
    monkeypatch.setenv("TEST_REFUSED_SECRET", SECRET)
    monkeypatch.setenv("TEST_FTP_URL", f"ftp://127.0.0.1/robot/send?access_token={TOKEN}")
    webhooks += [Webhook(name="refused", format="dingtalk", url_env="TEST_REFUSED_URL",
                         secret_env="TEST_REFUSED_SECRET", max_attempts=2),
                 Webhook(name="ftp", format="json", url_env="TEST_FTP_URL")]
    log = ListLog()

    deliveries = notify(webhooks, [message()], warehouse, client, log, "run-1",
                        sleep=lambda s: None, now=Clock())

    assert [d.state for d in deliveries] == ["failed", "failed", "delivered", "failed", "failed"]
    texts = [d.error or "" for d in deliveries] + log.lines + [r.getMessage() for r in caplog.records]
    texts += [caplog.text]
    for text in texts:
        assert TOKEN not in text and SECRET not in text
    assert any("webhook echo" in line and "127.0.0.1" in line for line in log.lines)
    assert any("retrying" in line for line in log.lines)
    httpx_lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert httpx_lines and all("***" in line for line in httpx_lines)  # httpx's own request log, scrubbed
    assert "400101" in deliveries[1].error and "***" in deliveries[1].error


# --- the delivery record ------------------------------------------------------------------------------------------


def test_a_second_notify_over_the_same_alerts_sends_nothing(receiver, client, monkeypatch, warehouse):
    webhooks = [hook(monkeypatch, receiver, "team", "feishu", secret=SECRET), hook(monkeypatch, receiver, "ops", "wecom")]
    alerts = [message(), message(SHARE_ROW)]
    log = ListLog()

    first = notify(webhooks, alerts, warehouse, client, log, "run-1", sleep=lambda s: None, now=Clock())
    # A re-run recomputes the same alerts: other rates and run id, same alert ids.
    again = [message({**ROW, "run_id": "run-2", "rate": 0.31}), message({**SHARE_ROW, "run_id": "run-2"})]
    second = notify(webhooks, again + again, warehouse, client, log, "run-2", sleep=lambda s: None, now=Clock())

    assert [d.state for d in first] == ["delivered"] * 4 and second == []
    assert len(receiver.requests) == 4
    rows = warehouse.rows("SELECT webhook, state, attempts, run_id, subject FROM notification_deliveries ORDER BY ALL")
    assert rows == [("ops", "delivered", 1, "run-1", "refusal"), ("ops", "delivered", 1, "run-1", "阿里云"),
                    ("team", "delivered", 1, "run-1", "refusal"), ("team", "delivered", 1, "run-1", "阿里云")]
    described = [row[0] for row in warehouse.rows("DESCRIBE notification_deliveries")]
    assert described == NOTIFICATION_DELIVERIES.columns


def test_the_next_run_retries_only_what_failed_or_was_skipped(receiver, client, monkeypatch, warehouse):
    # The brand team's webhooks: a webhook failing (a downstream fault) is not news for them.
    good = hook(monkeypatch, receiver, "good", "slack", classes=("brand",))
    flaky = hook(monkeypatch, receiver, "flaky", "dingtalk", secret=SECRET, classes=("brand",))
    receiver.scripts["/flaky/hook"].append(Reply(400, {"errcode": 300001, "errmsg": "robot muted"}))
    monkeypatch.delenv("TEST_LATER_URL", raising=False)
    later = Webhook(name="later", format="json", url_env="TEST_LATER_URL", classes=("brand",))
    webhooks = [good, flaky, later]

    first = notify(webhooks, [message()], warehouse, client, ListLog(), "run-1", sleep=lambda s: None, now=Clock())
    hook(monkeypatch, receiver, "later", "json")  # the variable is set now
    second = notify(webhooks, [message()], warehouse, client, ListLog(), "run-2", sleep=lambda s: None, now=Clock())

    assert [(d.webhook, d.state) for d in first] == [("good", "delivered"), ("flaky", "failed"), ("later", "skipped")]
    assert [(d.webhook, d.state) for d in second] == [("flaky", "delivered"), ("later", "delivered")]
    assert [len(receiver.to(f"/{name}/hook")) for name in ("good", "flaky", "later")] == [1, 2, 1]
    with warehouse.read_only() as conn:
        assert delivered_ids(conn, ["good", "flaky", "later", "other"]) == {
            (message().alert_id, name) for name in ("good", "flaky", "later")}
    rows = warehouse.rows("SELECT webhook, state, http_status, first_attempt_at IS NULL, run_id"
                          " FROM notification_deliveries ORDER BY run_id, webhook")
    assert rows == [("flaky", "failed", 400, False, "run-1"), ("good", "delivered", 200, False, "run-1"),
                    ("later", "skipped", None, True, "run-1"), ("flaky", "delivered", 200, False, "run-2"),
                    ("later", "delivered", 204, False, "run-2")]


def test_a_warehouse_without_the_table_has_delivered_nothing(warehouse):
    with warehouse.read_only() as conn:
        assert delivered_ids(conn, ["team"]) == set()
        assert delivered_ids(conn, [], ["x"]) == set()


def test_notify_records_what_it_sent_even_when_a_later_delivery_raises(receiver, client, monkeypatch, warehouse):
    webhooks = [hook(monkeypatch, receiver, "first", "json"), hook(monkeypatch, receiver, "second", "json")]

    class Broken(ListLog):
        def info(self, text: str) -> None:
            if "webhook second" in text:
                raise RuntimeError("the log went away")
            super().info(text)

    with pytest.raises(RuntimeError):
        notify(webhooks, [message()], warehouse, client, Broken(), "run-1", sleep=lambda s: None, now=Clock())

    # The second webhook got the message too, but its outcome was lost with the exception: only
    # the first is known to be delivered.
    assert warehouse.rows("SELECT webhook, state FROM notification_deliveries") == [("first", "delivered")]
