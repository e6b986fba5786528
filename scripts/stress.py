#!/usr/bin/env python3
"""Reliability and security of memindex under load, faults and hostile input, with figures.

    python scripts/stress.py            # the full run (about 9 minutes on 2 cores)
    python scripts/stress.py --quick    # the reduced run CI uses (about 2.5 minutes)
    python scripts/stress.py --only load,faults --seed 7 --json out.json
    python scripts/stress.py --only hostile           # the hostile-root phase alone
    python scripts/stress.py --only semantic          # the semantic channel's faults alone
    python scripts/stress.py --only freshness         # in-place writers, 1 s timestamps, clock stepped back

Not part of the default test run (tests/test_reliability.py is its fast subset). The code
is the stress kit, tests/stresskit/ (one module per concern). Exits 1 when any target is
missed, 0 otherwise. Prints one table: scenario, runs, failures,
figures, outcome; then the failures in detail and the fuzzing budget.

Six parts:

* **load**: N processes run the prompt hook exactly as hooks/hooks.json does
  (`python3 -I -S hooks/memindex_hook.py prompt`, JSON on stdin, a new process per call) in
  a loop, while a mutator thread creates, edits (atomically and in place) and deletes memory
  files, a sync thread runs `memindex sync` and `memindex watch` runs too. Every file
  operation and every sync is logged with CLOCK_MONOTONIC times (system-wide on Linux, so
  comparable across processes), and each answer is judged afterwards:

  - the *last completed sync* of a hook call is the last `memindex sync` that exited 0
    before the hook process was started; S is the time that sync was *started* (its walk
    of the files happened after S). Writers are serialized by the lock and take their
    snapshot of the files while holding it, so any index state the hook can read was
    built from the files as they were at some moment after S.
  - a **corrupt answer** is a malformed block, or a path that did not exist at any moment
    between S and the end of the hook call (existence of a file = from the start of the
    operation that created it to the end of the operation that deleted it). A path
    deleted after S may legitimately still be shown: it is counted as stale-after-delete
    (allowed), not as corrupt.
  - a **missed memory**: the prompt was written to match one memory uniquely (two
    invented words that occur in no other memory), that memory was fully written before
    S and not deleted before the hook ended, and the hook did not inject it.
  - a **hook error**: non-zero exit, a traceback, or stderr other than one line starting
    with `memindex hook: ` (a timeout notice is a one-line notice but also a miss).

* **faults**: kill -9 of sync, rebuild and watch at random moments; disk full (the child's
  RLIMIT_FSIZE, and a full tmpfs when mount is allowed); the index truncated, overwritten
  with garbage, replaced by a directory, made read-only; the lock file left by a dead
  process, held by a live one, not writable; memory folders, files and the root made
  unreadable; a crash between the commit and the index.md write. Under each fault every
  command (sync, rebuild, search, search --no-sync, status, validate) must work or exit
  with a README exit code and one `memindex: ...` line (no traceback), the hook must exit
  0 with nothing or a well-formed block on stdout and at most one stderr line, and after
  the fault is cleared the next `memindex sync` must give an index equal to a clean
  rebuild of the same files (documents table: path, id, category, title, tags,
  record_status; the results of a few searches; index.md). Permission faults run the
  commands as uid 65534 (root ignores permission bits).

* **bad input**: hypothesis fuzzing of the hook's stdin, search queries, config files and
  memory files (run in-process for speed, where no alarm protects the hook: a call that
  takes longer than memindex.hook.BUDGET_S counts as a hang), plus hand-written hostile
  cases run as real processes (10 MB prompts, invalid UTF-8, 100k-deep JSON, a FIFO as
  transcript, symlink loops, links leaving the root, names with newlines, path traversal
  through the write path). Nothing may crash, hang past the budget, or escape the output
  block: exactly one `<memory-context ...>` ... `</memory-context>` pair or nothing, no raw
  `<` in the memory lines, no line break inside a memory line, no path outside
  `.claude/memory/`.

* **hostile root** (tests/stresskit/hostile.py, hostile_inputs.py): each file memindex
  opens or creates in the root (.index.db and its -wal/-shm, .index.lock, .watch.pid,
  .sync.spawned, .sync.wait, .memindex.log, index.md, memory-config.json) replaced by a
  symlink to a sentinel outside the root, a dangling symlink, a FIFO, a directory, a link
  to /dev/zero and a file of uid 65534, under the hooks, sync, search, status, validate
  and watch (--quick: the commands that open that file); roots owned by another user,
  world- or group-writable, or linked out of the project; bounded parsing (huge numbers,
  deep nesting, surrogates, edge dates), tag bombs, a damaged index, closed streams and a
  burst of PostToolUse calls; memory file names that read as orders under each client's
  SessionStart (claude, codex, gemini: named in `systemMessage` only), a committed summary
  dated 2099 beside the user's own capture, and init/save/capture/import/sync under
  `umask 000` (tests/stresskit/hostile_store.py). Failures: a sentinel written, truncated or deleted, a
  planted file replaced or removed, a hang past the budget (or a background sync still
  running), a traceback, a non-zero hook exit, a refusal without its one stderr line.

* **semantic** (tests/stresskit/semantic.py): the optional semantic channel with the
  stand-in model `builtin:hashing`, a private XDG_RUNTIME_DIR (0700) for the worker
  sockets, all as real processes: kill -9 of the resident worker (`memindex serve`) at
  random moments while two prompt-hook loops run (12 kills, --quick 4), each followed by a
  fresh start through `memindex serve`, the SessionStart hook or the prompt hooks
  themselves over the stale socket and pid file; kill -9 of `memindex sync` while it embeds
  3,000 memories (10 kills, --quick 4); the vector table corrupted (wrong-length blobs,
  garbage bytes, text values, the table dropped) or mismatched (another model's identity,
  another dimension; --quick: four of the six), with and without a resident worker; and
  `semantic.model` naming a missing folder or a model that fails to load (garbage weights,
  a config.json that is not JSON). Targets: the hook exits 0 within its budget with exactly
  the lexical answer (the same prompt with the channel off; where a worker answers, a
  healthy worker's answer also counts) and at most one `memindex hook: ` line; `search`
  exits 0 with the memory the query names and at most one stderr line about the channel
  (exactly one, saying what is wrong, while it is degraded); `sync` indexes the text and
  says in one line when it cannot embed; after the kill or fault the next sync leaves
  every memory with a vector equal to the model's embedding of its text; a worker that
  cannot load its model exits 1 with one line and backs off; exactly one worker after
  each restart, every worker stops on SIGTERM, and none rooted in the run's folders is
  left at the end.

* **freshness** (tests/stresskit/freshness.py): in-place writers (the same inode, no folder
  mtime moved) with `search` checked right after each write and the prompt hook (no
  watcher) until its periodic sync has run; same-size edits and new files in the second of
  the last sync on a loop-mounted ext2 with 1 s timestamps (skipped where `mount -o loop`
  is not allowed); spawn guards, the last-sync stamp and file mtimes a day in the future
  (a clock stepped back); in-place writers (same-size edits with their mtime put back
  among them) and new files with `memindex watch` running, `search` asking it (O(1)).
  Target: 0 missed memories.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the stress kit lives with the tests
# The records of which index this user's memindex built (memindex/index/provenance.py): the run's
# own, inherited by everything it starts (set before the kit takes its environment).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="memindex-stress-state-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], True)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this tree's memindex and memindex_dev

from memindex_dev.standin import enable  # noqa: E402

enable()  # the semantic scenario's model, builtin:hashing, in every process the kit starts
from stresskit.runner import run_all, scenario_names  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the reduced run (CI): ~15 s of load, 9 kills, a short fuzz")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="comma-separated: load, faults (= kills,disk,index,locks,perms,commit), fuzz, hostile, semantic, freshness")
    parser.add_argument("--workers", type=int, help="hook loops in the load scenario (default 8, --quick 4)")
    parser.add_argument("--duration", type=float, help="seconds of load (default 60, --quick 15)")
    parser.add_argument("--kills", type=int, help="kill -9 count (default 60, --quick 9)")
    parser.add_argument("--fuzz-scale", type=float, help="fuzzing time relative to the full run's 4.6 min (default 1, --quick 0.1)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    try:
        scenario_names(args.only)
    except ValueError as exc:
        parser.error(str(exc))
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
