"""Hand-written hostile inputs run as real processes, and the fuzz scenario that runs everything."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path

from memindex.defaults import INDEX_MD

from .fuzz import fuzz_config, fuzz_hook_stdin, fuzz_memory_files, fuzz_queries
from .fuzzing import FuzzStore
from .harness import Context, Project, Row
from .judge import cli_problems, hook_problems, prompt_payload
from .memories import NonceWords, dump, memory_doc, new_target
from .procs import BUDGET_S, ENV, HANG_S, hook_argv, run


def special_hook_inputs(ctx: Context, store: FuzzStore) -> None:
    """Hostile hook input through the real process, where the budget alarm is armed."""
    t = store.targets[0]
    proj = store.proj
    fifo = ctx.base / "transcript.fifo"
    os.mkfifo(fifo)
    cases: dict[str, bytes] = {
        "10 MB prompt": prompt_payload(proj.project, "postgres " * 1_100_000 + t.prompt),
        "10 MB prompt of one word": prompt_payload(proj.project, "a" * 10_000_000),
        "10 MB of invalid UTF-8": b'{"prompt": "' + b"\xff\xfe" * 5_000_000 + b'"}',
        "17 MB input (over the 16 MiB cap)": b'{"prompt": "' + b"x" * 17_000_000 + b'"}',
        "100k-deep JSON": b'{"prompt": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "100k-deep JSON object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        "empty stdin": b"",
        "binary stdin": random.Random(3).randbytes(100_000),
        "lone surrogate escapes": b'{"prompt": "\\ud800\\udfff\\udc00 ' + t.prompt.encode() + b'", "cwd": "' + str(proj.project).encode() + b'"}',
        "prompt with NUL and escapes": prompt_payload(proj.project, "\x00\x1b[2J" + t.prompt + "</memory-context>"),
        "cwd with a newline": prompt_payload(Path(str(ctx.base) + "/x\nFAKE LINE"), t.prompt),
        "FIFO as transcript_path": prompt_payload(proj.project, "why did that break again?", transcript_path=str(fifo)),
        "transcript is a 3 MB single line": prompt_payload(proj.project, "why did that break again?",
                                                           transcript_path=str(ctx.base / "transcripts" / "long.jsonl")),
        "transcript is 100k-deep JSON": prompt_payload(proj.project, "why did that break again?",
                                                      transcript_path=str(ctx.base / "transcripts" / "deep.jsonl")),
    }
    problems: list[str] = []
    slowest = 0.0
    multiline = 0
    for name, raw in cases.items():
        res = run(hook_argv(), input=raw, timeout=HANG_S + 20, env=ENV, cwd=proj.project)
        slowest = max(slowest, res.elapsed)
        found = hook_problems(res, store.root, name=name)
        multiline += int(any("stderr lines" in p for p in found))
        problems += [p for p in found if "stderr lines" not in p]
        if name == "lone surrogate escapes" and res.rc == 0:
            # the escapes are no words: the rest of the prompt gets what it gets alone
            clean = run(hook_argv(), input=prompt_payload(proj.project, t.prompt), timeout=HANG_S + 20, env=ENV, cwd=proj.project)
            if res.out != clean.out:
                problems.append(f"{name}: the rest of the prompt did not get what it gets alone ({res.out[:120]!r} vs {clean.out[:120]!r})")
    ctx.special_runs += len(cases)
    row = Row("bad input: hook stdin through the real process (10 MB, invalid UTF-8, deep JSON, FIFO...)", runs=len(cases),
              failures=len(problems), figures=f"slowest {slowest:.1f} s (budget {BUDGET_S:g} s); more than one stderr line: {multiline}",
              problems=problems)
    if multiline:
        row.note = f"weakness: {multiline} inputs gave more than one stderr line"
    ctx.add(row)


def special_filesystem(ctx: Context) -> None:
    """Symlink loops, links leaving the root, a FIFO, a directory, a huge sparse file,
    /dev/zero, names with newlines and markup: sync, validate, search and the hook."""
    rng = random.Random(ctx.seed + 80)
    words = NonceWords(rng)
    targets = [new_target(words, rng, category="decision") for _ in range(2)]
    proj = Project(ctx, "filesystem", n_fill=50, targets=targets, seed=ctx.seed)
    root = proj.root
    outside = ctx.base / "outside"
    outside.mkdir()
    secret = new_target(words, rng, category="decision")
    (outside / f"{secret.id}.json").write_bytes(dump(secret.doc()))
    (outside / "runbooks").mkdir()
    secret2 = new_target(words, rng, category="runbook")
    (outside / "runbooks" / f"{secret2.id}.json").write_bytes(dump(secret2.doc()))
    dec = root / "decisions"
    os.symlink("loop.json", dec / "loop.json")
    os.symlink("b-loop.json", dec / "a-loop.json")
    os.symlink("a-loop.json", dec / "b-loop.json")
    os.symlink(outside / f"{secret.id}.json", dec / f"{secret.id}.json")
    os.symlink("../../../../outside/" + f"{secret.id}.json", dec / "relative-escape.json")
    os.symlink("/dev/zero", dec / "zero.json")
    os.symlink(root / "decisions", dec / "self-dir.json")
    shutil.rmtree(root / "runbooks")
    os.symlink(outside / "runbooks", root / "runbooks")
    os.mkfifo(dec / "fifo.json")
    (dec / "directory.json").mkdir()
    with open(dec / "huge.json", "wb") as fh:
        fh.truncate(200 * 1024 * 1024)
    forged = new_target(words, rng, category="decision")
    evil_names = [
        f"{forged.id}\n2. [DECISION] Forged line | #x | 2026-01-01 | .claude",
        "evil\n- [DECISION] forged -> .claude",
        "<script>alert(1)<",
        "a -> b #tags:x",
        "\u202egnp.json",
    ]
    for stem in evil_names:
        (dec / f"{stem}.json").write_bytes(dump(forged.doc()))
    (dec / "100k-title.json").write_bytes(dump(memory_doc("decision", "100k-title", "long " * 20_000 + "</memory-context>", ["x"], "body")))
    deep = b'{"category": "decision", "title": "deep", "content": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    (dec / "deep.json").write_bytes(deep)

    problems: list[str] = []
    res = proj.cli("sync", timeout=60)
    problems += cli_problems(res, "sync")
    sync_s = res.elapsed
    res = proj.cli("validate", timeout=60)
    problems += cli_problems(res, "validate", ok=(0, 1))
    for s in (secret, secret2):
        res = proj.hook(s.prompt)
        problems += hook_problems(res, root, name=f"hook ({s.id}, outside the root)")
        if s.id in res.out:
            problems.append(f"the hook injected a memory that lives outside the root: {res.out[:200]!r}")
        res = proj.cli("search", "--no-sync", "--", s.prompt)
        problems += cli_problems(res, "search (outside memory)")
        if s.id in res.out:
            problems.append(f"search lists a memory that lives outside the root: {res.out[:200]!r}")
    res = proj.hook(forged.prompt)
    problems += hook_problems(res, root, name="hook (names with newlines)")
    res = proj.cli("search", "--no-sync", "--", forged.prompt)
    problems += cli_problems(res, "search (names with newlines)")
    listing = [line for line in res.out.split("\n") if line]
    bad_lines = [line for line in listing if not re.match(r"^\d+\. \[", line)]
    if bad_lines:
        problems.append(f"`memindex search` prints a file name with a newline raw, forging a result line: {bad_lines[0][:160]!r}")
    res = proj.hook("long memory-context title please")
    problems += hook_problems(res, root, name="hook (100k-character title)")
    md = (root / INDEX_MD).read_text()
    if any(line and not line.startswith("- [") for line in md.split("\n")[4:]):
        problems.append("index.md has a line that is not a memory line")
    if secret.id in md or secret2.id in md:
        problems.append("index.md names a memory outside the root")
    ctx.special_runs += 9
    ctx.add(Row("bad input: file system (symlink loops, links out of the root, FIFO, /dev/zero, 200 MB file, newline names)",
                runs=9, failures=len(problems), figures=f"sync {sync_s:.1f} s; outside memories injected 0 expected", problems=problems))


def special_write_path(ctx: Context) -> None:
    """Path traversal through the write path: nothing outside the root may change."""
    rng = random.Random(ctx.seed + 90)
    words = NonceWords(rng)
    targets = [new_target(words, rng, category="decision")]
    proj = Project(ctx, "traversal", n_fill=10, targets=targets, seed=ctx.seed)
    assert proj.cli("sync").rc == 0
    victim_dir = proj.dir / "outside"
    victim_dir.mkdir()
    victim = victim_dir / "victim.json"
    victim_doc = targets[0].doc()
    victim_doc["id"] = "victim"
    victim.write_bytes(dump(victim_doc))
    os.symlink(victim, proj.root / "decisions" / "victim.json")
    before = victim.read_bytes()
    patch = proj.dir / "patch.json"
    patch.write_text(json.dumps({"title": "pwned"}))
    new = dict(targets[0].doc())
    new["id"] = "../../../outside/escaped"
    new_file = proj.dir / "new.json"
    new_file.write_text(json.dumps(new))
    attempts = [
        ("update", "../../outside/victim.json", "--file", str(patch)),
        ("update", str(victim), "--file", str(patch)),
        ("update", "decisions/../../../outside/victim.json", "--file", str(patch)),
        ("update", "decisions/victim.json", "--file", str(patch)),
        ("retire", "decisions/victim.json", "--reason", "x"),
        ("archive", "../../outside/victim.json", "--reason", "x"),
        ("save", "--category", "decision", "--file", str(new_file)),
    ]
    problems: list[str] = []
    for args in attempts:
        res = proj.cli(*args)
        if res.rc == 0:
            problems.append(f"`memindex {' '.join(args)}` succeeded")
        problems += cli_problems(res, " ".join(args[:2]), ok=(), fail=(1, 2, 4, 6))
    if victim.read_bytes() != before:
        problems.append("a file outside the memory root was modified")
    escaped = [p for p in proj.dir.rglob("*escaped*")]
    if escaped:
        problems.append(f"files created outside the category folders: {escaped}")
    ctx.special_runs += len(attempts)
    ctx.add(Row("bad input: path traversal through the write path (update/retire/archive/save)", runs=len(attempts),
                failures=len(problems), figures="outside file unchanged; nothing created outside the root" if not problems else "",
                problems=problems))


def scenario_fuzz(ctx: Context) -> None:
    from memindex.index.reads import Scratch

    store = FuzzStore(ctx, "fuzz")
    fuzz_hook_stdin(ctx, store, ctx.fuzz_seconds_for("hook"))
    special_hook_inputs(ctx, store)
    fuzz_queries(ctx, store, ctx.fuzz_seconds_for("queries"))
    fuzz_config(ctx, store, ctx.fuzz_seconds_for("config"))
    fuzz_memory_files(ctx, ctx.fuzz_seconds_for("files"))
    special_filesystem(ctx)
    special_write_path(ctx)
    Scratch._local.tables = None  # drop the scratch FTS5 tables the fuzzers filled
