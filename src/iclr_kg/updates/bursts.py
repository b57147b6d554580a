"""The fast path: an update maintained from its change on the writer's working copy (kept open
from one update to the next), journaled, and published with the others of its burst as one
generation when the burst goes idle, at the latest PUBLISH_WITHIN after its first, or at once
when a reader asks."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyoxigraph import Store

from iclr_kg import counts, gcpause, maintained
from iclr_kg.errors import (
    IclrKgError,
)
from iclr_kg.index import index_path, patch_index
from iclr_kg.store import (
    being_written,
    complete_generation,
    discard_unpublished,
    generation_record,
    publish_generation,
    write_lock,
)
from iclr_kg.updates.journal import Entry, Journal
from iclr_kg.updates.reference import next_name, quads_record


@dataclass
class _Pending:
    """Updates acknowledged (journaled, and written to the working copy) and not yet published:
    what their generation needs, gathered update by update."""

    source: Path  # the published generation the working copy started the burst from
    name: Path  # the generation they will be published as; the reasoning state's key meanwhile
    entry: Entry  # the last one
    journal_bytes: int
    stats: counts.Counts | None  # what /stats and VoID show (None: counted when first asked)
    iris: set[str] = field(default_factory=set)  # the entities whose index rows change
    touched: list[tuple[Any, Any, Any]] = field(default_factory=list)
    first: float = field(default_factory=time.monotonic)
    last: float = field(default_factory=time.monotonic)

    @property
    def due(self) -> float:
        """When it is published (time.monotonic): PUBLISH_IDLE after its last update, at the
        latest PUBLISH_WITHIN after its first."""
        return min(self.last + PUBLISH_IDLE, self.first + PUBLISH_WITHIN)


PENDING: dict[Path, _Pending] = {}


PUBLISH_IDLE = 0.05  # seconds without a new update after which the writer publishes a burst


PUBLISH_WITHIN = 0.5  # and at the latest this long after the burst's first update


def publish_due(now: float) -> float | None:
    """Seconds until a pending burst is due for publishing (0: now), None if none is pending."""
    due = [p.due - now for p in PENDING.values()]
    return max(0.0, min(due)) if due else None


def publish_due_bursts() -> None:
    """Publish the pending bursts that are due (the writer's publisher thread)."""
    now = time.monotonic()
    for store_dir, pending in list(PENDING.items()):
        if pending.due <= now:
            with holding_write_lock(store_dir), gcpause.paused(collect=False):
                publish_pending(store_dir)


def apply_maintained(
    store_dir: Path,
    source: Path,
    journal: Journal,
    update: str | None,
    base: str | None,
    kind: str,
    max_derived: int,
    entry: Entry | None = None,
    request: str = "",
) -> Entry:
    """The fast path: `update` maintained from its change (maintained/) on the writer's working
    copy of `source`, then journaled (unless it is the journal's `entry`, caught up) and added to
    the pending burst. NotMaintained, QueryError, TooLarge or InconsistentGraph leave the copy as
    it was; anything else abandons the copy and the burst (their updates are journaled: the next
    write or reader catches them up)."""
    pending = PENDING.get(store_dir)
    work = _working_copy(store_dir, source)
    before = pending.name if pending is not None else source
    try:
        text = entry.update if entry is not None else update
        assert text is not None, "an update, or the journal's entry to catch up"
        step = maintained.maintain(work.store, before, text, base, max_derived)
    except (maintained.NotMaintained, IclrKgError):
        raise
    except BaseException:
        _abandon(store_dir)
        raise
    try:
        if entry is None:
            entry = journal.append(kind, update or "", base, after=_held_up_to(store_dir, source), request=request)
    except BaseException:
        _abandon(store_dir)
        raise
    name = next_name(source)
    maintained.advance(before, name, step)
    maintained.keep_context(before, name)
    if pending is None:
        pending = PENDING[store_dir] = _Pending(source, name, entry, 0, counts.read(source))
    pending.name, pending.entry, pending.journal_bytes = name, entry, journal.intact
    if pending.stats is not None:
        pending.stats = pending.stats.changed(step.counts, step.default_delta, step.before, step.after)
    pending.iris |= step.iris
    pending.touched += step.touched
    pending.last = time.monotonic()
    return entry


def catch_up(store_dir: Path, source: Path, journal: Journal) -> None:
    """Maintain, on the working copy, the journal's entries that neither `source` nor the
    pending burst holds (a writer killed after acknowledging them, before publishing); they join
    the burst. NotMaintained if one is not maintained from its change (the caller recomputes)."""
    for entry in journal.since(_held_up_to(store_dir, source)):
        apply_maintained(store_dir, source, journal, None, entry.base, entry.kind, 0, entry=entry)


def _held_up_to(store_dir: Path, source: Path) -> int:
    """The last journal entry the working copy holds: the pending burst's, else `source`'s."""
    pending = PENDING.get(store_dir)
    return pending.entry.id if pending is not None else generation_record(source).get("journal", 0)


def publish_pending(store_dir: Path) -> None:
    """The pending burst's generation: a checkpoint of the working copy, its reasoning state, its
    counts and its index rows, then `current` swung to it. Nothing if none is pending."""
    pending = PENDING.pop(store_dir, None)
    if pending is None:
        return
    work = _WORKING[store_dir]
    target = pending.name
    try:
        work.store.backup(str(target))  # RocksDB flushes, then hard-links
        maintained.save(pending.source, target)
        record = {"journal": pending.entry.id, "journal_bytes": pending.journal_bytes}
        complete_generation(target, {**record, **quads_record(maintained.held(target))})
        if pending.stats is not None:
            counts.write(target, pending.stats)
        patch_index(work.store, target, index_path(pending.source), pending.iris, pending.touched, in_place=True)
        publish_generation(store_dir, target, prune=_prune_due())
    except BaseException:
        _abandon(store_dir)
        discard_unpublished(store_dir, target)
        raise
    work.generation = target


def _abandon(store_dir: Path) -> None:
    """After a failure: the working copy, the pending burst and what memory holds of them go
    (their updates are journaled, and caught up from the journal next)."""
    PENDING.pop(store_dir, None)
    discard_working_copy(store_dir)
    maintained.forget()


_HELD: dict[Path, tuple[contextlib.ExitStack, int]] = {}  # store -> (its write lock, held; how many hold it)


_HOLDING = threading.RLock()


@contextlib.contextmanager
def holding_write_lock(store_dir: Path) -> Iterator[None]:
    """The store's write lock (`store.write_lock`), held by this process from a burst's first
    update until its publication: a build that replayed the journal and published in between
    would be overwritten by the burst's generation."""
    with _HOLDING:
        held, holders = _HELD.get(store_dir, (None, 0))
        if held is None:
            held = contextlib.ExitStack()
            held.enter_context(write_lock(store_dir))
        _HELD[store_dir] = (held, holders + 1)
        try:
            yield
        finally:
            held, holders = _HELD[store_dir]
            if holders == 1 and store_dir not in PENDING:
                del _HELD[store_dir]
                held.close()
            else:
                _HELD[store_dir] = (held, holders - 1)


PRUNE_EVERY = 1.0  # seconds between two prunes by the writer (one per update cost more than the update)


_PRUNED = [0.0]


def _prune_due() -> bool:
    """Whether this update prunes old generations: the first in PRUNE_EVERY seconds does."""
    now = time.monotonic()
    if now - _PRUNED[0] < PRUNE_EVERY:
        return False
    _PRUNED[0] = now
    return True


def logged(entry: Entry, how: str, began: float) -> Entry:
    """The update's one log line: how it was done and how long it took."""
    print(f"update {entry.id}: {how} in {(time.perf_counter() - began) * 1000:.0f} ms", file=sys.stderr, flush=True)
    return entry


@dataclass
class _WorkingCopy:
    """The writer's own read-write copy of the current generation, kept open from one update to
    the next: opening, flushing and closing a RocksDB database for each update cost more than the
    update. It lives in `STORE/writer/`, never among the generations readers open; each update's
    generation is a checkpoint of it."""

    path: Path
    db: Store | None  # None once discarded (the last reference dropped: RocksDB closes)
    generation: Path  # the published generation it holds

    @property
    def store(self) -> Store:
        if self.db is None:
            raise RuntimeError("the writer's working copy was discarded while in use")
        return self.db


_WORKING: dict[Path, _WorkingCopy] = {}


def _working_copy(store_dir: Path, source: Path) -> _WorkingCopy:
    """This process's working copy of `source`, made anew when `current` moved under it (a build,
    or another web process's writer) and the first time."""
    work = _WORKING.get(store_dir)
    if work is not None and work.generation == source and work.db is not None:
        return work
    discard_working_copy(store_dir)
    folder = store_dir / "writer"
    folder.mkdir(exist_ok=True)
    for left in folder.iterdir():  # a killed writer's copy
        if left.is_dir() and not being_written(left):
            shutil.rmtree(left, ignore_errors=True)
    path = folder / f"{os.getpid()}-{time.time_ns()}"
    Store.read_only(str(source)).backup(str(path))
    work = _WORKING[store_dir] = _WorkingCopy(path, Store(str(path)), source)
    return work


def discard_working_copy(store_dir: Path) -> None:
    """Close and delete the working copy (after a failure it may hold half an update)."""
    work = _WORKING.pop(store_dir, None)
    if work is not None:
        work.db = None  # the last reference: RocksDB closes
        shutil.rmtree(work.path, ignore_errors=True)
