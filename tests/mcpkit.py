"""memindex's MCP server under the SDK's own stdio client, for the MCP tests
(tests/test_mcp.py, tests/test_mcp_watch.py): one session, one tool call."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio  # the SDK's own dependency
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent


def run_session(args: list[str], body: Callable[[ClientSession], Awaitable[Any]], cwd: Path | None = None,
                env: dict[str, str] | None = None) -> Any:
    """`python <args>` as the SDK's stdio client starts a server, one session; `args` are
    `memindex`'s unless they start with `-I` (a script run isolated)."""
    params = StdioServerParameters(
        command=sys.executable, args=args if args[0] == "-I" else ["-m", "memindex", *args],
        cwd=str(cwd) if cwd else None,
        env={"PYTHONPATH": str(REPO), "XDG_RUNTIME_DIR": os.environ["XDG_RUNTIME_DIR"], **(env or {})},
    )
    result: list[Any] = []

    async def main() -> None:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as streams:
                async with ClientSession(*streams) as session:
                    await session.initialize()
                    result.append(await body(session))

    anyio.run(main)
    return result[0]


async def call(session: ClientSession, name: str, **arguments: Any) -> tuple[bool, str]:
    """(is_error, text) of one tool call."""
    answer = await session.call_tool(name, arguments)
    return answer.is_error, "".join(getattr(c, "text", "") for c in answer.content)
