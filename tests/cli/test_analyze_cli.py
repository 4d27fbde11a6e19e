"""`visibility analyze`: JSON Lines in and out, same order; bad input names the line, writes nothing."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import visibility

EVAL = Path(__file__).parents[1] / "eval"


def _analyze(*args):
    return visibility("analyze", *args)


@pytest.mark.system
def test_the_command_in_its_own_process_writes_json_lines_and_exits_2_on_bad_input(tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "x1", "question": "有哪些云服务推荐？", "answer": "推荐阿里云。", "category": "cloud"}\n'
                       "{not json}\n", encoding="utf-8")
    good = tmp_path / "good.jsonl"
    good.write_text(answers.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "visibility_assets.cli", "analyze", "--catalog", str(EVAL / "brands.yaml")]
    ok = subprocess.run([*command, "--answers", str(good)], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and json.loads(ok.stdout)["brands"]["阿里云"]["mentioned"] is True
    bad = subprocess.run([*command, "--answers", str(answers)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "a.jsonl line 2: not valid JSON" in bad.stderr and "Traceback" not in bad.stderr


def test_output_has_one_line_per_answer_in_order(tmp_path):
    out = tmp_path / "out" / "analysis.jsonl"
    result = _analyze("--catalog", str(EVAL / "brands.yaml"), "--answers", str(EVAL / "answers.jsonl"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    ids = [json.loads(line)["id"] for line in (EVAL / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == ids
    assert set(lines[0]) == {"id", "valid", "invalid_reason", "brands", "citations", "has_citation",
                            "untracked"}


def test_stdout_when_no_out_file(tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": "x1", "question": "有哪些云服务推荐？", "answer": "推荐阿里云。", "category": "cloud"},
                                  ensure_ascii=False) + "\n", encoding="utf-8")
    result = _analyze("--catalog", str(EVAL / "brands.yaml"), "--answers", str(answers))
    assert result.returncode == 0
    assert json.loads(result.stdout)["brands"]["阿里云"]["mentioned"] is True


def test_bad_lines_are_named_and_nothing_is_written(tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"id": "ok", "answer": "x", "category": "cloud"}\n{not json}\n'
                       '{"id": "b", "answer": "x", "category": "toys"}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = _analyze("--catalog", str(EVAL / "brands.yaml"), "--answers", str(answers), "--out", str(out))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "a.jsonl line 2: not valid JSON" in result.stderr
    assert "a.jsonl line 3: unknown category 'toys'" in result.stderr
    assert not out.exists()
