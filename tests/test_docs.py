"""The README documents every command and every setting (Datasette's test_docs, in small)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iclr_kg.cli import main
from iclr_kg.config import Settings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_is_documented(command: str) -> None:
    assert f"iclr-kg {command}" in README


@pytest.mark.parametrize("setting", [f.name for f in dataclasses.fields(Settings)])
def test_every_setting_is_documented(setting: str) -> None:
    assert f"ICLR_KG_{setting.upper()}" in README or (setting.endswith("_dir") and "ICLR_KG_DATA_DIR" in README)


def test_readme_set_up_commands_match_ci() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    test_command = next(line for line in README.splitlines() if "pip install -e '.[test]'" in line)
    assert test_command.strip() in ci
