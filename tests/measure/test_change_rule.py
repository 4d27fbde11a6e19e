"""The change tests' thresholds live in macros.sql alone: the alerts model, the overview's SQL,
the pages' and the report's notes and the documentation all take or check them there."""

import re
from pathlib import Path

from visibility_assets.measure.change_rule import change_rule

ROOT = Path(__file__).resolve().parents[2]
# "p < 0.05", "p &lt; 0.01", "q <= 0.10", "q ≤ 0.10", "q &le; 0.10", "p_value < 0.05": a threshold written out
THRESHOLD = re.compile(r"\b(?:[pq]|p_value|q_value)\s*(?:<|&lt;|<=|≤|&le;)\s*0\.\d+")


def test_the_rule_is_read_from_the_macros_the_sql_applies():
    rule = change_rule()
    assert (rule.baseline_days, rule.kept_p, rule.clear_p, rule.clear_q) == (7, 0.05, 0.01, 0.10)


def test_no_file_of_the_product_but_macros_sql_writes_the_alert_thresholds():
    rule = change_rule()
    numbers = {f"{value:g}" for value in (rule.kept_p, rule.clear_p)} | {f"{rule.clear_q:.2f}"}
    found = []
    for path in [*ROOT.joinpath("visibility_assets").rglob("*"), *ROOT.joinpath("dbt_like_sql").rglob("*")]:
        if path.suffix not in {".py", ".sql", ".yml", ".yaml", ".html"} or path.name == "macros.sql" or "simulator" in path.parts:
            continue
        for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{line_number}: {match}" for match in THRESHOLD.findall(line)
                      if match.split()[-1].removeprefix("&lt;").removeprefix("&le;") in numbers]
    assert found == []


def test_the_documentation_states_the_thresholds_the_sql_applies():
    rule = change_rule()
    said = " ".join(ROOT.joinpath("docs", name).read_text(encoding="utf-8") for name in ("metrics.md", "workspace.md"))
    assert f"p < {rule.clear_p:g} and q ≤ {rule.clear_q:.2f}" in said
    assert f"p < {rule.kept_p:g}" in said
    stated = {float(value) for value in re.findall(r"\bp < (0\.\d+)", said)}
    assert stated <= {rule.kept_p, rule.clear_p, 0.001}, stated  # 0.001: fct_model_changes' canary, its own
