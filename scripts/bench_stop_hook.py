#!/usr/bin/env python3
"""Stop-hook benchmark: the save-prompt triage, process start to exit, against the floor.

    python scripts/bench_stop_hook.py [--runs 40]

p50/p95 of `hooks/memindex_hook.py stop` run as Claude Code runs it (`python3 -I -S`, a new
process, the Stop payload on stdin) beside the floor `python -c "import sqlite3, json"`,
interleaved run by run in the same series: a bland turn (quiet), the same at the end of a
20 MB transcript (only its tail is read), a decision (a block; a new session id each run,
so that each run asks), and the stop after a block (`stop_hook_active`: returns at once).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))  # memindex_dev from this checkout, whatever memindex is installed
from memindex_dev.evaluation.bench import hook_command, series  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def turn_lines(user: str, assistant: str) -> list[str]:
    return [json.dumps({"type": "user", "message": {"role": "user", "content": user}}),
            json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": assistant}]}})]


def big_transcript(path: Path, target: int) -> None:
    """Turns with large tool results (file dumps) up to `target` bytes, then a bland turn."""
    dump = "def handler(event):\n    return event  # remember this, we decided\n" * 400
    with path.open("w") as fh:
        i = 0
        while fh.tell() < target:
            fh.write("\n".join(turn_lines(f"Let's go with option {i} over the old one.", "OK.")) + "\n")
            fh.write(json.dumps({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{i}", "content": dump}]}}) + "\n")
            i += 1
        fh.write("\n".join(turn_lines("Explain how the cache works.", "It is an LRU keyed by URL.")) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        project = base / "proj"
        (project / ".claude" / "memory" / "decisions").mkdir(parents=True)
        runtime = base / "xdg"
        runtime.mkdir(mode=0o700)
        env = dict(os.environ, PYTHONPATH=str(REPO), XDG_RUNTIME_DIR=str(runtime))
        bland = base / "bland.jsonl"
        bland.write_text("\n".join(turn_lines("Explain how the cache works.", "It is an LRU of 1,000 entries keyed by URL.")) + "\n")
        decided = base / "decided.jsonl"
        decided.write_text("\n".join(turn_lines("Let's go with Postgres over MySQL for the events store.", "Postgres it is.")) + "\n")
        big = base / "big.jsonl"
        big_transcript(big, 20 * 1024 * 1024)

        def payload(path: Path, session: str = "bench", active: bool = False) -> bytes:
            return json.dumps({"session_id": session, "transcript_path": str(path), "cwd": str(project),
                               "hook_event_name": "Stop", "stop_hook_active": active}).encode()

        stop = hook_command(REPO, "stop")
        floor = [sys.executable, "-c", "import sqlite3, json"]
        cases = [
            ("floor: python -c 'import sqlite3, json'", floor, [b""]),
            ("bland turn (quiet)", stop, [payload(bland)]),
            ("bland turn after 20 MB of transcript (quiet)", stop, [payload(big)]),
            ("decision (blocks; a new session each run)", stop, [payload(decided, f"s{i}") for i in range(args.runs)]),
            ("stop after a block (stop_hook_active)", stop, [payload(decided, "bench", True)]),
        ]
        results = series([(cmd, payloads) for _, cmd, payloads in cases], env, args.runs)
    f50 = results[0][0]
    rows = [[name, f"{p50 * 1000:.1f}", f"{p95 * 1000:.1f}", f"{p50 / f50:.2f}x"] for (name, _, _), (p50, p95) in zip(cases, results)]
    print(table(["case", "p50 ms", "p95 ms", "p50 / floor"], rows))
    print(f"{args.runs} runs per case, interleaved run by run; {sys.executable} ({sys.version.split()[0]}), {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
