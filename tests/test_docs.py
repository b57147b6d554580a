"""The README documents every command and every setting (Datasette's test_docs, in small)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iclr_kg.cli import main
from iclr_kg.config import Settings, settings_table

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_is_documented(command: str) -> None:
    assert f"iclr-kg {command}" in README


def test_readme_settings_table_is_the_settings_definition() -> None:
    """README's table is `python -m iclr_kg.config`: paste its output when a setting changes."""
    assert settings_table() in README


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
