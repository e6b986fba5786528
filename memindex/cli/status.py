"""`memindex status`: counts, index size, last sync, staleness, watcher."""

from __future__ import annotations

import argparse
import os
from datetime import datetime, timezone
from typing import Any

from ..config import Config
from ..defaults import CATEGORIES, RECORD_STATUSES
from ._common import AddParser, emit_json, err


def register(add: AddParser) -> None:
    p = add("status", example="memindex status --json")
    p.set_defaults(handler=cmd_status)


def cmd_status(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Counts, index size, last sync, staleness."""
    from .. import index
    from ..index import health
    from ..index import reads, watched
    from ..store.files import refusals, walk
    from ..store.marker import watcher_pid
    from .main import EXIT_NO_INDEX

    path = index.index_path(root)
    info: dict[str, Any] = {"root": str(root), "index": str(path)}
    try:
        conn = index.open_reader(root)
    except index.IndexUnavailable as exc:
        info.update(ok=False, error=str(exc), files=len(walk(root)), refused=refusals(root, {}))
        if args.json:
            emit_json(info)
        else:
            print(f"root:    {root}\nindex:   unavailable\nfiles:   {info['files']}")
            _print_refused(info["refused"])
        err(str(exc))
        return EXIT_NO_INDEX
    with conn:
        counts: dict[str, dict[str, int]] = {c: {s: 0 for s in RECORD_STATUSES} for c in CATEGORIES}
        for category, status, n in reads.counts_by_status(conn):
            counts.setdefault(category, {}).setdefault(status, 0)
            counts[category][status] = n
        meta = index.get_meta(conn)
        invalid = reads.invalid_files(conn)
        changed, gone = 0, 0
        if not watched.is_current_asking_watcher(conn, root):  # the watcher, or one stat per file; the walk only when one moved
            from ..index.sync import pending

            changed, gone = pending(root, conn)
        summary = health.read(conn)
        doc_indexed, doc_skipped = reads.document_counts(conn)
    size = sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}"))
    last = meta.get("last_sync_ns")
    info.update(
        ok=True,
        counts=counts,
        memories=sum(sum(v.values()) for v in counts.values()),
        invalid=invalid,
        documents={"registered": cfg["documents.paths"], "indexed": doc_indexed, "not_indexed": doc_skipped},
        attention=health.counts(summary),
        refused=refusals(root, invalid),
        index_bytes=size,
        last_sync=_iso(last) if isinstance(last, int) else None,
        stale=bool(changed or gone),
        pending={"changed_or_new": changed, "removed": gone},
        watcher_pid=watcher_pid(root),
        worker=_worker(root),
        config={"source": cfg.source, "trust": cfg.trust, "asks_for_more": cfg.more, "ignored": cfg.ignored},
        use=_use(root, cfg),
    )
    if args.json:
        emit_json(info)
        return 0
    print(f"root:     {root}")
    print(f"index:    {info['index']} ({size / 1024:.0f} KiB)")
    print(f"synced:   {info['last_sync'] or 'never'}" + ("  (stale: run `memindex sync`)" if info["stale"] else "  (up to date)"))
    if info["stale"]:
        print(f"pending:  {changed} new or changed, {gone} removed")
    print(f"watcher:  {'running, pid ' + str(info['watcher_pid']) if info['watcher_pid'] else 'not running'}")
    print(f"worker:   {_worker_line(info['worker'])}")
    if info["worker"].get("runtime_note"):
        print(f"          {info['worker']['runtime_note']}")
    from .trust import status_line

    print(f"config:   {status_line(cfg, cfg.source is not None, cfg.trust)}")
    print(f"memories: {info['memories']}  ({len(invalid)} invalid files)")
    wrong = {k: n for k, n in info["attention"].items() if n and k != "invalid"}
    if wrong:
        print("attention: " + ", ".join(f"{n} {health.KINDS[k]}" for k, n in wrong.items()) + " (`memindex doctor`)")
    for category, by_status in counts.items():
        parts = ", ".join(f"{n} {s}" for s, n in by_status.items() if n)
        print(f"  {category:<16} {parts or '0'}")
    _print_documents(info["documents"])
    _print_refused(info["refused"])
    if info["use"] is not None:
        u = info["use"]
        print(f"use:      {u['memories_shown']} memories shown to the model, {u['memories_opened']} opened, "
              f"{u['shown_never_opened']} shown and never opened (your sessions; `memindex review`)")
    return 0


def _print_documents(docs: dict[str, Any]) -> None:
    """The project's documents indexed in place: what is registered, how many files of each
    kind are indexed, and every file that is not, with why (the first few)."""
    from ..text.render import shown_path

    if not docs["registered"] and not docs["indexed"] and not docs["not_indexed"]:
        return
    where = ", ".join(f"{shown_path(p)} ({k})" for p, k in sorted(docs["registered"].items())) or "none registered"
    total = sum(docs["indexed"].values())
    print(f"documents: {total} files indexed from {where}" + (f"; {len(docs['not_indexed'])} not indexed" if docs["not_indexed"] else ""))
    for kind, n in sorted(docs["indexed"].items()):
        print(f"  {kind:<16} {n}")
    for path, why in list(docs["not_indexed"].items())[:10]:
        print(f"  not indexed: {shown_path(path)}: {why}")
    if len(docs["not_indexed"]) > 10:
        print(f"  ... and {len(docs['not_indexed']) - 10} more (`memindex status --json`)")


def _use(root: str, cfg: Config) -> dict[str, Any] | None:
    """This user's use of the store (memindex/usage.py), or None when review.usage is off."""
    if not cfg["review.usage"]:
        return None
    from .. import usage

    uses = usage.counts(root)
    return {**usage.summary(uses), "folder": usage.folder(root)}


def _print_refused(refused: dict[str, str]) -> None:
    """What the owner and mode rule kept out of the index, and why."""
    from ..text.render import shown_path

    if refused:
        print(f"refused:  {len(refused)} (another user owns them or may write to them)")
    for rel, why in sorted(refused.items()):
        print(f"  {shown_path(rel)}: {why}")


def _worker(root: str) -> dict[str, Any]:
    """The resident semantic worker as it answers a ping (or its marker says, while it loads)."""
    from ..semantic import client

    moved = {"runtime_note": note} if (note := client.squatted()) else {}
    reply = client.ping(root, budget_s=1.0)
    if reply is not None:
        keys = ("pid", "model", "docs", "active_docs", "rss_mb", "started", "idle_exit_s", "requests", "socket", "vectors_note")
        return {"state": "running", **{k: reply.get(k) for k in keys}, **moved}
    pid = client.running_pid(root)
    return {"state": "starting" if pid else "not running", "pid": pid, **moved}


def _worker_line(w: dict[str, Any]) -> str:
    if w["state"] != "running":
        return f"starting, pid {w['pid']}" if w["pid"] else "not running"
    note = f" ({w['vectors_note']})" if w.get("vectors_note") else ""
    return (f"running, pid {w['pid']}, model {w['model']}, {w['docs']} vectors{note}, "
            f"RSS {w['rss_mb']:.0f} MiB, since {w['started']}")


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
