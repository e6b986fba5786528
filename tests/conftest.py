"""Shared fixtures and helpers for the memindex test suite.

The helpers are deliberately general (any category, any field, raw bytes) so that later
test files (hook, watch, write path) can reuse them:

- `memory_root` fixture: `<tmp>/proj/.claude/memory` with the six category folders.
- `make_memory(...)`: a valid schema-1.0 memory as a dict.
- `write_mem(root, category, id, title, tags, content=..., **fields)`: write one valid file.
- `write_json` / `write_raw`: write anything anywhere below the root.
- `doc_rows`, `search_paths`, `index_snapshot`: look at what the index holds.
- `run_cli`: the CLI as a real subprocess (`python -m memindex`).
- `hook_project` / `inject_project` fixtures: the small synced stores of the hook tests and of
  the injection-policy tests (tests/hookkit.py builds them, and runs the hook).

Helpers shared by a few test modules live in modules named for their job (tests/hookkit.py,
tests/writekit.py, tests/freshkit.py, tests/watchkit.py): no test module imports another.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import sys
import time
from pathlib import Path
from typing import Any, Iterable

import pytest

from memindex import index
from memindex.defaults import CATEGORY_FOLDER, FOLDERS, INDEX_FILE
from sample_words import VOCAB

REPO = Path(__file__).resolve().parent.parent

# No test reaches a model hub: a hub id missing here fails at once instead of being
# downloaded. tests/test_download.py serves its hub on 127.0.0.1 and lifts this.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"



# The records of which index this user's memindex built (memindex/index/provenance.py) go to a
# folder of this test run, inherited by every process it starts (set at import: the stress
# kit's environment is taken when its modules load), never to the user's own.
_STATE = tempfile.mkdtemp(prefix="memindex-state-")
os.environ["XDG_STATE_HOME"] = _STATE
atexit.register(shutil.rmtree, _STATE, True)


@pytest.fixture()
def private_state() -> Path:
    return Path(_STATE)


@pytest.fixture(autouse=True)
def private_runtime(monkeypatch: pytest.MonkeyPatch):
    """Every test gets a private XDG_RUNTIME_DIR of its own (short: socket paths are
    limited), inherited by the hooks and workers it starts: worker sockets and session
    memos never meet another test's, nor the user's."""
    import shutil
    import tempfile

    base = tempfile.mkdtemp(prefix="mi", dir="/tmp")
    os.chmod(base, 0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", base)
    # ... and no user config but its own (config layers); trust records go to the run's
    # XDG_STATE_HOME above, keyed by each test's own paths
    monkeypatch.setenv("XDG_CONFIG_HOME", os.path.join(base, "config"))
    monkeypatch.delenv("MEMINDEX_CONFIG_JSON", raising=False)
    yield Path(base)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture()
def hook_project(tmp_path: Path) -> Path:
    """The hook tests' project (hookkit.hook_store): seventeen memories, synced."""
    from hookkit import hook_store

    return hook_store(tmp_path)


@pytest.fixture()
def inject_project(tmp_path: Path) -> Path:
    """The injection-policy tests' project (hookkit.inject_store): five memories, synced."""
    from hookkit import inject_store

    return inject_store(tmp_path)


# A timestamp that is valid, old enough for retention tests to reason about, and fixed.
DEFAULT_TIME = "2026-01-15T10:00:00Z"


# --- building memories ------------------------------------------------------------------


@pytest.fixture()
def rules_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand-set rules (`match_strategy: fts5_bm25`), for tests of one rule itself: the
    default is the relevance model, which draws one boundary in place of rules 1, 2, 6, 7."""
    from memindex import config

    monkeypatch.setitem(config.DEFAULTS, "retrieval.match_strategy", "fts5_bm25")
    monkeypatch.setenv(config.ENV_CONFIG, json.dumps({"retrieval": {"match_strategy": "fts5_bm25"}}))


def default_content(category: str) -> dict[str, Any]:
    """The smallest schema-valid `content` of a category, with no searchable words of its
    own (so tests control exactly which words a memory contains)."""
    return {
        "session_summary": {
            "goal": "", "outcome": "success", "completed": [], "in_progress": [],
            "blockers": [], "next_actions": [], "key_changes": [],
        },
        "decision": {
            "status": "accepted", "context": "", "decision": "", "alternatives": [],
            "rationale": [], "consequences": [],
        },
        "runbook": {
            "trigger": "", "symptoms": [], "steps": ["-"], "verification": "",
            "root_cause": "", "environment": "",
        },
        "constraint": {
            "kind": "technical", "rule": "", "impact": [], "workarounds": [],
            "severity": "medium", "active": True, "expires": None,
        },
        "tech_debt": {
            "status": "open", "priority": "medium", "description": "", "reason_deferred": "",
            "impact": [], "suggested_fix": [], "acceptance_criteria": [],
        },
        "preference": {
            "topic": "", "value": "", "reason": "", "strength": "default",
            "examples": {"prefer": [], "avoid": []},
        },
    }[category]


def make_memory(
    category: str,
    id: str,
    title: str,
    tags: Iterable[str] = ("misc",),
    content: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A schema-1.0 memory dict with every required key.

    `content` is merged over the category's minimal default content; `fields` override
    top-level keys. A `record_status` of retired/archived gets its `*_at` timestamp unless
    the caller sets it (pass `retired_at=None` to build the invalid combination).
    """
    data: dict[str, Any] = {
        "schema_version": "1.0",
        "category": category,
        "id": id,
        "title": title,
        "created_at": DEFAULT_TIME,
        "updated_at": DEFAULT_TIME,
        "tags": list(tags),
        "content": {**default_content(category), **(content or {})},
        "related_files": [],
        "confidence": 0.8,
        "record_status": "active",
        "changes": [],
        "times_updated": 0,
        "retired_at": None,
        "retired_reason": None,
        "archived_at": None,
        "archived_reason": None,
    }
    data.update(fields)
    status = data["record_status"]
    if status == "retired" and "retired_at" not in fields:
        data["retired_at"] = data["updated_at"]
        data["retired_reason"] = data["retired_reason"] or "no longer true"
    if status == "archived" and "archived_at" not in fields:
        data["archived_at"] = data["updated_at"]
        data["archived_reason"] = data["archived_reason"] or "kept for history"
    return data


def write_json(root: str | os.PathLike[str], rel: str, obj: Any) -> Path:
    """Write any JSON value at `<root>/<rel>` (creating folders)."""
    path = Path(root) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def write_raw(root: str | os.PathLike[str], rel: str, data: bytes | str) -> Path:
    """Write raw bytes (or text as UTF-8) at `<root>/<rel>`."""
    path = Path(root) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def write_mem(
    root: str | os.PathLike[str],
    category: str,
    id: str,
    title: str,
    tags: Iterable[str] = ("misc",),
    content: dict[str, Any] | None = None,
    *,
    folder: str | None = None,
    name: str | None = None,
    **fields: Any,
) -> Path:
    """Write a valid schema-1.0 memory file `<folder>/<id>.json` and return its path.

    `folder` / `name` (file stem) override where it goes, to build misplaced files.
    """
    data = make_memory(category, id, title, tags, content, **fields)
    rel = f"{folder or CATEGORY_FOLDER[category]}/{name or id}.json"
    return write_json(root, rel, data)


def rel_of(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    return Path(path).relative_to(root).as_posix()


# --- looking at the index ----------------------------------------------------------------


def doc_rows(root: str | os.PathLike[str]) -> list[tuple[str, str, list[str], str]]:
    """(path, title, tags, record_status) of every indexed memory, sorted by path."""
    conn = index.open_reader(root)
    try:
        rows = conn.execute("SELECT path, title, tags, record_status FROM documents ORDER BY path").fetchall()
    finally:
        conn.close()
    return [(p, t, json.loads(g), s) for p, t, g, s in rows]


def invalid_rows(root: str | os.PathLike[str]) -> dict[str, str]:
    conn = index.open_reader(root)
    try:
        return dict(conn.execute("SELECT path, error FROM invalid"))
    finally:
        conn.close()


def search_paths(root: str | os.PathLike[str], text: str, **kw: Any) -> list[str]:
    """Paths of `query.search` hits, best first."""
    from memindex.retrieval.query import search

    conn = index.open_reader(root)
    try:
        return [h.path for h in search(conn, text, **kw)]
    finally:
        conn.close()


def search_results(root: str | os.PathLike[str], text: str, **kw: Any) -> list[tuple[str, float]]:
    """(path, score rounded to 6 digits) of `query.search` hits, best first."""
    from memindex.retrieval.query import search

    conn = index.open_reader(root)
    try:
        return [(h.path, round(h.score, 6)) for h in search(conn, text, **kw)]
    finally:
        conn.close()


def index_snapshot(root: str | os.PathLike[str], queries: Iterable[str] = ()) -> dict[str, Any]:
    """What two indexes of the same files must agree on: documents and search results."""
    return {
        "docs": doc_rows(root),
        "invalid": sorted(invalid_rows(root)),
        "search": {q: search_results(root, q, limit=20) for q in queries},
    }


def remove_index(root: str | os.PathLike[str]) -> None:
    """Delete the index and its WAL/SHM files (so the next sync builds a fresh one)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(os.path.join(root, INDEX_FILE + suffix))
        except FileNotFoundError:
            pass


def bump_clock() -> None:
    """Let the file-system clock move on, so that a change made right after a sync gets a
    different ctime/mtime even on kernels with coarse (jiffy) timestamps."""
    time.sleep(0.02)


# --- the CLI as a process ----------------------------------------------------------------


def trust_config(root: str | os.PathLike[str]) -> None:
    """`memindex trust` for the root's memory-config.json as it is now: a project's config
    may make memindex do more (a model, a worker, looser injection) only once trusted."""
    from memindex import trust
    from memindex.defaults import CONFIG_FILE

    path = os.path.join(root, CONFIG_FILE)
    with open(path, "rb") as fh:
        trust.allow(root, fh.read(), path)


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def cli_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "memindex", *args]


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `python -m memindex ARGS` as a subprocess and capture its output."""
    return subprocess.run(
        cli_cmd(*args), cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=timeout
    )


# --- fixtures ----------------------------------------------------------------------------


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """`<tmp>/proj`: a project with an (empty) `.claude/memory` store."""
    proj = tmp_path / "proj"
    for folder in FOLDERS:
        (proj / ".claude" / "memory" / folder).mkdir(parents=True)
    return proj


@pytest.fixture
def memory_root(project_dir: Path) -> Path:
    """`<tmp>/proj/.claude/memory` with the six category folders, empty."""
    return project_dir / ".claude" / "memory"


@pytest.fixture
def enforce_read_permissions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a file without read permission unreadable, even when the tests run as root.

    root ignores permission bits, so under euid 0 `os.open` is wrapped to refuse (EACCES)
    reading a regular file that has no read bit, as it would for any other user.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    import errno

    real_open = os.open

    def guarded_open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if (
            st is not None
            and (st.st_mode & 0o170000) == 0o100000
            and (flags & os.O_ACCMODE) in (os.O_RDONLY, os.O_RDWR)
            and not st.st_mode & 0o444
        ):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_open)


# --- larger stores -----------------------------------------------------------------------


def populate(root: str | os.PathLike[str], n: int, seed: int = 0, marker: str = "") -> list[Path]:
    """Write `n` valid memories spread over the six categories, with pseudo-random text
    from a small vocabulary (deterministic for a seed). `marker` is appended to every
    title, so rewriting with another marker changes every file."""
    import random

    from memindex.defaults import CATEGORIES

    rng = random.Random(seed)
    paths = []
    for i in range(n):
        category = CATEGORIES[i % len(CATEGORIES)]
        words = rng.sample(VOCAB, 6)
        title = f"{words[0].capitalize()} {words[1]} note {i}" + (f" {marker}" if marker else "")
        body = " ".join(rng.choice(VOCAB) for _ in range(40))
        key = {
            "session_summary": "goal", "decision": "context", "runbook": "trigger",
            "constraint": "rule", "tech_debt": "description", "preference": "value",
        }[category]
        data = make_memory(category, f"m{i:05d}", title, words[2:5], {key: body})
        path = Path(root) / CATEGORY_FOLDER[category] / f"m{i:05d}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    return paths
