"""The one protocol every reader of the graph uses, whichever backend answers: pyoxigraph's
`Store` (a generation on disk) or `remote.store.RemoteStore` (the graph published on another
SPARQL engine, answering the same calls over HTTP). Pages, the entity index, saved queries and
the CLI's reads are written against it, so they run unchanged on either backend."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from pyoxigraph import BlankNode, NamedNode, Quad


class ReadableGraph(Protocol):
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
