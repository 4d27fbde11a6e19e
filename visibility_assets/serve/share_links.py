"""Share links: a brand's overview, competitors and questions, read-only at viewer level, for
someone without an account, under a link that expires and can be revoked (then 410). The link
is `/s/TOKEN`; only a SHA-256 of its token is stored (the token is 32 random bytes, so a slow
hash adds nothing). Kept in the accounts file's `share_links` table (`workspace/accounts.sqlite`), whose audit trail
records each link made, revoked and used."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass

from visibility_assets.serve.accounts import Accounts
from visibility_assets.serve.filters import MAX_DAYS

SHARED_VIEWS = ("overview", "competitors", "questions")  # what a link opens; the rest is refused
DEFAULT_DAYS = 30
DEFAULT_EXPIRY = "7d"
MAX_EXPIRY_S = 366 * 86400
EXPIRY = re.compile(r"^(\d{1,4})([hdw])$")
UNIT_S = {"h": 3600, "d": 86400, "w": 7 * 86400}
LINKS = "SELECT link_id, brand, category, days, created_by, created_at, expires_at, revoked_at FROM share_links"


class ShareError(ValueError):
    """A link that cannot be made or revoked as asked; the message says why."""


@dataclass(frozen=True)
class ShareLink:
    link_id: str
    brand: str
    category: str
    days: int  # the period it opens on: the last `days` days measured
    created_by: str | None
    created_at: float
    expires_at: float
    revoked_at: float | None

    def state(self, now: float | None = None) -> str:
        """active, expired or revoked."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if (now or time.time()) >= self.expires_at else "active"


def expiry_seconds(text: str) -> int:
    """'7d', '24h', '2w' as seconds (ShareError otherwise)."""
    match = EXPIRY.match(text.strip())
    seconds = int(match.group(1)) * UNIT_S[match.group(2)] if match else 0
    if not 0 < seconds <= MAX_EXPIRY_S:
        raise ShareError(f"expires: a number and h, d or w, at most 366 days (such as {DEFAULT_EXPIRY}): {text!r}")
    return seconds


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ShareLinks:
    def __init__(self, accounts: Accounts):
        self.accounts = accounts

    def create(self, brand: str, category: str, days: int, expires: str, actor: str | None,
               address: str | None = None) -> tuple[ShareLink, str]:
        """A new link and its token (shown once)."""
        if not 1 <= days <= MAX_DAYS:
            raise ShareError(f"days: from 1 to {MAX_DAYS}")
        now, token, link_id = time.time(), secrets.token_urlsafe(32), secrets.token_hex(4)
        link = ShareLink(link_id, brand, category, days, actor, now, now + expiry_seconds(expires), None)
        with self.accounts.connect() as conn:
            conn.execute("INSERT INTO share_links VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (link_id, _digest(token), brand, category, days, actor, now, link.expires_at, None))
            self.accounts.audit_in(conn, actor, "share_created", f"{link_id} {brand}", address,
                                 f"{days} days, expires {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(link.expires_at))}")
        return link, token

    def links(self) -> list[ShareLink]:
        with self.accounts.connect() as conn:
            rows = conn.execute(LINKS + " ORDER BY created_at DESC").fetchall()
        return [ShareLink(*row) for row in rows]

    def revoke(self, link_id: str, actor: str | None, address: str | None = None) -> ShareLink:
        with self.accounts.connect() as conn:
            updated = conn.execute("UPDATE share_links SET revoked_at = ? WHERE link_id = ? AND revoked_at IS NULL",
                                   (time.time(), link_id)).rowcount
            row = conn.execute(LINKS + " WHERE link_id = ?", (link_id,)).fetchone()
            if row is None:
                raise ShareError(f"no share link {link_id!r} (`visibility share list` shows them)")
            if updated:
                self.accounts.audit_in(conn, actor, "share_revoked", f"{link_id} {row[1]}", address)
        return ShareLink(*row)

    def find(self, token: str) -> ShareLink | None:
        """The link of a token, whatever its state; None for a token no link has."""
        with self.accounts.connect() as conn:
            row = conn.execute(LINKS + " WHERE token_hash = ?", (_digest(token),)).fetchone()
        return ShareLink(*row) if row else None
