"""`iclr-kg updates`: the journal of accepted updates listed, exported as SPARQL, and dropped once
a curator has moved them into data/."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from iclr_kg.atomic import check_writable
from iclr_kg.config import Settings
from iclr_kg.errors import (
    QueryError,
)

if TYPE_CHECKING:
    pass
from iclr_kg.cli.common import fails_cleanly, main, output_stream, store_option


@main.group("updates")
def updates_group() -> None:
    """The journal of accepted updates: list them, export them as SPARQL Update, drop them.

    Every update accepted on /update (and every Graph Store write) is journaled before it is
    acknowledged and replayed onto each new build. To make one permanent, turn the export into
    data/ and drop it from the journal.
    """


@updates_group.command("list")
@store_option
@fails_cleanly
def updates_list(store: Path | None) -> None:
    """One line per journaled update: id, time, kind, size and its first line."""
    from iclr_kg.updates import Journal

    entries = Journal(Settings.from_env(store=store).store).entries()
    for entry in entries:
        first = next((line.strip() for line in entry.update.splitlines() if line.strip()), "")
        click.echo(f"{entry.id:>5}  {entry.at}  {entry.kind:<11} {len(entry.update):>7} chars  {first[:80]}")
    click.echo(f"{len(entries)} journaled update(s)", err=True)


@updates_group.command("export")
@store_option
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write to FILE instead of stdout.")
@fails_cleanly
def updates_export(store: Path | None, output: Path | None) -> None:
    """The journal as one SPARQL Update file (our prefixes declared), runnable as it is."""
    from iclr_kg.updates import Journal, export_text

    if output is not None:
        check_writable(output)
    text = export_text(Journal(Settings.from_env(store=store).store).entries())
    with output_stream(output) as out:
        out.write(text.encode("utf-8"))


@updates_group.command("drop")
@store_option
@click.argument("ids", nargs=-1, type=int)
@click.option("--all", "drop_all", is_flag=True, help="Drop every entry.")
@fails_cleanly
def updates_drop(store: Path | None, ids: tuple[int, ...], drop_all: bool) -> None:
    """Remove entries from the journal (the next build will not replay them), and its checkpoint
    with them: the next build replays every entry left. Refused while a build runs."""
    from iclr_kg.updates import drop

    if not ids and not drop_all:
        raise QueryError("name the entries to drop (ids from `iclr-kg updates list`), or --all")
    dropped = drop(Settings.from_env(store=store).store, None if drop_all else set(ids))
    click.echo(f"dropped {len(dropped)} update(s); the store being served keeps them until the next build")
