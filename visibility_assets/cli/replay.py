"""`visibility replay`: the current analyzer against stored results, diff share per platform
with examples, before an analyzer upgrade switches. Writes nothing the metrics read; the
summary goes to analyzer_replays unless --no-record."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from visibility_assets.clean.replay import DEFAULT_EXAMPLES, ReplayError, replay
from visibility_assets.clean.replay_diff import ReplayFindings, Tally
from visibility_assets.clean.replay_record import record_replay
from visibility_assets.cli.arguments import UserError, config_of, iso_date, positive_int
from visibility_assets.cli.lake_reader import read_warehouse
from visibility_assets.cli.sql import table
from visibility_assets.config import VisibilityConfig
from visibility_assets.core.faults import RULE
from visibility_assets.warehouse.lake import lake_settings

FORMATS = ("text", "json")


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "replay", help="the current analyzer against stored results: diff share per platform, with examples")
    parser.add_argument("--sample", type=positive_int, metavar="N",
                        help="replay N stored answers, the same N every time (default: all)")
    parser.add_argument("--since", type=iso_date, metavar="YYYY-MM-DD", help="only answers of this day and after")
    parser.add_argument("--examples", type=positive_int, default=DEFAULT_EXAMPLES, metavar="K",
                        help=f"examples per platform (default {DEFAULT_EXAMPLES})")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--no-record", action="store_true", help="do not append the summary to analyzer_replays")
    parser.set_defaults(handler=run)


def run(args) -> int:
    """Exit 0 whatever the diffs: it is a report, not a check."""
    config = config_of(args)
    with read_warehouse() as conn:
        try:
            report = replay(conn, config.catalog, args.sample, args.since, examples=args.examples)
        except ReplayError as exc:
            raise UserError(str(exc)) from None
    recorded = 0 if args.no_record else record_replay(lake_settings(), report)
    if recorded:
        tell_replay_faults(report, config)
    if args.format == "json":
        print(json.dumps({**report.as_json(), "recorded_rows": recorded}, ensure_ascii=False, default=str))
    else:
        print(render(report, recorded, args.no_record))
    return 0


def tell_replay_faults(report: ReplayFindings, config: VisibilityConfig) -> None:
    """A platform whose answers the analyzer now reads otherwise beyond the limit is a rule
    fault, told to the webhooks routed for those (before the upgrade reaches the metrics)."""
    from visibility_assets.notify.faults import FaultMessage
    from visibility_assets.operate.failed_runs import tell_faults
    from visibility_assets.warehouse.resource import WarehouseResource

    limit, today = config.notifications.replay_diff_limit, datetime.now(UTC).date()
    faults = [FaultMessage(
        date=today, platform=name, kind="replay_diff", fault_class=RULE, subject=f"analyzer {report.analyzer_version}",
        detail=f"{found.tally.changed} of {found.tally.answers} answers ({found.tally.diff_share:.1%} > {limit:.0%})"
               f" read otherwise than analyzer {', '.join(report.stored_analyzer_versions) or '-'} stored them;"
               f" by field: {', '.join(f'{f} {n}' for f, n in found.tally.by_field().items())}",
        fault_id=f"replay_diff:{report.replay_id}:{name}")
        for name, found in sorted(report.platforms.items())
        if found.tally.diff_share is not None and found.tally.diff_share > limit]
    if faults:
        tell_faults(faults, config, WarehouseResource.from_settings(lake_settings()), report.replay_id)


def render(report: ReplayFindings, recorded: int, no_record: bool) -> str:
    stored = ", ".join(report.stored_analyzer_versions) or "-"
    lines = [f"replay {report.replay_id}: analyzer {report.analyzer_version} against results stored by"
             f" analyzer {stored}, config {report.config_version}"
             + (f", since {report.since}" if report.since else "")
             + (f", sample of {report.sample}" if report.sample else ", every stored answer"),
             f"skipped: other config version: {report.skipped_other_config}", ""]
    rows = [_row(name, report.platforms[name].tally) for name in sorted(report.platforms)]
    lines += [table(["platform", "answers", "changed", "diff share", "by field"],
                    rows + [_row("total", report.total)], width=80), ""]
    for name in sorted(report.platforms):
        examples = report.platforms[name].examples
        if examples:
            lines.append(f"examples, {name}:")
            lines += [f"  {e.request_key} {e.date} {e.question_id} {e.field}"
                      + (f" [{e.brand}]" if e.brand else "")
                      + f": {e.stored!r} -> {e.replayed!r}  \"{e.excerpt}\"" for e in examples]
    lines += _against_reviewers(report)
    if no_record:
        lines.append("not recorded (--no-record)")
    else:
        lines.append(f"recorded in analyzer_replays: {recorded} row(s), replay_id {report.replay_id}")
    return "\n".join(lines)


def _against_reviewers(report: ReplayFindings) -> list[str]:
    """Where the analysts reviewed replayed answers: how often each analyzer gives their value."""
    found = report.reviewers
    if found is None or not found.reviewed:
        return ["against the reviewers: no replayed answer was reviewed in the workspace", ""]
    stored = ", ".join(report.stored_analyzer_versions) or "-"
    rows = [(name, n, f"{found.stored_agrees[name] / n:.1%}", f"{found.replayed_agrees[name] / n:.1%}")
            for name, n in found.reviewed.items()]
    lines = ["against the reviewers (the labels analysts reviewed in the workspace):",
             table(["label", "reviewed", f"stored ({stored}) agrees", f"replayed ({report.analyzer_version}) agrees"],
                   rows, width=80)]
    lines += [f"  {d['request_key']} [{d['brand']}] {d['label']}: reviewer {d['reviewer']!r},"
              f" replayed {d['replayed']!r}, stored {d['stored']!r}" for d in found.disagreements]
    return lines + [""]


def _row(name: str, tally: Tally) -> tuple:
    share = "-" if tally.diff_share is None else f"{tally.diff_share:.1%}"
    by_field = ", ".join(f"{field} {n}" for field, n in tally.by_field().items()) or "-"
    return (name, tally.answers, tally.changed, share, by_field)
