"""Tokens the prompt hook injects over a multi-turn session, with and without session
awareness (`retrieval.skip_injected`): `python scripts/eval_memory.py --sessions`.

The sessions are the judged sets' follow-up prompts: each query with earlier user turns is
replayed turn by turn as Claude Code runs it. Every turn goes through the hook's policy
(`inject.decide`) with the session read back from a real JSONL transcript
(`transcript.read_session`), and each block the policy injects is appended to that
transcript as Claude Code records it (an `attachment` record of type `hook_success`), so
that the next turn sees it.

`evaluate_file_hook` (`--file-hook`) plays the next step of such a turn: the assistant opens
the files the prompt names, and the PreToolUse hook's rule 10 adds what the prompt hook did
not show.
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from memindex import index
from memindex.config import Config, parse_config
from memindex.defaults import FILES_TAIL_BYTES
from memindex.policy.inject import decide
from memindex.text.render import memory_context
from memindex.index.sync import sync
from memindex.policy.transcript import read_session, recent_user_turns

from .memory import NOW
from .metrics import table
from .sets import SETS, Store, all_sets

ENGINEERING_SETS = tuple(name for name in SETS if name != "locomo")  # LoCoMo's questions have no earlier turns to replay

PREFIX = ".claude/memory/"
CHARS_PER_TOKEN = 4


def _records(turn: str, i: int, block: str) -> list[dict]:
    """A user turn, the hook's block as Claude Code records it (if any), tool noise."""
    out: list[dict] = [{"type": "user", "message": {"role": "user", "content": turn}, "uuid": f"u{i}"}]
    if block:
        when = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")  # as Claude Code writes it
        out.append({"type": "attachment", "timestamp": when, "attachment": {
            "type": "hook_success", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
            "content": block.rstrip("\n"), "stdout": block, "stderr": "", "exitCode": 0}})
    out.append({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "On it."}]}})
    return out


def replay(conn, turns: list[str], cfg: Config, path: Path) -> tuple[int, int, int]:
    """(characters injected, memories injected, of which already shown earlier) over one
    session, replayed turn by turn into the transcript at `path`."""
    path.write_text("")
    chars = count = repeats = 0
    shown: set[str] = set()
    for i, turn in enumerate(turns):
        earlier = recent_user_turns(str(path), max_turns=cfg["retrieval.transcript_context.max_turns"],
                                    tail_bytes=cfg["retrieval.transcript_context.tail_bytes"], skip=turn)
        session = read_session(str(path), cfg["retrieval.transcript_context.scan_bytes"], FILES_TAIL_BYTES)
        hits = decide(conn, turn, cfg, turns=earlier, session=session, shown_prefix=PREFIX, now=NOW).hits
        block = memory_context(hits, PREFIX)
        chars += len(block)
        count += len(hits)
        repeats += sum(1 for h in hits if h.path in shown)
        shown.update(h.path for h in hits)
        with open(path, "a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in _records(turn, i, block))
    return chars, count, repeats


def evaluate_sessions(names: tuple[str, ...] = ENGINEERING_SETS, out=print) -> dict[tuple[str, bool], tuple[int, int, int, int]]:
    """Per set, with and without session awareness: (sessions, characters, memories,
    repeats) summed over the follow-up sessions; prints the table."""
    found: dict[tuple[str, bool], list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="memindex-sessions-") as tmp_name:
        tmp = Path(tmp_name)
        for store in all_sets(tmp, names):
            _replay_store(store, tmp, found)
    rows = []
    summary = {}
    for (set_name, aware), (sessions, chars, count, repeats) in sorted(found.items()):
        summary[(set_name, aware)] = (sessions, chars, count, repeats)
        rows.append([set_name, "on (product)" if aware else "off", sessions,
                     f"{chars / CHARS_PER_TOKEN / max(sessions, 1):.0f}", f"{count / max(sessions, 1):.2f}", repeats])
    out(table(["set", "skip_injected", "sessions", "tokens injected / session", "memories / session",
               "memories injected again"], rows))
    return summary


def _replay_store(store: Store, tmp: Path, found: dict[tuple[str, bool], list[int]]) -> None:
    sync(store.root, Config())
    conn = index.open_reader(store.root)
    try:
        for aware in (True, False):
            cfg = parse_config({"retrieval": {"skip_injected": aware}})
            acc = found.setdefault((store.set_name, aware), [0, 0, 0, 0])
            for q in store.queries:
                if not q.get("transcript"):
                    continue
                chars, count, repeats = replay(conn, [*q["transcript"], q["query"]], cfg, tmp / f"{q['id']}.jsonl")
                acc[0] += 1
                acc[1] += chars
                acc[2] += count
                acc[3] += repeats
    finally:
        conn.close()


def evaluate_file_hook(names: tuple[str, ...] = ENGINEERING_SETS, out=print) -> dict[tuple[str, str], dict[str, float]]:
    """The PreToolUse hook (rule 10) on the judged prompts that name a file: the prompt
    hook answers first, then the assistant opens each named file and `inject.on_file`
    adds what is anchored to it and fits the prompt, minus what this turn already showed.
    Per set and slice: prompts, memories added, their precision, and grade-2 recall over
    those prompts before and after (`python scripts/eval_memory.py --file-hook`)."""
    from memindex.policy.inject import on_file
    from memindex.policy.prompt import files_named
    from memindex.policy.transcript import Session

    from .sets import is_holdout

    cfg = parse_config({})
    summary: dict[tuple[str, str], dict[str, float]] = {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="memindex-filehook-") as tmp_name:
        for store in all_sets(Path(tmp_name), names):
            sync(store.root, Config())
            conn = index.open_reader(store.root)
            try:
                for q in store.queries:
                    files = files_named(q["query"])
                    if not files:
                        continue
                    turns = q.get("transcript") or []
                    shown = [h.path for h in decide(conn, q["query"], cfg, turns=turns, now=NOW).hits]
                    session = Session()
                    session.injected = {PREFIX + p: float("inf") for p in shown}
                    added: list[str] = []
                    for f in files:
                        for h in on_file(conn, f, q["query"], cfg, turns=turns, session=session, shown_prefix=PREFIX, now=NOW).hits:
                            added.append(h.path)
                            session.injected[PREFIX + h.path] = float("inf")
                    part = "holdout" if is_holdout(store.set_name, f"{store.name}/{q['id']}") else "dev"
                    m = summary.setdefault((store.set_name, part), {"prompts": 0, "added": 0, "relevant": 0, "g2": 0, "g2_before": 0, "g2_after": 0})
                    judged = q["judgments"]
                    grade2 = [p for p, g in judged.items() if g == 2]
                    m["prompts"] += 1
                    m["added"] += len(added)
                    m["relevant"] += sum(1 for p in added if judged.get(p, 0) >= 1)
                    m["g2"] += len(grade2)
                    m["g2_before"] += sum(1 for p in grade2 if p in shown)
                    m["g2_after"] += sum(1 for p in grade2 if p in shown or p in added)
            finally:
                conn.close()
    for (set_name, part), m in sorted(summary.items()):
        g2 = m["g2"] or 1
        rows.append([set_name, part, m["prompts"], m["added"], f"{m['relevant']}/{m['added']}",
                     m["g2_before"] / g2, m["g2_after"] / g2])
    out("PreToolUse (rule 10) on the prompts that name a file, after the prompt hook's answer:")
    out(table(["set", "slice", "prompts", "memories added", "relevant (grade >= 1)", "grade-2 recall, prompt hook",
               "grade-2 recall, + file hook"], rows))
    return summary
