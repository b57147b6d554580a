"""Which package of src/iclr_kg may import which: the rows below, top first. A package (or
top-level module) imports only from rows below its own; imports inside functions and under
TYPE_CHECKING count as much as those at the top. "What is lower" is read here, not guessed."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "iclr_kg"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),  # the commands
    ("web", "external"),  # the HTTP app; the services we call and the importers
    ("build",),  # a build replays the journal through the writer's code
    ("updates",),  # the one writer
    ("maintained", "query"),  # the fast path; answering queries
    ("served",),  # the backend chosen once: what a query worker opens by a generation's key
    ("remote", "counts"),  # our graph on another engine; what /stats counts
    ("store",),  # generations on disk, queries as the product runs them
    ("index", "sparql", "reasoning", "release"),  # entity index; SPARQL as text; OWL RL; dumps
    ("terms", "identifiers", "progress"),
    ("config", "vocab", "atomic"),
    ("errors", "kinds", "graph", "topics", "processes", "deepstack", "gcpause", "iclr_kg"),
)
ROW = {name: row for row, names in enumerate(LAYERS) for name in names}


def unit(module: str) -> str:
    """The package or top-level module of ours that `iclr_kg.a.b` belongs to: `a`."""
    first = [*module.split("."), "__init__"][1]  # `iclr_kg`, `iclr_kg.__init__`, `iclr_kg.__version__`: the root
    ours = first != "__init__" and ((PACKAGE / first).is_dir() or (PACKAGE / f"{first}.py").exists())
    return first if ours else "iclr_kg"


def unit_of(path: Path) -> str:
    return unit(".".join(("iclr_kg", *path.relative_to(PACKAGE).parts)).removesuffix(".py"))


def imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        return ["iclr_kg.<relative>"]  # ours are absolute: a relative import is named as a fault
    if node.module == "iclr_kg":
        return [f"iclr_kg.{alias.name}" for alias in node.names]  # `from iclr_kg import vocab`
    return [node.module or ""]


def violations(path: Path, source: str) -> list[str]:
    """Each import in `source` (the file at `path`) that reaches a row not below its own."""
    importer, found = unit_of(path), []
    for node in [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import | ast.ImportFrom)]:
        for name in imported(node):
            upward = (target := unit(name)) != importer and ROW.get(target, -1) <= ROW[importer]
            if name.split(".")[0] == "iclr_kg" and (upward or "<relative>" in name):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {importer} imports {name}")
    return found


def test_every_package_imports_only_from_the_rows_below_it() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert {unit_of(p) for p in files} == set(ROW), "place each package in one row"
    assert len(ROW) == sum(map(len, LAYERS)), "a package stands in two rows"
    assert [v for p in files for v in violations(p, p.read_text(encoding="utf-8"))] == []


def test_an_import_inside_a_function_is_found_with_its_line() -> None:
    upward = "from iclr_kg import vocab\n\ndef f():\n    from iclr_kg.web import create_app\n"
    assert violations(PACKAGE / "store" / "x.py", upward) == ["iclr_kg/store/x.py:4 store imports iclr_kg.web"]


def test_the_architecture_page_shows_this_table() -> None:
    """docs/architecture.md's Layers table is this one, row by row (the root module aside)."""
    import re

    page = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## Layers", 1)[1]
    rows = [
        tuple(re.findall(r"`(\w+)`", line.split("|")[2])) for line in table.splitlines() if re.match(r"\| \d+ \|", line)
    ]
    assert rows == [tuple(name for name in names if name != "iclr_kg") for names in LAYERS]
