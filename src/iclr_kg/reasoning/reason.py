"""Stage 5: OWL 2 RL reasoning; what it adds goes to the inferred graph, and only that.

The reasoners are in REASONERS, each one function from pyoxigraph triples (asserted, ontology)
to the inferred triples: `fast` (fastrl, ours, on pyoxigraph terms throughout) and `owlrl` (the
reference semantics, `DeductiveClosure(OWLRL_Semantics)`, converting to rdflib at its own
boundary). owlrl's closure also holds much that no user wants (every IRI typed owl:Thing, axioms
about rdf:/owl: terms, literals as subjects); `keep_inferred` is the one documented rule that
drops those, for every reasoner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import rdflib
from owlrl import DeductiveClosure, OWLRL_Semantics
from pyoxigraph import BlankNode, NamedNode, Triple
from rdflib import OWL, RDF, RDFS, XSD, BNode, URIRef

from iclr_kg.config import Reasoner
from iclr_kg.errors import InconsistentGraph, SettingsError

BUILTIN_NAMESPACES = (str(RDF), str(RDFS), str(OWL), str(XSD))
TRIVIAL_TYPES = frozenset({OWL.Thing, RDFS.Resource})
REFLEXIVE_NOISE = frozenset(
    {OWL.sameAs, OWL.equivalentClass, OWL.equivalentProperty, RDFS.subClassOf, RDFS.subPropertyOf}
)
TRIVIAL_OBJECT_PREDICATES = frozenset({RDFS.subClassOf, RDFS.domain, RDFS.range})
_TYPE_IRI = str(RDF.type)
_TRIVIAL_IRIS = frozenset(str(t) for t in TRIVIAL_TYPES)
_TRIVIAL_OBJECT_IRIS = frozenset(str(t) for t in TRIVIAL_OBJECT_PREDICATES)
_REFLEXIVE_IRIS = frozenset(str(t) for t in REFLEXIVE_NOISE)
TermTriple = tuple[Any, Any, Any]  # (subject, predicate, object) pyoxigraph terms
OWLRL_ERROR = URIRef("http://www.daml.org/2002/03/agents/agent-ont#ErrorMessage")
OWLRL_ERROR_TEXT = URIRef("http://www.daml.org/2002/03/agents/agent-ont#error")


def keep_inferred(s: Any, p: Any, o: Any) -> bool:
    """The filter rule: keep a derived triple unless it is trivial or about built-in vocabulary.

    Dropped: subjects that are literals or blank nodes (blank nodes are the ontology's own
    restriction and list nodes); subjects in the rdf:, rdfs:, owl: or xsd: namespaces; `x a
    owl:Thing` and `x a rdfs:Resource`; reflexive sameAs / equivalentClass / equivalentProperty
    / subClassOf / subPropertyOf; `x rdfs:subClassOf owl:Thing`, `p rdfs:domain owl:Thing` and
    `p rdfs:range owl:Thing` (true of everything); and objects that are blank nodes.
    """
    if type(s) is not NamedNode or type(o) is BlankNode or s.value.startswith(BUILTIN_NAMESPACES):
        return False
    if type(o) is NamedNode and o.value in _TRIVIAL_IRIS and (p.value == _TYPE_IRI or p.value in _TRIVIAL_OBJECT_IRIS):
        return False
    return not (s == o and p.value in _REFLEXIVE_IRIS)


class InferredFilter(NamedTuple):
    """`keep_inferred` as sets of term ids, for a reasoner that numbers its terms (fastrl): a
    triple (s, p, o) is dropped if s is a bad subject, o a blank object, o a trivial object with
    a trivial predicate, or s == o with a reflexive predicate. The same rule, one set lookup each."""

    bad_subjects: set[int]
    blank_objects: set[int]
    trivial_objects: set[int]
    trivial_predicates: set[int]
    reflexive_predicates: set[int]


def inferred_filter(terms: list[Any]) -> InferredFilter:
    """The filter for the terms numbered 0, 1, 2... in `terms` (pyoxigraph terms)."""
    out = InferredFilter(set(), set(), set(), set(), set())
    for i, term in enumerate(terms):
        if type(term) is not NamedNode:
            out.bad_subjects.add(i)
            if type(term) is BlankNode:
                out.blank_objects.add(i)
            continue
        value = term.value
        if value.startswith(BUILTIN_NAMESPACES):
            out.bad_subjects.add(i)
        if value in _TRIVIAL_IRIS:
            out.trivial_objects.add(i)
        if value == _TYPE_IRI or value in _TRIVIAL_OBJECT_IRIS:
            out.trivial_predicates.add(i)
        if value in _REFLEXIVE_IRIS:
            out.reflexive_predicates.add(i)
    return out


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


def _fast(
    asserted: list[Triple], ontology: list[Triple], hidden: list[TermTriple] | None = None
) -> Sequence[TermTriple]:
    """fastrl on pyoxigraph triples: no rdflib copy of the data; filtered by `keep_inferred`'s
    rule on term ids (InferredFilter), before any term is decoded. `hidden` receives the
    closure's triples that the filter drops (for incremental builds: reasoning/dred.py)."""
    from iclr_kg.reasoning.fastrl import closure_oxigraph

    return closure_oxigraph(asserted, ontology, keep=inferred_filter, hidden=hidden)


def _owlrl(asserted: list[Triple], ontology: list[Triple], hidden: list[TermTriple] | None = None) -> list[TermTriple]:
    """owlrl, the reference: the data converted to rdflib and back at this boundary (`hidden`
    is left alone: builds with owlrl are always full)."""
    from iclr_kg.reasoning.convert import from_rdflib, to_rdflib

    data, schema = to_rdflib(asserted), to_rdflib(ontology)
    closure = _owlrl_closure(data, schema)
    _check_consistency(closure)
    given = set(data) | set(schema)
    # literal and blank-node subjects, and blank-node objects, never pass keep_inferred
    derived = [t for t in closure if t not in given and isinstance(t[0], URIRef) and not isinstance(t[2], BNode)]
    decoded = ((t.subject, t.predicate, t.object) for t in from_rdflib(derived))
    return [t for t in decoded if keep_inferred(*t)]


# Each reasoner: (asserted, ontology, hidden), pyoxigraph triples or quads, -> inferred (s, p, o) tuples.
REASONERS: dict[Reasoner, Callable[[list[Any], list[Any], list[TermTriple] | None], Sequence[TermTriple]]] = {
    "fast": _fast,
    "owlrl": _owlrl,
}


def infer_terms(
    asserted: list[Any], ontology: list[Any], reasoner: str = "fast", hidden: list[TermTriple] | None = None
) -> Sequence[TermTriple]:
    """The inferred graph's triples (neither asserted nor filtered), by the chosen reasoner, read
    as (s, p, o) tuples of terms; `asserted` and `ontology` are pyoxigraph triples or quads, or
    tuples of their terms."""
    if reasoner not in REASONERS:
        raise SettingsError(f"unknown reasoner {reasoner!r}; choose one of {', '.join(REASONERS)}")
    return REASONERS[reasoner](list(asserted), list(ontology), hidden)


def infer_triples(asserted: list[Any], ontology: list[Any], reasoner: str = "fast") -> list[Triple]:
    """`infer_terms` as pyoxigraph triples."""
    return [Triple(*t) for t in infer_terms(asserted, ontology, reasoner)]
