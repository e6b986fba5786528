"""A fake Hugging Face hub on 127.0.0.1: the requests `huggingface_hub.snapshot_download`
makes (revision info, the file tree, HEAD and GET of each file), served from memory.
Tests point HF_ENDPOINT at it; nothing leaves the machine."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    def __init__(self, repos: dict[str, dict[str, bytes]]) -> None:
        self.repos = repos  # repo id -> {path in the repo: content}
        self.requests: list[tuple[str, str]] = []
        self._closed = False
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                hub._serve(self, head=True)

            def do_GET(self) -> None:
                hub._serve(self, head=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.server.shutdown()
            self.server.server_close()

    def downloads(self) -> list[str]:
        return [path.rsplit("/resolve/", 1)[1].split("/", 1)[1] for method, path in self.requests if method == "GET" and "/resolve/" in path]

    def _serve(self, req: BaseHTTPRequestHandler, head: bool) -> None:
        self.requests.append((req.command, req.path))
        path = req.path.split("?")[0]
        if path.startswith("/api/models/"):
            rest = path[len("/api/models/"):].split("/")
            files = self.repos.get("/".join(rest[:2]))
            if files is None:
                return _send(req, 404, b'{"error":"Repository not found"}', head, {"X-Error-Code": "RepoNotFound"})
            if "tree" in rest:
                body = [{"type": "file", "path": f, "size": len(d), "oid": hashlib.sha1(d).hexdigest()} for f, d in files.items()]
            else:
                body = {"id": "/".join(rest[:2]), "sha": COMMIT, "siblings": [{"rfilename": f} for f in files]}
            return _send(req, 200, json.dumps(body).encode(), head, {"Content-Type": "application/json"})
        parts = path.lstrip("/").split("/")
        files = self.repos.get("/".join(parts[:2]))
        if files is not None and len(parts) > 4 and parts[2] == "resolve":
            data = files.get("/".join(parts[4:]))
            if data is None:
                return _send(req, 404, b"", head, {"X-Error-Code": "EntryNotFound"})
            headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha256(data).hexdigest()}"', "Content-Type": "application/octet-stream"}
            return _send(req, 200, data, head, headers)
        _send(req, 404, b"", head, {"X-Error-Code": "RepoNotFound"})


def _send(req: BaseHTTPRequestHandler, code: int, body: bytes, head: bool, headers: dict[str, str]) -> None:
    req.send_response(code)
    for key, value in headers.items():
        req.send_header(key, value)
    req.send_header("Content-Length", str(len(body)))
    req.end_headers()
    if not head:
        req.wfile.write(body)
