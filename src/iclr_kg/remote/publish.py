"""`iclr-kg publish`: send the current generation to a SPARQL 1.1 engine, swapped in at once.

1. Each named graph, the inferred one included (so an engine without OWL RL answers as we do),
   and the merged default graph (`vocab.GRAPH_MERGED`, see remote/store.py) go into staging
   graphs (`urn:iclr-kg:staging:<generation>:<n>`), in chunks of N-Triples through the Graph
   Store Protocol: streamed from the store chunk by chunk, never the whole graph in memory.
2. One SPARQL update then swaps them in: `MOVE` of each staging graph onto its name, `DROP` of
   graphs the previous publication had and this one has not, and the publication record
   (`vocab.GRAPH_PUBLICATION`: generation, graphs, sizes) moved in last. Where one update is one
   transaction (Oxigraph, Fuseki) readers see the old graph or the new one, never a mix.
3. Verified: the engine's triple count of every staging graph must equal the generation's
   before the swap (else nothing is swapped in and the staging graphs are dropped), and of every
   graph after it.

Resumable: after each chunk the engine accepted, `STORE/publish/<target>.json` records it; a
publish run again (after a crash, a lost connection, Ctrl-C) for the same generation goes on from
the next chunk. A graph's triples with blank nodes go in one request of their own, since a blank
node must not be split across two (each request would make it a different node).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Store, Triple, serialize

from iclr_kg import vocab
from iclr_kg.atomic import write_text
from iclr_kg.config import Settings
from iclr_kg.errors import EngineError
from iclr_kg.progress import Progress
from iclr_kg.remote.client import SparqlClient
from iclr_kg.remote.store import read_publication
from iclr_kg.store import current_generation, open_read_only

CHUNK_TRIPLES = 50_000
SWAP_TIMEOUT = 3600.0  # seconds the engine may take to MOVE every graph in (Oxigraph copies them quad by quad)


@dataclass
class PublishReport:
    """What a publish did, for the closing lines of the command."""

    engine: str
    generation: str
    graphs: dict[str, int] = field(default_factory=dict)  # graph → triples, as verified on the engine
    resumed_chunks: int = 0
    seconds: float = 0.0
    union_default: bool | None = None  # whether the engine's own default graph is the union of its graphs
    swap_seconds: float = 0.0  # moving the staging graphs in (one update, or graph by graph)

    def summary(self) -> str:
        triples = sum(self.graphs.values())
        resumed = f", {self.resumed_chunks} chunk(s) already sent by an earlier run" if self.resumed_chunks else ""
        default = "the union of its graphs" if self.union_default else "a graph of its own"
        return (
            f"published generation {self.generation} to {self.engine}: {len(self.graphs)} graphs, "
            f"{triples} triples in {self.seconds:.1f} s (the swap {self.swap_seconds:.1f} s), counts verified{resumed}; "
            "its default graph is "
            f"{default} (our queries name their dataset, so answers are the same either way)"
        )


def _state_path(settings: Settings, url: str) -> Path:
    return settings.store / "publish" / (hashlib.sha256(url.encode()).hexdigest()[:16] + ".json")


def _graphs(store: Store) -> list[tuple[str, object]]:
    """(name on the engine, graph in the store) for every graph to publish, merged last."""
    named = sorted(g.value for g in store.named_graphs() if isinstance(g, NamedNode))
    return [*((name, NamedNode(name)) for name in named), (vocab.GRAPH_MERGED, DefaultGraph())]


def _chunks(store: Store, graph: object) -> Iterator[tuple[bytes, int]]:
    """N-Triples of a graph in chunks of CHUNK_TRIPLES, each with its triple count: first every
    triple with a blank node, together (a blank node split over two requests would become two
    nodes), then the rest. The store's order is fixed, so are the chunks."""

    def blank(quad: Quad) -> bool:
        return isinstance(quad.subject, BlankNode) or isinstance(quad.object, BlankNode)

    pattern = "?s ?p ?o FILTER (isBlank(?s) || isBlank(?o))"  # found by the store, not a Python scan
    where = pattern if isinstance(graph, DefaultGraph) else f"GRAPH {graph} {{ {pattern} }}"
    with_blanks = list(store.query(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {where} }}"))
    if with_blanks:
        yield serialize(with_blanks, format=RdfFormat.N_TRIPLES), len(with_blanks)
    batch: list[object] = []
    for quad in store.quads_for_pattern(None, None, None, graph):
        if blank(quad):
            continue
        batch.append(quad.triple)
        if len(batch) >= CHUNK_TRIPLES:
            yield serialize(batch, format=RdfFormat.N_TRIPLES), len(batch)
            batch = []
    if batch:
        yield serialize(batch, format=RdfFormat.N_TRIPLES), len(batch)


def _publication_record(generation: str, counts: dict[str, int]) -> bytes:
    """The publication record as N-Triples: an `sd:Dataset` naming the generation, each graph
    with its size (`void:triples`), and the merged default graph's size."""
    sd, void = vocab.SD, vocab.PREFIXES["void"]
    dataset = NamedNode(vocab.GRAPH_PUBLICATION)
    triples: list[Triple] = []

    def add(subject: NamedNode | BlankNode, predicate: str, value: NamedNode | BlankNode | Literal) -> None:
        triples.append(Triple(subject, NamedNode(predicate), value))

    add(dataset, vocab.RDF_TYPE.value, NamedNode(sd + "Dataset"))
    add(dataset, vocab.DCTERMS + "identifier", Literal(generation))
    for index, (name, size) in enumerate(sorted(counts.items())):
        graph = BlankNode(f"g{index}")
        if name == vocab.GRAPH_MERGED:
            add(dataset, sd + "defaultGraph", graph)
        else:
            entry = BlankNode(f"e{index}")
            add(dataset, sd + "namedGraph", entry)
            add(entry, vocab.RDF_TYPE.value, NamedNode(sd + "NamedGraph"))
            add(entry, sd + "name", NamedNode(name))
            add(entry, sd + "graph", graph)
        add(graph, vocab.RDF_TYPE.value, NamedNode(sd + "Graph"))
        add(graph, void + "triples", Literal(str(size), datatype=vocab.XSD_INTEGER))
    return serialize(triples, format=RdfFormat.N_TRIPLES)


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
    state_file = _state_path(settings, to)
    state = _load_state(state_file, generation, client)
    report.resumed_chunks = sum(state["sent"].values())
    graphs = _graphs(store)
    counts: dict[str, int] = {}
    staging: dict[str, str] = {}
    for index, (name, graph) in enumerate(graphs):
        staging[name] = f"urn:iclr-kg:staging:{generation}:{index}"
        counts[name] = _send_graph(client, store, name, graph, staging[name], state, state_file, progress)
    staged = {staging[name]: n for name, n in counts.items() if n}
    try:  # before the swap: an engine that holds our triples otherwise never serves them
        _verify(client, staged)
    except EngineError:
        _drop(client, staging.values())
        state_file.unlink(missing_ok=True)
        raise
    record = f"urn:iclr-kg:staging:{generation}:publication"
    client.write_graph(record, _publication_record(generation, counts), replace=True)
    previous = read_publication(client)
    state["swapping"] = True  # from here the staging graphs empty: a run after this one sends all again
    _save_state(state_file, state)
    swap_started = time.monotonic()
    _swap(client, staging, counts, record, previous.named if previous else [])
    report.swap_seconds = time.monotonic() - swap_started
    report.graphs = _verify(client, counts)
    report.union_default = _default_is_union(client, generation)
    state_file.unlink(missing_ok=True)
    report.seconds = time.monotonic() - started
    return report


def _load_state(path: Path, generation: str, client: SparqlClient) -> dict:
    """What an earlier run of this publish already sent; a run for another generation is
    abandoned (its staging graphs dropped)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        state = None
    if state is not None and state.get("generation") == generation and not state.get("swapping"):
        return state
    if state is not None:
        _drop(client, state.get("staging", []))
    return {"generation": generation, "sent": {}, "staging": []}


def _drop(client: SparqlClient, graphs: Iterable[str]) -> None:
    """Drop graphs on the engine (staging graphs that will not be swapped in), in one update."""
    drops = " ;\n".join(f"DROP SILENT GRAPH <{g}>" for g in graphs)
    if drops:
        client.update(drops)


def _save_state(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(state))


def _send_graph(
    client: SparqlClient,
    store: Store,
    name: str,
    graph: object,
    staging: str,
    state: dict,
    state_file: Path,
    progress: Progress,
) -> int:
    """Send one graph into its staging graph, chunk by chunk, skipping chunks sent before; its
    triple count."""
    sent = state["sent"].get(name, 0)
    if staging not in state["staging"]:
        state["staging"].append(staging)
    total = 0
    label = name.removeprefix(vocab.GRAPH_BASE)
    with progress.stage(f"publish {label}", unit="triples") as shown:
        for number, (body, triples) in enumerate(_chunks(store, graph)):
            total += triples
            if number < sent:
                shown.advance(triples)
                continue
            client.write_graph(staging, body, replace=number == 0)
            state["sent"][name] = number + 1
            _save_state(state_file, state)
            shown.advance(triples)
    return total


def _swap(client: SparqlClient, staging: dict[str, str], counts: dict[str, int], record: str, old: list[str]) -> None:
    """Every staging graph onto its name, graphs no longer published dropped, the publication
    record last: in one update where the engine runs one update as one transaction; else graph
    by graph, each copied, counted (and copied again if it came out short) and only then its
    staging graph dropped. Virtuoso 7.2 lost a few thousand of 6.5 million triples in some
    one-request swaps here, nondeterministically; a copy is checked before anything is lost."""
    drops = [f"DROP SILENT GRAPH <{name}>" for name in old if name not in staging]
    drops += [f"DROP SILENT GRAPH <{name}>" for name in staging if not counts[name]]
    last = f"MOVE SILENT <{record}> TO <{vocab.GRAPH_PUBLICATION}>"
    if client.engine.atomic_updates:
        moves = [f"MOVE SILENT <{staging[name]}> TO <{name}>" for name in staging if counts[name]]
        client.update(" ;\n".join([*moves, *drops, last]), timeout=SWAP_TIMEOUT)
        return
    for name in (n for n in staging if counts[n]):
        for attempt in range(3):
            client.update(f"COPY SILENT <{staging[name]}> TO <{name}>", timeout=SWAP_TIMEOUT)
            if client.count(name) == counts[name]:
                break
            if attempt == 2:
                raise EngineError(f"the engine keeps losing triples copying {name}; its staging graph is kept")
        client.update(f"DROP SILENT GRAPH <{staging[name]}>")
    client.update(" ;\n".join([*drops, last]), timeout=SWAP_TIMEOUT)


def _default_is_union(client: SparqlClient, generation: str) -> bool:
    """Whether the engine's default graph, asked without a dataset, shows the publication record
    (Oxigraph's server with --union-default-graph and Virtuoso: yes; Fuseki by default: no)."""
    found = client.query(
        f'ASK {{ <{vocab.GRAPH_PUBLICATION}> <{vocab.DCTERMS}identifier> "{generation}" }}', kind="results"
    )
    return bool(found)


def _verify(client: SparqlClient, counts: dict[str, int]) -> dict[str, int]:
    """Each graph's triple count on the engine, which must be the generation's (staging graphs
    before the swap, so that a mismatch leaves the previous publication serving; the graphs
    themselves after it)."""
    found = {name: client.count(name) for name in counts}
    wrong = [
        f"{name}: {found[name]} on the engine, {counts[name]} here" for name in counts if found[name] != counts[name]
    ]
    if wrong:
        raise EngineError(
            "the engine does not hold the generation's triples (nothing was swapped in if these are "
            "staging graphs): " + "; ".join(wrong)
        )
    return found
