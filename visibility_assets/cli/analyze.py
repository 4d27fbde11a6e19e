"""`visibility analyze`: JSON Lines of answers in, JSON Lines of analyses out, no Dagster."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.cli.arguments import UserError
from visibility_assets.config import load_catalog
from visibility_assets.core.whole_file import write_whole

REQUIRED = ("id", "answer", "category")


class AnswersFileError(Exception):
    pass


def add_parser(commands) -> None:
    analyze = commands.add_parser("analyze", help="validity and brand mentions for answers in JSON Lines (no Dagster)")
    analyze.add_argument("--catalog", required=True, help="a brands.yaml")
    analyze.add_argument("--answers", required=True, help="JSON Lines: id, question, answer, category")
    analyze.add_argument("--out", help="JSON Lines output (default: stdout)")
    analyze.set_defaults(handler=run)


def run(args) -> int:
    try:
        return run_analyze(args.catalog, args.answers, args.out)
    except AnswersFileError as exc:
        raise UserError(str(exc)) from None


def read_answers(path: Path, categories: set[str]) -> list[dict]:
    """Every line parsed and checked before anything is analysed or written."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise AnswersFileError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AnswersFileError(f"{path}: cannot read: {exc}") from None
    answers, problems = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name} line {number}: not valid JSON: {exc.msg}")
            continue
        if not isinstance(record, dict):
            problems.append(f"{path.name} line {number}: expected a JSON object")
            continue
        missing = [k for k in REQUIRED if k not in record]
        if missing:
            problems.append(f"{path.name} line {number}: missing {', '.join(missing)}")
        elif record["category"] not in categories:
            problems.append(f"{path.name} line {number}: unknown category {record['category']!r}"
                            f" (catalog: {', '.join(sorted(categories))})")
        elif not isinstance(record["answer"], str) and record["answer"] is not None:
            problems.append(f"{path.name} line {number}: 'answer' must be a string")
        else:
            answers.append(record)
    if problems:
        raise AnswersFileError("\n".join(problems))
    return answers


def run_analyze(catalog_path: str, answers_path: str, out_path: str | None) -> int:
    catalog = load_catalog(catalog_path)
    answers = read_answers(Path(answers_path), set(catalog.categories))
    analyzer = Analyzer(catalog)
    lines = [
        json.dumps(analyzer.analyze(a["answer"] or "", a.get("question") or "", a["category"]).as_json(a["id"]),
                   ensure_ascii=False)
        for a in answers
    ]
    output = "\n".join(lines) + ("\n" if lines else "")
    if out_path is None:
        sys.stdout.write(output)
        return 0
    write_whole(Path(out_path), output)  # a failure never leaves half a file
    return 0
