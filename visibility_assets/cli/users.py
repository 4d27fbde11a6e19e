"""`visibility users`: the accounts of the web workspace (`visibility serve`)."""

from __future__ import annotations

import sys
from contextlib import contextmanager

from visibility_assets.cli.arguments import UserError
from visibility_assets.core.paths import data_dir
from visibility_assets.serve.accounts import ROLES, AccountError, Accounts, generated_password


def add_parser(commands) -> None:
    users = commands.add_parser("users", help="accounts of the web workspace (visibility serve)")
    actions = users.add_subparsers(dest="action", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="add a user; the password is read from standard input, or generated")
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, required=True,
                     help="viewer: metrics and charts; analyst: also the answers; admin: also users and ask")
    add.set_defaults(handler=run_add)
    listing = actions.add_parser("list", help="the users, their roles and how many API tokens each holds")
    listing.set_defaults(handler=run_list)
    remove = actions.add_parser("remove", help="remove a user and its tokens")
    remove.add_argument("name")
    remove.set_defaults(handler=run_remove)
    token = actions.add_parser("token", help="a new API token for scripts (printed once, as the last line)")
    token.add_argument("name")
    token.set_defaults(handler=run_token)


def run_add(args) -> int:
    password, generated = _password()
    with _account_errors():
        user = Accounts.under(data_dir()).add(args.name, args.role, password, actor="cli")
    print(f"user {user.name} added as {user.role}")
    if generated:
        print("password (shown once): " + password)
    return 0


def _password() -> tuple[str, bool]:
    """The password from standard input (its first line), or a generated one when the input is a
    terminal or empty."""
    if sys.stdin is None or sys.stdin.isatty():
        return generated_password(), True
    line = sys.stdin.readline().rstrip("\r\n")
    return (line, False) if line else (generated_password(), True)


def run_list(args) -> int:
    users = Accounts.under(data_dir()).users()
    if not users:
        print("no users: add one with `visibility users add NAME --role viewer|analyst|admin`")
    for user, tokens in users:
        print(f"{user.name}\t{user.role}\t{tokens} token{'s' if tokens != 1 else ''}")
    return 0


def run_remove(args) -> int:
    with _account_errors():
        Accounts.under(data_dir()).remove(args.name, actor="cli")
    print(f"user {args.name} removed")
    return 0


def run_token(args) -> int:
    with _account_errors():
        token = Accounts.under(data_dir()).new_token(args.name, actor="cli")
    print(f"API token for {args.name} (shown once; send it as `Authorization: Bearer TOKEN`):")
    print(token)
    return 0


@contextmanager
def _account_errors():
    try:
        yield
    except AccountError as exc:
        raise UserError(str(exc)) from None
