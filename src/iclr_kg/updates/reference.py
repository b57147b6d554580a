"""The reference path: an update run on a checkpoint of the current generation, its default graph
settled and the closure recomputed where the update reads it. Slow and plainly right: any
update the fast path cannot maintain takes it, a build replays the journal by it, and the
differential tests hold the fast path equal to it."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyoxigraph import DefaultGraph, NamedNode, Quad, Store, Triple

from iclr_kg import maintained, vocab
from iclr_kg.errors import (
    InconsistentGraph,
    QueryError,
    StoreError,
    TooLarge,
)
from iclr_kg.index import build_index, index_path
from iclr_kg.reasoning.reason import infer_terms
from iclr_kg.sparql.querytext import split_update
from iclr_kg.store import (
    complete_generation,
    discard_unpublished,
    generation_record,
    publish_generation,
    run_update,
)
from iclr_kg.updates.journal import Entry, Journal


def quads_record(state: maintained.State | None) -> dict[str, int]:
    """What a generation's record says of its size: the quads of its named graphs (what
    /health shows without counting them), where the reasoning state knows them."""
    return {"quads": sum(state.counts.values())} if state is not None else {}


def recomputed_write(
    store_dir: Path,
    source: Path,
    journal: Journal,
    update: str | None,
    base: str | None,
    kind: str,
    reasoner: str,
    max_derived: int,
    request: str = "",
) -> Entry:
    """The slow path: the journal's entries `source` lacks and `update` (None: only those) run
    on a checkpoint of `source`, the inferred graph and the index recomputed, published."""
    applied = generation_record(source).get("journal", 0)
    missing = journal.since(applied)
    target, state = _recomputed(source, missing, update, base, reasoner, max_derived)
    try:
        entry = (
            journal.append(kind, update, base, after=applied, request=request) if update is not None else missing[-1]
        )
        complete_generation(target, {"journal": entry.id, "journal_bytes": journal.intact, **quads_record(state)})
        publish_generation(store_dir, target)
    except BaseException:
        discard_unpublished(store_dir, target)
        raise
    if state is not None:
        maintained.save_state(target, state)
    return entry


def next_name(source: Path) -> Path:
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
    target = next_name(source)
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
    db: Store, store_dir: Path, reasoner: str = "fast", state: maintained.State | None = None, after: int = 0
) -> tuple[dict[str, int], maintained.State | None, int]:
    """Run the journal's entries numbered after `after` (0: the whole journal) onto a freshly
    built database (for `build`), each entry exactly as the writer ran it (`apply_entry`), on
    `state`: the build's reasoning state (the closure's hidden facts and quads per graph; None:
    every entry recomputes).

    Returns what the generation's record says it holds (the last id run, the journal's length),
    the reasoning state after the last entry (what the generation keeps beside it) and how many
    entries ran. An entry that cannot run any more is a StoreError naming it and how to give it
    up: the build publishes nothing, and the last good generation stays current."""
    journal = Journal(store_dir)
    key = store_dir / f"replaying-{after}"
    if state is not None:
        maintained.hold(key, state)
    last, count = after, 0
    for entry in journal.since(after):
        following = store_dir / f"replaying-{entry.id}"
        try:
            apply_entry(db, key, following, entry.update, entry.base, reasoner)
        except (QueryError, TooLarge) as exc:
            first = next((line.strip() for line in entry.update.splitlines() if line.strip()), "")
            raise StoreError(
                f"journal entry {entry.id} ({entry.at}, `{first[:80]}`) cannot be replayed onto this build: "
                f"{exc}. Nothing was published; `iclr-kg updates list` shows it, "
                f"`iclr-kg updates drop {entry.id}` gives it up"
            ) from None
        key, last, count = following, entry.id, count + 1
    final = maintained.held(key) if reasoner == "fast" else None
    return {"journal": last, "journal_bytes": journal.intact}, final, count


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
    closure's hidden facts (the fast reasoner's), for the next update (maintained/)."""
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
