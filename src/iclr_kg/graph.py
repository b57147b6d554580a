"""The one protocol every reader of the graph uses, whichever backend answers: pyoxigraph's
`Store` (a generation on disk) or `remote.store.RemoteStore` (the graph published on another
SPARQL engine, answering the same calls over HTTP). Pages, the entity index, saved queries and
the CLI's reads are written against it, so they run unchanged on either backend."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QueryBoolean,
    QueryResultsFormat,
    QuerySolutions,
    QueryTriples,
    RdfFormat,
    Triple,
    serialize,
)

Term = NamedNode | BlankNode | Literal | Triple
"""What a solution binds or a quad holds, as pyoxigraph types it (a quoted triple included)."""


class ReadableGraph(Protocol):
    def contains_named_graph(self, graph_name: NamedNode | BlankNode) -> bool: ...

    def named_graphs(self) -> Iterator[NamedNode | BlankNode]: ...

    def query(
        self,
        query: str,
        *,
        base_iri: str | None = None,
        prefixes: dict[str, str] | None = None,
        default_graph: Any = None,
        named_graphs: Any = None,
        substitutions: Any = None,
    ) -> Any: ...

    def quads_for_pattern(
        self, subject: Any, predicate: Any, object: Any, graph_name: Any = None
    ) -> Iterator[Quad]: ...


QueryAnswer = QuerySolutions | QueryBoolean | QueryTriples  # what a query of either backend answers


# Typed boundaries: pyoxigraph types a query's answer as one union (solutions, a boolean or
# triples) and a term as one union (a quoted triple among them). A caller knows which it asked
# for; these say so once, and fail loudly where the answer is not what the query's form promises.


def value(term: Term | DefaultGraph) -> str:
    """A term's lexical value: an IRI's text, a literal's lexical form, a blank node's label.
    Our graph holds no quoted triples (RDF-star), so one here is a bug, not data."""
    if isinstance(term, (Triple, DefaultGraph)):
        raise TypeError(f"expected an IRI, a blank node or a literal, got {term!r}")
    return term.value


def solutions(answer: QuerySolutions | QueryBoolean | QueryTriples | Any) -> QuerySolutions:
    """The answer of a SELECT."""
    if not isinstance(answer, QuerySolutions):
        raise TypeError(f"a SELECT was expected to answer solutions, got {type(answer).__name__}")
    return answer


def triples(answer: QuerySolutions | QueryBoolean | QueryTriples | Any) -> QueryTriples:
    """The answer of a CONSTRUCT or DESCRIBE."""
    if not isinstance(answer, QueryTriples):
        raise TypeError(f"a CONSTRUCT was expected to answer triples, got {type(answer).__name__}")
    return answer


def serialized(answer: QuerySolutions | QueryBoolean, format: QueryResultsFormat) -> bytes:
    """An answer written in a results format, in memory (pyoxigraph returns the bytes when it is
    given no output; its types leave room for None, which only an output argument gives)."""
    data = answer.serialize(format=format)
    assert data is not None
    return data


def rdf_bytes(
    triples: Iterable[Triple] | Iterable[Quad], format: RdfFormat, prefixes: dict[str, str] | None = None
) -> bytes:
    """Triples or quads written in an RDF format, in memory (as `serialized`, for RDF)."""
    data = serialize(triples, format=format, prefixes=prefixes)
    assert data is not None
    return data
