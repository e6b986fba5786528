"""`memindex doctor`: the checks of what a user cannot see, each with how to fix it.

Nothing here executes a file of the project or of a plugin copy: another copy's version is
read from its source text. Each check returns a Check; `run` returns them all.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__, index
from .index import health
from .defaults import PACKAGE_DIR, INDEX_FILE, INDEX_VERSION, LOCK_FILE, LOG_FILE, MEMORY_DIR, QUEUE_FILE, SPAWN_MARKER, WAIT_FILE
from .errors import IndexTooNew, IndexUnavailable

DERIVED = (INDEX_FILE, INDEX_FILE + "-wal", INDEX_FILE + "-shm", INDEX_FILE + "-journal", LOCK_FILE, WAIT_FILE,
           QUEUE_FILE, SPAWN_MARKER, LOG_FILE, ".watch.pid", ".serve.pid", ".serve.spawned")
PLUGIN_HOMES = ("~/.claude/plugins",)  # where Claude Code keeps marketplaces and its plugin cache


@dataclass
class Check:
    name: str
    ok: bool | None  # None: could not be told (said, not counted as a failure)
    detail: str
    fix: str = ""
    data: dict = field(default_factory=dict)


def _text_value(path: Path, pattern: str) -> str | None:
    """A value read from another copy's source text (never imported or run)."""
    from .store import rootfs
    from .errors import UnsafeFile

    try:
        data = rootfs.read(str(path), 200_000)
    except (OSError, UnsafeFile):
        return None
    found = re.search(pattern, (data or b"").decode("utf-8", "replace"), re.M)
    return found.group(1) if found else None


def plugin_copies(homes: tuple[str, ...] = PLUGIN_HOMES) -> list[dict]:
    """Every memindex the plugin's hooks may run: folders holding hooks/memindex_hook.py
    and memindex/ under Claude Code's plugin folders, with the versions their text says."""
    found = []
    for home in homes:
        base = Path(os.path.expanduser(home))
        if not base.is_dir():
            continue
        for hook in sorted(base.glob("**/hooks/memindex_hook.py"))[:20]:
            tree = hook.parent.parent
            pkg = tree / "memindex"
            found.append({
                "path": str(tree),
                "version": _text_value(pkg / "__init__.py", r'^__version__ = "([^"]+)"'),
                "index_version": _text_value(pkg / "defaults.py", r"^INDEX_VERSION = (\d+)"),
            })
    return found


def check_cli(homes: tuple[str, ...] = PLUGIN_HOMES) -> Check:
    """The `memindex` the skills run (through Bash, on Claude Code's PATH) and the one the
    hooks run (the plugin's own copy) must be the same version."""
    exe = shutil.which("memindex")
    copies = plugin_copies(homes)
    data = {"memindex_on_path": exe, "this": {"version": __version__, "index_version": INDEX_VERSION,
            "path": os.path.dirname(PACKAGE_DIR)}, "plugin_copies": copies}
    if exe is None:
        return Check("cli", False, "no `memindex` on this PATH: the skills' Bash calls fail with \"command not found\" "
                     "while the hooks work silently",
                     "install it where Claude Code's shell finds it (`pipx install <the plugin folder>`, or a venv's "
                     "bin/ on PATH in your shell profile), then restart Claude Code", data)
    odd = [c for c in copies if c["index_version"] not in (None, str(INDEX_VERSION))]
    if odd:
        where = ", ".join(f"{c['path']} ({c['version']}, index version {c['index_version']})" for c in odd)
        return Check("cli", False, f"`memindex` on PATH ({__version__}, index version {INDEX_VERSION}) differs from the "
                     f"plugin's hooks: {where}", "reinstall the command from the plugin's folder "
                     "(`pip install -U <plugin folder>`) so both read the same index version", data)
    said = f"`memindex` on this shell's PATH: {exe} ({__version__})"
    return Check("cli", True, said + (f"; the plugin's hooks: {len(copies)} copy(ies), same index version" if copies
                                      else "; no plugin copy found under ~/.claude/plugins"), data=data)


def check_index(root: str) -> Check:
    try:
        conn = index.open_reader(root)
    except IndexTooNew as exc:
        return Check("index", False, str(exc), "upgrade this `memindex` (see the cli check)")
    except IndexUnavailable as exc:
        return Check("index", False, str(exc), "run `memindex sync`")
    try:
        current = index.is_current(conn, root)
        meta = index.get_meta(conn)
    finally:
        conn.close()
    built = meta.get("built_by") if isinstance(meta.get("built_by"), dict) else {}
    detail = f"index version {INDEX_VERSION}" + (f", last built by memindex {built.get('version')} at {built.get('location')}"
                                                  if built else "")
    if not current:
        return Check("index", True, detail + "; files changed since the last sync (the next search syncs first)")
    return Check("index", True, detail + "; up to date")


def check_files(root: str) -> Check:
    """Invalid, ignored, misplaced, duplicated, renamed and future-dated memory files (after a sync)."""
    try:
        from .index.sync import sync

        sync(root, lock_timeout=3.0)
    except Exception:  # a busy writer or a refusing index: the last summary still says it
        pass
    try:
        conn = index.open_reader(root)
    except IndexUnavailable as exc:
        return Check("files", None, f"not checked: {exc}")
    with conn:
        summary = health.read(conn)
    line = health.line(summary, hint="")
    counts = health.counts(summary)
    if line is None:
        return Check("files", True, "every memory file is indexed as it is named", data=counts)
    fixes = {"invalid": "`memindex validate` names each error", "ignored": "move notes out of the category folders",
             "misplaced": "move the file to the folder of its category", "duplicated": "keep one file per id",
             "renamed": "rename the file to its id (or the id to the file name)",
             "future": "`memindex update` (or `retire`) dates it now; a file you did not write may be planted"}
    return Check("files", False, line.rstrip("; "), "; ".join(fixes[k] for k, n in counts.items() if n), counts)


def _git(project: Path, *args: str) -> subprocess.CompletedProcess | None:
    if shutil.which("git") is None:
        return None
    try:
        return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None


def check_git(project: Path) -> Check:
    """Derived files committed to git (each clone then starts with a foreign index or lock)
    and memory stores nested inside this one's project."""
    memory = "/".join(MEMORY_DIR)
    listed = _git(project, "ls-files", "-z", "--", f"{memory}/*", f"*/{memory}/*")
    if listed is None or listed.returncode != 0:
        return Check("git", None, "not a git work tree (or no git): nothing committed to check")
    paths = [p for p in listed.stdout.split("\0") if p]
    derived = [p for p in paths if p.startswith(memory + "/") and p.split("/")[-1] in DERIVED]
    nested = sorted({p.split("/" + memory + "/")[0] for p in paths if not p.startswith(memory + "/")})
    problems, fixes = [], []
    if derived:
        problems.append(f"derived files tracked by git: {', '.join(derived[:5])}")
        fixes.append(f"git rm --cached {' '.join(derived[:5])} (and list them in {memory}/.gitignore)")
    if nested:
        problems.append(f"nested memory stores in {', '.join(nested[:5])}")
        fixes.append("move their memories into this store (memindex reads the store nearest the working folder)")
    if problems:
        return Check("git", False, "; ".join(problems), "; ".join(fixes))
    return Check("git", True, "no derived file tracked, no nested store")


def check_nesting(project: Path) -> Check:
    """A store above this project's (an `init` run in a subfolder, before `init` refused it)."""
    parent = project.parent
    while parent != parent.parent:
        if (parent / MEMORY_DIR[0] / MEMORY_DIR[1]).is_dir():
            return Check("nesting", False, f"this store is nested inside the project of {parent / MEMORY_DIR[0] / MEMORY_DIR[1]}",
                         "keep one store per project: move these memories up, or pass --root to choose")
        parent = parent.parent
    return Check("nesting", True, "no store above this one")


def check_worker(root: str, cfg) -> Check:
    if not cfg["semantic.enabled"]:
        return Check("worker", True, "semantic search is off (semantic.enabled false): no worker needed")
    from .semantic import client

    reply = client.ping(root, budget_s=1.0)
    if reply is not None:
        return Check("worker", True, f"running, pid {reply.get('pid')}, model {reply.get('model')}")
    pid = client.running_pid(root)
    if pid:
        return Check("worker", True, f"starting, pid {pid}")
    return Check("worker", False, "semantic search is on but no worker runs (the hooks start one; if it keeps "
                 f"failing, {LOG_FILE} says why)", "run `memindex serve` once in a terminal to see its error")


def check_trust(root: str, cfg) -> Check:
    """Trust status of this repository's config (`memindex trust`, memindex/trust.py): the
    settings that would make memindex do more, and whether the user trusted these bytes."""
    more = list(getattr(cfg, "more", []) or [])
    if not more:
        return Check("trust", True, "the project's config asks for nothing beyond the defaults (no trust needed)")
    ignored = list(getattr(cfg, "ignored", []) or [])
    if not ignored:
        return Check("trust", True, f"trusted: the project's config may set {', '.join(more)}")
    again = " again: the file changed since you trusted it" if getattr(cfg, "trust", None) == "changed" else ""
    return Check("trust", False, f"the project's config sets {', '.join(ignored)}, ignored until you trust it{again}",
                 "read memory-config.json, then `memindex trust` (or set them in your own config)")


def run(root: str, cfg, homes: tuple[str, ...] = PLUGIN_HOMES) -> list[Check]:
    project = Path(root).parent.parent if Path(root).parts[-2:] == MEMORY_DIR else Path(root)
    files = check_files(root)  # syncs first: the index check then sees the files as they are
    return [check_cli(homes), check_index(root), files, check_git(project), check_nesting(project),
            check_worker(root, cfg), check_trust(root, cfg)]
