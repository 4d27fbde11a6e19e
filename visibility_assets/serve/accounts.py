"""The workspace's accounts: users with a role, their API tokens, login attempts, the audit
trail and the share links (serve/share_links.py), in one SQLite file under the data directory (`workspace/accounts.sqlite`).

Passwords and tokens are stored only as Argon2id hashes (argon2-cffi: salted, slow on
purpose). The warehouse stays read-only for the workspace; this file is the only thing it
writes, and every worker process of `visibility serve` shares it (SQLite in WAL mode).
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from visibility_assets.core.sqlite_file import SqliteFile

ROLES = ("viewer", "analyst", "admin")  # each sees what the one before it sees, and more
USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
TOKEN_PREFIX = "vis"
MIN_PASSWORD_CHARS = 8
# A failed login counts for this long; past the limits, the account or the address is locked
# until its oldest failure in the window ages out.
LOCKOUT_WINDOW_S = 15 * 60
MAX_FAILURES_PER_ACCOUNT = 5
MAX_FAILURES_PER_ADDRESS = 20

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY, role TEXT NOT NULL, password_hash TEXT NOT NULL, created_at REAL NOT NULL,
    session_epoch TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS tokens (
    token_id TEXT PRIMARY KEY, user_name TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
    token_hash TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS login_attempts (
    at REAL NOT NULL, user_name TEXT NOT NULL, address TEXT NOT NULL, succeeded INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS login_attempts_by_user ON login_attempts (user_name, at);
CREATE INDEX IF NOT EXISTS login_attempts_by_address ON login_attempts (address, at);
CREATE TABLE IF NOT EXISTS audit (
    at REAL NOT NULL, actor TEXT, action TEXT NOT NULL, subject TEXT, address TEXT, detail TEXT);
CREATE TABLE IF NOT EXISTS share_links (
    link_id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, brand TEXT NOT NULL, category TEXT NOT NULL,
    days INTEGER NOT NULL, created_by TEXT, created_at REAL NOT NULL, expires_at REAL NOT NULL, revoked_at REAL);
"""


def _upgrade(conn: sqlite3.Connection) -> None:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(users)")}
    if "session_epoch" not in columns:  # an accounts file of the first workspace version
        conn.execute("ALTER TABLE users ADD COLUMN session_epoch TEXT NOT NULL DEFAULT ''")


class AccountError(ValueError):
    """A request about accounts that cannot be done; the message says why."""


@dataclass(frozen=True)
class User:
    name: str
    role: str
    epoch: str = ""  # changes when the user logs out or is added again: its older sessions end

    def may(self, role: str) -> bool:
        """Whether this user holds `role` or one above it."""
        return ROLES.index(self.role) >= ROLES.index(role)


@dataclass(frozen=True)
class AuditEntry:
    at: float
    actor: str | None
    action: str
    subject: str | None
    address: str | None
    detail: str | None


class Accounts:
    """The accounts file; each call opens its own short SQLite connection."""

    def __init__(self, path: Path, hasher: PasswordHasher | None = None):
        self.path = path
        self.hasher = hasher or PasswordHasher()
        self._file = SqliteFile(path, SCHEMA, _upgrade)

    @classmethod
    def under(cls, home: Path) -> Accounts:
        return cls(home / "workspace" / "accounts.sqlite")

    def connect(self) -> AbstractContextManager[sqlite3.Connection]:
        """A short connection to the accounts file; a module that keeps a table of it (share links)
        uses it too, and `audit_in` records in the same connection."""
        return self._file.connect()

    # --- users ---------------------------------------------------------------------------

    def add(self, name: str, role: str, password: str, actor: str | None = None) -> User:
        if not USER_NAME.match(name):
            raise AccountError(f"user name {name!r}: use letters, digits and . _ @ - (at most 64, starting"
                               " with a letter or digit)")
        if role not in ROLES:
            raise AccountError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")
        if len(password) < MIN_PASSWORD_CHARS:
            raise AccountError(f"the password needs at least {MIN_PASSWORD_CHARS} characters")
        digest = self.hasher.hash(password)
        with self.connect() as conn:
            try:
                conn.execute("INSERT INTO users VALUES (?, ?, ?, ?, ?)",
                             (name, role, digest, time.time(), secrets.token_hex(8)))
            except sqlite3.IntegrityError:
                raise AccountError(f"user {name!r} exists already (remove it first)") from None
            self.audit_in(conn, actor, "user_added", name, None, f"role {role}")
        return User(name, role)

    def remove(self, name: str, actor: str | None = None) -> None:
        with self.connect() as conn:
            if conn.execute("DELETE FROM users WHERE name = ?", (name,)).rowcount == 0:
                raise AccountError(f"no user {name!r}")
            self.audit_in(conn, actor, "user_removed", name, None, None)

    def users(self) -> list[tuple[User, int]]:
        """Every user, with how many API tokens it holds."""
        with self.connect() as conn:
            rows = conn.execute("SELECT name, role, (SELECT count(*) FROM tokens WHERE user_name = name)"
                                " FROM users ORDER BY name").fetchall()
        return [(User(name, role), tokens) for name, role, tokens in rows]

    def user(self, name: str) -> User | None:
        with self.connect() as conn:
            row = conn.execute("SELECT name, role, session_epoch FROM users WHERE name = ?", (name,)).fetchone()
        return User(*row) if row else None

    def end_sessions(self, name: str, address: str | None = None) -> None:
        """Logging out: every session of the user ends, on any browser (its epoch changes)."""
        with self.connect() as conn:
            conn.execute("UPDATE users SET session_epoch = ? WHERE name = ?", (secrets.token_hex(8), name))
            self.audit_in(conn, name, "logout", name, address, None)

    # --- logins --------------------------------------------------------------------------

    def locked(self, name: str, address: str, now: float | None = None) -> bool:
        """Whether too many logins failed lately for this account or from this address."""
        with self.connect() as conn:
            return self._locked(conn, _shown(name), address, now)

    @staticmethod
    def _locked(conn: sqlite3.Connection, name: str, address: str, now: float | None = None) -> bool:
        since = (now or time.time()) - LOCKOUT_WINDOW_S
        by_user, by_address = conn.execute(
            "SELECT count(*) FILTER (WHERE user_name = ?), count(*) FILTER (WHERE address = ?)"
            " FROM login_attempts WHERE at >= ? AND NOT succeeded", (name, address, since)).fetchone()
        return by_user >= MAX_FAILURES_PER_ACCOUNT or by_address >= MAX_FAILURES_PER_ADDRESS

    def login(self, name: str, password: str, address: str) -> User | None:
        """The user when the password is right and neither the account nor the address is
        locked; every attempt is counted and audited.

        The attempt is counted as failed, in the transaction that checks the limits, before the
        password is verified: logins racing each other cannot all pass the check."""
        shown = _shown(name)
        with self.connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            if self._locked(conn, shown, address):
                self.audit_in(conn, shown, "login_locked", shown, address, None)
                conn.execute("COMMIT")
                return None
            attempt = conn.execute("INSERT INTO login_attempts VALUES (?, ?, ?, 0)", (time.time(), shown, address)).lastrowid
            row = conn.execute("SELECT role, password_hash, session_epoch FROM users WHERE name = ?", (name,)).fetchone()
            conn.execute("COMMIT")
        if row is not None:
            user = User(name, row[0], row[2]) if self._verify(row[1], password) else None
        else:
            self._verify(DUMMY_HASH.get(self.hasher), password)  # the same time whether the user exists or not
            user = None
        with self.connect() as conn:
            if user is not None:
                conn.execute("UPDATE login_attempts SET succeeded = 1 WHERE rowid = ?", (attempt,))
            self.audit_in(conn, shown, "login" if user else "login_failed", shown, address, None)
        return user

    # --- API tokens ----------------------------------------------------------------------

    def new_token(self, name: str, actor: str | None = None) -> str:
        """A new API token for the user, returned once; only its hash is kept."""
        token_id, secret = secrets.token_hex(8), secrets.token_urlsafe(32)
        with self.connect() as conn:
            if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone() is None:
                raise AccountError(f"no user {name!r}")
            conn.execute("INSERT INTO tokens VALUES (?, ?, ?, ?)",
                         (token_id, name, self.hasher.hash(secret), time.time()))
            self.audit_in(conn, actor, "token_issued", name, None, f"token {token_id}")
        return f"{TOKEN_PREFIX}_{token_id}_{secret}"

    def token_user(self, token: str) -> User | None:
        """The user a token belongs to, or None (unknown, revoked, or its user removed)."""
        token_id, secret = _token_parts(token)
        if token_id is None:
            return None
        with self.connect() as conn:
            row = conn.execute("SELECT t.token_hash FROM tokens t WHERE t.token_id = ?", (token_id,)).fetchone()
        if row is None or not self._verify(row[0], secret):
            return None
        return self.token_owner(token_id)

    def token_owner(self, token_id: str) -> User | None:
        """The user of a token already verified: found afresh, so a removed token or user, or a
        changed role, takes effect at once."""
        with self.connect() as conn:
            row = conn.execute("SELECT u.name, u.role, u.session_epoch FROM tokens t JOIN users u ON u.name = t.user_name"
                               " WHERE t.token_id = ?", (token_id,)).fetchone()
        return User(*row) if row else None

    # --- audit ---------------------------------------------------------------------------

    def audit(self, actor: str | None, action: str, subject: str | None = None, address: str | None = None,
              detail: str | None = None) -> None:
        with self.connect() as conn:
            self.audit_in(conn, actor, action, subject, address, detail)

    def audit_trail(self, limit: int = 200) -> list[AuditEntry]:
        with self.connect() as conn:
            rows = conn.execute("SELECT * FROM audit ORDER BY at DESC, rowid DESC LIMIT ?", (limit,)).fetchall()
        return [AuditEntry(*row) for row in rows]

    @staticmethod
    def audit_in(conn: sqlite3.Connection, actor, action, subject, address=None, detail=None) -> None:
        conn.execute("INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?)", (time.time(), actor, action, subject, address, detail))

    def _verify(self, digest: str, secret: str) -> bool:
        """Argon2 takes 64 MiB a check: at most a few at once per process, whatever comes in."""
        with _VERIFYING:
            try:
                return self.hasher.verify(digest, secret)
            except (VerificationError, InvalidHashError):
                return False


class _DummyHash:
    """A hash to verify against when the user does not exist, made once per hasher's parameters."""

    def __init__(self):
        self._by_params: dict[tuple, str] = {}

    def get(self, hasher: PasswordHasher) -> str:
        params = (hasher.time_cost, hasher.memory_cost, hasher.parallelism)
        if params not in self._by_params:
            self._by_params[params] = hasher.hash(secrets.token_hex(16))
        return self._by_params[params]


DUMMY_HASH = _DummyHash()


_VERIFYING = threading.BoundedSemaphore(2)


def _shown(name: str) -> str:
    """A login name as it is counted and audited: at most 64 characters, whatever was typed."""
    return name if USER_NAME.match(name) else name[:64] + ("…" if len(name) > 64 else "")


def _token_parts(token: str) -> tuple[str | None, str]:
    parts = token.split("_", 2)
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
        return None, ""
    return parts[1], parts[2]


def token_id_of(token: str) -> str | None:
    return _token_parts(token)[0]


def generated_password() -> str:
    return secrets.token_urlsafe(15)
