"""`memindex ui`'s process: bind 127.0.0.1 only, print the address with the launch's token
(one line on stdout), open the browser unless told not to, serve until Ctrl-C or SIGTERM.

uvicorn serves the socket bound here (so the printed port is the one listening, also for
port 0: any free port), with its own access log, `Server` header and proxy headers off.
"""

from __future__ import annotations

import socket
import sys
import threading

HOST = "127.0.0.1"  # never another interface: the page holds the project's memories


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        from ..errors import UsageError

        raise UsageError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc} (choose another --port)") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def server(app, sock: socket.socket):  # type: ignore[no-untyped-def]
    """A uvicorn server for `app` on `sock`, quiet but for errors."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False,
                            date_header=False, proxy_headers=False, http="h11", ws="none", loop="asyncio",
                            timeout_graceful_shutdown=3)
    return uvicorn.Server(config)


def serve(root: str, *, port: int = 0, open_browser: bool = True, read_only: bool = False) -> int:
    """Serve `root` until interrupted; prints `http://127.0.0.1:PORT/?token=...` first."""
    from .app import create_app
    from .security import new_token

    sock = bind(port)
    port = sock.getsockname()[1]
    token = new_token()
    app = create_app(root, port=port, token=token, read_only=read_only)
    url = f"http://{HOST}:{port}/?token={token}"
    print(url, flush=True)
    print(f"memindex ui: {root}{' (read-only)' if read_only else ''}; Ctrl-C stops it", file=sys.stderr, flush=True)
    if open_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    try:
        server(app, sock).run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C: uvicorn has closed the connections and raises the signal again
        pass
    finally:
        sock.close()
    print("memindex ui: stopped", file=sys.stderr, flush=True)
    return 0
