"""The writes: each action asks first (a GET page that says what will happen, with a form),
then the form's POST does it through the write path (memindex.review's actions, and
memindex.write's restore and unarchive: validation, secrets refused, the writer lock, the
file and its index row in one step). The Guard has checked the POST's CSRF token and
refused it under --read-only before any of this runs.

The form carries the file's sha256 as the page showed it: a file changed since is not
overwritten (HashConflict, 409) but shown again.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..errors import HashConflict, MemindexError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .app import Site

ACTIONS = {  # action -> (the button's word, what it does)
    "retire": ("Retire", "hidden from search and injection; `memindex gc` deletes it after the grace period; Restore undoes it"),
    "archive": ("Archive", "kept, hidden from search and injection; Unarchive undoes it"),
    "update": ("Save changes", "the changes merged in, the change recorded in its history"),
    "merge": ("Merge", "the other memory gains its tags, questions and related files; this one is retired, replaced by it"),
    "keep": ("Keep", "its review items stay out of the queue until it or their evidence changes"),
    "restore": ("Restore", "active again (it was retired)"),
    "unarchive": ("Unarchive", "active again (it was archived)"),
}
FIELD_MAX = 200_000  # characters of one form field


def _action(value: str | None) -> str:
    if value not in ACTIONS:
        raise UsageError(f"no action {value!r} (one of {', '.join(ACTIONS)})")
    return value


def _target(site: Site, cfg, path: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The memory an action names, read as its page reads it (no git: the form needs the file)."""
    from ..catalog.memory import memory

    conn = site.reader(cfg)
    try:
        return memory(site.root, cfg, conn, path, git=False)
    finally:
        conn.close()


def confirm(site: Site, request: Request) -> HTMLResponse:
    """What the action will do, and the form that does it."""
    q = request.query_params
    action = _action(q.get("do"))
    cfg = site.cfg()
    target = _target(site, cfg, q.get("path") or "")
    return _form(site, request, action, target, {"into": q.get("into") or "", "kind": q.get("kind") or "",
                                                 "replaced_by": q.get("replaced_by") or ""})


def _form(site: Site, request: Request, action: str, target: dict[str, Any], given: dict[str, str],
          error: str | None = None, status: int = 200) -> HTMLResponse:
    memory = target.get("memory") if isinstance(target.get("memory"), dict) else {}
    fields = {
        "title": given.get("title", memory.get("title") if isinstance(memory.get("title"), str) else ""),
        "tags": given.get("tags", ", ".join(t for t in memory.get("tags") or () if isinstance(t, str))),
        "related_files": given.get("related_files", "\n".join(f for f in memory.get("related_files") or () if isinstance(f, str))),
        "content": given.get("content", json.dumps(memory.get("content"), ensure_ascii=False, indent=2)),
        "change_summary": given.get("change_summary", ""),
        "reason": given.get("reason", ""), "replaced_by": given.get("replaced_by", ""), "into": given.get("into", ""),
        "kind": given.get("kind", ""),
    }
    word, what = ACTIONS[action]
    return site.render(request, "confirm.html", status=status, action=action, word=word, what=what, target=target,
                       fields=fields, error=error, title=f"{word}: {target['path']}")


def _patch(form: dict[str, str], memory: dict[str, Any]) -> dict[str, Any]:
    """The update's patch: the fields the form changed."""
    patch: dict[str, Any] = {}
    title = form.get("title", "").strip()
    if title and title != memory.get("title"):
        patch["title"] = title
    tags = [t.strip() for t in form.get("tags", "").split(",") if t.strip()]
    if tags != [t for t in memory.get("tags") or () if isinstance(t, str)]:
        patch["tags"] = tags
    files = [f.strip() for f in form.get("related_files", "").splitlines() if f.strip()]
    if files != [f for f in memory.get("related_files") or () if isinstance(f, str)]:
        patch["related_files"] = files
    raw = form.get("content", "").strip()
    if raw:
        try:
            content = json.loads(raw)
        except ValueError as exc:
            raise UsageError(f"content is not JSON: {exc}") from None
        if not isinstance(content, dict):
            raise UsageError("content must be a JSON object")
        if content != memory.get("content"):
            patch["content"] = content
    if not patch:
        raise UsageError("nothing changed")
    summary = form.get("change_summary", "").strip()
    if summary:
        patch["change_summary"] = summary
    return patch


def perform(site: Site, cfg, action: str, target: dict[str, Any], form: dict[str, str]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Do one action on the memory `target` names, through the write path."""
    from .. import review
    from ..store.paths import project_of

    path = target["path"]
    expect = form.get("expect") or None
    reason = form.get("reason", "").strip() or None
    if action == "retire":
        return review.retire(site.root, cfg, path, reason=reason, replaced_by=form.get("replaced_by", "").strip() or None,
                             expect_hash=expect)
    if action == "archive":
        return review.archive(site.root, cfg, path, reason=reason, expect_hash=expect)
    if action == "update":
        return review.update(site.root, cfg, path, _patch(form, target.get("memory") or {}), expect_hash=expect)
    if action == "merge":
        into = form.get("into", "").strip()
        if not into:
            raise UsageError("merge needs the memory that stays (into)")
        return review.merge(site.root, cfg, path, into, expect_hash=expect)
    if action == "keep":
        return review.keep(site.root, cfg, target.get("shown") or path, kind=form.get("kind") or None)
    from ..write import set_status

    return set_status(site.root, cfg, path, action, expect_hash=expect, cwd=project_of(site.root))


def act(site: Site, request: Request, form: dict[str, str]) -> Response:
    """The confirmed action (the Guard checked the form's CSRF token), then its memory's page."""
    action = _action(form.get("do"))
    cfg = site.cfg()
    target = _target(site, cfg, form.get("path", ""))
    try:
        perform(site, cfg, action, target, form)
    except HashConflict as exc:
        fresh = _target(site, cfg, target["path"])
        return _form(site, request, action, fresh, {k: v for k, v in form.items() if k != "expect"},
                     error=f"{exc} (it changed since the page was shown: here it is as it is now)", status=409)
    except MemindexError as exc:
        return _form(site, request, action, target, form, error=str(exc), status=site.error(request, exc).status_code)
    return RedirectResponse("/memory?path=" + quote(target["path"], safe="") + "&done=" + action, status_code=303)


def refresh(site: Site, request: Request, form: dict[str, str]) -> Response:
    """Run the review's checks now and store what they find (`memindex review --refresh`)."""
    from .. import review

    review.refresh(site.root, site.cfg())
    return RedirectResponse("/health#review", status_code=303)
