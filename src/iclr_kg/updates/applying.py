"""An update applied: by the fast path where it can be maintained from its change, else by the
reference path, under the store's write lock; and a pending burst published on demand."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from iclr_kg import gcpause, maintained
from iclr_kg.errors import (
    StoreError,
)
from iclr_kg.store import (
    complete_generation,
    current_generation,
    generation_record,
)
from iclr_kg.updates.bursts import apply_maintained, catch_up, holding_write_lock, logged, publish_pending
from iclr_kg.updates.journal import Entry, journal_of
from iclr_kg.updates.reference import recomputed_write


def apply(
    store_dir: Path,
    update: str,
    *,
    base: str | None = None,
    kind: str = "update",
    reasoner: str = "fast",
    max_derived: int = 0,
    defer: bool = False,
    request: str = "",
) -> Entry:
    """Run one write as described in the module docstring; returns its journal entry.

    `defer` (the writer process): an update maintained from its change is acknowledged once it
    is journaled and written to the working copy, and published later with the updates after it
    (`publish`, which the writer calls when the burst ends or a reader asks). Otherwise its
    generation is published before this returns.

    Raises QueryError (syntax, or what the update may not do), or TooLarge where the update would
    add more than `max_derived` triples to the inferred graph (0: no bound), with nothing written.
    """
    with holding_write_lock(store_dir), gcpause.paused(collect=False):  # collected again after
        source = current_generation(store_dir)
        if source is None:
            raise StoreError(f"no store at {store_dir}: run `iclr-kg build --store {store_dir}` first")
        journal = journal_of(store_dir)
        began = time.perf_counter()
        how = "the reasoner is not `fast`"
        try:
            if reasoner == "fast":
                try:
                    catch_up(store_dir, source, journal)
                    entry = apply_maintained(
                        store_dir, source, journal, update, base, kind, max_derived, request=request
                    )
                    if not defer:
                        publish_pending(store_dir)
                    return logged(entry, "maintained from its change (delete and rederive)", began)
                except maintained.NotMaintained as exc:
                    how = f"not maintained from its change ({exc})"
            publish_pending(store_dir)  # what the burst had, first: the rest starts from its generation
            source = current_generation(store_dir) or source
            entry = recomputed_write(
                store_dir, source, journal, update, base, kind, reasoner, max_derived, request=request
            )
            return logged(entry, f"{how}: the inferred graph and the index recomputed", began)
        finally:
            if not defer:
                publish_pending(store_dir)


def publish(store_dir: Path, reasoner: str = "fast") -> None:
    """Publish every acknowledged update: the writer's pending ones, and any the current
    generation lacks (a writer killed before publishing them). What a reader asks for before
    it reads (`store.journal_behind`)."""
    with holding_write_lock(store_dir), gcpause.paused(collect=False):
        source = current_generation(store_dir)
        if source is None:
            return
        journal = journal_of(store_dir)
        if reasoner == "fast":
            with contextlib.suppress(maintained.NotMaintained):
                catch_up(store_dir, source, journal)
        publish_pending(store_dir)
        source = current_generation(store_dir) or source
        record = generation_record(source)
        if journal.since(record.get("journal", 0)):
            recomputed_write(store_dir, source, journal, None, None, "update", reasoner, 0)
            return
        journal.cut_torn()
        if record.get("journal_bytes") != journal.intact:  # from before lengths were recorded
            complete_generation(source, {**record, "journal_bytes": journal.intact})
