"""The MCP server: memindex/mcp/tools.py's methods as typed tools of the official SDK's
MCPServer (FastMCP in mcp 1.x), over stdio.

The tool list is context every session pays for, so descriptions are short, parameter
titles are dropped from the schemas and no output schema is sent (answers are text).
Bad arguments are the SDK's validation errors; memindex's own failures (no such memory,
invalid memory, a secret, a busy writer) become tool errors with their message; anything
else is the SDK's generic tool error. None of them stops the server.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..defaults import CATEGORIES
from ..errors import MemindexError, WriteError
from .tools import Memories

Category = Literal[CATEGORIES]  # type: ignore[valid-type]
ReviewKind = Literal["stale", "conflict", "duplicate", "unused", "expired"]
Hash = Annotated[str | None, Field(description="sha256 from get: refused if the file changed since")]

INSTRUCTIONS = (
    "This project's memories: decisions, runbooks, constraints, preferences, tech debt, session summaries. "
    "search first (one line per memory), get only the paths you need; cite the path you relied on. "
    "Never put secrets in a memory."
)


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


def tools_for(memories: Memories, read_only: bool = False) -> list[Tool]:
    """The tool list: reading tools always, writing tools unless `read_only`."""

    def search(
        query: str,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        category: Category | None = None,
        include_inactive: bool = False,
    ) -> str:
        return memories.search(query, limit, category, include_inactive)

    def get(path: Annotated[str, Field(description="as search shows it")]) -> str:
        return memories.get(path)

    def recent_sessions(limit: Annotated[int, Field(ge=1, le=20)] = 3) -> str:
        return memories.recent_sessions(limit)

    def explain(prompt: str) -> str:
        return memories.explain(prompt)

    def review(
        kind: Annotated[list[ReviewKind] | None, Field(description="only these kinds")] = None,
        fresh: Annotated[bool, Field(description="run the checks now (else the last check's findings)")] = True,
    ) -> str:
        return memories.review(kind, fresh)

    def keep(path: str, kind: ReviewKind | None = None) -> str:
        return memories.keep(path, kind)

    def merge(path: str, into: Annotated[str, Field(description="the memory that stays")], expect_hash: Hash = None) -> str:
        return memories.merge(path, into, expect_hash)

    def save(
        category: Category,
        data: Annotated[dict[str, Any], Field(description="{title, tags, content: {the category's fields}, questions: [3-5 ways someone would ask for it]}")],
        new_topic: Annotated[bool, Field(description="save though a same-topic memory exists")] = False,
    ) -> str:
        return memories.save(category, data, new_topic)

    def update(
        path: str,
        data: Annotated[dict[str, Any], Field(description="changed fields only, plus change_summary")],
        expect_hash: Hash = None,
    ) -> str:
        return memories.update(path, data, expect_hash)

    def retire(path: str, reason: str | None = None, replaced_by: str | None = None, expect_hash: str | None = None) -> str:
        return memories.retire(path, reason, replaced_by, expect_hash)

    reading = ToolAnnotations(read_only_hint=True)
    specs: list[tuple[Callable[..., str], str, ToolAnnotations | None]] = [
        (search, "Ranked project memories, one line each: [CATEGORY] title | #tags | updated | path. Search before get.", reading),
        (get, "One memory's full JSON and its sha256.", reading),
        (recent_sessions, "Latest session summaries, newest first.", reading),
        (explain, "What the prompt hook would inject for a prompt, and why.", reading),
        (review, "Memories that need review: stale (the code moved on), conflict, duplicate, unused, expired; "
                 "each with reason, evidence and the suggested action (retire, update, merge, keep).", reading),
    ]
    if not read_only:
        specs += [
            (save, "Save a new memory (validated; errors name what is missing; never secrets). "
                   "If a same-topic memory exists, returns it as candidate instead: update that one.", None),
            (update, "Merge changes into a memory (content key by key; lists replaced whole).", None),
            (retire, "Retire an obsolete memory (hidden from search); replaced_by: the one that holds now.", None),
            (keep, "Keep a review item's memory as it is: out of the review until it or its evidence changes.", None),
            (merge, "Merge a duplicate into the memory that stays (its tags, questions, files), then retire it.", None),
        ]
    tools = []
    for fn, description, annotations in specs:
        tool = Tool.from_function(_guarded(fn), name=fn.__name__, description=description,
                                  annotations=annotations, structured_output=False)
        tool.parameters = _lean(tool.parameters)
        tools.append(tool)
    return tools


def build(memories: Memories, read_only: bool = False) -> MCPServer:
    return MCPServer(
        "memindex", instructions=INSTRUCTIONS, version=__version__, tools=tools_for(memories, read_only),
        log_level="WARNING",
    )


def serve(memories: Memories, read_only: bool = False) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    build(memories, read_only).run("stdio")
