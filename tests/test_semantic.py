"""The semantic channel's storage, writer and fusion, on the deterministic stand-in model
(`builtin:hashing`): no model download, no weights. The real model's tests are in
test_semantic_model.py (marker `model`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from conftest import bump_clock, run_cli, trust_config, write_json, write_mem

from memindex import index
from memindex.config import parse_config
from memindex.index import vectors
from memindex.retrieval.query import Filters, search
from memindex.semantic import fusion
from memindex.semantic import vectors as semvec
from memindex_dev.standin import DIM, HashingEmbedder
from memindex.index.sync import sync

HASHING = {"semantic": {"enabled": True, "model": "builtin:hashing"}}


def cfg(**semantic: object):
    return parse_config({"semantic": {**HASHING["semantic"], **semantic}})


def store(root: Path) -> None:
    write_mem(root, "runbook", "log-analysis", "Log analysis pipeline for the ingest service", ["logging", "ingest"],
              {"trigger": "ingest errors pile up", "steps": ["grep the structured logs", "open the dashboard"]})
    write_mem(root, "decision", "use-postgres", "Use PostgreSQL for the billing ledger", ["database", "billing"],
              {"context": "ledger needs transactions", "decision": "postgres with serializable isolation"})
    write_mem(root, "constraint", "ci-memory", "CI runners have 7 GB of memory", ["ci"],
              {"rule": "keep test parallelism at two workers"})
    write_mem(root, "preference", "ruff", "Ruff for lint and format", ["python", "tooling"],
              {"topic": "linting", "value": "ruff replaces flake8 and black"})
    write_mem(root, "decision", "old-mysql", "Use MySQL for the billing ledger", ["database", "billing"],
              {"context": "ledger analysis", "decision": "mysql"}, record_status="retired")


def vector_rows(root: Path) -> dict[str, bytes]:
    conn = index.open_reader(root)
    try:
        return dict(conn.execute("SELECT d.path, v.vec FROM vectors v JOIN documents d ON d.rowid = v.doc"))
    finally:
        conn.close()


def reader(root: Path) -> sqlite3.Connection:
    return index.open_reader(root)


# --- storage -------------------------------------------------------------------------------


def test_vectors_round_trip_and_version_stamp(memory_root: Path) -> None:
    store(memory_root)
    sync(memory_root, parse_config({}))
    conn, _ = index.open_writer(memory_root)
    try:
        rowids = [r for (r,) in conn.execute("SELECT rowid FROM documents ORDER BY rowid")]
        assert vectors.count_missing(conn) == len(rowids) == 5  # active and retired alike
        assert vectors.version(conn) == 0
        with index.transaction(conn):
            vectors.set_model_info(conn, "m@1", DIM, "m", "c")
        assert vectors.model_info(conn) == {"embed_model": "m@1", "embed_dim": DIM, "embed_source": "m", "embed_check": "c"}
        vec = np.arange(DIM, dtype=np.float32) / DIM
        with index.transaction(conn):
            assert vectors.put(conn, [(rowids[0], semvec.to_blob(vec)), (10**9, semvec.to_blob(vec))]) == 1  # no such doc
        v1 = vectors.version(conn)
        assert v1 > 0
        blob = vectors.get(conn, rowids[0])
        assert blob is not None and len(blob) == DIM * 4
        assert np.array_equal(np.frombuffer(blob, dtype="<f4"), vec)
        ids, data, skipped = vectors.all_vectors(conn)
        assert ids == [rowids[0]] and data == blob and skipped == 0
        assert vectors.count_missing(conn) == 4
        assert [r for r, _ in vectors.missing(conn)] == rowids[1:]
        with index.transaction(conn):
            assert vectors.delete(conn, [rowids[0]]) == 1
            assert vectors.delete(conn, [rowids[0]]) == 0
        assert vectors.get(conn, rowids[0]) is None
        assert vectors.version(conn) > v1
        # a value of the wrong length or type counts as missing and is skipped by readers
        with index.transaction(conn):
            vectors.put(conn, [(rowids[0], b"\0" * 100), (rowids[1], semvec.to_blob(vec))])
            conn.execute("INSERT OR REPLACE INTO vectors(doc, vec) VALUES (?, 'text')", (rowids[2],))
        assert vectors.count_missing(conn) == 4
        ids, _, skipped = vectors.all_vectors(conn)
        assert ids == [rowids[1]] and skipped == 2
    finally:
        conn.close()


def test_sync_embeds_every_memory_once(memory_root: Path) -> None:
    store(memory_root)
    report = sync(memory_root, cfg())
    assert report.added == 5
    assert report.semantic is not None and report.semantic.startswith("embedded 5")
    assert "semantic: embedded 5" in report.summary()
    rows = vector_rows(memory_root)
    assert len(rows) == 5 and all(len(b) == DIM * 4 for b in rows.values())
    again = sync(memory_root, cfg())
    assert again.semantic == "up to date"
    assert json.loads(json.dumps(again.to_json()))["semantic"] == "up to date"
    conn = reader(memory_root)
    try:
        info = vectors.model_info(conn)
        assert info == {"embed_model": HashingEmbedder.identity, "embed_dim": DIM, "embed_source": "builtin:hashing",
                        "embed_check": semvec.model_check(HashingEmbedder.identity, "builtin:hashing")}
        assert vectors.count_missing(conn) == 0
    finally:
        conn.close()


def test_semantic_off_adds_nothing_to_the_report_or_the_table(memory_root: Path) -> None:
    store(memory_root)
    report = sync(memory_root, parse_config({}))
    assert report.semantic is None and "semantic" not in report.to_json() and "semantic" not in report.summary()
    assert vector_rows(memory_root) == {}


def test_a_changed_text_is_re_embedded_and_a_removed_memory_loses_its_vector(memory_root: Path) -> None:
    store(memory_root)
    sync(memory_root, cfg())
    before = vector_rows(memory_root)
    bump_clock()
    # a change outside the indexed text (confidence) keeps the vector
    write_mem(memory_root, "constraint", "ci-memory", "CI runners have 7 GB of memory", ["ci"],
              {"rule": "keep test parallelism at two workers"}, confidence=0.3)
    # a new title is another text
    write_mem(memory_root, "preference", "ruff", "Ruff for linting and formatting", ["python", "tooling"],
              {"topic": "linting", "value": "ruff replaces flake8 and black"})
    (memory_root / "runbooks" / "log-analysis.json").unlink()
    conn, _ = index.open_writer(memory_root)
    try:
        stamp = vectors.version(conn)
    finally:
        conn.close()
    lexical = sync(memory_root, parse_config({}))  # semantic off: the stale vectors still go
    assert (lexical.updated, lexical.removed) == (2, 1)
    after_text = vector_rows(memory_root)
    assert "runbooks/log-analysis.json" not in after_text
    assert "preferences/ruff.json" not in after_text
    assert after_text["constraints/ci-memory.json"] == before["constraints/ci-memory.json"]
    conn = reader(memory_root)
    try:
        assert vectors.version(conn) > stamp  # a worker sees that its matrix is stale
    finally:
        conn.close()
    report = sync(memory_root, cfg())
    assert report.semantic is not None and report.semantic.startswith("embedded 1 ")
    after = vector_rows(memory_root)
    assert set(after) == set(before) - {"runbooks/log-analysis.json"}
    assert after["preferences/ruff.json"] != before["preferences/ruff.json"]


class OtherModel(HashingEmbedder):
    identity = "test:other;dim=16"
    dim = 16

    def embed(self, texts, batch_size=32):
        return super().embed(texts, batch_size)[:, :16] + np.float32(0.01)


def test_another_model_or_dimension_re_embeds_everything(memory_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store(memory_root)
    sync(memory_root, cfg())
    monkeypatch.setitem(semvec._EMBEDDERS, "test:other", OtherModel())
    from memindex.semantic import locate as semmodel

    real_stamp = semmodel.weights_stamp
    monkeypatch.setattr(semmodel, "weights_stamp", lambda m, fetch=False: m if str(m).startswith("test:") else real_stamp(m, fetch))
    report = sync(memory_root, cfg(model="test:other"))
    assert report.semantic is not None and report.semantic.startswith("embedded 5 (model changed")
    rows = vector_rows(memory_root)
    assert len(rows) == 5 and all(len(b) == 16 * 4 for b in rows.values())
    conn = reader(memory_root)
    try:
        assert vectors.model_info(conn)["embed_model"] == "test:other;dim=16"
        assert vectors.model_info(conn)["embed_dim"] == 16
    finally:
        conn.close()
    back = sync(memory_root, cfg())
    assert back.semantic is not None and back.semantic.startswith("embedded 5 (model changed")
    assert all(len(b) == DIM * 4 for b in vector_rows(memory_root).values())


def test_vectors_labelled_as_another_model_are_recomputed_by_the_next_sync(memory_root: Path) -> None:
    """Readers refuse vectors of another model and say `memindex sync`: the sync must then
    see it too, even though the setting did not change (weights replaced in place, or the
    label damaged)."""
    store(memory_root)
    sync(memory_root, cfg())
    conn, _ = index.open_writer(memory_root)
    try:
        with index.transaction(conn):
            conn.execute("UPDATE meta SET value = ? WHERE key = 'embed_model'", (json.dumps("other;dim=384"),))
    finally:
        conn.close()
    report = sync(memory_root, cfg())
    assert report.semantic is not None and report.semantic.startswith("embedded 5 (model changed")
    assert sync(memory_root, cfg()).semantic == "up to date"


def test_damaged_vectors_are_left_out_by_readers_and_recomputed_by_rebuild(memory_root: Path) -> None:
    from memindex.semantic.fusion import InProcess
    from memindex.semantic.matrix import read_vectors

    store(memory_root)
    sync(memory_root, cfg())
    conn, _ = index.open_writer(memory_root)
    try:
        rowids = sorted(r for (r,) in conn.execute("SELECT doc FROM vectors"))
        huge = np.full(DIM, 1e30, dtype=np.float32)
        nan = np.full(DIM, np.nan, dtype=np.float32)
        with index.transaction(conn):
            vectors.put(conn, [(rowids[0], semvec.to_blob(huge)), (rowids[1], semvec.to_blob(nan))])
        ids, matrix, skipped = read_vectors(conn, DIM)
        assert skipped == 2 and sorted(ids.tolist()) == rowids[2:] and np.isfinite(matrix).all()
        channel = InProcess(conn, HashingEmbedder())
        ranked = channel("ruff lint", None, False, 10)
        assert ranked and all(c <= 1.0 + 1e-3 for _, c in ranked) and channel.matrix.skipped == 2
    finally:
        conn.close()
    assert sync(memory_root, cfg()).semantic == "up to date"  # a plain sync does not read every vector
    report = sync(memory_root, cfg(), rebuild=True)  # what the readers' line names
    assert report.semantic is not None and report.semantic.startswith("embedded 5")
    conn = reader(memory_root)
    try:
        assert read_vectors(conn, DIM)[2] == 0
    finally:
        conn.close()


def test_a_model_folder_that_fails_to_load_is_a_model_error(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    from memindex.errors import ModelError
    from memindex.semantic.model import load

    folder = tmp_path / "broken-model"
    folder.mkdir()
    (folder / "config.json").write_text("{not json")
    (folder / "model.safetensors").write_bytes(b"\0" * 64)
    with pytest.raises(ModelError, match="unreadable model files"):
        load(str(folder))


# --- failures --------------------------------------------------------------------------------


class Failing(HashingEmbedder):
    """Fails on its `fail_at`-th call (1-based) with `exc`."""

    def __init__(self, fail_at: int, exc: BaseException) -> None:
        super().__init__()
        self.calls, self.fail_at, self.exc = 0, fail_at, exc

    def embed(self, texts, batch_size=32):
        self.calls += 1
        if self.calls == self.fail_at:
            raise self.exc
        return super().embed(texts, batch_size)


@pytest.mark.parametrize("exc", [RuntimeError("out of memory"), KeyboardInterrupt()])
def test_a_run_stopped_mid_way_keeps_its_batches_and_the_next_sync_completes(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    store(memory_root)
    monkeypatch.setitem(semvec._EMBEDDERS, "builtin:hashing", Failing(3, exc))
    if isinstance(exc, KeyboardInterrupt):  # a killed process: the exception goes through
        with pytest.raises(KeyboardInterrupt):
            sync(memory_root, cfg(batch_size=2))
    else:  # a model failing half-way: the sync still succeeds, and says so
        report = sync(memory_root, cfg(batch_size=2))
        assert report.semantic == "embedded 4 of 5, then stopped: RuntimeError: out of memory"
        assert report.added == 5
    assert len(vector_rows(memory_root)) == 4  # two batches of two were committed
    conn = reader(memory_root)
    try:
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 5  # the text index is whole
    finally:
        conn.close()
    monkeypatch.setitem(semvec._EMBEDDERS, "builtin:hashing", HashingEmbedder())
    report = sync(memory_root, cfg(batch_size=2))
    assert report.semantic is not None and report.semantic.startswith("embedded 1 ")
    assert len(vector_rows(memory_root)) == 5


def test_sync_succeeds_without_the_model_and_says_why_in_one_line(memory_root: Path) -> None:
    store(memory_root)
    report = sync(memory_root, cfg(model=str(memory_root / "no-such-model")))
    assert report.added == 5 and vector_rows(memory_root) == {}
    assert report.semantic is not None and report.semantic.startswith("not embedded: embedding model")
    assert "\n" not in report.summary()


def test_sync_succeeds_without_numpy(memory_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store(memory_root)

    def no_numpy(model: str):
        raise ImportError("the semantic channel needs numpy, tokenizers and safetensors (pip install 'memindex[semantic]')")

    monkeypatch.setattr(semvec, "get_embedder", no_numpy)
    report = sync(memory_root, cfg())
    assert report.added == 5
    assert report.semantic is not None and report.semantic.startswith("not embedded: the semantic channel needs numpy")


def test_the_cli_sync_reports_the_reason_and_exits_0(memory_root: Path) -> None:
    store(memory_root)
    write_json(memory_root, "memory-config.json", {"semantic": {"enabled": True, "model": "/nonexistent/model"}})
    trust_config(memory_root)
    done = run_cli("--root", str(memory_root), "sync")
    assert done.returncode == 0, done.stderr
    assert "5 added" in done.stdout and "; semantic: not embedded: embedding model '/nonexistent/model' not found" in done.stdout
    assert len(done.stdout.strip().splitlines()) == 1


# --- fusion ----------------------------------------------------------------------------------


def test_rrf_adds_reciprocal_ranks() -> None:
    scores = fusion.rrf([[1, 2, 3], [3, 4]])
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[1] == pytest.approx(1 / 61) and scores[4] == pytest.approx(1 / 62)
    assert sorted(scores, key=lambda r: -scores[r])[:2] == [3, 1] and scores[2] == scores[4]


def test_minmax_sum_scales_each_channel_to_its_own_range() -> None:
    # BM25 scores in the tens, cosines under one: each scaled to [0, 1] by its own range
    scores = fusion.minmax_sum([[(1, 30.0), (2, 20.0), (3, 10.0)], [(3, 0.6), (4, 0.4), (5, 0.2)]])
    assert scores == pytest.approx({1: 1.0, 2: 0.5, 3: 1.0, 4: 0.5, 5: 0.0})
    # a channel whose candidates all score alike gives each the full weight; an empty one nothing
    assert fusion.minmax_sum([[(7, 0.3), (8, 0.3)], []]) == {7: 1.0, 8: 1.0}
    # a memory far ahead in one channel stays ahead of one both channels rank second
    far = fusion.minmax_sum([[(1, 50.0), (2, 5.0), (3, 4.0)], [(2, 0.50), (1, 0.49), (3, 0.10)]])
    assert far[1] > far[2]
    assert sorted(fusion.rrf([[1, 2, 3], [2, 1, 3]]).items()) == sorted({1: 1 / 61 + 1 / 62, 2: 1 / 61 + 1 / 62, 3: 2 / 63}.items())


def test_top_k_is_deterministic_on_ties() -> None:
    from memindex.semantic.matrix import top_k

    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9], dtype=np.float32)
    assert top_k(scores, 3).tolist() == [1, 4, 0]
    assert top_k(scores, 10).tolist() == [1, 4, 0, 2, 3]
    assert top_k(scores, 0).tolist() == []


def dense(conn: sqlite3.Connection) -> fusion.InProcess:
    return fusion.InProcess(conn, HashingEmbedder())


def test_fused_search_finds_a_memory_only_the_dense_channel_sees(memory_root: Path) -> None:
    store(memory_root)
    sync(memory_root, cfg())
    conn = reader(memory_root)
    try:
        # "analyze" is no word of the log-analysis runbook (Porter: analyz / analysi), but
        # shares the stand-in's stem "analy" with it
        assert [h.path for h in search(conn, "analyze", related=True)] == []
        hits, used = fusion.fused_search(conn, "analyze", dense(conn))
        assert used
        assert hits[0].path == "runbooks/log-analysis.json"
        assert "decisions/old-mysql.json" not in [h.path for h in hits]  # retired: not without --include-inactive
        # both channels agree on the billing decision: it ranks first, lexical-only ones after
        hits, _ = fusion.fused_search(conn, "billing ledger postgres", dense(conn))
        assert hits[0].path == "decisions/use-postgres.json"
        assert hits[0].score == pytest.approx(2.0)  # the best of both channels
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    finally:
        conn.close()


def test_a_retired_memory_found_by_meaning_hands_its_place_to_its_replacement(memory_root: Path) -> None:
    # as in the lexical channel: the prompt is worded like the old runbook, the new one holds
    write_mem(memory_root, "runbook", "vector-shipping", "Vector ships the structured logs", ["logging"],
              {"trigger": "logs missing in Grafana", "steps": ["restart the vector daemonset"]})
    write_mem(memory_root, "runbook", "logstash-analysis", "Logstash analysis jobs", ["logging"],
              {"trigger": "analysis lags", "steps": ["restart logstash"]}, record_status="retired",
              retired_reason="Replaced by runbooks/vector-shipping")
    write_mem(memory_root, "decision", "use-postgres", "Use PostgreSQL for the billing ledger", ["database"],
              {"context": "ledger needs transactions", "decision": "postgres"})
    sync(memory_root, cfg())
    conn = reader(memory_root)
    try:
        assert search(conn, "analyze", related=True) == []  # no word in common (analyz / analysi)
        by_path = dict(conn.execute("SELECT path, rowid FROM documents"))
        own = dict(dense(conn)("analyze", None, True, 10) or [])
        assert own[by_path["runbooks/logstash-analysis.json"]] > own.get(by_path["runbooks/vector-shipping.json"], 0.0)
        hits, used = fusion.fused_search(conn, "analyze", dense(conn))
        assert used and hits[0].path == "runbooks/vector-shipping.json"
        assert hits[0].score == pytest.approx(1.0)  # the dense channel's best: the retired one's cosine
        assert "runbooks/logstash-analysis.json" not in [h.path for h in hits]
        hits, _ = fusion.fused_search(conn, "analyze", dense(conn), filters=Filters(include_inactive=True))
        assert hits[0].path == "runbooks/logstash-analysis.json"  # asked for: the retired memory itself
        hits, _ = fusion.fused_search(conn, "analyze", dense(conn), filters=Filters(categories=("decision",)))
        assert hits == []  # the replacement must pass the filters too
    finally:
        conn.close()


def test_fused_search_applies_the_lexical_filters_to_the_dense_channel(memory_root: Path) -> None:
    store(memory_root)
    sync(memory_root, cfg())
    conn = reader(memory_root)
    try:
        only_decisions = Filters(categories=("decision",))
        hits, _ = fusion.fused_search(conn, "analyze", dense(conn), filters=only_decisions)
        assert [h.path for h in hits] == []  # the runbook is not a decision; the retired decision is inactive
        hits, _ = fusion.fused_search(conn, "analyze", dense(conn), filters=Filters(categories=("decision",), include_inactive=True))
        assert [h.path for h in hits] == ["decisions/old-mysql.json"]
        hits, _ = fusion.fused_search(conn, "analyze", dense(conn), filters=Filters(tag="logging"))
        assert [h.path for h in hits] == ["runbooks/log-analysis.json"]
    finally:
        conn.close()


def test_fused_search_without_vectors_of_this_model_is_the_lexical_search(memory_root: Path) -> None:
    store(memory_root)
    sync(memory_root, parse_config({}))
    conn = reader(memory_root)
    try:
        channel = dense(conn)
        hits, used = fusion.fused_search(conn, "billing ledger", channel, limit=3)
        assert not used and "no vectors of this model" in (channel.problem or "")
        assert [h.path for h in hits] == [h.path for h in search(conn, "billing ledger", limit=3, related=True)]
    finally:
        conn.close()


def test_the_worker_channel_reads_the_clients_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    from memindex.semantic import client

    calls = []

    def fake_query(root, text, k=20, rowids=(), budget_s=0.15, active=False):
        calls.append((k, list(rowids), active))
        return {"ok": True, "top": [[5, 0.9], [7, 0.8], [9, 0.7]], "cos": {"7": 0.8, "9": 0.7}}

    monkeypatch.setattr(client, "query", fake_query)
    worker = fusion.Worker("/nowhere", 0.5)
    assert worker("q", None, False, 2) == [(5, 0.9), (7, 0.8)]
    assert calls[-1] == (2, [], True)
    assert worker("q", [9, 7], True, 5) == [(7, 0.8), (9, 0.7)]  # few candidates: their cosines
    assert calls[-1] == (0, [9, 7], False)
    monkeypatch.setattr(client, "query", lambda *a, **k: {"ok": True, "top": "nonsense"})
    assert worker("q", None, False, 2) is None
    monkeypatch.setattr(client, "query", lambda *a, **k: None)
    assert worker("q", None, False, 2) is None


# --- the command line ------------------------------------------------------------------------


def test_search_lexical_is_the_output_of_semantic_off(memory_root: Path) -> None:
    store(memory_root)
    queries = ["billing ledger", "analyze", "ruff lint"]
    off = {q: run_cli("--root", str(memory_root), "search", q) for q in queries}
    off_json = {q: run_cli("--root", str(memory_root), "search", "--json", q) for q in queries}
    write_json(memory_root, "memory-config.json", HASHING)
    trust_config(memory_root)
    for q in queries:
        lexical = run_cli("--root", str(memory_root), "search", "--lexical", q)
        assert (lexical.returncode, lexical.stdout, lexical.stderr) == (0, off[q].stdout, off[q].stderr)
        lexical_json = run_cli("--root", str(memory_root), "search", "--lexical", "--json", q)
        assert lexical_json.stdout == off_json[q].stdout
    fused = run_cli("--root", str(memory_root), "search", "analyze")
    assert fused.returncode == 0
    assert "runbooks/log-analysis.json" in fused.stdout.splitlines()[0]
    assert off["analyze"].stdout == ""
    lines = fused.stderr.strip().splitlines()
    assert len(lines) == 1 and "no semantic worker: loaded the model in this process" in lines[0]


def test_search_without_the_model_answers_lexically_with_one_line(memory_root: Path) -> None:
    store(memory_root)
    off = run_cli("--root", str(memory_root), "search", "billing ledger")
    write_json(memory_root, "memory-config.json", {"semantic": {"enabled": True, "model": "/nonexistent/model"}})
    trust_config(memory_root)
    done = run_cli("--root", str(memory_root), "search", "billing ledger")
    assert done.returncode == 0 and done.stdout == off.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memindex: semantic search unavailable, BM25 only:")
