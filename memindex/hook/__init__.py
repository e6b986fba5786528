"""Claude Code hooks (and other clients' formats, `clients`): UserPromptSubmit (`prompt`:
inject), PreToolUse and PostToolUse (`file`: the memories of the file at hand; sync one
file), SessionStart, Stop and SessionEnd (`session`: capture, save prompts). This module
reads the payload, dispatches to the event's module and prints its answer.

Standard library and this package only; any failure means silence on stdout, one line on
stderr, exit 0.
"""

from __future__ import annotations

import os
import sys

from ..defaults import HOOK_BUDGET_S as BUDGET_S, HOOK_MAX_STDIN as MAX_STDIN
from ..lean import loads


class Quiet(Exception):
    """An expected reason to say nothing (reported on stderr)."""


_notes: list[str] = []  # what this call has to say on stderr: printed as one line


def note(text: str) -> None:
    _notes.append(text)


def _short(value: object, limit: int = 80) -> str:
    text = ascii(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _payload(raw: bytes) -> dict:
    if len(raw) > MAX_STDIN:
        raise Quiet("hook input over 16 MiB")
    try:
        data = loads(raw.decode("utf-8", errors="strict"))
    except (ValueError, RecursionError):
        raise Quiet("hook input is not valid JSON") from None
    if not isinstance(data, dict):
        raise Quiet("hook input is not a JSON object")
    return data


def _root_for(path: object):
    from ..errors import UntrustedRoot
    from ..store.paths import RootNotFound, find_root

    if not isinstance(path, str) or not path or "\x00" in path:
        path = os.getcwd()
    try:
        return find_root(path)
    except UntrustedRoot as exc:
        raise Quiet(str(exc)) from None
    except (RootNotFound, OSError):
        raise Quiet(f"no .claude/memory above {_short(path)}") from None


# event -> (module of this package, its handler): a hook loads only its own event's code
HANDLERS = {
    "prompt": ("prompt", "on_prompt"), "pre-tool-use": ("file", "on_pre_tool_use"),
    "post-tool-use": ("file", "on_post_tool_use"), "session-start": ("session", "on_session_start"),
    "stop": ("session", "on_stop"), "session-end": ("session", "on_session_end"),
}


def _alarm(signum: int, frame: object) -> None:
    raise Quiet(f"gave up after {BUDGET_S:g} s")


def run(event: str, raw: bytes, client: str = "claude") -> str:
    """Handle one hook call; returns what to print, in `client`'s format (possibly
    nothing). Never raises; what went wrong goes to stderr as one line."""
    del _notes[:]
    out = ""
    try:
        where = HANDLERS.get(event)
        if where is None:
            raise Quiet(f"unknown hook event {_short(event)}")
        module, name = where
        if (client, event) == ("cursor", "prompt"):
            name = "keep_fresh"
        handler = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
        if client == "claude":  # the hooks' own format: the clients module loads for the others only
            out = handler(_payload(raw))
        else:
            from . import clients

            if client not in clients.CLIENTS or not clients.supports(client, event):
                asked, client = client, client if client in clients.CLIENTS else "claude"
                raise Quiet(f"no {_short(event)} hook for client {_short(asked)}")
            out = handler(clients.normalize(client, _payload(raw)))
    except Quiet as exc:
        note(str(exc))
    except Exception as exc:  # the hook must never break a prompt
        note(f"{type(exc).__name__}: {_short(str(exc), 300)}")
    if _notes:
        line = "; ".join(_notes).replace("\n", " ").replace("\r", " ")
        _say(f"memindex hook: {line[:1000]}")
    if client == "claude":
        return out
    from . import clients

    return clients.render(client, event, out)


def _say(line: str) -> None:
    """One line on stderr, if stderr can take it (closed or full: the line is dropped)."""
    try:
        print(line, file=sys.stderr, flush=True)
    except Exception:
        pass


def _settle_streams() -> None:
    """Flush stdout and stderr now; a stream that cannot be flushed (closed, a full pipe)
    is swapped for /dev/null, so that the interpreter's own flush at exit cannot turn the
    exit code into 120: the hook exits 0 whatever happened to its streams."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            continue
        try:
            stream.flush()
        except Exception:
            try:
                setattr(sys, name, open(os.devnull, "w"))
            except OSError:
                setattr(sys, name, None)


def _disarm() -> None:
    try:
        import _signal as signal  # `signal` itself builds enums: 0.6 ms

        signal.setitimer(signal.ITIMER_REAL, 0)
    except (ImportError, AttributeError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    event = argv[0] if argv else "prompt"
    client = argv[argv.index("--client") + 1] if "--client" in argv[:-1] else "claude"
    try:
        import _signal as signal

        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, BUDGET_S)
    except (ImportError, AttributeError, ValueError):
        pass  # no SIGALRM (Windows) or not the main thread
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin is not None else b""
        out = run(event, raw, client)
        _disarm()
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001  (KeyboardInterrupt, the alarm while reading)
        _say(f"memindex hook: {type(exc).__name__}: {exc}")
    _settle_streams()
    return 0

