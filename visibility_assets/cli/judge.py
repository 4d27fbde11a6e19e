"""`visibility judge calibrate`: the configured judge (judge.yaml) against sentiment labels people
gave, the shipped sets and this deployment's random-sample reviews; its accuracy, macro-F1 and
Cohen's κ per language, recorded in judge_calibrations. The expected cost is printed first."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from visibility_assets.cli.arguments import UserError, config_of, positive_int
from visibility_assets.core.paths import data_dir
from visibility_assets.judge.calibration import CalibrationError, shipped_sentiment_sets

FORMATS = ("text", "json")


def add_parser(commands) -> None:
    judge = commands.add_parser("judge", help="the judge model of judge.yaml")
    actions = judge.add_subparsers(dest="action", required=True, metavar="ACTION")
    calibrate = actions.add_parser(
        "calibrate", help="ask the judge about labelled answers; print its accuracy, macro-F1 and kappa per language")
    calibrate.add_argument("--set", action="append", type=Path, metavar="FILE", dest="sets",
                           help="a labelled set (JSONL, tests/eval/SENTIMENT.md's format); repeatable"
                           " (default: the shipped sets)")
    calibrate.add_argument("--no-reviews", action="store_true",
                           help="leave out this deployment's random-sample reviews")
    calibrate.add_argument("--limit", type=positive_int, metavar="N",
                           help="at most N labelled answers, the same N every time (default: all)")
    calibrate.add_argument("--dry-run", action="store_true", help="print what it would send and cost, send nothing")
    calibrate.add_argument("--format", choices=FORMATS, default="text")
    calibrate.set_defaults(handler=run_calibrate)


def run_calibrate(args) -> int:
    from visibility_assets.judge.calibration_run import plan_calibration, run_calibration
    from visibility_assets.judge.plan import judge_platform
    from visibility_assets.review.store import ReviewStore
    from visibility_assets.warehouse.lake import lake_settings

    config = config_of(args)
    if config.judge is None:
        raise UserError("no judge.yaml in the config: there is no judge to calibrate")
    sets = args.sets or shipped_sentiment_sets()
    if not sets:
        raise UserError("no labelled set: name one with --set FILE")
    day = datetime.now(UTC).date().isoformat()
    store = None if args.no_reviews else ReviewStore.under(data_dir())
    lake = lake_settings()
    try:
        plan = plan_calibration(config, lake, sets, store, day, args.limit)
    except CalibrationError as exc:
        raise UserError(str(exc)) from None
    if not plan.items:
        raise UserError("the labelled sets hold no pair to ask about")
    judge_on = judge_platform(config)
    out = sys.stderr if args.format == "json" else sys.stdout
    print(describe_plan(plan, judge_on, config.judge.prompt_version), file=out, flush=True)
    if args.dry_run:
        return 0
    run = run_calibration(config, lake, plan, day, log=lambda line: print(line, file=sys.stderr, flush=True))
    if args.format == "json":
        print(json.dumps(as_json(run, plan), ensure_ascii=False))
    else:
        print(render(run))
    return 0


def describe_plan(plan, judge_on, prompt_version: str) -> str:
    sets = ", ".join(f"{name} {count}" for name, count in plan.by_set.items())
    estimate = plan.estimate
    lines = [f"judge {judge_on.name} {judge_on.model} (prompt {prompt_version}): {len(plan.items)} labelled answers,"
             f" {len(plan.pairs)} brand pairs ({sets})"]
    if plan.stored:
        lines.append(f"{plan.stored} answers were judged before: read back, not paid again")
    cost = (f"{estimate.cost:.4f} {estimate.currency}" if estimate.cost is not None
            else "unknown (prices.yaml has no price for the judge's model today)")
    lines.append(f"expected cost: {cost} for {estimate.requests} requests (an estimate: about"
                 f" {estimate.prompt_tokens:,} prompt and {estimate.completion_tokens:,} reply tokens;"
                 " a reply that does not validate is asked once more)")
    return "\n".join(lines)


def render(run) -> str:
    result = run.result
    rows = [("all", result.overall)] + list(result.by_language.items()) + [
        (f"set {name}", scores) for name, scores in result.by_set.items()]
    lines = [f"{'':<16}{'pairs':>6}  {'accuracy (95%)':<22}{'macro-F1':>9}{'kappa':>8}"]
    for name, s in rows:
        kappa = "-" if s.kappa is None else f"{s.kappa:.2f}"
        lines.append(f"{name:<16}{s.n:>6}  {s.accuracy:.3f} ({s.low:.3f}-{s.high:.3f})  {s.macro_f1:>9.3f}{kappa:>8}")
    overall = result.overall
    lines.append(f"error rate: {1 - overall.accuracy:.3f} ({1 - overall.high:.3f}-{1 - overall.low:.3f})")
    if result.unjudged:
        lines.append(f"{result.unjudged} pairs have no valid verdict (an invalid reply or the judge's budget):"
                     " not scored")
    cost = f"{run.cost:.6f} {run.currency}" if run.cost is not None else "none recorded"
    lines.append(f"sent {run.outcome.sent} requests; cost as the collector recorded it: {cost}")
    lines.append(f"recorded as calibration {run.calibration_id} in judge_calibrations")
    return "\n".join(lines)


def as_json(run, plan) -> dict:
    result = run.result
    return {
        "calibration_id": run.calibration_id, "pairs": len(plan.pairs), "answers": len(plan.items),
        "stored_before": plan.stored, "unjudged": result.unjudged, "requests_sent": run.outcome.sent,
        "expected_cost": plan.estimate.cost, "cost": run.cost, "currency": run.currency,
        "overall": result.overall.as_json(),
        "error_rate": round(1 - result.overall.accuracy, 4),
        "by_language": {k: v.as_json() for k, v in result.by_language.items()},
        "by_set": {k: v.as_json() for k, v in result.by_set.items()},
    }
