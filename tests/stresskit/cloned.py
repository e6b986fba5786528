"""A cloned repository (issue 24): what a repository can carry besides memory files.

- shadowing modules: top-level `argparse.py`, `token.py`, `json.py`, `sqlite3.py`,
  `encodings/` and `memindex/` in the project, each leaving a marker when imported, under
  SessionStart, a prompt that starts a background sync, and the documented non-plugin hook
  command: no marker, and the index is built and answers;
- a foreign index: `.index.db` built elsewhere from a memory since deleted, copied in as a
  commit would bring it: the phantom memory is never injected, before or after the sync
  that replaces the index, and `status` says why it is not read;
- a foreign category folder: `decisions/` writable by every user (and, as root, owned by
  uid 65534) holding a planted memory: never injected; `sync` and `status` name the folder.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import time
from pathlib import Path

from memindex.defaults import INDEX_FILE

from .harness import Context, Row
from .hostile import classify, cli, hook, session_payload, wait_background
from .hostile_inputs import make_store, targets_for
from .judge import hook_problems, prompt_payload
from .memories import NonceWords, dump, new_target
from .procs import NOBODY, PY, REPO, run

SHADOWS = ("argparse", "token", "json", "sqlite3", "encodings", "memindex")


def _argv(root: Path | str, *args: str) -> list[str]:
    return [PY, "-m", "memindex", "--root", str(root), *args]


def _readme_hook(event: str) -> list[str]:
    """The documented command for a project's own settings.json (`python3 -I -m memindex.hook`;
    docs/claude-code.md, which the README links)."""
    text = (REPO / "docs" / "claude-code.md").read_text(encoding="utf-8")
    start = text.index("```json", text.index("## Without the plugin")) + 7
    hooks = json.loads(text[start:text.index("```", start)])["hooks"]
    command = hooks[event][0]["hooks"][0]["command"].split()
    return [PY, *command[1:]]


def _bump(root: Path) -> None:
    later = time.time_ns() + 1_000_000_000
    os.utime(root / "decisions", ns=(later, later))


def shadowing(base: Path, seed: int) -> tuple[int, list[str]]:
    targets = targets_for(seed, 1)
    project = base / "proj"
    root = project / ".claude" / "memory"
    root.mkdir(parents=True)
    from .memories import build_store

    build_store(root, 10, targets, seed)  # no index: the SessionStart hook builds it
    markers = base / "markers"
    markers.mkdir()
    for name in SHADOWS:
        code = f"open({str(markers / name)!r}, 'w').write('imported')\n"
        if name in ("encodings", "memindex"):
            (project / name).mkdir()
            for module in ("__init__", "__main__", "hook"):
                (project / name / f"{module}.py").write_text(code)
        else:
            (project / f"{name}.py").write_text(code)
    needle, problems, runs = str(project), [], 0
    calls = [("SessionStart", hook("session-start", session_payload(project), project))]
    wait_background(needle)
    _bump(root)
    calls.append(("prompt (background sync)", hook("prompt", prompt_payload(project, targets[0].prompt), project)))
    wait_background(needle)
    calls.append(("README prompt command", run(_readme_hook("UserPromptSubmit"), input=prompt_payload(project, targets[0].prompt),
                                               cwd=project, timeout=20)))
    wait_background(needle)
    for label, res in calls:
        runs += 1
        expect = targets[0].shown if label != "SessionStart" else None
        problems += [f"shadowing modules: {p}" for p in hook_problems(res, root, expect=expect, name=label)]
    imported = sorted(p.name for p in markers.iterdir())
    if imported:
        problems.append(f"shadowing modules: the project's {', '.join(imported)} ran")
    if not (root / INDEX_FILE).is_file():
        problems.append("shadowing modules: no index was built")
    return runs, problems


def foreign_index(base: Path, seed: int) -> tuple[int, list[str]]:
    phantom, kept = targets_for(seed, 2)
    donor = base / "donor" / ".claude" / "memory"
    make_store(donor, [phantom], seed)
    (donor / phantom.rel).unlink()
    conn = sqlite3.connect(str(donor / INDEX_FILE))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    project = base / "clone"
    root = project / ".claude" / "memory"
    from .memories import build_store

    root.mkdir(parents=True)
    build_store(root, 10, [kept], seed + 1)
    for suffix in ("", "-wal"):
        if (donor / (INDEX_FILE + suffix)).exists():
            shutil.copy(donor / (INDEX_FILE + suffix), root / (INDEX_FILE + suffix))
    problems, runs = [], 0
    status = cli(_argv(project, "status"), project)
    runs += 1
    if "not built by this user's memindex" not in status.err:
        problems.append(f"foreign index: status does not say why the index is not read ({status.last_err()!r})")
    for when in ("before the sync", "after the sync"):
        res = hook("prompt", prompt_payload(project, phantom.prompt), project)
        runs += 1
        problems += [f"foreign index ({when}): {p}" for p in hook_problems(res, root, name="hook")]
        if phantom.id in res.out:
            problems.append(f"foreign index ({when}): the phantom memory {phantom.rel} was injected")
        wait_background(str(project))
        if when == "before the sync":
            synced = cli(_argv(project, "sync"), project)
            runs += 1
            if synced.rc != 0:
                problems.append(f"foreign index: sync exit {synced.rc}: {synced.last_err()}")
    res = hook("prompt", prompt_payload(project, kept.prompt), project)
    runs += 1
    problems += [f"foreign index (control): {p}" for p in hook_problems(res, root, expect=kept.shown, name="hook")]
    return runs, problems


def foreign_folder(base: Path, seed: int, owner: bool) -> tuple[int, list[str]]:
    rng = random.Random(seed)
    words = NonceWords(rng)
    planted, kept = new_target(words, rng, category="decision"), new_target(words, rng, category="runbook")
    project = base / "proj"
    root = project / ".claude" / "memory"
    make_store(root, [kept], seed)
    (root / planted.rel).write_bytes(dump(planted.doc()))  # another user's memory
    folder = root / planted.rel.split("/")[0]
    os.chmod(folder, 0o777)
    if owner:
        os.chown(folder, NOBODY, NOBODY)
        os.chmod(folder, 0o755)
    what = "owned by uid 65534" if owner else "world-writable"
    problems, runs = [], 0
    synced = cli(_argv(project, "sync"), project)
    status = cli(_argv(project, "status", "--json"), project)
    runs += 2
    if f"{folder.name}/: refused: " not in synced.err:
        problems.append(f"foreign folder ({what}): sync does not name it ({synced.err[:160]!r})")
    try:
        refused = json.loads(status.out).get("refused", {})
    except ValueError:
        refused = {}
    if f"{folder.name}/" not in refused:
        problems.append(f"foreign folder ({what}): status does not list it")
    for target, expect in ((planted, None), (kept, kept.shown)):
        res = hook("prompt", prompt_payload(project, target.prompt), project)
        runs += 1
        problems += [f"foreign folder ({what}): {p}" for p in hook_problems(res, root, expect=expect, name="hook")]
        if target is planted and planted.id in res.out:
            problems.append(f"foreign folder ({what}): the planted memory was injected")
    wait_background(str(project))
    return runs, problems


def cloned_repository(ctx: Context) -> None:
    top = ctx.base / "cloned"
    top.mkdir()
    os.chmod(top, 0o755)
    started = time.monotonic()
    results: list[tuple[str, tuple[int, list[str]]]] = []
    cases = [("shadowing", lambda b: shadowing(b, ctx.seed + 170)), ("index", lambda b: foreign_index(b, ctx.seed + 171)),
             ("folder-mode", lambda b: foreign_folder(b, ctx.seed + 172, owner=False))]
    if os.geteuid() == 0:
        cases.append(("folder-owner", lambda b: foreign_folder(b, ctx.seed + 173, owner=True)))
    for name, case in cases:
        base = top / name
        base.mkdir()
        results.append((name, case(base)))
    runs = sum(r for _, (r, _) in results)
    problems = [p for _, (_, ps) in results for p in ps]
    row = Row("hostile root: cloned repository (shadowing modules, a committed foreign index, a foreign category folder)",
              runs=runs, failures=len(problems),
              figures=f"{len(cases)} cases in {time.monotonic() - started:.1f} s; {classify(problems)}", problems=problems)
    if os.geteuid() != 0:
        row.note = "the folder of uid 65534 skipped: not root"
    ctx.special_runs += runs
    ctx.add(row)
