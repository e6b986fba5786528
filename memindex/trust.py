"""Which projects' configs the user trusts, recorded outside every repository.

A repository's `memory-config.json` is somebody else's input: settings that would make
memindex do more (config.LOOSER) take effect from it only once the user has run
`memindex trust` there. Like `direnv allow`, the record holds the memory root's real path
and the SHA-256 of the config's bytes: an edited config needs trust again. The record is
`$XDG_STATE_HOME/memindex/trusted.json` (default `~/.local/state/memindex/trusted.json`),
private to the user. Standard library only (the prompt hook reads it, and only when the
project's config asks for more).
"""

from __future__ import annotations

import os
import time

from .defaults import TRUST_MAX_BYTES
from .lean import loads
from .runtime import user_folder

TRUST_FILE = ("memindex", "trusted.json")  # under $XDG_STATE_HOME (default ~/.local/state)

TRUSTED, UNTRUSTED, CHANGED = "trusted", "untrusted", "changed"


def trust_path() -> str:
    return user_folder("state", *TRUST_FILE)


def digest(raw: bytes) -> str:
    """SHA-256 of a config's bytes. The C module itself, not `hashlib`, whose OpenSSL set-up
    costs the prompt hook far more."""
    for name in ("_sha256", "_sha2"):  # the module's name on Python 3.11, then on 3.12+
        try:
            return __import__(name).sha256(raw).hexdigest()
        except (ImportError, AttributeError):
            continue
    from hashlib import sha256

    return sha256(raw).hexdigest()


def _key(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(root)


def records() -> dict[str, dict]:
    """Real path of a memory root -> {"sha256", "trusted_at", "config"}; {} if none."""
    try:
        with open(trust_path(), "rb") as fh:
            data = loads(fh.read(TRUST_MAX_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    roots = data.get("roots") if isinstance(data, dict) else None
    return {k: v for k, v in roots.items() if isinstance(v, dict)} if isinstance(roots, dict) else {}


def state(root: str | os.PathLike[str], raw: bytes) -> str:
    """TRUSTED when the user trusted exactly these config bytes for this root, CHANGED when
    they trusted other bytes, else UNTRUSTED."""
    entry = records().get(_key(root))
    if entry is None:
        return UNTRUSTED
    return TRUSTED if entry.get("sha256") == digest(raw) else CHANGED


def _save(roots: dict[str, dict]) -> None:
    """Write the record atomically, readable by the user alone."""
    import json

    path = trust_path()
    from .store.rootfs import make_folders

    make_folders(os.path.dirname(path), 0o700)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": 1, "roots": roots}, fh, indent=1, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def allow(root: str | os.PathLike[str], raw: bytes, config_path: str) -> str:
    """Trust these config bytes for this root; returns their digest."""
    roots = records()
    sha = digest(raw)
    roots[_key(root)] = {"sha256": sha, "config": config_path,
                         "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _save(roots)
    return sha


def revoke(root: str | os.PathLike[str]) -> bool:
    """Forget this root's trust; returns whether there was any."""
    roots = records()
    if roots.pop(_key(root), None) is None:
        return False
    _save(roots)
    return True
