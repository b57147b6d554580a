"""Move terms and triples between pyoxigraph (storage, fast parsing) and rdflib (pySHACL, owlrl),
term by term through both libraries' public constructors: the one converter every adapter uses."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode, Triple
from rdflib.term import Node

from iclr_kg import vocab


def term_to_rdflib(term: Any) -> Node:
    """A pyoxigraph term as the rdflib term it is."""
    if isinstance(term, NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, BlankNode):
        return rdflib.BNode(term.value)
    if term.language:
        return rdflib.Literal(term.value, lang=term.language)
    if term.datatype == vocab.XSD_STRING:  # a simple literal, as N-Triples writes it and rdflib reads it
        return rdflib.Literal(term.value)
    # as spelled: rdflib would respell it in its own normal form ("...Z" as "...+00:00"), and owlrl's
    # triples would come back unlike the same literal a store gives back (build/rdf.py, as_stored)
    return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value), normalize=False)


def term_from_rdflib(term: Node) -> Any:
    """An rdflib term as the pyoxigraph term it is (labels of blank nodes kept)."""
    if isinstance(term, rdflib.URIRef):
        return NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return BlankNode(str(term))
    if isinstance(term, rdflib.Literal):
        if term.language:
            return Literal(str(term), language=term.language)
        return Literal(str(term), datatype=NamedNode(str(term.datatype or vocab.XSD_STRING.value)))
    raise TypeError(f"not an RDF term: {term!r}")


class Positional(Protocol):
    """A triple or quad read by position: pyoxigraph's Triple and Quad, or a tuple of terms."""

    def __getitem__(self, index: int, /) -> Any: ...


def to_rdflib(quads: Iterable[Positional]) -> rdflib.Graph:
    """The union of the quads' triples as one rdflib graph (graph names dropped): pyoxigraph
    quads or triples, or tuples of their terms (rdf.TermQuad)."""
    graph = rdflib.Graph()
    for quad in quads:
        graph.add((term_to_rdflib(quad[0]), term_to_rdflib(quad[1]), term_to_rdflib(quad[2])))
    return graph


def from_rdflib(triples: Iterable[tuple[Node, Node, Node]]) -> list[Triple]:
    """rdflib triples (a graph or any iterable) back as pyoxigraph triples."""
    return [Triple(term_from_rdflib(s), term_from_rdflib(p), term_from_rdflib(o)) for s, p, o in triples]
