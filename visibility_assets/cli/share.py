"""`visibility share`: links that open a brand's overview, competitors and questions read-only,
without an account (serve/share_links.py); `create` prints the link's path as its last line."""

from __future__ import annotations

import os
import time

from visibility_assets.cli.arguments import UserError, config_of, positive_int
from visibility_assets.core.paths import data_dir
from visibility_assets.serve.accounts import Accounts
from visibility_assets.serve.filters import FilterError, find_brand
from visibility_assets.serve.share_links import DEFAULT_DAYS, DEFAULT_EXPIRY, ShareError, ShareLinks

SERVE_URL_ENV = "VISIBILITY_SERVE_URL"  # where the workspace is reached: the link is printed as a full URL


def add_parser(commands) -> None:
    share = commands.add_parser("share", help="links to a brand's overview for someone without an account")
    actions = share.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="a new link (its path, or URL with $VISIBILITY_SERVE_URL, last)")
    create.add_argument("--brand", required=True, help="the brand it shows (brands.yaml)")
    create.add_argument("--category", help="the brand's category, where its name is in two")
    create.add_argument("--days", type=positive_int, default=DEFAULT_DAYS,
                        help=f"the period it opens on: the last N days measured (default {DEFAULT_DAYS})")
    create.add_argument("--expires", default=DEFAULT_EXPIRY,
                        help=f"how long it works: hours, days or weeks such as 24h, 7d, 2w (default {DEFAULT_EXPIRY})")
    create.set_defaults(handler=run_create)
    listing = actions.add_parser("list", help="every link, its ID first, with its brand and state")
    listing.set_defaults(handler=run_list)
    revoke = actions.add_parser("revoke", help="end a link now (it answers 410 from then on)")
    revoke.add_argument("id")
    revoke.set_defaults(handler=run_revoke)


def _links() -> ShareLinks:
    return ShareLinks(Accounts.under(data_dir()))


def run_create(args) -> int:
    config = config_of(args)
    try:
        brand = find_brand(args.brand, args.category, config.catalog)
        link, token = _links().create(brand.name, brand.category, args.days, args.expires, actor="cli")
    except (FilterError, ShareError) as exc:
        raise UserError(str(exc)) from None
    print(f"share link {link.link_id}: {brand.name} ({brand.category}), the last {link.days} days,"
          f" until {_when(link.expires_at)}; the token is shown once:")
    base = os.environ.get(SERVE_URL_ENV, "").rstrip("/")
    print(f"{base}/s/{token}")
    return 0


def run_list(args) -> int:
    links = _links().links()
    if not links:
        print("no share links: make one with `visibility share create --brand B`")
    for link in links:
        print(f"{link.link_id}\t{link.brand}\t{link.category}\t{link.days} days\t{link.state()}"
              f"\tuntil {_when(link.expires_at)}\tby {link.created_by or '-'}")
    return 0


def run_revoke(args) -> int:
    try:
        link = _links().revoke(args.id, actor="cli")
    except ShareError as exc:
        raise UserError(str(exc)) from None
    print(f"share link {link.link_id} ({link.brand}) revoked: it answers 410 from now on")
    return 0


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))
