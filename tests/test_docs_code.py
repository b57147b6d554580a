"""What README and docs/ name in the code exists: every file path, every `module.name` of ours.

A page that names `query/lint.py` after the lint moved, or `updates.apply` after it was renamed,
sends the next engineer to read what is not there. Read by ast, so nothing is imported.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "iclr_kg"
PAGES = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = re.compile(r"`([^`\s]+)`")
PYTHON_PATH = re.compile(r"^[\w./-]+\.py$")
DOTTED = re.compile(r"^([a-z_]+)\.([A-Za-z_]\w*)(?:\.(\w+))?$")


def _repo_files() -> list[Path]:
    skip = {".git", ".venv", "node_modules", "var", "__pycache__"}
    return [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)]


@cache
def _modules() -> dict[str, list[Path]]:
    """Our modules and packages by their last name (`lint` -> src/iclr_kg/sparql/lint.py)."""
    found: dict[str, list[Path]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = path.parent.name if path.name == "__init__.py" else path.stem
        found.setdefault(name, []).append(path)
    return found


@cache
def _names_defined(path: Path) -> frozenset[str]:
    """Top-level names of a module (defs, classes, assignments, imports) and its classes' members."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names |= {f"{node.name}.{m.name}" for m in node.body if hasattr(m, "name")}
                names |= {
                    f"{node.name}.{t.id}"
                    for m in node.body
                    if isinstance(m, ast.AnnAssign | ast.Assign)
                    for t in (m.targets if isinstance(m, ast.Assign) else [m.target])
                    if isinstance(t, ast.Name)
                }
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    if path.name == "__init__.py":
        names |= {p.stem for p in path.parent.glob("*.py")} | {p.name for p in path.parent.iterdir() if p.is_dir()}
    return frozenset(names)


def _defines(path: Path, name: str, member: str | None) -> bool:
    """`path` defines `name` (and `name.member`); where `name` is a submodule of a package,
    the submodule defines `member`."""
    submodule = path.parent / f"{name}.py"
    if path.name == "__init__.py" and member and submodule.exists():
        return member in _names_defined(submodule)
    return (f"{name}.{member}" if member else name) in _names_defined(path)


def _mentions() -> list[tuple[str, str]]:
    return [
        (page.relative_to(ROOT).as_posix(), code) for page in PAGES for code in CODE.findall(page.read_text("utf-8"))
    ]


def _path_exists(text: str) -> bool:
    text = text.removeprefix("./")
    if any((base / text).exists() for base in (ROOT, ROOT / "src", PACKAGE, ROOT / "tests")):
        return True
    if "/" not in text:  # a bare file name: anywhere in the repository
        return any(p.name == text for p in _repo_files())
    return any(p.as_posix().endswith("/" + text) for p in _repo_files())


def test_every_python_file_the_docs_name_exists() -> None:
    missing = [f"{page}: `{code}`" for page, code in _mentions() if PYTHON_PATH.match(code) and not _path_exists(code)]
    assert not missing, "named in the docs, not in the repository:\n" + "\n".join(missing)


def test_every_module_name_the_docs_name_is_defined() -> None:
    """`updates.run_entry`, `querytext.check_operators`, `dred._Backward`: the module is ours (by
    its last name) and defines the name; `module.Class.member` checks the member too."""
    missing = []
    for page, code in _mentions():
        match = DOTTED.match(code)
        if not match or match[1] not in _modules() or match[2] in {"py", "md", "json", "jsonl", "ttl", "yaml", "lock"}:
            continue
        if not any(_defines(path, match[2], match[3]) for path in _modules()[match[1]]):
            missing.append(f"{page}: `{code}`")
    assert not missing, "named in the docs, not defined in our code:\n" + "\n".join(missing)
