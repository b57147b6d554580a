"""The layout of src/: the modules import each other without a cycle, counting the imports made
inside functions and for type checking only (each of those once hid a cycle: pool -> store ->
pool, pipeline <-> incremental). The command that proves it is this test:

    python -m pytest tests/test_layout.py
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "iclr_kg"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module of ours that `path` imports, wherever the import statement stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("iclr_kg"):
            found.add(node.module)
            for alias in node.names:  # `from iclr_kg.reasoning import dred` imports iclr_kg.reasoning.dred
                if (SRC / f"{node.module}.{alias.name}".replace(".", "/")).with_suffix(".py").exists():
                    found.add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("iclr_kg")}
    return found


def import_graph() -> dict[str, set[str]]:
    graph = {module_name(p): imports(p) for p in PACKAGE.rglob("*.py")}
    return {name: {d for d in deps if d in graph and d != name} for name, deps in graph.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50 and "iclr_kg.store" in graph["iclr_kg.query.answering"]
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_bench_and_tests_stay_apart_from_src() -> None:
    """src/ imports neither the tests nor the benchmarks."""
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "from tests" not in text and "import bench" not in text, path


def _top_level_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
    return found


def test_tests_and_benchmarks_share_testbed_and_never_import_each_other() -> None:
    root = SRC.parent
    for folder, other in (("tests", "bench"), ("bench", "tests"), ("testbed", "tests"), ("testbed", "bench")):
        for path in (root / folder).rglob("*.py"):
            imported = _top_level_imports(path)
            assert other not in imported, f"{path.relative_to(root)} imports {other}"
            loads_a_file = "spec_from_file_location" in path.read_text(encoding="utf-8")
            assert not loads_a_file or path == Path(__file__), f"{path.relative_to(root)} loads a file as a module"


MAX_MODULE_LINES = 1_000  # past this a module had grown several jobs (index.py held five at 1,234)


def test_no_module_outgrows_one_head() -> None:
    """Each module stays small enough to hold one job: the six that outgrew it (the index, the
    writer, the CLI, the query pool, the store, the maintained updates) are packages of one
    module per job now, and a module that grows past the bound is split the same way."""
    sizes = {p.relative_to(PACKAGE): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    assert max(sizes.values()) <= MAX_MODULE_LINES, max(sizes, key=sizes.__getitem__)
    for package in ("index", "store", "updates", "maintained", "cli"):
        assert (PACKAGE / package / "__init__.py").exists() and not (PACKAGE / f"{package}.py").exists()
