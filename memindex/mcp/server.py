"""The MCP server: the official SDK's MCPServer (FastMCP in mcp 1.x) over stdio, with one
typed, documented function per tool, as in the SDK's examples: the signature is the tool's
schema and the docstring its description. Each calls the engine function the CLI calls
(`memindex.policy.recall` to read, `memindex.write` to write: the CLI's freshness rule,
the write path's validation, secret refusal and lock) and only formats its answer: search
and recent_sessions as the CLI's compact lines (`rank. [CATEGORY] title | #tags | updated
| path`), the rest as JSON.

The server is resident, so it keeps its own watch on the memory root
(`memindex.watch.resident`): while no memory file changed it answers without the stat of
every file that each CLI process makes, and it makes that check whenever the watch cannot
tell (no inotify, a link, events lost, a change seen, an index written by someone else).

The tool list is context every session pays for, so descriptions are short, parameter
titles are dropped from the schemas and no output schema is sent (answers are text).
Bad arguments are the SDK's validation errors; memindex's own failures (no such memory,
invalid memory, a secret, a busy writer) become tool errors with their message; anything
else is the SDK's generic tool error. None of them stops the server.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..config import Config, load_config
from ..defaults import CATEGORIES
from ..errors import MemindexError, RootNotFound, WriteError
from ..policy import recall
from ..store.paths import display_prefix, find_root, project_of
from ..watch.resident import ResidentWatch
from .. import write

Category = Literal[CATEGORIES]  # type: ignore[valid-type]
ReviewKind = Literal["stale", "conflict", "duplicate", "unused", "expired"]
Hash = Annotated[str | None, Field(description="sha256 from get: refused if the file changed since")]

INSTRUCTIONS = (
    "This project's memories: decisions, runbooks, constraints, preferences, tech debt, session summaries. "
    "search first (one line per memory), get only the paths you need; cite the path you relied on. "
    "Never put secrets in a memory."
)


class Project:
    """One project's memory root, found once (or, while the project has none yet, on each
    call until `memindex init` makes one), with the server's watch on it; its config read
    afresh for each call, so an edit to it applies without restarting the server."""

    def __init__(self, root: str | None, start: str, explicit: bool = False, watch: bool = True) -> None:
        self.root, self.start, self.explicit, self.watching = root, start, explicit, watch
        self.watch: ResidentWatch | None = None
        self._warned: tuple[str, ...] = ()
        self._lock = threading.Lock()

    def begin(self) -> None:
        """Start watching the root, if there is one yet (the server's start)."""
        with self._lock:
            if self.root is not None and self.watching and self.watch is None:
                self.watch = ResidentWatch(self.root)
                if not self.watch.start():
                    recall.warn(f"each call checks every memory file: {self.watch.why}")

    def context(self) -> tuple[str, Config]:
        """(the memory root, its config); raises RootNotFound saying what to do."""
        if self.root is None:
            try:
                root = find_root(self.start, explicit=self.explicit)
            except RootNotFound as exc:
                raise RootNotFound(f"{exc}; run `memindex init` in the project first") from None
            with self._lock:
                self.root = self.root or root
            self.begin()
        cfg = load_config(self.root)
        if tuple(cfg.warnings) != self._warned:  # said once, not on every call
            self._warned = tuple(cfg.warnings)
            for warning in cfg.warnings:
                recall.warn(f"config: {warning}")
        return self.root, cfg

    def close(self) -> None:
        with self._lock:
            watch, self.watch = self.watch, None
        if watch is not None:
            watch.stop()


def _project(ctx: Context) -> Project:
    return ctx.request_context.lifespan_context


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


TOOLS: list[tuple[Callable[..., str], bool]] = []  # (function, writes)


def tool(writes: bool = False) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register a tool function (a writing one is left out of a --read-only server)."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        TOOLS.append((fn, writes))
        return fn

    return register


# --- reading ----------------------------------------------------------------------------------


@tool()
def search(
    query: str,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
    category: Category | None = None,
    include_inactive: bool = False,
    *,
    ctx: Context,
) -> str:
    """Ranked project memories, one line each: [CATEGORY] title | #tags | updated | path. Search before get."""
    project = _project(ctx)
    root, cfg = project.context()
    hits = recall.search_hits(root, cfg, query, limit=limit, categories=(category,) if category else (),
                              include_inactive=include_inactive, watch=project.watch, record="mcp")
    return recall.format_hits(hits, display_prefix(root)) or "no memory matches; try other words"


@tool()
def get(path: Annotated[str, Field(description="as search shows it")], *, ctx: Context) -> str:
    """One memory's full JSON and its sha256."""
    root, cfg = _project(ctx).context()
    return _json(recall.read_memory(root, cfg, path, record="mcp-get"))


@tool()
def recent_sessions(limit: Annotated[int, Field(ge=1, le=20)] = 3, *, ctx: Context) -> str:
    """Latest session summaries, newest first."""
    project = _project(ctx)
    root, cfg = project.context()
    hits = recall.recent_sessions(root, cfg, limit, watch=project.watch, record="recent")
    return recall.format_hits(hits, display_prefix(root)) or "no session summary yet"


@tool()
def explain(prompt: str, *, ctx: Context) -> str:
    """What the prompt hook would inject for a prompt, and why."""
    project = _project(ctx)
    root, cfg = project.context()
    return _json(recall.explain(root, cfg, prompt, watch=project.watch))


@tool()
def review(
    kind: Annotated[list[ReviewKind] | None, Field(description="only these kinds")] = None,
    fresh: Annotated[bool, Field(description="run the checks now (else the last check's findings)")] = True,
    *,
    ctx: Context,
) -> str:
    """Memories that need review: stale (the code moved on), conflict, duplicate, unused, expired;
    each with reason, evidence and the suggested action (retire, update, merge, keep)."""
    from .. import review as queue

    root, cfg = _project(ctx).context()
    items = queue.queue(root, cfg, fresh=fresh)
    return _json({"items": [i.to_json() for i in items if not kind or i.kind in kind]})


# --- writing (memindex.write: validation, secret refusal, the writer lock) ---------------------


@tool(writes=True)
def save(
    category: Category,
    data: Annotated[dict[str, Any], Field(description="{title, tags, content: {the category's fields}, questions: [3-5 ways someone would ask for it]}")],
    new_topic: Annotated[bool, Field(description="save though a same-topic memory exists")] = False,
    *,
    ctx: Context,
) -> str:
    """Save a new memory (validated; errors name what is missing; never secrets).
    If a same-topic memory exists, returns it as candidate instead: update that one."""
    root, cfg = _project(ctx).context()
    return _json(write.save_new(root, cfg, category, data, new_topic=new_topic))


@tool(writes=True)
def update(
    path: str,
    data: Annotated[dict[str, Any], Field(description="changed fields only, plus change_summary")],
    expect_hash: Hash = None,
    *,
    ctx: Context,
) -> str:
    """Merge changes into a memory (content key by key; lists replaced whole)."""
    root, cfg = _project(ctx).context()
    return _json(write.update_memory(root, cfg, path, data, expect_hash=expect_hash, cwd=project_of(root)))


@tool(writes=True)
def retire(
    path: str, reason: str | None = None, replaced_by: str | None = None, expect_hash: str | None = None, *, ctx: Context
) -> str:
    """Retire an obsolete memory (hidden from search); replaced_by: the one that holds now."""
    root, cfg = _project(ctx).context()
    return _json(write.set_status(root, cfg, path, "retire", reason=reason, replaced_by=replaced_by,
                                  expect_hash=expect_hash, cwd=project_of(root)))


# --- the SDK's side -----------------------------------------------------------------------------


@tool(writes=True)
def keep(path: str, kind: ReviewKind | None = None, *, ctx: Context) -> str:
    """Keep a review item's memory as it is: out of the review until it or its evidence changes."""
    from .. import review as queue

    root, cfg = _project(ctx).context()
    return _json(queue.keep(root, cfg, path, kind=kind))


@tool(writes=True)
def merge(path: str, into: Annotated[str, Field(description="the memory that stays")], expect_hash: Hash = None,
          *, ctx: Context) -> str:
    """Merge a duplicate into the memory that stays (its tags, questions, files), then retire it."""
    from .. import review as queue

    root, cfg = _project(ctx).context()
    return _json(queue.merge(root, cfg, path, into, expect_hash=expect_hash))


def _failure(exc: BaseException) -> ToolError:
    """memindex's exception as the tool error a model reads (the problems listed)."""
    if isinstance(exc, WriteError) and exc.problems:
        return ToolError(f"{exc.args[0]}: " + "; ".join(exc.problems))
    if isinstance(exc, OSError):
        return ToolError(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
    return ToolError(str(exc))


def _guarded(fn: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except (MemindexError, OSError, sqlite3.Error) as exc:
            raise _failure(exc) from None

    return call


def _lean(schema: Any) -> Any:
    """A JSON schema as short as it can say the same: no `title` keys (the names say it),
    no `additionalProperties: true` (the default), and an optional `X | None = None`
    shown as X alone (leaving it out is how a model passes None; None still validates)."""
    if isinstance(schema, list):
        return [_lean(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options and schema.get("default", 0) is None:
        other = next(o for o in options if o != {"type": "null"})
        schema = {**{k: v for k, v in schema.items() if k not in ("anyOf", "default")}, **other}
    return {
        k: _lean(v) for k, v in schema.items()
        if not (k == "title" and isinstance(v, str)) and not (k == "additionalProperties" and v is True)
    }


def tools(read_only: bool = False) -> list[Tool]:
    """The tool list: reading tools always, writing tools unless `read_only`."""
    out = []
    for fn, writes in TOOLS:
        if writes and read_only:
            continue
        spec = Tool.from_function(
            _guarded(fn), name=fn.__name__, description=" ".join((fn.__doc__ or "").split()),
            annotations=None if writes else ToolAnnotations(read_only_hint=True), structured_output=False,
        )
        spec.parameters = _lean(spec.parameters)
        out.append(spec)
    return out


def build(project: Project, read_only: bool = False) -> MCPServer:
    """The server; `project`'s watch runs while it serves."""

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[Project]:
        project.begin()
        try:
            yield project
        finally:
            project.close()

    return MCPServer("memindex", instructions=INSTRUCTIONS, version=__version__, tools=tools(read_only),
                     lifespan=lifespan, log_level="WARNING")


def serve(project: Project, read_only: bool = False) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    build(project, read_only).run("stdio")
