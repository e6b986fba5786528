"""A fake Anthropic Messages API on 127.0.0.1 for driving the real Claude Code CLI.

Standard library only. It answers `POST /v1/messages` (streaming SSE when the request asks
for `"stream": true`, plain JSON otherwise) from a per-test script, records every request
it receives (path, headers, parsed body) so that a test can assert on what the model was
sent, and answers 404 to every other path (400 to a body that is not JSON). It binds to
127.0.0.1 only and has a bounded lifetime: it stops by itself after `lifetime_s` seconds
or `max_requests` requests, whichever comes first.

What Claude Code 2.1.197 calls in `-p` mode: only `POST /v1/messages?beta=true`, streamed,
one request per model turn (no count_tokens, no title or quota side requests were seen).
The script tells main-loop requests (the conversation: they carry the tool definitions)
from side requests (no tools), should a CLI version send some: only main-loop requests
consume the script, in order; side requests, and main-loop requests past the end of the
script, get `default_text`.

    api = FakeAnthropic(script=[
        [tool_use("Bash", {"command": "memindex search 'flaky CI'"})],  # 1st main request
        [text("Done.")],                                                  # after the tool_result
    ])
    with api:
        ... ANTHROPIC_BASE_URL=api.url claude -p ...
    api.main_requests()[1]["body"]  # what the model received with the tool_result

A script step may also be a callable `step(body) -> list[block]`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable

Block = dict[str, Any]

_ids = itertools.count(1)


def text(value: str) -> Block:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> Block:
    """A tool_use content block (e.g. `tool_use("Bash", {"command": "ls"})`)."""
    return {"type": "tool_use", "id": id or f"toolu_fake{next(_ids):04d}", "name": name, "input": input}


def is_main_loop(body: dict) -> bool:
    """A conversation request (it offers tools) as opposed to a side request."""
    return bool(body.get("tools"))


# --- reading what was sent ----------------------------------------------------------------


def block_texts(content: Any) -> list[str]:
    """Every piece of text in a message's content: text blocks, and the text inside
    tool_result blocks (string or list of text blocks)."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.extend(block_texts(block.get("content")))
    return out


def user_texts(body: dict) -> list[str]:
    """All text of the user-role messages of a request, in order."""
    out: list[str] = []
    for message in body.get("messages", ()):
        if message.get("role") == "user":
            out.extend(block_texts(message.get("content")))
    return out


def last_user_texts(body: dict) -> list[str]:
    """The text blocks of the last user message of a request."""
    users = [m for m in body.get("messages", ()) if m.get("role") == "user"]
    return block_texts(users[-1].get("content")) if users else []


def tool_results(body: dict) -> list[dict]:
    """Every tool_result block sent in a request, with `text` added (its text joined)."""
    out = []
    for message in body.get("messages", ()):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out.append({**block, "text": "\n".join(block_texts(block.get("content")))})
    return out


def system_text(body: dict) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in system or () if isinstance(b, dict))


# --- the server -----------------------------------------------------------------------------


class FakeAnthropic:
    def __init__(
        self,
        script: Iterable[Any] = (),
        *,
        default_text: str = "OK.",
        lifetime_s: float = 120.0,
        max_requests: int = 200,
        model: str = "claude-fake-1",
    ) -> None:
        self.script = list(script)
        self.default_text = default_text
        self.lifetime_s = lifetime_s
        self.max_requests = max_requests
        self.model = model
        self.requests: list[dict] = []  # every request, in arrival order
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._step = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._stopping = False
        self.stopped = threading.Event()  # set once the server is closed

    # lifecycle
    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FakeAnthropic":
        handler = type("Handler", (_Handler,), {"api": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent; from any thread). `stopped` is set once the port is closed."""
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
        if self._timer is not None:
            self._timer.cancel()
        if self._server is None:
            self.stopped.set()
        elif threading.current_thread() is self._thread:
            # shutdown() waits for serve_forever: never call it from the serving thread
            threading.Thread(target=self._shutdown, daemon=True).start()
        else:
            self._shutdown()

    def _shutdown(self) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        self.stopped.set()

    def __enter__(self) -> "FakeAnthropic":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self, script: Iterable[Any] = ()) -> None:
        """A new script for the next conversation (the recorded requests are kept)."""
        with self._lock:
            self.script = list(script)
            self._step = 0

    # what was received
    def messages_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"] == "/v1/messages" and isinstance(r["body"], dict)]

    def main_requests(self) -> list[dict]:
        return [r for r in self.messages_requests() if is_main_loop(r["body"])]

    def paths(self) -> list[str]:
        return [f'{r["method"]} {r["path"]}' for r in self.requests]

    # answering
    def _next_blocks(self, body: dict) -> list[Block]:
        if not is_main_loop(body):
            return [text(self.default_text)]
        with self._lock:
            step = self.script[self._step] if self._step < len(self.script) else None
            self._step += 1
        if step is None:
            return [text(self.default_text)]
        blocks = step(body) if callable(step) else step
        # fresh tool ids each time a step is used
        return [dict(b, id=b.get("id") or f"toolu_fake{next(_ids):04d}") if b.get("type") == "tool_use" else b for b in blocks]

    def _record(self, entry: dict) -> int:
        with self._lock:
            self.requests.append(entry)
            count = len(self.requests)
        if count >= self.max_requests:
            self.stop()
        return count


class _Handler(BaseHTTPRequestHandler):
    api: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            return self.rfile.read(length)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def _send_json(self, status: int, obj: dict) -> None:
        payload = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", f"req_fake{next(_ids):04d}")
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, kind: str, message: str) -> None:
        self._send_json(status, {"type": "error", "error": {"type": kind, "message": message}})

    def _handle(self) -> None:
        raw = self._read_body() if self.command in ("POST", "PUT", "PATCH") else b""
        path = self.path.split("?", 1)[0]
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.api._record({
            "time": time.time(), "method": self.command, "path": path, "query": self.path[len(path):],
            "headers": dict(self.headers.items()), "body": body,
        })
        if self.command != "POST" or path != "/v1/messages":
            self._error(404, "not_found_error", f"fake API: no {self.command} {path}")
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._error(400, "invalid_request_error", "fake API: body is not a Messages request")
            return
        try:
            blocks = self.api._next_blocks(body)
        except Exception as exc:  # a broken script step: tell the test, answer 500
            self.api.errors.append(f"{type(exc).__name__}: {exc}")
            self._error(500, "api_error", f"fake API script failed: {exc}")
            return
        stop_reason = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
        message = {
            "id": f"msg_fake{next(_ids):04d}", "type": "message", "role": "assistant",
            "model": body.get("model") or self.api.model, "content": blocks,
            "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }
        if body.get("stream"):
            self._stream(message)
        else:
            self._send_json(200, message)

    def _stream(self, message: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", f"req_fake{next(_ids):04d}")
        self.end_headers()
        self.close_connection = True

        def event(kind: str, data: dict) -> None:
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())

        start = dict(message, content=[], stop_reason=None, usage=dict(message["usage"], output_tokens=1))
        event("message_start", {"type": "message_start", "message": start})
        for i, block in enumerate(message["content"]):
            if block["type"] == "text":
                event("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}})
            else:
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
            event("content_block_stop", {"type": "content_block_stop", "index": i})
        event("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                "usage": {"output_tokens": message["usage"]["output_tokens"]}})
        event("message_stop", {"type": "message_stop"})
        self.wfile.flush()

    do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _handle


if __name__ == "__main__":  # manual use: python fake_api.py  (prints the URL, serves 60 s)
    api = FakeAnthropic(lifetime_s=60).start()
    print(api.url, flush=True)
    api.stopped.wait()
