"""Claude Code hooks: UserPromptSubmit (inject), PreToolUse (the memories of the file at
hand), PostToolUse (sync one file), SessionStart.

The prompt path is the product's first impression: standard library and this package
only, the index opened read-only, no memory file read, never a traceback on stdout. Any
failure means silence on stdout, one line on stderr, exit 0.
"""

from __future__ import annotations

import os
import sys

from .defaults import (
    COLD_SYNC_BUDGET_S,
    COLD_SYNC_MAX_FILES,
    DENSE_K,
    FILES_TAIL_BYTES,
    FOLDERS,
    FRESH_SYNC_MIN_S,
    HOOK_BUDGET_S as BUDGET_S,
    HOOK_MAX_STDIN as MAX_STDIN,
    LOG_FILE,
    SPAWN_GUARD_S,
    SPAWN_MARKER,
)
from .errors import UnsafeFile
from .lean import loads

_ABSENT = object()  # no worker answers: start one once the prompt is answered


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
    from .errors import UntrustedRoot
    from .paths import RootNotFound, find_root

    if not isinstance(path, str) or not path or "\x00" in path:
        path = os.getcwd()
    try:
        return find_root(path)
    except UntrustedRoot as exc:
        raise Quiet(str(exc)) from None
    except (RootNotFound, OSError):
        raise Quiet(f"no .claude/memory above {_short(path)}") from None


def _start_sync(root, paths: list[str] | None, lock_timeout: float, rebuild: bool = False):
    """A detached `memindex sync` (or `rebuild`), stderr to the root's log."""
    from .background import start

    args = ["rebuild" if rebuild else "sync", "--quiet", "--lock-timeout", str(lock_timeout)]
    if paths and not rebuild:
        args.append("--coalesce")  # a burst of edits while the lock is held: one waiting sync, not one each
    for rel in paths or ():
        args += ["--path", rel]
    return start(root, *args)


def spawn_sync(
    root, paths: list[str] | None = None, lock_timeout: float = 0.0, guard_s: float = SPAWN_GUARD_S, *extra: str
) -> None:
    """Start one detached `memindex sync` (single-flight: the lock, plus a short guard so a
    burst of prompts does not start a burst of processes)."""
    marker = os.path.join(root, SPAWN_MARKER)
    from . import rootfs

    try:
        if paths is None and not rootfs.single_flight(marker, guard_s):
            return
        from .watch.marker import watcher_pid

        if watcher_pid(root) is not None:
            return  # `memindex watch` keeps this root fresh already
        if paths is None:
            from .background import start_detached

            start_detached(root, "sync", "--quiet", "--lock-timeout", str(lock_timeout), *extra)
        else:
            _start_sync(root, paths, lock_timeout)
    except UnsafeFile as exc:
        note(f"no background sync: {exc}")
    except OSError as exc:
        note(f"could not start a background sync: {exc.strerror or exc}")


def _small_store(root) -> bool:
    """At most COLD_SYNC_MAX_FILES memory files (counting stops there)."""
    seen = 0
    for folder in FOLDERS:
        try:
            with os.scandir(os.path.join(root, folder)) as entries:
                for entry in entries:
                    seen += entry.name.endswith(".json")
                    if seen > COLD_SYNC_MAX_FILES:
                        return False
        except OSError:
            continue
    return True


def build_missing_index(root, rebuild: bool = False) -> bool:
    """No cold start: index a small store in the foreground within COLD_SYNC_BUDGET_S.
    Returns whether the index is now there; an overrunning sync goes on in the background."""
    if not _small_store(root):
        if rebuild:
            try:
                _start_sync(root, None, lock_timeout=30.0, rebuild=True)
            except (OSError, UnsafeFile) as exc:
                note(f"could not start a rebuild: {exc}")
        else:
            spawn_sync(root)
        note("a background sync was started")
        return False
    import subprocess

    try:
        proc = _start_sync(root, None, lock_timeout=COLD_SYNC_BUDGET_S, rebuild=rebuild)
    except UnsafeFile as exc:
        note(f"no sync: {exc}")
        return False
    except OSError as exc:
        note(f"could not start a sync: {exc.strerror or exc}")
        return False
    try:
        if proc.wait(timeout=COLD_SYNC_BUDGET_S) == 0:
            return True
        note(f"the sync failed (see {LOG_FILE})")
        return False
    except subprocess.TimeoutExpired:
        note(f"the first sync takes longer than {COLD_SYNC_BUDGET_S:g} s; it goes on in the background")
        return False


def on_prompt(data: dict) -> str:
    """UserPromptSubmit: the few memories that clearly matter, or nothing."""
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        prompt = data.get("user_prompt")
    if not isinstance(prompt, str):
        raise Quiet("hook input has no prompt")
    root = _root_for(data.get("cwd"))
    from .config import load_config

    cfg = load_config(root)
    for warning in cfg.warnings:
        note(f"config: {warning}")
    from .prompt import needs_context, wants_injection

    if not wants_injection(prompt, cfg):
        return ""
    transcript = data.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        transcript = None  # nothing to read: the transcript module is not even loaded
    want_turns = transcript is not None and needs_context(prompt, cfg)
    want_session = transcript is not None and (cfg["retrieval.skip_injected"] or cfg["retrieval.file_anchors"])
    tail, turns, session = None, [], None
    if want_turns or want_session:
        from .transcript import read_tail

        scan = cfg["retrieval.transcript_context.scan_bytes"] if want_session else 0
        tail = read_tail(transcript, max(scan, cfg["retrieval.transcript_context.tail_bytes"] if want_turns else 0))
    if want_turns:
        from .transcript import recent_user_turns

        turns = recent_user_turns(
            transcript,
            max_turns=cfg["retrieval.transcript_context.max_turns"],
            tail_bytes=cfg["retrieval.transcript_context.tail_bytes"],
            skip=prompt,
            tail=tail,
        )
    dense = _ask_worker(root, prompt, turns, cfg) if cfg["semantic.enabled"] else None  # it embeds meanwhile
    if want_session:
        from .transcript import read_session

        session = read_session(transcript, cfg["retrieval.transcript_context.scan_bytes"], FILES_TAIL_BYTES, tail)
    from .paths import display_prefix

    prefix = display_prefix(root)
    options = {"turns": turns, "session": session, "dense": dense if dense is not _ABSENT else None, "shown_prefix": prefix}
    from . import index
    from .lean import sqlite3

    try:
        hits = _answer(root, prompt, cfg, options)
    except index.IndexTooNew as exc:
        raise Quiet(str(exc)) from None  # never rebuilt by this older copy (SessionStart tells the user)
    except index.IndexUnavailable as exc:
        if not build_missing_index(root):
            raise Quiet(str(exc)) from None
        hits = _answer(root, prompt, cfg, options)
    except sqlite3.DatabaseError as exc:
        if not index.is_corruption(exc):
            raise
        # Damaged pages past the header: readers cannot see it on opening, so the repair
        # starts here, instead of the hook staying silent on every prompt.
        note(f"the index is damaged ({exc})")
        if not build_missing_index(root, rebuild=True):
            raise Quiet("a rebuild was started") from None
        hits = _answer(root, prompt, cfg, options)
    from .render import memory_context

    block = memory_context(hits, prefix)
    if cfg["retrieval.tool_anchors"] and cfg["retrieval.file_anchors"]:  # for the PreToolUse hook
        from . import memo

        memo.remember(data.get("session_id"), prompt, turns, [prefix + h.path for h in hits])
    if dense is _ABSENT:  # started after the answer: the new worker's start-up does not slow this prompt
        from .semantic import client

        client.restart(root, client.session_parent())
    return block


def _answer(root, prompt: str, cfg, options: dict) -> list:
    """What to inject, from a read-only connection (a stale index is refreshed for next time)."""
    from . import index
    from .inject import auto_inject

    conn = index.open_reader(root, busy_ms=1000)
    try:
        if index.is_stale(conn, root):
            spawn_sync(root, None, 0.0, FRESH_SYNC_MIN_S)
        elif (interval := index.sync_due(conn)) is not None:  # an edit in place moves no folder
            spawn_sync(root, None, 0.0, interval, "--if-changed")
        return auto_inject(conn, prompt, cfg, **options)
    finally:
        conn.close()


def _ask_worker(root, prompt: str, turns: list[str], cfg):
    """Send the prompt to the resident worker now, so that it embeds while the lexical
    search runs; returns the callable that collects its answer for the lexical candidates
    (within semantic.hook_budget_ms in all), None when the worker cannot be asked, or
    _ABSENT when there is none: the hook then starts one for the next prompt (at most once
    per SPAWN_GUARD_S), once this prompt's answer is ready."""
    from .prompt import dense_text
    from .semantic import client

    pending = client.begin(root, dense_text(prompt, turns, cfg), k=DENSE_K, budget_s=cfg["semantic.hook_budget_ms"] / 1000.0)
    if pending is None:  # silent, as without the semantic channel; only a hostile socket folder is said
        if client.last_failure == "absent":
            return _ABSENT
        if client.last_failure == "unsafe":
            note(f"semantic worker not used: {client.runtime_dir()} is not a private folder of this user")
        return None

    def collect(rowids: list[int]):
        from .inject import worker_view  # loaded by then: the policy is the caller

        return worker_view(pending)(rowids)

    return collect


def on_pre_tool_use(data: dict) -> str:
    """PreToolUse on Read|Edit|MultiEdit|Write: the memories of the file at hand."""
    root = _root_for(data.get("cwd"))
    from . import index
    from .filehook import answer

    try:
        return answer(data, root, note)
    except index.IndexUnavailable as exc:
        raise Quiet(str(exc)) from None


def on_post_tool_use(data: dict) -> str:
    """PostToolUse on Write|Edit|MultiEdit: sync the edited memory file, in the background."""
    tool_input = data.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path.endswith(".json"):
        return ""
    if not os.path.isabs(path) and isinstance(data.get("cwd"), str):
        path = os.path.join(data["cwd"], path)
    path = os.path.abspath(path)
    root = _root_for(os.path.dirname(path))
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if rel.startswith("..") or rel.split("/")[0] not in FOLDERS or rel.count("/") != 1:
        return ""
    spawn_sync(root, [rel], lock_timeout=30.0)
    return ""


def on_session_start(data: dict) -> str:
    """SessionStart: refresh the index in the background; tell the user (not the model)
    what needs their attention; optionally name the latest session summaries (passive
    recall, off by default: see docs/evaluation.md)."""
    root = _root_for(data.get("cwd"))
    from . import health, index

    attention = None
    try:
        conn = index.open_reader(root, busy_ms=1000)
    except index.IndexTooNew as exc:
        attention = f"memindex: {exc}"
    except index.IndexUnavailable:
        build_missing_index(root)
    else:
        with conn:
            attention = health.session_message(conn, root) if data.get("source") != "compact" else None
        spawn_sync(root)
    return health.session_output(attention, _session_start_block(root, data))


def _session_start_block(root, data: dict) -> str:
    """The latest session summaries, when `retrieval.session_start.inject_recent` asks."""
    from . import index
    from .config import load_config

    cfg = load_config(root)
    if cfg["semantic.enabled"]:  # keep the model warm for this session's prompts
        from .semantic import client

        client.start(root, client.session_parent())
    count = cfg["retrieval.session_start.inject_recent"]
    if count <= 0 or not cfg["retrieval.enabled"]:
        return ""
    from .paths import display_prefix
    from .query import latest
    from .render import memory_context

    try:
        conn = index.open_reader(root, busy_ms=1000)
    except index.IndexUnavailable as exc:
        note(str(exc))
        return ""
    with conn:
        hits = latest(conn, "session_summary", count)
    return memory_context(hits, display_prefix(root))


HANDLERS = {
    "prompt": on_prompt, "pre-tool-use": on_pre_tool_use, "post-tool-use": on_post_tool_use,
    "session-start": on_session_start,
}


def _alarm(signum: int, frame: object) -> None:
    raise Quiet(f"gave up after {BUDGET_S:g} s")


def run(event: str, raw: bytes) -> str:
    """Handle one hook call; returns what to print (possibly nothing). Never raises; what
    went wrong goes to stderr as one line."""
    del _notes[:]
    out = ""
    try:
        handler = HANDLERS.get(event)
        if handler is None:
            raise Quiet(f"unknown hook event {_short(event)}")
        out = handler(_payload(raw))
    except Quiet as exc:
        note(str(exc))
    except Exception as exc:  # the hook must never break a prompt
        note(f"{type(exc).__name__}: {_short(str(exc), 300)}")
    if _notes:
        line = "; ".join(_notes).replace("\n", " ").replace("\r", " ")
        _say(f"memindex hook: {line[:1000]}")
    return out


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
    try:
        import _signal as signal

        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, BUDGET_S)
    except (ImportError, AttributeError, ValueError):
        pass  # no SIGALRM (Windows) or not the main thread
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1) if sys.stdin is not None else b""
        out = run(event, raw)
        _disarm()
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001  (KeyboardInterrupt, the alarm while reading)
        _say(f"memindex hook: {type(exc).__name__}: {exc}")
    _settle_streams()
    return 0


if __name__ == "__main__":
    sys.exit(main())
