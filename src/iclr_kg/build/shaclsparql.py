"""SHACL validation compiled to SPARQL and run inside Oxigraph, for large data.

pySHACL is the reference (`iclr-kg validate`, and `--validator pyshacl` on a build); it walks
every focus node in Python, which takes minutes on ICLR-sized imports. The shapes in
ontology/shapes.ttl use a small part of SHACL Core and SHACL-SPARQL; each constraint compiles
to one SPARQL query that returns all its violations at once, evaluated by Oxigraph over the
asserted data with the ontology mixed in (as pySHACL's `ont_graph` does). Tests check that it
reports the same focus nodes and paths as pySHACL on every broken fixture and on the real data.

Supported: targets sh:targetClass (with rdfs:subClassOf) and sh:targetSubjectsOf; node-level
sh:nodeKind and sh:sparql; property shapes with IRI, inverse and sequence paths and sh:minCount,
sh:maxCount, sh:datatype, sh:class, sh:nodeKind, sh:pattern (+ sh:flags), sh:minLength, sh:in,
sh:minInclusive, sh:maxInclusive, sh:message. Anything else raises UnsupportedShapes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import rdflib
from pyoxigraph import Literal as OxLiteral
from pyoxigraph import NamedNode, Quad, RdfFormat, Store
from rdflib import RDF, BNode, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import SH

from iclr_kg.build.validate import ValidationResult, Violation
from iclr_kg.errors import UnsupportedShapes
from iclr_kg.graph import solutions
from iclr_kg.sparql.querytext import declarations
from iclr_kg.store import byte_reader, ntriples

SUPPORTED_PROPERTY = {
    SH.path,
    SH.minCount,
    SH.maxCount,
    SH.datatype,
    SH["class"],
    SH.nodeKind,
    SH.pattern,
    SH.flags,
    SH.minLength,
    SH["in"],
    SH.minInclusive,
    SH.maxInclusive,
    SH.message,
    SH.name,
    SH.description,
}
SUPPORTED_NODE = {
    RDF.type,
    SH.targetClass,
    SH.targetSubjectsOf,
    SH.nodeKind,
    SH.property,
    SH.sparql,
    SH.message,
    SH.name,
    SH.description,
    SH.deactivated,
}
NODE_KINDS: dict[rdflib.term.Node, str] = {
    SH.IRI: "isIRI(?v)",
    SH.BlankNode: "isBlank(?v)",
    SH.Literal: "isLiteral(?v)",
    SH.BlankNodeOrIRI: "(isBlank(?v) || isIRI(?v))",
    SH.IRIOrLiteral: "(isIRI(?v) || isLiteral(?v))",
    SH.BlankNodeOrLiteral: "(isBlank(?v) || isLiteral(?v))",
}


def _term(node: rdflib.term.Node) -> str:
    if isinstance(node, URIRef):
        return f"<{node}>"
    if isinstance(node, Literal):
        return node.n3()
    raise UnsupportedShapes(f"blank node {node} where a constant is needed")


Step = tuple[str, bool]  # one step of a path: (predicate IRI, inverse)
FOCUS = "\x00focus\x00"  # where a constraint's query takes its focus nodes


def _path(shapes: rdflib.Graph, node: rdflib.term.Node) -> tuple[str, str, list[Step]]:
    """(SPARQL property path, the path as pySHACL reports it for comparison, its steps)."""
    if isinstance(node, URIRef):
        return f"<{node}>", str(node), [(str(node), False)]
    inverse = shapes.value(node, SH.inversePath)
    if inverse is not None:
        inner, label, steps = _path(shapes, inverse)
        if len(steps) != 1:
            raise UnsupportedShapes(f"inverse of the path {inverse}, which is not an IRI")
        return f"^{inner}", f"^{label}", [(steps[0][0], not steps[0][1])]
    if shapes.value(node, RDF.first) is not None:
        parts = [_path(shapes, step) for step in Collection(shapes, node)]
        steps = [step for _, _, inner in parts for step in inner]
        return "/".join(s for s, _, _ in parts), "/".join(label for _, label, _ in parts), steps
    raise UnsupportedShapes(f"path {node} is not an IRI, an inverse or a sequence")


@dataclass(frozen=True)
class Constraint:
    """One constraint compiled to one query that returns all its violations. What it reads:
    `steps`, the path from the focus node (empty: the focus node alone), and the values' types
    if `value_types`; None for a SPARQL constraint, which may read anything."""

    template: str  # the query, FOCUS standing for the focus nodes
    targets: tuple[str, ...]  # the target patterns, each binding ?this
    label: str
    default_message: str
    message: rdflib.term.Node | None
    steps: tuple[Step, ...] | None
    value_types: bool = False

    def query(self, values: str = "") -> str:
        """The query, for the focus nodes in `values` (a VALUES block for ?this) or all."""
        focus = "{ SELECT DISTINCT ?this WHERE { " + values + " UNION ".join(self.targets) + " } }"
        return self.template.replace(FOCUS, focus)


def _targets(shapes: rdflib.Graph, shape: rdflib.term.Node) -> tuple[str, ...]:
    parts = [
        f"{{ ?this a/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* {_term(c)} }}"
        for c in shapes.objects(shape, SH.targetClass)
    ]
    parts += [f"{{ ?this {_term(p)} ?target_any }}" for p in shapes.objects(shape, SH.targetSubjectsOf)]
    return tuple(parts)


def constraints(shapes: rdflib.Graph) -> Iterable[Constraint]:
    """Every active constraint of `shapes` (raises UnsupportedShapes on anything else)."""
    for shape in set(shapes.subjects(RDF.type, SH.NodeShape)):
        if shapes.value(shape, SH.deactivated) == Literal(True):
            continue
        for predicate in set(shapes.predicates(shape)):
            if predicate not in SUPPORTED_NODE:
                raise UnsupportedShapes(f"{predicate} on node shape {shape}")
        targets = _targets(shapes, shape)
        if not targets:
            continue
        message = shapes.value(shape, SH.message)
        node_kind = shapes.value(shape, SH.nodeKind)
        if node_kind is not None:
            test = NODE_KINDS[node_kind].replace("?v", "?this")
            template = f"SELECT ?this WHERE {{ {FOCUS} FILTER (!{test}) }}"
            yield Constraint(template, targets, "", f"Node is not a {node_kind}", message, ())
        for sparql in shapes.objects(shape, SH.sparql):
            select = str(shapes.value(sparql, SH.select))
            prefixes = "".join(
                f"PREFIX {decl_prefix}: <{decl_ns}>\n"
                for owner in shapes.objects(sparql, SH.prefixes)
                for decl in shapes.objects(owner, SH.declare)
                for decl_prefix, decl_ns in [(shapes.value(decl, SH.prefix), shapes.value(decl, SH.namespace))]
            )
            body = select.replace("$this", "?this")
            where = body[body.index("{") :] if "WHERE" not in body.upper() else body[body.upper().index("WHERE") :]
            head = body[: len(body) - len(where)]
            template = f"{prefixes}{head} WHERE {{ {FOCUS} {where[where.index('{') :]} }}"
            yield Constraint(template, targets, "", "SPARQL constraint", shapes.value(sparql, SH.message), None)
        for prop in shapes.objects(shape, SH.property):
            yield from _property_constraints(shapes, prop, targets)


def _property_constraints(
    shapes: rdflib.Graph, prop: rdflib.term.Node, targets: tuple[str, ...]
) -> Iterable[Constraint]:
    for predicate in set(shapes.predicates(prop)):
        if predicate not in SUPPORTED_PROPERTY:
            raise UnsupportedShapes(f"{predicate} on property shape {prop}")
    path_node = shapes.value(prop, SH.path)
    if path_node is None:
        raise UnsupportedShapes(f"property shape {prop} has no sh:path")
    path, label, steps = _path(shapes, path_node)
    label = label if isinstance(path_node, URIRef) else "(path)"  # as validate.py reports pySHACL's
    message = shapes.value(prop, SH.message)
    value = shapes.value

    def constraint(template: str, default_message: str, value_types: bool = False) -> Constraint:
        return Constraint(template, targets, label, default_message, message, tuple(steps), value_types)

    if (n := value(prop, SH.minCount)) is not None:
        yield constraint(
            f"SELECT ?this WHERE {{ {FOCUS} OPTIONAL {{ ?this {path} ?v }} }} GROUP BY ?this HAVING (COUNT(DISTINCT ?v) < {int(str(n))})",
            f"Less than {n} values",
        )
    if (n := value(prop, SH.maxCount)) is not None:
        yield constraint(
            f"SELECT ?this WHERE {{ {FOCUS} ?this {path} ?v }} GROUP BY ?this HAVING (COUNT(DISTINCT ?v) > {int(str(n))})",
            f"More than {n} values",
        )
    tests = []
    if (d := value(prop, SH.datatype)) is not None:
        tests.append((f"(!isLiteral(?v) || DATATYPE(?v) != {_term(d)})", False))
    if (c := value(prop, SH["class"])) is not None:
        # MINUS, not FILTER NOT EXISTS: ?v is always bound, so both drop the values that are
        # instances, and Oxigraph reads the instances once instead of once per value (0.18 ->
        # 0.05 s for reviewOf at 10,000 papers). The message names the test as it reads.
        instances = f"?v a/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* {_term(c)}"
        yield constraint(
            f"SELECT DISTINCT ?this ?v WHERE {{ {FOCUS} ?this {path} ?v . MINUS {{ {instances} }} }}",
            f"Value does not conform (NOT EXISTS {{ {instances} }})",
            True,
        )
    if (k := value(prop, SH.nodeKind)) is not None:
        tests.append((f"!{NODE_KINDS[k]}", False))
    if (p := value(prop, SH.pattern)) is not None:
        flags = value(prop, SH.flags)
        pattern = Literal(str(p)).n3()
        tests.append(
            (f"(isBlank(?v) || !REGEX(STR(?v), {pattern}{', ' + Literal(str(flags)).n3() if flags else ''}))", False)
        )
    if (n := value(prop, SH.minLength)) is not None:
        tests.append((f"(isBlank(?v) || STRLEN(STR(?v)) < {int(str(n))})", False))
    if (members := value(prop, SH["in"])) is not None:
        allowed = " || ".join(f"sameTerm(?v, {_term(m)})" for m in Collection(shapes, members))
        tests.append((f"!({allowed})", False))
    if (x := value(prop, SH.minInclusive)) is not None:
        tests.append((f"!COALESCE(?v >= {_term(x)}, false)", False))
    if (x := value(prop, SH.maxInclusive)) is not None:
        tests.append((f"!COALESCE(?v <= {_term(x)}, false)", False))
    for test, value_types in tests:
        yield constraint(
            f"SELECT DISTINCT ?this ?v WHERE {{ {FOCUS} ?this {path} ?v . FILTER ({test}) }}",
            f"Value does not conform ({test})",
            value_types,
        )


def validate(
    asserted: Iterable[Sequence[Any]], ontology: Iterable[Sequence[Any]], shapes: rdflib.Graph
) -> ValidationResult:
    """Validate the asserted quads (pyoxigraph's, or tuples of their terms: rdf.TermQuad), read as
    one graph with the ontology, against `shapes`.

    Only the triples a constraint can read are loaded: those whose predicate some constraint's
    query names (`_named`: an answer depends on no other triple; all of them if a query has a
    variable predicate). Abstracts, keywords, labels and identifier values are read by no shape,
    and serializing them for the validator's store was most of its loading."""
    runs = [(c, c.query()) for c in constraints(shapes)]
    triples: Iterable[Sequence[Any]] = itertools.chain(asserted, ontology)
    read = _read_predicates([query for _, query in runs])
    if read is not None:
        triples = (t for t in triples if t[1] in read)
    store = Store()
    chunks = ntriples(triples)  # one graph: the default
    store.load(input=byte_reader(chunks), format=RdfFormat.N_TRIPLES, lenient=True)  # half the time of `extend`
    return _run(store, runs, None)


def _read_predicates(queries: list[str]) -> set[NamedNode] | None:
    """The predicates the triples `queries` can read have (`_named`), or None: any."""
    read: set[NamedNode] = set()
    for query in queries:
        named = _named(query)
        if named is None:
            return None
        read |= {NamedNode(iri) for iri in named}
    return read


# What an incremental build knows of a change: the triples added or removed, as (s, p, o) terms,
# and how to walk one step back along a path in the graph after the change.
Neighbours = Callable[[Any, str, bool], Iterable[Any]]  # (node, predicate, inverse) -> nodes one step back


# Focus nodes above which a constraint is checked on every target, as a full build does: a
# VALUES block of thousands of IRIs made a new year's incremental validation take 556 s where the
# full build's whole validation took 3 s (4,500 submissions, bench/openreview_import.py).
WHOLE_ABOVE = 1000


def validate_change(
    store: Store, graphs: list[NamedNode], shapes: rdflib.Graph, changed: list[Quad], back: Neighbours
) -> tuple[ValidationResult, int]:
    """Validate the graphs `graphs` of `store` (asserted and ontology, read as one) after the
    asserted quads `changed` were added or removed, where the graph before conformed. A
    constraint whose query names none of the changed predicates is skipped (its answer is the
    same); the others run only for the focus nodes whose result the change can alter: `affected`
    for a core constraint, `near` for a SPARQL one. `back(node, p, inverse)`: the nodes one step
    of a path before `node`. Returns the result and how many (constraint, focus node) pairs were
    checked."""
    checks, runs = 0, []
    predicates = {q.predicate.value for q in changed}
    for constraint in constraints(shapes):
        named = _named(constraint.template)
        if named is not None and not named & predicates:
            continue  # its answer is the same before and after
        if constraint.steps is not None:
            found = affected(constraint, changed, back, WHOLE_ABOVE)
        elif named is not None:
            found = near(named, changed, back, WHOLE_ABOVE)
        else:
            runs.append((constraint, constraint.query()))  # a variable predicate: it may read anything
            continue
        focus = {f for f in found if not isinstance(f, OxLiteral)} if found is not None else set()
        iris = sorted(f.value for f in focus if isinstance(f, NamedNode))
        if found is None or len(iris) != len(focus) or len(iris) > WHOLE_ABOVE:
            # so many focus nodes that the constraint over every target costs less than
            # thousands of VALUES rows joined into its query (and than finding them all: a new
            # year's change walked back from 69,000 quads for each constraint, past 100 s at
            # 10,000 papers), or a blank one (VALUES cannot name it)
            runs.append((constraint, constraint.query()))
        elif iris:
            runs.append((constraint, constraint.query("VALUES ?this { " + " ".join(f"<{i}>" for i in iris) + " } ")))
        checks += len(focus)
    return _run(store, runs, graphs), checks


def affected(constraint: Constraint, changed: list[Quad], back: Neighbours, most: int) -> set[Any] | None:
    """The focus nodes whose result for `constraint` a change can alter: the subject of a changed
    type triple or target predicate (it may enter or leave the targets), and the nodes that reach
    a changed triple along the constraint's path, or reach, along the whole path, a node whose
    type changed (for sh:class). Walking back from where the change sits gives them. None once
    there are more than `most`."""
    steps = constraint.steps or ()
    type_iri = str(RDF.type)
    out: set[Any] = set()
    for quad in changed:
        s, p, o = quad.subject, quad.predicate.value, quad.object
        if p == type_iri or any(f"{{ ?this <{p}> ?target_any }}" == t for t in constraint.targets):
            out.add(s)
            if constraint.value_types and p == type_iri:
                out |= _walk_back(s, steps, back)
        for i, (step, inverse) in enumerate(steps):
            if step == p:
                out |= _walk_back(o if inverse else s, steps[:i], back)
        if len(out) > most:
            return None
    return out


def near(named: set[str], changed: list[Quad], back: Neighbours, most: int) -> set[Any] | None:
    """For a SPARQL constraint naming the predicates `named`: the nodes of the changed triples
    with those predicates, and the nodes one such link away from them, either way. Enough for a
    constraint that relates the focus node to what is at most one link from a changed triple (two
    authorships of a paper, two entities sharing an item, a cycle through the changed link):
    the shapes' own; a shape reading further must be checked by a full build (`build --full`).
    None once there are more than `most`."""
    out: set[Any] = set()
    for quad in changed:
        if quad.predicate.value not in named:
            continue
        for node in (quad.subject, quad.object):
            if isinstance(node, OxLiteral) or (node == quad.object and quad.predicate.value == str(RDF.type)):
                continue
            out.add(node)
            for predicate in named:
                out |= set(back(node, predicate, False)) | set(back(node, predicate, True))
        if len(out) > most:
            return None
    return out


def _walk_back(node: Any, steps: tuple[Step, ...] | list[Step], back: Neighbours) -> set[Any]:
    frontier = {node}
    for predicate, inverse in reversed(steps):
        frontier = {before for n in frontier for before in back(n, predicate, inverse)}
    return frontier


_VARIABLE_PREDICATE = re.compile(r"[?$]\w+\s+[?$]\w+\s+[?$.\w<]")
_IRI = re.compile(r"<([^<>\s]*)>")
_PREFIXED = re.compile(r"(?<![\w?$<])([A-Za-z][\w-]*)?:([\w.-]*\w)")
_A = re.compile(r"[\s;{/^(|]a[\s/|)]")  # the keyword `a`: rdf:type


def _named(query: str) -> set[str] | None:
    """The IRIs `query` names (`a` is rdf:type), or None if it has a variable predicate or a
    prefix declaration that cannot be read: a query's answer depends only on the triples whose
    predicates it names."""
    where = query[query.upper().find("WHERE") :]
    if _VARIABLE_PREDICATE.search(where):
        return None
    named = set(_IRI.findall(query))
    declared = declarations(query)
    for prefix, local in _PREFIXED.findall(where):
        values = set(declared.get(prefix, []))
        if not values:
            continue
        if len(values) > 1:
            return None  # declared as two IRIs: it may name either
        iri = values.pop()
        named.add(iri + local)
    if _A.search(where):
        named.add(str(RDF.type))
    return named


def _run(store: Store, runs: list[tuple[Constraint, str]], default_graph: list[NamedNode] | None) -> ValidationResult:
    violations = set()
    for constraint, query in runs:
        for row in solutions(store.query(query, default_graph=None if default_graph is None else list(default_graph))):
            focus = row["this"]
            text = str(constraint.message) if constraint.message is not None else constraint.default_message
            for name in ("position", "item", "other"):
                try:
                    bound = row[name]
                except (KeyError, IndexError, TypeError):
                    bound = None
                if bound is not None:
                    text = text.replace(f"{{?{name}}}", bound.value).replace(f"{{${name}}}", bound.value)
            text = text.replace("$this", focus.value)
            violations.add(
                Violation(
                    focus=focus.value if not isinstance(focus, BNode) else str(focus),
                    path=constraint.label,
                    message=text,
                    severity="Violation",
                )
            )
    ordered = sorted(violations, key=lambda v: (v.focus, v.path, v.message))
    return ValidationResult(not ordered, ordered)
