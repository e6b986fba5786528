"""`memindex ui`: a local web page over one project's store (the `ui` extra: Starlette,
uvicorn, Jinja2). An adapter beside cli/ and mcp/: only `memindex.cli.ui` imports it, the
hooks never do.

    server     bind 127.0.0.1, print the address with the launch's token, serve
    security   the Guard: Host, token and cookie, CSRF, read-only, headers
    app        the store (`Site`), routes, errors as pages
    pages      the reading pages: memories, a memory, what was shown, sessions, health, pictures
    actions    the writes, each confirmed first, through the write path
    charts     the pictures' SVG geometry
    templating the Jinja2 environment: every value escaped, unsafe characters shown visibly

Templates and the stylesheet are package data (templates/, static/): no script, no CDN,
everything works offline. docs/ui.md describes the page.
"""
