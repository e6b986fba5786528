#!/usr/bin/env python3
"""The Stop hook's save prompts on a blind judged set (evalsets/triage/ by default).

    python scripts/eval_triage.py [--set evalsets/triage] [--hook all|dev|held-out|none] [--report all|dev|held-out]
                                  [--ending-stops last|each] [--patterns]
    python scripts/eval_triage.py --locomo ../shared/data/locomo/locomo10.json [--patterns]

The triage as the hook runs it by default (the scorer, capture.save_prompt_scorer), or with
`--patterns` the patterns alone.

Each ending (endings.json) becomes a Claude Code transcript (JSONL, as Claude Code 2.1.197
writes it: string user prompts, assistant text blocks, tool_use / tool_result entries for
the `tools` listed, attachments around them) and goes through the triage of a new session;
each sequence (sequences.json) is one session whose stops are appended one after another,
with Claude Code's "Stop hook feedback" entry and the model's answer after each block.
In-process (memindex.capture.triage.stop_decision, what the hook runs) for every item, and
through the real hook command of hooks/hooks.json (`python3 -I -S ... stop`, a process per
stop) for the slice `--hook` names: the two must print the same bytes.

A set says how it is split in its `split.json` ({"rule": "every_third"}: ids sorted, every
third, index 2, 5, 8, ..., held out; evalsets/triage/, triage3/ and triage4/ have it; {"rule": "sha1_quarter"}: the
ids whose sha1 starts with 0-3 held out, evalsets/triage2/ since the scorer trained on the
rest, scripts/train_triage.py); a set without one (a new
blind set, measured once) is all held-out. `sequences.json` may be absent. The patterns
were written and tuned on tests/test_triage.py's own development turns before the set was
opened; any later change may look at the dev slice only (`--report dev` prints nothing of
the held-out slice, for tuning runs).

Prints: precision of "asks to save", recall, and category accuracy (of the asks on items
worth saving: the first category the reason proposes), on dev and held-out separately;
repeats (a stop asked about a topic already asked about in its session: a `repeat_of`
stop that gets an ask) on the sequences; and the tokens a triggered save costs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex.capture.triage import stop_decision  # noqa: E402
from memindex_dev.evaluation.bench import hook_command, settle  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402


SPLITS = ("every_third", "sha1_quarter", "all_dev")


def split(ids: list[str], rule: str | None) -> dict[str, str]:
    """id -> "dev" or "held-out": "every_third" (sorted, every third held out),
    "sha1_quarter" (held out when the sha1 of the id starts with a hex digit below 4), or
    None (no split: all held-out)."""
    if rule is None:
        return {i: "held-out" for i in ids}
    if rule == "all_dev":  # a training-only set (evalsets/triage_written)
        return {i: "dev" for i in ids}
    if rule == "sha1_quarter":
        import hashlib

        return {i: ("held-out" if hashlib.sha1(i.encode()).hexdigest()[0] in "0123" else "dev") for i in ids}
    return {i: ("held-out" if n % 3 == 2 else "dev") for n, i in enumerate(sorted(ids))}


def split_rule(set_dir: Path) -> str | None:
    """The set's split.json rule, or None when it has none. Raises SystemExit on an unknown rule."""
    path = set_dir / "split.json"
    if not path.exists():
        return None
    rule = json.loads(path.read_text()).get("rule")
    if rule not in SPLITS:
        raise SystemExit(f"{path}: unknown split rule {rule!r} (known: {', '.join(SPLITS)})")
    return rule


def entries(turns: list[dict], tools: list[str] | None, n: int) -> list[dict]:
    """Claude Code transcript entries for turns; the tools run before the last assistant reply."""
    out: list[dict] = []
    last_assistant = max((i for i, t in enumerate(turns) if t["role"] == "assistant"), default=None)
    for i, turn in enumerate(turns):
        if i == last_assistant and tools:
            out += tool_entries(tools, n)
        if turn["role"] == "user":
            out.append({"type": "user", "message": {"role": "user", "content": turn["text"]}})
            out.append({"type": "attachment", "attachment": {"type": "skill_listing", "content": "- memory-save: Save a decision, runbook, constraint ..."}})
        else:
            out.append({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": turn["text"]}]}})
    if last_assistant is None and tools:
        out += tool_entries(tools, n)
    return out


def tool_entries(tools: list[str], n: int) -> list[dict]:
    out = []
    for k, tool in enumerate(tools):
        name, _, rest = tool.partition(": ")
        command, _, result = rest.partition(" -> ")
        args = {"command": command} if name == "Bash" else {"file_path": command} if name in ("Edit", "Write", "Read") else {"input": command}
        tid = f"toolu_{n}_{k}"
        out.append({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}]}})
        out.append({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": result or "ok"}]},
                    "toolUseResult": {"stdout": result}})
    return out


def append(path: Path, items: list[dict]) -> None:
    with path.open("a") as fh:
        for e in items:
            fh.write(json.dumps(e) + "\n")


CATEGORY = re.compile(r"--category (\w+)|\[(\w+)\]")


def asked_category(out: str) -> str | None:
    if not out:
        return None
    m = CATEGORY.search(json.loads(out)["reason"])
    return (m.group(1) or m.group(2)) if m else None


class Runner:
    """Runs stops in-process, and through the hook command for the chosen items."""

    def __init__(self, tmp: Path, scorer: bool = False) -> None:
        self.project = tmp / "proj"
        (self.project / ".claude" / "memory" / "decisions").mkdir(parents=True)
        runtime = tmp / "xdg"
        runtime.mkdir(mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        self.scorer = scorer  # capture.save_prompt_scorer, in process and for the hook (its config)
        self.env = dict(os.environ, PYTHONPATH=str(REPO),
                        MEMINDEX_CONFIG_JSON=json.dumps({"capture": {"save_prompt_scorer": scorer}}))
        self.cmd = hook_command(REPO, "stop")
        self.tmp = tmp
        self.disagree: list[str] = []
        self.hook_runs = 0

    def stop(self, path: Path, session: str, via_hook: bool) -> str:
        payload = {"session_id": session, "transcript_path": str(path), "cwd": str(self.project),
                   "hook_event_name": "Stop", "stop_hook_active": False}
        if via_hook:  # the hook first: in-process then runs on a session of its own
            proc = subprocess.run(self.cmd, input=json.dumps(payload).encode(), capture_output=True, env=self.env, timeout=30)
            self.hook_runs += 1
            hook_out = proc.stdout.decode()
            mine = stop_decision({**payload, "session_id": session + "/in-process"}, self.scorer)
            if hook_out != mine:
                self.disagree.append(f"{session}: hook {hook_out[:80]!r} vs in-process {mine[:80]!r}")
            return hook_out
        return stop_decision(payload, self.scorer)


def segments(turns: list[dict]) -> list[list[dict]]:
    """The turns cut after each assistant reply (a trailing user turn is a segment of its own)."""
    out: list[list[dict]] = [[]]
    for turn in turns:
        out[-1].append(turn)
        if turn["role"] == "assistant":
            out.append([])
    return [seg for seg in out if seg]


def feedback(out: str) -> list[dict]:
    """What Claude Code and the model add after a block."""
    return [{"type": "user", "isMeta": True, "message": {"role": "user", "content": "Stop hook feedback:\n" + json.loads(out)["reason"]}},
            {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Saved it with memindex."}]}}]


def evaluate(set_dir: Path, hook_slice: str, shown: tuple[str, ...] = ("dev", "held-out"), ending_stops: str = "last",
             scorer: bool = False) -> int:
    endings = json.loads((set_dir / "endings.json").read_text())
    seq_file = set_dir / "sequences.json"
    sequences = json.loads(seq_file.read_text()) if seq_file.exists() else []
    rule = split_rule(set_dir)
    e_split, s_split = split([e["id"] for e in endings], rule), split([s["id"] for s in sequences], rule)
    use_hook = lambda part: hook_slice == "all" or hook_slice == part  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        run = Runner(tmp, scorer)
        # endings: one new session each
        rows: dict[str, list[tuple[dict, str]]] = {"dev": [], "held-out": []}
        for n, item in enumerate(endings):
            part = e_split[item["id"]]
            path = tmp / f"{item['id']}.jsonl"
            if ending_stops == "last":
                append(path, entries(item["turns"], item.get("tools"), n))
                rows[part].append((item, run.stop(path, f"ending-{item['id']}", use_hook(part))))
                continue
            first = ""  # each: a stop after every assistant reply, as Claude Code runs the hook; the first ask counts
            parts = segments(item["turns"])
            for k, seg in enumerate(parts):
                append(path, entries(seg, item.get("tools") if k == len(parts) - 1 else None, 100 * n + k))
                out = run.stop(path, f"ending-{item['id']}", use_hook(part))
                if out:
                    first = first or out
                    append(path, feedback(out))
            rows[part].append((item, first))
        # sequences: one session each, stops appended
        seq_rows: dict[str, list[tuple[dict, str]]] = {"dev": [], "held-out": []}
        for n, seq in enumerate(sequences):
            part = s_split[seq["id"]]
            path = tmp / f"{seq['id']}.jsonl"
            asked_topics: set[str] = set()  # the topics of this session's stops that got an ask
            for k, stop in enumerate(seq["stops"]):
                append(path, entries(stop["turns"], stop.get("tools"), 1000 * n + k))
                out = run.stop(path, f"seq-{seq['id']}", use_hook(part))
                seq_rows[part].append(({**stop, "_first_asked": stop.get("repeat_of") in asked_topics}, out))
                if out and stop.get("topic"):
                    asked_topics.add(stop["topic"])
                if out:
                    append(path, feedback(out))
        settle(tmp)  # the capture jobs the Stop hook started
    report(rows, seq_rows, run, set_dir, hook_slice, rule, shown, ending_stops)
    cost()
    return 1 if run.disagree else 0


def metrics(pairs: list[tuple[dict, str]]) -> list[str]:
    asks = [(i, o) for i, o in pairs if o]
    positives = [(i, o) for i, o in pairs if i["save"]]
    hits = [(i, o) for i, o in asks if i["save"]]
    right = [1 for i, o in hits if asked_category(o) == i["category"]]
    p = len(hits) / len(asks) if asks else float("nan")
    r = len(hits) / len(positives) if positives else float("nan")
    a = len(right) / len(hits) if hits else float("nan")
    return [str(len(pairs)), str(len(positives)), str(len(asks)), f"{p:.2f} ({len(hits)}/{len(asks)})",
            f"{r:.2f} ({len(hits)}/{len(positives)})", f"{a:.2f} ({len(right)}/{len(hits)})"]


def report(rows, seq_rows, run: Runner, set_dir: Path, hook_slice: str, rule: str | None,
           shown: tuple[str, ...] = ("dev", "held-out"), ending_stops: str = "last") -> None:
    head = ["slice", "items", "worth saving", "asks", "precision", "recall", "category accuracy"]
    body = [[f"endings {p}", *metrics(rows[p])] for p in shown]
    body += [[f"sequence stops {p}", *metrics(seq_rows[p])] for p in shown]
    how = {"every_third": "ids sorted, every third held out", "sha1_quarter": "ids whose sha1 starts with 0-3 held out",
           "all_dev": "a training-only set: all dev"}.get(rule or "", "no split.json: all held-out")
    when = "a stop after the last turn" if ending_stops == "last" else "a stop after each assistant reply, the first ask counts"
    print(f"Triage on {set_dir.relative_to(REPO) if set_dir.is_relative_to(REPO) else set_dir} ({how}; endings: {when})")
    print(table(head, body))
    for p in shown:
        repeat_stops = [(s, o) for s, o in seq_rows[p] if s.get("repeat_of")]
        repeats = sum(1 for s, o in repeat_stops if o)
        twice = sum(1 for s, o in repeat_stops if o and s["_first_asked"])
        print(f"sequences {p}: {repeats} repeats on {len(repeat_stops)} repeat stops (a topic asked about twice in a session); "
              f"{twice} of them after an ask on the topic's first stop, {repeats - twice} where that stop got none")
    kinds: dict[str, list[int]] = {}
    for p in shown:
        for item, out in rows[p]:
            k = kinds.setdefault(f"{p} {item['kind']}", [0, 0])
            k[0] += 1
            k[1] += bool(out)
    print("asks by kind: " + ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(kinds.items())))
    print(f"hook command runs: {run.hook_runs} (slice: {hook_slice}); hook vs in-process disagreements: {len(run.disagree)}")
    for d in run.disagree[:10]:
        print("  " + d)


def cost() -> None:
    """What one triggered save costs the model, estimated at 4 characters a token."""
    from memindex.capture.triage import findings, reason

    skill = (REPO / "skills" / "memory-save" / "SKILL.md").read_text()
    body = skill.split("---", 2)[2]
    save = re.search(r"```bash\n(memindex save .*?)\n```", skill, re.S).group(1)
    cand = re.search(r"```bash\n(memindex candidate .*?)\n```", skill, re.S).group(1)
    answer = re.search(r"```json\n(.*?)\n```", skill, re.S).group(1)
    why = reason(findings(["Let's go with Postgres over MySQL for the events store."], ["Postgres it is."])[:1])
    parts = [("block reason (Stop hook feedback)", "Stop hook feedback:\n" + why),
             ("memory-save SKILL.md body (loaded by the Skill tool)", body),
             ("memindex candidate command + its answer", cand + answer),
             ("memindex save command (the skill's example) + answer", save + '{"status": "created", "path": ".claude/memory/decisions/x.json", "id": "x", "sha256": "9f2c", "fixes": []}'),
             ("closing line", "Saved the decision to .claude/memory/decisions/postgres-for-the-events-store.json.")]
    rows = [[name, str(len(text)), str(round(len(text) / 4))] for name, text in parts]
    total = sum(len(t) for _, t in parts)
    rows.append(["total", str(total), str(round(total / 4))])
    print("\nTokens a triggered save costs (estimate: characters / 4; no tokenizer installed):")
    print(table(["part", "characters", "~tokens"], rows))


LOCOMO_TRAIN = range(5)  # LoCoMo's conversations the scorer trained on (scripts/train_triage.py); 5-9 held out


def on_locomo(path: Path, scorer: bool = True) -> int:
    """LoCoMo's conversations as sessions (the first speaker as the user), a stop after each
    reply: chat between friends, where a project memory is never the answer, so every ask
    is a false one. In process (the hook and in-process agree on every judged set).
    Conversations 0-4 (the scorer's training negatives) and 5-9 (held out) apart."""
    from memindex_dev.evaluation.locomo import replay

    counts = {part: [0, 0, 0, 0] for part in ("0-4 (trained on)", "5-9 (held-out)")}  # stops, asks, sessions, asked sessions
    examples: list[str] = []
    asked: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp_name:
        run = Runner(Path(tmp_name), scorer)
        last = None
        for c, sid, target, w in replay(path, Path(tmp_name)):
            part = counts["0-4 (trained on)" if c in LOCOMO_TRAIN else "5-9 (held-out)"]
            part[2] += sid != last
            last = sid
            out = run.stop(target, sid, False)
            part[0] += 1
            if out:
                part[1] += 1
                part[3] += sid not in asked
                asked.add(sid)
                examples.append(f"{sid}: {json.loads(out)['reason'][:140]}")
                w.meta("Stop hook feedback:\n" + json.loads(out)["reason"])
                w.text("Saved it with memindex.")
        settle(Path(tmp_name))
    print(f"LoCoMo {path.name} as sessions ({'scorer' if scorer else 'patterns alone'}):")
    rows = [[f"conversations {name}", str(s), str(a), f"{a / max(s, 1):.3f}", f"{g} of {n}"] for name, (s, a, n, g) in counts.items()]
    print(table(["LoCoMo as sessions", "stops", "asks", "of the stops", "sessions with an ask"], rows))
    for line in examples[:8]:
        print("  " + line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=REPO / "evalsets" / "triage")
    parser.add_argument("--patterns", action="store_true",
                        help="with capture.save_prompt_scorer off (the patterns alone decide; the default is the scorer)")
    parser.add_argument("--scorer", action="store_true", help=argparse.SUPPRESS)  # the default since the fourth round
    parser.add_argument("--locomo", type=Path, metavar="JSON",
                        help="instead of a judged set: LoCoMo's conversations as sessions (every ask is a false one)")
    parser.add_argument("--hook", choices=("all", "dev", "held-out", "none"), default="all",
                        help="which slice also goes through the real hook command (default: all)")
    parser.add_argument("--report", choices=("all", "dev", "held-out"), default="all",
                        help="which slices are printed (tuning runs: dev, so that the held-out figures stay unseen)")
    parser.add_argument("--ending-stops", choices=("last", "each"), default="last",
                        help="an ending's stops: after its last turn only (the set's measure), or after each assistant "
                             "reply as Claude Code runs the hook in a session (a fact stated in an earlier turn was "
                             "triaged at that turn's stop)")
    args = parser.parse_args(argv)
    if args.locomo:
        return on_locomo(args.locomo, not args.patterns)
    shown = ("dev", "held-out") if args.report == "all" else (args.report,)
    return evaluate(args.set.resolve(), args.hook, shown, args.ending_stops, not args.patterns)


if __name__ == "__main__":
    sys.exit(main())
