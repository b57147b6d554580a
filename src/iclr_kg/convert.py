"""Move triples between pyoxigraph (storage, fast parsing) and rdflib (SHACL, owlrl)."""

from __future__ import annotations

from collections.abc import Iterable

import rdflib
from pyoxigraph import Quad, RdfFormat, Triple, parse, serialize


def to_rdflib(quads: Iterable[Quad | Triple]) -> rdflib.Graph:
    """The union of the quads' triples as one rdflib graph (graph names dropped)."""
    triples = (q.triple if isinstance(q, Quad) else q for q in quads)
    data = serialize(triples, format=RdfFormat.N_TRIPLES)
    graph = rdflib.Graph()
    graph.parse(data=data or b"", format="nt")
    return graph


def from_rdflib(graph: rdflib.Graph) -> list[Triple]:
    """rdflib triples back as pyoxigraph triples."""
    data = graph.serialize(format="nt", encoding="utf-8")
    return list(parse(data, format=RdfFormat.N_TRIPLES))
