"""`visibility digest`: the digest of the own brands, printed or sent where events.yaml routes it."""

from __future__ import annotations

import sys

from visibility_assets.cli.arguments import UserError, config_of, iso_date
from visibility_assets.notify.digest import PERIOD_DAYS


def add_parser(commands) -> None:
    digest = commands.add_parser("digest", help="what changed for the own brands, printed or sent (events.yaml)")
    digest.add_argument("--period", choices=tuple(PERIOD_DAYS), default="week", help="a week (default) or a day")
    digest.add_argument("--date", type=iso_date, help="the period's last day (default: the latest day measured)")
    digest.add_argument("--print", action="store_true", dest="print_only",
                        help="write it to stdout as markdown and send nothing")
    digest.set_defaults(handler=run)


def run(args) -> int:
    # The workspace (its views, pandas) is imported by the command that uses it, not by every
    # command's start: the demo's worker server imports this module too.
    from visibility_assets.cli.serve import open_workspace
    from visibility_assets.operate.digest import compose_digest, send_digest
    from visibility_assets.serve.workspace import ViewError

    config = config_of(args)
    if not any(b.own for b in config.catalog.brands):
        raise UserError("brands.yaml marks no brand `own: true`: the digest is of the own brands")
    routes = config.notifications.digests
    if not args.print_only and not routes.webhooks and routes.email is None:
        raise UserError("events.yaml routes digests nowhere (notifications.digests: webhooks, email):"
                        " add a route, or use --print")
    workspace = open_workspace(config)
    try:
        digest = compose_digest(workspace, args.period, args.date)
    except ViewError as exc:
        raise UserError(str(exc)) from None
    finally:
        workspace.settle()
    if args.print_only:
        sys.stdout.write(digest.markdown())
        return 0
    sent = send_digest(config, digest)
    for result in sent:
        print(f"{result.where}: {'sent' if result.delivered else 'FAILED'} ({result.detail})")
    return 0 if all(result.delivered for result in sent) else 1
