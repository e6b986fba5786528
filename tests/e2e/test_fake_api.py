"""The fake Messages API on its own (no CLI needed)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from fake_api import FakeAnthropic, text, tool_results, tool_use


def post(url: str, body: object, path: str = "/v1/messages") -> tuple[int, str, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


def conversation(*messages: dict, tools: bool = True, stream: bool = False) -> dict:
    body = {"model": "m", "max_tokens": 10, "messages": list(messages), "stream": stream}
    if tools:
        body["tools"] = [{"name": "Bash", "input_schema": {"type": "object"}}]
    return body


def sse_events(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def test_script_answers_main_loop_requests_in_order_and_records_them():
    script = [[tool_use("Bash", {"command": "memindex search x"})], [text("done")]]
    with FakeAnthropic(script, lifetime_s=30) as api:
        status, kind, raw = post(api.url, conversation({"role": "user", "content": "hi"}))
        first = json.loads(raw)
        assert status == 200 and kind == "application/json"
        assert first["stop_reason"] == "tool_use" and first["content"][0]["input"] == {"command": "memindex search x"}

        # a side request (no tools) does not consume the script
        status, _, raw = post(api.url, conversation({"role": "user", "content": "title?"}, tools=False))
        assert json.loads(raw)["content"] == [text("OK.")]

        result = {"type": "tool_result", "tool_use_id": first["content"][0]["id"], "content": "1. [RUNBOOK] x"}
        status, kind, raw = post(api.url, conversation(
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": first["content"]},
            {"role": "user", "content": [result]}, stream=True))
        assert status == 200 and kind == "text/event-stream"
        events = sse_events(raw)
        assert [e["type"] for e in events] == ["message_start", "content_block_start", "content_block_delta",
                                               "content_block_stop", "message_delta", "message_stop"]
        assert events[2]["delta"] == {"type": "text_delta", "text": "done"}
        assert events[4]["delta"]["stop_reason"] == "end_turn"

    assert len(api.requests) == 3 and len(api.main_requests()) == 2
    assert tool_results(api.main_requests()[1]["body"])[0]["text"] == "1. [RUNBOOK] x"


def test_streamed_tool_use_carries_its_input_as_json_delta():
    with FakeAnthropic([[tool_use("Bash", {"command": "ls"})]], lifetime_s=30) as api:
        _, _, raw = post(api.url, conversation({"role": "user", "content": "hi"}, stream=True))
    events = sse_events(raw)
    assert events[1]["content_block"]["type"] == "tool_use" and events[1]["content_block"]["name"] == "Bash"
    assert json.loads(events[2]["delta"]["partial_json"]) == {"command": "ls"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_other_paths_404_and_bad_bodies_400():
    with FakeAnthropic(lifetime_s=30) as api:
        assert post(api.url, {}, "/v1/messages/count_tokens")[0] == 404
        assert post(api.url, b"not json")[0] == 400
        assert post(api.url, {"model": "m"})[0] == 400
        assert api.paths() == ["POST /v1/messages/count_tokens", "POST /v1/messages", "POST /v1/messages"]


def test_bounded_lifetime_by_requests_and_by_time():
    api = FakeAnthropic(max_requests=2, lifetime_s=30).start()
    url = api.url
    post(url, conversation({"role": "user", "content": "1"}))
    post(url, conversation({"role": "user", "content": "2"}))
    assert api.stopped.wait(5)
    with pytest.raises(OSError):
        post(url, conversation({"role": "user", "content": "3"}))

    api = FakeAnthropic(lifetime_s=0.3).start()
    assert api.stopped.wait(5)
    assert api.url.startswith("http://127.0.0.1:")
    time.sleep(0.1)
    with pytest.raises(OSError):
        post(api.url, conversation({"role": "user", "content": "late"}))
