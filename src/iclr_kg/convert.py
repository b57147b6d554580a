"""Move triples between pyoxigraph (storage, fast parsing) and rdflib (SHACL, owlrl)."""

from __future__ import annotations

from collections.abc import Iterable

import rdflib
from pyoxigraph import Quad, RdfFormat, Triple, parse, serialize
from rdflib.plugins.serializers.nt import _nt_row
from rdflib.term import Node


def to_rdflib(quads: Iterable[Quad | Triple]) -> rdflib.Graph:
    """The union of the quads' triples as one rdflib graph (graph names dropped)."""
    triples = (q.triple if isinstance(q, Quad) else q for q in quads)
    data = serialize(triples, format=RdfFormat.N_TRIPLES)
    graph = rdflib.Graph()
    graph.parse(data=data or b"", format="nt")
    return graph


def from_rdflib(triples: Iterable[tuple[Node, Node, Node]]) -> list[Triple]:
    """rdflib triples (a graph or any iterable) back as pyoxigraph triples, via N-Triples."""
    data = "".join(_nt_row(t) for t in triples).encode("utf-8")
    return [quad.triple for quad in parse(data, format=RdfFormat.N_TRIPLES)]
