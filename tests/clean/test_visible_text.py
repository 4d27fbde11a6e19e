"""A right-to-left override in a brand name reaches neither the report nor the terminal raw."""

import json

from visibility_assets.cli.main import main
from visibility_assets.core.visible_text import html_text, visible
from visibility_assets.report.charts import interval_chart

RLO = "\u202e"
NAME = f"Acme{RLO}duolC"  # shown raw, it would read "AcmeCloud" reversed into whatever follows


def test_bidi_controls_are_written_as_escapes():
    assert visible(NAME) == "Acme\\u202eduolC"
    assert html_text(f"<b>{NAME}</b>") == "&lt;b&gt;Acme\\u202eduolC&lt;/b&gt;"
    assert visible("阿里云 Alibaba Cloud") == "阿里云 Alibaba Cloud"


def test_report_charts_escape_bidi_controls_in_names():
    svg = interval_chart([{"label": NAME, "points": {"qwen": (0.5, 0.4, 0.6)}}], ["qwen"], NAME)
    assert RLO not in svg and "Acme\\u202eduolC" in svg


def test_cli_output_escapes_bidi_controls_and_stays_valid_json(tmp_path, capsys):
    catalog = tmp_path / "brands.yaml"
    catalog.write_text(f"brands:\n  - name: {NAME}\n    category: cloud\n    aliases: [Acme]\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"id": "a1", "question": "哪家云好？", "answer": "推荐 Acme，稳定可靠。",
                                   "category": "cloud"}, ensure_ascii=False) + "\n", encoding="utf-8")

    assert main(["analyze", "--catalog", str(catalog), "--answers", str(answers)]) == 0

    out = capsys.readouterr().out
    assert RLO not in out
    assert json.loads(out)["brands"][NAME]["mentioned"] is True  # the escape is the same character in JSON
