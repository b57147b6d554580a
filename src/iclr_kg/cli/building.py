"""`iclr-kg build`, `validate` and `check-store`: data/ and ontology/ into a store, and the store
checked."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import click

from iclr_kg import gcpause
from iclr_kg.config import Reasoner, Settings, Validator, flag_help
from iclr_kg.errors import (
    StoreError,
)
from iclr_kg.processes import memory_limit
from iclr_kg.progress import Progress
from iclr_kg.store import (
    check_generation,
    current_generation,
    generations,
)

if TYPE_CHECKING:
    pass
from iclr_kg.cli.common import end_program, fails_cleanly, in_program, main, store_option


@main.command()
@store_option
@click.option(
    "--reasoner",
    type=click.Choice(get_args(Reasoner)),
    default=None,
    help=flag_help("reasoner"),
)
@click.option(
    "--validator",
    type=click.Choice(get_args(Validator)),
    default=None,
    help=flag_help("validator"),
)
@click.option("--full", is_flag=True, help="Build everything again, even where the last build could be reused.")
@fails_cleanly
def build(store: Path | None, reasoner: str | None, validator: str | None, full: bool) -> None:
    """Build data/ + ontology/ into a validated, reasoned Oxigraph store.

    The new store replaces the old one only if every stage succeeds. After an edit the build is
    incremental: only what changed is reasoned, validated, stored and indexed again.
    """
    from iclr_kg.build.pipeline import build as run_build

    settings = Settings.from_env(store=store, reasoner=reasoner, validator=validator)
    with gcpause.paused(collect=not in_program()):
        report = run_build(settings, Progress.for_terminal(settings), full=full)
    click.echo(f"{report.summary()}\nstore: {settings.store} -> {report.generation}")
    if in_program():
        end_program()


@main.command()
@store_option
@click.option(
    "--validator",
    type=click.Choice(get_args(Validator)),
    default="pyshacl",
    show_default=True,
    help="pyshacl (the reference) or fast (SHACL compiled to SPARQL).",
)
@fails_cleanly
def validate(store: Path | None, validator: str) -> None:
    """Check data/ against the SHACL shapes and print a readable report (exit 1 on violations)."""
    from iclr_kg.build.pipeline import compile_graph

    validation = compile_graph(Settings.from_env(store=store, validator=validator)).validation
    if validation is None:  # compile_graph validates unless told not to
        raise ValueError("the graph was compiled without validating it")
    click.echo(validation.report)
    if not validation.conforms:
        click.echo(f"{len(validation.violations)} violation(s)", err=True)
        sys.exit(1)


@main.command("check-store")
@store_option
@fails_cleanly
def check_store(store: Path | None) -> None:
    """Read every generation of the store whole and name the damaged ones (exit 1 if the
    current one is damaged: rebuild with `iclr-kg build`)."""
    settings = Settings.from_env(store=store)
    current = current_generation(settings.store)
    found = generations(settings.store)
    if not found:
        raise StoreError(f"no store at {settings.store}: run `iclr-kg build --store {settings.store}` first")
    damaged_current = False
    for generation in found:
        ok, detail = check_generation(generation, memory_limit(settings.query_memory))
        mark = " (current)" if generation == current else ""
        click.echo(f"{'ok' if ok else 'DAMAGED':8} {generation.name}{mark}: {detail}")
        damaged_current |= not ok and generation == current
    if damaged_current:
        click.echo("the current generation is damaged: run `iclr-kg build` to make a new one", err=True)
        sys.exit(1)
