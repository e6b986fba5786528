"""The door of the local page: one ASGI middleware in front of every request, static
files and errors included.

- Host: only `127.0.0.1:PORT` and `localhost:PORT` (a DNS-rebinding page reaches the
  port under its own name, and is refused before anything else).
- Token: the launch's random token, in the address `memindex ui` prints; the first visit
  trades it for a session cookie (HttpOnly, SameSite=Strict, named for the port) and is
  redirected to the same page without it. No cookie and no token: 401; a wrong token: 403.
- Writes: POST only (GET, HEAD, POST are the only methods), refused altogether under
  `--read-only`; each needs the session's CSRF token in its form, and an `Origin` or
  `Sec-Fetch-Site` header, when the browser sends one, of this page itself.
- Every answer: no CORS header ever, a Content-Security-Policy that allows no script,
  no framing, no referrer to another site, no caching, `nosniff`; `Server-Timing` says the server's time.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

SESSIONS_MAX = 64  # browser sessions kept per launch (the oldest goes first)
BODY_MAX = 4 * 1024 * 1024  # bytes of one form
CSP = ("default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # (no-referrer makes Chromium send `Origin: null` with a form)
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
SESSION_KEY = "memindex.session"  # where the request's scope carries {"csrf", "read_only"}


def new_token() -> str:
    return secrets.token_urlsafe(32)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8", "surrogateescape"), b.encode("utf-8", "surrogateescape"))


class Guard:
    """The middleware; `app` is the Starlette application behind it."""

    def __init__(self, app, *, port: int, token: str, read_only: bool) -> None:  # type: ignore[no-untyped-def]
        self.app, self.port, self.token, self.read_only = app, port, token, read_only
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}
        self.cookie = f"memindex_ui_{port}"
        self.sessions: OrderedDict[str, str] = OrderedDict()  # session id -> its CSRF token

    async def __call__(self, scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets
            return
        started = time.perf_counter()
        headers = {}
        for k, v in scope.get("headers") or ():
            headers.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))

        async def reply(status: int, text: str, extra: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
            body = text.encode("utf-8")
            await send({"type": "http.response.start", "status": status, "headers": [
                (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                *HEADERS, *extra, _timing(started)]})
            await send({"type": "http.response.body", "body": body if scope["method"] != "HEAD" else b""})

        if headers.get("host") not in self.hosts:
            await reply(403, "refused: this server answers only to http://127.0.0.1:%d and http://localhost:%d "
                             "(the Host header names another server)\n" % (self.port, self.port))
            return
        method = scope["method"]
        if method not in ("GET", "HEAD", "POST"):
            await reply(405, "method not allowed\n", [(b"allow", b"GET, HEAD, POST")])
            return
        sid = _cookie(headers.get("cookie", ""), self.cookie)
        csrf = self.sessions.get(sid) if sid else None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        token = next((v for k, v in query if k == "token"), None)
        if csrf is None:
            if token is None:
                await reply(401, "this page needs the address `memindex ui` printed (it holds the launch's token)\n")
                return
            if method == "POST" or not _same(token, self.token):
                await reply(403, "refused: wrong token (open the address `memindex ui` printed for this launch)\n")
                return
            sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
            self.sessions[sid] = csrf
            while len(self.sessions) > SESSIONS_MAX:
                self.sessions.popitem(last=False)
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            where = scope.get("path", "/") + (f"?{rest}" if rest else "")
            await reply(303, "signed in\n", [
                (b"location", where.encode("latin-1", "replace")),
                (b"set-cookie", f"{self.cookie}={sid}; Path=/; HttpOnly; SameSite=Strict".encode())])
            return
        if token is not None and method != "POST":  # signed in already: drop the token from the address
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            await reply(303, "signed in\n", [(b"location", (scope.get("path", "/") + (f"?{rest}" if rest else ""))
                                              .encode("latin-1", "replace"))])
            return
        if method == "POST":
            if self.read_only:
                await reply(403, "refused: this page was started with --read-only; nothing is written\n")
                return
            origin, fetch_site = headers.get("origin"), headers.get("sec-fetch-site")
            if (origin is not None and origin not in self.origins) or fetch_site not in (None, "same-origin"):
                await reply(403, "refused: a write from another site\n")
                return
            if not headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
                await reply(415, "refused: a form is expected\n")
                return
            body = await _body(receive)
            if body is None:
                await reply(413, "refused: the form is too large\n")
                return
            fields = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
            given = next((v for k, v in fields if k == "csrf"), "")
            if not _same(given, csrf):
                await reply(403, "refused: the form's CSRF token is missing or wrong (reload the page)\n")
                return
            receive = _replay(body, receive)
        scope[SESSION_KEY] = {"csrf": csrf, "read_only": self.read_only}

        async def send_with_headers(message) -> None:  # type: ignore[no-untyped-def]
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if not k.lower().startswith(b"access-control-")]
                message = {**message, "headers": [*kept, *HEADERS, _timing(started)]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _timing(started: float) -> tuple[bytes, bytes]:
    return b"server-timing", f"app;dur={(time.perf_counter() - started) * 1000:.2f}".encode()


def _cookie(header: str, name: str) -> str | None:
    try:
        jar = SimpleCookie()
        jar.load(header)
    except Exception:  # a malformed header: no session
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


async def _body(receive) -> bytes | None:  # type: ignore[no-untyped-def]
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > BODY_MAX:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, then):  # type: ignore[no-untyped-def]
    """A `receive` that gives the body read already, then the connection's own messages."""
    sent = False

    async def receive():  # type: ignore[no-untyped-def]
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return receive
