"""Real project documents as judged sets: public ADR, runbook and docs collections indexed in
place, with prompts written blind (evalsets/docs/<slug>/queries.json), against bm25s over
each document's raw text in the same run.

A collection's files live in the shared data folder (`../shared/data/docs/<slug>/`, with
MANIFEST.json naming each one's repository, commit, licence, kind and folders), never in
this repository; the prompts and judgments (our own) are in evalsets/docs/. Each set keeps
a held-out slice (sets.is_holdout); the collections in FINAL are measured once, at the end.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from ir_measures import R, nDCG

from .metrics import evaluate
from .sets import REPO, is_holdout

DOCS_DATA = next((p for p in (REPO.parent / "shared" / "data" / "docs", REPO.parent.parent / "shared" / "data" / "docs")
                  if p.exists()), REPO.parent / "shared" / "data" / "docs")
QUERIES = REPO / "evalsets" / "docs"
FINAL = ("simpler-grants-adr", "openshift-odf-runbooks")  # measured once, after every choice
SEARCH = [R(rel=2) @ 5, R @ 10, nDCG @ 10]
KINDS = ("task", "question", "identifier", "follow-up", "unrelated")


@dataclass
class DocSet:
    slug: str
    kind: str  # adr | runbook | docs
    folder: Path  # the collection's files, as in its repository
    registered: dict[str, str]  # documents.paths for the project: folder -> kind
    queries: list[dict]

    def files(self) -> dict[str, str]:
        """Every Markdown file of the collection -> its raw text (the baseline's corpus)."""
        out = {}
        for path in sorted(self.folder.rglob("*")):
            if path.is_file() and path.suffix.lower() in (".md", ".markdown"):
                out[path.relative_to(self.folder).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
        return out


def manifest() -> list[dict]:
    path = DOCS_DATA / "MANIFEST.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def available(include_final: bool = False) -> list[str]:
    """The collections with their data and their prompts here (FINAL ones only if asked)."""
    return [c["slug"] for c in manifest()
            if (QUERIES / c["slug"] / "queries.json").exists() and (include_final or c["slug"] not in FINAL)]


def load(slug: str) -> DocSet:
    entry = next(c for c in manifest() if c["slug"] == slug)
    queries = json.loads((QUERIES / slug / "queries.json").read_text(encoding="utf-8"))
    folders = sorted(entry["folders"], key=len)
    top = [f for f in folders if not any(f != g and f.startswith(g.rstrip("/") + "/") for g in folders)]
    if "." in top:
        top = ["."]
    kind = entry["kind"]
    registered = {("" if f == "." else f) or ".": kind for f in top}
    return DocSet(slug, kind, DOCS_DATA / slug, registered, queries)


def slice_of(ds: DocSet, which: str) -> list[dict]:
    """"dev", "held-out" or "all" of a set's queries."""
    if which == "all":
        return list(ds.queries)
    return [q for q in ds.queries if is_holdout(ds.slug, q["id"]) == (which == "held-out")]


def build_project(ds: DocSet, dest: Path, memories: Path | None = None) -> Path:
    """A project holding the collection's files where its repository has them, registered
    in its memory-config.json, and (optionally) a store of memory files beside them. Returns
    the memory root (not synced)."""
    shutil.copytree(ds.folder, dest, dirs_exist_ok=True)
    root = dest / ".claude" / "memory"
    root.mkdir(parents=True, exist_ok=True)
    if memories is not None:
        shutil.copytree(memories, root, dirs_exist_ok=True)
    (root / "memory-config.json").write_text(json.dumps({"documents": {"paths": ds.registered}}))
    return root


def file_of(path: str) -> str:
    """The collection file an index row's path names (`@docs/adr/x.md#decision` -> `docs/adr/x.md`)."""
    return path[1:].rpartition("#")[0] if path.startswith("@") else path


def search_metrics(queries: list[dict], ranks: dict[str, list[str]]) -> dict[str, float]:
    qrels = {q["id"]: q["judgments"] for q in queries if q["judgments"]}
    run = {qid: {p: 100.0 - i for i, p in enumerate(ranks.get(qid, []))} for qid in qrels}
    if not qrels:
        return {"R2@5": 0.0, "R@10": 0.0, "nDCG@10": 0.0}
    m = evaluate(qrels, run, SEARCH)
    return {"R2@5": m["R(rel=2)@5"], "R@10": m["R@10"], "nDCG@10": m["nDCG@10"]}


def inject_metrics(queries: list[dict], injected: dict[str, list[str]]) -> dict[str, float]:
    """Precision of what was injected, recall of the grade-2 documents, share of unrelated
    prompts that got anything."""
    got = rel = must = hit = neg = neg_hit = 0
    for q in queries:
        inj = injected.get(q["id"], [])
        if not q["judgments"]:
            neg += 1
            neg_hit += bool(inj)
            continue
        got += len(inj)
        rel += sum(1 for p in inj if q["judgments"].get(p, 0) >= 1)
        g2 = [p for p, g in q["judgments"].items() if g >= 2]
        must += len(g2)
        hit += sum(1 for p in g2 if p in inj)
    return {"precision": rel / got if got else 0.0, "recall_g2": hit / must if must else 0.0,
            "unrelated": neg_hit / neg if neg else 0.0, "n_unrelated": neg, "injected": got}


def bm25s_ranks(ds: DocSet, queries: list[dict], k: int = 10) -> dict[str, list[str]]:
    """bm25s over each file's raw text (English stop words, Snowball stemmer): the baseline.
    A follow-up is asked with its transcript's turns before it, as the hook enriches it."""
    from .beir import run_bm25s

    files = ds.files()
    corpus = {p: ("", text) for p, text in files.items()}
    asked = {q["id"]: " ".join([*q.get("transcript", []), q["query"]]) if q.get("kind") == "follow-up" else q["query"]
             for q in queries}
    _, run, _ = run_bm25s(corpus, asked, k)
    return {qid: [p for p, _ in sorted(scores.items(), key=lambda kv: -kv[1])][:k] for qid, scores in run.items()}


@dataclass
class Variant:
    """One way of running memindex on a set: settings (memory-config.json's shape) and
    ranking knobs (retrieval.query.Params)."""

    name: str
    config: dict | None = None
    params: dict | None = None


DEFAULT = Variant("memindex (defaults)")
RULES = Variant("memindex, hand-set rules", {"retrieval": {"match_strategy": "fts5_bm25"}})


def run_memindex(ds: DocSet, queries: list[dict], variants: list[Variant], tmp: Path) -> dict[str, dict]:
    """For each variant: the top-10 documents `memindex search` ranks and the documents the
    prompt hook's policy injects, per query (in process, on one index built by sync)."""
    import time

    from memindex import index
    from memindex.config import parse_config
    from memindex.index.sync import sync
    from memindex.policy.inject import decide
    from memindex.retrieval.hits import collapse
    from memindex.retrieval.query import Filters, Params, search

    root = build_project(ds, tmp / ds.slug)
    base = {"documents": {"paths": ds.registered}}
    started = time.perf_counter()
    report = sync(root, parse_config(base))
    built_s = time.perf_counter() - started
    out: dict[str, dict] = {"_build": {"seconds": built_s, "report": report.documents}}
    conn = index.open_reader(root)
    try:
        for v in variants:
            cfg = parse_config(_merge(base, v.config or {}))
            params = Params.from_config(cfg).replace(**(v.params or {}))
            ranks, injected = {}, {}
            for q in queries:
                turns = list(q.get("transcript") or [])
                text = " ".join([*turns[-3:], q["query"]]) if q.get("kind") == "follow-up" else q["query"]
                hits = search(conn, text, limit=10, params=params, filters=Filters.from_config(cfg), related=True)
                ranks[q["id"]] = [file_of(h.path) for h in collapse(hits)][:10]
                outcome = decide(conn, q["query"], cfg, turns=turns, params=params)
                injected[q["id"]] = list(dict.fromkeys(file_of(h.path) for h in outcome.hits))
            out[v.name] = {"rank": ranks, "inject": injected}
    finally:
        conn.close()
    return out


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def by_kind(queries: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for q in queries:
        out.setdefault(q["kind"], []).append(q)
    return out


def store(ds: DocSet, tmp: Path):  # type: ignore[no-untyped-def]
    """The set as a `sets.Store` (its project built under `tmp`), judgments on files."""
    from .sets import Store

    root = build_project(ds, tmp / ds.slug)
    return Store(ds.slug, ds.slug, root, ds.queries, {"documents": {"paths": ds.registered}})


def run_hook(ds: DocSet, queries: list[dict], tmp: Path) -> dict[str, list[str]]:
    """What the real prompt hook (the command hooks/hooks.json gives Claude Code, a new
    process per prompt, JSON on stdin) injects for each query, as collection files; a
    follow-up's earlier prompts go in a transcript the hook reads, as Claude Code writes it."""
    import subprocess

    from memindex.config import parse_config
    from memindex.index.sync import sync

    from .bench import hook_command
    from .hookrun import block_paths
    from .memory import earlier_turns

    project = tmp / f"hook-{ds.slug}"
    root = build_project(ds, project)
    sync(root, parse_config({"documents": {"paths": ds.registered}}))
    command = hook_command(REPO)
    out: dict[str, list[str]] = {}
    for q in queries:
        payload = {"prompt": q["query"], "cwd": str(project), "session_id": f"eval-{q['id']}",
                   "hook_event_name": "UserPromptSubmit"}
        if q.get("transcript"):
            path = tmp / f"{q['id']}.jsonl"
            earlier_turns(path, q)
            payload["transcript_path"] = str(path)
        done = subprocess.run(command, input=json.dumps(payload).encode(), capture_output=True, timeout=60, cwd=project)
        out[q["id"]] = list(dict.fromkeys(p.rpartition("#")[0] or p for p in block_paths(done.stdout.decode(), ".claude/memory/")))
    return out
