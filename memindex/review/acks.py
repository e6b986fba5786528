"""Acknowledged review items (`memindex review --keep PATH`), per user, outside the
repository: `$XDG_STATE_HOME/memindex/review/<hash of the root>.json`, {item key: basis}.
An item stays quiet while its basis (the memory's bytes, the other memory's, the stable
part of the evidence: `items.Item.basis`) is the one acknowledged; when any changes, it is
back in the queue. At most ACKS_MAX entries (the oldest go first). Reading is standard
library and lean (SessionStart counts the queue)."""

from __future__ import annotations

import os

from ..lean import loads
from ..runtime import name_hash, user_folder

ACKS_MAX = 20_000
ACKS_MAX_BYTES = 8 * 1024 * 1024


def path(root: str | os.PathLike[str]) -> str:
    real = os.path.realpath(os.fspath(root))
    return user_folder("state", "memindex", "review", name_hash(real.encode("utf-8", "surrogateescape")) + ".json")


def load(root: str | os.PathLike[str]) -> dict[str, dict]:
    """item key -> {"basis", "at"}; {} when none or unreadable."""
    try:
        with open(path(root), "rb") as fh:
            data = loads(fh.read(ACKS_MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    kept = data.get("kept") if isinstance(data, dict) else None
    if not isinstance(kept, dict):
        return {}
    return {k: v for k, v in kept.items() if isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("basis"), str)}


def add(root: str | os.PathLike[str], keys: dict[str, str]) -> None:
    """Acknowledge items: key -> basis. Written atomically, private to the user."""
    import json
    import time

    kept = load(root)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for key, basis in keys.items():
        kept.pop(key, None)
        kept[key] = {"basis": basis, "at": stamp}
    if len(kept) > ACKS_MAX:  # insertion order: the oldest first
        kept = dict(list(kept.items())[-ACKS_MAX:])
    target = path(root)
    os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": 1, "kept": kept}, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def quiet(kept: dict[str, dict], key: str, basis: str) -> bool:
    """Is this item acknowledged for exactly this basis?"""
    entry = kept.get(key)
    return entry is not None and entry.get("basis") == basis
