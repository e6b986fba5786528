"""`memindex search`: ranked memories for a query, as a compact list or JSON."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..config import Config
from ..defaults import CATEGORIES, CATEGORY_FOLDER, FILE_ANCHOR_MAX
from ..hits import Hit
from ..text import sanitize_tag, sanitize_title
from ._common import AddParser, clean_arg, emit_json, err, positive_int

EXPLAIN_INTENT = {  # what explain says of an intent that is no kind of memory
    "resume": " (the prompt asks to resume earlier work: the latest session summary on its topic)",
    "general": " (a question about the world, not the project: only a memory holding every word of its topic)",
}


def register(add: AddParser) -> None:
    p = add("search", example='memindex search "stripe webhook 400" -c runbook')
    p.add_argument("query", nargs="+", help="free text; use -- before a query that starts with '-'")
    p.add_argument("--limit", "-n", type=positive_int, default=None, help="at most N results (default 10)")
    p.add_argument("--category", "-c", action="append", choices=CATEGORIES, help="only this category (repeatable)")
    p.add_argument("--tag", "-t", help="only memories with this tag")
    p.add_argument("--include-inactive", action="store_true", help="include retired and archived memories")
    p.add_argument("--no-sync", action="store_true", help="do not sync a stale index first")
    p.add_argument("--lexical", action="store_true", help="BM25 only, even with semantic.enabled")
    p.set_defaults(handler=cmd_search)
    p = add("explain", example='memindex explain "why do stripe webhooks fail with 400?"')
    p.add_argument("prompt", nargs="+", help="the prompt, as the hook would see it")
    p.add_argument("--file", metavar="PATH",
                   help="what the PreToolUse hook (rule 10, retrieval.tool_anchors) would add when the model "
                        "opens PATH while working on this prompt")
    p.add_argument("--no-sync", action="store_true", help="do not sync a stale index first")
    p.set_defaults(handler=cmd_explain)


def cmd_search(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Ranked memories for a query: a compact list, or JSON."""
    from ..paths import display_prefix
    from ..query import Filters, Params, search
    from ..reader import open_fresh_reader

    text = clean_arg(" ".join(args.query)) or ""
    conn = open_fresh_reader(root, cfg, allow_sync=not args.no_sync)
    try:
        filters = Filters.from_config(
            cfg,
            categories=tuple(args.category or ()),
            tag=clean_arg(args.tag),
            include_inactive=args.include_inactive,
        )
        limit = args.limit if args.limit is not None else cfg["retrieval.search_limit"]
        if cfg["semantic.enabled"] and not args.lexical:
            conn = _embedded(conn, root, cfg, allow_sync=not args.no_sync, progress=not (args.json or args.quiet))
            hits = _fused(conn, root, cfg, text, limit, Params.from_config(cfg), filters)
        else:
            hits = search(conn, text, limit=limit, params=Params.from_config(cfg), filters=filters, related=True)
        attention = _attention(conn, root)
    finally:
        conn.close()
    prefix = display_prefix(root)
    if args.json:
        emit_json([hit_json(h, prefix) for h in hits])
    elif hits:
        print(format_hits(hits, prefix))
    if attention:
        err(attention)
    return 0


def _attention(conn, root: str) -> str | None:
    """The one stderr line naming memory files that are invalid, ignored, misplaced,
    duplicated or renamed by hand (`health.line`), or None."""
    from .. import health
    from ..paths import display_prefix

    return health.line(health.read(conn), display_prefix(root))


def _embedded(conn, root: str, cfg: Config, allow_sync: bool, progress: bool):
    """The reader again after a sync when memories have no vector of the configured model
    yet (semantic search just turned on, or an embedding run that stopped): the sync embeds
    them, after downloading a hub model that is not here yet. If another writer is busy,
    search with the vectors there are."""
    from ..reader import sync_then_open
    from ..semantic.vectors import needs_embedding

    if not allow_sync or not needs_embedding(conn, str(cfg["semantic.model"]), fetch=True):
        return conn
    conn.close()
    return sync_then_open(root, cfg, "could not embed the memories first", "searching the vectors there are", progress)


def _fused(conn, root: str, cfg: Config, text: str, limit: int, params, filters) -> list[Hit]:
    """BM25 and dense rankings fused (`semantic.fusion`): the dense one from the resident
    worker, else from the model loaded here (one line on stderr says so), else none."""
    import time

    from ..errors import ModelError, ModelNotFound
    from ..semantic.fusion import InProcess, Worker, fused_search
    from ..semantic.matrix import skipped_note

    worker = Worker(root, budget_s=1.0)

    def dense(text: str, allowed, include_inactive: bool, k: int):
        ranked = worker(text, allowed, include_inactive, k)
        if ranked is not None:
            if worker.skipped:
                err(f"semantic worker: {skipped_note(worker.skipped)}")
            return ranked
        from ..index.vectors import count_missing
        from ..semantic.vectors import get_embedder

        started = time.perf_counter()
        try:
            embedder = get_embedder(str(cfg["semantic.model"]))
        except (ModelNotFound, ModelError, ImportError) as exc:
            err(f"semantic search unavailable, BM25 only: {exc}")
            return None
        channel = InProcess(conn, embedder)
        ranked = channel(text, allowed, include_inactive, k)
        loaded = f"no semantic worker: loaded the model in this process ({time.perf_counter() - started:.1f} s)"
        if ranked is None:
            err(channel.problem + ", BM25 only" if channel.problem else loaded)
        elif channel.matrix.skipped:  # the problem first: it is what the line is about
            err(f"{skipped_note(channel.matrix.skipped)}; {loaded}")
        else:
            missing = count_missing(conn)
            err(loaded + (f"; {missing} memories have no vector yet (run `memindex sync`)" if missing else ""))
        return ranked

    return fused_search(conn, text, dense, limit=limit, params=params, filters=filters)[0]


def cmd_explain(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """What the prompt hook would inject for a prompt, and the rule that kept or dropped
    each memory it considered, with the setting to change."""
    from ..inject import decide, on_file, worker_view
    from ..prompt import dense_text
    from ..paths import display_prefix
    from ..reader import open_fresh_reader

    prompt = clean_arg(" ".join(args.prompt)) or ""
    file = clean_arg(args.file)
    conn = open_fresh_reader(root, cfg, allow_sync=not args.no_sync)
    dense, semantic = None, "off (semantic.enabled is false)"
    if file is not None:
        semantic = "not used by the PreToolUse hook"
    elif cfg["semantic.enabled"]:  # the hook asks the worker; so does explain (it never starts one)
        from ..defaults import DENSE_K
        from ..semantic import client

        pending = client.begin(root, dense_text(prompt, [], cfg), k=DENSE_K, budget_s=1.0)
        dense = None if pending is None else worker_view(pending)
        semantic = "the worker was asked" if pending else "no worker running: the lexical rules alone (as the hook without it)"
    try:
        outcome = on_file(conn, file, prompt, cfg) if file is not None else decide(conn, prompt, cfg, dense=dense)
        attention = _attention(conn, root)
    finally:
        conn.close()
    if attention:
        err(attention)
    if dense is not None:
        semantic = "the worker answered" if outcome.dense is not None else "the worker did not answer in time: lexical rules alone"
    prefix = display_prefix(root)
    settings = {k: cfg[f"retrieval.{k}"] for k in (
        "max_inject", "relative_cutoff", "min_coverage", "min_relative_coverage", "intents", "file_anchors",
        *(("tool_anchors",) if file is not None else ()),
    )}
    if args.json:
        emit_json({
            "prompt": prompt, **({"file": file} if file is not None else {}), "intent": outcome.intent, "settings": settings, "semantic": semantic,
            "injected": [prefix + h.path for h in outcome.hits],
            "considered": [
                {"path": prefix + d.path, "kept": d.kept, "rule": d.rule, "score": round(d.score, 4),
                 "coverage": None if d.coverage is None else round(d.coverage, 3)}
                for d in outcome.decisions
            ],
        })
        return 0
    print("settings: " + ", ".join(f"retrieval.{k}={v}" for k, v in settings.items()))
    print(f"semantic: {semantic}")
    kind = CATEGORY_FOLDER.get(outcome.intent or "")
    if outcome.intent:
        asked = f" (the prompt asks for this kind: only {kind}/ is considered)" if kind else EXPLAIN_INTENT.get(outcome.intent, "")
        print(f"intent:   {outcome.intent}{asked}")
    if file is not None and not cfg["retrieval.tool_anchors"]:
        print("hook:     off (retrieval.tool_anchors is false): this is what it would add if turned on")
    if not outcome.decisions and file is not None:
        print(f"nothing considered: no active memory's related_files name {file} (or more than "
              f"{FILE_ANCHOR_MAX} do), or file anchors are off")
    elif not outcome.decisions:
        why = f"no memory in {kind}/ shares the prompt's topic words" if kind else (
            "no memory shares the prompt's words, or the prompt is too short, or injection is off")
        print("nothing considered: " + why)
    for d in sorted(outcome.decisions, key=lambda d: (not d.kept, -d.score)):
        cov = "-" if d.coverage is None else f"{d.coverage:.2f}"
        score = "      -" if file is not None else f"{d.score:7.3f}"  # rule 10 ranks by coverage alone
        print(f"{'INJECT' if d.kept else 'drop  '}  score {score}  coverage {cov:>4}  {prefix}{d.path}\n        {d.rule}")
    print(f"injected: {len(outcome.hits)}")
    return 0


def hit_json(hit: Hit, prefix: str) -> dict[str, object]:
    return {
        "path": prefix + hit.path,
        "id": hit.id,
        "category": hit.category,
        "title": sanitize_title(hit.title),
        "tags": hit.tags,
        "updated_at": hit.updated_at,
        "record_status": hit.record_status,
        "score": round(hit.score, 4),
    }


def format_hits(hits: Sequence[Hit], prefix: str) -> str:
    """The compact list an assistant reads before opening files."""
    lines = []
    for rank, hit in enumerate(hits, 1):
        label = hit.category.upper() + ("" if hit.record_status == "active" else f", {hit.record_status}")
        tags = ",".join(t for t in (sanitize_tag(t) for t in hit.tags) if t)
        date = (hit.updated_at or "")[:10] or "-"
        lines.append(f"{rank}. [{label}] {sanitize_title(hit.title)} | #{tags} | {date} | {prefix}{hit.path}")
    return "\n".join(lines)
