"""Claude Code hooks (and other clients' formats, `clients`): UserPromptSubmit, here (the
prompt path is the product's first impression, and one module less to load on it: inject
the few memories that clearly matter, or nothing); PreToolUse and PostToolUse (`file`: the
memories of the file at hand; sync one file); SessionStart, Stop and SessionEnd
(`session`: capture, save prompts). This module reads the payload, dispatches to the
event's handler and prints its answer.

Standard library and this package only, the index opened read-only, no memory file read;
any failure means silence on stdout, one line on stderr, exit 0.
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


def config_for(root, say=note):
    """The root's settings, each warning in them said (`note`: one stderr line for the
    call): the one way every hook reads its config."""
    from ..config import load_config

    cfg = load_config(root)
    for warning in cfg.warnings:
        say(f"config: {warning}")
    return cfg


def on_prompt(data: dict) -> str:
    """UserPromptSubmit: the few memories that clearly matter, or nothing (the policy's
    door decides, `policy.door`); then what only the hook does: the session memo, the use
    log, a worker started for the next prompt."""
    from ..policy.door import ABSENT, PromptInput, decide_prompt

    try:
        inp = PromptInput.from_hook(data)
    except ValueError as exc:
        raise Quiet(str(exc)) from None
    if inp.prompt is None:
        raise Quiet("hook input has no prompt")
    root = _root_for(data.get("cwd"))
    cfg = config_for(root)
    from .. import index

    try:
        answer = decide_prompt(root, cfg, inp, note)
    except index.IndexUnavailable as exc:  # IndexTooNew included: SessionStart tells the user
        raise Quiet(str(exc)) from None
    if answer.outcome is None:
        return ""
    from ..text.render import memory_context, shown

    hits, prefix, prompt = answer.hits, answer.prefix, answer.prompt
    block = memory_context(hits, prefix, answer.notes)
    # for the PreToolUse hook, and for the Stop hook's save prompts: Claude Code writes the
    # transcript lazily, so at Stop the turn's prompt may not be in it yet (tests/e2e)
    if (cfg["retrieval.tool_anchors"] and cfg["retrieval.file_anchors"]) or cfg["capture.save_prompts"]:
        from .. import runtime as memo

        memo.remember(inp.session_id, prompt, answer.turns, [shown(prefix, h.path) or "" for h in hits])
    if cfg["review.usage"]:
        from .. import usage

        usage.record_prompt(root, inp.session_id, prompt, *usage.decision_lists(answer.outcome))
    if answer.worker == ABSENT:  # started after the answer: the new worker's start-up does not slow this prompt
        from ..semantic import client

        client.restart(root, client.session_parent())
    return block


def keep_fresh(data: dict) -> str:
    """A prompt in a client that cannot take context (Cursor): a stale or missing index is
    refreshed in the background; nothing is added."""
    root = _root_for(data.get("cwd"))
    from .. import index
    from ..index import freshen

    try:
        conn = index.open_reader(root, busy_ms=1000)
    except index.IndexUnavailable:
        freshen.spawn_sync(root, note)
        return ""
    try:
        index.refresh(conn, root, note)
    finally:
        conn.close()
    return ""


# event -> (module of this package, its handler; None: this one): a hook loads only its own event's code
HANDLERS = {
    "prompt": (None, "on_prompt"), "pre-tool-use": ("file", "on_pre_tool_use"),
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
        handler = globals()[name] if module is None else getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
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
    if client == "claude" and type(out) is str:
        return out  # the prompt hook's path: no other module loaded
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
        import _signal as signal  # `signal` itself builds enums at import

        signal.setitimer(signal.ITIMER_REAL, 0)
    except (ImportError, AttributeError, ValueError):
        pass


def finish(code: int) -> None:
    """End the hook process now, without the interpreter's teardown (freeing every module
    and object one by one; its cost: docs/benchmarks.md). Nothing is
    lost: `main` has written and flushed its answer, every file and connection it opened
    is closed (none writes the index: writers run in the background), and what it started
    runs detached. Only the hook's entry points call it, never a caller of `main`."""
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """The hook process (both hook commands): one event, its answer on stdout, exit 0."""
    import gc

    # A short process: collecting its garbage only costs time (docs/benchmarks.md); what it
    # allocates goes when it exits.
    gc.disable()
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

