"""UserPromptSubmit: the few memories that clearly matter, or nothing (and Cursor's
beforeSubmitPrompt, which cannot take context: the index kept fresh only).

The prompt path is the product's first impression: standard library and this package
only, the index opened read-only, no memory file read, never a traceback on stdout.
"""

from __future__ import annotations

from ..defaults import DENSE_K, FILES_TAIL_BYTES
from . import Quiet, _root_for, note

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
        hits = _answer(root, prompt, cfg, options)
    except index.IndexTooNew as exc:
        raise Quiet(str(exc)) from None  # never rebuilt by this older copy (SessionStart tells the user)
    except index.IndexUnavailable as exc:
        from ..index import freshen

        if not freshen.build_missing_index(root, note):
            raise Quiet(str(exc)) from None
        hits = _answer(root, prompt, cfg, options)
    except sqlite3.DatabaseError as exc:
        if not index.is_corruption(exc):
            raise
        # Damaged pages past the header: readers cannot see it on opening, so the repair
        # starts here, instead of the hook staying silent on every prompt.
        note(f"the index is damaged ({exc})")
        from ..index import freshen

        if not freshen.build_missing_index(root, note, rebuild=True):
            raise Quiet("a rebuild was started") from None
        hits = _answer(root, prompt, cfg, options)
    from ..text.render import memory_context

    block = memory_context(hits, prefix)
    # for the PreToolUse hook, and for the Stop hook's save prompts: Claude Code writes the
    # transcript lazily, so at Stop the turn's prompt may not be in it yet (tests/e2e)
    if (cfg["retrieval.tool_anchors"] and cfg["retrieval.file_anchors"]) or cfg["capture.save_prompts"]:
        from ..policy import memo

        memo.remember(data.get("session_id"), prompt, turns, [prefix + h.path for h in hits])
    if dense is _ABSENT:  # started after the answer: the new worker's start-up does not slow this prompt
        from ..semantic import client

        client.restart(root, client.session_parent())
    return block


def _answer(root, prompt: str, cfg, options: dict) -> list:
    """What to inject, from a read-only connection (a stale index is refreshed for next time)."""
    from .. import index
    from ..policy.inject import auto_inject

    conn = index.open_reader(root, busy_ms=1000)
    try:
        index.refresh(conn, root, note)
        return auto_inject(conn, prompt, cfg, **options)
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
