"""`memindex ui`'s process: bind 127.0.0.1 only, print the address with the launch's token
(one line on stdout), open the browser unless told not to, serve until Ctrl-C or SIGTERM.

uvicorn serves the socket bound here (so the printed port is the one listening, also for
port 0: any free port), with its own access log, `Server` header and proxy headers off.

While the page is open it watches the store as `memindex watch` does (the same Watcher, in
a thread): each page's freshness question is then the watcher's O(1) answer instead of a
stat of every memory file, and the hooks' and searches' too. When another watcher has the
root, the pages ask that one; where no watcher can vouch (polling file systems), each page
makes the stat pass, as `memindex search` does.
"""

from __future__ import annotations

import socket
import sys
import threading

import jinja2  # noqa: F401  (the ui extra's parts, all imported here: a missing one is said before anything starts)
import starlette  # noqa: F401
import uvicorn

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
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False,
                            date_header=False, proxy_headers=False, http="h11", ws="none", loop="asyncio",
                            timeout_graceful_shutdown=3)
    return uvicorn.Server(config)


def watch(root: str):  # type: ignore[no-untyped-def]
    """The root's Watcher and its thread, started (None when it cannot be made)."""
    from ..errors import WatcherRunning
    from ..watch.watcher import Log, Watcher

    try:
        watcher = Watcher(root, log=Log(quiet=True))
    except Exception:  # no watchdog, an unreadable root: the pages make their stat pass
        return None

    def run() -> None:
        try:
            watcher.run()
        except WatcherRunning:  # another watcher has the root: the pages ask it
            pass
        except Exception:  # the pages make their own stat pass
            pass

    thread = threading.Thread(target=run, daemon=True, name="memindex-ui-watch")
    thread.start()
    return watcher, thread


def serve(root: str, *, port: int = 0, open_browser: bool = True, read_only: bool = False) -> int:
    """Serve `root` until interrupted; prints `http://127.0.0.1:PORT/?token=...` first."""
    from .app import create_app
    from .security import new_token

    sock = bind(port)
    port = sock.getsockname()[1]
    token = new_token()
    watching: list = []
    stopped = threading.Event()

    def start_watching() -> None:
        if not stopped.is_set():
            watching.append(watch(root))

    app = create_app(root, port=port, token=token, read_only=read_only, first=start_watching)
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
        stopped.set()
        sock.close()
        for started in watching:  # its sync in progress commits, its marker and socket go
            if started is not None:
                started[0].request_stop("the page stopped")
                started[1].join(10)
    print("memindex ui: stopped", file=sys.stderr, flush=True)
    return 0
