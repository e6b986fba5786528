"""The stress kit: reliability and security of memindex under load, faults and hostile
input. `scripts/stress.py` runs every scenario and prints the figures (see its docstring
and docs/reliability.md); tests/test_reliability.py runs the fast subset.

Modules by concern:

- procs     running memindex and its hook as processes (root or uid 65534), cleanup
- memories  memory files: fillers, and targets one prompt matches uniquely
- judge     judging the hook's block and the CLI's output; comparing with a clean rebuild
- harness   the run's context, result rows and table; a temporary project
- load      scenario "load" (hook loops while files change, sync and watch run)
- faults    damaged index, permissions, lock, full disk, crash after COMMIT
- kills     kill -9 of sync, rebuild and watch
- fuzzing   the fuzzing machinery (hostile text, settings, in-process hook calls)
- fuzz      hypothesis fuzzers: hook stdin, queries, config, memory files
- special   hand-written hostile inputs as real processes; the fuzz scenario
- hostile   scenario "hostile": memindex's own files in the root as links, FIFOs, folders,
            /dev/zero and other users' files, under every command
- hostile_inputs  the rest of it: untrusted roots, bounded parsing, tag bombs, damaged
            index, closed streams, a PostToolUse burst
- semantic  scenario "semantic": kill -9 of the resident worker and of a sync mid-embedding,
            damaged or mislabelled vectors, a missing model and one that fails to load
- runner    the scenarios by name and one whole run

The names below are what the tests use.
"""

from .faults import checkpoint
from .fuzzing import FuzzStats, FuzzStore, call_hook_inprocess, fuzz_settings, hostile_text, judge_hook
from .harness import Project
from .judge import cli_problems, hook_problems, parse_block, path_problems, prompt_payload, read_docs, read_jsonl
from .kills import mutate, watch_restarts
from .memories import CATEGORY_LIST, VOCAB, NonceWords, Target, dump, memory_doc, new_target
from .procs import DISPLAY, ENV, HANG_S, PY, UNPRIV, hook_argv, remove_tree, run, unlink

__all__ = [
    "CATEGORY_LIST", "DISPLAY", "ENV", "HANG_S", "PY", "UNPRIV", "VOCAB", "FuzzStats", "FuzzStore", "NonceWords",
    "Project", "Target", "call_hook_inprocess", "checkpoint", "cli_problems", "dump", "fuzz_settings", "hook_argv",
    "hook_problems", "hostile_text", "judge_hook", "memory_doc", "mutate", "new_target", "parse_block",
    "path_problems", "prompt_payload", "read_docs", "read_jsonl", "remove_tree", "run", "unlink", "watch_restarts",
]
