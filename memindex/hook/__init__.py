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

from ..defaults import DENSE_K, FILES_TAIL_BYTES, HOOK_BUDGET_S as BUDGET_S, HOOK_MAX_STDIN as MAX_STDIN
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


_ABSENT = object()  # no worker answers: start one once the prompt is answered


def on_prompt(data: dict) -> str:
    """UserPromptSubmit: the few memories that clearly matter, or nothing."""
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        prompt = data.get("user_prompt")
    if not isinstance(prompt, str):
        raise Quiet("hook input has no prompt")
    root = _root_for(data.get("cwd"))
    from ..config import load_config

    cfg = load_config(root)
    for warning in cfg.warnings:
        note(f"config: {warning}")
    from ..policy.prompt import needs_context, wants_injection

    if not wants_injection(prompt, cfg):
        return ""
    transcript = data.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        transcript = None  # nothing to read: the transcript module is not even loaded
    want_turns = transcript is not None and needs_context(prompt, cfg)
    want_session = transcript is not None and (cfg["retrieval.skip_injected"] or cfg["retrieval.file_anchors"])
    tail, turns, session = None, [], None
    if want_turns or want_session:
        from ..policy.transcript import read_tail

        scan = cfg["retrieval.transcript_context.scan_bytes"] if want_session else 0
        tail = read_tail(transcript, max(scan, cfg["retrieval.transcript_context.tail_bytes"] if want_turns else 0))
    if want_turns:
        from ..policy.transcript import recent_user_turns

        turns = recent_user_turns(
            transcript,
            max_turns=cfg["retrieval.transcript_context.max_turns"],
            tail_bytes=cfg["retrieval.transcript_context.tail_bytes"],
            skip=prompt,
            tail=tail,
        )
    dense = _ask_worker(root, prompt, turns, cfg) if cfg["semantic.enabled"] else None  # it embeds meanwhile
    if want_session:
        from ..policy.transcript import read_session

        session = read_session(transcript, cfg["retrieval.transcript_context.scan_bytes"], FILES_TAIL_BYTES, tail)
    from ..store.paths import display_prefix

    prefix = display_prefix(root)
    options = {"turns": turns, "session": session, "dense": dense if dense is not _ABSENT else None, "shown_prefix": prefix,
               "session_id": data.get("session_id")}
    from .. import index
    from ..lean import sqlite3

    try:
        outcome = _answer(root, prompt, cfg, options)
    except index.IndexTooNew as exc:
        raise Quiet(str(exc)) from None  # never rebuilt by this older copy (SessionStart tells the user)
    except index.IndexUnavailable as exc:
        from ..index import freshen

        if not freshen.build_missing_index(root, note):
            raise Quiet(str(exc)) from None
        outcome = _answer(root, prompt, cfg, options)
    except sqlite3.DatabaseError as exc:
        if not index.is_corruption(exc):
            raise
        # Damaged pages past the header: readers cannot see it on opening, so the repair
        # starts here, instead of the hook staying silent on every prompt.
        note(f"the index is damaged ({exc})")
        from ..index import freshen

        if not freshen.build_missing_index(root, note, rebuild=True):
            raise Quiet("a rebuild was started") from None
        outcome = _answer(root, prompt, cfg, options)
    from ..text.render import memory_context, shown

    outcome, notes = outcome
    hits = outcome.hits
    block = memory_context(hits, prefix, notes)
    # for the PreToolUse hook, and for the Stop hook's save prompts: Claude Code writes the
    # transcript lazily, so at Stop the turn's prompt may not be in it yet (tests/e2e)
    if (cfg["retrieval.tool_anchors"] and cfg["retrieval.file_anchors"]) or cfg["capture.save_prompts"]:
        from .. import runtime as memo

        memo.remember(data.get("session_id"), prompt, turns, [shown(prefix, h.path) or "" for h in hits])
    if cfg["review.usage"]:
        from .. import usage

        usage.record_prompt(root, data.get("session_id"), prompt, *usage.decision_lists(outcome))
    if dense is _ABSENT:  # started after the answer: the new worker's start-up does not slow this prompt
        from ..semantic import client

        client.restart(root, client.session_parent())
    return block


def _answer(root, prompt: str, cfg, options: dict):
    """What to inject and why (the policy's Outcome) and the last review's notes on it
    (policy/staleness.py), from a read-only connection (a stale index is refreshed for
    next time)."""
    from .. import index
    from ..policy.inject import decide

    conn = index.open_reader(root, busy_ms=1000)
    try:
        index.refresh(conn, root, note, cfg["documents.paths"])
        outcome = decide(conn, prompt, cfg, **options)
        notes = {}
        if outcome.hits:
            from ..policy.staleness import apply

            notes = apply(conn, outcome, cfg)
        return outcome, notes
    finally:
        conn.close()


def _ask_worker(root, prompt: str, turns: list[str], cfg):
    """Send the prompt to the resident worker now, so that it embeds while the lexical
    search runs; returns the callable that collects its answer for the lexical candidates
    (within semantic.hook_budget_ms in all), None when the worker cannot be asked, or
    _ABSENT when there is none: the hook then starts one for the next prompt (at most once
    per SPAWN_GUARD_S, `defaults`), once this prompt's answer is ready."""
    from ..policy.prompt import dense_text
    from ..semantic import client

    pending = client.begin(root, dense_text(prompt, turns, cfg), k=DENSE_K, budget_s=cfg["semantic.hook_budget_ms"] / 1000.0)
    if pending is None:  # silent, as without the semantic channel; only a hostile socket folder is said
        if client.last_failure == "absent":
            return _ABSENT
        if client.last_failure == "unsafe":
            note(f"semantic worker not used: {client.runtime_dir()} is not a private folder of this user")
        return None

    def collect(rowids: list[int]):
        from ..policy.inject import worker_view  # loaded by then: the policy is the caller

        return worker_view(pending)(rowids)

    return collect


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

