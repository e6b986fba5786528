"""The application: one store (`Site`), its routes, and the errors mapped to pages.

Each page is a thin shell over one library door (memindex.catalog, policy.recall's search
and explain, doctor, review, the write path) and a template. A page reads the index once,
through the CLI's freshness rule (`open_fresh_reader`: a sync first when a file changed),
and hands that connection to whatever else it shows.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..config import Config, load_config
from ..defaults import UI_DOCTOR_TTL_S
from ..errors import (HashConflict, IndexUnavailable, LockTimeout, MemindexError, MemoryNotFound, UntrustedRoot,
                      UsageError, WriteError)
from ..store.paths import display_prefix, project_of
from . import templating
from .security import SESSION_KEY, Guard

WARM_AFTER_S = 5.0  # the background work starts after the first page, or this long after the start
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
NAV = (("/", "Memories"), ("/shown", "What the assistant was shown"), ("/sessions", "Sessions"),
       ("/health", "Health and review"), ("/pictures", "Pictures"))
STATUS = ((HashConflict, 409), (MemoryNotFound, 404), (UsageError, 400), (WriteError, 400), (LockTimeout, 503),
          (IndexUnavailable, 503), (UntrustedRoot, 403), (MemindexError, 500))


class Doctor:
    """`memindex doctor`'s findings, run in the background (it syncs and asks git and the
    worker: too slow for a page) and shown from the last run, run again when older than
    UI_DOCTOR_TTL_S or asked for."""

    def __init__(self) -> None:
        self.checks: list | None = None
        self.at: float | None = None
        self.error: str | None = None
        self._running = threading.Lock()

    def run(self, root: str, cfg: Config) -> None:
        if not self._running.acquire(blocking=False):
            return
        try:
            from .. import doctor

            self.checks, self.at, self.error = doctor.run(root, cfg), time.time(), None
        except Exception as exc:  # shown on the page, never a failed request
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._running.release()

    def start(self, root: str, cfg: Config) -> None:
        threading.Thread(target=self.run, args=(root, cfg), daemon=True, name="memindex-ui-doctor").start()

    def current(self, root: str, cfg: Config) -> tuple[list | None, float | None, bool]:
        """(checks, when, running): a run starts when the last is too old."""
        if self.at is None or time.time() - self.at > UI_DOCTOR_TTL_S:
            self.start(root, cfg)
        return self.checks, self.at, self._running.locked()


class Site:
    """One store, as the CLI finds and trusts it (`find_root`, done by the caller): its
    settings read afresh for each page (an edit or a `memindex trust` applies at once)."""

    def __init__(self, root: str, *, read_only: bool, port: int) -> None:
        from ..catalog.listing import Provenance

        self.root, self.read_only, self.port = root, read_only, port
        self.prefix = display_prefix(root)
        self.project = project_of(root)
        self.env = templating.environment()
        cfg = self.cfg()
        self.provenance = Provenance(root, int(cfg["index.max_file_bytes"]))
        self.doctor = Doctor()
        self.served = threading.Event()  # the first page went out: the background work may start

    def cfg(self) -> Config:
        return load_config(self.root)

    def warm(self, first: Callable[[], object] | None = None) -> None:
        """In the background, once the first page went out (or after WARM_AFTER_S): `first`
        (the server's watcher), the templates compiled, every file's provenance, doctor,
        and, when the review's checks never ran on this index, those (as SessionStart does;
        derived data only, and not under --read-only). The first page does not wait for
        any of it."""
        def work() -> None:
            from ..index.reader import open_fresh_reader
            from ..review.queue import last_report, refresh

            self.served.wait(WARM_AFTER_S)
            if first is not None:
                first()
            for name in self.env.list_templates():
                self.env.get_template(name)
            cfg = self.cfg()
            checked = True
            try:
                conn = open_fresh_reader(self.root, cfg)
                try:
                    self.provenance.kinds(conn)
                    checked = last_report(conn) is not None
                finally:
                    conn.close()
            except Exception:  # the page says what is wrong when asked
                pass
            self.doctor.run(self.root, cfg)
            if not checked and not self.read_only:
                try:
                    refresh(self.root, cfg)
                except Exception:
                    pass

        threading.Thread(target=work, daemon=True, name="memindex-ui-warm").start()

    def reader(self, cfg: Config, fresh: bool = True):  # type: ignore[no-untyped-def]
        from ..index.reader import open_fresh_reader

        return open_fresh_reader(self.root, cfg, allow_sync=fresh)

    def render(self, request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        session = request.scope.get(SESSION_KEY) or {}
        html = self.env.get_template(template).render(
            csrf=session.get("csrf", ""), read_only=self.read_only, nav=NAV, here=request.url.path,
            project=os.path.basename(self.project.rstrip("/")) or self.project, root=self.root, prefix=self.prefix,
            **values)
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, exc: BaseException, status: int | None = None) -> HTMLResponse:
        code = status or next((s for cls, s in STATUS if isinstance(exc, cls)), 500)
        return self.render(request, "error.html", status=code, code=code, message=str(exc), kind=type(exc).__name__,
                           title=f"{code}")


def create_app(root: str, *, port: int, token: str, read_only: bool = False, warm: bool = True,
               first: Callable[[], object] | None = None) -> Guard:
    """The ASGI application for one store behind its Guard (host, token, CSRF, read-only);
    `warm`: the background work (`Site.warm`), `first` run first in it."""
    from . import actions, pages
    from .actions import FIELD_MAX

    site = Site(root, read_only=read_only, port=port)

    def page(handler):  # type: ignore[no-untyped-def]
        def endpoint(request: Request):  # type: ignore[no-untyped-def]  (sync: Starlette runs it in a thread)
            try:
                return handler(site, request)
            except MemindexError as exc:
                return site.error(request, exc)
            finally:
                site.served.set()

        return endpoint

    def posted(handler):  # type: ignore[no-untyped-def]
        async def endpoint(request: Request):  # type: ignore[no-untyped-def]
            from urllib.parse import parse_qsl

            from starlette.concurrency import run_in_threadpool

            body = await request.body()  # the Guard read it (bounded) and checked its CSRF token
            form = {k: v[:FIELD_MAX] for k, v in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)}
            try:
                return await run_in_threadpool(handler, site, request, form)
            except MemindexError as exc:
                return site.error(request, exc)

        return endpoint

    routes = [
        Route("/", page(pages.memories)),
        Route("/memory", page(pages.memory)),
        Route("/shown", page(pages.shown)),
        Route("/shown/session", page(pages.session)),
        Route("/sessions", page(pages.sessions)),
        Route("/health", page(pages.health)),
        Route("/pictures", page(pages.pictures)),
        Route("/act", page(actions.confirm), methods=["GET", "HEAD"]),
        Route("/act", posted(actions.act), methods=["POST"]),
        Route("/review/refresh", posted(actions.refresh), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    if warm:
        site.warm(first)
    return Guard(app, port=port, token=token, read_only=read_only)
