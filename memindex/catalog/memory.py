"""One memory whole, as its page shows it: the file as `memindex get` reads it (or a
document's section and its file), its history (`changes`, and the `git log` of its file,
bounded), what it links to and what links to it (replaced by, supersedes), its review
items and this user's use of it.

Only paths of this store are named: a memory file `<folder>/<id>.json` in a category
folder (`write.locate`'s rule underneath: links out of the root refused), or a document
section the index holds (`@docs/x.md#anchor`, read inside the project only). Anything
else (`../../etc/passwd`, an absolute path, a link out) is MemoryNotFound.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from ..config import Config
from ..defaults import FOLDERS, UI_FILE_SHOWN_BYTES, UI_GIT_BUDGET_S, UI_GIT_LOG_COMMITS
from ..errors import MemindexError, MemoryNotFound
from ..index import browse
from ..store.paths import display_prefix, project_of
from ..text.render import safe_relpath, shown
from .listing import row_json


def row_path(root: str, given: str) -> str:
    """The index's form of a path named on a page: `decisions/x.json` (also given as
    shown, `.claude/memory/decisions/x.json`) or a document's `@file#anchor` (also given
    as shown, `docs/x.md#anchor`, when that row exists); MemoryNotFound for anything else."""
    text = (given or "").strip()
    prefix = display_prefix(root)
    if text.startswith(prefix):
        text = text[len(prefix):]
    if text.startswith("@"):
        if shown(prefix, text) is None:
            raise MemoryNotFound(f"not a document of this project: {given!r}")
        return text
    folder = text.split("/", 1)[0]
    if folder in FOLDERS and safe_relpath("", text) is not None and text.endswith(".json"):
        return text
    if "#" in text and shown(prefix, "@" + text) is not None:
        return "@" + text
    raise MemoryNotFound(f"not a memory of this store: {given!r} (expected <folder>/<id>.json in one of "
                         f"{', '.join(f + '/' for f in FOLDERS)})")


def git_log(project: str, rel: str, limit: int = UI_GIT_LOG_COMMITS, budget_s: float = UI_GIT_BUDGET_S) -> dict[str, Any]:
    """The last `limit` commits that touched `rel` (a path in the project), followed
    through renames: {commits: [{commit, author, date, subject}], note}. Bounded in time
    and output; git is asked as review/git.py asks it (no pager, prompt, fsmonitor,
    signature check, external diff or textconv)."""
    from ..review.git import Git

    git = Git(project, budget_s)
    if not git.ok:
        return {"commits": [], "note": "not in a git work tree (or no git, or out of time)"}
    out = git.run("log", "--follow", "--no-show-signature", "--no-notes", "--no-color", "--no-mailmap",
                  f"--max-count={int(limit)}", "--format=%H%x1f%aN%x1f%aI%x1f%s", "--", git.prefix + rel)
    if out is None:
        return {"commits": [], "note": "; ".join(git.failures) or "git log failed"}
    commits = []
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split("\x1f")
        if len(parts) == 4:
            commits.append({"commit": parts[0], "author": parts[1][:200], "date": parts[2], "subject": parts[3][:300]})
    return {"commits": commits, "note": None if commits else "no commit touches this file (untracked or ignored)"}


def _links(conn: sqlite3.Connection, prefix: str, rel: str, row: tuple | None) -> dict[str, list[dict[str, Any]]]:
    """What this row names as its replacement (resolved to rows) and the rows that name it."""
    out: dict[str, list[dict[str, Any]]] = {"replaced_by": [], "replaces": []}
    if row is None:
        return out
    from .listing import _json_list

    refs = [r for r in _json_list(row[12]) if isinstance(r, str)]
    ids = [r for r in refs if "/" not in r and not r.startswith("@")]
    paths = [r if r.startswith("@") else r + ".json" for r in refs if "/" in r or r.startswith("@")]
    found = {r[1]: r for r in browse.rows_by_id(conn, ids)} if ids else {}
    found.update(browse.rows_by_path(conn, paths) if paths else {})
    out["replaced_by"] = [row_json(r, prefix) for r in sorted(found.values(), key=lambda r: r[1]) if r[1] != rel]
    if rel.startswith("@"):
        mine = [f"@{rel[1:].rpartition('#')[0]}#"]
    else:
        mine = [row[2], rel[: -len(".json")]]
    out["replaces"] = [row_json(r, prefix) for r in browse.naming(conn, mine) if r[1] != rel]
    return out


def _review(conn: sqlite3.Connection, prefix: str, rel: str) -> list[dict[str, Any]]:
    return [{"kind": k, "reason": reason, "suggested": suggested, "other_path": other,
             "other_shown": (shown(prefix, other) or other) if other else None}
            for _, k, reason, suggested, other in browse.review_by_path(conn, [rel])]


def memory(root: str, cfg: Config, conn: sqlite3.Connection, given: str, *, git: bool = True) -> dict[str, Any]:
    """Everything the memory page shows of one memory file or document section."""
    rel = row_path(root, given)
    prefix = display_prefix(root)
    row = browse.rows_by_path(conn, [rel]).get(rel)
    if rel.startswith("@"):
        page = _document(root, conn, rel, row)
        file = rel[1:].rpartition("#")[0]
    else:
        from ..policy.recall import read_memory

        got = read_memory(root, cfg, rel)  # `memindex get`: bounded, links out of the root refused
        page = {"document": False, "memory": got["memory"], "sha256": got["sha256"], "shown": got["path"]}
        file = os.path.relpath(os.path.join(root, rel), project_of(root)).replace(os.sep, "/")
    page.update(
        path=rel, row=row_json(row, prefix) if row is not None else None, file=file,
        links=_links(conn, prefix, rel, row), review=_review(conn, prefix, rel),
        git=git_log(project_of(root), file) if git else None,
    )
    changes = page.get("memory", {}).get("changes") if isinstance(page.get("memory"), dict) else None
    page["changes"] = [c for c in changes if isinstance(c, dict)][:200] if isinstance(changes, list) else []
    if cfg["review.usage"]:
        from .. import usage

        use = usage.counts(root).get(usage.key(rel))
        page["use"] = use.to_json() if use is not None else None
    return page


def _document(root: str, conn: sqlite3.Connection, rel: str, row: tuple | None) -> dict[str, Any]:
    """A document's section: the index's row, the section's text as the sync cut it, the
    whole file (bounded), its other sections."""
    from ..store.documents import NotIndexed, read_text
    from ..store.interpret import interpret

    if row is None:
        raise MemoryNotFound(f"no document section {shown(display_prefix(root), rel) or rel!r} in the index")
    file, _, anchor = rel[1:].rpartition("#")
    project = project_of(root)
    source = browse.source_of(conn, file)
    kind = source[0] if source else "docs"
    page: dict[str, Any] = {"document": True, "kind": kind, "anchor": anchor, "section": None, "text": None,
                            "truncated": False, "problem": None, "status": None, "shown": shown(display_prefix(root), rel)}
    try:
        text, _ = read_text(project, file)
        doc = interpret(file, kind, text)
    except (NotIndexed, MemindexError, OSError) as exc:
        page["problem"] = str(getattr(exc, "reason", exc))
    else:
        unit = next((u for u in doc.units if u.anchor == anchor), None)
        page.update(section=None if unit is None else {"heading": unit.heading, "text": unit.text},
                    text=text[:UI_FILE_SHOWN_BYTES], truncated=len(text) > UI_FILE_SHOWN_BYTES, status=doc.status,
                    title=doc.title)
    page["sections"] = [row_json(r, display_prefix(root)) for r in browse.document_rows(conn, file)]
    return page
