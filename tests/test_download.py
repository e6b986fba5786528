"""A hub model that is not on this machine is downloaded once, from a fake hub on
127.0.0.1 (`hubfake`): the message and progress, the cache it lands in, offline use after,
HF_HUB_OFFLINE, failures and their back-off, and the default model's sha256 check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_env, trust_config, write_json, write_mem
from hubfake import FakeHub

pytest.importorskip("huggingface_hub")

from memindex.errors import ModelError, ModelNotFound  # noqa: E402
from memindex.semantic import download, locate  # noqa: E402

TINY = {
    "config.json": b'{"model_type": "bert"}',
    "tokenizer.json": b"{}",
    "model.safetensors": b"\x00" * 300_000,
    "1_Pooling/config.json": b'{"pooling_mode_mean_tokens": true}',
    "pytorch_model.bin": b"pickled weights are never fetched",
    "README.md": b"a card",
}


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fake = FakeHub({"test-org/tiny": TINY})
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("MEMINDEX_CACHE_DIR", str(tmp_path / "memindex-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    import huggingface_hub.constants as hf  # it reads HF_HUB_OFFLINE once, at import (conftest sets it)

    monkeypatch.setattr(hf, "HF_HUB_OFFLINE", False)
    yield fake
    fake.close()


def test_a_hub_model_is_downloaded_once_and_then_found_offline(hub: FakeHub, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelNotFound):
        locate.resolve("test-org/tiny")  # readers never download
    assert hub.requests == []
    folder, model_id = locate.resolve("test-org/tiny", fetch=True)
    err = capfd.readouterr().err
    assert "downloading it once from " + hub.url in err and "downloaded in" in err
    assert "100%" in err  # huggingface_hub's progress
    assert model_id == "test-org/tiny" and (folder / "model.safetensors").stat().st_size == 300_000
    assert sorted(hub.downloads()) == ["1_Pooling/config.json", "config.json", "model.safetensors", "tokenizer.json"]
    assert "models--test-org--tiny" in str(folder)
    hub.close()  # the hub is gone: the cached copy is enough, for every caller
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert locate.resolve("test-org/tiny") == (folder, "test-org/tiny")
    assert locate.resolve("test-org/tiny", fetch=True) == (folder, "test-org/tiny")


def test_offline_means_no_request(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFound, match="HF_HUB_OFFLINE"):
        locate.resolve("test-org/tiny", fetch=True)
    assert hub.requests == []


def test_a_failed_download_says_why_and_is_not_retried_at_once(hub: FakeHub) -> None:
    with pytest.raises(ModelNotFound, match="could not download embedding model 'test-org/missing' from http://127.0.0.1"):
        locate.resolve("test-org/missing", fetch=True)
    asked = len(hub.requests)
    assert asked > 0
    with pytest.raises(ModelNotFound, match="the download failed .* s ago"):
        locate.resolve("test-org/missing", fetch=True)
    assert len(hub.requests) == asked  # the back-off: no new request
    hub.repos["test-org/missing"] = {k: v for k, v in TINY.items() if k != "model.safetensors"}
    download.FAIL_BACKOFF_S, saved = 0.0, download.FAIL_BACKOFF_S
    try:
        with pytest.raises(ModelNotFound, match="no model.safetensors"):
            locate.resolve("test-org/missing", fetch=True)  # a repository without safetensors weights
    finally:
        download.FAIL_BACKOFF_S = saved


def test_the_default_models_weights_are_checked_and_dropped_when_wrong(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locate, "model_dir_from_package", lambda: (_ for _ in ()).throw(ModelNotFound("no package")))
    hub.repos[locate.DEFAULT_MODEL] = dict(TINY)
    with pytest.raises(ModelError, match="sha256"):
        locate.resolve(locate.DEFAULT_MODEL, fetch=True)
    with pytest.raises(ModelNotFound):
        locate.resolve(locate.DEFAULT_MODEL)  # the bad weights are not left for the next lookup


def test_sync_downloads_the_configured_model_with_progress(hub: FakeHub, memory_root: Path) -> None:
    """Through the command line, as a user turning semantic on meets it: the sync fetches
    the model (the tiny one cannot run: the sync says so and indexes the text anyway)."""
    write_mem(memory_root, "decision", "d1", "Use Postgres for the ledger", ["db"], {"decision": "postgres"})
    write_json(memory_root, "memory-config.json", {"semantic": {"enabled": True, "model": "test-org/tiny"}})
    trust_config(memory_root)
    env = dict(cli_env(), HF_ENDPOINT=hub.url)
    for key in ("HF_HUB_CACHE", "MEMINDEX_CACHE_DIR"):
        env[key] = __import__("os").environ[key]
    env.pop("HF_HUB_OFFLINE", None)
    proc = subprocess.run([sys.executable, "-m", "memindex", "--root", str(memory_root), "sync"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "downloading it once" in proc.stderr and "downloaded in" in proc.stderr
    assert "model.safetensors" in hub.downloads()
    assert "not embedded" in proc.stdout + proc.stderr  # garbage weights: one clear line, the text index is fine
    search = subprocess.run([sys.executable, "-m", "memindex", "--root", str(memory_root), "search", "--lexical", "ledger", "--json"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert "d1" in search.stdout
