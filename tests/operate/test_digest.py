"""The digest of the own brands: composed from the workspace's read layer, it names only the
changes the alerts' test calls significant, and arrives at a real SMTP server on loopback
(text and HTML) and at webhook receivers as a Feishu card and Slack blocks; the Dagster job the
weekly schedule runs sends the same."""

from __future__ import annotations

import shutil
import socket
from email import message_from_bytes, policy

import pytest
from aiosmtpd.controller import Controller

from tests.cli import visibility
from tests.webhook_receiver import Reply
from tests.workspace_lake import LAST_DAY
from visibility_assets.config import load_config
from visibility_assets.definitions import build_definitions
from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.operate.digest import HEADLINE, READER, SENTIMENT, compose_digest
from visibility_assets.serve.app import build_workspace
from visibility_assets.serve.workspace import ViewCall

pytestmark = pytest.mark.slow
OWN = "阿里云"


class Inbox:
    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.messages.append(envelope.content)
        return "250 OK"


@pytest.fixture
def smtp():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield inbox, port
    controller.stop()


@pytest.fixture
def routed(month_workspace, receiver, smtp, tmp_path, monkeypatch):
    """The month workspace's config with digests routed to a Feishu and a Slack hook and a mailbox."""
    _, port = smtp
    directory = tmp_path / "config"
    shutil.copytree(month_workspace.config.directory, directory)
    (directory / "events.yaml").write_text(f"""
notifications:
  workspace_url: https://visibility.example.com
  webhooks:
    - {{name: team-feishu, format: feishu, url_env: DIGEST_FEISHU_URL}}
    - {{name: team-slack, format: slack, url_env: DIGEST_SLACK_URL}}
  digests:
    webhooks: [team-feishu, team-slack]
    email: {{smtp_host: 127.0.0.1, smtp_port: {port}, security: none, sender: visibility@example.com,
             to: [brand-team@example.com, cmo@example.com]}}
""", encoding="utf-8")
    receiver.on("/feishu", Reply(200, {"code": 0, "msg": "success"}))
    receiver.on("/slack", Reply(200, "ok"))
    for name, value in {"VISIBILITY_HOME": str(month_workspace.home), "VISIBILITY_CONFIG_DIR": str(directory),
                        "DIGEST_FEISHU_URL": receiver.base + "/feishu", "DIGEST_SLACK_URL": receiver.base + "/slack",
                        "VISIBILITY_SERVE_SECRET": "digest-test-secret"}.items():
        monkeypatch.setenv(name, value)
    return load_config(directory)


def test_the_weekly_digest_arrives_by_mail_and_as_cards_and_names_only_significant_changes(routed, receiver, smtp):
    inbox, _ = smtp
    done = visibility("digest", "--date", LAST_DAY.isoformat())
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": sent") == 3
    (raw,) = inbox.messages
    mail = message_from_bytes(raw, policy=policy.default)
    assert mail["To"] == "brand-team@example.com, cmo@example.com" and mail["Subject"].startswith("AI visibility weekly")
    text, html = mail.get_body(("plain",)).get_content(), mail.get_body(("html",)).get_content()
    assert OWN in text and "Mention rate" in text and "https://visibility.example.com/overview?" in text
    assert "<h2><a href=\"https://visibility.example.com/overview?" in html and "Mention rate" in html
    (feishu,) = receiver.to("/feishu")
    card = feishu.json["card"]
    assert feishu.json["msg_type"] == "interactive" and card["header"]["title"]["content"] == mail["Subject"]
    assert any(OWN in e["text"]["content"] for e in card["elements"] if e["tag"] == "div")
    (slack,) = receiver.to("/slack")
    assert slack.json["blocks"][0]["type"] == "header" and OWN in slack.json["blocks"][1]["text"]["text"]

    workspace = build_workspace(config=routed)
    digest = compose_digest(workspace, "week", LAST_DAY)
    own = [b.name for b in routed.catalog.brands if b.own]
    assert [b.brand for b in digest.brands] == own
    labels = {m.name: m.label for m in metric_catalog()}
    for brand in digest.brands:  # each figure is the read layer's, and a change is said iff it is significant
        overview = workspace.view_data("overview", ViewCall(
            {"brand": brand.brand, "category": brand.category, "to": LAST_DAY.isoformat()}, READER, None, 7))
        rows = overview["tables"]["figures"].rows
        # the sentiment shares join only while the labels behind them are measured right often enough
        shown_metrics = HEADLINE + (SENTIMENT if overview["sentiment_headline"]["headline"] else ())
        pooled = {labels[r["metric"]]: r for r in rows if r["platform"] == "all" and r["metric"] in shown_metrics}
        assert [f.label for f in brand.figures] == [labels[name] for name in shown_metrics]
        assert bool(brand.notes) != overview["sentiment_headline"]["headline"]
        for figure in brand.figures:
            row = pooled[figure.label]
            shown = f"{row['value']:.1%}" if figure.label != labels["avg_list_rank"] else f"{row['value']:.2f}"
            assert figure.value.startswith(shown), (figure, row)
            assert (figure.change is not None) == bool(row["significant"]), (figure, row)
            assert figure.accuracy and "right" in figure.accuracy  # the accuracy ledger beside each figure
        significant = [r for r in rows if r["significant"]]
        assert len(brand.changes) == min(len(significant), 8)
        assert all("pts from" in item.text or " from " in item.text for item in brand.changes)
    workspace.settle()


def test_print_sends_nothing_and_a_digest_routed_nowhere_is_refused(routed, receiver, smtp, tmp_path, monkeypatch):
    inbox, _ = smtp
    printed = visibility("digest", "--print", "--period", "day")
    assert printed.returncode == 0 and printed.stdout.startswith("## AI visibility daily digest")
    assert not inbox.messages and not receiver.requests
    bare = tmp_path / "bare"
    shutil.copytree(routed.directory, bare)
    (bare / "events.yaml").unlink()
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(bare))
    refused = visibility("digest")
    assert refused.returncode == 2 and "routes digests nowhere" in refused.stderr


def test_the_weekly_schedule_runs_the_digest_job_which_fails_when_a_delivery_fails(routed, receiver, smtp):
    inbox, _ = smtp
    defs = build_definitions(routed)
    schedule = defs.get_schedule_def("weekly_digest")
    assert schedule.cron_schedule == "0 9 * * 1" and schedule.execution_timezone == "Asia/Shanghai"
    job = defs.get_job_def("digest_job")
    run_config = {"ops": {"send_digest_op": {"config": {"period": "week"}}}}
    assert job.execute_in_process(run_config=run_config).success
    assert len(inbox.messages) == 1 and len(receiver.to("/feishu")) == 1
    receiver.on("/slack", Reply(400, "invalid_blocks"))
    failed = job.execute_in_process(run_config=run_config, raise_on_error=False)
    assert not failed.success
    (failure,) = [e for e in failed.all_events if e.is_step_failure]
    assert "webhook team-slack" in failure.step_failure_data.error.message
    assert len(inbox.messages) == 2  # the other routes still got it
