"""How `visibility serve` runs: read once when the app is built, from the environment that
the command sets for its worker processes (docs/workspace.md)."""

from __future__ import annotations

import ipaddress
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from visibility_assets.core.paths import data_dir

SECRET_ENV = "VISIBILITY_SERVE_SECRET"  # signs the session cookies; default: a file under the data directory
SESSION_HOURS_ENV = "VISIBILITY_SERVE_SESSION_HOURS"
SECURE_COOKIES_ENV = "VISIBILITY_SERVE_SECURE_COOKIES"  # "1" behind HTTPS: cookies only over HTTPS
TRUSTED_PROXIES_ENV = "VISIBILITY_SERVE_TRUSTED_PROXIES"  # addresses whose user header is believed
USER_HEADER_ENV = "VISIBILITY_SERVE_USER_HEADER"  # e.g. X-Forwarded-User, set by the SSO proxy


class ServeSettingError(ValueError):
    pass


@dataclass(frozen=True)
class ServeSettings:
    home: Path
    secret: bytes = field(repr=False)
    session_s: int = 8 * 3600
    secure_cookies: bool = False
    trusted_proxies: tuple[str, ...] = ()
    user_header: str | None = None

    @classmethod
    def from_env(cls) -> ServeSettings:
        home = data_dir()
        hours = os.environ.get(SESSION_HOURS_ENV, "8")
        try:
            session_s = int(float(hours) * 3600)
        except ValueError:
            raise ServeSettingError(f"{SESSION_HOURS_ENV}={hours!r} is not a number of hours") from None
        if session_s <= 0:
            raise ServeSettingError(f"{SESSION_HOURS_ENV} must be positive")
        proxies = tuple(p.strip() for p in os.environ.get(TRUSTED_PROXIES_ENV, "").split(",") if p.strip())
        for proxy in proxies:
            try:
                ipaddress.ip_address(proxy)
            except ValueError:
                raise ServeSettingError(f"{TRUSTED_PROXIES_ENV}: {proxy!r} is not an IP address") from None
        header = os.environ.get(USER_HEADER_ENV, "").strip() or None
        if header and not proxies:
            raise ServeSettingError(f"{USER_HEADER_ENV} needs {TRUSTED_PROXIES_ENV}: the proxies it may come from")
        return cls(home=home, secret=_secret(home), session_s=session_s,
                   secure_cookies=os.environ.get(SECURE_COOKIES_ENV, "") == "1",
                   trusted_proxies=proxies, user_header=header)


def _secret(home: Path) -> bytes:
    """The session-signing key: from the environment, or a random key kept (0600) beside the
    accounts, made by the first worker that needs it and read by the others."""
    if os.environ.get(SECRET_ENV):
        return os.environ[SECRET_ENV].encode()
    path = home / "workspace" / "session_secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".session_secret.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_hex(32).encode())
        try:
            os.link(draft, path)  # atomic: a worker that loses the race reads the winner's key
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_bytes()
