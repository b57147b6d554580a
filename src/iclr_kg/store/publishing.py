"""A new generation made and published: loaded (the named graphs and their merge, the default
graph), indexed, marked complete, `current` swung to it, and the generations no longer needed
pruned (never one a query may still read)."""

from __future__ import annotations

import contextlib
import gc
import itertools
import operator
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyoxigraph import (
    DefaultGraph,
    NamedNode,
    Quad,
    RdfFormat,
    Store,
)

from iclr_kg.errors import StoreError
from iclr_kg.store.checking import vouch_intact
from iclr_kg.store.generations import (
    complete_generation,
    current_generation,
    held_while_loading,
    open_for_writing_here,
)
from iclr_kg.store.loading import TermTexts, byte_reader, graph_chunks
from iclr_kg.store.locks import write_lock
from iclr_kg.store.pruning import prune_generations

Ready = Callable[[Store, Path], object]  # what is made for readers before a generation is served


def publish(
    store_dir: Path,
    quads: Iterable[Sequence[Any]],
    finish: Callable[[Store], dict[str, Any]] | None = None,
    loaded: Callable[[int], None] | None = None,
    graphs: Mapping[NamedNode, Iterable[tuple[Any, Any, Any]]] | None = None,
    prepare: Callable[[Store], dict[str, Any]] | None = None,
    ready: Ready | None = None,
) -> Path:
    """Load `quads` (pyoxigraph's, or tuples of their terms: rdf.TermQuad), and the triples of
    `graphs` (graph -> triples of pyoxigraph terms: the build's inferred graph), into a new
    generation and make it current. Call under `build_lock`.

    `prepare` runs on the loaded database before the write lock is taken (the build replays the
    journal as it stands there), and the index is written after it, still outside the lock.
    `finish` runs under the write lock, just before the generation is published (the build
    replays the entries journaled since); what it returns is recorded in the marker, and the
    index is written again there unless `prepare` ran and `finish` says it left the database
    as it was (`"changed": False`, not recorded).
    A generation counts as built only once its marker `<id>.complete` exists beside it, written
    after the database is flushed and closed; a build killed before that leaves a folder that
    the next build removes, and pruning never counts it among the generations to keep.
    `loaded(n)` is told as quads go in (for a progress bar). `ready(db, generation)` runs last,
    on the whole database, before `current` swings: what readers would otherwise wait for (the
    saved queries' answers, query/kept.py), kept beside the generation.
    """
    from iclr_kg.index import build_index  # here: query workers import this module, not the index

    def fill(store: Store, generation: Path) -> Callable[[Store, dict[str, Any]], None]:
        _load_merged(store, quads, loaded or (lambda n: None), graphs or {})

        def index(db: Store, record: dict[str, Any]) -> None:
            build_index(db, generation)

        return index

    return _publish_new(store_dir, None, fill, finish, prepare, ready)


def publish_changed(
    store_dir: Path,
    base: Path,
    change: Callable[[Store, Path], Callable[[Store, dict[str, Any]], None]],
    finish: Callable[[Store], dict[str, Any]] | None = None,
    ready: Ready | None = None,
) -> Path:
    """A new generation made from `base` (a RocksDB checkpoint: hard links, about a
    millisecond) by `change(store, generation)`, published as `publish` does. `change` returns
    what writes the generation's index, told what `finish` recorded; it may raise to publish
    nothing."""
    return _publish_new(store_dir, base, change, finish, ready=ready)


def _publish_new(
    store_dir: Path,
    base: Path | None,
    fill: Callable[[Store, Path], Callable[[Store, dict[str, Any]], None]],
    finish: Callable[[Store], dict[str, Any]] | None,
    prepare: Callable[[Store], dict[str, Any]] | None = None,
    ready: Ready | None = None,
) -> Path:

    generations = store_dir / "generations"
    generations.mkdir(parents=True, exist_ok=True)
    # Names sort in time order (pruning keeps the newest by name): two builds in one second
    # were once ordered by their process ids, and the newer good generation was pruned.
    now = time.time_ns()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now // 10**9))
    generation = generations / f"{stamp}-{now % 10**9:09d}-{os.getpid()}"
    try:
        with held_while_loading(generation):
            if base is not None:
                Store.read_only(str(base)).backup(str(generation))
            store = Store(str(generation))
            write_index = fill(store, generation)
            indexed = prepare is not None
            if prepare is not None:
                write_index(store, prepare(store))  # outside the lock: updates go on meanwhile
            with write_lock(store_dir):
                record = finish(store) if finish is not None else {}
                if record.pop("changed", True) or not indexed:
                    write_index(store, record)
                if ready is not None:  # under the lock: an update published meanwhile would be lost
                    ready(store, generation)
                store.flush()
                del store
                complete_generation(generation, record)
                publish_generation(store_dir, generation)
    except BaseException:
        discard_unpublished(store_dir, generation)
        raise
    return generation


def discard_unpublished(store_dir: Path, generation: Path) -> None:
    """After a failure while making `generation`: remove it and its index, unless it became current."""
    from iclr_kg.index import index_path  # here: the index module imports this one

    if current_generation(store_dir) != generation.resolve():
        shutil.rmtree(generation, ignore_errors=True)
        index_path(generation).unlink(missing_ok=True)


def publish_generation(store_dir: Path, generation: Path, prune: bool = True) -> None:
    """Swing `current` to a complete generation (an atomic rename), vouched intact by its writer
    (`checking.vouch_intact`), and prune old ones (unless `prune` is False: a burst of updates
    prunes once a second, not after each)."""
    _closed(generation)
    vouch_intact(generation)
    tmp_link = store_dir / f".current-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp_link.unlink()
    tmp_link.symlink_to(generation.relative_to(store_dir))
    os.replace(tmp_link, store_dir / "current")
    if prune:
        prune_generations(store_dir / "generations", keep=generation)


def _closed(generation: Path) -> None:
    """Make sure no handle of this process writes `generation` any more: RocksDB closes with a
    Store's last reference, and a reference cycle (an exception caught while the update ran
    keeps its frames, and their `db`) kept a writer's handle past `del`, with the collector
    paused (gcpause), until some later collection. Published meanwhile, its background
    compaction deleted table files that readers opening the generation had just read of in its
    MANIFEST ("No such file ... 000066.sst"). One collection breaks such cycles; a handle still
    open after it is a StoreError, and nothing is published."""
    if open_for_writing_here(generation):
        gc.collect()
        if open_for_writing_here(generation):
            raise StoreError(f"{generation} is still open for writing in this process: not published")


def _load_merged(
    store: Store,
    quads: Iterable[Sequence[Any]],
    loaded: Callable[[int], None],
    graphs: Mapping[NamedNode, Iterable[tuple[Any, Any, Any]]],
) -> None:
    """Each quad, and its triple in the default graph: the store dedups, giving the RDF merge.

    The quads are written as N-Quads a chunk at a time, each chunk followed by its triples as
    N-Triples (lines of the default graph), and pyoxigraph's bulk loader reads that as one
    stream: the path `bulk_load` takes from a file, the storage limit bench/build.py measures.
    It is faster than `bulk_extend` (a Python Quad made for every default-graph copy, and more
    files for RocksDB to compact while the index is read: docs/performance.md, measured choices).
    The triples of `graphs` follow, and none is kept.
    A parser gives blank nodes new names, so the few quads with one (the ontology's restrictions
    and lists) are set aside and added by `bulk_extend` after the stream, their names kept.
    (`lenient`: the text is pyoxigraph's own (`TermTexts`), and needs no check.)"""
    aside: list[Quad] = []
    texts = TermTexts()
    runs = itertools.chain(  # a run of quads in one graph (a source's), then each graph of triples
        itertools.groupby(quads, key=operator.itemgetter(3)), graphs.items()
    )  # read lazily: a group of `groupby` is gone once the next is asked for
    stream = itertools.chain.from_iterable(
        graph_chunks(graph, triples, texts, loaded, aside) for graph, triples in runs
    )
    store.bulk_load(input=byte_reader(stream), format=RdfFormat.N_QUADS, lenient=True)
    if aside:
        default = DefaultGraph()
        store.bulk_extend(quad for q in aside for quad in (q, Quad(q.subject, q.predicate, q.object, default)))
        loaded(2 * len(aside))
