"""`visibility report`: the HTML report of any period, with the key figures of the brands asked
for; each bad request is one line, exit 2, and writes nothing."""

import re

import pytest

from tests.workspace_lake import DAY, FIRST_DAY
from visibility_assets.cli.main import main
from visibility_assets.core.paths import HOME_ENV

pytestmark = pytest.mark.loopback


@pytest.fixture
def on_the_workspace(workspace, monkeypatch):
    monkeypatch.setenv(HOME_ENV, str(workspace.home))
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(workspace.config.directory))
    return workspace


def test_a_period_report_shows_the_key_figures_of_the_brands_asked_for(on_the_workspace, tmp_path, capsys):
    out = tmp_path / "q4" / "report.html"
    status = main(["report", "--from", FIRST_DAY, "--to", DAY, "--brand", "阿里云", "--platform", "kimi",
                   "--out", str(out)])
    assert status == 0 and capsys.readouterr().out.strip() == str(out)
    html = out.read_text(encoding="utf-8")
    assert f"AI visibility report — {FIRST_DAY} to {DAY}" in html
    assert re.search(r'<table class="figures" data-brand="阿里云"', html)
    platforms = set(re.findall(r'data-platform="([^"]+)"', html))
    assert platforms == {"all", "kimi"}  # only the platform asked for, and its pool
    assert re.search(r'data-metric="mention_rate" data-platform="all" data-value="0\.\d+"', html)


def test_by_default_the_report_is_of_the_latest_day_and_the_own_brands(on_the_workspace, capsys):
    status = main(["report"])
    path = capsys.readouterr().out.strip()
    assert status == 0 and path.endswith(f"reports/visibility_report_{DAY}.html")
    html = open(path, encoding="utf-8").read()
    own = [b.name for b in on_the_workspace.config.brands if b.own]
    assert own and all(f'data-brand="{name}"' in html for name in own)
    # The accuracy ledger: the shipped figures, labelled as such, until the reviews are enough.
    assert "How right the labels are" in html and "shipped labelled set" in html


@pytest.mark.parametrize("arguments, message", [
    (["--from", DAY, "--to", FIRST_DAY], f"--from {DAY} is after --to {FIRST_DAY}"),
    (["--brand", "Nobody Inc"], "--brand 'Nobody Inc' is not in brands.yaml"),
    (["--platform", "altavista"], "altavista"),
    (["--from", "2025-01-01", "--to", DAY], "at most 366 days"),
])
def test_a_bad_request_is_one_line_and_writes_nothing(on_the_workspace, tmp_path, capsys, arguments, message):
    out = tmp_path / "report.html"
    status = main(["report", *arguments, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.iterdir())
