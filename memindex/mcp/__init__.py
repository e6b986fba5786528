"""`memindex mcp`: the project's memories as MCP tools over stdio (official Python SDK).

    server  the tools (one typed function each, over memindex.policy.recall and memindex.write),
            the project they serve with its watch, and the SDK server around them

Needs the `mcp` extra (`pip install 'memindex[mcp]'`); nothing else in memindex imports it.
"""
