"""Stage 5: OWL 2 RL reasoning; what it adds goes to the inferred graph, and only that.

owlrl's `DeductiveClosure(OWLRL_Semantics)` is the reference semantics. Its closure also holds
much that no user wants (every IRI typed owl:Thing, axioms about rdf:/owl: terms, literals as
subjects); `keep_inferred` is the one documented rule that drops those, for every reasoner.
"""

from __future__ import annotations

from typing import Any

import rdflib
from owlrl import DeductiveClosure, OWLRL_Semantics
from pyoxigraph import BlankNode, NamedNode
from rdflib import OWL, RDF, RDFS, XSD, BNode, URIRef
from rdflib.term import Node

from .errors import InconsistentGraph, SettingsError

BUILTIN_NAMESPACES = (str(RDF), str(RDFS), str(OWL), str(XSD))
_TYPE = RDF.type
TRIVIAL_TYPES = frozenset({OWL.Thing, RDFS.Resource})
REFLEXIVE_NOISE = frozenset(
    {OWL.sameAs, OWL.equivalentClass, OWL.equivalentProperty, RDFS.subClassOf, RDFS.subPropertyOf}
)
TRIVIAL_OBJECT_PREDICATES = frozenset({RDFS.subClassOf, RDFS.domain, RDFS.range})
_TYPE_IRI = str(RDF.type)
_TRIVIAL_IRIS = frozenset(str(t) for t in TRIVIAL_TYPES)
_TRIVIAL_OBJECT_IRIS = frozenset(str(t) for t in TRIVIAL_OBJECT_PREDICATES)
_REFLEXIVE_IRIS = frozenset(str(t) for t in REFLEXIVE_NOISE)
OWLRL_ERROR = URIRef("http://www.daml.org/2002/03/agents/agent-ont#ErrorMessage")
OWLRL_ERROR_TEXT = URIRef("http://www.daml.org/2002/03/agents/agent-ont#error")
REASONERS = ("fast", "owlrl")


def keep_inferred_oxigraph(s: Any, p: Any, o: Any) -> bool:
    """`keep_inferred` for pyoxigraph terms: the same rule, checked against it by a test."""
    if type(s) is not NamedNode or type(o) is BlankNode or s.value.startswith(BUILTIN_NAMESPACES):
        return False
    if type(o) is NamedNode and o.value in _TRIVIAL_IRIS and (p.value == _TYPE_IRI or p.value in _TRIVIAL_OBJECT_IRIS):
        return False
    return not (s == o and p.value in _REFLEXIVE_IRIS)


def keep_inferred(s: object, p: object, o: object) -> bool:
    """The filter rule: keep a derived triple unless it is trivial or about built-in vocabulary.

    Dropped: subjects that are literals or blank nodes (blank nodes are the ontology's own
    restriction and list nodes); subjects in the rdf:, rdfs:, owl: or xsd: namespaces; `x a
    owl:Thing` and `x a rdfs:Resource`; reflexive sameAs / equivalentClass / equivalentProperty
    / subClassOf / subPropertyOf; `x rdfs:subClassOf owl:Thing`, `p rdfs:domain owl:Thing` and
    `p rdfs:range owl:Thing` (true of everything); and objects that are blank nodes.
    """
    if type(s) is not URIRef or type(o) is BNode or str.startswith(s, BUILTIN_NAMESPACES):
        return False
    if o in TRIVIAL_TYPES and (p == _TYPE or p in TRIVIAL_OBJECT_PREDICATES):
        return False
    return not (s == o and p in REFLEXIVE_NOISE)


def _owlrl_closure(asserted: rdflib.Graph, ontology: rdflib.Graph) -> rdflib.Graph:
    closure = rdflib.Graph()
    for triple in asserted:
        closure.add(triple)
    for triple in ontology:
        closure.add(triple)
    DeductiveClosure(OWLRL_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(closure)
    return closure


def _check_consistency(closure: rdflib.Graph) -> None:
    """owlrl records contradictions as error nodes; turn them into one readable error."""
    messages = sorted(str(closure.value(node, OWLRL_ERROR_TEXT)) for node in closure.subjects(RDF.type, OWLRL_ERROR))
    nothing = sorted(str(s) for s in closure.subjects(RDF.type, OWL.Nothing))
    if messages or nothing:
        lines = [f"- {m}" for m in messages] + [f"- {s} is an instance of owl:Nothing" for s in nothing]
        raise InconsistentGraph("OWL RL reasoning found the graph inconsistent:\n" + "\n".join(lines))


def infer_oxigraph(asserted: list[Any], ontology: list[Any]) -> list[Any]:
    """The fast reasoner on pyoxigraph triples: the inferred triples, filtered, as pyoxigraph
    Triples. The same result as `infer(..., "fast")` without converting the data to rdflib."""
    from pyoxigraph import Triple

    from .fastrl import closure_oxigraph

    return [Triple(*t) for t in closure_oxigraph(asserted, ontology) if keep_inferred_oxigraph(*t)]


def infer_triples(asserted: list[Any], ontology: list[Any], reasoner: str = "fast") -> list[Any]:
    """The inferred triples for pyoxigraph triples, by the chosen reasoner (build and updates)."""
    if reasoner == "fast":  # pyoxigraph terms throughout, no rdflib copy of the data
        return infer_oxigraph(asserted, ontology)
    from .convert import from_rdflib, to_rdflib

    return from_rdflib(infer(to_rdflib(asserted), to_rdflib(ontology), reasoner))


def infer(asserted: rdflib.Graph, ontology: rdflib.Graph, reasoner: str = "fast") -> set[tuple[Node, Node, Node]]:
    """The inferred graph: triples the reasoner derives that are neither asserted nor filtered.

    `owlrl` is the reference; `fast` (fastrl) computes the same closure for our ontology's
    fragment in a fraction of the time.
    """
    if reasoner not in REASONERS:
        raise SettingsError(f"unknown reasoner {reasoner!r}; choose one of {', '.join(REASONERS)}")
    if reasoner == "fast":
        from .fastrl import closure as fast_closure

        return {t for t in fast_closure(asserted, ontology, only_new=True) if keep_inferred(*t)}
    closure = _owlrl_closure(asserted, ontology)
    _check_consistency(closure)
    given = set(asserted) | set(ontology)
    return {t for t in closure if t not in given and keep_inferred(*t)}
