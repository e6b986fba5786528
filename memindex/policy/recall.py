"""Recall as data, for every adapter: ranked search, one memory read whole, the latest
session summaries, and what the prompt hook would inject (explain).

`memindex search|explain` (memindex/cli/search.py) and the MCP server (memindex/mcp/)
are thin shells over these functions: each opens the index through the CLI's freshness
rule (an incremental sync first when the O(1) check says files changed, unless told
not to), and returns hits or JSON-ready dicts; the shells only format them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

TYPE_CHECKING = False  # annotations only: `search` never imports typing (or contextlib)
if TYPE_CHECKING:
    from typing import Any

    from ..index.reader import Watch
    from .door import PromptInput

from ..config import RULE_THRESHOLDS, Config
from ..defaults import CAPTURE_TAG
from ..retrieval.hits import Hit
from ..text.render import shown
from ..text.words import sanitize_tag, sanitize_title

RULE_SETTINGS = tuple(k.removeprefix("retrieval.") for k in RULE_THRESHOLDS if k.startswith("retrieval."))  # explain shows them


def warn(message: str) -> None:
    """One `memindex: ...` line on stderr (the CLI's terminal, the MCP client's log)."""
    print(f"memindex: {message}", file=sys.stderr)


def search_hits(
    root: str,
    cfg: Config,
    text: str,
    *,
    limit: int | None = None,
    categories: Sequence[str] = (),
    tag: str | None = None,
    include_inactive: bool = False,
    allow_sync: bool = True,
    lexical: bool = False,
    progress: bool = False,
    watch: Watch | None = None,
    record: str | None = None,
) -> list[Hit]:
    """Ranked memories for a query: BM25, fused with the dense ranking when
    `semantic.enabled` (and not `lexical`). `limit` defaults to retrieval.search_limit.
    Captured session summaries come after the memories someone wrote on purpose: they
    repeat the session's own prompts, so they match them best (the prompt hook leaves
    them out altogether). `watch`: a resident reader's own (`index.reader`). `record`: the use
    log's channel the answer is shown to a model by (`search`, `mcp`; memindex/usage.py), when
    review.usage is on."""
    from ..index.reader import fresh_reader
    from ..index.reading import read_index
    from ..retrieval.query import Filters, Params, search

    filters = Filters.from_config(cfg, categories=tuple(categories), tag=tag, include_inactive=include_inactive)
    limit = limit if limit is not None else cfg["retrieval.search_limit"]

    def use(conn) -> list[Hit]:
        if not cfg["semantic.enabled"] or lexical:
            return search(conn, text, limit=limit, params=Params.from_config(cfg), filters=filters, related=True)
        embedded = _embedded(conn, root, cfg, allow_sync=allow_sync, progress=progress)
        try:
            return _fused(embedded, root, cfg, text, limit, Params.from_config(cfg), filters)
        finally:
            if embedded is not conn:
                embedded.close()

    hits = read_index(root, cfg, warn, use, reader=fresh_reader(root, cfg, allow_sync=allow_sync, watch=watch))
    hits = sorted(hits, key=lambda h: CAPTURE_TAG in h.tags)  # stable: each part keeps its order
    if record and cfg["review.usage"]:
        from .. import usage

        usage.record_shown(root, None, record, [h.path for h in hits])
    return hits


def _embedded(conn, root: str, cfg: Config, allow_sync: bool, progress: bool):
    """The reader again after a sync when memories have no vector of the configured model
    yet (semantic search just turned on, or an embedding run that stopped): the sync embeds
    them, after downloading a hub model that is not here yet. If another writer is busy,
    search with the vectors there are."""
    from ..index.reader import sync_then_open
    from ..semantic.vectors import needs_embedding

    if not allow_sync or not needs_embedding(conn, str(cfg["semantic.model"]), fetch=True):
        return conn
    conn.close()
    return sync_then_open(root, cfg, "could not embed the memories first", "searching the vectors there are", progress)


def _fused(conn, root: str, cfg: Config, text: str, limit: int, params, filters) -> list[Hit]:
    """BM25 and dense rankings fused (`semantic.fusion`): the dense one from the resident
    worker, else from the model loaded here (one line on stderr says so), else none."""
    from ..errors import ModelError, ModelNotFound
    from ..semantic.fusion import InProcess, Worker, fused_search
    from ..semantic.matrix import skipped_note

    worker = Worker(root, budget_s=1.0)

    def dense(text: str, allowed, include_inactive: bool, k: int):
        ranked = worker(text, allowed, include_inactive, k)
        if ranked is not None:
            if worker.skipped:
                warn(f"semantic worker: {skipped_note(worker.skipped)}")
            return ranked
        from ..index.vectors import count_missing
        from ..semantic.vectors import get_embedder

        started = time.perf_counter()
        try:
            embedder = get_embedder(str(cfg["semantic.model"]))
        except (ModelNotFound, ModelError, ImportError) as exc:
            warn(f"semantic search unavailable, BM25 only: {exc}")
            return None
        channel = InProcess(conn, embedder)
        ranked = channel(text, allowed, include_inactive, k)
        loaded = f"no semantic worker: loaded the model in this process ({time.perf_counter() - started:.1f} s)"
        if ranked is None:
            warn(channel.problem + ", BM25 only" if channel.problem else loaded)
        elif channel.matrix.skipped:  # the problem first: it is what the line is about
            warn(f"{skipped_note(channel.matrix.skipped)}; {loaded}")
        else:
            missing = count_missing(conn)
            warn(loaded + (f"; {missing} memories have no vector yet (run `memindex sync`)" if missing else ""))
        return ranked

    return fused_search(conn, text, dense, limit=limit, params=params, filters=filters)[0]


def recent_sessions(root: str, cfg: Config, limit: int, allow_sync: bool = True, watch: Watch | None = None,
                    record: str | None = None) -> list[Hit]:
    """The latest active session summaries, newest first (what SessionStart can inject);
    `record` as for `search_hits`."""
    from ..index.reader import fresh_reader
    from ..index.reading import read_index
    from ..retrieval.query import latest

    hits = read_index(root, cfg, warn, lambda conn: latest(conn, "session_summary", limit),
                      reader=fresh_reader(root, cfg, allow_sync=allow_sync, watch=watch))
    if record and cfg["review.usage"]:
        from .. import usage

        usage.record_shown(root, None, record, [h.path for h in hits])
    return hits


def read_memory(root: str, cfg: Config, path: str, record: str | None = None) -> dict[str, Any]:
    """One memory whole: {path, sha256, memory}. `path` is named as search shows it (or
    `decisions/x.json`, or absolute); it must be a file in a category folder inside the
    root (write.locate's rule: links out of the root are refused), read bounded.
    `record`: the use log's channel of this open (`mcp-get`), for a client whose opens no
    transcript shows (outside a Claude Code session: inside one, the capture job counts
    them from the transcript, once)."""
    from ..errors import MemoryFileError, MemoryNotFound
    from ..store.paths import project_of
    from ..store.files import parse_json, read_bytes
    from ..write.locate import display, resolve_path
    from ..write.validate import sha256_hex

    rel = resolve_path(root, path, cwd=project_of(root))
    try:
        data, _ = read_bytes(root, rel, int(cfg["index.max_file_bytes"]))
        memory = parse_json(data)
    except MemoryFileError as exc:
        raise MemoryNotFound(f"{display(root, rel)}: {exc}") from None
    if record and cfg["review.usage"]:
        from .. import usage

        if not usage.in_assistant_session():
            import uuid

            usage.record_opens(root, None, [(uuid.uuid4().hex, record, rel)])
    return {"path": display(root, rel), "sha256": sha256_hex(data), "memory": memory}


def explain(
    root: str, cfg: Config, prompt: str, file: str | None = None, allow_sync: bool = True, watch: Watch | None = None,
    hook_input: PromptInput | None = None,
) -> dict[str, Any]:
    """What the prompt hook would inject for `prompt` (or, with `file`, what the
    PreToolUse hook would add when the model opens it), and the rule that kept or dropped
    each memory considered: a JSON-ready dict. `hook_input`: the hook's own input (its
    transcript and session read as the hook reads them: `policy.door`), in place of
    `prompt` and `file`; then exactly what the hook decides for it."""
    from .door import ASKED, PromptInput, decide_file, decide_prompt

    exact = hook_input is not None
    inp = hook_input if exact else PromptInput(prompt, file=file)
    file = inp.file
    from ..index.reader import fresh_reader

    reader = fresh_reader(root, cfg, allow_sync=allow_sync, watch=watch)
    refused = lambda conn, answer: _refusals(conn, root, answer)  # noqa: E731
    if file is not None:
        decided = decide_file(root, cfg, inp, warn, reader=reader, also=refused, explain=not exact)
        semantic = "not used by the PreToolUse hook"
    else:  # the hook asks the worker; so does explain (it never starts one)
        decided = decide_prompt(root, cfg, inp, warn, budget_s=1.0, reader=reader, also=refused, explain=True)
        semantic = {ASKED: "the worker answered" if decided.outcome is not None and decided.outcome.dense is not None
                    else "the worker did not answer in time: lexical rules alone"}.get(
            decided.worker, "no worker running: the lexical rules alone (as the hook without it)")
        if not cfg["semantic.enabled"]:
            semantic = "off (semantic.enabled is false)"
    from .inject import Outcome

    outcome, notes, refused, prefix, prompt = decided.outcome or Outcome(), decided.notes, decided.refused, \
        decided.prefix, decided.prompt
    sources = {d.path: source_of(root, d.path, int(cfg["index.max_file_bytes"])) for d in outcome.decisions}
    uses: dict = {}
    if cfg["review.usage"]:  # this user's use of each memory (memindex/usage.py)
        from ..usage import counts

        uses = counts(root)
    calibrated = cfg["retrieval.match_strategy"] == "calibrated" and file is None
    names = ("match_strategy", "max_inject", *(("min_confidence",) if calibrated else RULE_SETTINGS), "intents",
             "file_anchors", *(("tool_anchors",) if file is not None else ()))
    settings = {k: cfg[f"retrieval.{k}"] for k in names}
    if calibrated and settings["min_confidence"] is None:  # the shipped model's own threshold
        from ..relevance import load

        settings["min_confidence"] = load("semantic" if outcome.dense is not None else "lexical").min_confidence
    return {
        "prompt": prompt, **({"file": file} if file is not None else {}),
        **({"turns": decided.turns} if exact else {}),  # the transcript's earlier turns the prompt was read with
        "intent": outcome.intent,
        "settings": settings, "semantic": semantic,
        "injected": [shown(prefix, h.path) or "" for h in outcome.hits],
        "notes": {shown(prefix, p) or "": n for p, n in notes.items()},
        "refused": {prefix + rel: why for rel, why in refused.items()},
        "considered": [
            {"path": shown(prefix, d.path) or "", "kept": d.kept, "rule": d.rule, "score": round(d.score, 4),
             "coverage": None if d.coverage is None else round(d.coverage, 3), "source": sources[d.path],
             "probability": None if d.probability is None else round(d.probability, 3),
             "use": _use(uses, d.path)}
            for d in outcome.decisions
        ],
    }


def _refusals(conn, root: str, answer) -> None:
    """The memory files the index refused: never considered, the index does not hold them."""
    from ..index.reads import invalid_files
    from ..store.files import refusals

    answer.refused = refusals(root, invalid_files(conn))


def source_of(root: str, path: str, max_bytes: int) -> dict[str, str] | None:
    """Where a memory came from (its `source`), or for a document's section the document
    itself: {kind: "document", path, section}."""
    if path.startswith("@"):
        file, _, anchor = path[1:].rpartition("#")
        return {"kind": "document", "path": file, **({"section": anchor} if anchor else {})}
    from ..store.files import read_source

    return read_source(root, path, max_bytes)


def _use(uses: dict, path: str) -> dict[str, int] | None:
    from ..usage import key

    use = uses.get(key(path))
    return None if use is None else {"shown": use.shown, "opened": use.opened}


# --- how hits are shown ---------------------------------------------------------------


def hit_json(hit: Hit, prefix: str) -> dict[str, object]:
    return {
        "path": shown(prefix, hit.path) or "",
        "id": hit.id,
        "category": hit.category,
        "title": sanitize_title(hit.title),
        "tags": hit.tags,
        "updated_at": hit.updated_at,
        "record_status": hit.record_status,
        "score": round(hit.score, 4),
    }


def format_hits(hits: Sequence[Hit], prefix: str) -> str:
    """The compact list an assistant reads before opening files (the skill's and the MCP
    search tool's progressive disclosure: titles and tags first, the file on demand)."""
    lines = []
    for rank, hit in enumerate(hits, 1):
        label = hit.category.upper() + ("" if hit.record_status == "active" else f", {hit.record_status}")
        tags = ",".join(t for t in (sanitize_tag(t) for t in hit.tags) if t)
        date = (hit.updated_at or "")[:10] or "-"
        lines.append(f"{rank}. [{label}] {sanitize_title(hit.title)} | #{tags} | {date} | {shown(prefix, hit.path) or ''}")
    return "\n".join(lines)

