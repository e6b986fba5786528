"""Claude Code hooks: UserPromptSubmit (inject), PostToolUse (sync one file), SessionStart.

The prompt path is the product's first impression: standard library and this package
only, the index opened read-only, no memory file read, never a traceback on stdout. Any
failure means silence on stdout, one line on stderr, exit 0.
"""

from __future__ import annotations

import json
import os
import sys
import time

MAX_STDIN = 16 * 1024 * 1024
BUDGET_S = 5.0  # past this the hook gives up silently (Claude Code's own timeout is longer)
SPAWN_GUARD_S = 10.0  # at most one background sync started per root in this window
SPAWN_MARKER = ".sync.spawned"
LOG_FILE = ".memindex.log"


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
        data = json.loads(raw.decode("utf-8", errors="strict"))
    except (ValueError, RecursionError):
        raise Quiet("hook input is not valid JSON") from None
    if not isinstance(data, dict):
        raise Quiet("hook input is not a JSON object")
    return data


def _root_for(path: object):
    from .paths import RootNotFound, find_root

    if not isinstance(path, str) or not path or "\x00" in path:
        path = os.getcwd()
    try:
        return find_root(path)
    except (RootNotFound, OSError):
        raise Quiet(f"no .claude/memory above {_short(path)}") from None


def spawn_sync(root, paths: list[str] | None = None, lock_timeout: float = 0.0) -> None:
    """Start one detached `memindex sync` (single-flight: the lock, plus a short guard so a
    burst of prompts does not start a burst of processes)."""
    marker = os.path.join(root, SPAWN_MARKER)
    from .watch_marker import watcher_pid

    if watcher_pid(root) is not None:
        return  # `memindex watch` keeps this root fresh already
    if paths is None:
        try:
            if time.time() - os.stat(marker).st_mtime < SPAWN_GUARD_S:
                return
        except OSError:
            pass
    import subprocess

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = package_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "memindex", "--root", str(root), "sync", "--quiet", "--lock-timeout", str(lock_timeout)]
    for rel in paths or ():
        cmd += ["--path", rel]
    try:
        if paths is None:
            with open(marker, "w"):
                pass
        log_path = os.path.join(root, LOG_FILE)
        if os.path.exists(log_path) and os.path.getsize(log_path) > 1_000_000:
            os.replace(log_path, log_path + ".1")
        with open(log_path, "ab") as log:
            subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                env=env, start_new_session=True, close_fds=True,
            )
    except OSError as exc:
        note(f"could not start a background sync: {exc.strerror or exc}")


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
    from .query import auto_inject, needs_context, wants_injection

    if not wants_injection(prompt, cfg):
        return ""
    from . import index

    try:
        conn = index.open_reader(root, busy_ms=1000)
    except index.IndexUnavailable as exc:
        spawn_sync(root)
        raise Quiet(f"{exc}; a background sync was started") from None
    try:
        if index.is_stale(conn, root):
            spawn_sync(root)
        turns: list[str] = []
        if needs_context(prompt, cfg):
            from .transcript import recent_user_turns

            turns = recent_user_turns(
                data.get("transcript_path"),
                max_turns=cfg["retrieval.transcript_context.max_turns"],
                tail_bytes=cfg["retrieval.transcript_context.tail_bytes"],
                skip=prompt,
            )
        hits = auto_inject(conn, prompt, cfg, turns=turns)
    finally:
        conn.close()
    from .render import memory_context
    from .paths import display_prefix

    return memory_context(hits, display_prefix(root))


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
    from .defaults import FOLDERS

    if rel.startswith("..") or rel.split("/")[0] not in FOLDERS or rel.count("/") != 1:
        return ""
    spawn_sync(root, [rel], lock_timeout=30.0)
    return ""


def on_session_start(data: dict) -> str:
    """SessionStart: refresh the index in the background; optionally name the latest
    session summaries (passive recall, off by default: see docs/evaluation.md)."""
    root = _root_for(data.get("cwd"))
    spawn_sync(root)
    from .config import load_config

    cfg = load_config(root)
    count = cfg["retrieval.session_start.inject_recent"]
    if count <= 0 or not cfg["retrieval.enabled"]:
        return ""
    from . import index
    from .query import Hit
    from .render import memory_context
    from .paths import display_prefix

    try:
        conn = index.open_reader(root, busy_ms=1000)
    except index.IndexUnavailable as exc:
        raise Quiet(str(exc)) from None
    with conn:
        rows = conn.execute(
            "SELECT rowid, path, id, category, title, tags, updated_at FROM documents"
            " WHERE category = 'session_summary' AND record_status = 'active'"
            " ORDER BY updated_at DESC LIMIT ?",
            (count,),
        ).fetchall()
    hits = [Hit(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], "active", 0.0) for r in rows]
    return memory_context(hits, display_prefix(root))


HANDLERS = {"prompt": on_prompt, "post-tool-use": on_post_tool_use, "session-start": on_session_start}


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
        print(f"memindex hook: {line[:1000]}", file=sys.stderr)
    return out


def _disarm() -> None:
    try:
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0)
    except (ImportError, AttributeError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    event = argv[0] if argv else "prompt"
    try:
        import signal

        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, BUDGET_S)
    except (ImportError, AttributeError, ValueError):
        pass  # no SIGALRM (Windows) or not the main thread
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1)
        out = run(event, raw)
        _disarm()
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001  (KeyboardInterrupt, the alarm while reading)
        try:
            print(f"memindex hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        except Exception:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
