"""A fast OWL 2 RL reasoner for the fragment our ontology uses, evaluated semi-naively.

owlrl re-runs every rule over every triple until nothing changes, in pure Python: minutes on
ICLR-sized data. Here the schema (TBox) is read once and compiled into lookup tables (class and
property closures, inverses, chains, domains, ranges, restrictions); then a work list of new
triples is processed once each (semi-naive evaluation), every rule joining the new triple
against indexes. The result is owlrl's closure, checked by tests on the real and synthetic data
after the same filter (`reason.keep_inferred`).

Rules implemented (names from the OWL 2 RL rule tables): cax-sco, cax-eqc1/2, cax-dw, cax-adc,
cls-svf1/2, cls-hv1/2, cls-avf, cls-nothing2, prp-dom, prp-rng, prp-spo1, prp-spo2 (chains of
any length), prp-eqp1/2, prp-inv1/2, prp-trp, prp-symp, prp-fp, prp-ifp, eq-sym, eq-trans,
eq-rep-s/p/o, and the schema rules scm-sco, scm-eqc1/2, scm-spo, scm-eqp1/2, scm-dom1/2,
scm-rng1/2, scm-svf1/2, scm-hv, scm-avf1/2. A schema construct outside these (unions,
intersections, cardinalities, keys...) raises UnsupportedOntology: use `--reasoner owlrl`.
"""

from __future__ import annotations

import itertools
from array import array
from collections import defaultdict
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from typing import Any, Protocol

from pyoxigraph import NamedNode
from rdflib import OWL, RDF, RDFS, URIRef
from rdflib.collection import Collection
from rdflib.graph import Graph
from rdflib.term import Node

from iclr_kg import gcpause
from iclr_kg.errors import InconsistentGraph, UnsupportedOntology

Term = Node  # what rdflib's graph API gives: a URIRef, BNode or Literal at run time
Triple = tuple[Term, Term, Term]
TYPE = RDF.type

UNSUPPORTED = (
    OWL.unionOf,
    OWL.intersectionOf,
    OWL.complementOf,
    OWL.oneOf,
    OWL.hasKey,
    OWL.maxCardinality,
    OWL.maxQualifiedCardinality,
    OWL.cardinality,
    OWL.qualifiedCardinality,
    OWL.hasSelf,
    OWL.propertyDisjointWith,
    OWL.AllDisjointProperties,
    OWL.IrreflexiveProperty,
    OWL.AsymmetricProperty,
    OWL.sourceIndividual,
    OWL.AllDifferent,
    OWL.differentFrom,
)


def _closure(edges: dict[Term, set[Term]]) -> dict[Term, set[Term]]:
    """Reflexive-transitive closure of a small graph (the schema), by DFS from every node."""
    nodes = set(edges) | {t for targets in edges.values() for t in targets}
    result: dict[Term, set[Term]] = {}
    for start in nodes:
        seen, stack = {start}, [start]
        while stack:
            for nxt in edges.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        result[start] = seen
    return result


def _restrictions(triples: Graph, kind: URIRef) -> dict[Term, tuple[Term, Term]]:
    """Each restriction of a kind (someValuesFrom, hasValue, allValuesFrom) as (property, filler)."""
    found: dict[Term, tuple[Term, Term]] = {}
    for restriction, filler in triples.subject_objects(kind):
        if (prop := triples.value(restriction, OWL.onProperty)) is not None:
            found[restriction] = (prop, filler)
    return found


class Schema:
    """The TBox compiled into lookup tables, including the schema-level (scm-*) consequences."""

    def __init__(self, triples: Graph):
        for construct in UNSUPPORTED:
            if (None, construct, None) in triples or (None, TYPE, construct) in triples:
                raise UnsupportedOntology(f"the fast reasoner does not support {construct.n3()}; use --reasoner owlrl")
        sub_class: dict[Term, set[Term]] = defaultdict(set)
        sub_prop: dict[Term, set[Term]] = defaultdict(set)
        for c, d in triples.subject_objects(RDFS.subClassOf):
            sub_class[c].add(d)
        for c, d in triples.subject_objects(OWL.equivalentClass):
            sub_class[c].add(d)
            sub_class[d].add(c)
        for p, q in triples.subject_objects(RDFS.subPropertyOf):
            sub_prop[p].add(q)
        for p, q in triples.subject_objects(OWL.equivalentProperty):
            sub_prop[p].add(q)
            sub_prop[q].add(p)
        self.inverse: dict[Term, set[Term]] = defaultdict(set)
        for p, q in triples.subject_objects(OWL.inverseOf):
            self.inverse[p].add(q)
            self.inverse[q].add(p)
        self.transitive = set(triples.subjects(TYPE, OWL.TransitiveProperty))
        self.symmetric = set(triples.subjects(TYPE, OWL.SymmetricProperty))
        self.functional = set(triples.subjects(TYPE, OWL.FunctionalProperty))
        self.inverse_functional = set(triples.subjects(TYPE, OWL.InverseFunctionalProperty))
        self.chains: list[tuple[list[Term], Term]] = [
            (steps, q)
            for q, chain in triples.subject_objects(OWL.propertyChainAxiom)
            if (steps := list(Collection(triples, chain)))  # an empty (or broken) list chains nothing
        ]
        # restrictions: someValuesFrom (p, filler), hasValue (p, value), allValuesFrom (p, filler)
        # (a restriction without its property, as in a graph holding part of an ontology, says
        # nothing: no OWL RL rule reads it)
        self.svf, self.hv, self.avf = (
            _restrictions(triples, kind) for kind in (OWL.someValuesFrom, OWL.hasValue, OWL.allValuesFrom)
        )
        self._add_schema_subsumptions(sub_class, sub_prop)
        self.super_classes = _closure(sub_class)
        self.super_props = _closure(sub_prop)
        self.domains = self._lift(triples, RDFS.domain)
        self.ranges = self._lift(triples, RDFS.range)
        self.svf_by_property: dict[Term, list[tuple[Term, Term]]] = defaultdict(list)
        self.svf_by_filler: dict[Term, list[tuple[Term, Term]]] = defaultdict(list)
        for r, (p, filler) in self.svf.items():
            self.svf_by_property[p].append((r, filler))
            self.svf_by_filler[filler].append((r, p))
        self.hv_by_property: dict[Term, list[tuple[Term, Term]]] = defaultdict(list)
        for r, (p, value) in self.hv.items():
            self.hv_by_property[p].append((r, value))
        self.avf_by_property: dict[Term, list[tuple[Term, Term]]] = defaultdict(list)
        for r, (p, filler) in self.avf.items():
            self.avf_by_property[p].append((r, filler))
        self.chain_steps: dict[Term, list[tuple[int, list[Term], Term]]] = defaultdict(list)
        for chain, q in self.chains:
            for i, p in enumerate(chain):
                self.chain_steps[p].append((i, chain, q))
        # scm-cls, scm-op, scm-dp: what is declared a class or a property is its own subclass,
        # subproperty and equivalent; anything else only where a cycle makes it so (scm-sco)
        self.declared_classes = set(triples.subjects(TYPE, OWL.Class))
        self.declared_props = set(triples.subjects(TYPE, OWL.ObjectProperty)) | set(
            triples.subjects(TYPE, OWL.DatatypeProperty)
        )
        self.disjoint: list[tuple[Term, Term]] = list(triples.subject_objects(OWL.disjointWith))
        for group in triples.subjects(TYPE, OWL.AllDisjointClasses):
            if (head := triples.value(group, OWL.members)) is None:
                continue  # a group naming no members disjoins nothing
            members = list(Collection(triples, head))
            self.disjoint += [(a, b) for i, a in enumerate(members) for b in members[i + 1 :]]

    def _add_schema_subsumptions(self, sub_class: dict[Term, set[Term]], sub_prop: dict[Term, set[Term]]) -> None:
        """scm-svf1/2, scm-hv, scm-avf1/2: restrictions subsumed through their fillers or properties."""
        classes = _closure(sub_class)
        props = _closure(sub_prop)
        for table, covariant in ((self.svf, True), (self.avf, False)):
            for r1, (p1, f1) in table.items():
                for r2, (p2, f2) in table.items():
                    if r1 == r2:
                        continue
                    if p1 == p2 and f2 in classes.get(f1, {f1}) and covariant:
                        sub_class[r1].add(r2)  # scm-svf1
                    if f1 == f2 and p2 in props.get(p1, {p1}) and covariant:
                        sub_class[r1].add(r2)  # scm-svf2
                    if not covariant and p1 == p2 and f2 in classes.get(f1, {f1}):
                        sub_class[r1].add(r2)  # scm-avf1
                    if not covariant and f1 == f2 and p2 in props.get(p1, {p1}):
                        sub_class[r2].add(r1)  # scm-avf2
        for r1, (p1, v1) in self.hv.items():
            for r2, (p2, v2) in self.hv.items():
                if r1 != r2 and v1 == v2 and p2 in props.get(p1, {p1}):
                    sub_class[r1].add(r2)  # scm-hv

    def _lift(self, triples: Graph, predicate: URIRef) -> dict[Term, set[Term]]:
        """Domains or ranges per property, widened by scm-dom1/rng1 (superclasses of the class)
        and scm-dom2/rng2 (inherited from superproperties)."""
        declared: dict[Term, set[Term]] = defaultdict(set)
        for p, c in triples.subject_objects(predicate):
            declared[p] |= self.super_classes.get(c, {c})
        lifted: dict[Term, set[Term]] = defaultdict(set)
        for p, supers in self.super_props.items():
            for q in supers:
                lifted[p] |= declared.get(q, set())
        for p, classes in declared.items():
            lifted[p] |= classes
        return lifted

    def schema_triples(self) -> set[Triple]:
        """The schema-level consequences owlrl adds: closed subClassOf / subPropertyOf,
        equivalences, and widened domains and ranges."""
        out: set[Triple] = set()
        for table, declared, sub, equivalent in (
            (self.super_classes, self.declared_classes, RDFS.subClassOf, OWL.equivalentClass),
            (self.super_props, self.declared_props, RDFS.subPropertyOf, OWL.equivalentProperty),
        ):
            for c in declared:
                out |= {(c, sub, c), (c, equivalent, c)}
            for c, supers in table.items():
                for d in supers:
                    if d == c and not any(c in table.get(e, ()) for e in supers - {c}):
                        continue  # reflexive only where declared (above) or on a cycle: no rule derives it else
                    out.add((c, sub, d))
                    if c in table.get(d, ()):
                        out.add((c, equivalent, d))
        for p, classes in self.domains.items():
            out |= {(p, RDFS.domain, c) for c in classes}
        for p, classes in self.ranges.items():
            out |= {(p, RDFS.range, c) for c in classes}
        return out


class Facts(Protocol):
    """What the rules (`_fire`) read of the triples so far: this module's `_Facts`, or the old
    closure read from a store with a change applied (`dred.StoreClosure`)."""

    @property
    def all(self) -> Container[tuple[int, int, int]]: ...

    @property
    def by_ps(self) -> Any: ...  # objects by subject, per predicate (`.get(p)`, `[p]`, `in`)

    @property
    def by_po(self) -> Any: ...  # subjects by object, per predicate

    def equality_indexes(self) -> tuple[dict[int, set[tuple[int, int]]], dict[int, set[tuple[int, int]]]]: ...


class _Facts:
    """The growing set of triples with the indexes the rules join against.

    Only the predicates a rule joins on (`joined`: transitive, chained, functional, restricted
    properties) are indexed by subject and object. Most triples (types, names, titles) are never
    looked up that way, and their indexes were most of the reasoner's memory and a third of its
    time. The first owl:sameAs indexes every predicate from then on (equality rewrites any
    triple), and builds the by-subject and by-object indexes it alone needs. The members of the
    classes `checked` (objects of `rdf_type`) are kept as they come, for the consistency check: it
    found them by scanning every triple, an eighth of its time (docs/performance.md, measured choices).
    """

    def __init__(self, joined: set[int] | None, same_as: int, rdf_type: int = -1, checked: Iterable[int] = ()) -> None:
        self.all: set[tuple[int, int, int]] = set()
        self.joined = joined  # None: every predicate
        self.same_as = same_as
        self.type = rdf_type
        self.members: dict[int, set[int]] = {c: set() for c in checked}
        self.by_ps: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
        self.by_po: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
        self.by_s: dict[int, set[tuple[int, int]]] | None = None
        self.by_o: dict[int, set[tuple[int, int]]] | None = None

    def add(self, triple: tuple[int, int, int]) -> bool:
        if triple in self.all:
            return False
        s, p, o = triple
        self.all.add(triple)
        if self.joined is None or p in self.joined:
            self.by_ps[p][s].add(o)
            self.by_po[p][o].add(s)
        elif p == self.same_as:
            self._index_everything()  # this triple included
        elif p == self.type and o in self.members:
            self.members[o].add(s)
        if self.by_s is not None and self.by_o is not None:
            self.by_s[s].add((p, o))
            self.by_o[o].add((s, p))
        return True

    def _index_everything(self) -> None:
        joined, self.joined = self.joined, None
        for s, p, o in self.all:
            if joined is None or p not in joined:
                self.by_ps[p][s].add(o)
                self.by_po[p][o].add(s)

    def subjects_of(self, p: int, objects: set[int]) -> dict[int, set[int]]:
        """Subjects by object, for the objects `objects` of `p` (by a scan if `p` is not indexed)."""
        if self.joined is None or p in self.joined:
            return {o: set(self.by_po.get(p, {}).get(o, ())) for o in objects}
        if p == self.type and objects <= self.members.keys():
            return {o: set(self.members[o]) for o in objects}
        found: dict[int, set[int]] = {o: set() for o in objects}
        for s, q, o in self.all:
            if q == p and o in found:
                found[o].add(s)
        return found

    def equality_indexes(self) -> tuple[dict[int, set[tuple[int, int]]], dict[int, set[tuple[int, int]]]]:
        if self.by_s is None:
            self.by_s, self.by_o = defaultdict(set), defaultdict(set)
            for s, p, o in self.all:
                self.by_s[s].add((p, o))
                self.by_o[o].add((s, p))
        return self.by_s, self.by_o  # type: ignore[return-value]


def _least(members: set[int], above: dict[int, set[int]]) -> set[int]:
    """The members of `members` that no other member is strictly below (`above[x]`: everything
    x is under, x included); every member is above one of them."""
    return {
        m for m in members if not any(m in above.get(n, ()) and n not in above.get(m, ()) for n in members if n != m)
    }


def _next_up(x: int, above: dict[int, set[int]]) -> set[int]:
    """What x is directly under: its equivalents, and the least of what it is strictly under.
    Each of these reaches, in turn, the rest of `above[x]` (an equivalent alone could lead only
    back to x: Work and CreativeWork would name each other and never Thing)."""
    others = above.get(x, set()) - {x}
    equivalent = {y for y in others if x in above.get(y, ())}
    return equivalent | _least(others - equivalent, above)


class _Encoded:
    """The schema tables with every term replaced by a small integer: the rules then hash and
    compare ints instead of rdflib terms, several times faster.

    Superclasses, superproperties, domains and ranges are kept to their least members: a
    property's domain is Paper, not Paper and every class above it. The classes above come from
    cax-sco when the type is new, once per subject instead of once per triple, and the closure
    is the same (each rule applied to every fact reaches, step by step, what the transitive
    tables reached in one). Most triples' domain and range types are known already: this halves
    the triples the rules derive again."""

    def __init__(self, schema: Schema, encode):
        e = encode
        props = {e(p): {e(q) for q in qs} for p, qs in schema.super_props.items()}
        classes = {e(c): {e(d) for d in ds} for c, ds in schema.super_classes.items()}
        self.super_props = {p: _next_up(p, props) for p in props}
        self.super_classes = {c: _next_up(c, classes) for c in classes}
        self.inverse = {e(p): {e(q) for q in qs} for p, qs in schema.inverse.items()}
        self.symmetric = {e(p) for p in schema.symmetric}
        self.transitive = {e(p) for p in schema.transitive}
        self.functional = {e(p) for p in schema.functional}
        self.inverse_functional = {e(p) for p in schema.inverse_functional}
        self.domains = {e(p): _least({e(c) for c in cs}, classes) for p, cs in schema.domains.items()}
        self.ranges = {e(p): _least({e(c) for c in cs}, classes) for p, cs in schema.ranges.items()}
        self.chain_steps = {
            e(p): [(i, [e(x) for x in chain], e(q)) for i, chain, q in steps] for p, steps in schema.chain_steps.items()
        }
        self.svf_by_property = {e(p): [(e(r), e(f)) for r, f in v] for p, v in schema.svf_by_property.items()}
        self.svf_by_filler = {e(f): [(e(r), e(p)) for r, p in v] for f, v in schema.svf_by_filler.items()}
        self.hv_by_property = {e(p): [(e(r), e(v)) for r, v in vs] for p, vs in schema.hv_by_property.items()}
        self.avf_by_property = {e(p): [(e(r), e(f)) for r, f in vs] for p, vs in schema.avf_by_property.items()}
        self.hv = {e(r): (e(p), e(v)) for r, (p, v) in schema.hv.items()}
        self.avf = {e(r): (e(p), e(f)) for r, (p, f) in schema.avf.items()}
        self.disjoint = [(e(a), e(b)) for a, b in schema.disjoint]
        self.thing, self.nothing, self.same_as, self.type = e(OWL.Thing), e(OWL.Nothing), e(OWL.sameAs), e(TYPE)
        self.checked = {c for pair in self.disjoint for c in pair} | {self.nothing}  # classes _check_consistency reads
        self.joined = {  # the predicates some rule looks up by subject or object (_Facts)
            *self.transitive,
            *self.chain_steps,
            *self.functional,
            *self.inverse_functional,
            *self.svf_by_property,
            *self.avf_by_property,
            *((self.type,) if self.avf_by_property else ()),
        }
        self.rest = {  # the predicates a rule beyond the property tables reads (_fire_rest)
            *self.joined,
            *self.hv_by_property,
            self.same_as,
        }  # rdf:type, when it is not among them, goes straight to _fire_type
        self.plans: dict[int, _Plan] = {}

    def plan(self, p: int) -> _Plan:
        """What a triple of predicate `p` fires, looked up once per predicate instead of in ten
        tables for every triple (most predicates have a domain and a range, and nothing more)."""
        found = self.plans[p] = (
            tuple(q for q in self.super_props.get(p, ()) if q != p),
            tuple(self.inverse.get(p, ())),
            p in self.symmetric,
            tuple(self.domains.get(p, ())),
            tuple(self.ranges.get(p, ())),
            p in self.rest,
        )
        return found


# (superproperties, inverses, symmetric, domains, ranges, whether _fire_rest reads it)
_Plan = tuple[tuple[int, ...], tuple[int, ...], bool, tuple[int, ...], tuple[int, ...], bool]


SCHEMA_PREDICATES = (
    RDFS.subClassOf,
    RDFS.subPropertyOf,
    OWL.equivalentClass,
    OWL.equivalentProperty,
    OWL.inverseOf,
    RDFS.domain,
    RDFS.range,
    OWL.propertyChainAxiom,
)


# Everything else `Schema` reads, wherever it is stated: owlrl reads an axiom in a data graph as
# in the ontology (a graph copied from the default graph holds the ontology's disjointness), so
# the fast reasoner must too (bench/update_semantics.py: `COPY DEFAULT TO <g>`, then the ontology
# dropped, left the disjointness in <g> only, which owlrl saw and the fast reasoner did not).
AXIOM_PREDICATES = (
    OWL.disjointWith,
    OWL.members,
    OWL.onProperty,
    OWL.someValuesFrom,
    OWL.hasValue,
    OWL.allValuesFrom,
    RDF.first,
    RDF.rest,
    *(p for p in UNSUPPORTED if p[len(str(OWL)) :][:1].islower()),
)
OXIGRAPH_SCHEMA_PREDICATES = frozenset(NamedNode(str(p)) for p in (*SCHEMA_PREDICATES, *AXIOM_PREDICATES))
TYPE_NODE = NamedNode(str(TYPE))
# declarations the schema reads from the data too: classes and properties (scm-cls, scm-op,
# scm-dp), property characteristics, disjoint groups, and the types it does not support
OXIGRAPH_DECLARATIONS = frozenset(
    NamedNode(str(c))
    for c in (
        OWL.Class,
        OWL.ObjectProperty,
        OWL.DatatypeProperty,
        OWL.TransitiveProperty,
        OWL.SymmetricProperty,
        OWL.FunctionalProperty,
        OWL.InverseFunctionalProperty,
        OWL.AllDisjointClasses,
        *(t for t in UNSUPPORTED if t[len(str(OWL)) :][:1].isupper()),
    )
)


def is_schema(triple: Any) -> bool:
    """Whether a data triple (pyoxigraph terms, or a tuple of them) is schema the fast reasoner
    compiles: a schema predicate, or a class or property declared."""
    return triple[1] in OXIGRAPH_SCHEMA_PREDICATES or (triple[1] == TYPE_NODE and triple[2] in OXIGRAPH_DECLARATIONS)


class TermTriples(Sequence[tuple[Any, Any, Any]]):
    """Triples kept as ids into one list of terms, three ids to a triple in an array: 12 bytes a
    triple, where a tuple of three terms takes 64 and its list slot 8 (a sixth of the memory beside
    the store's bulk loader; docs/performance.md, measured choices). Read, each is an
    (s, p, o) tuple of the terms, made as it is read."""

    def __init__(self, terms: list[Any], ids: array) -> None:
        self.terms, self.ids = terms, ids

    def __len__(self) -> int:
        return len(self.ids) // 3

    def __iter__(self) -> Iterator[tuple[Any, Any, Any]]:
        terms, ids = self.terms, iter(self.ids)
        return ((terms[s], terms[p], terms[o]) for s, p, o in zip(ids, ids, ids, strict=True))

    def __getitem__(self, index: int) -> tuple[Any, Any, Any]:  # type: ignore[override]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        at = 3 * (index % len(self))
        return self.terms[self.ids[at]], self.terms[self.ids[at + 1]], self.terms[self.ids[at + 2]]


def oxigraph_schema(ontology: list[Any], data: Iterable[Any] = ()) -> Schema:
    """The Schema of pyoxigraph triples or quads, or tuples of their terms (the ontology, and any
    schema triples in the data); only this small part goes through rdflib, blank node labels kept."""
    from iclr_kg.reasoning.convert import term_to_rdflib as to_rdflib

    tbox = Graph()
    for t in (*ontology, *(t for t in data if is_schema(t))):
        tbox.add((to_rdflib(t[0]), to_rdflib(t[1]), to_rdflib(t[2])))
    return Schema(tbox)


def closure_oxigraph(
    data: list[Any],
    ontology: list[Any],
    keep: Callable[[list[Any]], Any] | None = None,
    hidden: list[tuple[Any, Any, Any]] | None = None,
) -> TermTriples:
    """The new triples OWL 2 RL entails, for pyoxigraph triples or quads, or tuples of their terms
    (graphs are not read): no rdflib conversion of the data at all. `keep(terms)` gives reason.keep_inferred's
    rule as sets of term ids (`reason.InferredFilter`): the triples it drops are never decoded,
    unless `hidden` is given: then it receives them (but `x a owl:Thing`, a premise of nothing),
    the part of the closure the store does not hold, for incremental reasoning (reasoning/dred.py)."""
    import pyoxigraph as ox

    from iclr_kg.reasoning.convert import term_from_rdflib as from_rdflib

    with gcpause.paused():  # millions of small tuples: see gcpause
        derived_schema: list[tuple[Any, Any, Any]] = []  # schema that equality derived (see below)
        while True:
            schema = oxigraph_schema(ontology, itertools.chain(derived_schema, data))
            # Read as they are encoded: a pyoxigraph quad makes new term objects on every access,
            # and lists of them held every quad's three terms through the evaluation (1.3 million
            # at 10,000 papers, where the interned terms are 166,000).
            given = ((t[0], t[1], t[2]) for t in itertools.chain(ontology, data))
            kept_hidden: list[tuple[Any, Any, Any]] | None = [] if hidden is not None else None
            found: list[tuple[Any, Any, Any]] = []
            closure = _evaluate(given, schema, from_rdflib, ox.Literal, True, keep, kept_hidden, found)
            # The schema is compiled before the data is read; where owl:sameAs makes a data term
            # the same as a class or property (eq-rep-*), the schema triples it derives are
            # compiled too, and the data read again, until they bring no new one (OWL RL's scm-*
            # over them: `s2 subClassOf s1`, `s1 sameAs iclr:Paper` gives s2 Paper's superclasses).
            known = set(derived_schema)
            new = [t for t in dict.fromkeys(found) if t not in known]
            if not new:
                if hidden is not None and kept_hidden is not None:
                    hidden.extend(kept_hidden)
                return closure
            derived_schema += new


def _evaluate(
    given: Iterable[tuple[Any, Any, Any]],
    schema: Schema,
    schema_term: Any,
    literal_type: type,
    only_new: bool,
    keep: Callable[[list[Any]], Any] | None = None,
    hidden: list[tuple[Any, Any, Any]] | None = None,
    schema_found: list[tuple[Any, Any, Any]] | None = None,
) -> TermTriples:
    """Semi-naive evaluation over interned terms; `schema_term` maps schema (rdflib) terms to
    the data's term type, so both kinds of terms share one id space. The result: the new
    triples (a set difference) that `keep` lets through, as ids into the terms (TermTriples).
    `schema_found`, where owl:sameAs was met, receives the new triples that are schema
    (`is_schema`): what equality made schema, for `closure_oxigraph` to compile."""
    ids: dict[Any, int] = {}
    terms: list[Any] = []
    literals: set[int] = set()

    def encode(term: Any) -> int:
        found = ids.get(term)
        if found is None:
            found = ids[term] = len(terms)
            terms.append(term)
            if isinstance(term, literal_type):
                literals.add(found)
        return found

    tables = _Encoded(schema, lambda t: encode(schema_term(t)))
    facts = _Facts(tables.joined, tables.same_as, tables.type, tables.checked)
    agenda: list[tuple[int, int, int]] = []
    fresh: list[tuple[int, int, int]] = []  # the facts added, in the order found: no copy of the given set

    def derive(triple: tuple[int, int, int]) -> None:
        if facts.add(triple):
            agenda.append(triple)
            fresh.append(triple)

    for s, p, o in given:  # the ontology's triples, then the data's
        derive((encode(s), encode(p), encode(o)))
    if only_new:
        fresh.clear()  # the given facts
    entailed = [
        (encode(schema_term(s)), encode(schema_term(p)), encode(schema_term(o))) for s, p, o in schema.schema_triples()
    ]
    for triple in entailed:
        derive(triple)
    compiled = set(entailed)
    while agenda:
        _fire(agenda.pop(), tables, facts, derive, literals)
    _check_consistency(tables, facts, terms)
    new: list[tuple[int, int, int]] = fresh
    if schema_found is not None and facts.by_ps.get(tables.same_as):  # equality can derive schema
        predicates = {ids[x] for x in OXIGRAPH_SCHEMA_PREDICATES if x in ids}
        declared = {ids[x] for x in OXIGRAPH_DECLARATIONS if x in ids}
        schema_found.extend(
            (terms[s], terms[p], terms[o])
            for s, p, o in new
            if (p in predicates or (p == tables.type and o in declared)) and (s, p, o) not in compiled
        )  # what the compiled schema entails already would compile to the same tables
    if keep is not None:  # reason.InferredFilter: the rule as sets of term ids, one pass in a comprehension
        f = keep(terms)
        keeps = [
            s not in f.bad_subjects
            and o not in f.blank_objects
            and not (o in f.trivial_objects and p in f.trivial_predicates)
            and not (s == o and p in f.reflexive_predicates)
            for s, p, o in new
        ]
        if hidden is not None:
            thing = ids.get(schema_term(OWL.Thing))
            hidden.extend(
                (terms[s], terms[p], terms[o])
                for (s, p, o), k in zip(new, keeps, strict=True)
                if not k and (o != thing or p != tables.type)
            )
        new = list(itertools.compress(new, keeps))
    return TermTriples(terms, array("I", itertools.chain.from_iterable(new)))


def _fire(triple: tuple[int, int, int], schema: _Encoded, facts: Facts, derive, literals: set[int]) -> None:
    s, p, o = triple
    up, inverse, symmetric, domains, ranges, rest = schema.plans.get(p) or schema.plan(p)
    for q in up:  # prp-spo1, prp-eqp
        derive((s, q, o))
    if (inverse or symmetric) and o not in literals:
        for q in inverse:  # prp-inv
            derive((o, q, s))
        if symmetric:  # prp-symp
            derive((o, p, s))
    TYPE = schema.type
    for c in domains:  # prp-dom (+ scm-dom)
        derive((s, TYPE, c))
    for c in ranges:  # prp-rng (+ scm-rng); literal subjects are filtered later
        derive((o, TYPE, c))
    if rest:
        _fire_rest(s, p, o, schema, facts, derive, literals)
        return
    if schema.same_as in facts.by_ps:
        _replace_twins(s, p, o, facts.by_ps[schema.same_as], derive)
    if p == TYPE:
        _fire_type(s, o, schema, facts, derive)


def _replace_twins(s: int, p: int, o: int, same: dict[int, set[int]], derive) -> None:
    """eq-rep-s/p/o for a triple whose terms may have twins (owl:sameAs)."""
    for twin in list(same.get(s, ())):
        derive((twin, p, o))
    for twin in list(same.get(o, ())):
        derive((s, p, twin))
    for twin in list(same.get(p, ())):
        derive((s, twin, o))


def _fire_rest(s: int, p: int, o: int, schema: _Encoded, facts: Facts, derive, literals: set[int]) -> None:
    """The rules that join a triple with others, or read restrictions, types and equality."""
    TYPE, SAME = schema.type, schema.same_as
    if p in schema.transitive:  # prp-trp
        for z in list(facts.by_ps[p].get(o, ())):
            derive((s, p, z))
        for w in list(facts.by_po[p].get(s, ())):
            derive((w, p, o))
    for i, chain, q in schema.chain_steps.get(p, ()):  # prp-spo2
        for start, end in _chain_matches(chain, i, s, o, facts):
            derive((start, q, end))
    if p in schema.functional:  # prp-fp
        for other in list(facts.by_ps[p].get(s, ())):
            if other != o and o not in literals:
                derive((o, SAME, other))
    if p in schema.inverse_functional:  # prp-ifp
        for other in list(facts.by_po[p].get(o, ())):
            if other != s:
                derive((s, SAME, other))
    if p == SAME:  # eq-sym, eq-trans, eq-rep-s/p/o
        derive((o, SAME, s))
        for z in list(facts.by_ps[SAME].get(o, ())):
            derive((s, SAME, z))
        by_s, by_o = facts.equality_indexes()
        for q, z in list(by_s.get(s, ())):
            derive((o, q, z))
        for w, q in list(by_o.get(s, ())):
            derive((w, q, o))
        for w, z in [(w, z) for w, zs in list(facts.by_ps.get(s, {}).items()) for z in zs]:
            derive((w, o, z))
    elif SAME in facts.by_ps:
        _replace_twins(s, p, o, facts.by_ps[SAME], derive)
    for r, filler in schema.svf_by_property.get(p, ()):  # cls-svf1/2
        if filler == schema.thing or (o, TYPE, filler) in facts.all:
            derive((s, TYPE, r))
    for r, value in schema.hv_by_property.get(p, ()):  # cls-hv2
        if o == value:
            derive((s, TYPE, r))
    for r, filler in schema.avf_by_property.get(p, ()):  # cls-avf (x in r, x p y)
        if r in facts.by_ps[TYPE].get(s, ()):
            derive((o, TYPE, filler))
    if p == TYPE:
        _fire_type(s, o, schema, facts, derive)


def _fire_type(x: int, c: int, schema: _Encoded, facts: Facts, derive) -> None:
    TYPE = schema.type
    for d in schema.super_classes.get(c, ()):  # cax-sco, cax-eqc
        if d != c:
            derive((x, TYPE, d))
    for r, p in schema.svf_by_filler.get(c, ()):  # cls-svf1, x is the filler instance
        for w in list(facts.by_po[p].get(x, ())):
            derive((w, TYPE, r))
    if c in schema.hv:  # cls-hv1
        p, value = schema.hv[c]
        derive((x, p, value))
    if c in schema.avf:  # cls-avf (x in r, then its p-values)
        p, filler = schema.avf[c]
        for y in list(facts.by_ps[p].get(x, ())):
            derive((y, TYPE, filler))


def _chain_matches(chain: list[int], i: int, s: int, o: int, facts: Facts) -> list[tuple[int, int]]:
    """Start and end of every path along `chain` whose step i is the new edge s -> o."""
    starts = [s]
    for step in reversed(chain[:i]):
        index = facts.by_po.get(step, {})
        starts = [w for node in starts for w in index.get(node, ())]
    ends = [o]
    for step in chain[i + 1 :]:
        index = facts.by_ps.get(step, {})
        ends = [z for node in ends for z in index.get(node, ())]
    return [(a, b) for a in starts for b in ends]


def _check_consistency(schema: _Encoded, facts: _Facts, terms: list[Term]) -> None:
    problems = []
    members = facts.subjects_of(schema.type, schema.checked)
    for a, b in schema.disjoint:  # cax-dw, cax-adc
        both = set(members.get(a, ())) & set(members.get(b, ()))
        for x in sorted((terms[i] for i in both), key=str):
            problems.append(f"- {x} is in the disjoint classes {terms[a]} and {terms[b]}")
    for x in sorted((terms[i] for i in members.get(schema.nothing, ())), key=str):  # cls-nothing2
        problems.append(f"- {x} is an instance of owl:Nothing")
    if problems:
        raise InconsistentGraph(
            "OWL RL reasoning found the graph inconsistent (disjoint classes):\n" + "\n".join(problems)
        )
