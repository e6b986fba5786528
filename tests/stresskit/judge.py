"""Judging output (the hook's block, the CLI's exit codes and stderr) and comparing an index with a clean rebuild."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from memindex import index as index_mod
from memindex.config import load_config
from memindex.defaults import FOLDERS, INDEX_MD

from .procs import BUDGET_S, DISPLAY, FAIL_EXITS, HANG_S, Result

_HEAD = re.compile(r'^<memory-context source="[^"<>]*">$')
_LINE = re.compile(r"^- \[([A-Z_]+)\] (.+) -> (\S+?)(?: #tags:(\S*))?$")
_ENTITY = re.compile(r"&(?!(?:amp|lt|gt|quot|#x[0-9A-F]+);)")
BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _unsafe_chars() -> frozenset[str]:
    """Look-alikes of `<`, `>`, `&` and invisible or line-breaking characters
    (memindex/data/unsafe_chars.json): none may reach the model raw."""
    data = json.loads((Path(__file__).resolve().parents[2] / "memindex" / "data" / "unsafe_chars.json").read_text())
    chars = {chr(cp) for cp, _ in data["lookalikes"]}
    for lo, hi in data["invisible_ranges"]:
        chars.update(chr(cp) for cp in range(lo, hi + 1))
    return frozenset(chars)


UNSAFE = _unsafe_chars()


def _session_json(out: str, root: Path | None, max_lines: int, soft: list[str] | None) -> tuple[list[str], list[str]]:
    """`{"systemMessage": one line for the user}` (SessionStart's health or review line,
    never the model's), optionally with `hookSpecificOutput.additionalContext`: a block."""
    try:
        data = json.loads(out)
    except ValueError:
        return [], [f"not one <memory-context> block nor JSON: {out[:200]!r}"]
    problems: list[str] = []
    if not isinstance(data, dict) or set(data) - {"systemMessage", "hookSpecificOutput"}:
        return [], [f"unexpected JSON output: {out[:200]!r}"]
    message = data.get("systemMessage", "")
    if not isinstance(message, str) or any(ch in BREAKS + "\n" for ch in message) or "<memory-context" in message:
        problems.append(f"the user's line is not one escaped line: {message[:200]!r}")
    spec = data.get("hookSpecificOutput") or {}
    block = spec.get("additionalContext", "") if isinstance(spec, dict) else ""
    if not isinstance(block, str):
        return [], problems + ["additionalContext is not text"]
    paths, more = parse_block(block, root, max_lines, soft) if block else ([], [])
    return paths, problems + more


def parse_block(out: str, root: Path | None = None, max_lines: int = 20, soft: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(paths shown, problems) of a hook's stdout. Nothing is fine; anything else must be
    exactly one well-formed <memory-context> block of escaped one-line memories. Control
    and BiDi characters that break nothing (C0/C1 controls other than line breaks, U+202E)
    go to `soft` when it is given: a weakness, not an escape."""
    if out == "":
        return [], []
    if out.startswith("{"):  # SessionStart's Claude Code JSON: a line for the user, maybe a block for the model
        return _session_json(out, root, max_lines, soft)
    problems: list[str] = []
    paths: list[str] = []
    if not out.endswith("\n"):
        problems.append("block does not end with a newline")
    lines = out[:-1].split("\n") if out.endswith("\n") else out.split("\n")
    if out.count("<memory-context") != 1 or out.count("</memory-context>") != 1:
        problems.append(f"{out.count('<memory-context')} opening and {out.count('</memory-context>')} closing tags")
    if len(lines) < 3 or not _HEAD.match(lines[0]) or lines[-1] != "</memory-context>":
        problems.append(f"not one <memory-context> block: {out[:200]!r}")
        return paths, problems
    body = lines[1:-1]
    if len(body) > max_lines:
        problems.append(f"{len(body)} memory lines")
    for line in body:
        bad = [ch for ch in line if ch in BREAKS]
        if bad:
            problems.append(f"line break {bad[0]!r} inside a memory line: {line[:120]!r}")
        odd = [ch for ch in line if ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F or 0x202A <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069]
        if odd and not bad and soft is not None:
            soft.append(f"control/BiDi character {odd[0]!r} in a memory line: {line[:120]!r}")
        if "<" in line:
            problems.append(f"raw '<' in a memory line: {line[:120]!r}")
        raw = [ch for ch in line if ch in UNSAFE]
        if raw:
            problems.append(f"raw look-alike or invisible character U+{ord(raw[0]):04X} in a memory line: {line[:120]!r}")
        if line.count(">") != 1:
            problems.append(f"'>' outside the line's arrow: {line[:120]!r}")
        if _ENTITY.search(line):
            problems.append(f"unescaped '&' in a memory line: {line[:120]!r}")
        m = _LINE.match(line)
        if not m:
            problems.append(f"malformed memory line: {line[:160]!r}")
            continue
        shown = m.group(3)
        paths.append(shown)
        problems += path_problems(shown, root)
    return paths, problems


def path_problems(shown: str, root: Path | None) -> list[str]:
    if not shown.startswith(DISPLAY):
        return [f"path outside {DISPLAY}: {shown!r}"]
    rel = shown[len(DISPLAY):]
    parts = rel.split("/")
    if len(parts) != 2 or parts[0] not in FOLDERS or parts[1] in ("", ".", "..") or not parts[1].endswith(".json"):
        return [f"path is not <folder>/<name>.json below {DISPLAY}: {shown!r}"]
    if root is not None:
        real = os.path.realpath(root / rel)
        base = os.path.realpath(root)
        if not (real == base or real.startswith(base + os.sep)):
            return [f"path resolves outside the memory root: {shown!r} -> {real}"]
    return []


def cli_problems(res: Result, name: str, ok: tuple[int, ...] = (0,), fail: tuple[int, ...] = FAIL_EXITS) -> list[str]:
    """A command works (exit in `ok`) or says clearly what is wrong: a README exit code
    and exactly one `memindex: ...` line on stderr; never a traceback or a hang."""
    if res.timed_out:
        return [f"{name}: no answer after {res.elapsed:.0f} s"]
    if "Traceback (most recent call last)" in res.err:
        return [f"{name}: traceback, exit {res.rc}: {res.last_err()}"]
    if res.rc in ok:
        return []  # notices and summaries on stderr are fine when the command worked
    if res.rc not in fail:
        return [f"{name}: exit {res.rc} (README: {ok} or {fail}): {res.last_err()}"]
    lines = [line for line in res.err_lines() if not line.startswith("memindex: config: ")]  # config warnings come first
    if res.rc == 2 and lines and ": error: " in lines[-1]:
        return []  # argparse: usage, then "memindex ...: error: why"
    lines = [line for line in lines if not line[:1].isspace()]  # indented details of the one message
    if len(lines) != 1 or not lines[0].startswith("memindex: "):
        return [f"{name}: exit {res.rc} with {len(lines)} stderr lines, expected one 'memindex: ...' line: {res.err[:200]!r}"]
    return []


def hook_problems(res: Result, root: Path | None, expect: str | None = None, name: str = "hook") -> list[str]:
    """The hook exits 0, says nothing or one well-formed block, at most one stderr line."""
    if res.timed_out:
        return [f"{name}: hung ({res.elapsed:.1f} s)"]
    problems = []
    if res.rc != 0:
        problems.append(f"{name}: exit {res.rc}")
    if "Traceback" in res.err:
        problems.append(f"{name}: traceback: {res.last_err()}")
    lines = res.err_lines()
    if len(lines) > 1:
        problems.append(f"{name}: {len(lines)} stderr lines (README: one): {res.err[:300]!r}")
    elif lines and not lines[0].startswith("memindex hook: "):
        problems.append(f"{name}: unexpected stderr {lines[0][:160]!r}")
    if res.elapsed > HANG_S:
        problems.append(f"{name}: took {res.elapsed:.1f} s (budget {BUDGET_S:g} s)")
    paths, block = parse_block(res.out, root)
    problems += [f"{name}: {p}" for p in block]
    if expect is not None and expect not in paths:
        problems.append(f"{name}: did not inject {expect} (stdout {res.out[:120]!r}, stderr {res.last_err()!r})")
    return problems


def prompt_payload(project: Path, prompt: str, **extra: Any) -> bytes:
    data = {"session_id": "stress", "transcript_path": None, "cwd": str(project),
            "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra}
    return json.dumps(data).encode()


# --------------------------------------------------------------------------------------
# comparing an index with a clean rebuild
# --------------------------------------------------------------------------------------

DOC_SQL = "SELECT path, id, category, title, tags, record_status FROM documents ORDER BY path"


def read_docs(root: Path) -> list[tuple]:
    """The documents table, read the way memindex's readers read it (immutable fallback
    included, for a full disk where no -shm can be made), as the index's owner (memindex
    refuses another user's index, root's test process included)."""
    with _as_owner(root / ".index.db"):
        conn = index_mod.open_reader(root)
        try:
            return conn.execute(DOC_SQL).fetchall()
        finally:
            conn.close()


def snapshot(root: Path, queries: Iterable[str]) -> dict[str, Any]:
    from memindex.retrieval.query import search

    conn = index_mod.open_reader(root)
    try:
        docs = conn.execute(DOC_SQL).fetchall()
        found = {q: [(h.path, round(h.score, 6)) for h in search(conn, q, limit=20)] for q in queries}
    finally:
        conn.close()
    md = root / INDEX_MD
    return {"docs": docs, "search": found, "index_md": md.read_text("utf-8") if md.exists() else None}


def reference(root: Path, queries: Iterable[str], scratch: Path) -> dict[str, Any]:
    """What a clean rebuild of the same files gives (in-process, in a scratch copy that
    keeps the `.claude/memory` layout, so index.md shows the same paths)."""
    from memindex.index.sync import sync

    project = Path(tempfile.mkdtemp(prefix="ref-", dir=scratch))
    try:
        ref = project / ".claude" / "memory"
        ref.mkdir(parents=True)
        for folder in FOLDERS:
            if (root / folder).is_dir():
                shutil.copytree(root / folder, ref / folder, symlinks=True)
        if (root / "memory-config.json").exists():
            shutil.copy(root / "memory-config.json", ref / "memory-config.json")
        sync(ref, load_config(ref))
        return snapshot(ref, queries)
    finally:
        shutil.rmtree(project, ignore_errors=True)


@contextmanager
def _as_owner(path: Path) -> Iterator[None]:
    """Read as the user who owns the index (memindex refuses another user's files, root's
    test process included)."""
    try:
        uid = path.stat().st_uid
    except OSError:
        uid = os.geteuid()
    if os.geteuid() != 0 or uid == 0:
        yield
        return
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)


def compare_with_rebuild(root: Path, queries: Iterable[str], scratch: Path, index_md: bool = True) -> list[str]:
    queries = list(queries)
    try:
        with _as_owner(root / ".index.db"):
            got = snapshot(root, queries)
    except Exception as exc:  # noqa: BLE001
        return [f"index unreadable after recovery: {type(exc).__name__}: {exc}"]
    want = reference(root, queries, scratch)
    problems = []
    if got["docs"] != want["docs"]:
        mine, clean = set(got["docs"]), set(want["docs"])
        extra, missing = sorted(mine - clean), sorted(clean - mine)
        example = (extra or missing)[0][0] if (extra or missing) else "?"
        problems.append(f"documents differ from a clean rebuild: {len(extra)} extra, {len(missing)} missing (e.g. {example})")
    for q in queries:
        if got["search"][q] != want["search"][q]:
            problems.append(f"search {q!r} differs from a clean rebuild")
    if index_md and got["index_md"] != want["index_md"]:
        problems.append("index.md differs from a clean rebuild's (stale after recovery)")
    return problems


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    events = []
    try:
        text = path.read_text("utf-8", "replace")
    except OSError:
        return events
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            value = {"event": "text", "msg": line}
        if isinstance(value, dict):
            events.append(value)
    return events
