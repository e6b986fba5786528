"""The pages that only read: each one library door and a template (memindex/ui/app.py
routes them; a MemindexError becomes an error page there)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse

from ..defaults import UI_SEARCH_LIMIT
from ..errors import MemoryNotFound, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .app import Site

TEXT_MAX = 2000  # characters of a query or prompt taken from a page's form


def _text(request: Request, name: str) -> str:
    return (request.query_params.get(name) or "").strip()[:TEXT_MAX]


def memories(site: Site, request: Request) -> HTMLResponse:
    """Browse (filters, a page at a time) or, with `q`, search with `memindex search`'s engine."""
    from ..catalog.listing import Filters, facets, list_rows, with_rows

    filters = Filters.from_query(request.query_params)
    q = _text(request, "q")
    cfg = site.cfg()
    listing = None
    hits: list[dict[str, Any]] | None = None
    if q:
        from ..policy.recall import search_hits

        found = search_hits(site.root, cfg, q, limit=UI_SEARCH_LIMIT, categories=filters.categories,
                            tag=filters.tag or None, include_inactive=filters.status != "active")
        conn = site.reader(cfg, fresh=False)  # search_hits just made the freshness check
    else:
        conn = site.reader(cfg)
    try:
        if q:
            hits = with_rows(conn, site.prefix, found, site.provenance)
        else:
            listing = list_rows(conn, site.prefix, filters, site.provenance)
        counts = facets(conn, site.provenance)
    finally:
        conn.close()
    return site.render(request, "memories.html", q=q, filters=filters, listing=listing, hits=hits, facets=counts,
                       query=request.query_params, limit=UI_SEARCH_LIMIT, title="Memories")


def memory(site: Site, request: Request) -> HTMLResponse:
    """One memory whole: the file, its history and git log, its links, review items, use."""
    from ..catalog.memory import memory as read

    path = request.query_params.get("path") or ""
    cfg = site.cfg()
    conn = site.reader(cfg)
    try:
        page = read(site.root, cfg, conn, path)
    finally:
        conn.close()
    title = (page.get("row") or {}).get("title") or (page.get("memory") or {}).get("title") or page["path"]
    return site.render(request, "memory.html", page=page, done=request.query_params.get("done"), title=title)


def shown(site: Site, request: Request) -> HTMLResponse:
    """The use log's sessions, and a prompt tried: what the hook would inject (`memindex explain`)."""
    from ..catalog.shown import sessions

    prompt = _text(request, "prompt")
    file = _text(request, "file") or None
    answer = None
    cfg = site.cfg()
    if prompt:
        from ..policy.recall import explain

        answer = explain(site.root, cfg, prompt, file=file)
        answer["considered"].sort(key=lambda d: (not d["kept"], -(d["probability"] or 0.0), -d["score"]))  # as the CLI lists them
        conn = site.reader(cfg, fresh=False)
        try:
            titles = _titles(site, conn, [d["path"] for d in answer["considered"]])
        finally:
            conn.close()
    else:
        titles = {}
    return site.render(request, "shown.html", prompt=prompt, file=file or "", answer=answer, titles=titles,
                       sessions=sessions(site.root), usage_on=bool(cfg["review.usage"]), title="What the assistant was shown")


def _titles(site: Site, conn, shown_paths: list[str]) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """shown path -> {title, category, path} of the rows they name."""
    from ..catalog.memory import row_path
    from ..index import browse

    rels = {}
    for p in shown_paths:
        try:
            rels[p] = row_path(site.root, p)
        except MemoryNotFound:
            continue
    rows = browse.rows_by_path(conn, list(rels.values()))
    return {p: {"title": rows[r][4], "category": rows[r][3], "path": r} for p, r in rels.items() if r in rows}


def session(site: Site, request: Request) -> HTMLResponse:
    from ..catalog.shown import session as read

    name = request.query_params.get("name") or ""
    cfg = site.cfg()
    conn = site.reader(cfg)
    try:
        found = read(site.root, conn, name)
    finally:
        conn.close()
    if found is None:
        raise MemoryNotFound(f"no session {name!r} in your use log")
    return site.render(request, "session.html", s=found, title="Session " + name)


def sessions(site: Site, request: Request) -> HTMLResponse:
    """The session summaries as a timeline."""
    from ..catalog.sessions import timeline

    try:
        page = max(1, int(request.query_params.get("page") or 1))
    except ValueError:
        raise UsageError("page must be a number") from None
    every = request.query_params.get("all") == "1"
    cfg = site.cfg()
    conn = site.reader(cfg)
    try:
        line = timeline(site.root, cfg, conn, page, include_inactive=every)
    finally:
        conn.close()
    return site.render(request, "sessions.html", line=line, every=every, title="Sessions")


def health(site: Site, request: Request) -> HTMLResponse:
    """`memindex doctor`'s findings, the files that need attention, the review queue."""
    from dataclasses import asdict

    from ..index import health as file_health
    from ..index.docsync import not_indexed
    from ..index.reads import invalid_files
    from ..review.queue import last_report, queue  # (not `review.queue`: once loaded, that name is the module)
    from ..store.files import refusals

    cfg = site.cfg()
    if request.query_params.get("recheck") == "1":
        site.doctor.run(site.root, cfg)
    checks, checked_at, running = site.doctor.current(site.root, cfg)
    kept = request.query_params.get("kept") == "1"
    items = queue(site.root, cfg, fresh=False, include_kept=kept)  # what the last check stored
    conn = site.reader(cfg, fresh=False)
    try:
        summary = file_health.read(conn)
        invalid = invalid_files(conn)
        docs = not_indexed(conn)
        report = last_report(conn)
    finally:
        conn.close()
    attention = {file_health.KINDS[k]: v[1] for k, v in summary.items() if k in file_health.KINDS and v and v[0]}
    return site.render(
        request, "health.html", checks=[asdict(c) for c in checks] if checks is not None else None, checked_at=checked_at,
        running=running, doctor_error=site.doctor.error, attention=attention, invalid=invalid,
        refused=refusals(site.root, invalid), documents=docs, warnings=list(cfg.warnings), items=items, kept=kept,
        report=report, title="Health and review")


def pictures(site: Site, request: Request) -> HTMLResponse:
    """Memories by category over time, the store's size, injections and opens per memory."""
    from urllib.parse import quote

    from ..catalog import figures
    from . import charts
    from .templating import size as words

    cfg = site.cfg()
    conn = site.reader(cfg)
    try:
        months = figures.by_month(conn)
        size = figures.sizes(site.root, conn)
        use = figures.use(site.root, cfg, conn)
    finally:
        conn.close()
    for m in use["memories"]:
        m["href"] = "/memory?path=" + quote(m["path"], safe="")
    bytes_rows = [{"title": c["category"], "category": c["category"], "bytes": c["bytes"]} for c in size["categories"] if c["bytes"]]
    drawn = {
        "written": charts.stacked(months["months"], months["written"]),
        "total": charts.line(months["months"], months["total"]),
        "use": charts.hbars(use["memories"], ("injected", "listed", "opened")),
        "bytes": charts.hbars(bytes_rows, ("bytes",), total=lambda item: words(item["bytes"])),
    }
    return site.render(request, "pictures.html", months=months, size=size, use=use, drawn=drawn, colors=charts.COLORS,
                       title="Pictures")
