"""Who is asking: a signed session cookie, an API token, or (behind a company's single sign-on)
a user header from a trusted proxy; and the CSRF token every state-changing form carries.

A session cookie holds the user's name, the CSRF token and the user's session epoch, signed
with the workspace's secret and dated (itsdangerous), `HttpOnly` and `SameSite=Lax`; the role
and the epoch are read from the accounts at each request, so a removed user is out at once, and
logging out (a new epoch) ends every session of the user, a copied cookie's too.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request
from starlette.responses import Response

from visibility_assets.serve.accounts import Accounts, User, token_id_of
from visibility_assets.serve.settings import ServeSettings

SESSION_COOKIE = "vis_session"
LOGIN_COOKIE = "vis_login"  # before a session: the nonce the login form's CSRF token is bound to
TOKEN_CACHE_S = 30.0  # a verified API token skips its (slow, on purpose) hash check this long


@dataclass(frozen=True)
class Session:
    user: str
    csrf: str
    epoch: str = ""


class Guard:
    """Reads and writes the workspace's credentials."""

    def __init__(self, settings: ServeSettings, accounts: Accounts):
        self.settings, self.accounts = settings, accounts
        self._sessions = URLSafeTimedSerializer(settings.secret, salt="vis-session")
        self._login = URLSafeTimedSerializer(settings.secret, salt="vis-login")
        self._tokens: dict[str, tuple[str, float]] = {}  # sha256 of a verified token -> its id, until when
        self._tokens_lock = threading.Lock()
        self._proxies = {ipaddress.ip_address(p) for p in settings.trusted_proxies}

    # --- who is asking -------------------------------------------------------------------

    def user(self, request: Request) -> User | None:
        """The user, with how it was recognised in request.state.auth: token, header or session."""
        authorization = request.headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            request.state.auth = "token"
            return self.token_user(authorization[7:].strip())
        header = self.settings.user_header
        if header and self.from_trusted_proxy(request):
            names = request.headers.getlist(header)
            if names:
                request.state.auth = "header"
                # Exactly one: a proxy that appends its header after the client's must not let
                # the client's come first.
                user = self.accounts.user(names[0]) if len(names) == 1 else None
                if user is not None:
                    self._session_for_header(request, user)
                return user
        request.state.auth = "session"
        session = self.session(request)
        user = self.accounts.user(session.user) if session else None
        return user if user is not None and hmac.compare_digest(user.epoch, session.epoch) else None

    def from_trusted_proxy(self, request: Request) -> bool:
        if not request.client or not self._proxies:
            return False
        try:
            return ipaddress.ip_address(request.client.host) in self._proxies
        except ValueError:
            return False

    def session(self, request: Request) -> Session | None:
        value = request.cookies.get(SESSION_COOKIE)
        if not value:
            return None
        try:
            user, csrf, epoch = self._sessions.loads(value, max_age=self.settings.session_s)
        except (BadSignature, ValueError, TypeError):
            return None  # forged, altered, expired, or of another version
        return Session(user, csrf, epoch)

    def token_user(self, token: str) -> User | None:
        """The owner of an API token (None for a wrong or revoked one)."""
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        with self._tokens_lock:
            cached = self._tokens.get(key)
        if cached and cached[1] > now:
            return self.accounts.token_owner(cached[0])  # afresh: a revoked token or a new role counts at once
        user = self.accounts.token_user(token)
        if user is not None:
            with self._tokens_lock:
                self._tokens[key] = (token_id_of(token), now + TOKEN_CACHE_S)
        return user

    def _session_for_header(self, request: Request, user: User) -> None:
        """A user the proxy vouches for gets a session too, for the CSRF token of its forms: the
        page carries the new session's token and the response sets its cookie (serve/access.py)."""
        session = self.session(request)
        if session is None or session.user != user.name or session.epoch != user.epoch:
            csrf = secrets.token_urlsafe(24)
            request.state.new_session = (Session(user.name, csrf, user.epoch),
                                         self._sessions.dumps([user.name, csrf, user.epoch]))
            self.accounts.audit(user.name, "login_sso", user.name, request.client.host if request.client else None)

    def current_session(self, request: Request) -> Session | None:
        """The request's session: its cookie's, or the one just made for it."""
        made = getattr(request.state, "new_session", None)
        return made[0] if made else self.session(request)

    def set_new_session(self, request: Request, response: Response) -> None:
        made = getattr(request.state, "new_session", None)
        if made:
            self._cookie(response, SESSION_COOKIE, made[1], self.settings.session_s)

    # --- sessions ------------------------------------------------------------------------

    def start_session(self, response: Response, user: User) -> None:
        value = self._sessions.dumps([user.name, secrets.token_urlsafe(24), user.epoch])
        self._cookie(response, SESSION_COOKIE, value, self.settings.session_s)
        response.delete_cookie(LOGIN_COOKIE, path="/")

    def end_session(self, response: Response) -> None:
        response.delete_cookie(SESSION_COOKIE, path="/")

    def _cookie(self, response: Response, name: str, value: str, max_age: int) -> None:
        response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="lax",
                            secure=self.settings.secure_cookies)

    # --- CSRF ----------------------------------------------------------------------------

    def login_csrf(self, request: Request) -> tuple[str, str | None]:
        """The login form's CSRF token, bound to the browser's nonce cookie; and the cookie's new
        value when the browser has none yet (set it with `set_login_cookie`)."""
        nonce = self._login_nonce(request)
        if nonce is not None:
            return self._bound(nonce), None
        nonce = secrets.token_urlsafe(24)
        return self._bound(nonce), self._login.dumps(nonce)

    def set_login_cookie(self, response: Response, value: str) -> None:
        self._cookie(response, LOGIN_COOKIE, value, 3600)

    def login_csrf_ok(self, request: Request, token: str) -> bool:
        nonce = self._login_nonce(request)
        return nonce is not None and hmac.compare_digest(self._bound(nonce), token or "")

    def csrf_ok(self, request: Request, token: str) -> bool:
        session = self.session(request)
        return session is not None and hmac.compare_digest(session.csrf, token or "")

    def _login_nonce(self, request: Request) -> str | None:
        try:
            return self._login.loads(request.cookies.get(LOGIN_COOKIE, ""), max_age=3600)
        except (BadSignature, ValueError, TypeError):
            return None

    def _bound(self, nonce: str) -> str:
        return hmac.new(self.settings.secret, b"login:" + nonce.encode(), hashlib.sha256).hexdigest()
