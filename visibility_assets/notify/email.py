"""Mailing the digest: one message with a plain-text and an HTML part, through the SMTP server
of events.yaml (`notifications.digests.email`), the password from the environment. A server
that is down or answers 4xx is tried again; 5xx (a refused login, an unknown recipient) is not."""

from __future__ import annotations

import smtplib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from visibility_assets.config.events import DigestEmail
from visibility_assets.core.retry import backoff_s

MAX_ATTEMPTS = 3
BACKOFF_BASE_S, BACKOFF_CAP_S = 2.0, 30.0


@dataclass(frozen=True)
class Mailed:
    recipients: tuple[str, ...]
    attempts: int
    error: str | None  # None: the server took it

    @property
    def delivered(self) -> bool:
        return self.error is None


def email_message(settings: DigestEmail, subject: str, text: str, html: str) -> EmailMessage:
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = subject, settings.sender, ", ".join(settings.to)
    message["Date"], message["Message-ID"] = formatdate(localtime=False), make_msgid(domain=settings.sender.split("@")[1])
    message.set_content(text)
    message.add_alternative(html, subtype="html")
    return message


def send_email(settings: DigestEmail, message: EmailMessage, sleep: Callable[[float], None] = time.sleep) -> Mailed:
    if settings.password_env and settings.password() is None:
        return Mailed(settings.to, 0, f"environment variable {settings.password_env} (the SMTP password) is not set")
    error = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            _send_once(settings, message)
            return Mailed(settings.to, attempt, None)
        except smtplib.SMTPResponseException as exc:
            error = f"SMTP {exc.smtp_code}: {_text(exc.smtp_error)}"
            if exc.smtp_code >= 500:
                return Mailed(settings.to, attempt, error)
        except smtplib.SMTPRecipientsRefused as exc:
            return Mailed(settings.to, attempt, f"recipients refused: {', '.join(exc.recipients)}")
        except (OSError, smtplib.SMTPException) as exc:  # refused, timed out, disconnected
            error = f"{type(exc).__name__}: {exc}"
        if attempt < MAX_ATTEMPTS:
            sleep(backoff_s(attempt, BACKOFF_BASE_S, BACKOFF_CAP_S, fixed_share=0.5))
    return Mailed(settings.to, MAX_ATTEMPTS, error)


def _send_once(settings: DigestEmail, message: EmailMessage) -> None:
    where = (settings.smtp_host, settings.smtp_port)
    if settings.security == "ssl":
        server: smtplib.SMTP = smtplib.SMTP_SSL(*where, timeout=settings.timeout_s, context=ssl.create_default_context())
    else:
        server = smtplib.SMTP(*where, timeout=settings.timeout_s)
    with server:
        if settings.security == "starttls":
            server.starttls(context=ssl.create_default_context())
        if settings.username:
            server.login(settings.username, settings.password() or "")
        server.send_message(message)


def _text(value) -> str:
    return (value.decode(errors="replace") if isinstance(value, bytes) else str(value))[:200]
