"""`visibility plan`: what the next nights will cost, per platform, before anything is sent."""

from __future__ import annotations

import json

from visibility_assets.cli.arguments import config_of, iso_date, positive_int
from visibility_assets.cli.lake_reader import read_warehouse
from visibility_assets.core.days import today
from visibility_assets.report.cost_plan import HISTORY_DAYS, CostPlan, plan_costs, read_history
from visibility_assets.warehouse.lake import lake_settings
from visibility_assets.warehouse.resource import WarehouseResource


def add_parser(commands) -> None:
    plan = commands.add_parser("plan", help="what a night will cost per platform, and whether max_cost_per_day holds")
    plan.add_argument("--days", type=positive_int, default=30, help="the nights costed together (default 30)")
    plan.add_argument("--date", type=iso_date,
                      help="the night's partition, YYYY-MM-DD (default: today, Asia/Shanghai: tonight's run)")
    plan.add_argument("--format", choices=("table", "json"), default="table")
    plan.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args)
    plan = cost_plan(config, args.date or today(), args.days)
    print(json.dumps(plan.as_json(), ensure_ascii=False) if args.format == "json" else render(plan))
    return 0


def cost_plan(config, day, days: int) -> CostPlan:
    return plan_costs(config, history_of(config, day), day, days)


def history_of(config, day) -> dict:
    """The answers' means per platform before `day`, from the warehouse where there is one."""
    if not WarehouseResource.from_settings(lake_settings()).exists():
        return {}
    with read_warehouse() as conn:
        return read_history(conn, config, day)


def expected_cost_line(config, platform: str, answers: int, day) -> str:
    """What `answers` more answers of `platform` should cost, said before they are asked."""
    row = next(r for r in cost_plan(config, day, 1).collection if r.name == platform)
    if row.cost_per_answer is None:
        return f"expected cost: unknown (prices.yaml has no price for {row.model} on {day})"
    basis = "the last days' answers" if row.usage.basis == "history" else "an estimate from the questions' length"
    return (f"expected cost: {row.cost_per_answer * answers:,.4f} {row.currency} for {answers} answer(s)"
            f" ({basis})")


def render(plan: CostPlan) -> str:
    lines = [f"the night of {plan.day} and {plan.days} nights from it; tokens and searches per answer from the"
             f" last {HISTORY_DAYS} days' answers (history), else from the questions' length (estimate)",
             f"{'platform':<18}{'answers':>8}{'requests':>9}{'prompt tok':>11}{'reply tok':>10}{'searches':>9}"
             f"{'per night':>12}{f'per {plan.days} nights':>16}  {'basis':<9}{'max/day':>9}  holds"]
    for row in plan.rows:
        data = row.as_json(plan.days)
        money = (lambda v: "no price" if v is None else f"{v:,.2f} {row.currency}")
        holds = {None: "-", True: "yes", False: "NO"}[data["cap_holds"]]
        cap = "-" if row.cap is None else f"{row.cap:g}"
        lines.append(f"{row.name:<18}{data['answers_per_night']:>8g}{data['requests_per_night']:>9g}"
                     f"{data['prompt_tokens_per_night']:>11,}{data['completion_tokens_per_night']:>10,}"
                     f"{data['searches_per_night']:>9g}{money(data['cost_per_night']):>12}"
                     f"{money(data['cost_per_days']):>16}  {data['cost_basis']:<9}{cap:>9}  {holds}")
    total = plan.as_json()
    if total["total_per_night"] is not None:
        lines.append(f"total: {total['total_per_night']:,.2f} {total['currency']} a night,"
                     f" {total['total_per_days']:,.2f} over {plan.days} nights")
    extra = [f"{row.name} {row.extra_requests_max}" + (f" (at most {row.extra_cost_max:,.2f} {row.currency})"
                                                       if row.extra_cost_max is not None else "")
             for row in plan.collection if row.extra_requests_max]
    if extra:
        lines.append("beyond the night, extra sampling may send per day at most: " + "; ".join(extra))
    return "\n".join(lines)
