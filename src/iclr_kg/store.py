"""The on-disk Oxigraph store: atomic publication of a new build, read-only opening, a build lock.

Layout of a store directory:

    STORE/current            symlink to the generation being served
    STORE/generations/<id>/  one Oxigraph database per successful build
    STORE/build.lock         held (flock) while a build runs
    STORE/write.lock         held (flock) by each update, and by a build while it publishes
    STORE/journal.jsonl      every accepted update (updates.py), replayed onto each build

A build writes a new generation beside the old one and swings `current` with an atomic rename
only after everything succeeded, so a failed or killed build leaves the previous store serving.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import io
import itertools
import json
import operator
import os
import pickle
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QueryBoolean,
    QuerySolutions,
    QueryTriples,
    RdfFormat,
    Store,
    Triple,
    Variable,
)

from iclr_kg import vocab
from iclr_kg.atomic import write_text
from iclr_kg.errors import Failure, QueryError, StoreError, engine_errors
from iclr_kg.graph import solutions
from iclr_kg.processes import limit_address_space
from iclr_kg.query.federation import check_services
from iclr_kg.query.lint import friendly_syntax
from iclr_kg.query.querytext import check_nesting, check_patterns, with_values

KEEP_GENERATIONS = 2
KEEP_SECONDS = 300  # a generation replaced less than this ago stays, for the queries still reading it


_resolved: dict[tuple[str, str], Path] = {}


def current_generation(store_dir: Path) -> Path | None:
    """The generation directory `current` points at, or None if there is no store yet.

    Called on every request by the web app, so it costs one readlink; the resolved path of a
    link target seen before is remembered.
    """
    try:
        target = os.readlink(os.path.join(store_dir, "current"))
    except OSError:
        return None
    key = (str(store_dir), target)
    resolved = _resolved.get(key)
    if resolved is None:
        resolved = (store_dir / target).resolve()
        if not resolved.is_dir():
            return None
        _resolved[key] = resolved
    return resolved


def open_read_only(store_dir: Path, generation: Path | None = None) -> Store:
    """Open `generation` (by default the current one) for reading; a clear error if there is
    none or it is corrupt."""
    generation = generation or current_generation(store_dir)
    if generation is None:
        raise StoreError(f"no store at {store_dir}: run `iclr-kg build --store {store_dir}` first")
    with engine_errors(f"the store at {generation} cannot be opened: reading it"):
        return Store.read_only(str(generation))


@contextlib.contextmanager
def build_lock(store_dir: Path) -> Iterator[None]:
    """Hold the store's build lock; a second concurrent build is refused, not queued. A build
    that made the store's folder and failed before anything was published takes it away again
    (an empty folder holding `build.lock` read as a store that is there)."""
    made = not store_dir.exists()
    store_dir.mkdir(parents=True, exist_ok=True)
    with open(store_dir / "build.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"another build of {store_dir} is running; try again when it ends") from None
        try:
            yield
        except BaseException:
            if made and [p.name for p in store_dir.iterdir()] == ["build.lock"]:
                (store_dir / "build.lock").unlink()
                store_dir.rmdir()
            raise
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


T = TypeVar("T")
CHUNK = 100_000  # quads between two progress reports while loading


def publish(
    store_dir: Path,
    quads: Iterable[Sequence[Any]],
    finish: Callable[[Store], dict[str, Any]] | None = None,
    loaded: Callable[[int], None] | None = None,
    graphs: Mapping[NamedNode, Iterable[tuple[Any, Any, Any]]] | None = None,
) -> Path:
    """Load `quads` (pyoxigraph's, or tuples of their terms: rdf.TermQuad), and the triples of
    `graphs` (graph -> triples of pyoxigraph terms: the build's inferred graph), into a new
    generation and make it current. Call under `build_lock`.

    `finish` runs on the loaded database under the write lock, just before it is published (the
    build replays the update journal there); what it returns is recorded in the marker.
    A generation counts as built only once its marker `<id>.complete` exists beside it, written
    after the database is flushed and closed; a build killed before that leaves a folder that
    the next build removes, and pruning never counts it among the generations to keep.
    `loaded(n)` is told as quads go in (for a progress bar).
    """
    from iclr_kg.index import build_index  # here: query workers import this module, not the index

    def fill(store: Store, generation: Path) -> Callable[[Store, dict[str, Any]], None]:
        _load_merged(store, quads, loaded or (lambda n: None), graphs or {})

        def index(db: Store, record: dict[str, Any]) -> None:
            build_index(db, generation)

        return index

    return _publish_new(store_dir, None, fill, finish)


def publish_changed(
    store_dir: Path,
    base: Path,
    change: Callable[[Store, Path], Callable[[Store, dict[str, Any]], None]],
    finish: Callable[[Store], dict[str, Any]] | None = None,
) -> Path:
    """A new generation made from `base` (a RocksDB checkpoint: hard links, about a
    millisecond) by `change(store, generation)`, published as `publish` does. `change` returns
    what writes the generation's index, told what `finish` recorded; it may raise to publish
    nothing."""
    return _publish_new(store_dir, base, change, finish)


def _publish_new(
    store_dir: Path,
    base: Path | None,
    fill: Callable[[Store, Path], Callable[[Store, dict[str, Any]], None]],
    finish: Callable[[Store], dict[str, Any]] | None,
) -> Path:

    generations = store_dir / "generations"
    generations.mkdir(parents=True, exist_ok=True)
    # Names sort in time order (pruning keeps the newest by name): two builds in one second
    # were once ordered by their process ids, and the newer good generation was pruned.
    now = time.time_ns()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now // 10**9))
    generation = generations / f"{stamp}-{now % 10**9:09d}-{os.getpid()}"
    try:
        with _loading(generation):
            if base is not None:
                Store.read_only(str(base)).backup(str(generation))
            store = Store(str(generation))
            write_index = fill(store, generation)
            with write_lock(store_dir):
                record = finish(store) if finish is not None else {}
                write_index(store, record)
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


@contextlib.contextmanager
def write_lock(store_dir: Path) -> Iterator[None]:
    """The store's one-writer lock: held for each update (from any web process) and while a build
    replays the update journal and publishes, so no update falls between the two."""
    store_dir.mkdir(parents=True, exist_ok=True)
    with open(store_dir / "write.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def complete_generation(generation: Path, record: dict[str, Any]) -> None:
    """Mark a flushed and closed generation complete; `record` says what it holds (journal id)."""
    write_text(_marker(generation), json.dumps(record), durable=True)


def generation_record(generation: Path) -> dict[str, Any]:
    """What `complete_generation` recorded (empty for generations from before records)."""
    try:
        text = _marker(generation).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return json.loads(text) if text.strip() else {}


JOURNAL = "journal.jsonl"  # the accepted updates, beside the generations (updates.Journal)
_covered: dict[Path, int] = {}  # generation -> the journal's length in bytes it holds (once recorded)


def journal_behind(store_dir: Path, generation: Path) -> bool:
    """Whether the journal holds an update `generation` lacks: the writer acknowledges an update
    once it is journaled and publishes its generation a little later, with the next ones, so a
    reader that must see every acknowledged update asks the writer to publish first. One stat
    of the journal (its length grows with each update) against the length the generation's
    record says it holds; a generation recorded without one is behind while a journal exists."""
    try:
        size = os.stat(store_dir / JOURNAL).st_size
    except FileNotFoundError:
        return False
    covered = _covered.get(generation)
    if covered is None:
        covered = generation_record(generation).get("journal_bytes", -1)
        if covered >= 0:
            if len(_covered) > 1000:  # generations come and go: forget the old ones
                _covered.clear()
            _covered[generation] = covered
    return size > max(covered, 0)


def publish_generation(store_dir: Path, generation: Path, prune: bool = True) -> None:
    """Swing `current` to a complete generation (an atomic rename) and prune old ones (unless
    `prune` is False: a burst of updates prunes once a second, not after each)."""
    tmp_link = store_dir / f".current-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp_link.unlink()
    tmp_link.symlink_to(generation.relative_to(store_dir))
    os.replace(tmp_link, store_dir / "current")
    if prune:
        _prune(store_dir / "generations", keep=generation)


def _marker(generation: Path) -> Path:
    return generation.with_name(generation.name + ".complete")


def reasoned_path(generation: Path) -> Path:
    """Beside a generation: what an incremental build or update needs from it (the closure's
    hidden facts, quads per graph; build/incremental.py, maintained.py)."""
    return generation.with_name(generation.name + ".reasoned")


def kept_beside(generation: Path, name: str) -> Path:
    """Beside a generation: a result derived from it and read often (`/stats`' counts), kept so
    that every web process and every restart reads it instead of counting again; pruned with it."""
    return generation.with_name(f"{generation.name}.{name}.json")


def prune_kept_beside(current: Path) -> list[str]:
    """For a remote engine's publications (`STORE/remote/<engine>/<generation>`, whose data lives
    in the engine): remove what was kept beside generations other than `current` (indexes,
    answers, counts), except the newest other one and any written within KEEP_SECONDS, which a
    reader may still be on. Returns the generation names pruned. Without this, every publication
    left its index and answers behind for good."""
    others: dict[str, list[os.DirEntry[str]]] = {}
    for entry in os.scandir(current.parent):
        name = entry.name.lstrip(".").split(".", 1)[0]
        if name != current.name:
            others.setdefault(name, []).append(entry)
    newest = {name: max(e.stat(follow_symlinks=False).st_mtime for e in entries) for name, entries in others.items()}
    spared = set(sorted(newest, key=newest.__getitem__)[-1:]) | {
        name for name, at in newest.items() if at > time.time() - KEEP_SECONDS
    }
    pruned = sorted(set(others) - spared)
    for name in pruned:
        for entry in others[name]:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
    return pruned


def save_reasoned(generation: Path, state: dict[str, Any]) -> None:
    """Keep `state` beside a published `generation`, whole or not at all. If it cannot be written
    (a full disk), the next build or update recomputes what it would have spared; nothing else
    is lost."""
    path = reasoned_path(generation)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)


def load_reasoned(generation: Path) -> dict[str, Any]:
    """The state `save_reasoned` kept beside `generation` (raises whatever reading it raises)."""
    return pickle.loads(reasoned_path(generation).read_bytes())


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
    At 50,000 papers this takes 49-57 s where `bulk_extend` took 74 s (a Python Quad made for
    every default-graph copy, and more files for RocksDB to compact while the index is read).
    The triples of `graphs` follow, and none is kept.
    A parser gives blank nodes new names, so the few quads with one (the ontology's restrictions
    and lists) are set aside and added by `bulk_extend` after the stream, their names kept.
    (`lenient`: the text is pyoxigraph's own (`_Texts`), and needs no check.)"""
    aside: list[Quad] = []
    texts = _Texts()
    runs = itertools.chain(  # a run of quads in one graph (a source's), then each graph of triples
        itertools.groupby(quads, key=operator.itemgetter(3)), graphs.items()
    )  # read lazily: a group of `groupby` is gone once the next is asked for
    stream = itertools.chain.from_iterable(
        _graph_chunks(graph, triples, texts, loaded, aside) for graph, triples in runs
    )
    store.bulk_load(input=byte_reader(stream), format=RdfFormat.N_QUADS, lenient=True)
    if aside:
        default = DefaultGraph()
        store.bulk_extend(quad for q in aside for quad in (q, Quad(q.subject, q.predicate, q.object, default)))
        loaded(2 * len(aside))


class _Texts(dict[Any, str]):
    """Each term's N-Triples text, made once: `str` of a pyoxigraph term is that text. Emptied
    when it holds more than `KEPT` (the data's literals are mostly said once)."""

    KEPT = 500_000

    def __missing__(self, term: Any) -> str:
        text = self[term] = str(term)
        return text


def _graph_chunks(
    graph: Any, triples: Iterable[Sequence[Any]], texts: _Texts, loaded: Callable[[int], None], aside: list[Quad]
) -> Iterator[bytes]:
    """The lines of `graph`'s triples (or quads of that graph: their first three terms), as N-Quads
    and then as N-Triples, a chunk at a time, joined from each term's text: a pyoxigraph Quad made
    per triple, only to be serialized, was half the time (the 865,763 inferred triples of 10,000
    papers: 2.2 s, now 1.2 s). Both texts are the bytes pyoxigraph's serializer writes (compared
    on those triples)."""
    in_graph, end = (" .\n" if isinstance(graph, DefaultGraph) else f" {texts[graph]} .\n"), " .\n"
    for chunk in batched(triples):
        lines = _lines(chunk, texts)
        quads = in_graph.join(lines) + in_graph
        if "_:" in quads or "<<" in quads:  # a blank node or a quoted triple, or a literal that says so
            kept = []
            for terms, line in zip(chunk, lines, strict=True):
                if _has_blank_node(terms):
                    aside.append(Quad(terms[0], terms[1], terms[2], graph))
                else:
                    kept.append(line)
            lines, quads = kept, "".join(line + in_graph for line in kept)
        if lines:
            yield quads.encode()
            yield (end.join(lines) + end).encode()
        loaded(2 * len(lines))


def _lines(chunk: Sequence[Sequence[Any]], texts: _Texts) -> list[str]:
    """Each triple's (or quad's first three terms') N-Triples line, without its final " .\n"."""
    if len(texts) > texts.KEPT:
        texts.clear()
    return [f"{texts[t[0]]} {texts[t[1]]} {texts[t[2]]}" for t in chunk]


def ntriples(triples: Iterable[Sequence[Any]]) -> Iterator[bytes]:
    """The triples (or quads' first three terms, read as one graph) as N-Triples text, a chunk at
    a time, blank nodes by their labels: for `byte_reader`."""
    texts, end = _Texts(), " .\n"
    for chunk in batched(triples):
        yield (end.join(_lines(chunk, texts)) + end).encode()


def batched(items: Iterable[T], size: int = CHUNK) -> Iterator[tuple[T, ...]]:
    """Tuples of `size` items (itertools.batched, which Python 3.11 lacks)."""
    iterator = iter(items)
    while chunk := tuple(itertools.islice(iterator, size)):
        yield chunk


def drain(items: list[T]) -> Iterator[T]:
    """The items of `items` in order, the list emptied a chunk at a time as they are read: what a
    build streams into the store is let go of while the stream goes on (at 50,000 papers its
    asserted tuples and their literals take about 0.5 GB, beside the bulk loader's own
    1.4-1.8 GB)."""
    items.reverse()
    while items:
        chunk = items[-CHUNK:]
        del items[-CHUNK:]
        chunk.reverse()
        yield from chunk


def byte_reader(chunks: Iterator[bytes]) -> io.BufferedReader:
    """A file to read `chunks` from, one after another, each made when the reader gets to it:
    how text serialized a chunk at a time reaches a pyoxigraph parser as one document."""
    return io.BufferedReader(_ByteChunks(chunks), 1 << 20)


class _ByteChunks(io.RawIOBase):
    def __init__(self, chunks: Iterator[bytes]):
        self.chunks = chunks
        self.buffer, self.at = memoryview(b""), 0

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while self.at >= len(self.buffer):
            text = next(self.chunks, None)
            if text is None:
                return 0
            self.buffer, self.at = memoryview(text), 0
        size = min(len(target), len(self.buffer) - self.at)
        target[:size] = self.buffer[self.at : self.at + size]
        self.at += size
        return size


def _has_blank_node(terms: Sequence[Any]) -> bool:
    """A blank node among a triple's or quad's terms (a quoted triple counts: it may hold one)."""
    return any(isinstance(term, (BlankNode, Triple)) for term in terms)


def _prune(generations: Path, keep: Path) -> None:
    """Delete partial generations (killed builds and updates, not one a build is loading) and
    complete ones that are neither among the newest KEEP_GENERATIONS nor replaced less than
    KEEP_SECONDS ago, so that queries still running on them finish (each update makes one).

    A burst of updates leaves thousands of generations inside KEEP_SECONDS, and this runs after
    each: one listing of the folder, and a generation an update made is dated by its name
    (`_made_at`), not by reading its marker."""
    entries = {entry.name: entry for entry in os.scandir(generations)}
    folders = sorted(name for name, entry in entries.items() if entry.is_dir(follow_symlinks=False))
    complete = [name for name in folders if f"{name}.complete" in entries or name == keep.name]
    recent = time.time() - KEEP_SECONDS
    replaced_recently = {
        older
        for older, newer in itertools.pairwise(complete)
        if f"{newer}.complete" in entries and _made_at(entries[f"{newer}.complete"], newer) > recent
    }
    newest, completed = set(complete[-KEEP_GENERATIONS:]), set(complete)
    kept, gone = [], []
    for name in folders:
        if name == keep.name or name in newest or name in replaced_recently:
            kept.append(name)
        elif name not in completed and (being_written(generations / name) or _loader_alive(generations / name)):
            kept.append(name)  # a build or an update making it in another process
        else:
            gone.append(name)
    if not gone:
        return
    # An update's index is a link to the index it patched (index.patch_index, in place): that file
    # stays while a kept generation links to it, and goes with the last one.
    from iclr_kg.index import SUFFIX as index

    linked = {
        os.readlink(entries[n + index].path) if entries[n + index].is_symlink() else n + index
        for n in kept
        if n + index in entries
    }
    beside: dict[str, list[str]] = {}
    for name in entries:
        beside.setdefault(name.split(".", 1)[0], []).append(name)
    for name in gone:
        shutil.rmtree(generations / name, ignore_errors=True)
        for other in beside.get(name, []):  # its marker, index, reasoning state, kept results
            if other != name and _database_of(other) not in linked:
                (generations / other).unlink(missing_ok=True)
    for name, entry in entries.items():  # an index the generations that linked to it outlived
        owner = name.split(".", 1)[0]
        if index in name and not entry.is_symlink() and owner not in entries and _database_of(name) not in linked:
            (generations / name).unlink(missing_ok=True)


def _database_of(name: str) -> str:
    """The SQLite file a file's name belongs to: its write-ahead log and shared memory go with it."""
    return name.removesuffix("-wal").removesuffix("-shm")


def _made_at(marker: os.DirEntry[str], name: str) -> float:
    """When a generation was completed: an update's from its name (`<build>~<time_ns>`, named as
    it is made, in a few milliseconds), a build's from its marker (a build takes minutes)."""
    stamp = name.rpartition("~")[2]
    if name != stamp and stamp.isdigit():
        return int(stamp) / 1e9
    return marker.stat().st_mtime


def _loading_marker(generation: Path) -> Path:
    return generation.with_name(f"{generation.name}.loading")


@contextlib.contextmanager
def _loading(generation: Path) -> Iterator[None]:
    """Say, for the time a generation is being made, which process makes it: `<id>.loading`
    holds its pid, written before the folder exists. RocksDB creates the folder before it locks
    it, and a prune by another process in between took the folder for a killed build's and
    deleted it under the loader."""
    marker = _loading_marker(generation)
    marker.write_text(str(os.getpid()), encoding="ascii")
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


def _loader_alive(folder: Path) -> bool:
    try:
        pid = int(_loading_marker(folder).read_text(encoding="ascii"))
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def being_written(folder: Path) -> bool:
    """Whether a live process holds the database open for writing (RocksDB's POSIX lock on LOCK)."""
    try:
        with open(folder / "LOCK", "rb+") as handle:
            try:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.lockf(handle, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def generations(store_dir: Path) -> list[Path]:
    """The complete generations of a store, oldest first (the current one among them)."""
    folder = (store_dir / "generations").resolve()  # as `current_generation` gives it (a store behind a link)
    if not folder.is_dir():
        return []
    current = current_generation(store_dir)
    return sorted(p for p in folder.iterdir() if p.is_dir() and (_marker(p).exists() or p == current))


def _read_everything(path: str, memory_mib: int, answer: Connection) -> None:  # pragma: no cover - child process

    limit_address_space(memory_mib)
    try:
        store = Store.read_only(path)
        quads = sum(1 for _ in store.quads_for_pattern(None, None, None, None))
        predicates = {q.predicate for q in store.quads_for_pattern(None, None, None, DefaultGraph())}
        # each predicate's quads come through the predicate-first indexes, the stats through others
        by_predicate = sum(sum(1 for _ in store.quads_for_pattern(None, p, None, None)) for p in predicates)
        for stats in (STATS_GRAPHS, STATS_CLASSES):
            for _ in solutions(store.query(stats, prefixes=vocab.QUERY_PREFIXES)):
                pass
        answer.send((quads, by_predicate))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the damage found
        answer.send(Failure.of(StoreError(f"{type(exc).__name__}: {exc}")))


def check_generation(generation: Path, memory_mib: int = 2048, timeout: float = 600) -> tuple[bool, str]:
    """Read every quad of a generation in a child process (a damaged file can abort the reader or
    make it allocate without bound; the child has a memory limit and a time limit)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_read_everything, args=(str(generation), memory_mib, child), daemon=True)
    process.start()
    child.close()
    try:
        if not parent.poll(timeout):
            return False, f"reading it took longer than {timeout:g} s"
        answer = parent.recv()
    except EOFError:
        process.join(timeout=5)
        return False, f"the reader died (exit {process.exitcode}): damaged or out of memory"
    finally:
        if process.is_alive():
            process.kill()
        process.join(timeout=5)
        parent.close()
    if isinstance(answer, Failure):
        return False, answer.message
    return True, f"{answer[0]} quads read, {answer[1]} again by predicate, statistics computed"


STATS_GRAPHS = """
SELECT ?graph (COUNT(*) AS ?triples) WHERE { GRAPH ?graph { ?s ?p ?o } }
GROUP BY ?graph ORDER BY ?graph
"""
STATS_CLASSES = """
SELECT ?class (COUNT(DISTINCT ?entity) AS ?entities)
WHERE { ?entity a ?class . FILTER (STRSTARTS(STR(?class), STR(iclr:))) }
GROUP BY ?class ORDER BY DESC(?entities) ?class
"""


def built_on(generation: str | None) -> str | None:
    """The date a generation was built, from its name (`20261201T133135...`); None where the name
    says none, as a remote engine's publication record may (it is not ours to trust)."""
    try:
        return dt.datetime.strptime((generation or "")[:15], "%Y%m%dT%H%M%S").date().isoformat()
    except ValueError:
        return None


def query_graphs(store: Store, include_inferred: bool = True) -> list[NamedNode]:
    """The named graphs that make up the default graph of queries."""
    graphs = [g for g in store.named_graphs() if isinstance(g, NamedNode)]
    if include_inferred:
        return graphs
    return [g for g in graphs if g.value != vocab.GRAPH_INFERRED]


@contextlib.contextmanager
def _query_errors(text: str, failed: str, refused: tuple[type[Exception], ...]) -> Iterator[None]:
    """What the engine raises for a query or an update text, as the QueryError a client reads:
    a syntax error in words with its line and column (`lint.friendly_syntax`), the `refused`
    errors with the engine's own message. (An update's OSError is LOAD failing to fetch: the
    writer reports that as the outside service's fault, so it passes through.)"""
    try:
        yield
    except SyntaxError as exc:
        raise QueryError(friendly_syntax(str(exc), text).message) from None
    except refused as exc:
        raise QueryError(f"{failed}: {exc}") from None


def run_update(store: Store, text: str, base: str | None) -> None:
    """Run SPARQL Update `text` on `store` with our prefixes; a syntax error or a refusal
    becomes a QueryError with the parser's message in words (`lint.friendly_syntax`)."""
    with _query_errors(text, "the update failed", (ValueError,)):
        try:
            store.update(text, base_iri=base, prefixes=vocab.QUERY_PREFIXES)
        except RuntimeError as exc:  # also RocksDB's failures: only the graph's existence is the request's fault
            if _GRAPH_EXISTENCE.fullmatch(str(exc)):
                raise QueryError(f"the update failed: {exc} (SILENT makes that no error)") from None
            raise


# What Oxigraph raises (as RuntimeError) for CREATE of a graph that is there, or DROP, CLEAR, ADD,
# COPY, MOVE of one that is not: SPARQL 1.1 Update says the operation fails, unless SILENT.
_GRAPH_EXISTENCE = re.compile(r"The graph \S+ (does not exist|already exists)")


def run_query(
    store: Store,
    sparql: str,
    *,
    include_inferred: bool = True,
    substitutions: dict[Variable, NamedNode | Literal] | None = None,
    default_graph: list[NamedNode] | None = None,
    named_graphs: list[NamedNode] | None = None,
    services: tuple[str, ...] | None = None,
    base: str | None = None,
) -> QueryBoolean | QuerySolutions | QueryTriples:
    """Run a SPARQL query whose default graph is the merge of all graphs (inferred optional).

    The store's own default graph holds that merge, built once by `publish`, so a triple stated
    by two articles is one triple, as RDF merge semantics says. Without the inferred graph the
    default graph is the list of the other graphs, where such a triple counts once per graph.

    A syntax error becomes a QueryError carrying the parser's message and position. SERVICE
    may only call the endpoints in `services` (default: the configured allow-list). Relative
    IRIs resolve against `base` (the endpoint's URL on the web; SPARQL Protocol §2.1.4).
    """
    check_nesting(sparql)
    check_patterns(sparql)
    bound = {v.value: t.value for v, t in (substitutions or {}).items() if isinstance(t, NamedNode)}
    if services is None:  # the settings, imported here: a query worker always passes its allow-list
        from iclr_kg.config import Settings

        services = Settings.from_env().services
    check_services(sparql, services, vocab.QUERY_PREFIXES, bound)
    if default_graph is None and not include_inferred:
        default_graph = query_graphs(store, include_inferred=False)
    if substitutions:  # written in, not `substitutions=`: pyoxigraph plans before it binds them
        sparql = with_values(sparql, substitutions)
    with _query_errors(sparql, "query failed", (OSError, ValueError, RuntimeError)):
        return store.query(
            sparql,
            prefixes=vocab.QUERY_PREFIXES,
            base_iri=base,
            default_graph=list(default_graph) if default_graph is not None else None,
            named_graphs=list(named_graphs) if named_graphs is not None else None,
        )
