"""Claude Code transcripts written the way Claude Code 2.1 writes them (one JSON object a
line: prompts, assistant messages split into one line per content block, tool results
with `toolUseResult`, attachments for hooks and listings, `isMeta` entries, sidechains),
for the capture tests and benchmarks. The field names follow transcripts the real CLI
wrote in tests/e2e. Developer tool: never run on a memory root.
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

VERSION = "2.1.197"


class TranscriptWriter:
    """Builds one session's transcript line by line."""

    def __init__(self, session_id: str, cwd: str, start: datetime | None = None, branch: str = "main") -> None:
        self.session_id, self.cwd, self.branch = session_id, cwd, branch
        self.now = start or datetime(2026, 5, 1, 9, 0, tzinfo=timezone.utc)
        self.entries: list[dict[str, Any]] = []
        self.parent: str | None = None
        self._msg = 0
        self._tool = 0

    def _stamp(self) -> str:
        self.now += timedelta(seconds=3)
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def _add(self, entry: dict[str, Any], sidechain: bool = False) -> dict[str, Any]:
        node = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session_id}/{len(self.entries)}"))
        full = {
            "parentUuid": self.parent, "isSidechain": sidechain, **entry, "uuid": node, "timestamp": self._stamp(),
            "userType": "external", "cwd": self.cwd, "sessionId": self.session_id, "version": VERSION,
            "gitBranch": self.branch,
        }
        self.entries.append(full)
        self.parent = node
        return full

    def prompt(self, text: str) -> None:
        self._add({"type": "user", "message": {"role": "user", "content": text}, "promptId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session_id}/p{len(self.entries)}"))})

    def meta(self, text: str) -> None:
        self._add({"type": "user", "isMeta": True, "message": {"role": "user", "content": text}})

    def command(self, name: str, args: str = "") -> None:
        """A slash command as the user typed it (its wrapper, not the user's words)."""
        text = f"<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n<command-args>{args}</command-args>"
        self._add({"type": "user", "message": {"role": "user", "content": text}})

    def _assistant(self, block: dict[str, Any], sidechain: bool = False) -> None:
        self._msg += 1
        self._add({
            "type": "assistant", "requestId": f"req_{self._msg:04d}",
            "message": {
                "id": f"msg_{self.session_id[:8]}_{self._msg:04d}", "type": "message", "role": "assistant",
                "model": "claude-opus-4-8", "content": [block], "stop_reason": None,
                "usage": {"input_tokens": 100, "output_tokens": 20},
            },
        }, sidechain)

    def text(self, text: str) -> None:
        self._assistant({"type": "text", "text": text})

    def thinking(self, text: str) -> None:
        self._assistant({"type": "thinking", "thinking": text, "signature": "sig"})

    def sidechain(self, text: str) -> None:
        self._assistant({"type": "text", "text": text}, sidechain=True)

    def attachment(self, kind: str, content: Any) -> None:
        self._add({"type": "attachment", "attachment": {"type": kind, "content": content}})

    def tool(self, name: str, args: dict[str, Any], result: str, is_error: bool = False, extra: dict | None = None) -> None:
        self._tool += 1
        tool_id = f"toolu_{self.session_id[:8]}_{self._tool:04d}"
        self._assistant({"type": "tool_use", "id": tool_id, "name": name, "input": args})
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        self._add({
            "type": "user", "message": {"role": "user", "content": [block]},
            "toolUseResult": extra if extra is not None else {"stdout": result, "stderr": "", "interrupted": False},
        })

    def bash(self, command: str, output: str, exit_code: int = 0) -> None:
        text = output if exit_code == 0 else f"Exit code {exit_code}\n{output}"
        self.tool("Bash", {"command": command, "description": "Run a command"}, text, is_error=exit_code != 0)

    def edit(self, path: str, old: str, new: str) -> None:
        self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
                  f"The file {path} has been updated successfully.", extra={"filePath": path})

    def write_file(self, path: str, content: str) -> None:
        self.tool("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}",
                  extra={"type": "create", "filePath": path})

    def read(self, path: str, content: str) -> None:
        numbered = "\n".join(f"{i}\t{line}" for i, line in enumerate(content.splitlines(), 1))
        self.tool("Read", {"file_path": path}, numbered, extra={"type": "text", "file": {"filePath": path}})

    def todos(self, items: list[tuple[str, str]]) -> None:
        todos = [{"content": c, "status": s, "activeForm": c} for c, s in items]
        self.tool("TodoWrite", {"todos": todos}, "Todos have been modified successfully.", extra={"newTodos": todos})

    def lines(self) -> list[str]:
        head = [{"type": "queue-operation", "operation": "enqueue", "sessionId": self.session_id}]
        tail = [{"type": "last-prompt", "sessionId": self.session_id}]
        return [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in head + self.entries + tail]

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return path


# --- realistic coding sessions, for the import benchmark ---------------------------------

_AREAS = ["billing", "auth", "search", "ingest", "reports", "dispatch", "notifications", "profile", "export", "sync"]
_VERBS = ["fix", "add", "refactor", "speed up", "document", "test", "migrate", "clean up"]
_THINGS = ["the retry logic", "pagination", "the CSV export", "rate limiting", "the cache layer", "input validation",
           "timezone handling", "the webhook handler", "error messages", "the nightly job"]


def _code(rng: random.Random, lines: int) -> str:
    words = ["value", "result", "config", "items", "user", "request", "response", "cache", "retry", "total"]
    out = []
    for i in range(lines):
        a, b = rng.choice(words), rng.choice(words)
        out.append(f"    {a}_{i} = compute_{b}({a}, limit={rng.randint(1, 500)})  # keep {b} in step")
    return "def handler():\n" + "\n".join(out) + "\n    return result\n"


def coding_session(rng: random.Random, session_id: str, cwd: str, start: datetime) -> TranscriptWriter:
    """A plausible session: a goal, reads (file dumps), edits, commands, test runs that
    fail then pass, thinking, hook attachments, a todo list, often a commit, and a
    closing summary. Sizes spread from a few KB to about a megabyte."""
    w = TranscriptWriter(session_id, cwd, start)
    area, verb, thing = rng.choice(_AREAS), rng.choice(_VERBS), rng.choice(_THINGS)
    w.attachment("skill_listing", "- memindex:memory-save: Save or update a project memory ...")
    w.prompt(f"Please {verb} {thing} in the {area} service; the ticket is {area.upper()}-{rng.randint(100, 999)}.")
    w.attachment("hook_success", f"<memory-context source=\"memindex\">\n- [DECISION] {area} -> decisions/{area}.json\n</memory-context>")
    w.thinking(f"The user wants to {verb} {thing}. " * rng.randint(5, 40))
    todo = [(f"Read the {area} module", "completed"), (f"{verb.capitalize()} {thing}", "in_progress"), ("Run the tests", "pending")]
    w.todos(todo)
    files = [f"{cwd}/src/{area}/{name}.py" for name in rng.sample(["api", "models", "service", "tasks", "utils", "views"], 3)]
    for _ in range(rng.randint(1, 4 if rng.random() < 0.9 else 40)):  # a tail of long sessions
        for path in files:
            w.read(path, _code(rng, rng.randint(40, 400)))
            w.bash(f"grep -rn '{thing.split()[-1]}' src/{area}", "\n".join(f"src/{area}/x.py:{i}: match" for i in range(rng.randint(1, 30))))
            w.text(f"I'll change `{path.rsplit('/', 1)[-1]}` so that {thing} works for {area}.")
            w.edit(path, "old()", "new()")
        w.bash("python -m pytest -q tests/" + area, f"F..\nFAILED tests/{area}/test_x.py::test_{area}\n1 failed, 12 passed in 0.84s", 1)
        if rng.random() < 0.3:
            w.prompt(f"Also keep the {area} logs quiet while you are at it.")
    w.bash("python -m pytest -q tests/" + area, f"..............\n14 passed in 0.91s")
    w.todos([(c, "completed") for c, _ in todo] + ([("Update the changelog", "pending")] if rng.random() < 0.5 else []))
    if rng.random() < 0.6:
        sha = "%07x" % rng.getrandbits(28)
        w.bash(f'git commit -am "{verb.capitalize()} {thing} in {area}"', f"[main {sha}] {verb.capitalize()} {thing} in {area}\n 3 files changed")
    w.text(f"Done: {thing} in {area} now works; all 14 tests pass.\n\nNext steps:\n- deploy {area} to staging\n- watch the error rate")
    return w


def write_sessions(folder: Path, count: int, cwd: str, seed: int = 0) -> list[Path]:
    """`count` coding sessions as `<session-id>.jsonl` files in `folder`."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    out = []
    for i in range(count):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out.append(coding_session(rng, sid, cwd, start + timedelta(hours=7 * i)).write(folder / f"{sid}.jsonl"))
    return out
