"""The judged sets through the real prompt hook, run as Claude Code runs it.

    python scripts/eval_memory.py --through-hook [--semantic] [--sets ...]

The suite (`suite.run_suite`) calls the injection policy in this process. This module
measures what a user gets instead: for every prompt it starts the command of
`hooks/hooks.json` (`python3 -I -S hooks/memindex_hook.py prompt`, `python3` being this
interpreter) in the store's project folder, with the UserPromptSubmit payload Claude Code
sends on stdin (prompt, cwd, session id, a JSONL transcript of the earlier turns), and
reads the memories back from the `<memory-context>` block it prints. With `semantic`, the
user's own setting (MEMINDEX_CONFIG_JSON, for the hook and the worker it starts; a
project's config cannot turn a model on) turns the channel on and the real worker (`memindex serve`,
the embedding model) answers the hook over its socket within the hook's own time budget.

Beside each answer it runs the same policy in process (`Strategy.inject`, at the wall
clock's time as the hook is) and counts the prompts where the two differ: a difference is
something the in-process tables do not show (a worker too slow for the budget, a
transcript read differently, an import the hook cannot make).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from html import unescape
from pathlib import Path

from memindex import index
from memindex.config import DEFAULTS, ENV_CONFIG, Config
from memindex.index.sync import sync
from memindex.policy.transcript import injected_paths

from .bench import hook_command, percentiles, settle, wait_for
from .memory import SEMANTIC_CFG, Strategy, earlier_turns, inject_metrics
from .metrics import table
from .sets import REPO, SETS, Store, all_sets, is_holdout
from .suite import CHARS_PER_TOKEN

WORKER_START_S = 60.0  # loading the model and its vectors; a first run may unpack the model


def block_paths(block: str, prefix: str) -> list[str]:
    """The memory paths of a `<memory-context>` block (`- [KIND] title -> path #tags:...`),
    relative to the memory root (`prefix` is how the hook shows the root)."""
    paths = [unescape(p) for p in injected_paths(block)]  # as session awareness reads the block
    return [p[len(prefix):] if p.startswith(prefix) else p for p in paths]


class Worker:
    """The real `memindex serve` of one root, started detached as the hooks start it, and
    stopped (SIGTERM) when the store is done."""

    def __init__(self, root: Path) -> None:
        from memindex.background import start
        from memindex.semantic import client

        self.root, self.requests = root, 0
        self.proc = start(root, "serve")
        ready = lambda: (client.ping(root) or {}).get("docs")  # noqa: E731
        try:
            wait_for(ready, WORKER_START_S, "the semantic worker", step=0.2)
        except AssertionError:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop it; `requests` is then how many queries it answered."""
        from memindex.semantic import client

        self.requests = (client.ping(self.root) or {}).get("requests", 0)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_store(store: Store, semantic: bool, scratch: Path, python: str = sys.executable,
              policy: dict | None = None) -> tuple[dict[str, dict], int]:
    """Per query of one store: what the hook injected, its block's size, how long it took,
    and what the in-process policy picks; and how many queries the worker answered.
    `policy`: the user's `retrieval` settings for this run (e.g. `{"match_strategy":
    "calibrated"}`), given to the hook as the user's own config and to the in-process policy."""
    saved = os.environ.pop(ENV_CONFIG, None)
    user = {**({"semantic": {"enabled": True}} if semantic else {}), **({"retrieval": policy} if policy else {})}
    if user:
        os.environ[ENV_CONFIG] = json.dumps(user)
    try:
        return _run_store(store, semantic, scratch, python, user)
    finally:
        os.environ.pop(ENV_CONFIG, None)
        if saved is not None:
            os.environ[ENV_CONFIG] = saved


def _run_store(store: Store, semantic: bool, scratch: Path, python: str, user: dict) -> tuple[dict[str, dict], int]:
    root = store.root
    project = root.parent.parent  # copy_store lays a set out as <project>/.claude/memory
    sync(root, SEMANTIC_CFG if semantic else Config())
    retrieval = {"match_strategy": DEFAULTS["retrieval.match_strategy"], **(user.get("retrieval") or {})}  # as the hook has it
    strategy = Strategy("in process", {**{k: v for k, v in user.items() if k != "semantic"}, "retrieval": retrieval},
                        semantic=semantic, now=None)
    tag = retrieval["match_strategy"]  # a session per prompt and policy
    cmd = hook_command(REPO, "prompt", python)
    worker = Worker(root) if semantic else None
    conn = index.open_reader(root)
    results: dict[str, dict] = {}
    try:
        for q in store.queries:
            transcript = scratch / f"{store.name}-{q['id']}.jsonl"
            turns = earlier_turns(transcript, q)  # also what the in-process policy is given
            payload = {
                "session_id": f"eval-{tag}-{store.name}-{q['id']}", "transcript_path": str(transcript), "cwd": str(project),
                "hook_event_name": "UserPromptSubmit", "prompt": q["query"],
            }
            start = time.perf_counter()
            proc = subprocess.run(cmd, input=json.dumps(payload).encode(), capture_output=True, cwd=project,
                                  timeout=30, check=False)
            elapsed = time.perf_counter() - start
            block = proc.stdout.decode("utf-8", "replace")
            results[q["id"]] = {
                "inject": block_paths(block, ".claude/memory/"),
                "chars": len(block),
                "ms": elapsed * 1000,
                "exit": proc.returncode,
                "stderr": proc.stderr.decode("utf-8", "replace").strip(),
                "in_process": strategy.inject(conn, q["query"], turns),
            }
    finally:
        conn.close()
        if worker is not None:
            worker.stop()
    return results, worker.requests if worker else 0


def run_hook_suite(names: tuple[str, ...] = SETS, semantic: bool = False, out: Callable[[str], None] = print,
                   sets_from: Callable[[Path], list[Store]] | None = None,
                   questions: bool = False, policy: dict | None = None) -> dict[tuple[str, str], dict[str, float]]:
    """(set, slice) -> metrics of what the hook injected (slices dev, holdout and whole);
    prints the table and every prompt where the hook and the in-process policy differ.
    With `questions`, each memory carries its blind questions (`sets.add_questions`);
    `policy`: the user's `retrieval` settings for the run (`run_store`)."""
    per_set: dict[str, tuple[list[dict], dict[str, dict]]] = {}
    worker_queries: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="memindex-hookrun-") as tmp_name:
        tmp = Path(tmp_name)
        scratch = tmp / "transcripts"
        scratch.mkdir()
        stores = sets_from(tmp) if sets_from else all_sets(tmp, names, questions)
        for store in stores:
            results, asked = run_store(store, semantic, scratch, policy=policy)
            worker_queries[store.set_name] = worker_queries.get(store.set_name, 0) + asked
            queries, merged = per_set.setdefault(store.set_name, ([], {}))
            for q in store.queries:
                qid = f"{store.name}/{q['id']}"
                queries.append({**q, "id": qid})
                merged[qid] = results[q["id"]]
        settle(tmp)  # the hook's background syncs still writing there
    summary: dict[tuple[str, str], dict[str, float]] = {}
    rows, differ = [], []
    for set_name, (queries, results) in per_set.items():
        for slice_name in ("dev", "holdout", "whole"):
            qs = [q for q in queries if slice_name == "whole" or is_holdout(set_name, q["id"]) == (slice_name == "holdout")]
            if not qs:
                continue
            m = inject_metrics(qs, results)
            m["tokens"] = sum(results[q["id"]]["chars"] for q in qs) / CHARS_PER_TOKEN / len(qs)
            m["same"] = sum(results[q["id"]]["inject"] == results[q["id"]]["in_process"] for q in qs) / len(qs)
            negatives = [q for q in qs if not q["judgments"]]
            m["prompts"], m["negatives"] = len(qs), len(negatives)
            m["neg_injected"] = sum(1 for q in negatives if results[q["id"]]["inject"])
            p50, p95 = percentiles([results[q["id"]]["ms"] for q in qs])
            m["p50_ms"], m["p95_ms"] = p50, p95
            summary[(set_name, slice_name)] = m
            rows.append([set_name, slice_name, len(qs), m["precision"], m["recall_g2"], m["false_inject"], m["silent"],
                         m["per_prompt"], f"{m['tokens']:.0f}", m["same"], f"{p50:.0f}", f"{p95:.0f}"])
        for q in queries:
            r = results[q["id"]]
            if r["inject"] != r["in_process"] or r["exit"] != 0:
                differ.append(f"  {q['id']}: hook {r['inject']} (exit {r['exit']}), in process {r['in_process']}"
                              + (f"; stderr: {r['stderr'][:200]}" if r["stderr"] else ""))
    channel = "with the semantic worker (real `memindex serve`)" if semantic else "lexical"
    channel += f", retrieval {json.dumps(policy)}" if policy else ", default policy"
    out(f"The prompt hook as Claude Code runs it ({' '.join(hook_command(REPO))}), {channel}:")
    out(table(["set", "slice", "prompts", "inject precision", "grade-2 recall", "negatives injected", "silent (positives)",
               "injected/prompt", "tokens/prompt", "same as in process", "hook p50 ms", "p95 ms"], rows))
    if semantic:
        out("queries the worker answered: " + ", ".join(f"{k} {v} of {len(per_set[k][0])} prompts" for k, v in worker_queries.items()))
        for set_name, asked in worker_queries.items():
            summary[(set_name, "worker")] = {"queries": asked, "prompts": len(per_set[set_name][0])}
    out(f"\nprompts where the hook and the in-process policy differ, or the hook failed: {len(differ)}")
    for line in differ:
        out(line)
    return summary


CALIBRATED = {"match_strategy": "calibrated"}
RULES = {"match_strategy": "fts5_bm25"}


def compare_policies(names: tuple[str, ...] = SETS, semantic: bool = False, out: Callable[[str], None] = print,
                     sets_from: Callable[[Path], list[Store]] | None = None,
                     questions: bool = False) -> dict[tuple[str, str, str], dict[str, float]]:
    """The hand-set rules and the calibrated relevance model, each through the real hook on
    the same prompts: (set, slice, policy) -> metrics, and one table side by side."""
    summary: dict[tuple[str, str, str], dict[str, float]] = {}
    for label, policy in (("rules", RULES), ("calibrated", CALIBRATED)):
        got = run_hook_suite(names, semantic, out, sets_from, questions, policy)
        summary.update({(s, sl, label): m for (s, sl), m in got.items() if sl != "worker"})
        out("")
    rows = [[s, sl, label, int(m["prompts"]), m["precision"], m["recall_g2"], f"{m['neg_injected']}/{m['negatives']}",
             m["same"]] for (s, sl, label), m in summary.items()]
    rows.sort(key=lambda r: (r[0], ("dev", "holdout", "whole").index(r[1]), r[2] != "rules"))
    out("rules against the calibrated model, through the real hook " + ("with the worker" if semantic else "(lexical)") + ":")
    out(table(["set", "slice", "policy", "prompts", "precision", "grade-2 recall", "negatives injected",
               "same as in process"], rows))
    return summary
