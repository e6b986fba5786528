"""The local web page served in this process (memindex.ui on a real socket on 127.0.0.1,
uvicorn in a thread) and a plain HTTP client for it (http.client: any Host, Origin or
cookie header can be sent as an attacker's page or a rebinding DNS name would)."""

from __future__ import annotations

import http.client
import re
import threading
import time
from contextlib import contextmanager
from html.parser import HTMLParser
from urllib.parse import urlencode, urlsplit


class Response:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class Client:
    """HTTP to the page: `login()` trades the token for the session cookie."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.host = f"127.0.0.1:{port}"
        self.cookie: str | None = None

    def request(self, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None,
                cookie: bool = True) -> Response:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        sent = {"Host": self.host, **(headers or {})}
        if cookie and self.cookie and "Cookie" not in sent:
            sent["Cookie"] = self.cookie
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in sent.items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        out = Response(r.status, r.getheaders(), r.read())
        conn.close()
        return out

    def get(self, path: str, **kw) -> Response:  # type: ignore[no-untyped-def]
        return self.request("GET", path, **kw)

    def post(self, path: str, fields: dict[str, str], *, headers: dict[str, str] | None = None, cookie: bool = True) -> Response:
        body = urlencode(fields).encode()
        base = {"Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://{self.host}",
                "Sec-Fetch-Site": "same-origin"}
        return self.request("POST", path, headers={**base, **(headers or {})}, body=body, cookie=cookie)

    def login(self) -> Response:
        r = self.get(f"/?token={self.token}", cookie=False)
        assert r.status == 303, r.text
        self.cookie = r.header("set-cookie").split(";")[0]
        return r


class Forms(HTMLParser):
    """The forms of a page: [{action, method, fields: {name: value}}]."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self._text: str | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action"), "method": (a.get("method") or "get").lower(), "fields": {}})
        elif tag in ("input", "textarea", "select") and self.forms and a.get("name"):
            self.forms[-1]["fields"][a["name"]] = a.get("value") or ""
            if tag == "textarea":
                self._text = a["name"]

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._text and self.forms:
            self.forms[-1]["fields"][self._text] += data

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        if tag == "textarea":
            self._text = None


def form(html: str, action: str) -> dict[str, str]:
    """The fields of the page's POST form to `action`."""
    import html as html_mod

    found = [f for f in Forms(html).forms if f["action"] == action and f["method"] == "post"]
    assert found, f"no POST form to {action}"
    return {k: html_mod.unescape(v) for k, v in found[0]["fields"].items()}


def links(html: str, pattern: str) -> list[str]:
    import html as html_mod

    return [html_mod.unescape(h) for h in re.findall(r'href="([^"]+)"', html) if re.search(pattern, html_mod.unescape(h))]


@contextmanager
def serving(root: str, *, read_only: bool = False):  # type: ignore[no-untyped-def]
    """The page for `root` on a free port of 127.0.0.1, until the block ends."""
    from memindex.ui.app import create_app
    from memindex.ui.security import new_token
    from memindex.ui.server import bind, server

    sock = bind(0)
    port = sock.getsockname()[1]
    token = new_token()
    srv = server(create_app(root, port=port, token=token, read_only=read_only, warm=False), sock)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.started, "the page did not start"
    try:
        yield Client(port, token)
    finally:
        srv.should_exit = True
        thread.join(10)
        sock.close()


def address_of(line: str) -> tuple[int, str]:
    """(port, token) of the line `memindex ui` prints."""
    m = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{20,})", line.strip())
    assert m, f"not the page's address: {line!r}"
    parts = urlsplit(line.strip())
    assert parts.hostname == "127.0.0.1"
    return int(m.group(1)), m.group(2)
