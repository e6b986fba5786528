"""SessionStart (refresh, what needs the user's attention, recent sessions if asked),
Stop (session capture, save prompts) and SessionEnd (the final capture)."""

from __future__ import annotations

from . import Quiet, _root_for, config_for, note

def on_session_start(data: dict) -> str:
    """SessionStart: refresh the index in the background; tell the user (not the model)
    what needs their attention, in every client's user channel (clients.render); optionally
    name the latest session summaries (passive recall, off by default: see
    docs/evaluation.md)."""
    root = _root_for(data.get("cwd"))
    from .. import index
    from ..index import freshen, health

    cfg = config_for(root)
    attention = None
    try:
        conn = index.open_reader(root, busy_ms=1000)
    except index.IndexTooNew as exc:
        attention = f"memindex: {exc}"
    except index.IndexUnavailable:
        freshen.build_missing_index(root, note)
    else:
        try:
            if data.get("source") != "compact":
                attention = "\n".join(m for m in (health.session_message(conn, root), _review_line(conn, root, cfg)) if m) or None
            due = _review_due(conn, cfg)
        finally:
            conn.close()
        freshen.spawn_sync(root, note)
        if due:
            _start_review(root, cfg)
    block = _session_start_block(root, data, cfg)
    if not attention:
        return block
    from .clients import Shown

    return Shown(attention, block)  # the file names are the repository's: for the user's eyes only


def _review_line(conn, root, cfg) -> str | None:
    """The review queue, in one line for the user (memindex/review/pending.py), or None."""
    from ..review import pending

    try:
        return pending.line(pending.counts(conn, root))
    except Exception as exc:  # an index of another build, a garbled record: never a reason to fail the hook
        note(f"review: {type(exc).__name__}: {exc}")
        return None


def _review_due(conn, cfg) -> bool:
    if not cfg["review.background"]:
        return False
    import time

    from ..review import pending

    return pending.due(conn, float(cfg["review.interval_s"]), time.time())


def _start_review(root, cfg) -> None:
    """One background `memindex review --refresh --no-sync` (the checks that need git; never
    on a prompt's path), at most once per review.interval_s per root; the sync started
    beside it walks the files, this one does not walk them again."""
    import os

    from ..errors import UnsafeFile
    from ..runtime import name_hash, private_dir
    from ..store import rootfs

    try:
        real = os.path.realpath(root).encode("utf-8", "surrogateescape")
        guard = os.path.join(private_dir(create=True), f"review-{name_hash(real)}.spawned")
        if rootfs.single_flight(guard, float(cfg["review.interval_s"])):
            from ..background import start_detached

            start_detached(root, "review", "--refresh", "--no-sync", "--quiet")
    except (OSError, UnsafeFile) as exc:
        note(f"no background review: {exc}")


def _session_start_block(root, data: dict, cfg) -> str:
    """The latest session summaries, when `retrieval.session_start.inject_recent` asks."""
    from .. import index

    if cfg["semantic.enabled"]:  # keep the model warm for this session's prompts
        from ..semantic import client

        client.start(root, client.session_parent())
    count = cfg["retrieval.session_start.inject_recent"]
    if count <= 0 or not cfg["retrieval.enabled"]:
        return ""
    from ..index.reading import read_index
    from ..store.paths import display_prefix
    from ..retrieval.query import latest
    from ..text.render import memory_context

    try:
        hits = read_index(root, cfg, note, lambda conn: latest(conn, "session_summary", count), build=False, refresh=False)
    except index.IndexUnavailable as exc:
        note(str(exc))
        return ""
    return memory_context(hits, display_prefix(root))


def capture_session(root, data: dict, cfg) -> None:
    """Session capture (memindex.capture): the session's summary is rewritten by a
    detached job; this only asks for it (coalesced per session, returns at once)."""
    from ..capture.schedule import request_capture
    from ..errors import UnsafeFile

    try:
        # the job also counts the memories the model opened (review.usage), capture or not
        request_capture(root, data, bool(cfg["capture.enabled"] or cfg["review.usage"]))
    except (OSError, UnsafeFile) as exc:
        note(f"no session capture: {exc}")


def on_stop(data: dict) -> str:
    """Stop (after every turn): the session's summary is brought up to date in the
    background (a session killed before its end still has one); then at most one save
    prompt for what the latest turn decided, fixed, found, deferred or was asked to
    remember (the only output; the stop goes on without it)."""
    root = _root_for(data.get("cwd"))
    cfg = config_for(root)  # once for both
    capture_session(root, data, cfg)
    return save_prompt(data, cfg)


def on_session_end(data: dict) -> str:
    """SessionEnd: the final capture (coalesced with the last Stop's)."""
    root = _root_for(data.get("cwd"))
    capture_session(root, data, config_for(root))
    return ""


def save_prompt(data: dict, cfg) -> str:
    """The triage's block decision, or "" (capture/triage.py: never after a blocked stop,
    `stop_hook_active`). Off with `capture.save_prompts: false`."""
    if not cfg["capture.save_prompts"]:
        return ""
    from ..capture import asked
    from ..capture.triage import stop_decision

    try:
        return stop_decision(data, scorer=bool(cfg["capture.save_prompt_scorer"]))
    except asked.Unavailable as exc:
        raise Quiet(f"no save prompt: {exc}") from None
