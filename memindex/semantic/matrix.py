"""The resident worker's copy of the stored vectors: one float32 matrix in memory, reloaded
when the index's `vectors_version` changes, and the nearest memories to a query vector.

Memory is bounded by the store: n x dim x 4 bytes (15 MiB at 10k memories of 384
dimensions), twice that for an instant while a reload replaces the matrix. A snapshot is
never changed once built: query threads read the one they took while a reload swaps in
the next.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..defaults import NORM_TOLERANCE
from .. import index
from ..index import vectors


def top_k(scores: Any, k: int) -> Any:
    """Indices of the `k` largest scores, best first (ties by position: deterministic)."""
    import numpy as np

    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    if k < scores.size:  # every score tied with the k-th takes part: the lowest positions win
        part = np.flatnonzero(scores >= -np.partition(-scores, k - 1)[k - 1])
    else:
        part = np.arange(scores.size)
    return part[np.lexsort((part, -scores[part]))][:k]


class Snapshot:
    """Vectors of one `vectors_version`: rowids in ascending order, their rows, which are
    active memories, and how many stored vectors were left out as damaged."""

    def __init__(self, version: int, rowids: Any, matrix: Any, active: Any, note: str = "", skipped: int = 0) -> None:
        self.version, self.rowids, self.matrix, self.active, self.note = version, rowids, matrix, active, note
        self.skipped = skipped

    @property
    def docs(self) -> int:
        return int(len(self.rowids))

    def top(self, vec: Any, k: int, mask: Any = None) -> list[tuple[int, float]]:
        """[(rowid, cosine)] of the `k` nearest rows (among those `mask` keeps), best first."""
        import numpy as np

        if k <= 0 or not len(self.rowids):
            return []
        scores = self.matrix @ vec
        if mask is not None:
            scores = np.where(mask, scores, np.float32(-np.inf))
            k = min(k, int(mask.sum()))
        return [(int(self.rowids[i]), float(scores[i])) for i in top_k(scores, k)]

    def cosines(self, vec: Any, rowids: Sequence[int]) -> dict[int, float]:
        """{rowid: cosine} of the given rowids that have a vector."""
        import numpy as np

        if not len(rowids) or not len(self.rowids):
            return {}
        wanted = np.asarray(list(rowids), dtype=np.int64)
        pos = np.searchsorted(self.rowids, wanted)
        pos = np.minimum(pos, len(self.rowids) - 1)
        found = self.rowids[pos] == wanted
        scores = self.matrix[pos[found]] @ vec
        return {int(r): float(s) for r, s in zip(wanted[found], scores)}


def load_snapshot(conn: Any, dim: int) -> Snapshot:
    """The index's vectors as one Snapshot, read in one transaction with the statuses."""
    import numpy as np

    conn.execute("BEGIN")  # one snapshot of the index for the vectors and the statuses
    try:
        version = vectors.version(conn)
        ids, matrix, skipped = read_vectors(conn, dim)
        active_ids = vectors.candidates(conn)
    finally:
        conn.execute("COMMIT")
    return Snapshot(version, ids, matrix, np.isin(ids, np.asarray(active_ids, dtype=np.int64)), skipped=skipped)




def read_vectors(conn: Any, dim: int) -> tuple[Any, Any, int]:
    """(rowids, their (n, dim) float32 matrix, how many stored vectors were left out) of the
    index's vectors. Malformed blobs, non-finite values and rows longer than unit length are
    left out: one damaged row must not outrank every memory (a cosine of 1e25)."""
    import numpy as np

    rowids, data, skipped = vectors.all_vectors(conn)
    if len(data) != len(rowids) * dim * 4:  # stored with another dimension: none is usable here
        return np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32), skipped + len(rowids)
    ids = np.asarray(rowids, dtype=np.int64)
    matrix = np.frombuffer(data, dtype="<f4").reshape(len(rowids), dim).astype(np.float32, copy=True)
    with np.errstate(all="ignore"):
        ok = np.isfinite(matrix).all(axis=1) & (np.einsum("ij,ij->i", matrix, matrix) <= (1 + NORM_TOLERANCE) ** 2)
    if not ok.all():
        skipped += int((~ok).sum())
        ids, matrix = ids[ok], matrix[ok]
    return ids, matrix, skipped


def skipped_note(skipped: int) -> str:
    """The one line a reader gives about damaged stored vectors."""
    return f"{skipped} stored vector{'s are' if skipped != 1 else ' is'} damaged and left out (`memindex rebuild` recomputes them)"


def empty(dim: int, version: int = -1, note: str = "") -> Snapshot:
    import numpy as np

    return Snapshot(version, np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32), np.zeros(0, dtype=bool), note)


class VectorSource:
    """The index's vectors as seen by one model: `current()` gives a Snapshot, reloaded when
    `vectors_version` changes or the index file is replaced. A missing or unusable index
    is an empty snapshot (and is looked for again at the next check)."""

    def __init__(self, root: str, identity: str, dim: int, log: Any = None) -> None:
        self.root, self.identity, self.dim, self.log = root, identity, dim, log
        self.conn = None
        self.ident: tuple[int, int] | None = None  # (st_dev, st_ino) of the open index
        self.snapshot = empty(dim, note="not loaded")
        self._lock = threading.Lock()

    def current(self) -> Snapshot:
        """The snapshot, after a version check (one stat and one point query: a query always
        sees the vectors committed before it)."""
        with self._lock:
            try:
                self._check()
            except Exception as exc:  # a damaged or vanished index: serve nothing, look again next time
                self._close()
                self.snapshot = empty(self.dim, note=f"index unavailable: {type(exc).__name__}: {exc}")
        return self.snapshot

    def _check(self) -> None:
        path = index.index_path(self.root)
        try:
            st = os.stat(path)
            ident = (st.st_dev, st.st_ino)
        except OSError:
            ident = None
        if self.conn is None or ident != self.ident:
            self._close()
            self.conn = index.open_reader(self.root, busy_ms=200)
            self.ident = ident
            self.snapshot = empty(self.dim, note="not loaded")
        version = vectors.version(self.conn)
        if version != self.snapshot.version:
            self.snapshot = self._load(version)

    def _load(self, version: int) -> Snapshot:
        conn = self.conn
        assert conn is not None
        start = time.perf_counter()
        info = vectors.model_info(conn)
        if info.get("embed_model") not in (None, self.identity):
            return empty(self.dim, version, f"vectors of another model ({info.get('embed_model')}); a sync recomputes them")
        snapshot = load_snapshot(conn, self.dim)
        if self.log is not None:
            self.log("reload", f"{snapshot.docs} vectors loaded in {(time.perf_counter() - start) * 1000:.0f} ms"
                     + (f"; {skipped_note(snapshot.skipped)}" if snapshot.skipped else ""),
                     level="warning" if snapshot.skipped else "debug", docs=snapshot.docs, vectors_version=snapshot.version)
        return snapshot

    def _close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
        self.conn, self.ident = None, None

    def close(self) -> None:
        with self._lock:
            self._close()
