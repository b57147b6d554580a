"""`iclr-kg publish`: send the current generation to a SPARQL 1.1 engine, switched to at once.

1. Each named graph, the inferred one included (so an engine without OWL RL answers as we do),
   and the merged default graph (`vocab.GRAPH_MERGED`, see remote/store.py) go to the engine
   under names of the generation's own (`names.published_name`), in chunks of N-Triples through
   the Graph Store Protocol (Oxigraph's server: its bulk loader, `no_transaction`), streamed from
   the store chunk by chunk, never the whole graph in memory.
2. Verified: the engine's triple count of every graph must equal the generation's (else the
   publication record is left as it was, and the new graphs are dropped).
3. The switch: the publication record (`vocab.GRAPH_PUBLICATION`: generation, graphs, sizes),
   which every reader looks up first, is replaced by one small update. Nothing is moved or
   copied on the engine (Oxigraph's server copied a MOVE quad by quad in one transaction held in
   memory: docs/remote.md), and a reader sees the old generation or the new one.
4. The graphs of publications before the previous one are dropped (the previous one's stay
   until the next publish, for the queries still reading them): `STORE/publish/<target>-published.json`
   remembers which.

Resumable: after each chunk the engine accepted, `STORE/publish/<target>.json` records it; a
publish run again (after a crash, a lost connection, Ctrl-C) for the same generation goes on from
the next chunk. A graph's triples with blank nodes go in one request of their own, since a blank
node must not be split across two (each request would make it a different node).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

from pyoxigraph import DefaultGraph, Literal, NamedNode, RdfFormat, Store, Triple

from iclr_kg import vocab
from iclr_kg.atomic import write_text
from iclr_kg.config import Settings
from iclr_kg.errors import EngineError
from iclr_kg.graph import rdf_bytes
from iclr_kg.progress import Progress
from iclr_kg.remote.client import SparqlClient
from iclr_kg.remote.names import Names
from iclr_kg.remote.store import Publication, read_publication
from iclr_kg.store import current_generation, open_read_only

CHUNK_TRIPLES = 50_000
BULK_CHUNK_TRIPLES = 1_000_000  # per request to a bulk loader (Oxigraph's): each request makes files of its own
DROP_TIMEOUT = 3600.0  # seconds the engine may take to drop an old publication's graph


@dataclass
class PublishReport:
    """What a publish did, for the closing lines of the command."""

    engine: str
    generation: str
    graphs: dict[str, int] = field(default_factory=dict)  # graph → triples, as verified on the engine
    resumed_chunks: int = 0
    seconds: float = 0.0
    union_default: bool | None = None  # whether the engine's own default graph is the union of its graphs
    switch_seconds: float = 0.0  # replacing the publication record
    dropped: int = 0  # graphs of older publications dropped
    drop_seconds: float = 0.0

    def summary(self) -> str:
        triples = sum(self.graphs.values())
        resumed = f", {self.resumed_chunks} chunk(s) already sent by an earlier run" if self.resumed_chunks else ""
        default = "the union of its graphs" if self.union_default else "a graph of its own"
        dropped = (
            f"; {self.dropped} graph(s) of older publications dropped in {self.drop_seconds:.1f} s"
            if self.dropped
            else ""
        )
        return (
            f"published generation {self.generation} to {self.engine}: {len(self.graphs)} graphs, "
            f"{triples} triples in {self.seconds:.1f} s (the switch {self.switch_seconds:.2f} s), counts verified{resumed}"
            f"{dropped}; its default graph is "
            f"{default} (our queries name their dataset, so answers are the same either way)"
        )


def _state_path(settings: Settings, url: str) -> Path:
    return settings.store / "publish" / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".json")


def _graphs(store: Store) -> list[tuple[str, NamedNode | DefaultGraph]]:
    """(name on the engine, graph in the store) for every graph to publish, merged last."""
    named = sorted(g.value for g in store.named_graphs() if isinstance(g, NamedNode))
    return [*((name, NamedNode(name)) for name in named), (vocab.GRAPH_MERGED, DefaultGraph())]


def _chunks(store: Store, graph: NamedNode | DefaultGraph, size: int = CHUNK_TRIPLES) -> Iterator[tuple[bytes, int]]:
    """N-Triples of a graph in chunks of `size` triples, each with its triple count, the triples
    with a blank node together in the last one (a blank node split over two requests would become
    two nodes). Written by pyoxigraph's `dump` (in Rust: a triple through Python cost twice the
    engine's loading of it) on a thread of its own, so that the next chunk is made while the
    engine takes this one. The store's order is fixed, so are the chunks."""
    chunks: queue.Queue[tuple[bytes, int] | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def put(item: tuple[bytes, int] | BaseException | None) -> None:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                chunks.put(item, timeout=0.5)
                return

    def produce() -> None:
        try:
            cutter = _Cutter(size, put)
            store.dump(cast(IO[bytes], cutter), RdfFormat.N_TRIPLES, from_graph=graph)  # it calls `write` only
            cutter.close()
            put(None)
        except BaseException as exc:  # noqa: BLE001 - raised again where the chunks are read
            put(exc)

    threading.Thread(target=produce, daemon=True, name="publish-chunks").start()
    try:
        while (item := chunks.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


class _Cutter:
    """Takes a graph's N-Triples as `dump` writes them and hands on chunks of `size` whole lines;
    a line with a blank node (`_:` as subject or object; a literal holding " _:" comes along,
    harmlessly) is kept back for the last chunk."""

    def __init__(self, size: int, put: Callable[[tuple[bytes, int]], None]):
        self.size, self.put = size, put
        self.part, self.lines = bytearray(), 0
        self.blank, self.blank_lines = bytearray(), 0
        self.tail = b""

    def write(self, data: bytes) -> int:
        whole = self.tail + bytes(data)
        end = whole.rfind(b"\n") + 1
        self.tail, body = whole[end:], whole[:end]
        if b"_:" in body:
            kept = []
            for line in body.splitlines(keepends=True):
                if line.startswith(b"_:") or b" _:" in line:
                    self.blank += line
                    self.blank_lines += 1
                else:
                    kept.append(line)
            body = b"".join(kept)
        lines = body.count(b"\n")
        while self.lines + lines >= self.size:  # cut after the line that makes `size`
            at = -1
            for _ in range(self.size - self.lines):
                at = body.find(b"\n", at + 1)
            self.part += body[: at + 1]
            self.put((bytes(self.part), self.size))
            lines -= self.size - self.lines
            body, self.part, self.lines = body[at + 1 :], bytearray(), 0
        self.part += body
        self.lines += lines
        return len(data)

    def flush(self) -> None:
        """(What `dump` calls at the end; the chunks go out on `close`.)"""

    def close(self) -> None:
        if self.tail:
            self.write(b"\n")
        if self.lines:
            self.put((bytes(self.part), self.lines))
        if self.blank_lines:
            self.put((bytes(self.blank), self.blank_lines))


def record_iri(generation: str, part: str = "") -> str:
    """The IRI of a publication's description in the record (`part`: one of its graphs')."""
    return f"{vocab.GRAPH_PUBLICATION}#{generation}{'/' + part if part else ''}"


def _publication_record(generation: str, counts: dict[str, int]) -> bytes:
    """The publication record as N-Triples: an `sd:Dataset` naming the generation, each graph
    with its size (`void:triples`), and the merged default graph's size. Named by IRIs of the
    generation's own, so that the next publication's description goes in beside it before this
    one is deleted (an engine that runs an update's operations one after another never shows
    a reader no record)."""
    sd, void = vocab.SD, vocab.PREFIXES["void"]
    dataset = NamedNode(record_iri(generation))
    triples: list[Triple] = []

    def add(subject: NamedNode, predicate: str, value: NamedNode | Literal) -> None:
        triples.append(Triple(subject, NamedNode(predicate), value))

    add(dataset, vocab.RDF_TYPE.value, NamedNode(sd + "Dataset"))
    add(dataset, vocab.DCTERMS + "identifier", Literal(generation))
    for index, (name, size) in enumerate(sorted(counts.items())):
        graph = NamedNode(record_iri(generation, f"g{index}"))
        if name == vocab.GRAPH_MERGED:
            add(dataset, sd + "defaultGraph", graph)
        else:
            entry = NamedNode(record_iri(generation, f"e{index}"))
            add(dataset, sd + "namedGraph", entry)
            add(entry, vocab.RDF_TYPE.value, NamedNode(sd + "NamedGraph"))
            add(entry, sd + "name", NamedNode(name))
            add(entry, sd + "graph", graph)
        add(graph, vocab.RDF_TYPE.value, NamedNode(sd + "Graph"))
        add(graph, void + "triples", Literal(str(size), datatype=vocab.XSD_INTEGER))
    return rdf_bytes(triples, RdfFormat.N_TRIPLES)


def _switch(client: SparqlClient, generation: str, counts: dict[str, int]) -> None:
    """Make `generation` the one readers read: its description into the record, then every
    other description out of it, in one update (one transaction where the engine has them)."""
    record = _publication_record(generation, counts).decode("utf-8")
    others = (
        f"DELETE {{ GRAPH <{vocab.GRAPH_PUBLICATION}> {{ ?s ?p ?o }} }} WHERE {{ GRAPH <{vocab.GRAPH_PUBLICATION}> "
        f'{{ ?s ?p ?o FILTER (STR(?s) != "{record_iri(generation)}" && !STRSTARTS(STR(?s), "{record_iri(generation, "")}/")) }} }}'
    )
    client.update(f"INSERT DATA {{ GRAPH <{vocab.GRAPH_PUBLICATION}> {{\n{record}}} }} ;\n{others}")


def publish(
    settings: Settings,
    to: str,
    graph_store: str | None = None,
    auth: str | None = None,
    progress: Progress | None = None,
) -> PublishReport:
    """Publish the current generation of `settings.store` to the engine at `to` (module docstring)."""
    started = time.monotonic()
    progress = progress or Progress.silent()
    generation_dir = current_generation(settings.store)
    store = open_read_only(settings.store)
    assert generation_dir is not None  # open_read_only raised otherwise
    generation = generation_dir.name
    client = SparqlClient.connect(to, auth=auth, graph_store=graph_store, timeout=max(settings.query_timeout, 300))
    report = PublishReport(client.engine.describe(), generation)
    previous = read_publication(client)
    state_file = _state_path(settings, to)
    graphs = _still_published(client, previous, generation)
    if graphs is None:
        graphs = _send_and_switch(client, store, generation, previous, state_file, report, progress)
    report.graphs = graphs
    state_file.unlink(missing_ok=True)  # done (also where an earlier run's switch had its answer lost)
    drop_started = time.monotonic()
    names = Names(generation, list(graphs))
    report.dropped = _drop_older(client, settings, to, previous, generation, [names.name(g) for g in graphs])
    report.drop_seconds = time.monotonic() - drop_started
    report.union_default = _default_is_union(client, generation)
    report.seconds = time.monotonic() - started
    return report


def _still_published(client: SparqlClient, previous: Publication | None, generation: str) -> dict[str, int] | None:
    """Each graph's triples on the engine, if `generation` is published there already and the
    engine still holds what the record says; else None (an engine that lost some is sent the
    generation again, over the graphs readers read: the repair of a broken engine)."""
    if previous is None or previous.generation != generation or not previous.renamed:
        return None
    live = {**previous.graphs, vocab.GRAPH_MERGED: previous.merged}
    names = previous.names()
    try:
        found = _verify(client, {names.name(g): n for g, n in live.items()})
    except EngineError:
        return None
    return {g: found[names.name(g)] for g in live}


def _send_and_switch(
    client: SparqlClient,
    store: Store,
    generation: str,
    previous: Publication | None,
    state_file: Path,
    report: PublishReport,
    progress: Progress,
) -> dict[str, int]:
    """Send every graph under its published name (resuming an earlier run), verify the counts,
    then switch the record to `generation`; each graph's triples."""
    state = _load_state(state_file, generation, client, previous)
    report.resumed_chunks = sum(state["sent"].values())
    graphs = _graphs(store)
    names = Names(generation, [name for name, _ in graphs])
    counts = {
        name: _send_graph(client, store, name, graph, names, state, state_file, progress) for name, graph in graphs
    }
    sent = {names.name(name): n for name, n in counts.items()}
    try:  # before the switch: an engine that holds our triples otherwise never serves them
        _verify(client, sent)
    except EngineError:
        if previous is None or previous.generation != generation:  # never the graphs readers read
            _drop(client, sent)
        state_file.unlink(missing_ok=True)
        raise
    switch_started = time.monotonic()
    _switch(client, generation, counts)
    report.switch_seconds = time.monotonic() - switch_started
    return {name: sent[names.name(name)] for name in counts}


def _published_path(settings: Settings, url: str) -> Path:
    state = _state_path(settings, url)
    return state.with_name(state.stem + "-published.json")


def _drop_older(
    client: SparqlClient, settings: Settings, url: str, previous: Publication | None, generation: str, graphs: list[str]
) -> int:
    """Drop the graphs of every publication this store made there before the previous one (that
    one's stay until the next publish: queries that began on it finish); returns how many."""
    path = _published_path(settings, url)
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        history = []
    kept = {generation}
    if previous is not None and previous.generation != generation:
        kept.add(previous.generation)
        names = previous.names()
        history.append({"generation": previous.generation, "graphs": [names.name(g) for g in names.forward]})
    else:  # the one before is not known from the engine (published already): the last this store made
        kept |= {entry["generation"] for entry in history[-1:]}
    older = [entry for entry in history if entry["generation"] not in kept]
    dropped = 0
    for entry in older:
        _drop(client, entry["graphs"])
        dropped += len(entry["graphs"])
    current = {"generation": generation, "graphs": graphs}
    newest = {e["generation"]: e for e in history if e["generation"] in kept}
    newest[generation] = current
    _save_state(path, list(newest.values()))
    return dropped


def _load_state(path: Path, generation: str, client: SparqlClient, published: Publication | None) -> dict:
    """What an earlier run of this publish already sent; a run for another generation that
    never got published is abandoned (its graphs dropped)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        state = None
    if state is not None and state.get("generation") == generation:
        return state
    if state is not None and (published is None or state.get("generation") != published.generation):
        _drop(client, state.get("graphs", []))
    return {"generation": generation, "sent": {}, "graphs": []}


def _drop(client: SparqlClient, graphs: Iterable[str]) -> None:
    """Drop graphs on the engine, one update each (one large graph's drop is one transaction)."""
    for graph in graphs:
        client.update(f"DROP SILENT GRAPH <{graph}>", timeout=DROP_TIMEOUT)


def _save_state(path: Path, state: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(state))


def _send_graph(
    client: SparqlClient,
    store: Store,
    name: str,
    graph: NamedNode | DefaultGraph,
    names: Names,
    state: dict,
    state_file: Path,
    progress: Progress,
) -> int:
    """Send one graph under its published name, chunk by chunk (one request at a time: two at
    once to Virtuoso 7.2 gave answers that differ, though every triple was counted in), skipping
    chunks sent before; its triple count."""
    sent = state["sent"].get(name, 0)
    target = names.name(name)
    if target not in state["graphs"]:
        state["graphs"].append(target)
    total = 0
    label = name.removeprefix(vocab.GRAPH_BASE)
    size = BULK_CHUNK_TRIPLES if client.engine.bulk_params else CHUNK_TRIPLES
    with progress.stage(f"publish {label}", unit="triples") as shown:
        for number, (body, triples) in enumerate(_chunks(store, graph, size)):
            total += triples
            if number < sent:
                shown.advance(triples)
                continue
            client.write_graph(target, names.ntriples(body), replace=number == 0)
            state["sent"][name] = number + 1
            _save_state(state_file, state)
            shown.advance(triples)
    return total


def _default_is_union(client: SparqlClient, generation: str) -> bool:
    """Whether the engine's default graph, asked without a dataset, shows the publication record
    (Oxigraph's server with --union-default-graph and Virtuoso: yes; Fuseki by default: no)."""
    found = client.query(
        f'ASK {{ <{record_iri(generation)}> <{vocab.DCTERMS}identifier> "{generation}" }}', kind="results"
    )
    return bool(found)


def _verify(client: SparqlClient, counts: dict[str, int]) -> dict[str, int]:
    """Each graph's triple count on the engine, which must be the generation's (before the
    switch, so that a mismatch leaves the previous publication serving)."""
    found = {name: client.count(name) for name in counts}
    wrong = [
        f"{name}: {found[name]} on the engine, {counts[name]} here" for name in counts if found[name] != counts[name]
    ]
    if wrong:
        raise EngineError(
            "the engine does not hold the generation's triples (the previous publication still serves): "
            + "; ".join(wrong)
        )
    return found
