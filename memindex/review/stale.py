"""`stale`: memories the code moved on from, seen from the working tree and git.

For each active memory (not session summaries, not documents), from the commit of its
date (`updated_at`, else `created_at`):

* files it names (`related_files`, and paths in its text) that are gone: deleted (with the
  commit), renamed (the new path, followed through later renames), or deleted in the
  working tree and not yet committed; a file never tracked is no evidence;
* names it gives (identifiers, flags, environment variables, code spans, quoted
  messages: names.py) that the files changed since that commit held then and the working
  tree's tracked files no longer hold anywhere, as whole words (the memory store and
  changelogs left out);
* churn: its files still there changed by at least `review.churn_ratio` of their lines.

What it cannot see: a behaviour that changed under the same names (a timeout from 30 s
to 5 min, a default flipped, a new option that lifts a limit), a name removed in edits not
yet committed. docs/review.md has the per-reason recall on the judged histories.

Bounded: one `git ls-files`, one `git log` of deletions and renames, per commit of a
memory date (at most COMMITS_MAX, the others mapped to the nearest later one) one `git
diff --name-only`, one `git cat-file --batch` of the files changed since and one grep of
them for the memories' names, then one grep of the working tree for the names found, and
one `git diff --numstat`; all within `review.git_timeout_s`. The names each memory gives
are extracted once per memory (review/cache.py).
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

from ..store.paths import project_of
from . import cache, names as naming
from .git import Git
from .items import Entry, Item

HISTORY = tuple(naming.DATA["history_files"])  # a changelog still names what the code dropped
COMMITS_MAX = 8  # distinct memory commits whose tree is searched for names gone since
NOTE_MAX = 100  # characters of the prompt hook's note
SLACK_S = 86_400  # moves this long before the oldest memory's date are read too (clock skew)


def _epoch(entry: Entry) -> float | None:
    for value in (entry.updated_at, entry.created_at):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except (ValueError, AttributeError):
            continue
        return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
    return None


class Facts:
    """What one run learnt from git, shared by every memory."""

    def __init__(self, git: Git, root: str) -> None:
        self.git = git
        self.tracked = git.tracked() or set()
        self.by_name: dict[str, list[str]] = {}
        for path in self.tracked:
            self.by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        rel = os.path.relpath(os.path.realpath(root), git.top or "")
        self.store = rel.replace(os.sep, "/")  # the memory store's folder, left out of every grep
        self.moves: dict[str, list[tuple[int, str, str, str]]] = {}
        self.moved_names: dict[str, list[str]] = {}

    def read_moves(self, since: float) -> None:
        for when, sha, kind, old, new in self.git.moves(since - SLACK_S) or ():
            self.moves.setdefault(old, []).append((when, sha, kind, new))
        self.moved_names: dict[str, list[str]] = {}
        for old in self.moves:
            self.moved_names.setdefault(old.rsplit("/", 1)[-1], []).append(old)

    def on_disk(self, path: str) -> bool:
        return os.path.lexists(os.path.join(self.git.top or "", path))

    def file_state(self, written: str, since: float) -> dict | None:
        """What became of a file a memory names: None when it is there (or was never
        tracked: a typo or another repository's file is not evidence), else
        {"path", "state": deleted | renamed, "to"?, "commit", "date"}."""
        prefix = self.git.prefix
        candidates = [prefix + written, written] if prefix else [written]
        if "/" not in written:  # a bare file name: any tracked file of that name will do
            if self.by_name.get(written):
                return None
            candidates = self.moved_names.get(written) or candidates
        for cand in candidates:
            if cand in self.tracked:
                if self.on_disk(cand):
                    return None
                return {"path": written, "state": "deleted", "commit": "(not committed)"}
        for cand in candidates:
            found = self._follow(cand, since)
            if found is not None:
                return {"path": written, **found}
        return None

    def _follow(self, path: str, since: float) -> dict | None:
        """The file's fate after `since` through the deletions and renames read."""
        seen, current, first = set(), path, None
        when = since
        while current not in seen:
            seen.add(current)
            event = next(((t, sha, kind, new) for t, sha, kind, new in self.moves.get(current, ()) if t >= when), None)
            if event is None:
                break
            t, sha, kind, new = event
            first = first or (sha, t)
            if kind == "D":
                return {"state": "deleted", "commit": sha[:12], "date": _day(t)}
            current, when = new, t
        if current == path or first is None:
            return None
        if current in self.tracked and self.on_disk(current):
            shown = current[len(self.git.prefix):] if self.git.prefix and current.startswith(self.git.prefix) else current
            return {"state": "renamed", "to": shown, "commit": first[0][:12], "date": _day(first[1])}
        return {"state": "deleted", "commit": first[0][:12], "date": _day(first[1])}


def _day(t: int) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d")


def _clusters(commits: dict[str, float], k: int) -> dict[str, str]:
    """Each commit -> the commit whose tree is searched for it: itself, or with more than
    `k` distinct ones, the nearest later of `k` spread over them (a later tree misses a
    name removed in between: the check stays on the side of "not stale")."""
    order = sorted(commits, key=lambda c: commits[c])
    if len(order) <= k:
        return {c: c for c in order}
    step = (len(order) - 1) / (k - 1)
    chosen = [order[round(i * step)] for i in range(k)]
    out, j = {}, 0
    for c in order:
        while commits[chosen[j]] < commits[c]:
            j += 1
        out[c] = chosen[j]
    return out


def detect(ctx) -> list[Item]:
    cfg = ctx.cfg
    if not cfg["review.code"]:
        ctx.notes["git"] = "off (review.code is false)"
        return []
    git = Git(project_of(ctx.root), float(cfg["review.git_timeout_s"]))
    if not git.ok:
        ctx.notes["git"] = "not a git repository (or git is missing): staleness not checked"
        return []
    facts = Facts(git, ctx.root)
    known = cache.load(ctx.root, "names")  # sha256 of a memory -> [files, names]: extracted once
    extracted: dict[str, list] = {}
    work = []  # (entry, epoch, commit, files, names)
    for e in ctx.entries:
        if e.document or e.category == "session_summary":
            continue  # a session summary is a record of its day; documents: their own links (not yet)
        epoch = _epoch(e)
        commit = git.commit_at(epoch) if epoch is not None else None
        if commit is None:
            continue  # no history before it: nothing to compare with
        key = f"{naming.VERSION}:{e.sha}"
        got = known.get(key)
        if not (isinstance(got, list) and len(got) == 2):
            files = naming.files(e.related_files, e.text)
            got = [files, naming.names(e.text, files)]
        extracted[key] = got
        work.append((e, epoch, commit, got[0], got[1]))
    cache.save(ctx.root, "names", extracted)
    if not work:
        ctx.notes["git"] = "ok" if not git.failures else "; ".join(git.failures)
        return []
    facts.read_moves(min(w[1] for w in work))
    # names: which the files changed since each memory's commit had then (a name in an
    # unchanged file is still there), then which of those the working tree lacks now
    commit_times = {w[2]: w[1] for w in work}
    mapping = _clusters(commit_times, COMMITS_MAX)
    groups: dict[str, set[str]] = {}
    for e, epoch, commit, files, names in work:
        groups.setdefault(mapping[commit], set()).update(names)
    then = {c: git.present(names, exclude=facts.store, rev=c, skip_names=HISTORY) or set() for c, names in groups.items()}
    candidates = set().union(*then.values())
    now = git.present(candidates, exclude=facts.store, skip_names=HISTORY) if candidates else set()
    gone: dict[str, set[str]] = {}
    if now is not None:
        gone = {c: then[mapping[c]] - now for c in commit_times}
    states = {id(w): [s for f in w[3] if (s := facts.file_state(f, w[1])) is not None] for w in work}
    churn = _churn(git, facts, work, states, float(cfg["review.churn_ratio"]))
    items = []
    for w in work:
        e, epoch, commit, files, names = w
        moved, heavy = states[id(w)], churn.get(id(w))
        lost = [n for n in names if n in gone.get(commit, ())]
        if moved or lost or heavy:
            items.append(_item(ctx, e, commit, git.head or "", moved, lost, files, names, heavy))
    ctx.notes["git"] = "ok" if not git.failures else "; ".join(git.failures)
    return items


def _lines(path: str, limit: int = 4 * 1024 * 1024) -> int:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit)
    except OSError:
        return 0
    return data.count(b"\n") + (not data.endswith(b"\n") and bool(data))


def _churn(git: Git, facts: Facts, work: list, states: dict, ratio: float) -> dict[int, dict]:
    """Memories whose files that are still there changed by at least `ratio` of their
    lines since the memory's commit (0: off) -> {"files", "lines_changed", "lines", "ratio"}."""
    if ratio <= 0:
        return {}
    mapping = _clusters({w[2]: w[1] for w in work}, COMMITS_MAX)
    wanted: dict[str, set[str]] = {}
    kept: dict[int, list[str]] = {}
    for w in work:
        gone = {s["path"] for s in states[id(w)]}
        here = [git.prefix + f if git.prefix + f in facts.tracked else f for f in w[3] if f not in gone]
        here = [f for f in here if f in facts.tracked and facts.on_disk(f)]
        if here:
            kept[id(w)] = here
            wanted.setdefault(mapping[w[2]], set()).update(here)
    changed = {c: git.churn(c, sorted(paths)) or {} for c, paths in wanted.items()}
    sizes: dict[str, int] = {}
    out = {}
    for w in work:
        here = kept.get(id(w))
        if not here:
            continue
        diff = changed.get(mapping[w[2]], {})
        moved = sum(diff.get(f, 0) for f in here)
        if not moved:
            continue  # its files did not change: no need to count their lines
        lines = sum(sizes.setdefault(f, _lines(os.path.join(git.top or "", f))) for f in here)
        if lines and moved / lines >= ratio:
            out[id(w)] = {"files": here, "lines_changed": moved, "lines": lines, "ratio": round(moved / lines, 2)}
    return out


def _item(ctx, e: Entry, commit: str, head: str, moved: list[dict], lost: list[str], files: list[str],
          names: list[str], heavy: dict | None = None) -> Item:
    deleted = [m for m in moved if m["state"] == "deleted"]
    renamed = [m for m in moved if m["state"] == "renamed"]
    parts = []
    if deleted:
        parts.append(f"{_list([m['path'] for m in deleted])} {'was' if len(deleted) == 1 else 'were'} deleted")
    if renamed:
        parts.append("; ".join(f"{m['path']} was renamed to {m['to']}" for m in renamed[:2]))
    if lost:
        parts.append(f"{_list(lost)} no longer {'occurs' if len(lost) == 1 else 'occur'} in the code")
    if heavy and not parts:
        parts.append(f"its files changed heavily since it was written ({heavy['lines_changed']} lines changed, "
                     f"{heavy['lines']} now: {_list(heavy['files'], 2)})")
    reason = "; ".join(parts)
    evidence = {"since": commit[:12], "head": head[:12], "files": moved, "names": [{"name": n, "state": "gone"} for n in lost]}
    if heavy:
        evidence["churn"] = heavy
    dead = bool(deleted) and not renamed and len(deleted) == len([f for f in files if f]) and (not names or len(lost) * 2 >= len(names))
    note = reason if len(reason) <= NOTE_MAX else reason[: NOTE_MAX - 3] + "..."
    return ctx.item("stale", e, reason, evidence, "retire" if dead else "update", note=f"may be stale: {note}", dead=dead,
                    stable={"files": moved, "names": lost, "churn": bool(heavy)})


def _list(values: list[str], shown: int = 3) -> str:
    head = ", ".join(values[:shown])
    return head + (f" and {len(values) - shown} more" if len(values) > shown else "")
