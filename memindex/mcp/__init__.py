"""`memindex mcp`: the project's memories as MCP tools over stdio (official Python SDK).

    tools   the tool functions: thin shells over memindex.policy.recall and memindex.write
    server  the SDK server around them (tool list, errors, stdio)

Needs the `mcp` extra (`pip install 'memindex[mcp]'`); nothing else in memindex imports it.
"""
