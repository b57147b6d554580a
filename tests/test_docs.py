"""README and docs/ document every command, setting and module, and every link in them resolves
(Datasette's test_docs, in small)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iclr_kg.cli import main
from iclr_kg.config import Settings, settings_table

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_is_documented(command: str) -> None:
    assert f"iclr-kg {command}" in README


def test_the_settings_page_is_the_settings_definition() -> None:
    """docs/settings.md's table is `python -m iclr_kg.config`: paste its output when a setting changes."""
    assert settings_table() in (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")


def test_readme_is_a_short_guide_that_links_every_docs_page() -> None:
    assert len(README.splitlines()) < 250
    for page in DOCS:
        assert f"(docs/{page.name})" in README, f"README does not link docs/{page.name}"


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "bench" / "README.md", *DOCS], ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path) -> None:
    """A link to a file (and to a heading in it) that does not exist is a doc that lies."""
    import re

    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name} links {target}, which does not exist"
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"{page.name} links {target}: no such heading"


def test_cli_help_names_only_real_settings() -> None:
    import re

    import click

    named = set()
    for command in [
        main,
        *main.commands.values(),
        *(c for g in main.commands.values() if isinstance(g, click.Group) for c in g.commands.values()),
    ]:
        for param in command.params:
            for variable in re.findall(r"env ICLR_KG_([A-Z0-9_]+)", getattr(param, "help", None) or ""):
                named.add(variable.lower())
    assert named and named <= set(Settings.model_fields)


def test_readme_set_up_commands_match_ci() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    test_command = next(line for line in README.splitlines() if "pip install -e '.[test]'" in line)
    assert test_command.strip() in ci


SRC = Path(__file__).resolve().parents[1] / "src" / "iclr_kg"


@pytest.mark.parametrize(
    "module", sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if p.name != "__init__.py"), ids=str
)
def test_every_module_is_in_the_readme_layout(module: str) -> None:
    """A newcomer finds every module in README's layout section, under its area."""
    layout = README.split("## Layout", 1)[1].split("\n## ", 1)[0]
    area, _, name = module.rpartition("/")
    assert name in layout, f"README's layout section does not name {module}"
    if area:
        assert f"{area}/" in layout
