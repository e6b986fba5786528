#!/usr/bin/env python3
"""Does capture keep what retrieval needs? LoCoMo (Maharana et al. 2024) sessions as
Claude Code transcripts, through the capture summariser, against the raw sessions.

Each session of each conversation becomes one transcript: the first speaker's turns are
the user's prompts, the second speaker's the assistant's texts, each turn written
"Name: text" (an image turn adds "[shares a photo: caption]"), the same words on both
sides. Two stores per conversation, one memory per session, same engine (`memindex
search`'s ranking: BM25 with the tag boost), same title (the summariser's, from the first
prompt) and tag:

- raw: the session's whole text (every turn);
- summary: what `capture.summary.summarise` keeps within its budget (8 KB; smaller
  budgets are shown to see what the cut order costs).

A question's relevant sessions are those holding its evidence dia_ids (categories 1-4;
adversarial ones are left out). Session-level R@k: the share of a question's relevant
sessions in the top k, averaged over questions. Conversations 0-6 are the dev slice,
7-9 held out; nothing in the summariser was tuned on either (reported separately all the
same). The data is read where it lies, never copied.

    python scripts/eval_capture.py [--locomo ../shared/data/locomo/locomo10.json] [--budgets 8192,4096,2048,1024]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memindex import index  # noqa: E402
from memindex.capture.parse import parse_lines  # noqa: E402
from memindex.capture.summary import _title, summarise  # noqa: E402
from memindex.config import parse_config  # noqa: E402
from memindex.defaults import CAPTURE_TAG, FOLDERS  # noqa: E402
from memindex_dev.evaluation.locomo import QA_CATEGORIES, ADVERSARIAL, load, parse_dia_ids, sessions_of, transcript, turn_text  # noqa: E402
from memindex.retrieval.query import Params, search  # noqa: E402
from memindex.index.sync import sync  # noqa: E402
from memindex.write.validate import prepare_new, serialize  # noqa: E402

HELD_OUT = (7, 8, 9)
KS = (5, 10)


def build(dest: Path, docs: list[dict]) -> None:
    root = dest / ".claude" / "memory"
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for doc in docs:
        mem, _ = prepare_new("session_summary", doc)  # the write path's own validation
        (root / "sessions" / f"{mem['id']}.json").write_bytes(serialize(mem))
    sync(root, parse_config({}))


def recall(root: Path, queries: list[tuple[str, set[int]]], session_of: dict[str, int]) -> dict[int, float]:
    params = Params.from_config(parse_config({}))
    got = {k: [] for k in KS}
    conn = index.open_reader(root)
    try:
        for question, relevant in queries:
            hits = search(conn, question, limit=max(KS), params=params, related=True)
            ranked = [session_of[h.path.rsplit("/", 1)[-1][: -len(".json")]] for h in hits]
            for k in KS:
                got[k].append(len(relevant & set(ranked[:k])) / len(relevant))
    finally:
        conn.close()
    return {k: statistics.fmean(v) if v else 0.0 for k, v in got.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json")
    parser.add_argument("--budgets", default="8192,4096,2048,1024")
    args = parser.parse_args(argv)
    if not args.locomo.exists():
        alt = Path("/work/shared/data/locomo/locomo10.json")
        args.locomo = alt if alt.exists() else args.locomo
    budgets = [int(b) for b in args.budgets.split(",")]
    data = load(args.locomo)
    started = time.perf_counter()
    rows: dict[tuple[str, str], list[tuple[int, dict[int, float]]]] = {}
    sizes: dict[int, list[int]] = {b: [] for b in budgets}
    raw_sizes: list[int] = []
    cut: dict[int, int] = {b: 0 for b in budgets}
    with tempfile.TemporaryDirectory(prefix="eval-capture-") as tmp:
        for c, conversation in enumerate(data):
            first = conversation["conversation"]["speaker_a"]
            sessions = sessions_of(conversation)
            queries = []
            for qa in conversation["qa"]:
                if qa.get("category") not in QA_CATEGORIES or qa["category"] == ADVERSARIAL:
                    continue
                relevant = {int(d[1:].split(":")[0]) for d in parse_dia_ids(qa.get("evidence", []))}
                relevant &= {n for n, _, _ in sessions}
                if relevant:
                    queries.append((str(qa["question"]), relevant))
            slice_name = "held-out (conv 7-9)" if c in HELD_OUT else "dev (conv 0-6)"
            session_of: dict[str, int] = {}
            raw_docs = []
            parsed = []
            for n, turns, date in sessions:
                sid, lines = transcript(c, n, turns, first, date)
                session = parse_lines(lines)
                parsed.append((n, sid, session))
                mem_id = f"session-{sid}"
                session_of[mem_id] = n
                prompts = [p for p in session.prompts if p] or [turn_text(turns[0])]
                raw = {"id": mem_id, "title": _title(prompts[0]), "tags": [CAPTURE_TAG], "created_at": date,
                       "content": {"goal": "", "outcome": "success", "transcript": "\n".join(turn_text(t) for t in turns)}}
                raw_docs.append(raw)
                raw_sizes.append(len(json.dumps(raw, ensure_ascii=False, indent=2).encode()))
            build(Path(tmp) / f"raw-{c}", raw_docs)
            rows.setdefault((slice_name, "raw"), []).append((len(queries), recall(Path(tmp) / f"raw-{c}" / ".claude" / "memory", queries, session_of)))
            for budget in budgets:
                docs = []
                for n, sid, session in parsed:
                    mem = summarise(session, f"/locomo/{sid}.jsonl", budget)
                    full = summarise(session, f"/locomo/{sid}.jsonl", 10**9)
                    cut[budget] += mem != full
                    size = len(json.dumps(mem, ensure_ascii=False, indent=2).encode())
                    sizes[budget].append(size)
                    docs.append(mem)
                dest = Path(tmp) / f"sum-{budget}-{c}"
                build(dest, docs)
                rows.setdefault((slice_name, f"summary {budget} B"), []).append((len(queries), recall(dest / ".claude" / "memory", queries, session_of)))
    n_sessions = len(raw_sizes)
    print(f"LoCoMo {args.locomo.name}: {len(data)} conversations, {n_sessions} sessions as transcripts; "
          f"raw session text as a memory: median {statistics.median(raw_sizes):.0f} B, max {max(raw_sizes)} B")
    print()
    print("| slice | store | questions | R@5 | R@10 | R@5 vs raw | R@10 vs raw |")
    print("|---|---|---|---|---|---|---|")
    for slice_name in ("dev (conv 0-6)", "held-out (conv 7-9)", "all"):
        base = None
        for store in ["raw"] + [f"summary {b} B" for b in budgets]:
            parts = [r for (s, st), v in rows.items() if st == store and (slice_name == "all" or s == slice_name) for r in v]
            n = sum(q for q, _ in parts)
            value = {k: sum(q * r[k] for q, r in parts) / n for k in KS}
            if store == "raw":
                base = value
            ratio = " | ".join(f"{value[k] / base[k]:.3f}x" for k in KS) if store != "raw" else "- | -"
            print(f"| {slice_name} | {store} | {n} | {value[5]:.3f} | {value[10]:.3f} | {ratio} |")
    print()
    for b in budgets:
        print(f"summary budget {b} B: median {statistics.median(sizes[b]):.0f} B, max {max(sizes[b])} B; "
              f"{cut[b]} of {n_sessions} sessions cut")
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
