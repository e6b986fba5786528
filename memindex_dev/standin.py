"""A deterministic stand-in embedder for tests and development: `semantic.model =
"builtin:hashing"`. Not a language model: no download, no weights, NumPy only.

The runtime loads it only in a process whose environment allows it (`enable()`, which the
dev package's pytest plugin and the stress kit call; inherited by the hooks and workers they
start): a config naming it does not make memindex import development code.

Each word (lowercased, stop words dropped) is cut to a stem of its first `STEM` letters (a
truncation stemmer: `analyze` and `analysis` share `analy`, which Porter's stemmer does not
give them), hashed to one of `DIM` dimensions with a sign, and the bag of stems is
L2-normalised. Texts sharing stems are close; nothing else is. It has the interface of
`model.Embedder` (`embed`, `identity`, `dim`, `model_id`), so every path the real model
takes (sync, fusion, the worker) runs on it in the test suite.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Sequence

from memindex.defaults import STANDIN, STANDIN_ENV
from memindex.text.words import STOP_WORDS

NAME = STANDIN
DIM = 384
STEM = 5
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def enable() -> None:
    """Let this process, and every process it starts, load the stand-in as `builtin:hashing`."""
    os.environ[STANDIN_ENV] = "1"


def stems(text: str) -> list[str]:
    return [w[:STEM] for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1]


class HashingEmbedder:
    """Hashed bag of word stems, `DIM` dimensions, L2-normalised rows."""

    model_id = NAME
    dim = DIM
    max_seq_length = 256
    identity = f"{NAME};dim={DIM};stem={STEM};v=1"

    def __init__(self) -> None:
        import numpy  # noqa: F401  (ImportError at load, as for the real model)

    def embed(self, texts: Sequence[str], batch_size: int = 32):  # noqa: ARG002 (the interface of model.Embedder)
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for stem in stems(text):
                h = zlib.crc32(stem.encode("utf-8"))
                out[row, h % DIM] += 1.0 if (h >> 16) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return out

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={DIM})"
