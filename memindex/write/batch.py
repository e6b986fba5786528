"""Batches of saves or updates (an import writes hundreds), each under one lock and one
index update: a transaction a memory pays an fsync and an index commit each. Every memory
gets exactly the checks of `save_memory` / `update_memory` (the same functions of `ops`);
one refused memory fails alone."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import MemindexError
from .ops import _existing, _new_file, _update_in, write_transaction


def save_memories(
    root: str | os.PathLike[str],
    cfg: Config,
    batch: Iterable[tuple],
    *,
    now: datetime | None = None,
    lock_timeout: float | None = None, redact: bool = False,
) -> list[dict[str, Any] | MemindexError]:
    """`save_memory` for each (category, data[, folder]) of `batch`, with the same checks,
    under one lock and one index update. One answer per item, in order: the answer, or the
    error (a WriteError, or whatever else the checks raise) that refused that memory (the
    others are still written)."""
    root = Path(root)
    answers: list[dict[str, Any] | MemindexError] = []
    with write_transaction(root, cfg, lock_timeout) as txn:
        for category, data, *folder in batch:
            try:
                rel, mem, blob, fixes, redacted = _new_file(cfg, category, data, now, *folder, redact=redact)
                answers.append(txn.answer("created", rel, mem["id"], sha256=txn.create(rel, blob), fixes=fixes, **redacted))
            except MemindexError as exc:  # whatever refuses one memory refuses only it
                answers.append(exc)
        done = txn.commit({})
    for answer in answers:
        if isinstance(answer, dict):
            answer.update(done)
    return answers


def update_memories(
    root: str | os.PathLike[str],
    cfg: Config,
    batch: Iterable[tuple[str, object]],
    *,
    now: datetime | None = None,
    lock_timeout: float | None = None, redact: bool = False,
) -> list[dict[str, Any] | MemindexError]:
    """`update_memory` for each (path, patch) of `batch`, with the same checks, under one
    lock and one index update (as `save_memories`). One answer per item, in order: the
    answer, or the error that refused that update (the others are still written)."""
    answers: list[dict[str, Any] | MemindexError] = []
    with write_transaction(Path(root), cfg, lock_timeout) as txn:
        for path, patch in batch:
            try:
                _, rel, category = _existing(root, path, None, None)
                answers.append(_update_in(txn, rel, category, patch, None, now, redact))
            except MemindexError as exc:  # whatever refuses one update refuses only it
                answers.append(exc)
        done = txn.commit({})
    for answer in answers:
        if isinstance(answer, dict) and answer["status"] == "updated":
            answer.update(done)
    return answers
