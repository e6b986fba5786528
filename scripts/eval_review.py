"""The review's detectors against judged sets written blind (docs/evaluation.md, "The store
stays true").

Staleness (evalsets/stale/<slug>/): memories written at an old commit of a public
repository, judged at a later one (stale or not, and why). For each set a clone of the
local mirror (meta.json's `mirror`, a bare git folder) is checked out at `head`, the
memories are put in its .claude/memory, and `memindex review`'s detectors run; a memory
counts as flagged when it gets a `stale` or `expired` item. Printed: precision and recall
per repository, recall per judged reason kind, and the items on the same memories at
`commit_old` itself (the code did not change: the target is 0). gh-cli and poetry are the
development sets; helix is held out (`--held-out` adds it; measured once at the end).

Contradictions and duplicates (evalsets/kestrel/): `--pairs` scores the judged pairs,
split into a dev and a held-out half by a hash of the pair (see `split`).

    python scripts/eval_review.py                 # staleness on gh-cli and poetry
    python scripts/eval_review.py --held-out      # ... and helix
    python scripts/eval_review.py --pairs         # duplicates and contradictions, dev half
    python scripts/eval_review.py --pairs --held-out

Sets whose mirror is absent are skipped with a message.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex.config import load_config  # noqa: E402
from memindex.index.sync import sync  # noqa: E402

STALE = REPO / "evalsets" / "stale"
DEV, HELD_OUT = ("gh-cli", "poetry"), ("helix",)
WORK = Path(tempfile.gettempdir()) / "memindex-eval-review"


def checkout(meta: dict, rev: str, name: str) -> Path | None:
    """A clone of the mirror at `rev` (kept between runs under WORK), or None without a mirror."""
    mirror = meta["mirror"]
    if not os.path.isdir(mirror):
        return None
    where = WORK / name
    if not (where / ".git").exists():
        shutil.rmtree(where, ignore_errors=True)
        where.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", mirror, str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", "--force", rev], check=True)
    subprocess.run(["git", "-C", str(where), "clean", "-qfdx", "-e", ".claude"], check=True)
    return where


def run_review(project: Path, memories: Path, now: datetime) -> tuple[dict[str, list], dict]:
    """{memory path: [items]} of the review's detectors over these memories in `project`."""
    from memindex.review.queue import Context, detect, load_entries
    from memindex import index

    root = project / ".claude" / "memory"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(memories, root)
    cfg = load_config(root)
    sync(root, cfg)
    conn = index.open_reader(root)
    try:
        entries = load_entries(str(root), cfg, conn)
    finally:
        conn.close()
    ctx = Context(str(root), cfg, entries, now)
    started = time.perf_counter()
    items = detect(ctx)
    ctx.notes["seconds"] = round(time.perf_counter() - started, 2)
    out: dict[str, list] = {}
    for item in items:
        out.setdefault(item.path, []).append(item)
    return out, ctx.notes


def commit_time(project: Path, rev: str) -> datetime:
    out = subprocess.run(["git", "-C", str(project), "log", "-1", "--format=%ct", rev], capture_output=True, text=True, check=True)
    return datetime.fromtimestamp(int(out.stdout.strip()), timezone.utc)


FLAGGED = ("stale", "expired")


def stale_tables(slugs: tuple[str, ...], verbose: bool) -> None:
    rows, kinds_rows, unchanged = [], {}, []
    for slug in slugs:
        meta = json.loads((STALE / slug / "meta.json").read_text())
        judged = json.loads((STALE / slug / "judgments.json").read_text())
        project = checkout(meta, meta["head"], slug)
        if project is None:
            print(f"{slug}: mirror {meta['mirror']} absent; skipped")
            continue
        found, notes = run_review(project, STALE / slug / "memory", commit_time(project, meta["head"]))
        flagged = {p for p, items in found.items() if any(i.kind in FLAGGED for i in items)}
        stale = {p for p, j in judged.items() if j["stale"]}
        tp = len(flagged & stale)
        dead = {p for p, items in found.items() if any(i.dead for i in items)}
        rows.append((slug, len(judged), len(stale), len(flagged), tp, tp / len(flagged) if flagged else float("nan"),
                     tp / len(stale) if stale else float("nan"), notes.get("seconds"), notes.get("git"),
                     f"{len(dead & stale)}/{len(dead)}"))
        for p, j in judged.items():
            if not j["stale"]:
                continue
            for kind in {r["kind"] for r in j["reasons"]}:
                got = kinds_rows.setdefault(kind, {}).setdefault(slug, [0, 0])
                got[0] += 1
                got[1] += p in flagged
        if verbose:
            for p in sorted(set(judged) | flagged):
                mark = ("TP" if p in stale else "FP") if p in flagged else ("FN" if p in stale else "  ")
                why = [r["kind"] for r in judged.get(p, {}).get("reasons", [])]
                said = "; ".join(i.reason for i in found.get(p, []) if i.kind in FLAGGED)
                print(f"{mark} {p} judged={why} found={said[:160]}")
        project_old = checkout(meta, meta["commit_old"], slug + "-old")
        found_old, _ = run_review(project_old, STALE / slug / "memory", commit_time(project_old, meta["commit_old"]))
        unchanged.append((slug, sum(1 for items in found_old.values() for i in items if i.kind == "stale"),
                          sum(1 for items in found_old.values() for i in items)))
        if verbose:
            for p, items in found_old.items():
                for i in items:
                    print(f"AT OLD {p}: {i.kind}: {i.reason}")
    print("\n| set | memories | judged stale | flagged | right | precision | recall | clearly dead: judged stale / all | detect s | git |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.2f} | {r[6]:.2f} | {r[9]} | {r[7]} | {r[8]} |")
    if len(rows) > 1:
        n, s, f, t = (sum(r[i] for r in rows) for i in (1, 2, 3, 4))
        print(f"| all | {n} | {s} | {f} | {t} | {t / f if f else float('nan'):.2f} | {t / s:.2f} | | | |")
    print("\nrecall per judged reason kind (a stale memory can have several):\n")
    print("| reason kind | " + " | ".join(r[0] for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for kind in ("file-deleted", "file-renamed", "identifier-gone", "command-gone", "expired", "behaviour-changed"):
        cells = []
        for r in rows:
            total, hit = kinds_rows.get(kind, {}).get(r[0], [0, 0])
            cells.append(f"{hit}/{total}" if total else "-")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    only = {}
    print("\nitems on the same memories at commit_old (the code did not change):\n")
    print("| set | stale items | all items |")
    print("|---|---|---|")
    for slug, n_stale, n_all in unchanged:
        print(f"| {slug} | {n_stale} | {n_all} |")
    del only


# --- duplicates and contradictions --------------------------------------------------------

KESTREL = REPO / "evalsets" / "kestrel"


def split(pair: dict) -> str:
    """dev or held-out: the first hex digit of sha256("<path a>|<path b>") (paths sorted)
    below 8 is dev. Fixed before any tuning; the same pair lands in the same half whatever
    the file's order."""
    a, b = sorted((pair["a"], pair["b"]))
    return "dev" if int(hashlib.sha256(f"{a}|{b}".encode()).hexdigest()[0], 16) < 8 else "held-out"


def pair_tables(half: str, verbose: bool) -> None:
    from memindex import index
    from memindex.review import conflicts
    from memindex.review.queue import Context, load_entries

    data = json.loads((KESTREL / "pairs.json").read_text())
    pairs = data["pairs"] if isinstance(data, dict) else data
    with tempfile.TemporaryDirectory() as tmp:
        proj = Path(tmp) / "kestrel"
        shutil.copytree(KESTREL / "store", proj / ".claude" / "memory")
        root = proj / ".claude" / "memory"
        cfg = load_config(root)
        sync(root, cfg)
        conn = index.open_reader(root)
        try:
            entries = load_entries(str(root), cfg, conn)
        finally:
            conn.close()
        ctx = Context(str(root), cfg, entries, datetime.now(timezone.utc))
        started = time.perf_counter()
        items = conflicts.detect(ctx)
        seconds = time.perf_counter() - started
    found = {}
    for i in items:
        found[frozenset((i.path, i.other_path))] = i.kind
    chosen = [p for p in pairs if split(p) == half]
    print(f"\n{half}: {len(chosen)} judged pairs of {len(pairs)}; {len(items)} items store-wide in {seconds:.2f} s\n")
    print("| relation | pairs | flagged duplicate | flagged conflict |")
    print("|---|---|---|---|")
    by_rel: dict[str, list] = {}
    for p in chosen:
        by_rel.setdefault(p["relation"], []).append(found.get(frozenset((p["a"], p["b"]))))
    for rel, got in sorted(by_rel.items()):
        print(f"| {rel} | {len(got)} | {got.count('duplicate')} | {got.count('conflict')} |")
    judged = {frozenset((p["a"], p["b"])): p["relation"] for p in pairs}
    print("\n| kind | precision (judged pairs) | recall | flagged outside the judged pairs (store-wide) |")
    print("|---|---|---|---|")
    for kind, rel in (("duplicate", "duplicate"), ("conflict", "contradiction")):
        mine = [p for p in chosen if found.get(frozenset((p["a"], p["b"]))) == kind]
        right = [p for p in mine if p["relation"] == rel]
        total = [p for p in chosen if p["relation"] == rel]
        outside = sum(1 for k, v in found.items() if v == kind and k not in judged)
        prec = len(right) / len(mine) if mine else float("nan")
        print(f"| {kind} | {prec:.2f} ({len(right)}/{len(mine)}) | {len(right) / len(total) if total else float('nan'):.2f} "
              f"({len(right)}/{len(total)}) | {outside} |")
    both = [p for p in chosen if found.get(frozenset((p["a"], p["b"])))]
    right = [p for p in both if p["relation"] in ("duplicate", "contradiction")]
    total = [p for p in chosen if p["relation"] in ("duplicate", "contradiction")]
    print(f"| either (an item at all) | {len(right) / len(both) if both else float('nan'):.2f} ({len(right)}/{len(both)}) | "
          f"{len(right) / len(total):.2f} ({len(right)}/{len(total)}) | |")
    if verbose:
        for k, v in sorted(found.items(), key=lambda kv: sorted(kv[0])):
            if k not in judged:
                print(f"UNJUDGED {v}: " + " | ".join(sorted(k)))
        for p in chosen:
            got = found.get(frozenset((p["a"], p["b"])))
            want = {"duplicate": "duplicate", "contradiction": "conflict"}.get(p["relation"])
            if got != want:
                print(f"MISS {p['relation']:<13} got={got} {p['a']} | {p['b']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--held-out", action="store_true", help="staleness: add helix; pairs: the held-out half")
    ap.add_argument("--pairs", action="store_true", help="duplicates and contradictions (evalsets/kestrel)")
    ap.add_argument("-v", "--verbose", action="store_true", help="every memory or pair with what was found")
    args = ap.parse_args()
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="memindex-eval-state-"))
    if args.pairs:
        pair_tables("held-out" if args.held_out else "dev", args.verbose)
    else:
        stale_tables(DEV + (HELD_OUT if args.held_out else ()), args.verbose)


if __name__ == "__main__":
    main()
