"""What the review's detectors remember between runs, per user and store, beside the
acknowledgments (`$XDG_STATE_HOME/memindex/review/<hash of the root>.<name>.json`): the
pairs the conflict check measured, the files and names each memory gives; each keyed by
the memories' sha256, so an edited memory is looked at again. Derived, bounded, private;
a missing or broken file is an empty cache."""

from __future__ import annotations

import json
import os

from ..lean import loads
from . import acks

MAX_BYTES = 32 * 1024 * 1024


def path(root: str | os.PathLike[str], name: str) -> str:
    return acks.path(root)[: -len(".json")] + f".{name}.json"


def load(root: str | os.PathLike[str], name: str) -> dict:
    try:
        with open(path(root, name), "rb") as fh:
            data = loads(fh.read(MAX_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def save(root: str | os.PathLike[str], name: str, data: dict) -> None:
    """Replace the cache atomically (this run's entries only: what is gone goes); a cache
    past MAX_BYTES is not kept."""
    target = path(root, name)
    blob = json.dumps(data, separators=(",", ":"))
    if len(blob) > MAX_BYTES:
        return
    try:
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        tmp = f"{target}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(blob)
        os.replace(tmp, target)
    except OSError:
        pass
