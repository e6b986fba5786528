"""The one door a prompt goes through: what is injected for it, and why.

The prompt hook, the PreToolUse hook, `memindex explain` (and its `--hook-input`), the MCP
`explain` tool and the other clients' prompt hooks all call `decide_prompt` (or, for the
file at hand, `decide_file`) with a `PromptInput`, so that all of them see the same
context (the transcript's recent turns, what this session was shown, the semantic
worker's view), the same policy (`inject.decide`, `inject.on_file`) and the same staleness
notes. What only the hook does (its runtime memo, the use log, starting a worker) stays in
the hook: the outcome says what it needs for that.

On the hook's lean path: standard library and this package only, no dataclasses or typing.
"""

from __future__ import annotations

from ..defaults import DENSE_K, FILES_TAIL_BYTES

TYPE_CHECKING = False  # annotations only
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..config import Config
    from .inject import Outcome
    from .transcript import Session

# What became of the semantic worker (PromptOutcome.worker)
OFF, ASKED, ABSENT, UNUSABLE = "off", "asked", "absent", "unusable"


class PromptInput:
    """One prompt as a client hands it over: the prompt (None for a tool call: the user's
    latest prompt then comes from the session memo or the transcript), the transcript to
    read earlier turns and this session's injections from, the session's id, and for the
    PreToolUse hook the file about to be opened."""

    __slots__ = ("prompt", "transcript_path", "session_id", "file")

    def __init__(self, prompt: str | None, transcript_path: str | None = None, session_id: object = None,
                 file: str | None = None) -> None:
        self.prompt = prompt
        self.transcript_path = transcript_path if isinstance(transcript_path, str) and transcript_path else None
        self.session_id = session_id
        self.file = file

    @classmethod
    def from_hook(cls, data: dict) -> PromptInput:
        """The UserPromptSubmit (or PreToolUse) payload Claude Code sends; raises ValueError
        when it holds neither a prompt nor a file."""
        prompt = data.get("prompt")
        if not isinstance(prompt, str):
            prompt = data.get("user_prompt")
        tool_input = data.get("tool_input")
        file = tool_input.get("file_path") if isinstance(tool_input, dict) else None
        if not isinstance(file, str) or not file or "\x00" in file:
            file = None
        elif isinstance(data.get("cwd"), str):
            import os

            file = os.path.join(data["cwd"], file)  # (an absolute one stays as it is)
        if not isinstance(prompt, str):
            if file is None and not isinstance(tool_input, dict):
                raise ValueError("hook input has no prompt")
            prompt = None
        else:  # a lone surrogate escape is valid JSON, but no text to search, log or write
            from ..text.words import valid_unicode

            prompt = valid_unicode(prompt)
        return cls(prompt, data.get("transcript_path"), data.get("session_id"), file)


class PromptOutcome:
    """The policy's Outcome (hits and a Decision for each memory considered), the last
    review's notes on the hits, the context it was decided in, and for `explain` the files
    the index refused."""

    __slots__ = ("outcome", "hits", "notes", "prompt", "turns", "session", "prefix", "worker", "refused", "memo")

    def __init__(self, outcome: Outcome | None, prompt: str, prefix: str, turns: list[str] | None = None,
                 session: Session | None = None) -> None:
        self.outcome, self.prompt, self.prefix = outcome, prompt, prefix
        self.hits: list = []  # what to inject: the outcome's hits
        self.turns: list[str] = turns or []
        self.session = session
        self.notes: dict[str, str] = {}
        self.worker = OFF
        self.refused: dict[str, str] = {}
        self.memo: dict | None = None  # the session memo a tool call read (the file hook adds to it)


def prompt_context(prompt: str, inp: PromptInput, cfg: Config) -> tuple[list[str], Callable[[], Session | None]]:
    """The prompt's earlier user turns (when it needs them: a short or follow-up prompt),
    and the reader of this session's injections and files (when rules 5 or 9 read them;
    called once the worker was asked, so that it embeds meanwhile), from one bounded read
    of the transcript's tail; nothing is read without a transcript."""
    transcript = inp.transcript_path
    if transcript is None:
        return [], _no_session  # nothing to read: the transcript module is not even loaded
    from .prompt import needs_context

    want_turns = needs_context(prompt, cfg)
    want_session = bool(cfg["retrieval.skip_injected"] or cfg["retrieval.file_anchors"])
    if not (want_turns or want_session):
        return [], _no_session
    from .transcript import read_session, read_tail, recent_user_turns

    scan = cfg["retrieval.transcript_context.scan_bytes"]
    tail_bytes = cfg["retrieval.transcript_context.tail_bytes"]
    tail = read_tail(transcript, max(scan if want_session else 0, tail_bytes if want_turns else 0))
    turns: list[str] = []
    if want_turns:
        turns = recent_user_turns(transcript, max_turns=cfg["retrieval.transcript_context.max_turns"],
                                  tail_bytes=tail_bytes, skip=prompt, tail=tail)
    if not want_session:
        return turns, _no_session
    return turns, lambda: read_session(transcript, scan, FILES_TAIL_BYTES, tail)


def _no_session() -> None:
    return None


def decide_prompt(
    root: str, cfg: Config, inp: PromptInput, say: Callable[[str], None], *, budget_s: float | None = None,
    reader: Callable | None = None, also: Callable | None = None, explain: bool = False,
) -> PromptOutcome:
    """What the prompt hook injects for `inp`, and why: the context, the worker asked (within
    `budget_s`, the hook's semantic.hook_budget_ms by default), the index read
    (`index.reading.read_index`: as the hooks read it, or opened by `reader`), the policy, the
    staleness notes; `also(conn, answer)` runs on the same connection (explain's refusals).
    `explain`: decide even a prompt the hook would not look at."""
    from ..store.paths import display_prefix
    from .prompt import wants_injection

    prompt = inp.prompt or ""
    prefix = display_prefix(root)
    if not explain and not wants_injection(prompt, cfg):
        return PromptOutcome(None, prompt, prefix)
    turns, read_session = prompt_context(prompt, inp, cfg)
    answer = PromptOutcome(None, prompt, prefix, turns)
    dense = None
    if cfg["semantic.enabled"]:  # asked before the session is read: it embeds meanwhile
        dense = _ask_worker(root, prompt, turns, cfg, say, answer, cfg["semantic.hook_budget_ms"] / 1000.0
                            if budget_s is None else budget_s)
    answer.session = session = read_session()

    def use(conn) -> None:
        from .inject import decide

        answer.outcome = decide(conn, prompt, cfg, turns=turns, session=session, dense=dense, shown_prefix=prefix,
                                session_id=inp.session_id)
        if answer.outcome.hits:
            from .staleness import apply

            answer.notes = apply(conn, answer.outcome, cfg)  # the last review's words on them; the dead left out
        answer.hits = answer.outcome.hits
        if also is not None:
            also(conn, answer)

    from ..index.reading import read_index

    read_index(root, cfg, say, use, reader=reader)
    return answer


def decide_file(
    root: str, cfg: Config, inp: PromptInput, say: Callable[[str], None], *, reader: Callable | None = None,
    also: Callable | None = None, explain: bool = False,
) -> PromptOutcome:
    """What the PreToolUse hook adds when the assistant is about to open `inp.file`: the
    memories anchored to it that fit the user's latest prompt (`inp.prompt`, else the
    session memo's, else the transcript's last user turn) and that this session was not
    shown. `reader`, `also` as for `decide_prompt`; `explain`: decide even when the hook is
    off (retrieval.tool_anchors)."""
    import os

    from ..store.paths import display_prefix, inside

    prefix = display_prefix(root)
    file = inp.file or ""
    empty = PromptOutcome(None, inp.prompt or "", prefix)
    if not explain:
        if not file or inside(os.path.abspath(file), os.path.abspath(root)):
            return empty  # a memory file: the write path's business, not a file at hand
        if not (cfg["retrieval.enabled"] and cfg["retrieval.tool_anchors"] and cfg["retrieval.file_anchors"]):
            return empty
    from .. import runtime as memo
    from .transcript import Session, read_session, read_tail, recent_user_turns

    left = memo.recall(inp.session_id) if inp.prompt is None else None
    transcript = inp.transcript_path
    scan = cfg["retrieval.transcript_context.scan_bytes"] if cfg["retrieval.skip_injected"] else 0
    tail_bytes = cfg["retrieval.transcript_context.tail_bytes"]
    known = inp.prompt is not None or left is not None  # the prompt is known: turns are not read
    need = scan if known else max(scan, tail_bytes)
    tail = read_tail(transcript, need) if transcript and need else None
    if inp.prompt is not None:
        prompt, turns = inp.prompt, []
    elif left is not None:
        prompt, turns = left["prompt"], left["turns"]
    else:
        turns = recent_user_turns(transcript, cfg["retrieval.transcript_context.max_turns"] + 1, tail_bytes, tail=tail) \
            if transcript else []
        if not turns:
            return empty  # no prompt to fit the memories to
        prompt, turns = turns[-1], turns[:-1]
    session = read_session(transcript, scan, 0, tail) if scan and transcript else Session()
    if scan and left is not None:
        for shown in left["shown"]:  # shown this turn: maybe not in the transcript yet
            session.injected[shown] = float("inf")
    answer = PromptOutcome(None, prompt, prefix, turns, session)
    answer.memo, answer.worker = left, OFF

    def use(conn) -> None:
        from .inject import on_file

        answer.outcome = on_file(conn, file, prompt, cfg, turns=turns, session=session, shown_prefix=prefix)
        answer.hits = answer.outcome.hits
        if also is not None:
            also(conn, answer)

    from ..index.reading import read_index

    read_index(root, cfg, say, use, reader=reader, build=False, refresh=False)
    return answer


def _ask_worker(root: str, prompt: str, turns: list[str], cfg: Config, say: Callable[[str], None], answer: PromptOutcome,
                budget_s: float):
    """Send the prompt to the resident worker now; returns the callable that collects its
    answer for the lexical candidates, or None when there is no worker to ask (then
    `answer.worker` says ABSENT: the hook starts one for the next prompt; or UNUSABLE)."""
    from ..semantic import client
    from .prompt import dense_text

    pending = client.begin(root, dense_text(prompt, turns, cfg), k=DENSE_K, budget_s=budget_s)
    if pending is None:  # silent, as without the semantic channel; only a hostile socket folder is said
        answer.worker = ABSENT if client.last_failure == "absent" else UNUSABLE
        if client.last_failure == "unsafe":
            say(f"semantic worker not used: {client.runtime_dir()} is not a private folder of this user")
        return None
    answer.worker = ASKED

    def collect(rowids: list[int]):
        from .inject import worker_view  # loaded by then: the policy is the caller

        return worker_view(pending)(rowids)

    return collect
