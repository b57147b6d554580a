"""Delete and rederive (DRed): the fast reasoner's closure brought up to date after a change.

A full build reasons over every asserted triple; an edit to one curated file changes a handful.
DRed (Gupta, Mumick and Subrahmanian, 1993) maintains the closure instead, with fastrl's own
rules (`fastrl._fire`, unchanged):

1. over-delete: whatever the old closure derives from a removed triple is taken out, and what
   derives from that, and so on;
2. rederive: each over-deleted fact that one rule still concludes from the facts held is put
   back (`_Backward`: fastrl's rules read from their conclusion, each premise a look-up), so a
   prolific person's thousands of facts are looked up, not fired again;
3. insert: added triples are fired semi-naively, as in a full run.

The old closure is the published generation's default graph (asserted, ontology and kept
inferred triples) and its hidden facts (what `keep_inferred` drops, saved by the build beside the
generation), read through Oxigraph's indexes on demand: only the neighbourhood of the change is
ever decoded. What this does not handle (owl:sameAs, whose equality rules need whole-graph
indexes) raises Fallback, and the build runs in full.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, Store, Triple
from rdflib import OWL

from iclr_kg import vocab
from iclr_kg.errors import InconsistentGraph
from iclr_kg.reasoning.convert import term_from_rdflib
from iclr_kg.reasoning.fastrl import Schema, _Encoded, _fire
from iclr_kg.reasoning.reason import keep_inferred

Ids = tuple[int, int, int]
DEFAULT = DefaultGraph()
THING = NamedNode(str(OWL.Thing))


class Fallback(Exception):
    """The change is outside what an incremental build handles: build in full (the message
    says why, in the build's summary)."""


class _Terms:
    """Terms numbered as fastrl numbers them (small ints, literals remembered)."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.terms: list[Any] = []
        self.literals: set[int] = set()

    def encode(self, term: Any) -> int:
        found = self.ids.get(term)
        if found is None:
            found = self.ids[term] = len(self.terms)
            self.terms.append(term)
            if isinstance(term, Literal):
                self.literals.add(found)
        return found

    def triple(self, t: Ids) -> tuple[Any, Any, Any]:
        """The terms of `t` (a tuple: a hidden fact may have a literal subject, which no Triple has)."""
        return self.terms[t[0]], self.terms[t[1]], self.terms[t[2]]


class _Row:
    """`facts.by_ps[p]` (objects by subject) or `facts.by_po[p]` (subjects by object)."""

    def __init__(self, facts: StoreClosure, p: int, forward: bool):
        self.facts, self.p, self.forward = facts, p, forward

    def get(self, x: int, default: Any = ()) -> set[int]:
        return self.facts.objects(self.p, x) if self.forward else self.facts.subjects(self.p, x)


class _Index:
    """The mapping fastrl's rules read (`facts.by_ps`, `facts.by_po`), answered on demand."""

    def __init__(self, facts: StoreClosure, forward: bool):
        self.facts, self.forward = facts, forward

    def __getitem__(self, p: int) -> _Row:
        return _Row(self.facts, p, self.forward)

    def get(self, p: int, default: Any = None) -> _Row:
        return _Row(self.facts, p, self.forward)

    def __contains__(self, p: int) -> bool:
        if p == self.facts.same_as:  # equality is not maintained here
            return self.facts.has_same_as()
        return True


class _Side:
    """A set of id triples with the lookups the rules need."""

    def __init__(self) -> None:
        self.all: set[Ids] = set()
        self.ps: dict[tuple[int, int], set[int]] = defaultdict(set)
        self.po: dict[tuple[int, int], set[int]] = defaultdict(set)

    def add(self, t: Ids) -> None:
        s, p, o = t
        self.all.add(t)
        self.ps[p, s].add(o)
        self.po[p, o].add(s)

    def discard(self, t: Ids) -> None:
        if t not in self.all:
            return
        s, p, o = t
        self.all.discard(t)
        self.ps[p, s].discard(o)
        self.po[p, o].discard(s)


@dataclass
class StoreClosure:
    """The old closure (a generation's default graph and its hidden facts) with what this run
    removed and added; `all`, `by_ps`, `by_po` and `add` are what `fastrl._fire` uses."""

    store: Store
    terms: _Terms
    hidden: _Side
    same_as: int
    removed: set[Ids] = field(default_factory=set)
    added: _Side = field(default_factory=_Side)
    _objects: dict[tuple[int, int], set[int]] = field(default_factory=dict)
    _subjects: dict[tuple[int, int], set[int]] = field(default_factory=dict)
    _unknown: dict[int, bool] = field(default_factory=dict)
    _same_as: bool | None = None

    def __post_init__(self) -> None:
        self.all = self
        self.by_ps = _Index(self, True)
        self.by_po = _Index(self, False)

    def release(self) -> None:
        """Break the references to itself (`all`, the indexes) so that reference counting frees
        it, and with it its handle on the store, at once: a writer runs with the cyclic collector
        paused, and a read-write handle left open goes on compacting its generation."""
        del self.all, self.by_ps, self.by_po

    def unknown(self, s: int) -> bool:
        """Whether the old default graph has no triple about `s` (a paper, an authorship a new
        year brings): then nothing about it was in the old closure but hidden facts, and the
        lookups of its facts, one per derived fact, are spared (one lookup per subject)."""
        found = self._unknown.get(s)
        if found is None:
            subject = self.terms.terms[s]
            found = (
                isinstance(subject, Literal)
                or next(self.store.quads_for_pattern(subject, None, None, DEFAULT), None) is None
            )
            self._unknown[s] = found
        return found

    def _stored_objects(self, p: int, s: int) -> set[int]:
        found = self._objects.get((p, s))
        if found is None:
            subject = self.terms.terms[s]
            found = set()
            if not self.unknown(s):
                predicate = self.terms.terms[p]
                found = {
                    self.terms.encode(q.object) for q in self.store.quads_for_pattern(subject, predicate, None, DEFAULT)
                }
            self._objects[p, s] = found
        return found

    def _stored_subjects(self, p: int, o: int) -> set[int]:
        found = self._subjects.get((p, o))
        if found is None:
            predicate, obj = self.terms.terms[p], self.terms.terms[o]
            found = {self.terms.encode(q.subject) for q in self.store.quads_for_pattern(None, predicate, obj, DEFAULT)}
            self._subjects[p, o] = found
        return found

    def objects(self, p: int, s: int) -> set[int]:
        base = self._stored_objects(p, s) | self.hidden.ps.get((p, s), set())
        removed = self.removed
        return {o for o in base if (s, p, o) not in removed} | self.added.ps.get((p, s), set())

    def subjects(self, p: int, o: int) -> set[int]:
        base = self._stored_subjects(p, o) | self.hidden.po.get((p, o), set())
        removed = self.removed
        return {s for s in base if (s, p, o) not in removed} | self.added.po.get((p, o), set())

    def any_object(self, p: int, s: int) -> bool:
        """Whether (s, p, something) is held, reading no more of the store than the first one."""
        if self.added.ps.get((p, s)) or any((s, p, o) not in self.removed for o in self.hidden.ps.get((p, s), ())):
            return True
        known = self._objects.get((p, s))
        if known is not None:
            return any((s, p, o) not in self.removed for o in known)
        subject = self.terms.terms[s]
        if isinstance(subject, Literal):
            return False
        encode = self.terms.encode
        quads = self.store.quads_for_pattern(subject, self.terms.terms[p], None, DEFAULT)
        return any((s, p, encode(q.object)) not in self.removed for q in quads)

    def any_subject(self, p: int, o: int) -> bool:
        """Whether (something, p, o) is held, reading no more of the store than the first one."""
        if self.added.po.get((p, o)) or any((x, p, o) not in self.removed for x in self.hidden.po.get((p, o), ())):
            return True
        known = self._subjects.get((p, o))
        if known is not None:
            return any((x, p, o) not in self.removed for x in known)
        encode = self.terms.encode
        quads = self.store.quads_for_pattern(None, self.terms.terms[p], self.terms.terms[o], DEFAULT)
        return any((encode(q.subject), p, o) not in self.removed for q in quads)

    def was(self, t: Ids) -> bool:
        """Whether `t` was in the old closure: a point lookup, where the objects of (s, p) are
        not already read (a prolific person's `authorOf` has thousands)."""
        if t in self.hidden.all:
            return True
        known = self._objects.get((t[1], t[0]))
        if known is not None:
            return t[2] in known
        if self.unknown(t[0]):
            return False
        s, p, o = self.terms.terms[t[0]], self.terms.terms[t[1]], self.terms.terms[t[2]]
        return Quad(s, p, o, DEFAULT) in self.store

    def __contains__(self, t: object) -> bool:  # a Container: asked of id triples only
        if t in self.added.all:
            return True
        return t not in self.removed and self.was(t)  # type: ignore[arg-type]

    def add(self, t: Ids) -> bool:
        if t in self:
            return False
        if t[1] == self.same_as:
            raise Fallback("the change derives owl:sameAs")
        self.added.add(t)
        return True

    def equality_indexes(self) -> tuple[dict[int, set[tuple[int, int]]], dict[int, set[tuple[int, int]]]]:
        """What eq-rep-s/p/o would join against: every triple by subject and by object. Not
        answered from a store: with owl:sameAs in the graph this run falls back to a full build."""
        raise Fallback("owl:sameAs in the graph")

    def has_same_as(self) -> bool:
        if self._same_as is None:
            predicate = self.terms.terms[self.same_as]
            self._same_as = any(self.store.quads_for_pattern(None, predicate, None, DEFAULT))
        return self._same_as


@dataclass
class Change:
    """What the change does to the inferred graph and to the hidden facts."""

    inferred_added: list[Triple]
    inferred_removed: list[Triple]
    hidden_added: set[tuple[Any, Any, Any]]  # hidden facts that are new
    hidden_removed: set[tuple[Any, Any, Any]]  # hidden facts that went

    def hidden_after(self, before: Iterable[tuple[Any, Any, Any]]) -> list[tuple[Any, Any, Any]]:
        """The hidden facts after the change, from those before it (a pass over all of them:
        builds save them whole; a writer keeps a set and applies the two sets instead)."""
        return [t for t in before if t not in self.hidden_removed] + [
            t for t in self.hidden_added if t not in self.hidden_removed
        ]


@dataclass
class Context:
    """The schema's rule tables and the hidden facts, numbered: what `update` starts from.

    Made once from a schema and hidden facts (20,000 of them at 10,000 papers: a tenth of a
    second to number), then changed in place by each `update` to hold the hidden facts after it,
    so that a writer that maintains one update after another passes it on. After an update that
    raised, it is no longer the hidden facts of any generation: make a new one."""

    schema: Schema
    terms: _Terms
    tables: _Encoded
    hidden: _Side
    back: _Backward


def context(schema: Schema, hidden: Iterable[tuple[Any, Any, Any]]) -> Context:
    terms = _Terms()
    tables = _Encoded(schema, lambda t: terms.encode(term_from_rdflib(t)))
    side = _Side()
    for s, p, o in hidden:
        side.add((terms.encode(s), terms.encode(p), terms.encode(o)))
    return Context(schema, terms, tables, side, _Backward(tables))


class _Backward:
    """fastrl's rules (`fastrl._fire`) indexed by what they conclude, from the same tables, so
    that whether the facts held still conclude a fact is a few look-ups. Rules that conclude
    owl:sameAs are absent: with owl:sameAs in the graph, DRed falls back to a full build."""

    def __init__(self, tables: _Encoded):
        self.tables = tables
        self.sub_props = _inverted((p, q) for p, qs in tables.super_props.items() for q in qs if q != p)  # prp-spo1
        self.inverse_of = _inverted((p, q) for p, qs in tables.inverse.items() for q in qs)  # prp-inv
        self.by_domain = _inverted((p, c) for p, cs in tables.domains.items() for c in cs)  # prp-dom
        self.by_range = _inverted((p, c) for p, cs in tables.ranges.items() for c in cs)  # prp-rng
        self.sub_classes = _inverted((d, c) for d, cs in tables.super_classes.items() for c in cs if c != d)  # cax-sco
        self.chains = _inverted(  # prp-spo2
            (tuple(chain), q) for steps in tables.chain_steps.values() for _, chain, q in steps
        )
        self.svf = _inverted(((p, f), r) for p, rs in tables.svf_by_property.items() for r, f in rs)  # cls-svf1/2
        self.hv2 = _inverted(((p, v), r) for p, rs in tables.hv_by_property.items() for r, v in rs)  # cls-hv2
        self.avf = _inverted(((r, p), f) for p, rs in tables.avf_by_property.items() for r, f in rs)  # cls-avf
        self.hv1 = _inverted((c, pv) for c, pv in tables.hv.items())  # cls-hv1

    def concludes(self, facts: StoreClosure, h: Ids, literals: set[int]) -> bool:
        """Whether one rule concludes `h` from facts `facts` holds now."""
        s, q, o = h
        t = self.tables
        if q == t.type:
            return self._typed(facts, s, o)
        if any((s, p, o) in facts for p in self.sub_props.get(q, ())):
            return True
        if s not in literals:  # prp-inv and prp-symp fire only from a triple whose object is no literal
            if any((o, p, s) in facts for p in self.inverse_of.get(q, ())):
                return True
            if q in t.symmetric and (o, q, s) in facts:
                return True
        if q in t.transitive and facts.objects(q, s) & facts.subjects(q, o):
            return True
        for chain in self.chains.get(q, ()):
            ends = {s}
            for step in chain:
                ends = {z for node in ends for z in facts.objects(step, node)}
            if o in ends:
                return True
        return any((s, t.type, c) in facts for c in self.hv1.get((q, o), ()))

    def _typed(self, facts: StoreClosure, x: int, c: int) -> bool:
        t = self.tables
        if any(facts.any_object(p, x) for p in self.by_domain.get(c, ())):
            return True
        if any(facts.any_subject(p, x) for p in self.by_range.get(c, ())):
            return True
        if any((x, t.type, d) in facts for d in self.sub_classes.get(c, ())):
            return True
        for p, filler in self.svf.get(c, ()):
            if any(filler == t.thing or (y, t.type, filler) in facts for y in facts.objects(p, x)):
                return True
        if any((x, p, value) in facts for p, value in self.hv2.get(c, ())):
            return True
        avf = self.avf.get(c, ())
        return any((w, t.type, r) in facts for r, p in avf for w in facts.subjects(p, x))


def _inverted(pairs: Iterable[tuple[Any, Any]]) -> dict[Any, list[Any]]:
    """(key, conclusion) pairs as conclusion -> keys."""
    out: dict[Any, list[Any]] = defaultdict(list)
    for key, conclusion in pairs:
        out[conclusion].append(key)
    return dict(out)


def update(
    store: Store,
    schema: Schema,
    hidden: Iterable[tuple[Any, Any, Any]],
    removed: Iterable[Triple],
    added: Iterable[Triple],
    given: Callable[[tuple[Any, Any, Any]], bool],
    start: Context | None = None,
) -> Change:
    """Maintain the closure held by `store` (a generation) and `hidden` after the asserted
    triples `removed` and `added` (triple level: a triple still stated by another graph is not
    removed). `given((s, p, o))`: whether the triple is asserted or ontology after the change.
    `start`: the Context of `schema` and `hidden`, if the caller kept one (it is changed)."""
    begun = start if start is not None else context(schema, hidden)
    terms, tables, side = begun.terms, begun.tables, begun.hidden
    facts = StoreClosure(store, terms, side, tables.same_as)
    try:
        encode = terms.encode
        gone = [(encode(t.subject), encode(t.predicate), encode(t.object)) for t in removed]
        new = [(encode(t.subject), encode(t.predicate), encode(t.object)) for t in added]
        if any(t[1] == tables.same_as for t in (*gone, *new)) or facts.has_same_as():
            raise Fallback("owl:sameAs in the graph")
        deleted = _over_delete(facts, tables, gone, terms.literals)
        facts.removed = deleted
        _rederive(facts, tables, deleted, new, given, terms, begun.back)
        _check_consistency(facts, tables, terms)
        return _change(facts, deleted, new, given, store)
    finally:
        facts.release()


def _over_delete(facts: StoreClosure, tables: _Encoded, gone: list[Ids], literals: set[int]) -> set[Ids]:
    """Every old fact derivable from a removed one (an over-estimate: some come back)."""
    deleted = {t for t in gone if facts.was(t)}
    agenda = list(deleted)

    def over(h: Ids) -> None:
        if h not in deleted and facts.was(h):
            deleted.add(h)
            agenda.append(h)

    while agenda:
        _fire(agenda.pop(), tables, facts, over, literals)
    return deleted


def _rederive(
    facts: StoreClosure,
    tables: _Encoded,
    deleted: set[Ids],
    new: list[Ids],
    given: Callable[[tuple[Any, Any, Any]], bool],
    terms: _Terms,
    back: _Backward,
) -> None:
    agenda: list[Ids] = []

    def derive(h: Ids) -> None:
        if facts.add(h):
            agenda.append(h)

    for t in new:
        derive(t)
    for t in deleted:
        if given(terms.triple(t)):
            derive(t)
    for t in deleted:  # one step from what is held; what follows from these, the agenda derives
        if t not in facts.added.all and back.concludes(facts, t, terms.literals):
            derive(t)
    while agenda:
        _fire(agenda.pop(), tables, facts, derive, terms.literals)


def _check_consistency(facts: StoreClosure, tables: _Encoded, terms: _Terms) -> None:
    """cax-dw, cax-adc and cls-nothing2, for the subjects whose types were added."""
    typed = {s for s, p, _ in facts.added.all if p == tables.type}
    problems = []
    for x in sorted(typed, key=lambda i: str(terms.terms[i])):
        classes = facts.objects(tables.type, x)
        problems += [
            f"- {terms.terms[x]} is in the disjoint classes {terms.terms[a]} and {terms.terms[b]}"
            for a, b in tables.disjoint
            if a in classes and b in classes
        ]
        if tables.nothing in classes:
            problems.append(f"- {terms.terms[x]} is an instance of owl:Nothing")
    if problems:
        raise InconsistentGraph(
            "OWL RL reasoning found the graph inconsistent (disjoint classes):\n" + "\n".join(problems)
        )


def _change(
    facts: StoreClosure,
    deleted: set[Ids],
    new: list[Ids],
    given: Callable[[tuple[Any, Any, Any]], bool],
    store: Store,
) -> Change:
    """Each triple whose standing may have changed, told against the old inferred graph."""
    inferred = NamedNode(vocab.GRAPH_INFERRED)
    added, removed = [], []
    standing = []
    for t in deleted | facts.added.all | set(new):
        s, p, o = terms = facts.terms.triple(t)
        derived = t in facts and not given(terms)
        kept = derived and keep_inferred(s, p, o)
        was_inferred = not facts.unknown(t[0]) and any(store.quads_for_pattern(s, p, o, inferred))
        if kept and not was_inferred:
            added.append(Triple(s, p, o))
        elif was_inferred and not kept:
            removed.append(Triple(s, p, o))
        standing.append((t, terms, derived and not kept and not (o == THING and p == vocab.RDF_TYPE)))
    hidden_added, hidden_removed = set(), set()
    for t, terms, hidden_after in standing:  # the side is read above: changed only now
        was_hidden = t in facts.hidden.all
        if hidden_after and not was_hidden:
            hidden_added.add(terms)
            facts.hidden.add(t)
        elif was_hidden and not hidden_after:
            hidden_removed.add(terms)
            facts.hidden.discard(t)
    return Change(added, removed, hidden_added, hidden_removed)
