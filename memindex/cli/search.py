"""`memindex search`: ranked memories for a query, as a compact list or JSON."""

from __future__ import annotations

import argparse

from ..config import Config
from ..defaults import CATEGORIES, CATEGORY_FOLDER, FILE_ANCHOR_MAX
from ..errors import UsageError
from ._common import AddParser, clean_arg, emit_json, err, positive_int

EXPLAIN_INTENT = {  # what explain says of an intent that is no kind of memory
    "resume": " (the prompt asks to resume earlier work: the latest session summary on its topic)",
    "general": " (a question about the world, not the project: only a memory holding every word of its topic)",
}


def register(add: AddParser) -> None:
    p = add("search", example='memindex search "stripe webhook 400" -c runbook')
    p.add_argument("query", nargs="+", help="free text; use -- before a query that starts with '-'")
    p.add_argument("--limit", "-n", type=positive_int, default=None, help="at most N results (default 10)")
    p.add_argument("--category", "-c", action="append", choices=CATEGORIES, help="only this category (repeatable)")
    p.add_argument("--tag", "-t", help="only memories with this tag")
    p.add_argument("--include-inactive", action="store_true", help="include retired and archived memories")
    p.add_argument("--no-sync", action="store_true", help="do not sync a stale index first")
    p.add_argument("--lexical", action="store_true", help="BM25 only, even with semantic.enabled")
    p.set_defaults(handler=cmd_search)
    p = add("explain", example='memindex explain "why do stripe webhooks fail with 400?"')
    p.add_argument("prompt", nargs="*", help="the prompt, as the hook would see it")
    p.add_argument("--hook-input", metavar="FILE", action=HookInput,
                   help="the JSON Claude Code sends the UserPromptSubmit (or PreToolUse) hook ('-' for stdin): "
                        "exactly what the hook injects for it, its transcript read as the hook reads it")
    p.add_argument("--file", metavar="PATH",
                   help="what the PreToolUse hook (rule 10, retrieval.tool_anchors) would add when the model "
                        "opens PATH while working on this prompt")
    p.add_argument("--no-sync", action="store_true", help="do not sync a stale index first")
    p.set_defaults(handler=cmd_explain)
    p = add("get", json_flag=False, example="memindex get .claude/memory/decisions/use-postgres.json")
    p.add_argument("path", help="the memory's path as search shows it (or decisions/x.json)")
    p.set_defaults(handler=cmd_get)


def cmd_get(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """One memory whole, as JSON: {path, sha256, memory} (the MCP tool `get`'s answer)."""
    from ..policy.recall import read_memory

    emit_json(read_memory(root, cfg, clean_arg(args.path) or ""))
    return 0


def cmd_search(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """Ranked memories for a query: a compact list, or JSON."""
    from ..store.paths import display_prefix
    from ..policy.recall import format_hits, hit_json, search_hits
    from ..usage import in_assistant_session

    hits = search_hits(
        root, cfg, clean_arg(" ".join(args.query)) or "",
        limit=args.limit, categories=args.category or (), tag=clean_arg(args.tag),
        include_inactive=args.include_inactive, allow_sync=not args.no_sync, lexical=args.lexical,
        progress=not (args.json or args.quiet), record="search" if in_assistant_session() else None,
    )
    prefix = display_prefix(root)
    if args.json:
        from ..policy.recall import source_of

        max_bytes = int(cfg["index.max_file_bytes"])
        emit_json([{**hit_json(h, prefix), "source": source_of(root, h.path, max_bytes)} for h in hits])
    elif hits:
        print(format_hits(hits, prefix))
    _attention(root)
    return 0


def _attention(root: str) -> None:
    """One stderr line naming memory files that are invalid, ignored, misplaced,
    duplicated or renamed by hand (`health.attention`), if any."""
    from ..index.health import attention

    note = attention(root)
    if note:
        err(note)


def cmd_explain(args: argparse.Namespace, root: str, cfg: Config) -> int:
    """What the prompt hook would inject for a prompt, and the rule that kept or dropped
    each memory it considered, with the setting to change."""
    from ..text.render import shown_path
    from ..policy.recall import explain

    file = clean_arg(args.file)
    if args.hook_input is not None:
        if args.prompt or file is not None:
            raise UsageError("give either --hook-input or a prompt (and --file), not both")
        from ..policy.door import PromptInput

        inp = PromptInput.from_hook(args.hook_input)
        file = inp.file
        answer = explain(root, cfg, "", allow_sync=not args.no_sync, hook_input=inp)
    elif not args.prompt:
        raise UsageError("give the prompt to explain, or --hook-input FILE")
    else:
        answer = explain(root, cfg, clean_arg(" ".join(args.prompt)) or "", file=file, allow_sync=not args.no_sync)
    _attention(root)
    if args.json:
        emit_json(answer)
        return 0
    settings, intent, considered = answer["settings"], answer["intent"], answer["considered"]
    if "turns" in answer:  # --hook-input: the prompt and the earlier turns it was read with
        print(f"prompt:   {shown_text(answer['prompt'])}")
        for turn in answer["turns"]:
            print(f"turn:     {shown_text(turn)}")
    print("settings: " + ", ".join(f"retrieval.{k}={v}" for k, v in settings.items()))
    for path, why in sorted(answer["refused"].items()):
        print(f"refused:  {shown_path(path)}: {why}")
    print(f"semantic: {answer['semantic']}")
    kind = CATEGORY_FOLDER.get(intent or "")
    if intent:
        asked = f" (the prompt asks for this kind: only {kind}/ is considered)" if kind else EXPLAIN_INTENT.get(intent, "")
        print(f"intent:   {intent}{asked}")
    if file is not None and not cfg["retrieval.tool_anchors"]:
        print("hook:     off (retrieval.tool_anchors is false): this is what it would add if turned on")
    if not considered and file is not None:
        print(f"nothing considered: no active memory's related_files name {file} (or more than "
              f"{FILE_ANCHOR_MAX} do), or file anchors are off")
    elif not considered:
        why = f"no memory in {kind}/ shares the prompt's topic words" if kind else (
            "no memory shares the prompt's words, or the prompt is too short, or injection is off")
        print("nothing considered: " + why)
    for d in sorted(considered, key=lambda d: (not d["kept"], -(d["probability"] or 0.0), -d["score"])):
        cov = "-" if d["coverage"] is None else f"{d['coverage']:.2f}"
        score = "      -" if file is not None else f"{d['score']:7.3f}"  # rule 10 ranks by coverage alone
        prob = "" if d["probability"] is None else f"P {d['probability']:.2f}  "
        print(f"{'INJECT' if d['kept'] else 'drop  '}  {prob}score {score}  coverage {cov:>4}  {d['path']}\n        {d['rule']}")
        if d.get("source"):
            print(f"        source: {format_source(d['source'])}")
        if d["kept"] and answer["notes"].get(d["path"]):
            print(f"        note: ({answer['notes'][d['path']]})")
        if d.get("use"):
            print(f"        use: shown {d['use']['shown']}, opened {d['use']['opened']} (your sessions)")
    print(f"injected: {len(answer['injected'])}")
    return 0


class HookInput(argparse.Action):
    """`--hook-input FILE` ('-' for stdin): the JSON payload Claude Code sends the hook, read
    and checked while the arguments are parsed, so that the root is looked for from its
    `cwd` as the hook looks for it (`--root` wins: `root_hint`, memindex/cli/main.py)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, name: object,
                 option: str | None = None) -> None:
        import json
        import sys

        from ..defaults import HOOK_MAX_STDIN

        where = "stdin" if name == "-" else str(name)
        try:
            if name == "-":
                raw = sys.stdin.buffer.read(HOOK_MAX_STDIN + 1)
            else:
                with open(str(name), "rb") as fh:
                    raw = fh.read(HOOK_MAX_STDIN + 1)
        except OSError as exc:
            raise argparse.ArgumentError(self, f"{where}: {exc.strerror or exc}") from None
        if len(raw) > HOOK_MAX_STDIN:
            raise argparse.ArgumentError(self, f"{where}: over {HOOK_MAX_STDIN} bytes, more than the hook reads")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise argparse.ArgumentError(self, f"{where}: not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise argparse.ArgumentError(self, f"{where}: not a JSON object")
        from ..policy.door import PromptInput

        try:
            PromptInput.from_hook(data)
        except ValueError as exc:
            raise argparse.ArgumentError(self, f"{where}: {exc}") from None
        setattr(namespace, self.dest, data)
        cwd = data.get("cwd")
        if isinstance(cwd, str) and cwd and "\x00" not in cwd:
            namespace.root_hint = cwd


def shown_text(text: str, limit: int = 160) -> str:
    """A prompt or turn on one line of the terminal: escaped, bounded."""
    from ..text.words import sanitize_title

    return sanitize_title(text, limit=limit)


def format_source(src: dict[str, str]) -> str:
    """`kind path # section (session ID)`: where an imported or captured memory came from."""
    text = f"{src.get('kind', '?')} {src.get('path', '?')}"
    if src.get("section"):
        text += f" # {src['section']}"
    if src.get("session_id"):
        text += f" (session {src['session_id']})"
    return text
