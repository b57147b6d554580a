"""Writes to the store: one writer at a time, every accepted update journaled, inferences kept.

Readers never see a database being written: pyoxigraph may not read a store another process
writes. So an update never touches the generation being served. Under the store's write lock
(an flock, so any number of web processes take turns) it

1. runs on a writable copy of the current generation: for an update maintained from its change
   (below), the writer's working copy, kept open from one update to the next in
   `STORE/writer/` (made again when `current` moved under it); for any other, a checkpoint of
   the current generation (`Store.backup`: RocksDB hard-links the immutable files);
2. appends the update to the journal and fsyncs it: the acknowledgement point;
3. publishes: the new generation is a checkpoint of the working copy (or the written checkpoint
   itself), marked complete (recording the last journal entry it holds and the journal's length
   then), its index brought up to date, and `current` swung to it, exactly as a build publishes.

The server's writer process (`Writer`) acknowledges an update maintained from its change after
step 2 and publishes a burst of them as one generation: when no update came for PUBLISH_IDLE,
PUBLISH_WITHIN after the burst's first, or at once when a reader asks. A checkpoint (RocksDB
flushes every column family and fsyncs) costs more than the update itself, so one per update
set the pace of a burst. Every reader of the server asks first when the journal is longer than
the current generation holds (`store.journal_behind`: one stat), so a read after an
acknowledged update sees it, from any web process. The write lock is held from a burst's first
update to its publication.

A kill -9 at any step leaves either the old generation current (the partial one is pruned) or
the journal ahead of it (the next writer catches the missing entries up, maintained from their
change where it can; a build replays them); no acknowledged update is lost. `iclr-kg build`
replays the whole journal onto each new generation, so updates outlive rebuilds until a curator
moves them into data/ and drops them (`iclr-kg updates`).

The default graph is the union of all graphs (each triple once). An update that inserts into the
default graph keeps the triples in the graph `graph/updates`; one that deletes from it deletes
the triples from every graph that states them. The inferred graph always equals what a full
build would give; an update may not add to it directly. An update made of INSERT DATA, DELETE
DATA, DELETE/INSERT ... WHERE, and DROP or CLEAR of one graph is maintained
from its change (maintained.py: delete and rederive, the index patched in place); any other is
run operation by operation and the inferred graph and the index are recomputed from the whole
store. Each update prints one line saying which, and why.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from multiprocessing import AuthenticationError
from pathlib import Path
from typing import Any

from pyoxigraph import DefaultGraph, NamedNode, Quad, Store, Triple

from iclr_kg import counts, gcpause, maintained, vocab
from iclr_kg.atomic import fsync_dir, write_text
from iclr_kg.errors import (
    ExternalServiceError,
    Failure,
    IclrKgError,
    InconsistentGraph,
    QueryError,
    StoreError,
    TooLarge,
    UpdateTimeout,
)
from iclr_kg.index import build_index, index_path, patch_index
from iclr_kg.processes import exit_out_of_memory, limit_address_space, start_without_main
from iclr_kg.query.querytext import split_update
from iclr_kg.store import (
    JOURNAL,
    being_written,
    complete_generation,
    current_generation,
    discard_unpublished,
    generation_record,
    publish_generation,
    run_update,
    write_lock,
)


@dataclass(frozen=True)
class Entry:
    """One accepted write, as it ran: SPARQL Update text (Graph Store writes are turned into one)."""

    id: int
    at: str  # UTC, ISO 8601
    kind: str  # "update" or "graph-store"
    update: str
    base: str | None = None  # the base IRI its relative IRIs resolved against

    def line(self) -> str:
        """The entry as one journal line."""
        return json.dumps(asdict(self), ensure_ascii=False) + "\n"


class Journal:
    """The append-only file of accepted writes beside the store: one JSON object per line.

    A line is only acknowledged once it and its newline are fsynced; a torn last line (a writer
    killed mid-append) was never acknowledged and is ignored, then cut off by the next append.
    What was read is kept while the file stays the same (its size, time and inode), so that a
    writer does not read the whole journal for each update.
    """

    def __init__(self, store_dir: Path):
        self.path = store_dir / JOURNAL
        self._known: tuple[tuple[int, int, int], list[Entry], int] | None = None

    def entries(self) -> list[Entry]:
        return list(self._read()[0])

    def since(self, last: int) -> list[Entry]:
        """The entries after the one numbered `last`."""
        entries = self._read()[0]
        if not entries or entries[-1].id <= last:
            return []
        return [e for e in entries if e.id > last]

    @property
    def intact(self) -> int:
        """The length in bytes of the complete entries (what a generation holding them records)."""
        return self._read()[1]

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return None
        return found.st_size, found.st_mtime_ns, found.st_ino

    def _read(self) -> tuple[list[Entry], int]:
        """The complete entries, and the byte length they take (what follows is a torn line)."""
        stamp = self._stamp()
        if stamp is None:
            return [], 0
        if self._known is not None and self._known[0] == stamp:
            return self._known[1], self._known[2]
        data = self.path.read_bytes()
        intact = data.rfind(b"\n") + 1
        entries = []
        for number, line in enumerate(data[:intact].decode("utf-8").split("\n")[:-1], 1):
            try:
                entries.append(Entry(**json.loads(line)))
            except (ValueError, TypeError) as exc:
                raise StoreError(
                    f"{self.path}:{number}: not a journal entry ({exc}); fix or remove that line"
                ) from None
        if stamp[0] == len(data):
            self._known = (stamp, entries, intact)
        return entries, intact

    def append(self, kind: str, update: str, base: str | None, after: int) -> Entry:
        """Write an entry numbered after both the journal's last and `after`, durably."""
        entries, intact = self._read()
        number = max([after, *(e.id for e in entries[-1:])]) + 1
        entry = Entry(number, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), kind, update, base)
        line = entry.line().encode("utf-8")
        created = not self.path.exists()
        with open(self.path, "ab") as handle:
            if intact < handle.tell():
                handle.truncate(intact)  # a torn line from a killed writer
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        if created:
            fsync_dir(self.path.parent)
        stamp = self._stamp()
        if stamp is not None and stamp[0] == intact + len(line):
            self._known = (stamp, [*entries, entry], intact + len(line))
        return entry

    def cut_torn(self) -> None:
        """Cut off a torn last line (never acknowledged), so that the journal's length is its entries'."""
        stamp, intact = self._stamp(), self._read()[1]
        if stamp is not None and stamp[0] > intact:
            with open(self.path, "ab") as handle:
                handle.truncate(intact)
                os.fsync(handle.fileno())

    def keep_only(self, entries: list[Entry]) -> None:
        """Rewrite the journal with `entries` (after a drop), atomically and durably."""
        write_text(self.path, "".join(e.line() for e in entries), durable=True)


def apply(
    store_dir: Path,
    update: str,
    *,
    base: str | None = None,
    kind: str = "update",
    reasoner: str = "fast",
    max_derived: int = 0,
    defer: bool = False,
) -> Entry:
    """Run one write as described in the module docstring; returns its journal entry.

    `defer` (the writer process): an update maintained from its change is acknowledged once it
    is journaled and written to the working copy, and published later with the updates after it
    (`publish`, which the writer calls when the burst ends or a reader asks). Otherwise its
    generation is published before this returns.

    Raises QueryError (syntax, or what the update may not do), or TooLarge where the update would
    add more than `max_derived` triples to the inferred graph (0: no bound), with nothing written.
    """
    with _holding_write_lock(store_dir), gcpause.paused(collect=False):  # collected again after
        source = current_generation(store_dir)
        if source is None:
            raise StoreError(f"no store at {store_dir}: run `iclr-kg build --store {store_dir}` first")
        journal = _journal(store_dir)
        began = time.perf_counter()
        how = "the reasoner is not `fast`"
        try:
            if reasoner == "fast":
                try:
                    _catch_up(store_dir, source, journal)
                    entry = _maintained(store_dir, source, journal, update, base, kind, max_derived)
                    if not defer:
                        _publish_pending(store_dir)
                    return _logged(entry, "maintained from its change (delete and rederive)", began)
                except maintained.NotMaintained as exc:
                    how = f"not maintained from its change ({exc})"
            _publish_pending(store_dir)  # what the burst had, first: the rest starts from its generation
            source = current_generation(store_dir) or source
            entry = _recomputed_write(store_dir, source, journal, update, base, kind, reasoner, max_derived)
            return _logged(entry, f"{how}: the inferred graph and the index recomputed", began)
        finally:
            if not defer:
                _publish_pending(store_dir)


def publish(store_dir: Path, reasoner: str = "fast") -> None:
    """Publish every acknowledged update: the writer's pending ones, and any the current
    generation lacks (a writer killed before publishing them). What a reader asks for before
    it reads (`store.journal_behind`)."""
    with _holding_write_lock(store_dir), gcpause.paused(collect=False):
        source = current_generation(store_dir)
        if source is None:
            return
        journal = _journal(store_dir)
        if reasoner == "fast":
            with contextlib.suppress(maintained.NotMaintained):
                _catch_up(store_dir, source, journal)
        _publish_pending(store_dir)
        source = current_generation(store_dir) or source
        record = generation_record(source)
        if journal.since(record.get("journal", 0)):
            _recomputed_write(store_dir, source, journal, None, None, "update", reasoner, 0)
            return
        journal.cut_torn()
        if record.get("journal_bytes") != journal.intact:  # from before lengths were recorded
            complete_generation(source, {**record, "journal_bytes": journal.intact})


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


_PENDING: dict[Path, _Pending] = {}
PUBLISH_IDLE = 0.05  # seconds without a new update after which the writer publishes a burst
PUBLISH_WITHIN = 0.5  # and at the latest this long after the burst's first update


def publish_due(now: float) -> float | None:
    """Seconds until a pending burst is due for publishing (0: now), None if none is pending."""
    due = [p.due - now for p in _PENDING.values()]
    return max(0.0, min(due)) if due else None


def publish_due_bursts() -> None:
    """Publish the pending bursts that are due (the writer's publisher thread)."""
    now = time.monotonic()
    for store_dir, pending in list(_PENDING.items()):
        if pending.due <= now:
            with _holding_write_lock(store_dir), gcpause.paused(collect=False):
                _publish_pending(store_dir)


def _maintained(
    store_dir: Path,
    source: Path,
    journal: Journal,
    update: str | None,
    base: str | None,
    kind: str,
    max_derived: int,
    entry: Entry | None = None,
) -> Entry:
    """The fast path: `update` maintained from its change (maintained.py) on the writer's working
    copy of `source`, then journaled (unless it is the journal's `entry`, caught up) and added to
    the pending burst. NotMaintained, QueryError, TooLarge or InconsistentGraph leave the copy as
    it was; anything else abandons the copy and the burst (their updates are journaled: the next
    write or reader catches them up)."""
    pending = _PENDING.get(store_dir)
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
            entry = journal.append(kind, update or "", base, after=_held_up_to(store_dir, source))
    except BaseException:
        _abandon(store_dir)
        raise
    name = _next_name(source)
    maintained.advance(before, name, step)
    maintained.keep_context(before, name)
    if pending is None:
        pending = _PENDING[store_dir] = _Pending(source, name, entry, 0, counts.read(source))
    pending.name, pending.entry, pending.journal_bytes = name, entry, journal.intact
    if pending.stats is not None:
        pending.stats = pending.stats.changed(step.counts, step.default_delta, step.before, step.after)
    pending.iris |= step.iris
    pending.touched += step.touched
    pending.last = time.monotonic()
    return entry


def _catch_up(store_dir: Path, source: Path, journal: Journal) -> None:
    """Maintain, on the working copy, the journal's entries that neither `source` nor the
    pending burst holds (a writer killed after acknowledging them, before publishing); they join
    the burst. NotMaintained if one is not maintained from its change (the caller recomputes)."""
    for entry in journal.since(_held_up_to(store_dir, source)):
        _maintained(store_dir, source, journal, None, entry.base, entry.kind, 0, entry=entry)


def _held_up_to(store_dir: Path, source: Path) -> int:
    """The last journal entry the working copy holds: the pending burst's, else `source`'s."""
    pending = _PENDING.get(store_dir)
    return pending.entry.id if pending is not None else generation_record(source).get("journal", 0)


def _publish_pending(store_dir: Path) -> None:
    """The pending burst's generation: a checkpoint of the working copy, its reasoning state, its
    counts and its index rows, then `current` swung to it. Nothing if none is pending."""
    pending = _PENDING.pop(store_dir, None)
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


def quads_record(state: maintained.State | None) -> dict[str, int]:
    """What a generation's record says of its size: the quads of its named graphs (what
    /health shows without counting them), where the reasoning state knows them."""
    return {"quads": sum(state.counts.values())} if state is not None else {}


def _abandon(store_dir: Path) -> None:
    """After a failure: the working copy, the pending burst and what memory holds of them go
    (their updates are journaled, and caught up from the journal next)."""
    _PENDING.pop(store_dir, None)
    _discard_working_copy(store_dir)
    maintained.forget()


def _recomputed_write(
    store_dir: Path,
    source: Path,
    journal: Journal,
    update: str | None,
    base: str | None,
    kind: str,
    reasoner: str,
    max_derived: int,
) -> Entry:
    """The slow path: the journal's entries `source` lacks and `update` (None: only those) run
    on a checkpoint of `source`, the inferred graph and the index recomputed, published."""
    applied = generation_record(source).get("journal", 0)
    missing = journal.since(applied)
    target, state = _recomputed(source, missing, update, base, reasoner, max_derived)
    try:
        entry = journal.append(kind, update, base, after=applied) if update is not None else missing[-1]
        complete_generation(target, {"journal": entry.id, "journal_bytes": journal.intact, **quads_record(state)})
        publish_generation(store_dir, target)
    except BaseException:
        discard_unpublished(store_dir, target)
        raise
    if state is not None:
        maintained.save_state(target, state)
    return entry


_JOURNALS: dict[Path, Journal] = {}


def _journal(store_dir: Path) -> Journal:
    """This process's reader of the store's journal (it keeps what it read while the file stays)."""
    journal = _JOURNALS.get(store_dir)
    if journal is None:
        journal = _JOURNALS[store_dir] = Journal(store_dir)
    return journal


_HELD: dict[Path, tuple[contextlib.ExitStack, int]] = {}  # store -> (its write lock, held; how many hold it)
_HOLDING = threading.RLock()


@contextlib.contextmanager
def _holding_write_lock(store_dir: Path) -> Iterator[None]:
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
            if holders == 1 and store_dir not in _PENDING:
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


def _logged(entry: Entry, how: str, began: float) -> Entry:
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
    _discard_working_copy(store_dir)
    folder = store_dir / "writer"
    folder.mkdir(exist_ok=True)
    for left in folder.iterdir():  # a killed writer's copy
        if left.is_dir() and not being_written(left):
            shutil.rmtree(left, ignore_errors=True)
    path = folder / f"{os.getpid()}-{time.time_ns()}"
    Store.read_only(str(source)).backup(str(path))
    work = _WORKING[store_dir] = _WorkingCopy(path, Store(str(path)), source)
    return work


def _discard_working_copy(store_dir: Path) -> None:
    """Close and delete the working copy (after a failure it may hold half an update)."""
    work = _WORKING.pop(store_dir, None)
    if work is not None:
        work.db = None  # the last reference: RocksDB closes
        shutil.rmtree(work.path, ignore_errors=True)


def _next_name(source: Path) -> Path:
    """A name for the generation after `source`, sorting after it."""
    return source.parent / f"{source.name.split('~', 1)[0]}~{time.time_ns()}"


def _recomputed(
    source: Path, missing: list[Entry], update: str | None, base: str | None, reasoner: str, max_derived: int
) -> tuple[Path, maintained.State | None]:
    """The generation with the journal's missing entries and `update` (None: none) run on a
    checkpoint of `source`, the inferred graph and the index recomputed from the whole store;
    and the state to keep beside it."""
    target = _checkpoint(source)
    key = source
    with _writing(target) as db:
        runs = [(e.update, e.base, 0) for e in missing] + ([(update, base, max_derived)] if update is not None else [])
        for number, (text, its_base, bound) in enumerate(runs, 1):
            after = Path(f"{target}#{number}")
            apply_entry(db, key, after, text, its_base, reasoner, max_derived=bound)
            key = after
        build_index(db, target)
    return target, maintained.held(key) if reasoner == "fast" else None


def _checkpoint(source: Path) -> Path:
    """A new generation beside `source`, a checkpoint of it (hard links)."""
    target = _next_name(source)
    Store.read_only(str(source)).backup(str(target))
    return target


@contextlib.contextmanager
def _writing(target: Path) -> Iterator[Store]:
    """The new generation open for writing, flushed and closed after; removed if anything fails.
    Closed before it is published, always: an open read-write handle goes on compacting in the
    background, deleting files that readers' snapshots of the published generation still list."""
    db = Store(str(target))
    try:
        yield db
        db.flush()
    except BaseException:
        del db
        shutil.rmtree(target, ignore_errors=True)
        index_path(target).unlink(missing_ok=True)
        raise
    del db


def replay(
    db: Store, store_dir: Path, reasoner: str = "fast", state: maintained.State | None = None
) -> tuple[dict[str, int], maintained.State | None]:
    """Run the whole journal onto a freshly built database (for `build`, under the write lock),
    each entry exactly as the writer ran it (`apply_entry`), on `state`: the build's reasoning
    state (the closure's hidden facts and quads per graph; None: every entry recomputes).

    Returns what the generation's record says it holds (the last id run, the journal's length)
    and the reasoning state after the last entry (what the generation keeps beside it). An
    entry that cannot run any more is a StoreError naming it and how to give it up: the build
    publishes nothing, and the last good generation stays current."""
    journal = Journal(store_dir)
    key = store_dir / "replaying-0"
    if state is not None:
        maintained.hold(key, state)
    last = 0
    for entry in journal.entries():
        after = store_dir / f"replaying-{entry.id}"
        try:
            apply_entry(db, key, after, entry.update, entry.base, reasoner)
        except (QueryError, TooLarge) as exc:
            first = next((line.strip() for line in entry.update.splitlines() if line.strip()), "")
            raise StoreError(
                f"journal entry {entry.id} ({entry.at}, `{first[:80]}`) cannot be replayed onto this build: "
                f"{exc}. Nothing was published; `iclr-kg updates list` shows it, "
                f"`iclr-kg updates drop {entry.id}` gives it up"
            ) from None
        key, last = after, entry.id
    final = maintained.held(key) if reasoner == "fast" else None
    return {"journal": last, "journal_bytes": journal.intact}, final


def apply_entry(
    db: Store, key: Path, after: Path, update: str, base: str | None, reasoner: str, max_derived: int = 0
) -> maintained.Step | None:
    """The one way an update changes a store: `db`, whose reasoning state is known as `key`
    (maintained.load_state), becomes the state after `update`, known as `after`. Maintained from
    its change (maintained.maintain: the same plan, then delete and rederive) where the fast
    path takes it, which returns its Step; otherwise `run_entry`, the reference, on `db` itself
    (None: the index is rebuilt whole). The writer's recomputed writes and a build's replay of
    the journal run it; the writer's bursts run its fast half on their working copy."""
    if reasoner == "fast":
        try:
            step = maintained.maintain(db, key, update, base, max_derived)
        except maintained.NotMaintained:
            pass
        else:
            maintained.advance(key, after, step)
            maintained.keep_context(key, after)
            return step
    hidden: list[Any] | None = [] if reasoner == "fast" else None
    run_entry(db, update, base, reasoner, max_derived=max_derived, hidden=hidden)
    if hidden is not None:
        maintained.hold(after, maintained.State(set(hidden), graph_counts(db)))
    return None


def graph_counts(db: Store) -> dict[str, int]:
    """Quads per named graph (what the reasoning state keeps)."""
    return dict(Counter(q.graph_name.value for q in db if q.graph_name != DefaultGraph()))


def run_entry(
    db: Store,
    update: str,
    base: str | None,
    reasoner: str,
    max_derived: int = 0,
    hidden: list[Any] | None = None,
) -> None:
    """Run one update, the reference way: each operation in order over our dataset, as
    docs/updates.md states it. An operation is planned as the fast path plans it
    (`maintained.plan_change`: what it deletes and inserts under the union-default-graph rule)
    and written, or, where no plan is made (DROP ALL, CLEAR DEFAULT, LOAD, CREATE...), run by
    Oxigraph and its change to the default graph carried over to the named graphs. After each
    operation that a later one reads through (`maintained.reads_dataset`), and after the last,
    the inferred graph is recomputed from the whole store and the default graph made the union again. The request
    stays atomic: the caller publishes nothing unless all succeed. A bounded update
    (`max_derived`) may not bring owl:sameAs into a graph that has none (`maintained.check_equality`)."""
    operations = split_update(update) or [update]
    had_equality = maintained.states_equality(db)
    for number, operation in enumerate(operations, 1):
        _run_operation(db, operation, base)
        last = number == len(operations)
        if last or any(maintained.reads_dataset(later) for later in operations[number:]):
            recompute_closure(db, reasoner, max_new=max_derived if last else 0, hidden=hidden if last else None)
    if max_derived and not had_equality:
        maintained.check_equality(db)


def _run_operation(db: Store, operation: str, base: str | None) -> None:
    """One operation's change to the asserted graphs (the inferred graph is brought up to date after)."""
    try:
        change = maintained.plan_change(db, operation, base)
    except maintained.NotMaintained:
        inferred = NamedNode(vocab.GRAPH_INFERRED)
        before = _quads(db)
        run_update(db, operation, base)
        after = _settle_default_graph(db, before, _quads(db))
        for quad in after - before:
            maintained.check_statable(quad.triple)
        written = [q.triple for q in after - before if q.graph_name == inferred]
        if written:
            raise QueryError(maintained.inferred_refusal(written[0])) from None
        return
    change.write()


def _settle_default_graph(db: Store, before: set[Quad], after: set[Quad]) -> set[Quad]:
    """Carry one operation's changes to the default graph over to the named graphs; returns the
    store's quads afterwards. Deleted from the default graph: deleted from every graph that
    stated it (unless the operation itself wrote it there). Inserted: kept in graph/updates."""
    default, inferred = DefaultGraph(), NamedNode(vocab.GRAPH_INFERRED)
    before_default = {q.triple for q in before if q.graph_name == default}
    after_default = {q.triple for q in after if q.graph_name == default}
    removed = before_default - after_default
    stale = {q for q in before & after if q.triple in removed and q.graph_name not in (default, inferred)}
    for quad in stale:
        db.remove(quad)
    kept = NamedNode(vocab.GRAPH_UPDATES)
    added = {Quad(t.subject, t.predicate, t.object, kept) for t in after_default - before_default}
    if added:
        db.extend(added)
    return (after - stale) | added


def _quads(db: Store) -> set[Quad]:
    return set(db.quads_for_pattern(None, None, None, None))


def recompute_closure(db: Store, reasoner: str = "fast", max_new: int = 0, hidden: list[Any] | None = None) -> None:
    """Make the inferred graph what full reasoning over the asserted graphs gives, and the
    default graph the union of all graphs; writes only the differences. Past `max_new` new
    inferred triples (0: no bound), TooLarge and nothing written. `hidden` receives the
    closure's hidden facts (the fast reasoner's), for the next update (maintained.py)."""
    from iclr_kg.build.reason import infer_terms

    inferred, ontology, default = NamedNode(vocab.GRAPH_INFERRED), NamedNode(vocab.GRAPH_ONTOLOGY), DefaultGraph()
    by_graph: dict[Any, set[Triple]] = {inferred: set(), ontology: set(), default: set()}
    for quad in _quads(db):
        by_graph.setdefault(quad.graph_name, set()).add(quad.triple)
    asserted = set().union(
        *(triples for graph, triples in by_graph.items() if graph not in (inferred, ontology, default))
    )
    try:
        derived = {Triple(*t) for t in infer_terms(list(asserted), list(by_graph[ontology]), reasoner, hidden)}
        derived -= asserted
    except InconsistentGraph as exc:
        raise QueryError(maintained.inconsistency(exc)) from None
    maintained.check_growth(len(derived - by_graph[inferred]), max_new)
    _replace(db, inferred, by_graph[inferred], derived)
    _replace(db, default, by_graph[default], asserted | by_graph[ontology] | derived)


def _replace(db: Store, graph: Any, old: set[Triple], new: set[Triple]) -> None:
    for triple in old - new:
        db.remove(Quad(triple.subject, triple.predicate, triple.object, graph))
    fresh = [Quad(t.subject, t.predicate, t.object, graph) for t in new - old]
    if fresh:
        db.extend(fresh)


def export_text(entries: list[Entry]) -> str:
    """The entries as one SPARQL Update request: our prefixes, then each entry with its base."""
    lines = [f"# iclr-kg update journal: {len(entries)} update(s), oldest first", ""]
    lines += [f"PREFIX {name}: <{iri}>" for name, iri in vocab.QUERY_PREFIXES.items()]
    operations = []
    for entry in entries:
        base = f"BASE <{entry.base}>\n" if entry.base else ""
        operations.append(f"\n# update {entry.id}, {entry.at}, {entry.kind}\n{base}{entry.update.strip()}")
    return "\n".join(lines) + "\n;".join(operations) + "\n"  # `;` on its own line: never inside a comment


def drop(store_dir: Path, ids: set[int] | None) -> list[Entry]:
    """Remove the entries with these ids (None: all) from the journal; returns those removed."""
    with write_lock(store_dir):
        journal = Journal(store_dir)
        entries = journal.entries()
        known = {e.id for e in entries}
        unknown = sorted((ids or set()) - known)
        if unknown:
            raise QueryError(f"no journaled update {', '.join(map(str, unknown))}; see `iclr-kg updates list`")
        dropped = [e for e in entries if ids is None or e.id in ids]
        journal.keep_only([e for e in entries if e not in dropped])
        return dropped


class Writer:
    """A web process's way to the store's one writer process, which runs `apply` one write at a
    time under a time limit, for every web process of the server.

    One process for all: the writer keeps what the next update needs in memory (its working copy
    of the store, the reasoning state, the reasoner's compiled rules), so an update that came
    through another web process would otherwise find all of it cold, a few hundred milliseconds.
    The first web process that writes starts it (spawned: a RocksDB database opened for writing
    after gunicorn's fork waits forever for background threads that did not survive it); the
    others connect to it (a Unix socket under the temporary directory, an authentication key
    kept in the store with mode 0600). It holds `writer.lock` while it lives, so a second one
    never starts, and it ends with the web process that started it (the next write starts
    another). It takes the query memory limit; at an update's time limit it is killed (its
    flock goes with it, and the partial generation it leaves is pruned).
    """

    def __init__(self, memory_mib: int):
        import multiprocessing

        self._context = multiprocessing.get_context("spawn")
        self._memory_mib = memory_mib
        self._lock = threading.Lock()
        self._conn: Any = None
        self._pid = 0
        self._started: list[Any] = []  # writer processes this one started (reaped in close)

    def apply(
        self,
        store_dir: Path,
        update: str,
        *,
        base: str | None,
        kind: str,
        reasoner: str,
        timeout: float,
        max_derived: int = 0,
    ) -> Entry:
        """Run `update` in the writer: journaled when this returns, published soon after (every
        reader of the server asks for that first: `publish`)."""
        answer = self._ask(store_dir, ("update", str(store_dir), update, base, kind, reasoner, max_derived), timeout)
        return Entry(**answer)

    def publish(self, store_dir: Path, *, reasoner: str, timeout: float) -> None:
        """Have the writer publish every acknowledged update now; returns once it has. Past
        `timeout` the writer is left to finish (it is not killed: publishing is not a runaway
        query, and another reader would only ask again) and StoreError says so."""
        self._ask(store_dir, ("publish", str(store_dir), reasoner), timeout, kill=False)

    def _ask(self, store_dir: Path, request: tuple[Any, ...], timeout: float, kill: bool = True) -> Any:
        deadline = time.monotonic() + timeout
        with self._lock:
            conn = self._handed(store_dir, request, deadline)
            try:
                if not conn.poll(max(0.0, deadline - time.monotonic())):
                    if not kill:
                        self._drop()
                        raise StoreError(f"the store's writer did not publish the last updates within {timeout:g} s")
                    self._kill()
                    raise UpdateTimeout(f"the update was stopped after its time limit of {timeout:g} s")
                answer = conn.recv()
            except (EOFError, OSError):
                self._drop()
                raise StoreError("the update's process died: out of memory (ICLR_KG_QUERY_MEMORY)?") from None
        if isinstance(answer, Failure):
            raise answer.exception()
        return answer

    def _handed(self, store_dir: Path, request: tuple[Any, ...], deadline: float) -> Any:
        """Hand `request` to the writer, which says TAKEN on receiving it: a writer that ended
        before saying so (killed at another web process's time limit) never ran it, and the
        request goes to a new one."""
        for attempt in (1, 2):
            conn = self._connection(store_dir)
            try:
                conn.send(request)
                if conn.poll(max(0.0, deadline - time.monotonic())) and conn.recv() == TAKEN:
                    return conn
                self._kill()
                raise UpdateTimeout("the update was stopped after its time limit: the writer did not take it")
            except (EOFError, OSError):
                self._drop()
                if attempt == 2:
                    raise StoreError("the store's writer process ended twice before taking the update") from None
        raise AssertionError("unreachable")

    def _connection(self, store_dir: Path) -> Any:
        """The connection to the store's writer, which this process starts if none answers."""
        if self._conn is not None:
            return self._conn
        from multiprocessing.connection import Client

        address, key = _writer_address(store_dir), _writer_key(store_dir)
        deadline = time.monotonic() + WRITER_START_SECONDS
        while True:
            try:
                self._conn = Client(address, family="AF_UNIX", authkey=key)
                self._pid = self._conn.recv()  # the writer says who it is (to be stopped at a time limit)
                return self._conn
            except (OSError, EOFError):  # none listens yet, or the one that did is ending
                if time.monotonic() > deadline:
                    raise StoreError("the store's writer process did not start") from None
                if not any(p.is_alive() for p in self._started):
                    self._start(store_dir, address)
                time.sleep(0.02)

    def _start(self, store_dir: Path, address: str) -> None:
        process = self._context.Process(
            target=_writer_main,
            args=(str(store_dir), address, self._memory_mib, os.getpid()),
            daemon=True,
            name="iclr-kg-writer",
        )
        start_without_main(process)
        self._started = [p for p in self._started if p.is_alive()] + [process]

    def _kill(self) -> None:
        with contextlib.suppress(OSError):
            os.kill(self._pid, signal.SIGKILL)
        for process in self._started:
            if process.pid == self._pid:  # ours to reap (another web process's writer is its own)
                process.join(timeout=10)
        self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
        self._conn = None

    def close(self) -> None:
        """End the writer this process started, once it has published what it acknowledged."""
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(EOFError, OSError):
                    self._conn.send(("publish", None, "fast"))
                    deadline = time.monotonic() + 30
                    while self._conn.poll(max(0.0, deadline - time.monotonic())) and self._conn.recv() == TAKEN:
                        pass
            self._drop()
            for process in self._started:
                if process.is_alive():
                    process.kill()
                process.join(timeout=10)
            self._started = []


WRITER_START_SECONDS = 60.0
TAKEN = "taken"  # the writer's first answer to a request: it has it


def _writer_address(store_dir: Path) -> str:
    """Where the store's writer listens: under the temporary directory (a Unix socket's path may
    not be longer than 107 bytes, and a store's may be), named after the store."""
    digest = hashlib.sha256(str(store_dir.resolve()).encode()).hexdigest()[:16]
    return str(Path(tempfile.gettempdir()) / f"iclr-kg-writer-{digest}.sock")


def _writer_key(store_dir: Path) -> bytes:
    """The key a web process proves it may write with (kept in the store, readable by its owner
    only): the socket's own permissions depend on the temporary directory's."""
    path = store_dir / "writer.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        store_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".writer.key-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # the first one written wins
        tmp.unlink()
        return path.read_bytes()


def _writer_main(
    store_dir: str, address: str, memory_mib: int, parent: int
) -> None:  # pragma: no cover - child process
    """The writer process: one `apply` at a time, for every web process that connects."""
    from multiprocessing.connection import Listener

    limit_address_space(memory_mib)
    lock = open(Path(store_dir) / "writer.lock", "a+")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return  # another web process started one first
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)
    listener = Listener(address, family="AF_UNIX", authkey=_writer_key(Path(store_dir)))
    os.chmod(address, 0o600)
    one_at_a_time = threading.Lock()
    # Stopped with the web process that started it (multiprocessing terminates a daemon child
    # at exit): what it acknowledged is published first
    signal.signal(signal.SIGTERM, lambda *_: _publish_and_end(one_at_a_time, address))
    threading.Thread(target=_end_with, args=(parent, one_at_a_time, address), daemon=True).start()
    threading.Thread(target=_publisher, args=(one_at_a_time,), daemon=True).start()
    while True:
        try:
            conn = listener.accept()
        except (OSError, EOFError, AuthenticationError):
            continue
        threading.Thread(target=_serve, args=(conn, one_at_a_time), daemon=True).start()


def _end_with(parent: int, one_at_a_time: threading.Lock, address: str) -> None:  # pragma: no cover
    """End the writer when the web process that started it has gone (killed, not exited),
    after publishing what it acknowledged."""
    while os.getppid() == parent:
        time.sleep(1.0)
    _publish_and_end(one_at_a_time, address)


def _publish_and_end(one_at_a_time: threading.Lock, address: str) -> None:  # pragma: no cover - child process
    """Publish what was acknowledged, remove the socket (the store's lock is still held, so no
    other writer listens there yet) and end."""
    with one_at_a_time:
        for store_dir in list(_PENDING):
            with contextlib.suppress(Exception):  # journaled: the next writer or build publishes it
                publish(store_dir)
        with contextlib.suppress(OSError):
            os.unlink(address)
    os._exit(0)


def _publisher(one_at_a_time: threading.Lock) -> None:  # pragma: no cover - child process
    """Publish each burst of acknowledged updates once it is due (`publish_due`)."""
    while True:
        with one_at_a_time:
            wait = publish_due(time.monotonic())
        if wait is None or wait > 0:
            time.sleep(min(wait if wait is not None else PUBLISH_IDLE, PUBLISH_IDLE))
            continue
        with one_at_a_time:
            try:
                publish_due_bursts()
            except Exception:  # noqa: BLE001 - journaled: a reader's request or the next update catches up
                traceback.print_exc()


def _serve(conn: Any, one_at_a_time: threading.Lock) -> None:  # pragma: no cover - child process
    conn.send(os.getpid())
    while True:
        try:
            request = conn.recv()
            conn.send(TAKEN)
        except (EOFError, OSError):
            return
        with one_at_a_time:
            answer = _answer(request)
        try:
            conn.send(answer)
        except OSError:
            return


def _answer(request: tuple[Any, ...]) -> Any:  # pragma: no cover - child process
    try:
        if request[0] == "publish":
            for store_dir in [Path(request[1])] if request[1] else list(_PENDING):
                publish(store_dir, reasoner=request[2])
            return None
        _, store_dir, update, base, kind, reasoner, max_derived = request
        entry = apply(
            Path(store_dir), update, base=base, kind=kind, reasoner=reasoner, max_derived=max_derived, defer=True
        )
    except MemoryError:
        exit_out_of_memory()
    except IclrKgError as exc:
        return Failure.of(exc)
    except OSError as exc:  # LOAD could not fetch
        return Failure.of(ExternalServiceError(f"the update could not fetch what it loads: {exc}"))
    except RuntimeError as exc:  # RocksDB reports damage and I/O failures as RuntimeError
        return Failure.of(StoreError(f"the update failed in the store: {exc}"))
    except Exception as exc:  # noqa: BLE001 - a defect of ours: 500, and its traceback in the log
        traceback.print_exc()
        return Failure.of(exc)
    return asdict(entry)
