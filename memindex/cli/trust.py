"""`memindex trust`: let this project's memory-config.json make memindex do more.

A repository's config is untrusted: settings that load or download a model, start a
worker or loosen injection (config.LOOSER) are ignored until the user trusts exactly that
file here (recorded outside the repository by memindex.trust, like `direnv allow`).
"""

from __future__ import annotations

import argparse
import os

from ..config import Config
from ..defaults import CONFIG_MAX_BYTES
from ._common import AddParser, emit_json, err


def register(add: AddParser) -> None:
    p = add("trust", example="memindex trust --status")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--revoke", action="store_true", help="forget this project's trust: its config may again only do less")
    mode.add_argument("--status", action="store_true", help="say whether this project's config is trusted and what it asks for")
    mode.add_argument("--list", action="store_true", help="every trusted project, and whether its config is still the one trusted")
    p.set_defaults(handler=cmd_trust)


def _root(args: argparse.Namespace) -> str:
    from ..store.paths import find_root

    return find_root(args.root, explicit=args.root is not None)


def cmd_trust(args: argparse.Namespace, root: str | None, cfg: Config) -> int:
    """Trust, revoke, or show the trust of project configs."""
    from .. import trust
    from ..store import rootfs
    from ..config import load_config, user_config_path
    from ..defaults import CONFIG_FILE

    if args.list:
        return _list(args)
    root = _root(args)
    path = os.path.join(root, CONFIG_FILE)
    if args.revoke:
        had = trust.revoke(root)
        if args.json:
            emit_json({"root": root, "revoked": had})
        elif not args.quiet:
            print(f"{'revoked' if had else 'was not trusted'}: {root}")
        return 0
    cfg = load_config(root)
    raw = rootfs.read(path, CONFIG_MAX_BYTES)
    state = trust.state(root, raw) if raw is not None else None
    info = {"root": root, "config": path if raw is not None else None, "state": state or "no config",
            "asks_for_more": cfg.more, "ignored": cfg.ignored, "user_config": user_config_path()}
    if args.status:
        if args.json:
            emit_json(info)
        else:
            print(status_line(cfg, raw is not None, state))
        return 0
    if raw is None:
        err(f"{path} does not exist: nothing to trust")
        return 1
    for warning in cfg.warnings:
        if warning != cfg.notice:
            err(f"config: {warning}")
    sha = trust.allow(root, raw, path)
    info.update(state=trust.TRUSTED, sha256=sha, ignored=[])
    if args.json:
        emit_json(info)
    elif not args.quiet:
        allowed = f"; it may now set {', '.join(cfg.more)}" if cfg.more else " (it asks for nothing more than your own settings)"
        print(f"trusted {path} (sha256 {sha[:12]}){allowed}. An edit needs `memindex trust` again; `memindex trust --revoke` undoes it")
    return 0


def status_line(cfg: Config, exists: bool, state: str | None) -> str:
    """One line on a project's config and its trust (`trust --status`, `status`)."""
    if not exists:
        return "no project config"
    if cfg.ignored:
        why = "changed since it was trusted" if state == "changed" else "not trusted"
        return f"{why}: ignored {', '.join(cfg.ignored)} (run `memindex trust` to allow)"
    if cfg.more:
        return f"trusted: it sets {', '.join(cfg.more)}"
    return f"{state or 'untrusted'}: it asks for nothing more than your own settings"


def _list(args: argparse.Namespace) -> int:
    from .. import trust
    from ..store import rootfs
    from ..errors import UnsafeFile

    rows = []
    for where, entry in sorted(trust.records().items()):
        path = entry.get("config") or ""
        try:
            raw = rootfs.read(path, CONFIG_MAX_BYTES) if path else None
        except (OSError, UnsafeFile):
            raw = None
        now = "missing" if raw is None else ("trusted" if trust.digest(raw) == entry.get("sha256") else "changed")
        rows.append({"root": where, "config": path, "trusted_at": entry.get("trusted_at"), "state": now})
    if args.json:
        emit_json(rows)
    elif not rows:
        print(f"no trusted project (record: {trust.trust_path()})")
    else:
        for row in rows:
            print(f"{row['state']:<8} {row['trusted_at'] or '?':<21} {row['root']}")
    return 0
