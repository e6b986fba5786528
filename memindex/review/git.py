"""What git knows about the project's code, for the staleness check: the tracked files,
the deletions and renames since a date (each with its commit), which of some names occur
in the tracked files now or at an older commit, and how much some files changed.

Every call is a `git` subprocess with a timeout and bounded output; any failure (no git,
not a repository, a timeout) makes the answer None and the check says what it could not
see, never that a memory is stale. Hardened for a repository that is input: no pager,
no prompt, no optional locks, no fsmonitor or external diff/textconv program, and never
a diff against the working tree (which would run the repository's clean filters); the
working tree is read with `git grep` and `os.path.exists` only.
"""

from __future__ import annotations

import bisect
import os
import subprocess
import threading
import time
from collections.abc import Iterable

SAFE = ("-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "core.quotePath=false",
        "-c", "diff.renameLimit=2000", "-c", "grep.patternType=fixed")
OUTPUT_MAX = 256 * 1024 * 1024  # bytes of one answer read at most (the rest: the call failed)
LOG_MAX_COMMITS = 200_000  # commits read to place a memory's date in history


class Git:
    """One repository (the project's), asked within a shared time budget."""

    def __init__(self, project: str, budget_s: float) -> None:
        self.project = os.path.realpath(project)
        self.deadline = time.monotonic() + budget_s
        self.failures: list[str] = []
        self.top: str | None = None
        self.prefix = ""  # the project's folder inside the repository ("" at its top)
        self.head: str | None = None
        self._commits: tuple[list[int], list[str]] | None = None
        out = self.run("rev-parse", "--show-toplevel", "HEAD")
        if out is not None:
            lines = out.decode("utf-8", "surrogateescape").splitlines()
            if len(lines) == 2:
                self.top, self.head = os.path.realpath(lines[0]), lines[1]
                rel = os.path.relpath(self.project, self.top)
                self.prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"

    @property
    def ok(self) -> bool:
        return self.top is not None

    def run(self, *args: str, input: bytes | None = None, lines: bool = False) -> bytes | None:
        """git's stdout, or None (the failure is noted) past the budget, on a nonzero exit
        (grep's 1, no match, is an empty answer) or an answer over OUTPUT_MAX."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            self._fail(args[0], "out of time")
            return None
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C",
               "GIT_CONFIG_NOSYSTEM": "1"}
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        try:
            proc = subprocess.Popen(["git", *SAFE, *args], cwd=self.top or self.project, env=env,
                                    stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as exc:
            self._fail(args[0], exc.strerror or str(exc))
            return None
        timer = threading.Timer(left, proc.kill)
        timer.start()
        try:
            if input is not None:
                feeder = threading.Thread(target=_feed, args=(proc.stdin, input), daemon=True)
                feeder.start()
            out = proc.stdout.read(OUTPUT_MAX + 1)  # type: ignore[union-attr]
            proc.stdout.close()  # type: ignore[union-attr]
            code = proc.wait()
        finally:
            timer.cancel()
        if len(out) > OUTPUT_MAX:
            self._fail(args[0], "answer too large")
            return None
        if code != 0 and not (args[0] == "grep" and code == 1):
            self._fail(args[0], "out of time" if code < 0 else f"exit {code}")
            return None
        return out

    def _fail(self, what: str, why: str) -> None:
        self.failures.append(f"git {what}: {why}")

    # --- the working tree --------------------------------------------------------------

    def tracked(self) -> set[str] | None:
        """Paths of the tracked files (relative to the repository's top), whether or not
        they are still on disk."""
        out = self.run("ls-files", "-z", "--cached")
        return None if out is None else {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}

    def present(self, names: Iterable[str], exclude: str = "", rev: str | None = None,
                skip_names: tuple[str, ...] = ()) -> set[str] | None:
        """Which of `names` occur, as whole words, in the tracked files of the working
        tree (or in commit `rev`, only the files that differ from HEAD: a name gone from
        HEAD can only have been in those), the `exclude` folder (the memory store) left
        out, and files whose lowercased base name starts with one of `skip_names` (a
        changelog names what is gone). GNU or BSD grep over the files git names (Aho-Corasick: one pass whatever the
        number of names), else `git grep` (which tries the names one by one)."""
        wanted = sorted({n for n in names if n and "\n" not in n and "\0" not in n})
        if not wanted:
            return set()
        skip = exclude.rstrip("/") + "/" if exclude else None

        def wanted_file(p: str) -> bool:
            return not (skip and p.startswith(skip)) and not p.rsplit("/", 1)[-1].lower().startswith(skip_names or ("\0",))

        if rev is None:
            files = sorted(p for p in (self.tracked() or ()) if wanted_file(p))
            feed = [p for p in files if os.path.isfile(os.path.join(self.top or "", p))]
            jobs = ["-P", str(min(4, os.cpu_count() or 1)), "-n", "2000"] if len(feed) > 4000 else []
            seen = self._grep(wanted, ["xargs", "-0", *jobs, "grep", "--line-buffered", "-F", "-o", "-w", "-h", "-I",
                                       "--no-messages"],
                              "\0".join(feed).encode("utf-8", "surrogateescape"), cwd_files=True)
        else:
            out = self.run("diff", "--name-only", "-z", "--no-renames", "--no-textconv", "--no-ext-diff", rev, "HEAD")
            if out is None:
                return None
            changed = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p and wanted_file(p)]
            if not changed:
                return set()
            blobs = self.run("cat-file", "--batch", input="".join(f"{rev}:{p}\n" for p in changed).encode("utf-8", "surrogateescape"))
            if blobs is None:
                return None
            seen = self._grep(wanted, ["grep", "-a", "-F", "-o", "-w", "-h"], blobs)
        return None if seen is None else _contained(wanted, seen)

    def _grep(self, names: list[str], cmd: list[str], feed: bytes, cwd_files: bool = False) -> set[str] | None:
        """The distinct matches `cmd` (a grep reading `-f PATTERNS` from a private file)
        prints for `feed` on its stdin; None when it cannot run or runs out of time."""
        import tempfile

        left = self.deadline - time.monotonic()
        if left <= 0:
            self._fail("grep", "out of time")
            return None
        with tempfile.NamedTemporaryFile("wb", prefix="memindex-names-", suffix=".txt") as pats:
            pats.write(("\n".join(names) + "\n").encode("utf-8", "surrogateescape"))
            pats.flush()
            argv = [*cmd[:cmd.index("grep") + 1], "-f", pats.name, *cmd[cmd.index("grep") + 1:]]
            if cwd_files:
                argv.append("--")
            try:
                proc = subprocess.Popen(argv, cwd=self.top or self.project, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
            except OSError as exc:
                self._fail("grep", exc.strerror or str(exc))
                return None
            timer = threading.Timer(left, proc.kill)
            timer.start()
            try:
                threading.Thread(target=_feed, args=(proc.stdin, feed), daemon=True).start()
                seen = set(proc.stdout.read(OUTPUT_MAX).decode("utf-8", "surrogateescape").split("\n"))  # type: ignore[union-attr]
                proc.stdout.close()  # type: ignore[union-attr]
                code = proc.wait()
            finally:
                timer.cancel()
        if code not in (0, 1, 123):  # 1: no match; 123: xargs saw a grep exit 1 (no match in a batch)
            self._fail("grep", "out of time" if code < 0 else f"exit {code}")
            return None
        return seen

    # --- history ------------------------------------------------------------------------

    def commit_at(self, epoch: float) -> str | None:
        """The newest commit of HEAD's first-parent history at or before `epoch`
        (None: before the history starts, or git failed)."""
        if self._commits is None:
            out = self.run("log", "--first-parent", f"--max-count={LOG_MAX_COMMITS}", "--format=%ct %H", "HEAD")
            times: list[int] = []
            shas: list[str] = []
            for line in reversed((out or b"").decode("ascii", "replace").splitlines()):
                t, _, sha = line.partition(" ")
                if t.isdigit() and sha:
                    times.append(int(t))
                    shas.append(sha)
            self._commits = (times, shas)
        times, shas = self._commits
        i = bisect.bisect_right(times, int(epoch)) - 1
        return shas[i] if i >= 0 else None

    def moves(self, since_epoch: float) -> list[tuple[int, str, str, str, str]] | None:
        """Deletions and renames since `since_epoch`, oldest first: (commit time, commit,
        "D" | "R", old path, new path or "")."""
        out = self.run("log", "-M", "--diff-filter=DR", "--name-status", "--no-textconv", "--no-ext-diff",
                       "--format=%x00%ct %H", f"--since={int(since_epoch)}", "HEAD")
        if out is None:
            return None
        events: list[tuple[int, str, str, str, str]] = []
        when, sha = 0, ""
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            if line.startswith("\0"):
                t, _, sha = line[1:].partition(" ")
                when = int(t) if t.isdigit() else 0
            elif line:
                parts = line.split("\t")
                if parts[0] == "D" and len(parts) == 2:
                    events.append((when, sha, "D", parts[1], ""))
                elif parts[0].startswith("R") and len(parts) == 3:
                    events.append((when, sha, "R", parts[1], parts[2]))
        events.reverse()
        return events

    def churn(self, rev: str, paths: list[str]) -> dict[str, int] | None:
        """Lines added plus deleted in each of `paths` from commit `rev` to HEAD (one tree
        diff, filtered here: thousands of pathspecs would cost git more than the diff)."""
        if not paths:
            return {}
        wanted = set(paths)
        out = self.run("diff", "--numstat", "--no-textconv", "--no-ext-diff", "--no-renames", rev, "HEAD")
        if out is None:
            return None
        got: dict[str, int] = {}
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit() and parts[2] in wanted:
                got[parts[2]] = got.get(parts[2], 0) + int(parts[0]) + int(parts[1])
        return got


def _feed(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _contained(names: list[str], seen: set[str]) -> set[str]:
    """The names found: printed as matches, or inside a longer match printed instead (grep
    -o prints the longest match at a place: `--no-update` hides `no-update`): every piece
    of a match that starts and ends where a whole-word match could (`grep -w`'s rule)."""
    found = {n for n in names if n in seen}
    rest = {n for n in names if n not in found}
    if not rest:
        return found
    shortest = min(map(len, rest))
    for s in seen:
        if len(s) <= shortest:
            continue
        starts = [i for i in range(len(s)) if i == 0 or not _word(s[i - 1]) or not _word(s[i])]
        ends = [j for j in range(1, len(s) + 1) if j == len(s) or not _word(s[j]) or not _word(s[j - 1])]
        for i in starts:
            for j in ends:
                if j - i >= shortest and (i, j) != (0, len(s)):
                    piece = s[i:j]
                    if piece in rest and (i == 0 or not _word(s[i - 1])) and (j == len(s) or not _word(s[j])):
                        found.add(piece)
                        rest.discard(piece)
        if not rest:
            break
    return found
