"""The `iclr-kg` group and what its commands share: the options every command takes, opening the
graph a command reads, one-line errors, and the program's quick end."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, NoReturn

import click

from iclr_kg.atomic import atomic_output
from iclr_kg.config import Settings, flag_help
from iclr_kg.errors import (
    IclrKgError,
)
from iclr_kg.graph import ReadableGraph
from iclr_kg.served import served

GRAPH_CHOICES = "all|asserted|inferred|ontology|wikidata|entities|GRAPH_IRI"


def store_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--store DIR` (or ICLR_KG_STORE) on every command."""
    return click.option(
        "--store",
        type=click.Path(path_type=Path),
        default=None,
        help=flag_help("store", "Store directory."),
    )(command)


def backend_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--backend embedded|sparql+URL` (or ICLR_KG_BACKEND) on the commands that read the graph."""
    return click.option("--backend", default=None, metavar="embedded|sparql+URL", help=flag_help("backend"))(command)


def imports_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--imports DIR` (or ICLR_KG_IMPORTS_DIR) on the commands that write an import."""
    return click.option(
        "--imports",
        "imports_dir",
        type=click.Path(file_okay=False, path_type=Path),
        help=flag_help("imports_dir", "Imports directory (default: imports/ beside the store)."),
    )(command)


def open_graph(settings: Settings) -> ReadableGraph:
    """The graph a command reads: the store, or the engine `--backend` names (served.py)."""
    return served(settings).reader()


def fails_cleanly(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn IclrKgError into a one-line message and its exit code, unless --debug."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except IclrKgError as exc:
            if click.get_current_context().find_root().params.get("debug"):
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


_PROGRAM = False  # True in the `iclr-kg` program (`run`): its process ends when the command does


def run() -> None:
    """The `iclr-kg` program (pyproject's console script): `main`, in a process of its own."""
    global _PROGRAM
    _PROGRAM = True
    main()


def in_program() -> bool:
    """Whether this is the `iclr-kg` program (`run`), whose process ends when the command does."""
    return _PROGRAM


def end_program() -> NoReturn:
    """End the `iclr-kg` process now, its output flushed, without freeing what the command made
    one object at a time nor tearing the interpreter down (after a build, whose store is by then
    flushed, closed and published, that is half a second: docs/performance.md, measured choices). Only for the program (`run`):
    `main` called in-process (click's test runner) returns as usual. A reader that went away
    (`iclr-kg build | head -1`) loses the rest of the report, not the build."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="iclr-kg")
def main(debug: bool) -> None:
    """iclr-kg: a knowledge graph of ICLR papers, authors, organizations and awards."""


@contextlib.contextmanager
def output_stream(path: Path | None) -> Iterator[IO[bytes]]:
    """Standard output, or a file written whole only if everything succeeds."""
    if path is None:
        yield sys.stdout.buffer
        return
    with atomic_output(path) as out:
        yield out
