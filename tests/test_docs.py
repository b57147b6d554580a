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


def test_every_module_is_in_the_readme_layout() -> None:
    """A newcomer finds every module in README's layout section, under its area. One test, the
    message naming every module missing (a test per module was a hundred items for one check)."""
    layout = README.split("## Layout", 1)[1].split("\n## ", 1)[0]
    modules = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if p.name != "__init__.py")
    assert len(modules) > 50
    unnamed = [m for m in modules if m.rpartition("/")[2] not in layout]
    assert unnamed == [], f"README's layout section does not name {', '.join(unnamed)}"
    areas = sorted({m.rpartition("/")[0] for m in modules} - {""})
    unnamed_areas = [a for a in areas if f"{a}/" not in layout]
    assert unnamed_areas == [], f"README's layout section does not name {', '.join(unnamed_areas)}"


def _code_lines() -> list[tuple[str, str, list[str]]]:
    """(page, `iclr-kg …` command, the lines shown after it) from every shell block of README,
    docs/ and bench/README.md."""
    import re

    found = []
    for page in [ROOT / "README.md", ROOT / "bench" / "README.md", *DOCS]:
        for block in re.findall(r"```(?:sh|bash)?\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            lines = block.splitlines()
            for number, line in enumerate(lines):
                command = re.search(r"(?:^|\$ |&& |\.venv/bin/)(iclr-kg\s[^#&]*)", line)
                if command:
                    shown = [] if not line.startswith("$ ") else lines[number + 1 :]
                    found.append((page.name, command.group(1).strip(), shown))
    return found


@pytest.mark.parametrize("page, command, shown", _code_lines(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_documented_command_line_parses(page: str, command: str, shown: list[str]) -> None:
    """Each `iclr-kg …` line of the docs' shell blocks is accepted by the CLI's own parser:
    the command exists, and so do its options and their values' choices."""
    import shlex

    args = shlex.split(command.split("|", 1)[0])[1:]
    context = main.make_context("iclr-kg", args)
    name, command_object, rest = main.resolve_command(context, [*context._protected_args, *context.args])
    assert command_object is not None, f"{page}: no command {name!r}"
    while hasattr(command_object, "resolve_command") and rest and not rest[0].startswith("-"):
        sub_context = command_object.make_context(name, rest, parent=context)
        name, command_object, rest = command_object.resolve_command(
            sub_context, [*sub_context._protected_args, *sub_context.args]
        )
    command_object.make_context(name, rest, parent=context)


def test_the_documented_query_examples_print_what_the_docs_show(real_store, real_settings) -> None:
    """The `$ iclr-kg query …` examples with their output, run on the real graph: the lines the
    docs show are the lines the command prints (a doc that lies is worse than none)."""
    import shlex

    from testbed.helpers import run_cli

    examples = [(p, c, s) for p, c, s in _code_lines() if c.startswith("iclr-kg query") and s]
    assert len(examples) >= 4
    for page, command, shown in examples:
        args = shlex.split(command.split("|", 1)[0])[1:]
        done = run_cli(*args, "--store", str(real_settings.store))
        assert done.returncode == 0, (page, command, done.stderr)
        assert done.stdout.splitlines()[: len(shown)] == shown, (page, command)
