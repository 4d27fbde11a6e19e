"""Every broken config folder of the corpus stops the command at load: exit 2, no traceback, the
file and line of the mistake, and nothing written to the data directory."""

import pytest

from visibility_assets.cli.main import main

from tests.bad_configs import CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_config_stops_the_demo_before_anything_is_written(case, tmp_path, monkeypatch, capsys):
    directory = case.write(tmp_path / "config")
    home = tmp_path / "home"
    monkeypatch.setenv("VISIBILITY_HOME", str(home))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.delenv("VISIBILITY_WAREHOUSE", raising=False)

    status = main(["--config-dir", str(directory), "demo"])

    stderr = capsys.readouterr().err
    assert status == 2, stderr
    assert "Traceback" not in stderr
    assert f"{case.file} line {case.line()}:" in stderr, stderr
    assert case.says in stderr, stderr
    assert not home.exists()


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)
