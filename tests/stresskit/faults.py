"""Fault scenarios: a damaged index, permissions, the lock, a full disk, a crash after COMMIT."""

from __future__ import annotations

import errno
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from memindex.config import load_config
from memindex.defaults import CATEGORY_FOLDER, INDEX_FILE, INDEX_MD, LOCK_FILE

from .harness import Context, Project, Row
from .judge import cli_problems, hook_problems, read_docs
from .memories import (
    CATEGORY_LIST,
    NonceWords,
    Target,
    build_store,
    dump,
    filler,
    new_target,
    walk_rels,
)
from .procs import ENV, NOBODY, PY, UNPRIV, unlink

MATRIX: list[tuple[str, tuple[str, ...]]] = [
    ("sync", ("sync",)),
    ("rebuild", ("rebuild",)),
    ("search", ("search", "--", "{prompt}")),
    ("search --no-sync", ("search", "--no-sync", "--", "{prompt}")),
    ("status", ("status",)),
    ("validate", ("validate",)),
]


def fault_targets(ctx: Context, seed: int) -> list[Target]:
    rng = random.Random(seed)
    words = NonceWords(rng)
    return [new_target(words, rng, category=CATEGORY_LIST[i % 6]) for i in range(8)]


def command_matrix(proj: Project, apply: Callable[[], None], target: Target, *,
                   search_must_find: bool = True, hook_must_find: bool = False) -> tuple[list[str], str, int]:
    """Run every command under the fault (re-applied before each one, since sync and
    rebuild may repair it). Returns (problems, the exit codes, runs)."""
    problems: list[str] = []
    codes = []
    for name, args in MATRIX:
        apply()
        res = proj.cli(*[a.replace("{prompt}", target.prompt) for a in args])
        found = cli_problems(res, name, ok=(0, 1) if name == "validate" else (0,))
        if not found and res.rc == 0 and name.startswith("search") and search_must_find and target.shown not in res.out:
            found = [f"{name}: exit 0 without the memory the query names ({target.rel})"]
        problems += found
        codes.append(f"{name}={'TB' if 'Traceback' in res.err else res.rc}")
    apply()
    res = proj.hook(target.prompt)
    hp = hook_problems(res, proj.root, expect=target.shown if hook_must_find else None)
    problems += hp
    shown = "answered" if res.out else ("silent" if res.rc == 0 else f"exit {res.rc}")
    codes.append(f"hook={shown}/{len(res.err_lines())} stderr line(s)")
    return problems, " ".join(codes), len(MATRIX) + 1


def fault_row(ctx: Context, name: str, proj: Project, apply: Callable[[], None], clear: Callable[[], None], target: Target,
              figures_extra: str = "", **kw: Any) -> Row:
    problems, codes, runs = command_matrix(proj, apply, target, **kw)
    clear()
    proj.wait_background()
    res = proj.cli("sync")
    recovery = cli_problems(res, "recovery sync")
    if res.rc == 0:
        recovery += proj.compare()
    hook_after = hook_problems(proj.hook(target.prompt), proj.root, expect=target.shown, name="hook after recovery")
    problems += recovery + hook_after
    figures = codes + ("; " + figures_extra if figures_extra else "")
    figures += "; recovery sync = clean rebuild: " + ("yes" if not recovery else "NO")
    return Row(name, runs=runs + 2, failures=len(problems), figures=figures, problems=problems)


def checkpoint(root: Path) -> None:
    """Fold the WAL into the main file (so a damaged main file is the whole index)."""
    conn = sqlite3.connect(str(root / INDEX_FILE))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def scenario_index_faults(ctx: Context) -> None:
    targets = fault_targets(ctx, ctx.seed + 10)
    t = targets[1]

    def damaged(kind: str) -> tuple[Project, Callable[[], None]]:
        proj = Project(ctx, f"index-{kind}", n_fill=600, targets=targets, seed=ctx.seed)
        assert proj.cli("sync").rc == 0
        checkpoint(proj.root)
        db = proj.root / INDEX_FILE
        good = db.read_bytes()
        size = len(good)

        def apply() -> None:
            for suffix in ("-wal", "-shm"):
                unlink(Path(f"{db}{suffix}"))
            unlink(db)
            if kind == "directory":
                db.mkdir()
                (db / "something").write_text("x")
                return
            data = {
                "truncated to 0 bytes": b"",
                "truncated to half": good[: size // 2],
                "filled with garbage": random.Random(1).randbytes(size),
                "middle third overwritten with garbage": good[: size // 3] + random.Random(2).randbytes(size // 3) + good[2 * size // 3:],
            }[kind]
            db.write_bytes(data)

        return proj, apply

    for kind in ("truncated to 0 bytes", "truncated to half", "filled with garbage", "middle third overwritten with garbage"):
        proj, apply = damaged(kind)
        ctx.add(fault_row(ctx, f"index {kind}", proj, apply, lambda: None, t))
    proj, apply = damaged("directory")
    db = proj.root / INDEX_FILE
    ctx.add(fault_row(ctx, "index replaced by a directory", proj, apply, lambda: unlink(db), t, search_must_find=False))


def scenario_permission_faults(ctx: Context) -> None:
    if not UNPRIV.ready():
        for name in ("index made read-only", "memory root read-only", "lock file not writable", "category folder unreadable",
                     "memory file unreadable", "memory root unreadable"):
            ctx.add(Row(name, skipped=UNPRIV.why))
        return
    targets = fault_targets(ctx, ctx.seed + 20)
    t = targets[1]

    def project(name: str) -> Project:
        proj = Project(ctx, name, n_fill=300, targets=targets, seed=ctx.seed, user=True)
        res = proj.cli("sync")
        assert res.rc == 0, res.err
        return proj

    # index read-only: the file 0444 (as after a copy from a read-only checkout or backup)
    proj = project("perm-index-ro")
    db = proj.root / INDEX_FILE
    ctx.add(fault_row(ctx, "index made read-only (0444, uid 65534)", proj, lambda: os.chmod(db, 0o444),
                      lambda: os.chmod(db, 0o644), t))

    # the memory root read-only: no lock, WAL or index.md can be written there
    proj = project("perm-root-ro")
    ctx.add(fault_row(ctx, "memory root read-only (0555, uid 65534)", proj, lambda: os.chmod(proj.root, 0o555),
                      lambda: os.chmod(proj.root, 0o755), t))

    # the lock file belongs to someone else and cannot be opened for writing
    proj = project("perm-lock")
    lock = proj.root / LOCK_FILE

    def lock_foreign() -> None:
        lock.touch()
        os.chown(lock, 0, 0) if os.geteuid() == 0 else None
        os.chmod(lock, 0o600 if os.geteuid() == 0 else 0o400)

    def lock_back() -> None:
        os.chmod(lock, 0o644)
        os.chown(lock, NOBODY, NOBODY) if os.geteuid() == 0 else None

    ctx.add(fault_row(ctx, "lock file not writable by this user", proj, lock_foreign, lock_back, t))

    # one category folder unreadable: its memories cannot be listed
    proj = project("perm-folder")
    folder = proj.root / CATEGORY_FOLDER[targets[0].category]
    before = len(read_docs(proj.root))
    os.chmod(folder, 0o000)
    during = proj.cli("sync")
    hidden = before - len(read_docs(proj.root)) if during.rc == 0 else 0
    os.chmod(folder, 0o755)
    proj.cli("sync")
    other = targets[1]  # a memory in a readable folder
    row = fault_row(ctx, "category folder unreadable (000, uid 65534)", proj, lambda: os.chmod(folder, 0o000),
                    lambda: os.chmod(folder, 0o755), other,
                    figures_extra=f"memories of that folder dropped from the index while it is unreadable: {hidden}/{len(os.listdir(folder))}")
    if hidden:
        row.note = f"weakness: sync drops the {hidden} memories of a folder it cannot list"
    ctx.add(row)

    # one memory file unreadable
    proj = project("perm-file")
    path = proj.root / t.rel
    ctx.add(fault_row(ctx, "memory file unreadable (000, uid 65534)", proj, lambda: os.chmod(path, 0o000),
                      lambda: os.chmod(path, 0o644), targets[2]))

    # the memory root itself unreadable
    proj = project("perm-root")
    ctx.add(fault_row(ctx, "memory root unreadable (000, uid 65534)", proj, lambda: os.chmod(proj.root, 0o000),
                      lambda: os.chmod(proj.root, 0o755), t, search_must_find=False))


def scenario_lock_faults(ctx: Context) -> None:
    targets = fault_targets(ctx, ctx.seed + 30)
    t = targets[1]
    holder_code = (
        "import sys, time\nfrom filelock import FileLock\n"
        "lock = FileLock(sys.argv[1]); lock.acquire()\nprint('locked', flush=True)\ntime.sleep(120)\n"
    )

    # left behind by a dead holder (kill -9 while holding it), with junk in the file
    proj = Project(ctx, "lock-dead", n_fill=200, targets=targets, seed=ctx.seed)
    assert proj.cli("sync").rc == 0
    problems: list[str] = []
    waits = []
    for junk in (False, True):
        holder = subprocess.Popen([PY, "-c", holder_code, str(proj.root / LOCK_FILE)], stdout=subprocess.PIPE, env=ENV)
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        holder.kill()
        holder.wait()
        if junk:
            (proj.root / LOCK_FILE).write_bytes(b"4242\x00garbage from a dead writer\n")
        (proj.root / t.rel).write_bytes(dump(t.doc(rev=7)))  # something to sync
        res = proj.cli("sync", "--lock-timeout", "2")
        waits.append(res.elapsed)
        problems += cli_problems(res, "sync after a dead holder")
        if res.rc == 0 and res.elapsed > 2.0:
            problems.append(f"sync waited {res.elapsed:.1f} s for a lock nobody holds")
        problems += hook_problems(proj.hook(t.prompt), proj.root, expect=t.shown)
    problems += proj.compare()
    ctx.add(Row("lock file left behind by a dead process (kill -9 holder; junk content)", runs=6, failures=len(problems),
                figures=f"next sync took {', '.join(f'{w:.2f}' for w in waits)} s", problems=problems))

    # held by a live writer: a rebuild stopped (SIGSTOP) in the middle of its transaction
    proj = Project(ctx, "lock-live", n_fill=1500, targets=targets, seed=ctx.seed)
    assert proj.cli("sync").rc == 0
    problems = []
    figures = []
    proc = proj.popen("rebuild")
    wal = Path(f"{proj.root / INDEX_FILE}-wal")
    deadline = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline and not (wal.exists() and wal.stat().st_size > 64 * 1024):
        time.sleep(0.002)
    mid = proc.poll() is None
    if mid:
        proc.send_signal(signal.SIGSTOP)
    try:
        figures.append("rebuild stopped mid-transaction" if mid else "rebuild finished before it could be stopped")
        res = proj.cli("sync", "--lock-timeout", "1")
        problems += cli_problems(res, "sync while the lock is held", ok=(), fail=(3,))
        figures.append(f"sync exit {res.rc} after {res.elapsed:.1f} s")
        hres = proj.hook(t.prompt)
        problems += hook_problems(hres, proj.root, expect=t.shown, name="hook while a rebuild is stopped")
        figures.append(f"hook answered in {hres.elapsed * 1000:.0f} ms")
        res = proj.cli("search", "--no-sync", "--", t.prompt)
        problems += cli_problems(res, "search --no-sync")
        if res.rc == 0 and t.shown not in res.out:
            problems.append("search --no-sync did not find the memory while the lock is held")
        os.utime(proj.root / "decisions")  # make the index look stale: search tries to sync first
        res = proj.cli("search", "--", t.prompt)
        problems += cli_problems(res, "search (stale, lock held)")
        if res.rc == 0 and t.shown not in res.out:
            problems.append("search did not find the memory while the lock is held")
        figures.append(f"stale search answered in {res.elapsed:.1f} s")
    finally:
        if mid:
            proc.send_signal(signal.SIGCONT)
        proc.wait(timeout=60)
    res = proj.cli("sync")
    problems += cli_problems(res, "sync after the holder finished") + (proj.compare() if res.rc == 0 else [])
    ctx.add(Row("lock held by a live writer (rebuild stopped mid-transaction)", runs=6, failures=len(problems),
                figures="; ".join(figures), problems=problems))


def scenario_disk_full(ctx: Context) -> None:
    targets = fault_targets(ctx, ctx.seed + 40)
    t = targets[1]
    # RLIMIT_FSIZE in the child: writes past the limit fail with EFBIG
    proj = Project(ctx, "disk-rlimit", n_fill=400, targets=targets, seed=ctx.seed)
    assert proj.cli("sync").rc == 0
    problems: list[str] = []
    codes = []
    answered = 0
    rng = random.Random(3)
    for i, args in enumerate((("sync",), ("rebuild",), ("search", "--", t.prompt))):
        for n in range(60):  # changes, so that the writer has something to write
            rel, doc = filler(n, rng, marker=f"round{i}")
            (proj.root / rel).write_bytes(dump(doc))
        os.utime(proj.root / "decisions")
        res = proj.cli(*args, fsize=32 * 1024)
        found = cli_problems(res, f"{args[0]} with RLIMIT_FSIZE=32 KiB")
        if not found and res.rc == 0 and args[0] == "search" and t.shown not in res.out:
            found = ["search under RLIMIT_FSIZE: exit 0 without the memory"]
        problems += found
        codes.append(f"{args[0]}={'TB' if 'Traceback' in res.err else res.rc}")
        hp = hook_problems(proj.hook(t.prompt), proj.root, expect=t.shown, name=f"hook after {args[0]} hit the limit")
        answered += int(not hp)
        problems += hp
    res = proj.cli("sync")
    recovery = cli_problems(res, "sync without the limit") + (proj.compare() if res.rc == 0 else [])
    problems += recovery
    ctx.add(Row("disk full: RLIMIT_FSIZE 32 KiB in the writer (EFBIG)", runs=7, failures=len(problems),
                figures=(" ".join(codes) + f"; hook answered from the previous index {answered}/3; "
                         f"recovery sync = clean rebuild: {'yes' if not recovery else 'NO'}"), problems=problems))

    # a real full file system: a small tmpfs filled up
    mnt = ctx.base / "tmpfs"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m,mode=0755", "tmpfs", str(mnt)], capture_output=True)
    if mounted.returncode != 0:
        ctx.add(Row("disk full: tmpfs (ENOSPC)", skipped=f"mount not permitted: {mounted.stderr.decode()[:80].strip()}"))
        return
    try:
        problems, codes = [], []
        proj = Project.__new__(Project)
        proj.ctx, proj.dir = ctx, mnt
        proj.project = mnt / "proj"
        proj.root = proj.project / ".claude" / "memory"
        proj.root.mkdir(parents=True)
        proj.targets = targets
        build_store(proj.root, 400, targets, ctx.seed)
        proj.user, proj.python, proj.env = False, PY, ENV
        assert proj.cli("sync").rc == 0
        for n in range(200):
            rel, doc = filler(n, rng, marker="tmpfs")
            (proj.root / rel).write_bytes(dump(doc))
        filler_file = mnt / "filler"
        with open(filler_file, "wb") as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
        for args in (("sync",), ("rebuild",), ("search", "--", t.prompt), ("status",)):
            res = proj.cli(*args)
            found = cli_problems(res, f"{args[0]} on a full disk")
            if not found and res.rc == 0 and args[0] == "search" and t.shown not in res.out:
                found = ["search on a full disk: exit 0 without the memory"]
            problems += found
            codes.append(f"{args[0]}={'TB' if 'Traceback' in res.err else res.rc}")
        hp = hook_problems(proj.hook(t.prompt), proj.root, expect=t.shown, name="hook on a full disk")
        problems += hp
        left, on_disk = len(read_docs(proj.root)), len(walk_rels(proj.root))
        filler_file.unlink()
        proj.wait_background()
        res = proj.cli("sync")
        recovery = cli_problems(res, "sync after space was freed") + (proj.compare() if res.rc == 0 else [])
        problems += recovery
        ctx.add(Row("disk full: 6 MB tmpfs filled up (ENOSPC)", runs=6, failures=len(problems),
                    figures=(" ".join(codes) + f"; memories in the index while the disk was full: {left} of {on_disk}; "
                             f"hook answered: {'yes' if not hp else 'no'}; recovery sync = clean rebuild: {'yes' if not recovery else 'NO'}"),
                    problems=problems))
    finally:
        time.sleep(0.5)
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def scenario_commit_crash(ctx: Context) -> None:
    """The exact moment kill -9 rarely hits: after COMMIT, before index.md is rewritten."""
    from memindex.index import sync as sync_mod

    targets = fault_targets(ctx, ctx.seed + 50)
    proj = Project(ctx, "commit-crash", n_fill=100, targets=targets, seed=ctx.seed)
    assert proj.cli("sync").rc == 0
    late = new_target(NonceWords(random.Random(99)), random.Random(99), category="decision")
    (proj.root / late.rel).write_bytes(dump(late.doc()))
    original = sync_mod.write_index_md

    def killed(*_: Any) -> None:
        raise KeyboardInterrupt("simulated kill -9 after COMMIT")

    sync_mod.write_index_md = killed
    try:
        sync_mod.sync(proj.root, load_config(proj.root))
    except KeyboardInterrupt:
        pass
    finally:
        sync_mod.write_index_md = original
    res = proj.cli("sync")
    problems = cli_problems(res, "sync after the crash")
    problems += proj.compare() if res.rc == 0 else []
    md = (proj.root / INDEX_MD).read_text()
    if late.rel not in md:
        problems.insert(0, f"index.md still lacks {late.rel} after the next sync (the crash left it stale for good)")
    ctx.add(Row("crash after COMMIT, before index.md is written (exact, in-process)", runs=2, failures=len(problems),
                figures=f"next sync: exit {res.rc}; memory in index.md: {'yes' if late.rel in md else 'no'}", problems=problems))
