"""A read-only stand-in for pyoxigraph's `Store` that asks a SPARQL engine our graph was published to.

The pages, the endpoint, saved queries, /stats and the index call `query`, `quads_for_pattern`
and `named_graphs` on a store; `RemoteStore` answers those three through the SPARQL 1.1
Protocol, so all of them run unchanged on a remote backend.

Same answers on every engine: engines disagree on what the default graph is (Oxigraph and
Virtuoso: the union of all graphs, with Virtuoso's own system graphs in it; Fuseki: an empty
graph unless `unionDefaultGraph` is set), and the union of graphs repeats a triple stated in two
of them, where our store's default graph holds their RDF merge. So nothing relies on the
engine's default graph: `publish` writes the merge into a graph of its own (`vocab.GRAPH_MERGED`),
and every query names its dataset with the protocol's `default-graph-uri` (the merge) and
`named-graph-uri` (our graphs, from the publication record), unless the query names its own
with FROM. The engine's choice then never shows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Quad, Variable

from iclr_kg import vocab
from iclr_kg.config import SCHEME, Settings
from iclr_kg.errors import EngineError, QueryError
from iclr_kg.remote.client import SparqlClient
from iclr_kg.remote.names import Names, published_name
from iclr_kg.sparql.querytext import declarations, top_level_words, with_values

RECHECK_SECONDS = 2.0  # how often a serving process looks for a newer publication


@dataclass(frozen=True)
class Publication:
    """What `publish` recorded on the engine: which generation, its graphs and their sizes.
    `renamed`: its graphs are under names of its own there (names.py); a publication from
    before that has them under their own IRIs."""

    generation: str
    graphs: dict[str, int]  # named graph → triples
    merged: int  # triples in the merged default graph
    renamed: bool = True

    @property
    def named(self) -> list[str]:
        return sorted(self.graphs)

    def names(self) -> Names:
        return Names(self.generation, [*self.graphs, vocab.GRAPH_MERGED], renamed=self.renamed)


PUBLICATION_QUERY = f"""
PREFIX sd: <{vocab.SD}>
PREFIX void: <{vocab.PREFIXES["void"]}>
PREFIX dcterms: <{vocab.DCTERMS}>
SELECT ?generation ?name ?triples WHERE {{
  GRAPH <{vocab.GRAPH_PUBLICATION}> {{
    ?dataset dcterms:identifier ?generation .
    {{ ?dataset sd:namedGraph ?entry . ?entry sd:name ?name ; sd:graph ?graph . ?graph void:triples ?triples }}
    UNION {{ ?dataset sd:defaultGraph ?default . ?default void:triples ?triples }}
  }}
}}"""


def read_publication(client: SparqlClient, known: Publication | None = None) -> Publication | None:
    """The publication record on the engine, or None if nothing was published there. Where it
    describes two (a switch under way on an engine that runs an update's operations one after
    another), the newer: generations are named in time order. `known`: the publication read
    before (whether its graphs are renamed is not asked again)."""
    described: dict[str, tuple[dict[str, int], list[int]]] = {}
    for row in client.select(PUBLICATION_QUERY):
        graphs, merged_count = described.setdefault(row["generation"].value, ({}, [0]))
        if "name" in row:
            graphs[row["name"].value] = int(row["triples"].value)
        else:
            merged_count[0] = int(row["triples"].value)
    if not described:
        return None
    generation = max(described)
    graphs, (merged,) = described[generation]
    if known is not None and known.generation == generation:
        return Publication(generation, graphs, merged, renamed=known.renamed)
    renamed = bool(
        client.query(
            f"ASK {{ GRAPH <{published_name(generation, vocab.GRAPH_MERGED)}> {{ ?s ?p ?o }} }}", kind="results"
        )
    )
    return Publication(generation, graphs, merged, renamed=renamed or not merged)


def query_kind(text: str) -> str:
    """ "results" for SELECT and ASK, "rdf" for CONSTRUCT and DESCRIBE (what to ask the engine for)."""
    for _, word in top_level_words(text):
        if word in ("SELECT", "ASK"):
            return "results"
        if word in ("CONSTRUCT", "DESCRIBE"):
            return "rdf"
    raise QueryError("expected SELECT, ASK, CONSTRUCT or DESCRIBE")


def with_prologue(text: str, prefixes: dict[str, str] | None, base: str | None) -> str:
    """The query with our prefixes (those it does not declare itself) and base IRI written in:
    what pyoxigraph's `prefixes=` and `base_iri=` do, for an engine that has neither. What the
    text declares is read as the parser reads it (`querytext.declarations`): a declaration in a
    comment declares nothing."""
    declared = declarations(text)
    has_base = any(word == "BASE" for _, word in top_level_words(text))
    lines = [f"BASE <{base}>"] if base and not has_base else []
    lines += [f"PREFIX {name}: <{iri}>" for name, iri in (prefixes or {}).items() if name not in declared]
    return "\n".join([*lines, text])


def _names_own_dataset(text: str) -> bool:
    return any(word == "FROM" for _, word in top_level_words(text))


def _pattern_term(term: Any, name: str) -> str:
    return f"?{name}" if term is None else str(term)


class RemoteStore:
    """The read API of pyoxigraph's `Store`, answered by a SPARQL engine (see module docstring)."""

    def __init__(self, client: SparqlClient, publication: Publication):
        self.client, self.publication = client, publication
        self.names = publication.names()

    @classmethod
    def connect(cls, url: str, auth: str | None = None, timeout: float = 60.0) -> RemoteStore:
        client = SparqlClient.connect(url, auth=auth, timeout=timeout)
        publication = read_publication(client)
        if publication is None:
            raise EngineError(f"nothing is published at {url}: run `iclr-kg publish --to {url}` first")
        return cls(client, publication)

    @property
    def key(self) -> str:
        """What stands for this store where a generation's path would (caches, query workers)."""
        return f"{SCHEME}{self.client.engine.query_url}#{self.publication.generation}"

    def named_graphs(self) -> Iterator[NamedNode]:
        return iter(NamedNode(g) for g in self.publication.named)

    def contains_named_graph(self, graph_name: NamedNode | BlankNode) -> bool:
        """Whether the publication holds this graph (what it recorded: no request is made)."""
        return isinstance(graph_name, NamedNode) and graph_name.value in self.publication.graphs

    def query(
        self,
        query: str,
        *,
        prefixes: dict[str, str] | None = None,
        base_iri: str | None = None,
        default_graph: list[Any] | None = None,
        named_graphs: list[NamedNode] | None = None,
        substitutions: dict[Variable, Any] | None = None,
    ) -> Any:
        kind = query_kind(query)
        text = self.names.query(with_prologue(with_values(query, substitutions), prefixes, base_iri))
        if _names_own_dataset(query) and default_graph is None and named_graphs is None:
            return self.client.query(text, kind=kind, answers=self.names)
        defaults = [self._graph_name(DefaultGraph())] if default_graph is None else map(self._graph_name, default_graph)
        named = self.publication.named if named_graphs is None else [g.value for g in named_graphs]
        return self.client.query(
            text, kind=kind, default_graphs=defaults, named_graphs=map(self.names.name, named), answers=self.names
        )

    def _graph_name(self, graph: Any) -> str:
        """A graph's name on the engine (the default graph: the merge's)."""
        return self.names.name(vocab.GRAPH_MERGED if isinstance(graph, DefaultGraph) else graph.value)

    def quads_for_pattern(self, subject: Any, predicate: Any, object: Any, graph_name: Any = None) -> Iterator[Quad]:
        """The quads matching a pattern, as pyoxigraph's; a blank node in the pattern matches
        nothing (engines do not keep blank node labels between requests)."""
        if any(isinstance(t, BlankNode) for t in (subject, predicate, object)):
            return iter(())
        pattern = " ".join(_pattern_term(t, n) for t, n in ((subject, "s"), (predicate, "p"), (object, "o")))
        if graph_name is None:
            where = f"{{ GRAPH ?g {{ {pattern} }} }} UNION {{ {pattern} }}"
        elif isinstance(graph_name, DefaultGraph):
            where = pattern
        else:
            where = f"GRAPH {graph_name} {{ {pattern} }}"
        rows = self.client.select(
            self.names.query(f"SELECT * WHERE {{ {where} }}"),
            default_graphs=[self._graph_name(DefaultGraph())],
            named_graphs=[self.names.name(g) for g in self.publication.named],
            answers=self.names,
        )
        return (self._quad(row, subject, predicate, object, graph_name) for row in rows)

    @staticmethod
    def _quad(row: dict[str, Any], subject: Any, predicate: Any, object: Any, graph_name: Any) -> Quad:
        graph = graph_name if graph_name is not None else row.get("g", DefaultGraph())
        return Quad(
            subject if subject is not None else row["s"],
            predicate if predicate is not None else row["p"],
            object if object is not None else row["o"],
            graph,
        )


class Backend:
    """A serving process's view of a remote engine: the store for the newest publication, looked
    up again at most every RECHECK_SECONDS, so a new `publish` goes live without a restart."""

    def __init__(self, url: str, auth: str | None = None, timeout: float = 60.0):
        self.url, self.auth, self.timeout = url, auth, timeout
        self._lock = threading.Lock()
        self._store: RemoteStore | None = None
        self._checked = 0.0

    def store(self) -> RemoteStore:
        now = time.monotonic()
        if self._store is not None and now - self._checked < RECHECK_SECONDS:
            return self._store
        with self._lock:
            if self._store is None:
                self._store = RemoteStore.connect(self.url, self.auth, self.timeout)
            elif now - self._checked >= RECHECK_SECONDS:
                publication = read_publication(self._store.client, self._store.publication)
                if publication is not None and publication != self._store.publication:
                    self._store = RemoteStore(self._store.client, publication)
            self._checked = now
            return self._store


_opened: dict[str, RemoteStore] = {}


def open_key(key: str, auth: str | None = None) -> RemoteStore:
    """The store a query worker uses for `key` (`RemoteStore.key`), connected once per key."""
    store = _opened.get(key)
    if store is None:
        url = key[len(SCHEME) :].rpartition("#")[0]
        store = RemoteStore.connect(url, auth)  # published again since the key was made: the newest answers
        _opened.clear()
        _opened[key] = store
    return store


def open_remote(settings: Settings) -> RemoteStore:
    """The engine the `backend` setting names, as published there (settings.remote is set)."""
    if settings.remote is None:
        raise ValueError("no remote backend is configured")
    return RemoteStore.connect(settings.remote, settings.backend_auth, timeout=max(settings.query_timeout, 60))
