"""Hostile roots and inputs beyond memindex's own files (the rest of the hostile phase):

- untrusted roots: a project owned by another user (under a 1777 folder, like /tmp),
  world- or group-writable folders on the way to the memory root, `.claude/memory` or
  `.claude` linked out of the project; with controls that must keep working (a project
  of this user under /tmp, the user's own group, a link inside the project, an explicit
  `--root`);
- bounded parsing: numbers of thousands of digits, JSON nested 600 deep, lone
  surrogates, edge-of-calendar dates with offsets, an unhashable category, NaN, in
  memory files and in what `save`/`update` are given;
- tag bombs: 10k and 80k tags in one file (cost must stay linear and small);
- a damaged index (meta not JSON, fts dropped, damaged pages), bad lock timeouts, the
  hook's streams closed or full, a burst of PostToolUse calls while the lock is held.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import sqlite3
import stat
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

from memindex.config import load_config
from memindex.defaults import INDEX_FILE, INDEX_MD, LOCK_FILE, LOG_FILE, SPAWN_MARKER, TAGS_INDEX_MAX
from memindex.index.sync import sync

from .harness import Context, Project, Row
from .hostile import (
    CLI_BUDGET_S,
    classify,
    MEMORY_LIMIT,
    cli,
    hook,
    post_tool_payload,
    processes_of,
    session_payload,
    wait_background,
)
from .judge import cli_problems, hook_problems, prompt_payload
from .memories import NonceWords, Target, build_store, dump, memory_doc, new_target
from .procs import ENV, HANG_S, NOBODY, PY, hook_argv, preexec

# --- helpers ----------------------------------------------------------------------------------


def tree_state(top: Path) -> dict[str, tuple]:
    """Every entry below `top` (not following links): what must not change in a root that
    memindex refuses."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.relpath(path, top)] = (stat.S_IFMT(st.st_mode), st.st_uid, st.st_size, st.st_mtime_ns)
    return out


def file_state(path: Path) -> tuple | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (path.read_bytes(), st.st_mtime_ns, st.st_uid)


def targets_for(seed: int, n: int = 2) -> list[Target]:
    rng = random.Random(seed)
    words = NonceWords(rng)
    return [new_target(words, rng, category="decision") for _ in range(n)]


def make_store(memory: Path, targets: list[Target], seed: int) -> None:
    """A small store with an index, built as this user."""
    memory.mkdir(parents=True, exist_ok=True)
    build_store(memory, 10, targets, seed)
    sync(memory, load_config(memory))


# --- untrusted roots --------------------------------------------------------------------------


class RootCase:
    def __init__(self, name: str, trusted: bool, build: Callable[[Path], tuple[Path, Path]]) -> None:
        self.name, self.trusted, self.build = name, trusted, build


def _plain(base: Path, targets: list[Target], seed: int, mode: int = 0o755) -> tuple[Path, Path]:
    project = base / "proj"
    memory = project / ".claude" / "memory"
    make_store(memory, targets, seed)
    for p in (project, project / ".claude", memory):
        os.chmod(p, mode)
    return project, memory


def root_cases(targets: list[Target], seed: int) -> list[RootCase]:
    def sticky(base: Path) -> Path:
        tmp = base / "tmp"
        tmp.mkdir()
        os.chmod(tmp, 0o1777)
        return tmp

    def foreign_project(base: Path) -> tuple[Path, Path]:
        project, memory = _plain(sticky(base), targets, seed)
        for dirpath, dirnames, filenames in os.walk(project):
            os.chown(dirpath, NOBODY, NOBODY)
            for name in dirnames + filenames:
                os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)
        return project, memory

    def own_under_tmp(base: Path) -> tuple[Path, Path]:
        return _plain(sticky(base), targets, seed)

    def writable(which: str, mode: int, group: int | None = None) -> Callable[[Path], tuple[Path, Path]]:
        def build(base: Path) -> tuple[Path, Path]:
            project, memory = _plain(base, targets, seed)
            path = {"project": project, ".claude": project / ".claude", ".claude/memory": memory}[which]
            if group is not None:
                os.chown(path, -1, group)
            os.chmod(path, mode)
            return project, memory
        return build

    def memory_owned_by_other(base: Path) -> tuple[Path, Path]:
        project, memory = _plain(base, targets, seed)
        os.chown(memory, NOBODY, NOBODY)
        return project, memory

    def linked(what: str, where: str) -> Callable[[Path], tuple[Path, Path]]:
        def build(base: Path) -> tuple[Path, Path]:
            project = base / "proj"
            (project / ".claude").mkdir(parents=True)
            elsewhere = (project / "shared") if where == "inside" else (base / "users-folder")
            memory = elsewhere / "memory" if what == ".claude" else elsewhere
            make_store(memory, targets, seed)
            if what == ".claude":
                (project / ".claude").rmdir()
                os.symlink(elsewhere, project / ".claude")
            elif where == "relative":
                os.symlink(os.path.relpath(elsewhere, project / ".claude"), project / ".claude" / "memory")
            else:
                os.symlink(elsewhere, project / ".claude" / "memory")
            return project, memory
        return build

    own_gid = os.getegid()
    cases = [
        RootCase("project of uid 65534 under a 1777 folder (like /tmp)", False, foreign_project),
        RootCase("project folder writable by every user (0777)", False, writable("project", 0o777)),
        RootCase(".claude writable by every user (0777)", False, writable(".claude", 0o777)),
        RootCase(".claude/memory writable by every user (0777)", False, writable(".claude/memory", 0o777)),
        RootCase(".claude/memory writable by group 65534 (0775)", False, writable(".claude/memory", 0o775, NOBODY)),
        RootCase(".claude/memory owned by uid 65534", False, memory_owned_by_other),
        RootCase(".claude/memory -> a folder outside the project", False, linked("memory", "outside")),
        RootCase(".claude/memory -> ../../ relative link out of the project", False, linked("memory", "relative")),
        RootCase(".claude -> a folder outside the project", False, linked(".claude", "outside")),
        RootCase("control: this user's project under a 1777 folder", True, own_under_tmp),
        RootCase("control: group-writable for this user's own group", True, writable(".claude/memory", 0o775, own_gid)),
        RootCase("control: .claude/memory -> a folder inside the project", True, linked("memory", "inside")),
    ]
    if os.geteuid() != 0:
        cases = [c for c in cases if "65534" not in c.name]
    return cases


def judge_root_case(case: RootCase, base: Path, target: Target, quick: bool = False) -> tuple[int, list[str]]:
    project, memory = case.build(base)
    outside = base / "root-owned-sentinel"
    outside.write_bytes(b"root's file\n")
    if not case.trusted:  # the attacks of issue 15: memindex's files linked to the victim's file
        for name in (SPAWN_MARKER, LOG_FILE):
            os.symlink(outside, memory / name)
            if os.geteuid() == 0 and "65534" in case.name and "owned" not in case.name:
                os.chown(memory / name, NOBODY, NOBODY, follow_symlinks=False)
    sentinel = file_state(outside)
    before = tree_state(memory)
    md_before = file_state(memory / INDEX_MD)
    problems: list[str] = []
    runs = 0
    needle = str(base)
    shown = project / ".claude" / "memory"  # the path Claude Code gives (through any link)
    calls: list[tuple[str, Callable[[], object]]] = [
        ("hook prompt", lambda: hook("prompt", prompt_payload(project, target.prompt), project)),
        ("hook session-start", lambda: hook("session-start", session_payload(project), project)),
        ("hook post-tool-use", lambda: hook("post-tool-use", post_tool_payload(project, shown / target.rel), project)),
        ("sync (walk from cwd)", lambda: cli([PY, "-m", "memindex", "sync"], project)),
        ("search (walk from cwd)", lambda: cli([PY, "-m", "memindex", "search", "--", target.prompt], project)),
        ("status --root PROJECT", lambda: cli([PY, "-m", "memindex", "--root", str(project), "status"], project)),
        ("validate --root PROJECT", lambda: cli([PY, "-m", "memindex", "--root", str(project), "validate"], project)),
    ]
    if quick:  # the hooks, and the CLI's walk from the working directory
        calls = calls[:2] + calls[3:5]
    if case.name.startswith(".claude/memory ->") and not case.trusted:  # the user names the folder itself
        calls.append(("control: search --root MEMORY-FOLDER", lambda: cli(
            [PY, "-m", "memindex", "--root", str(shown), "search", "--no-sync", "--", target.prompt], project)))
    for name, call in calls:
        res = call()
        runs += 1
        label = f"{case.name}: {name}"
        left = wait_background(needle)
        if left:
            problems.append(f"{label}: {len(left)} background process(es) still running")
        trusted = case.trusted or name.startswith("control:")
        if name.startswith("hook"):
            problems += hook_problems(res, memory, name=label)
            lines = res.err_lines()
            if name == "hook prompt" and trusted and target.shown not in res.out:
                problems.append(f"{label}: a trusted root's memory was not injected ({res.last_err()!r})")
            if not trusted:
                if res.out:
                    problems.append(f"{label}: injected from an untrusted root: {res.out[:120]!r}")
                if len(lines) != 1 or "untrusted memory root" not in lines[0]:
                    problems.append(f"{label}: expected one 'untrusted memory root' line, got {res.err[:200]!r}")
        else:
            ok = (0, 1) if "validate" in name else (0,)
            problems += [f"{label}: {p}" for p in cli_problems(res, name.split()[0], ok=ok if trusted else ())]
            if trusted and name.startswith(("search", "control")) and target.shown not in res.out:
                problems.append(f"{label}: exit {res.rc} without the memory ({res.last_err()!r})")
            if not trusted and (res.rc != 5 or "untrusted memory root" not in res.err):
                problems.append(f"{label}: expected exit 5 and an 'untrusted memory root' line, got {res.rc}: {res.last_err()!r}")
        if file_state(outside) != sentinel:
            problems.append(f"{label}: a file outside the root was written through the root's links")
            outside.write_bytes(b"root's file\n")
            sentinel = file_state(outside)
        if not trusted and tree_state(memory) != before:
            problems.append(f"{label}: the untrusted root was modified (index, index.md or markers written)")
            before = tree_state(memory)
    if not case.trusted and file_state(memory / INDEX_MD) != md_before:
        problems.append(f"{case.name}: the untrusted root's index.md was rewritten")
    return runs, problems


def untrusted_roots(ctx: Context) -> None:
    targets = targets_for(ctx.seed + 160)
    cases = root_cases(targets, ctx.seed)
    top = ctx.base / "roots"
    top.mkdir()
    os.chmod(top, 0o755)

    def one(i_case: tuple[int, RootCase]) -> tuple[int, list[str]]:
        i, case = i_case
        base = top / f"case-{i:02d}"
        base.mkdir()
        return judge_root_case(case, base, targets[0], ctx.quick)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, enumerate(cases)))
    runs = sum(r for r, _ in results)
    problems = [p for _, ps in results for p in ps]
    refused = sum(1 for c in cases if not c.trusted)
    row = Row("hostile root: untrusted roots (other user's project, world/group-writable folders, .claude/memory linked "
              "out of the project) and controls", runs=runs, failures=len(problems),
              figures=f"{refused} refused cases, {len(cases) - refused} controls x {4 if ctx.quick else 7} commands; "
                      f"{classify(problems)}", problems=problems)
    if os.geteuid() != 0:
        row.note = "uid 65534 cases skipped: not root"
    ctx.special_runs += runs
    ctx.add(row)


# --- bounded parsing ----------------------------------------------------------------------------

HUGE = "9" * 5000
DEEP = "[" * 600 + "]" * 600
EDGE_DATES = ("0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00")


def bad_memory_files(root: Path) -> dict[str, bytes]:
    """rel -> bytes: memory files that once crashed a command."""
    def doc(mem_id: str, **over: object) -> dict:
        out = memory_doc("decision", mem_id, f"Bad file {mem_id}", ["bad"], "body text")
        out.update(over)
        return out

    def raw(memory: dict, **replace: str) -> bytes:
        text = json.dumps(memory)
        for key, value in replace.items():
            text = text.replace(f'"@{key}@"', value)
        return text.encode()

    files = {
        "decisions/huge-number.json": raw(doc("huge-number", confidence="@n@"), n=HUGE),
        "decisions/huge-number-content.json": raw(doc("huge-number-content", content={"context": "@n@"}), n="-" + HUGE),
        "decisions/deep.json": raw(doc("deep", content={"context": "@d@"}), d=DEEP),
        "decisions/surrogate-title.json": raw(doc("surrogate-title", title="@s@"), s='"lone \\ud800 title"'),
        "decisions/surrogate-content.json": raw(doc("surrogate-content", content={"context": "@s@"}), s='"x \\udfff"'),
        "decisions/unhashable-category.json": raw(doc("unhashable-category", category=["decision"])),
        "decisions/dict-category.json": raw(doc("dict-category", category={"a": 1})),
        "decisions/nan.json": raw(doc("nan", confidence="@x@"), x="NaN"),
        "decisions/infinity.json": raw(doc("infinity", times_updated="@x@"), x="-Infinity"),
    }
    for i, date in enumerate(EDGE_DATES):
        files[f"decisions/edge-retired-{i}.json"] = raw(doc(f"edge-retired-{i}", record_status="retired", retired_at=date,
                                                            retired_reason="old", updated_at=date))
        files[f"decisions/edge-active-{i}.json"] = raw(doc(f"edge-active-{i}", created_at=date, updated_at=date))
    return files


def bad_inputs() -> dict[str, str]:
    """What `save` and `update` were given (JSON text)."""
    base = {"title": "A new memory from hostile input", "tags": ["x"],
            "content": {"status": "accepted", "context": "c", "decision": "d"}}

    def with_(**over: str) -> str:
        text = json.dumps({**base, **{k: f"@{k}@" for k in over}})
        for k, v in over.items():
            text = text.replace(f'"@{k}@"', v)
        return text

    out = {
        "number of 5000 digits": with_(confidence=HUGE),
        "nested 600 deep": with_(content=DEEP),
        "lone surrogate in the title": with_(title='"x \\ud800"'),
        "lone surrogate in content": with_(content='{"context": "\\udc00"}'),
        "unhashable category": with_(category='["decision"]'),
        "NaN confidence": with_(confidence="NaN"),
    }
    for i, date in enumerate(EDGE_DATES):
        out[f"edge date {i} as created_at"] = with_(created_at=json.dumps(date))
        out[f"edge date {i} as updated_at"] = with_(updated_at=json.dumps(date))
    return out


def bounded_parsing(ctx: Context) -> None:
    targets = targets_for(ctx.seed + 170)
    proj = Project(ctx, "hostile-parsing", n_fill=10, targets=targets, seed=ctx.seed)
    for rel, data in bad_memory_files(proj.root).items():
        (proj.root / rel).write_bytes(data)
    t = targets[0]
    problems: list[str] = []
    runs = 0
    slowest = 0.0

    def check(res, name: str, ok=(0,), fail=(1, 2, 3, 4, 5, 6)) -> None:
        nonlocal runs, slowest
        runs += 1
        slowest = max(slowest, res.elapsed)
        problems.extend(cli_problems(res, name, ok=ok, fail=fail))
        if "internal error" in res.err:
            problems.append(f"{name}: internal error: {res.last_err()}")
        if res.elapsed > CLI_BUDGET_S:
            problems.append(f"{name}: took {res.elapsed:.1f} s")

    for args in (("sync",), ("rebuild",), ("status",), ("gc", "--dry-run"), ("gc",)):
        check(cli(proj.argv(*args), proj.project), " ".join(args))
    check(cli(proj.argv("validate"), proj.project), "validate", ok=(1,))
    res = cli(proj.argv("search", "--", t.prompt), proj.project)
    check(res, "search")
    if res.rc == 0 and t.shown not in res.out:
        problems.append("search: a good memory next to the bad files was not found")
    res = hook("prompt", prompt_payload(proj.project, t.prompt), proj.project)
    runs += 1
    problems += hook_problems(res, proj.root, expect=t.shown, name="hook prompt next to the bad files")
    wait_background(str(proj.project))
    for rel in bad_memory_files(proj.root):
        if (proj.root / rel).exists():
            check(cli(proj.argv("update", rel, "--data", '{"title": "patched title"}'), proj.project), f"update {rel}",
                  ok=(0,), fail=(1,))
            if not ctx.quick:
                check(cli(proj.argv("retire", rel, "--reason", "hostile"), proj.project), f"retire {rel}", ok=(0,), fail=(1,))
    for name, text in bad_inputs().items():
        check(cli(proj.argv("save", "--category", "decision", "--data", text), proj.project), f"save ({name})",
              ok=(0,), fail=(1, 2))
        check(cli(proj.argv("update", targets[1].rel, "--data", text), proj.project), f"update ({name})",
              ok=(0,), fail=(1, 2))
    check(cli(proj.argv("gc"), proj.project), "gc after the edits")
    ctx.special_runs += runs
    ctx.add(Row("hostile root: bounded parsing (5000-digit numbers, 600-deep JSON, lone surrogates, edge dates, "
                "unhashable category, NaN) in files and in save/update input", runs=runs, failures=len(problems),
                figures=f"{len(bad_memory_files(proj.root))} bad files, {len(bad_inputs())} bad inputs; {classify(problems)}; "
                        f"slowest {slowest:.1f} s",
                problems=problems))


# --- tag bombs -----------------------------------------------------------------------------------

TAG_BUDGET_S = 5.0


def tag_bomb(mem_id: str, n: int, words: tuple[str, str]) -> bytes:
    """A memory with `n` short tags (80k of them fit the default 1 MB limit: 720 KB)."""
    tags = [f"g{i:05x}" for i in range(n)]
    doc = memory_doc("decision", mem_id, f"Tag bomb {words[0]} {words[1]}", tags, f"{words[0]} {words[1]} body")
    return json.dumps(doc, separators=(",", ":")).encode()


def tag_bombs(ctx: Context) -> None:
    targets = targets_for(ctx.seed + 180)
    proj = Project(ctx, "hostile-tags", n_fill=20, targets=targets, seed=ctx.seed)
    problems: list[str] = []
    times: dict[str, float] = {}
    indexed: dict[int, int] = {}
    runs = 0
    for n in (10_000, 80_000):
        words = targets[n == 80_000].words
        path = proj.root / "decisions" / f"bomb-{n}.json"
        path.write_bytes(tag_bomb(f"bomb-{n}", n, words))
        shown = f".claude/memory/decisions/bomb-{n}.json"
        query = f"{words[0]} {words[1]} g00001 g00002"
        steps = [
            ("sync", lambda: cli(proj.argv("sync"), proj.project)),
            ("search", lambda: cli(proj.argv("search", "--no-sync", "--", query), proj.project)),
            ("hook prompt", lambda: hook("prompt", prompt_payload(proj.project, query), proj.project)),
            ("validate", lambda: cli(proj.argv("validate"), proj.project)),
        ]
        for name, step in steps:
            res = step()
            runs += 1
            times[f"{name} {n // 1000}k"] = res.elapsed
            if name == "hook prompt":
                problems += hook_problems(res, proj.root, name=f"{name} ({n} tags)")
            else:
                problems += cli_problems(res, f"{name} ({n} tags)", ok=(0, 1) if name == "validate" else (0,))
            if name == "search" and shown not in res.out:
                problems.append(f"search did not find the memory with {n} tags: {res.out[:200]!r} {res.last_err()!r}")
            if res.elapsed > TAG_BUDGET_S:
                problems.append(f"{name} with a file of {n} tags took {res.elapsed:.1f} s (budget {TAG_BUDGET_S:g} s)")
        wait_background(str(proj.project))
        conn = sqlite3.connect(f"file:{proj.root / INDEX_FILE}?mode=ro", uri=True)
        indexed[n] = conn.execute(
            "SELECT count(*) FROM tag_index WHERE doc = (SELECT rowid FROM documents WHERE id = ?)", (f"bomb-{n}",)
        ).fetchone()[0]
        conn.close()
        path.unlink()
    figures = "; ".join(f"{k} {v:.2f} s" for k, v in times.items())
    figures += "; tags indexed: " + ", ".join(f"{indexed[n]} of {n}" for n in indexed)
    if any(v > TAGS_INDEX_MAX or v == 0 for v in indexed.values()):
        problems.append(f"tags indexed per memory: {indexed} (expected 1..{TAGS_INDEX_MAX})")
    ctx.special_runs += runs
    ctx.add(Row("hostile root: tag bombs (one memory with 10k, then 80k tags in 720 KB: sync, search, hook, validate)",
                runs=runs, failures=len(problems), figures=figures, problems=problems))


# --- a damaged index, bad arguments, closed streams, a burst of PostToolUse ------------------------


def _fresh(ctx: Context, name: str, targets: list[Target]) -> Project:
    proj = Project(ctx, name, n_fill=30, targets=targets, seed=ctx.seed)
    sync(proj.root, load_config(proj.root))
    return proj


def _sql(root: Path, statement: str) -> None:
    conn = sqlite3.connect(str(root / INDEX_FILE))
    try:
        conn.execute(statement)
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def damaged_index(ctx: Context, targets: list[Target], problems: list[str]) -> int:
    t = targets[0]
    runs = 0
    cases = {
        "meta value not JSON": "UPDATE meta SET value = '{not json' WHERE key = 'doc_count'",
        "fts table dropped": "DROP TABLE fts",
        "documents table dropped": "DROP TABLE documents",
    }
    for i, (name, statement) in enumerate(cases.items()):
        for repair in ("sync",) if ctx.quick else ("sync", "rebuild"):
            proj = _fresh(ctx, f"hostile-damage-{i}-{repair}", targets)
            _sql(proj.root, statement)
            for args in (("status",), ("search", "--no-sync", "--", t.prompt)):
                res = cli(proj.argv(*args), proj.project)
                runs += 1
                problems += [f"{name}: {p}" for p in cli_problems(res, args[0])]
            res = cli(proj.argv(repair), proj.project)
            runs += 1
            problems += [f"{name}: {p}" for p in cli_problems(res, repair)]
            res = cli(proj.argv("search", "--no-sync", "--", t.prompt), proj.project)
            runs += 1
            if res.rc != 0 or t.shown not in res.out:
                problems.append(f"{name}: `{repair}` did not repair the index (search: exit {res.rc}, {res.last_err()!r})")
    # damaged pages: readers cannot tell on opening; the hook must start the repair
    proj = _fresh(ctx, "hostile-damage-pages", targets)
    db = proj.root / INDEX_FILE
    data = bytearray(db.read_bytes())
    rng = random.Random(ctx.seed)
    for at in range(len(data) // 3, 2 * len(data) // 3, 4096):
        data[at + 100: at + 3000] = rng.randbytes(2900)
    db.write_bytes(bytes(data))
    answered = False
    for attempt in range(3):
        res = hook("prompt", prompt_payload(proj.project, t.prompt), proj.project)
        runs += 1
        problems += hook_problems(res, proj.root, name=f"hook on damaged pages (call {attempt + 1})")
        wait_background(str(proj.project))
        if t.shown in res.out:
            answered = True
            break
    if not answered:
        problems.append("damaged pages: the hook stayed silent for 3 prompts (no repair started)")
    return runs


def bad_lock_timeouts(ctx: Context, targets: list[Target], problems: list[str]) -> int:
    proj = _fresh(ctx, "hostile-timeouts", targets)
    runs = 0
    for value in ("nan", "-1", "inf", "1e309", "-0.5"):
        for args in (("sync",), ("rebuild",), ("gc",), ("update", targets[0].rel, "--data", '{"title": "x y z"}')):
            res = cli(proj.argv(*args, "--lock-timeout", value), proj.project, timeout=10)
            runs += 1
            problems += [f"--lock-timeout {value}: {p}" for p in cli_problems(res, args[0], ok=(), fail=(2,))]
    return runs


def closed_streams(ctx: Context, targets: list[Target], problems: list[str]) -> int:
    """The hook exits 0 whatever happens to its standard streams (closed, or a full device)."""
    proj = _fresh(ctx, "hostile-streams", targets)
    payload = prompt_payload(proj.project, targets[0].prompt)
    argv = " ".join(f"'{a}'" for a in hook_argv("prompt"))
    runs = 0
    for name, redirect in {
        "stdout closed": ">&-", "stdout a full device": ">/dev/full", "stderr closed": "2>&-",
        "stderr a full device": "2>/dev/full", "both closed": ">&- 2>&-", "both full": ">/dev/full 2>/dev/full",
        "stdin closed": "<&-",
    }.items():
        status = _hook_status(argv, redirect, payload, proj.project)
        runs += 1
        if status != 0:
            problems.append(f"hook with {name}: exit {status}")
    wait_background(str(proj.project))
    return runs


def _hook_status(argv: str, redirect: str, payload: bytes, cwd: Path) -> int | str:
    """Run the hook under /bin/sh with the redirection; its exit status comes back in a
    file (the shell's own stdout and stderr are what the redirection takes away)."""
    status = cwd.parent / "hook-status"
    status.unlink(missing_ok=True)
    try:
        subprocess.run(["/bin/sh", "-c", f"{argv} {redirect}; echo $? > '{status}'"], input=payload,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, cwd=cwd, timeout=HANG_S + 5,
                       preexec_fn=preexec(False, None, MEMORY_LIMIT))
    except subprocess.TimeoutExpired:
        return "hang"
    text = status.read_text().strip() if status.exists() else ""
    return int(text) if text.isdigit() else f"no status ({text!r})"


def post_tool_burst(ctx: Context, targets: list[Target], problems: list[str], n: int = 60) -> tuple[int, str]:
    """n PostToolUse calls while another writer holds the lock: at most one background
    sync waits; once the lock is free, it indexes every file written."""
    proj = _fresh(ctx, "hostile-burst", targets)
    rng = random.Random(ctx.seed + 190)
    words = NonceWords(rng)
    new = [new_target(words, rng, category="runbook") for _ in range(n)]
    for t in new:
        (proj.root / t.rel).write_bytes(dump(t.doc()))
    fd = os.open(proj.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    waiting_max = 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with ThreadPoolExecutor(max_workers=6) as pool:
            results = list(pool.map(
                lambda t: hook("post-tool-use", post_tool_payload(proj.project, proj.root / t.rel), proj.project), new))
        for res in results:
            problems += hook_problems(res, proj.root, name="post-tool-use in a burst")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # the coalesced ones leave at once
            waiting = len(processes_of(str(proj.project)))
            if waiting <= 1:
                break
            time.sleep(0.1)
        waiting_max = len(processes_of(str(proj.project)))
        if waiting_max > 1:
            problems.append(f"{waiting_max} background syncs still wait for the lock after a burst of {n} PostToolUse calls")
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    left = wait_background(str(proj.project), 35)
    if left:
        problems.append(f"{len(left)} background syncs did not finish once the lock was free")
    conn = sqlite3.connect(f"file:{proj.root / INDEX_FILE}?mode=ro", uri=True)
    have = {row[0] for row in conn.execute("SELECT path FROM documents")}
    conn.close()
    missing = [t.rel for t in new if t.rel not in have]
    if missing:
        problems.append(f"{len(missing)} of {n} files written during the burst are not indexed (e.g. {missing[0]})")
    return n, f"burst of {n} PostToolUse with the lock held: {waiting_max} sync waiting (at most 1)"


def damaged_and_streams(ctx: Context) -> None:
    targets = targets_for(ctx.seed + 200)
    problems: list[str] = []
    runs = damaged_index(ctx, targets, problems)
    runs += bad_lock_timeouts(ctx, targets, problems)
    runs += closed_streams(ctx, targets, problems)
    burst_runs, burst = post_tool_burst(ctx, targets, problems, n=20 if ctx.quick else 60)
    runs += burst_runs
    ctx.special_runs += runs
    ctx.add(Row("hostile root: damaged index (meta, fts, documents, pages), bad --lock-timeout, hook streams closed or "
                "full, PostToolUse burst", runs=runs, failures=len(problems), figures=f"{burst}; {classify(problems)}",
                problems=problems))
