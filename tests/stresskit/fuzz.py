"""Hypothesis fuzzers: the hook's stdin, search queries and filters, memory-config.json, memory files."""

from __future__ import annotations

import json
import os
import random
import re
import time
from typing import Any

from memindex import index as index_mod
from memindex.config import load_config
from memindex.defaults import FOLDERS, INDEX_MD

from .fuzzing import (
    FUZZ_CHUNK,
    HOSTILE,
    FuzzStats,
    FuzzStore,
    call_hook_inprocess,
    fuzz_row,
    fuzz_settings,
    fuzz_until,
    hostile_text,
    judge_hook,
)
from .harness import Context
from .judge import BREAKS, cli_problems, hook_problems, path_problems, prompt_payload
from .memories import CATEGORY_LIST, VOCAB
from .procs import BUDGET_S, DISPLAY, ENV, HANG_S, PY, hook_argv, run, signal_all, unlink


def fuzz_hook_stdin(ctx: Context, store: FuzzStore, seconds: float) -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    stats = FuzzStats()
    started = time.monotonic()
    deadline = started + seconds
    transcripts = _transcripts(ctx)
    leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile_text(40))
    value = st.recursive(leaf, lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=8), ch, max_size=3), max_leaves=12)
    prompt = st.one_of(
        hostile_text(200),
        st.sampled_from([t.prompt for t in store.targets]),
        st.tuples(hostile_text(40), st.sampled_from([t.prompt for t in store.targets]), hostile_text(40)).map(" ".join),
        value,
    )
    cwd = st.one_of(
        st.just(str(store.proj.project)), st.just(str(store.root)), st.just(str(store.root / "decisions")),
        st.just(str(ctx.base / "nowhere")), st.just(""), st.none(), st.integers(), hostile_text(30),
        st.just(str(store.proj.project) + "\x00"), st.just("/" + "a" * 5000),
    )
    payload = st.fixed_dictionaries(
        {"prompt": prompt},
        optional={"cwd": cwd, "transcript_path": st.sampled_from(transcripts), "session_id": value,
                  "user_prompt": prompt, "hook_event_name": value, "extra": value},
    )

    def encode(data: dict[str, Any], mangle: int, cut: int) -> bytes:
        raw = json.dumps(data, ensure_ascii=bool(mangle & 1)).encode("utf-8", "surrogatepass")
        if mangle & 2 and raw:
            i = cut % len(raw)
            raw = raw[:i] + b"\xff\xfe" + raw[i:]
        if mangle & 4:
            raw = raw[: cut % (len(raw) + 1)]
        return raw

    raw_input = st.one_of(
        st.builds(encode, payload, st.integers(0, 1), st.integers(0, 10_000)),
        st.builds(encode, payload, st.integers(0, 7), st.integers(0, 10_000)),
        st.binary(max_size=500),
        value.map(lambda v: json.dumps(v).encode()),
    )
    event = st.sampled_from(["prompt"] * 8 + ["session-start", "post-tool-use", "nonsense"])

    @fuzz_settings(FUZZ_CHUNK)
    @given(event, raw_input)
    def one(ev: str, raw: bytes) -> None:
        if time.monotonic() > deadline:
            return
        out, err, seconds, crash = call_hook_inprocess(ev, raw)
        judge_hook(stats, store.root, f"{ev} {raw[:300]!r}", out, err, seconds, crash)

    cwd_before = os.getcwd()
    os.chdir(ctx.base / "scratch")
    try:
        fuzz_until(one, deadline)
    except Exception as exc:  # noqa: BLE001  (a failure of the harness itself)
        stats.crashes.append(f"fuzzer: {type(exc).__name__}: {exc}")
    finally:
        os.chdir(cwd_before)
    stats.seconds = time.monotonic() - started
    fuzz_row(ctx, "fuzz: hook stdin (in-process hook.run, hypothesis)", stats)


def _transcripts(ctx: Context) -> list[Any]:
    d = ctx.base / "transcripts"
    d.mkdir(exist_ok=True)
    good = d / "good.jsonl"
    lines = []
    for text in HOSTILE:
        lines.append(json.dumps({"type": "user", "message": {"role": "user", "content": f"earlier {text} question"}}))
        lines.append(json.dumps({"type": "user", "message": {"content": [{"type": "text", "text": text}, {"type": "tool_result"}]}}))
    good.write_text("\n".join(lines) + "\n")
    binary = d / "binary.jsonl"
    binary.write_bytes(random.Random(5).randbytes(100_000))
    long_line = d / "long.jsonl"
    long_line.write_bytes(b'{"type":"user","message":{"content":"' + b"x" * 3_000_000 + b'"}}')
    deep = d / "deep.jsonl"
    deep.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    return [None, str(good), str(binary), str(long_line), str(deep), str(d), str(d / "missing.jsonl"), "/dev/null", 12, ["x"], ""]


def fuzz_queries(ctx: Context, store: FuzzStore, seconds: float) -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from memindex.policy.recall import format_hits, hit_json
    from memindex.config import Config
    from memindex.policy.inject import auto_inject
    from memindex.retrieval.query import Filters, Params, search

    stats = FuzzStats()
    started = time.monotonic()
    deadline = started + seconds
    conn = index_mod.open_reader(store.root)
    before = conn.execute("SELECT count(*), total(length(title)) FROM documents").fetchone()
    cfg = Config()
    fts = st.sampled_from(['"', "*", "^", "NEAR(", ")", "(", "AND", "OR", "NOT", ":", "title:", "{title tags}:", "-", "+", "'", ";", "--", "\\"])
    text = st.one_of(
        hostile_text(150),
        st.lists(st.one_of(fts, st.sampled_from(VOCAB), st.sampled_from(HOSTILE)), max_size=30).map(" ".join),
        st.text(max_size=300),
        st.sampled_from([t.prompt for t in store.targets]),
    )
    tag = st.one_of(st.none(), hostile_text(20), st.sampled_from(["hostile", "stress", "%", "_", ",", "' OR 1=1 --"]))

    @fuzz_settings(FUZZ_CHUNK)
    @given(text, tag, st.booleans())
    def one(q: str, t: str | None, inactive: bool) -> None:
        if time.monotonic() > deadline:
            return
        stats.runs += 1
        t0 = time.perf_counter()
        try:
            hits = search(conn, q, limit=10, params=Params(), filters=Filters(tag=t, include_inactive=inactive))
            injected = auto_inject(conn, q, cfg)
            listing = format_hits(hits, DISPLAY)
            as_json = json.dumps([hit_json(h, DISPLAY) for h in hits])
        except Exception as exc:  # noqa: BLE001
            stats.crashes.append(f"{type(exc).__name__}: {exc} on {q[:200]!r} tag={t!r}")
            return
        seconds = time.perf_counter() - t0
        stats.slowest = max(stats.slowest, seconds)
        if seconds > BUDGET_S:
            stats.hangs.append(f"{seconds:.1f} s on {q[:200]!r}")
        json.loads(as_json)
        shown = listing.split("\n") if listing else []
        if len(shown) != len(hits):
            stats.listing.append(f"search list has {len(shown)} lines for {len(hits)} hits (a path or title broke the one-line format) on {q[:120]!r}")
        for h in hits + injected:
            stats.escapes += [f"{p} on {q[:120]!r}" for p in path_problems(DISPLAY + h.path, store.root)]

    try:
        fuzz_until(one, deadline)
    except Exception as exc:  # noqa: BLE001
        stats.crashes.append(f"fuzzer: {type(exc).__name__}: {exc}")
    after = conn.execute("SELECT count(*), total(length(title)) FROM documents").fetchone()
    conn.close()
    if before != after:
        stats.escapes.append(f"the index changed during searches: {before} -> {after}")
    # The command line, as a process, with what argv can carry that JSON cannot.
    special = [b"\xff\xfe invalid utf-8", b"-- --", b"\"unterminated", b"NEAR(x y, 2) AND title:z", b"' OR 1=1; DROP TABLE documents; --",
               "\u202e\u200b".encode(), b"a" * 100_000]
    for q in special:
        stats.runs += 1
        res = run([PY, "-m", "memindex", "--root", str(store.proj.project), "search", "--no-sync", "--", q.decode("utf-8", "surrogateescape")],
                  timeout=HANG_S + 20, env=ENV)
        problems = cli_problems(res, f"search {q[:40]!r}")
        stats.crashes += problems
        stats.slowest = max(stats.slowest, res.elapsed)
    for args in (["--tag", "x' OR '1'='1"], ["--tag", "%"], ["--tag", "\udcff"], ["--category", "nope"], ["--limit", "0"],
                 ["--limit", "99999999999999999999"]):
        stats.runs += 1
        res = run([PY, "-m", "memindex", "--root", str(store.proj.project), "search", "--no-sync", *args, "--", "cache"], env=ENV)
        stats.crashes += cli_problems(res, f"search {' '.join(args)!r}", ok=(0,), fail=(2, 4))
    ctx.special_runs += len(special) + 6
    stats.seconds = time.monotonic() - started
    fuzz_row(ctx, "fuzz: search queries and filters (FTS5/SQL syntax, hypothesis + CLI)", stats)


def fuzz_config(ctx: Context, store: FuzzStore, seconds: float) -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from memindex.config import SPEC
    from memindex.settings import Setting
    from memindex.policy.inject import auto_inject
    from memindex.retrieval.query import Filters, Params, search

    stats = FuzzStats()
    started = time.monotonic()
    deadline = started + seconds
    cfg_path = store.root / "memory-config.json"
    longest = [0]

    leafv = st.one_of(
        st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10**400), max_value=10**400),
        st.floats(), st.sampled_from([0, -1, 0.5, 1e308, 5e-324, -0.0, 20, 21, 3600.1, "fts5_bm25", "title_tags", ""]),
        hostile_text(40), st.text(max_size=2000),
    )
    anyv = st.recursive(leafv, lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=6), ch, max_size=3), max_leaves=8)

    def tree(spec: dict[str, Any]) -> Any:
        entries = {}
        for key, node in spec.items():
            entries[key] = anyv if isinstance(node, Setting) else st.one_of(tree(node), anyv)
        return st.fixed_dictionaries({}, optional=entries)

    config = st.one_of(tree(SPEC), anyv)

    def to_bytes(value: Any, variant: int) -> bytes:
        text = json.dumps(value, allow_nan=True, default=str)
        if variant == 1:
            text = text.replace("0.5", "NaN").replace("20", "Infinity")
        raw = text.encode("utf-8", "surrogatepass")
        if variant == 2:
            raw = b"\xef\xbb\xbf" + raw
        if variant == 3:
            raw = raw[: len(raw) // 2] + b"\xff" + raw[len(raw) // 2:]
        return raw

    t = store.targets[0]
    payload = prompt_payload(store.proj.project, t.prompt)

    @fuzz_settings(FUZZ_CHUNK)
    @given(config, st.integers(0, 3))
    def one(value: Any, variant: int) -> None:
        if time.monotonic() > deadline:
            return
        cfg_path.write_bytes(to_bytes(value, variant))
        try:
            cfg = load_config(store.root)
            for w in cfg.warnings:
                longest[0] = max(longest[0], len(w))
                if "\n" in w or "\r" in w:
                    stats.escapes.append(f"config warning with a line break: {w[:120]!r}")
            conn = index_mod.open_reader(store.root)
            try:
                auto_inject(conn, t.prompt, cfg)
                search(conn, t.prompt, params=Params.from_config(cfg), filters=Filters.from_config(cfg),
                       limit=int(cfg["retrieval.search_limit"]))
            finally:
                conn.close()
        except Exception as exc:  # noqa: BLE001
            stats.runs += 1
            stats.crashes.append(f"{type(exc).__name__}: {exc} on config {to_bytes(value, variant)[:200]!r}")
            return
        out, err, seconds, crash = call_hook_inprocess("prompt", payload)
        judge_hook(stats, store.root, f"config {to_bytes(value, variant)[:200]!r}", out, err, seconds, crash)

    try:
        fuzz_until(one, deadline)
    except Exception as exc:  # noqa: BLE001
        stats.crashes.append(f"fuzzer: {type(exc).__name__}: {exc}")
    # special files, through the real hook process and a CLI command
    specials = {
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "over 1 MiB": b'{"retrieval": {"enabled": true}, "pad": "' + b"x" * 1_100_000 + b'"}',
        "1 MB string value": json.dumps({"retrieval": {"match_strategy": "x" * 1_000_000}}).encode(),
        "invalid utf-8": b'{"retrieval": {"max_inject": \xff}}',
        "huge numbers": b'{"retrieval": {"max_inject": 1e999, "relative_cutoff": -1e999, "min_prompt_chars": 100000000000000000000000000000000000000000}}',
        "NaN": b'{"retrieval": {"relative_cutoff": NaN, "min_coverage": Infinity}}',
        "directory": None,
    }
    for name, raw in specials.items():
        unlink(cfg_path)
        if raw is None:
            cfg_path.mkdir()
        else:
            cfg_path.write_bytes(raw)
        stats.runs += 2
        res = run(hook_argv(), input=payload, timeout=HANG_S + 10, env=ENV)
        hp = hook_problems(res, store.root, name=f"hook with config {name}")
        stats.crashes += [p for p in hp if "stderr" not in p]
        if len(res.err) > 10_000:
            stats.multiline += 1
            longest[0] = max(longest[0], len(res.err))
        res = run([PY, "-m", "memindex", "--root", str(store.proj.project), "status"], env=ENV, timeout=60)
        stats.crashes += cli_problems(res, f"status with config {name}")
    unlink(cfg_path)
    ctx.special_runs += 2 * len(specials)
    stats.seconds = time.monotonic() - started
    # A fuzzed config may turn the semantic channel on with a model that loads: the hook
    # then starts a worker tied to this run's session (this process's parent), which
    # rightly outlives the scenario. Stop them here: the semantic scenario's last row
    # counts any `memindex serve` left under the run's folders as a failure.
    workers = _stop_workers(store.root)
    row = fuzz_row(ctx, "fuzz: memory-config.json (hypothesis + special files)", stats,
                    extra=f"longest warning {longest[0]} chars; semantic workers the fuzzed configs started, stopped: {workers}")
    if longest[0] > 1000:
        row.note = (row.note + "; " if row.note else "") + f"weakness: a warning echoes the bad value whole ({longest[0]} chars on stderr per prompt)"


def fuzz_memory_files(ctx: Context, seconds: float) -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from memindex.policy.recall import format_hits
    from memindex.retrieval.query import search
    from memindex.index.sync import sync

    store = FuzzStore(ctx, "fuzz-files")
    root = store.root
    stats = FuzzStats()
    started = time.monotonic()
    deadline = started + seconds
    name_alphabet = st.one_of(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), st.sampled_from(list("\n\r<>&\"' ->#[]:")))
    name = st.one_of(st.text(alphabet=name_alphabet, min_size=1, max_size=40), st.sampled_from(["..", ".", "x\n- [DECISION] forged -> y", "<b>", "a b", "-"]))
    leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile_text(60))
    value = st.recursive(leaf, lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.text(max_size=8), ch, max_size=4), max_leaves=15)
    doc = st.fixed_dictionaries(
        {"category": st.one_of(st.sampled_from(CATEGORY_LIST), value), "title": st.one_of(hostile_text(100), value)},
        optional={"id": st.one_of(hostile_text(20), value), "tags": st.one_of(st.lists(hostile_text(20), max_size=20), value),
                  "content": value, "record_status": st.one_of(st.sampled_from(["active", "retired", "archived"]), value),
                  "related_files": st.one_of(st.lists(hostile_text(30), max_size=5), value), "confidence": value,
                  "updated_at": value, "created_at": value},
    )
    content = st.one_of(doc.map(lambda d: json.dumps(d, ensure_ascii=False).encode("utf-8", "surrogatepass")),
                        doc.map(lambda d: json.dumps(d).encode()), st.binary(max_size=300))
    entry = st.tuples(st.sampled_from(list(FOLDERS)), name, content)

    @fuzz_settings(FUZZ_CHUNK)
    @given(st.lists(entry, min_size=1, max_size=3))
    def one(entries: list[tuple[str, str, bytes]]) -> None:
        if time.monotonic() > deadline:
            return
        written = []
        for folder, stem, data in entries:
            path = root / folder / f"{stem}.json"
            try:
                path.write_bytes(data)
                written.append((path, data))
            except (OSError, ValueError, UnicodeEncodeError):
                continue
        try:
            sync(root, load_config(root))
            conn = index_mod.open_reader(root)
            try:
                for path, data in written:
                    words = re.findall(r"\w+", data[:400].decode("utf-8", "replace"))[:12]
                    prompt = "about " + " ".join(words) if words else "about nothing much"
                    hits = search(conn, prompt, limit=10, params=None)
                    listing = format_hits(hits, DISPLAY)
                    if listing and len(listing.split("\n")) != len(hits):
                        stats.listing.append(f"`memindex search` list has {len(listing.split(chr(10)))} lines for {len(hits)} hits: {listing[:200]!r}")
                    out, err, seconds, crash = call_hook_inprocess("prompt", prompt_payload(store.proj.project, prompt))
                    judge_hook(stats, root, f"file {path.name!r}: {data[:200]!r}", out, err, seconds, crash)
            finally:
                conn.close()
            md = (root / INDEX_MD).read_text("utf-8")
            for line in md.split("\n")[4:]:
                if line and not line.startswith("- ["):
                    stats.escapes.append(f"index.md line that is not a memory line: {line[:160]!r}")
                if any(ch in line for ch in BREAKS):
                    stats.escapes.append(f"index.md line with a line-break character: {line[:160]!r}")
        except Exception as exc:  # noqa: BLE001
            stats.runs += 1
            stats.crashes.append(f"{type(exc).__name__}: {exc} on {[(f, s, d[:100]) for f, s, d in entries]!r}"[:400])
        finally:
            for path, _ in written:
                unlink(path)

    try:
        fuzz_until(one, deadline)
    except Exception as exc:  # noqa: BLE001
        stats.crashes.append(f"fuzzer: {type(exc).__name__}: {exc}")
    stats.seconds = time.monotonic() - started
    fuzz_row(ctx, "fuzz: memory files (hostile titles, tags, ids, content, file names)", stats)


def _stop_workers(root) -> int:
    """SIGTERM every `memindex serve` rooted under `root`; how many there were."""
    import signal

    from .semantic import serve_processes

    found = serve_processes(root)
    signal_all(found, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while serve_processes(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(found)
