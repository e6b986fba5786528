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
    "memindex", "memindex.hook", "memindex.paths", "memindex.defaults", "memindex.errors", "memindex.config",
    "memindex.inject", "memindex.query", "memindex.legacy", "memindex.hits", "memindex.text", "memindex.render",
    "memindex.transcript", "memindex.index", "memindex.index.db", "memindex.index.rows", "memindex.index.reads",
    "memindex.watch", "memindex.watch.marker", "memindex.rootfs",
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


def test_no_product_module_imports_the_evaluation_tools() -> None:
    offenders = sorted(
        f"{m} imports {i}" for m, deps in GRAPH.items() if not m.startswith("memindex.evaluation")
        for i in deps if i.startswith("memindex.evaluation")
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
    closure = _closure("memindex.hook")
    ours = {m for m in closure if m.split(".")[0] == "memindex"}
    outside = {m.split(".")[0] for m in closure - ours}
    assert ours <= HOOK_ALLOWED, sorted(ours - HOOK_ALLOWED)
    assert outside <= set(sys.stdlib_module_names), sorted(outside - set(sys.stdlib_module_names))


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
