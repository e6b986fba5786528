"""Retrieval quality of memindex on a BEIR collection, against a reference BM25 (bm25s)
(scripts/eval_beir.py is the command).

Each document becomes a memory file (title -> title, text -> body) in a temporary store,
which `memindex` syncs; every test query runs through the product's own search (top 100)
with the product's defaults. Prints nDCG@10, Recall@100, MAP@100 and queries/s.
"""

from __future__ import annotations

import csv
import json
import tempfile
import time
from pathlib import Path

from memindex import index
from memindex.config import Config
from memindex.retrieval.query import Params, search
from memindex.index.sync import sync

from .metrics import evaluate, table, write_memory

HEADLINE = ["nDCG@10", "R@100", "AP@100"]


def load_beir(folder: Path, split: str = "test"):
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            corpus[d["_id"]] = (d.get("title") or "", d.get("text") or "")
    queries = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t")
        next(reader)
        for qid, did, score in reader:
            qrels.setdefault(qid, {})[did] = int(score)
    queries = {q: t for q, t in queries.items() if q in qrels}
    return corpus, queries, qrels


def doc_id(did: str) -> str:
    return "doc-" + "".join(ch if ch.isalnum() else "-" for ch in did.lower())


def build_store(root: Path, corpus: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Write one memory per document; returns memory id -> BEIR doc id."""
    back = {}
    for did, (title, text) in corpus.items():
        mid = doc_id(did)
        back[mid] = did
        write_memory(root, "decisions", mid, {
            "schema_version": "1.0", "category": "decision", "id": mid,
            "title": title, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
            "tags": [], "content": {"status": "accepted", "context": text, "decision": ""},
            "related_files": [], "confidence": 1.0, "record_status": "active", "changes": [],
            "times_updated": 0, "retired_at": None, "retired_reason": None,
            "archived_at": None, "archived_reason": None,
        })
    return back


def run_memindex(root: Path, queries: dict[str, str], back: dict[str, str], params: Params, k: int = 100):
    conn = index.open_reader(root)
    run: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for qid, text in queries.items():
        hits = search(conn, text, limit=k, params=params, related=True)  # as `memindex search` runs it
        run[qid] = {back[h.id]: h.score for h in hits}
    elapsed = time.perf_counter() - started
    conn.close()
    return run, len(queries) / elapsed


def run_fused(root: Path, queries: dict[str, str], back: dict[str, str], k: int = 100, method: str = "minmax"):
    """Search as `memindex search` runs it with `semantic.enabled` (the real model, in this
    process): BM25 and dense top `k` fused (`method` "rrf": the baseline)."""
    from memindex.semantic.fusion import InProcess, fused_search
    from memindex.semantic.vectors import get_embedder

    from .memory import SEMANTIC_CFG

    conn = index.open_reader(root)
    dense = InProcess(conn, get_embedder(str(SEMANTIC_CFG["semantic.model"])))
    run: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for qid, text in queries.items():
        hits, _ = fused_search(conn, text, dense, limit=k, depth=k, method=method)
        run[qid] = {back[h.id]: h.score for h in hits}
    elapsed = time.perf_counter() - started
    conn.close()
    return run, len(queries) / elapsed


def run_bm25s(corpus: dict[str, tuple[str, str]], queries: dict[str, str], k: int = 100):
    import bm25s

    try:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
    except ImportError:  # PyStemmer is optional
        stemmer = None
    ids = list(corpus)
    texts = [f"{t} {x}" for t, x in corpus.values()]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    run: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for qid, text in queries.items():
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            run[qid] = {}
            continue
        docs, scores = retriever.retrieve(tokens, k=min(k, len(ids)), show_progress=False)
        run[qid] = {ids[int(d)]: float(s) for d, s in zip(docs[0], scores[0]) if s > 0}
    elapsed = time.perf_counter() - started
    name = "bm25s (Lucene BM25, stopwords, " + ("Snowball stemmer)" if stemmer else "no stemmer)")
    return name, run, len(queries) / elapsed


def evaluate_collection(
    collection: Path, split: str = "test", variants: bool = False, out=print, semantic: bool = False
) -> None:
    """Build the store, run memindex (and its variants) and bm25s, print the table.
    `semantic` adds search fused with the embedding model (the store embedded by sync)."""
    corpus, queries, qrels = load_beir(collection, split)
    out(f"{collection.name}: {len(corpus)} documents, {len(queries)} judged queries")
    with tempfile.TemporaryDirectory(prefix="memindex-beir-") as tmp:
        root = Path(tmp) / ".claude" / "memory"
        started = time.perf_counter()
        back = build_store(root, corpus)
        write_s = time.perf_counter() - started
        report = sync(root, Config())
        out(f"wrote {len(back)} memory files in {write_s:.1f} s; memindex sync: {report.summary()}")
        rows = []
        params = Params()
        run, qps = run_memindex(root, queries, back, params)
        m = evaluate(qrels, run)
        rows.append(["memindex (product defaults)", *(m[h] for h in HEADLINE), f"{qps:.0f}"])
        if variants:
            for label, p in variant_params():
                run_v, qps_v = run_memindex(root, queries, back, p)
                mv = evaluate(qrels, run_v)
                rows.append([f"memindex {label}", *(mv[h] for h in HEADLINE), f"{qps_v:.0f}"])
        if semantic:
            from .memory import RRF_NAME, SEMANTIC_CFG, SEMANTIC_NAME

            report = sync(root, SEMANTIC_CFG)
            out(f"semantic: {report.semantic}")
            for label, method in ((SEMANTIC_NAME, "minmax"), (RRF_NAME, "rrf")):
                run_f, qps_f = run_fused(root, queries, back, method=method)
                mf = evaluate(qrels, run_f)
                rows.append([f"memindex {label}", *(mf[h] for h in HEADLINE), f"{qps_f:.0f}"])
        name, ref_run, ref_qps = run_bm25s(corpus, queries)
        mr = evaluate(qrels, ref_run)
        rows.append([name, *(mr[h] for h in HEADLINE), f"{ref_qps:.0f}"])
    out("")
    out(table(["engine", "nDCG@10", "Recall@100", "MAP@100", "queries/s"], rows))
    out("\npublished BM25 on SciFact (nDCG@10): Pyserini flat 0.679, Elasticsearch 0.690")


def variant_params():
    """Settings compared in docs/evaluation.md (the product's defaults are the first row)."""
    yield "prefix: none", Params(prefix_mode="none")
    yield "prefix: exact + w*", Params(prefix_mode="both")
    yield "no term pruning (max df 1.0, no budget)", Params(max_df_ratio=1.0, max_postings=10**12, max_terms=10**4)
    yield "posting budget 1,000", Params(max_postings=1000)
    yield "posting budget 2,000", Params(max_postings=2000)
    yield "posting budget 4,000", Params(max_postings=4000)
    yield "no category-words column", Params(kind_weight=0.0)
    yield "weights 1/1/1", Params(title_weight=1.0, tags_weight=1.0, body_weight=1.0)
    yield "weights 2/2/1", Params(title_weight=2.0, tags_weight=2.0, body_weight=1.0)
