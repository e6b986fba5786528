"""The package's shape, checked from its source: data flows one way
(files -> sync -> index -> query -> inject -> hook / CLI), nothing imports the CLI, no
import cycles, and the prompt hook's import closure stays on an explicit allow-list.

Imports are read with `ast`, lazy ones inside functions included: a cycle or a heavy
import hidden in a function still runs on some path.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memindex"

# What the prompt hook may load (it runs `python3 -I -S`: standard library and these).
HOOK_ALLOWED = {
    "memindex", "memindex.defaults", "memindex.errors", "memindex.lean", "memindex.config", "memindex.settings", "memindex.trust",
    "memindex.runtime", "memindex.usage", "memindex.background",
    "memindex.text", "memindex.text.words", "memindex.text.cjk", "memindex.text.render",
    "memindex.text.identifiers",  # through index.rows, the writer side the index package loads only for writers
    "memindex.store", "memindex.store.paths", "memindex.store.rootfs", "memindex.store.marker", "memindex.store.ids",
    "memindex.store.stamps",
    "memindex.index", "memindex.index.db", "memindex.index.schema", "memindex.index.rows", "memindex.index.reads", "memindex.index.vectors",
    "memindex.index.fresh", "memindex.index.freshen", "memindex.index.reading", "memindex.index.health", "memindex.index.provenance",
    "memindex.retrieval", "memindex.retrieval.query", "memindex.retrieval.hits",
    "memindex.retrieval.cjk_search", "memindex.retrieval.related", "memindex.semantic", "memindex.semantic.client",
    "memindex.relevance", "memindex.relevance.explain", "memindex.policy", "memindex.policy.door", "memindex.policy.inject",
    "memindex.policy.prompt", "memindex.policy.transcript", "memindex.policy.dense", "memindex.policy.staleness",
    "memindex.capture", "memindex.capture.triage", "memindex.capture.turn", "memindex.capture.asked",
    "memindex.capture.schedule", "memindex.capture.score", "memindex.capture.sentences", "memindex.capture.prompts",
    "memindex.hook", "memindex.hook.__main__", "memindex.hook.file", "memindex.hook.session",
    "memindex.hook.clients", "memindex.review", "memindex.review.pending", "memindex.review.acks", "memindex.lazy",
}
# The flow, bottom to top (../shared/design/layout.md): files -> index -> retrieval -> policy
# -> adapters. A package (or top-level module) imports only from its own layer and those
# below it, never from an adapter; adapters never import each other.
LAYERS: list[set[str]] = [
    {"memindex", "defaults", "errors", "lean", "lazy"},  # leaves
    {"text"},  # words, CJK bigrams, the line format: used to index and to answer
    {"store"},  # the memory files, the root, markers, secrets in a memory's text
    {"runtime"}, {"usage"}, {"trust"}, {"settings", "config"}, {"background"},  # this user's folders; the settings table, read once; detached jobs
    {"index"},  # the derived index: its only writer (sync), readers, freshness, provenance
    {"retrieval"},  # ranking: query, CJK search
    {"semantic"},  # the optional dense channel and its worker
    {"watch"},
    {"write"},  # save, update, retire
    {"relevance"}, {"policy"},  # what the assistant is shown; recall for every adapter
    {"importers"}, {"capture"},  # what fills the store
    {"review"},  # what keeps it true: stale, conflicting, duplicate, unused memories; the actions
    {"catalog"},  # the store as a person browses it: listings, one memory whole, what was shown, figures
    {"doctor"},  # the report across every layer
    {"hook", "mcp", "cli", "ui", "__main__"},  # adapters (`python -m memindex` is the CLI's other door)
]
ADAPTERS = {"hook", "mcp", "cli", "ui"}  # __main__ is the CLI
# Imports against the flow, each with its reason.
UPWARD_ALLOWED: dict[tuple[str, str], str] = {
    ("memindex.index.sync", "memindex.semantic.vectors"): "the one writer embeds the rows it just wrote (lazily, when the worker's model is enabled)",
    ("memindex.cli.mcp", "memindex.mcp.server"): "`memindex mcp` starts the MCP server by name",
    ("memindex.cli.ui", "memindex.ui.server"): "`memindex ui` starts the local web page by name",
}
MAX_LINES = 450
# Modules allowed past MAX_LINES, each with the reason it must stay one piece.
LONG_MODULES: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level:
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([target] if target else []))
    return target or ""


def _runtime_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:` (imports for annotations only)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", getattr(child.test, "attr", "")) == "TYPE_CHECKING":
                todo.extend(child.orelse)
                continue
            todo.append(child)


def imports_of(module: str) -> set[str]:
    """memindex modules (and outside top-level names) that `module` imports anywhere."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {name for name in found if name}


GRAPH = {m: {i for i in imports_of(m) if i in MODULES and i != "memindex" and i != m} for m in MODULES}


def test_no_module_outside_the_cli_imports_it() -> None:
    """`python -m memindex` (memindex/__main__.py) is the CLI's other door."""
    offenders = sorted(
        f"{m} imports {i}" for m, deps in GRAPH.items() if not m.startswith("memindex.cli") and m != "memindex.__main__"
        for i in deps if i == "memindex.cli" or i.startswith("memindex.cli.")
    )
    assert offenders == []


def test_only_the_cli_starts_the_web_page() -> None:
    """memindex/ui is an adapter nobody imports: `memindex ui` (cli/ui.py) starts it; the
    hooks, the MCP server and the library never load Starlette or Jinja2."""
    offenders = sorted(
        f"{m} imports {i}" for m, deps in GRAPH.items() if not m.startswith("memindex.ui") and m != "memindex.cli.ui"
        for i in deps if i == "memindex.ui" or i.startswith("memindex.ui.")
    )
    assert offenders == []
    outside = {i for m in MODULES if not m.startswith("memindex.ui") for i in imports_of(m)}
    assert not outside & {"starlette", "uvicorn", "jinja2", "markupsafe"}


def test_no_product_module_imports_the_evaluation_tools() -> None:
    """The development package (memindex_dev: evaluation, the stand-in embedder) is not in the
    wheel: the runtime names it in one import only, the stand-in's, which runs only when the
    environment allows it (locate.standin; tests/test_wheel.py checks that a config cannot)."""
    offenders = sorted(
        f"{m} imports {i}" for m in MODULES for i in imports_of(m) if i == "memindex_dev" or i.startswith("memindex_dev.")
        if (m, i) != ("memindex.semantic.model", "memindex_dev.standin")
    )
    assert offenders == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles() -> None:
    assert _cycles(GRAPH) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _closure(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        if m in MODULES:
            todo.extend(imports_of(m))
            # importing memindex.a.b runs memindex/a/__init__.py first
            parent = m.rsplit(".", 1)[0]
            if parent != m and parent in MODULES:
                todo.append(parent)
    return seen


def test_the_hook_imports_only_the_standard_library_and_its_allow_list() -> None:
    """Every event's module (the package dispatches to them by name, which the import
    reader cannot see) and all they import."""
    closure = set().union(*(_closure(m) for m in MODULES if m == "memindex.hook" or m.startswith("memindex.hook.")))
    assert "memindex.policy.inject" in closure  # the prompt handler's closure was followed
    ours = {m for m in closure if m.split(".")[0] == "memindex"}
    outside = {m.split(".")[0] for m in closure - ours}
    assert ours <= HOOK_ALLOWED, sorted(ours - HOOK_ALLOWED)
    assert outside <= set(sys.stdlib_module_names), sorted(outside - set(sys.stdlib_module_names))


def _layer(module: str) -> int:
    part = module.split(".")[1] if "." in module else module
    return next(n for n, layer in enumerate(LAYERS) if part in layer)


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if not any((m.split(".")[1] if "." in m else m) in layer for layer in LAYERS)] == []


def test_imports_follow_the_flow() -> None:
    """Nothing imports upward, and no adapter imports another (the prompt path reads top to
    bottom: hook -> policy -> retrieval -> index -> store)."""
    offenders = []
    for m, deps in GRAPH.items():
        for d in deps:
            if (m, d) in UPWARD_ALLOWED:
                continue
            a, b = _layer(m), _layer(d)
            part_m, part_d = (x.split(".")[1] if "." in x else x for x in (m, d))
            if b > a or (part_m in ADAPTERS and part_d in ADAPTERS and part_m != part_d):
                offenders.append(f"{m} -> {d}")
    assert sorted(offenders) == []


def test_the_flow_check_finds_an_upward_import() -> None:
    assert _layer("memindex.store.files") < _layer("memindex.index.db") < _layer("memindex.policy.inject") < _layer("memindex.hook")


def test_modules_stay_small() -> None:
    long = {
        m: n for m, path in MODULES.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES and m not in LONG_MODULES
    }
    assert long == {}


@pytest.mark.parametrize("module", ["memindex.cli.search", "memindex.cli.status", "memindex.hook"])
def test_import_graph_sees_lazy_imports(module: str) -> None:
    """The reader is not blind: imports inside functions count."""
    assert any(dep.startswith("memindex.") for dep in GRAPH[module])


# Files are opened through `memindex.store.rootfs` (no link followed, no FIFO or device waited
# on, only this user's regular files, reads bounded): a memory root is untrusted input
# (docs/reliability.md, threat model). These open files by other means, each for a reason.
# Keys are a module, or a module and a function in it ("memindex.store.atomic.write_temp").
OPEN_ALLOWED: dict[str, str] = {
    "memindex.store.rootfs": "the helper itself",
    "memindex.store.files.read_bytes": "memory files: O_NOFOLLOW|O_NONBLOCK, a link followed only when it stays inside the root, "
    "regular-file and size checks on the descriptor",
    "memindex.store.documents.read_text": "the project's registered documents: the link-resolved path, only inside the "
    "project, O_NOFOLLOW|O_NONBLOCK, regular-file, owner and size checks on the descriptor",
    "memindex.store.documents.read_head": "the first bytes of a file `memindex init` looks at: O_NOFOLLOW|O_NONBLOCK, "
    "regular files only, bounded",
    "memindex.store.atomic.write_temp": "new temp files: O_CREAT|O_EXCL|O_NOFOLLOW under a random name, never an existing file",
    "memindex.store.atomic.fsync_dir": "a folder opened with O_DIRECTORY to fsync it; no file's contents",
    "memindex.policy.transcript": "Claude Code's transcript, outside the root (non-blocking, regular files only, bounded tail)",
    "memindex.capture.parse": "Claude Code's transcript, outside the root (non-blocking, regular files only, bounded)",
    "memindex.cli.write": "the user's own --file input",
    "memindex.cli.search.HookInput": "the user's own --hook-input file (a hook's payload)",
    "memindex.cli.candidate": "the user's own --new-info-file input",
    "memindex.store.scaffold": "package data, and .claude/settings.json outside the memory root that `init` edits",
    "memindex.policy.prompt": "package data (data/intents.json)",
    "memindex.text.render._unsafe_table": "package data (data/unsafe_chars.json)",
    "memindex.store.secrets": "package data (data/secret_patterns.json)",
    "memindex.config._read_user": "the user's own config (~/.config/memindex), outside every root; a dotfiles link is fine",
    "memindex.trust": "the user's trust record (~/.local/state/memindex), outside every root",
    "memindex.review.acks": "the user's review acknowledgments (~/.local/state/memindex/review), outside every root",
    "memindex.review.names._data": "package data (data/review.json)",
    "memindex.review.cache": "the review's per-user caches (~/.local/state/memindex/review), outside every root",
    "memindex.review.stale._lines": "a tracked file of the project, to count its lines (read-only, bounded)",
    "memindex.capture.triage.data": "package data (data/triage.json)",
    "memindex.capture.score.model": "package data (data/triage_model.json, the triage scorer's weights)",
    "memindex.relevance": "package data (data/relevance.json, the relevance model's weights)",
    "memindex.hook._settle_streams": "os.devnull in place of a standard stream that cannot be flushed",
    "memindex.watch.mounts.read_mounts": "/proc/self/mountinfo, the kernel's mount table",
    "memindex.semantic.locate": "embedding model files (a local folder or the model cache), outside the root",
    "memindex.semantic.download": "its failure marker in memindex's cache folder, outside the root",
    "memindex.semantic.model": "the model folder's JSON settings, outside the root (locate found the folder)",
    "memindex.semantic.client.proc_stat": "/proc/PID/stat of the resident worker",
    "memindex.semantic.process": "/proc/self of this process (its memory use)",
}
_OPEN_NAMES = {"open", "read_text", "read_bytes", "write_text", "write_bytes"}


def open_calls(module: str) -> list[tuple[str, int, str]]:
    """(where, line, call) of every builtin `open(`, `os.open(`, `io.open(` and
    `x.open/read_text/read_bytes/write_text/write_bytes(` in a module, with `where` the
    module and enclosing function names (`memindex.store.atomic.write_temp`)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = [*scope, child.name]
            if isinstance(child, ast.Call):
                func = child.func
                name = None
                if isinstance(func, ast.Name) and func.id == "open":
                    name = "open"
                elif isinstance(func, ast.Attribute) and func.attr in _OPEN_NAMES:
                    owner = func.value.id if isinstance(func.value, ast.Name) else "..."
                    name = f"{owner}.{func.attr}"
                if name is not None:
                    found.append((".".join([module, *scope]), child.lineno, name))
            visit(child, inner)

    visit(tree, [])
    return found


def _allowed(where: str) -> bool:
    return any(where == key or where.startswith(key + ".") for key in OPEN_ALLOWED)


def test_files_are_opened_through_rootfs_or_an_allow_listed_reason() -> None:
    offenders = sorted(
        f"{where}:{line}: {call}(" for module in MODULES for where, line, call in open_calls(module) if not _allowed(where)
    )
    assert offenders == [], "open files through memindex.store.rootfs (or add a reason to OPEN_ALLOWED): " + ", ".join(offenders)


def test_the_open_check_sees_every_kind_of_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = (
        "import os\nfrom pathlib import Path\n"
        "def f(p):\n    open(p)\n    os.open(p, 0)\n    Path(p).read_text()\n"
        "class C:\n    def g(self, p):\n        p.write_bytes(b'')\n        os.fdopen(3)\n"
    )
    (tmp_path / "probe.py").write_text(source)
    monkeypatch.setitem(MODULES, "memindex.probe", tmp_path / "probe.py")
    assert [(w, c) for w, _, c in open_calls("memindex.probe")] == [
        ("memindex.probe.f", "open"), ("memindex.probe.f", "os.open"), ("memindex.probe.f", "....read_text"),
        ("memindex.probe.C.g", "p.write_bytes"),
    ]


# --- the prompt path's trip, and one door per action ------------------------------------

# The trip's layers, top to bottom (a module's layer: its package under memindex/).
TRIP_LAYERS = {"hook": 5, "policy": 4, "relevance": 4, "retrieval": 3, "index": 2, "store": 1}
# Calls up a layer on the prompt path, each with its reason.
CLIMBS_ALLOWED = {
    ("memindex.index.reading", "memindex.policy.door", "use"):
        "read_index runs the door's decision on the connection it opened (and again after a rebuild)",
}

_TRACE = r"""
import json, sys
sys.path.insert(0, {repo!r})
calls = []
def profile(frame, event, arg):
    if event == "call":
        callee, back = frame.f_globals.get("__name__", ""), frame.f_back
        caller = back.f_globals.get("__name__", "") if back is not None else ""
        if callee != caller and callee.startswith("memindex") and caller.startswith("memindex"):
            calls.append((caller, callee, frame.f_code.co_name))
from memindex import hook
sys.setprofile(profile)
out = hook.run("prompt", sys.stdin.buffer.read())
sys.setprofile(None)
print(json.dumps({{"out": out, "calls": calls}}))
"""


def _trip_layer(module: str) -> int | None:
    return TRIP_LAYERS.get(module.split(".")[1]) if "." in module else None


@pytest.fixture(scope="module")
def prompt_trip(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str]]:
    """Every call from one memindex module into another during one injecting follow-up
    prompt, through the hook as Claude Code runs it (`python3 -I -S`): (caller, callee,
    function), in order."""
    import json
    import subprocess

    from memindex.config import Config
    from memindex_dev.evaluation.memory import write_transcript
    from memindex_dev.evaluation.sets import REPO, local_set
    from memindex.index.sync import sync

    tmp = tmp_path_factory.mktemp("trip")
    store = local_set("atlas", REPO / "evalsets" / "atlas", tmp)[0]
    sync(store.root, Config())
    q = next(q for q in store.queries if q["id"] == "a034")  # "ok whats the status on that, how far did we get"
    transcript = tmp / "t.jsonl"
    write_transcript(transcript, q["transcript"])
    payload = {"prompt": q["query"], "cwd": str(store.root.parent.parent), "transcript_path": str(transcript),
               "session_id": "trip"}
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", _TRACE.format(repo=str(REPO))],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    traced = json.loads(proc.stdout)
    assert "ios-no-offline-mode" in traced["out"]  # the path that injects, with the transcript's turn
    return [tuple(c) for c in traced["calls"]]


def test_the_prompt_path_never_climbs_back_up_a_layer(prompt_trip: list) -> None:
    """adapter -> policy -> retrieval -> index -> store: no call goes up a layer, but for
    the allow-listed callbacks."""
    climbs = sorted({c for c in prompt_trip if (a := _trip_layer(c[0])) is not None and (b := _trip_layer(c[1])) is not None
                     and b > a and c not in CLIMBS_ALLOWED})
    assert climbs == []


def test_the_hook_enters_each_layer_at_most_twice(prompt_trip: list) -> None:
    """The adapter's part of the trip: the policy entered through its door only (the input,
    the decision), no lower layer but the root's lookup; nothing decided in the hook."""
    from collections import Counter

    entered = Counter(_trip_layer(callee) for caller, callee, _ in prompt_trip
                      if caller.startswith("memindex.hook") and _trip_layer(callee) not in (None, TRIP_LAYERS["hook"]))
    assert max(entered.values()) <= 2, entered
    into_policy = sorted({(callee, name) for caller, callee, name in prompt_trip
                          if caller.startswith("memindex.hook") and _trip_layer(callee) == TRIP_LAYERS["policy"]})
    assert into_policy == [("memindex.policy.door", "decide_prompt"), ("memindex.policy.door", "from_hook")]
    assert not entered[TRIP_LAYERS["retrieval"]] and not entered[TRIP_LAYERS["index"]]


def test_the_trip_goes_down_in_order(prompt_trip: list) -> None:
    """Each layer is first entered after the one above it: adapter, policy, then the index
    is opened (index.reading), retrieval ranks, and the relevance model decides last."""
    first: dict[str, int] = {}
    for n, (_, callee, name) in enumerate(prompt_trip):
        first.setdefault(callee, n)
    assert first["memindex.policy.door"] < first["memindex.index.reading"] < first["memindex.policy.inject"]
    assert first["memindex.policy.inject"] < first["memindex.retrieval.query"] < first["memindex.relevance"]


# Which door each adapter calls for each action (module -> the door functions it must call).
DOORS: dict[str, dict[str, str]] = {
    "prompt": {"memindex.hook": "decide_prompt", "memindex.hook.file": "decide_file",
               "memindex.policy.recall": "decide_prompt"},
    "explain": {"memindex.cli.search": "explain", "memindex.mcp.server": "explain", "memindex.ui.pages": "explain"},
    "search": {"memindex.cli.search": "search_hits", "memindex.mcp.server": "search_hits", "memindex.ui.pages": "search_hits"},
    # the MCP tool saves through the candidate flow (`save_new`: find_candidate, then save_memory), the model's two
    # steps in one; the CLI has them as two commands (`memindex candidate`, `memindex save`)
    "save": {"memindex.cli.write": "save_memory", "memindex.mcp.server": "save_new"},
}
# The policy's deciding functions: only the door (and the evaluation tools, which measure the policy) call them.
DECIDERS = {"decide", "on_file", "auto_inject", "select_for_injection"}


def _called_names(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
    return names


@pytest.mark.parametrize("action", sorted(DOORS))
def test_the_adapters_call_one_door_per_action(action: str) -> None:
    missing = sorted(f"{m} does not call {door}" for m, door in DOORS[action].items() if door not in _called_names(m))
    assert missing == []


def test_only_the_door_calls_the_policy_deciders() -> None:
    offenders = sorted(f"{m} calls {name}" for m in MODULES
                       if not m.startswith("memindex_dev.evaluation") and m not in ("memindex.policy.door", "memindex.policy.inject")
                       for name in _called_names(m) & DECIDERS)
    assert offenders == []


def test_the_door_check_sees_a_direct_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "probe.py").write_text("from memindex.policy import inject\ndef f(conn, cfg):\n    return inject.decide(conn, 'x', cfg)\n")
    monkeypatch.setitem(MODULES, "memindex.probe", tmp_path / "probe.py")
    assert _called_names("memindex.probe") & DECIDERS == {"decide"}
