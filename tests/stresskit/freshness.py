"""Freshness (issue 26): what is on disk is what the next search and prompt see.

Three rows, each counting *missed memories* (target: 0):

* **in-place writers**: a writer rewrites memories in place (`open(..., "r+")`, the same
  inode, no folder mtime moved) and creates new ones, each with two new invented words;
  after each write `memindex search` must return that memory at once, and the prompt hook
  (no watcher) must inject it within its periodic interval plus a sync (the hook is asked
  again until then). Figures: the hook's seconds to see an edit, p50 / max.
* **coarse timestamps**: the same on a loop-mounted ext2 with 128-byte inodes (1 s
  timestamps) when `mount -o loop` works here; else each stat memindex takes is truncated
  to the second in-process (a simulated clock). Same-size edits and new files in the very
  second of the previous sync: `search` must see each, at once.
* **clock stepped back**: the spawn guards (`.sync.spawned`, `.serve.spawned`) and the
  index's last-sync stamp a day in the future, memory files with future mtimes (a clock
  set back after they were written; the real clock is never touched): new memories and
  edits must still reach `search` and the prompt hook.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

from memindex import defaults

FRESH_SYNC_MIN_S = getattr(defaults, "FRESH_SYNC_MIN_S", 3.0)  # (also runs against an older tree, to compare)

from .harness import Context, Project, Row, pct
from .memories import NonceWords, dump, new_target
from .procs import run


def _rewrite_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate()


def _found(proj: Project, target, out: str) -> bool:
    return target.rel in out


def _edit(proj: Project, rng: random.Random, words: NonceWords, targets: list, create: bool):
    """A new memory (atomic create) or an in-place rewrite of an existing one, with new words."""
    if create or not targets:
        t = new_target(words, rng)
        path = proj.root / t.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(dump(t.doc()))
        targets.append(t)
        return t
    old = rng.choice(targets)
    path = proj.root / old.rel
    t = type(old)(old.id, old.category, (words(), words()), old.extra)
    _rewrite_in_place(path, dump(t.doc(rev=1)))
    targets[targets.index(old)] = t
    return t


def _hook_sees(proj: Project, t, deadline_s: float) -> float | None:
    """Seconds until the prompt hook injects `t` (asked every 0.25 s), or None."""
    start = time.monotonic()
    while time.monotonic() - start < deadline_s:
        res = proj.hook(t.prompt)
        if t.shown in res.out:
            return time.monotonic() - start
        time.sleep(0.25)
    return None


def _in_place(ctx: Context) -> None:
    rng = random.Random(ctx.seed)
    words = NonceWords(rng)
    proj = Project(ctx, "fresh-inplace", n_fill=400, seed=ctx.seed)
    proj.cli("sync")
    edits = 6 if ctx.quick else 24
    targets: list = []
    missed, seen = [], []
    deadline = 2 * FRESH_SYNC_MIN_S + 8  # a periodic check and the sync it starts, under load
    for i in range(edits):
        t = _edit(proj, rng, words, targets, create=i % 3 == 0)
        if i % 2 == 0:  # the hook first, on every other edit: no search has synced for it
            took = _hook_sees(proj, t, deadline)
            if took is None:
                missed.append(f"the prompt hook never injected {t.rel} within {deadline:g} s")
            else:
                seen.append(took)
            t = _edit(proj, rng, words, targets, create=False)  # and a fresh edit for search
        res = proj.cli("search", t.prompt)
        if not _found(proj, t, res.out):
            missed.append(f"search missed {t.rel} right after it was written")
    ctx.add(Row("freshness: in-place writers", runs=edits, failures=len(missed), problems=missed,
                figures=f"missed {len(missed)}; hook sees an edit after p50 {pct(seen, 50):.1f} s, max "
                        f"{max(seen, default=0):.1f} s (no watcher)"))


def _mount_ext2(ctx: Context) -> Path | None:
    """A 1-second-timestamp file system (ext2, 128-byte inodes) on a loop device, or None."""
    if os.geteuid() != 0 or shutil.which("mkfs.ext2") is None:
        return None
    image, mnt = ctx.base / "ext2.img", ctx.base / "ext2"
    mnt.mkdir()
    try:
        with open(image, "wb") as fh:
            fh.truncate(64 * 1024 * 1024)
        subprocess.run(["mkfs.ext2", "-q", "-F", "-I", "128", str(image)], check=True, capture_output=True, timeout=60)
        subprocess.run(["mount", "-o", "loop", str(image), str(mnt)], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return mnt


def _swap_words(proj: Project, old, words: NonceWords):
    """Rewrite `old` in place with two new words of the same length: the same size."""
    path = proj.root / old.rel
    text = path.read_bytes()
    new = type(old)(old.id, old.category, (words(), words()), old.extra)
    swapped = text.replace(old.words[0].encode(), new.words[0].encode()).replace(old.words[1].encode(), new.words[1].encode())
    assert len(swapped) == len(text)  # same size: only the timestamp could tell
    _rewrite_in_place(path, swapped)
    return new


def _same_second_rounds(ctx: Context, proj: Project, rng: random.Random, rounds: int) -> tuple[list[str], int]:
    """Each round within one second of the clock: edit a memory in place and create one,
    sync, then edit the same memory again (same size) and create another. On 1 s
    timestamps the second edit leaves the stat the sync saw, and the second create leaves
    the folder's mtime as it was: only the racy-timestamp rule sees them."""
    from memindex.config import Config
    from memindex.index.sync import sync

    words = NonceWords(rng)
    targets: list = []
    for _ in range(3):
        _edit(proj, rng, words, targets, create=True)
    sync(proj.root, Config())
    missed, checks, tries = [], 0, 0
    while checks < 2 * rounds and tries < 4 * rounds:
        tries += 1
        while time.time() % 1 > 0.2:
            time.sleep(0.01)
        second = int(time.time())
        i = tries % len(targets)
        targets[i] = _swap_words(proj, targets[i], words)
        _edit(proj, rng, words, targets, create=True)
        sync(proj.root, Config())  # in-process: the round fits in its second
        targets[i] = _swap_words(proj, targets[i], words)
        born = _edit(proj, rng, words, targets, create=True)
        if int(time.time()) != second:
            continue  # the round spilled into the next second: not the case under test
        for t in (targets[i], born):
            checks += 1
            if t.rel not in proj.cli("search", t.prompt).out:
                missed.append(f"search missed {t.rel} written in the second of the last sync")
    return missed, checks


def _coarse(ctx: Context) -> None:
    rng = random.Random(ctx.seed + 1)
    rounds = 4 if ctx.quick else 12
    mnt = _mount_ext2(ctx)
    if mnt is None:
        ctx.add(Row("freshness: coarse timestamps", skipped="no loop mount here (root and mkfs.ext2 needed); "
                    "tests/test_freshness.py simulates the 1 s clock"))
        return
    try:
        proj = Project.__new__(Project)
        proj.ctx, proj.dir = ctx, mnt
        proj.project = mnt / "proj"
        proj.root = proj.project / ".claude" / "memory"
        proj.root.mkdir(parents=True)
        proj.targets, proj.user = [], False
        from .procs import ENV, PY

        proj.python, proj.env = PY, ENV
        st = os.stat(proj.root)
        assert st.st_mtime_ns % 1_000_000_000 == 0, "the ext2 image keeps sub-second timestamps"
        missed, checks = _same_second_rounds(ctx, proj, rng, rounds)
        ctx.add(Row("freshness: coarse timestamps", runs=checks, failures=len(missed), problems=missed,
                    figures=f"missed {len(missed)} of {checks} (loop-mounted ext2, 1 s timestamps; "
                            "same-size edits and new files in the second of the sync)"))
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=60)


def _clock_back(ctx: Context) -> None:
    rng = random.Random(ctx.seed + 2)
    words = NonceWords(rng)
    proj = Project(ctx, "fresh-clock", n_fill=200, seed=ctx.seed)
    proj.cli("sync")
    ahead = time.time() + 86400
    for guard in (".sync.spawned", ".serve.spawned"):
        (proj.root / guard).write_bytes(b"")
        os.utime(proj.root / guard, (ahead, ahead))
    conn = sqlite3.connect(proj.root / ".index.db")
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'last_sync_ns'", (json.dumps(int(ahead * 1e9)),))
    conn.close()
    targets: list = []
    missed, runs = [], 0
    for i in range(3 if ctx.quick else 8):
        t = _edit(proj, rng, words, targets, create=i % 2 == 0)
        os.utime(proj.root / t.rel, (ahead, ahead))  # written before the clock went back
        runs += 1
        if t.rel not in proj.cli("search", t.prompt).out:
            missed.append(f"search missed {t.rel} (clock stepped back)")
        if _hook_sees(proj, t, 2 * FRESH_SYNC_MIN_S + 8) is None:
            missed.append(f"the prompt hook never injected {t.rel} (guards and stamps in the future)")
    ctx.add(Row("freshness: clock stepped back", runs=runs, failures=len(missed), problems=missed,
                figures=f"missed {len(missed)} (spawn guards, last-sync stamp and file mtimes a day ahead)"))


def _watched(ctx: Context) -> None:
    """In-place writers with `memindex watch` running: `search` asks the watcher (O(1))
    instead of stat-ing every file, right after each write."""
    rng = random.Random(ctx.seed + 3)
    words = NonceWords(rng)
    proj = Project(ctx, "fresh-watched", n_fill=400, seed=ctx.seed)
    proj.cli("sync")
    log = proj.project / "watch.jsonl"
    with open(log, "wb") as out:
        watcher = proj.popen("watch", "--json", stdout=out)
    targets: list = []
    missed, edits = [], 9 if ctx.quick else 30
    try:
        start = time.monotonic()
        while b'"event": "sync"' not in log.read_bytes() and time.monotonic() - start < 60 and watcher.poll() is None:
            time.sleep(0.1)
        for _ in range(3):
            _edit(proj, rng, words, targets, create=True)
        for i in range(edits):
            if i % 3 == 2:  # the same size, its mtime put back: only the ctime moves
                j = rng.randrange(len(targets))
                path = proj.root / targets[j].rel
                st = path.stat()
                targets[j] = t = _swap_words(proj, targets[j], words)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            else:
                t = _edit(proj, rng, words, targets, create=i % 3 == 0)
            if not _found(proj, t, proj.cli("search", t.prompt).out):
                missed.append(f"search missed {t.rel} right after it was written (watcher running)")
    finally:
        watcher.terminate()
        watcher.wait(30)
    records = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    answers = next((r.get("answers") for r in records if r["event"] == "stop"), None) or {}
    if not answers.get("fresh"):
        missed.append(f"the watcher answered no search ({answers or 'no stop record'}): the row measured the stat pass")
    ctx.add(Row("freshness: in-place writers, watch running", runs=edits, failures=len(missed), problems=missed,
                figures=f"missed {sum('search missed' in m for m in missed)} of {edits}; the watcher answered "
                        f"{answers.get('fresh', 0)} searches 'fresh' ({answers.get('waited', 0)} after syncing for "
                        f"them), 'unknown' {answers.get('unknown', 0)} (those made the stat pass)"))


def scenario_freshness(ctx: Context) -> None:
    for part in (_in_place, _coarse, _clock_back, _watched):
        part(ctx)
