"""Fake OpenAI Responses and Gemini APIs on 127.0.0.1 for driving the real Codex CLI and
Gemini CLI (standard library only; fake_api.py is the Anthropic one).

Each records every request (method, path, parsed JSON body) and answers with one text,
"Done.", unless scripted:

- `POST .../responses` (Codex, `wire_api = "responses"`): a streamed response
  (`response.created`, one `response.output_item.done` per output item, `response.completed`);
  `responses_script` gives the output items of the first requests in order (e.g. a
  `function_call(...)`), then the text;
- `POST .../models/M:streamGenerateContent` (Gemini CLI's turn): one SSE chunk;
  `gemini_script` gives the parts of the first turns in order (e.g. a `{"functionCall":
  ...}`), then the text;
- `POST .../models/M:generateContent` (Gemini CLI's side requests, e.g. its model
  router): a JSON candidate whose text is a router answer;
- anything else: 404.

Bound to 127.0.0.1 only; stops by itself after `lifetime_s` seconds.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "Done."
USAGE = {"input_tokens": 5, "input_tokens_details": None, "output_tokens": 1, "output_tokens_details": None, "total_tokens": 6}


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": "msg_fake", "content": [{"type": "output_text", "text": text}]}


def function_call(name: str, arguments: dict[str, Any], call_id: str = "call_fake1",
                  namespace: str | None = None) -> dict[str, Any]:
    """A Responses API function call output item (how the model calls a tool; a tool of a
    namespace tool group names its namespace)."""
    item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments)}
    return item if namespace is None else {**item, "namespace": namespace}


def _candidate(text: str, parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts or [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1, "totalTokenCount": 6},
    }


class FakeLLM:
    """`with FakeLLM() as api: ... api.url ... api.requests`"""

    def __init__(self, lifetime_s: float = 150, responses_script: list[list[dict[str, Any]]] | None = None,
                 gemini_script: list[list[dict[str, Any]]] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.responses_script = list(responses_script or [])
        self.gemini_script = list(gemini_script or [])
        self.lifetime_s = lifetime_s
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _body(self) -> Any:
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def _send(self, status: int, content_type: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                owner.requests.append({"method": self.command, "path": self.path, "body": self._body()})
                path = self.path.split("?")[0]
                if path.endswith("/responses"):
                    items = owner.responses_script.pop(0) if owner.responses_script else [message(ANSWER)]
                    events = [
                        {"type": "response.created", "response": {"id": "resp_fake"}},
                        *({"type": "response.output_item.done", "item": item} for item in items),
                        {"type": "response.completed", "response": {"id": "resp_fake", "usage": USAGE}},
                    ]
                    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
                    self._send(200, "text/event-stream", data)
                elif path.endswith(":streamGenerateContent"):
                    parts = owner.gemini_script.pop(0) if owner.gemini_script else None
                    self._send(200, "text/event-stream", b"data: " + json.dumps(_candidate(ANSWER, parts)).encode() + b"\r\n\r\n")
                elif path.endswith(":generateContent"):
                    router = json.dumps({"reasoning": "fake", "model_choice": "flash"})
                    self._send(200, "application/json", json.dumps(_candidate(router)).encode())
                else:
                    self._send(404, "application/json", b'{"error": {"message": "not found"}}')

            do_GET = do_POST = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime_s, self.stop)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "FakeLLM":
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        self.server.shutdown()
        self.server.server_close()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def bodies(self, suffix: str) -> list[Any]:
        """The JSON bodies of the requests whose path (without query) ends with `suffix`."""
        return [r["body"] for r in self.requests if r["path"].split("?")[0].endswith(suffix)]
