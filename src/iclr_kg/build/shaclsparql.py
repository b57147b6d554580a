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

from collections.abc import Iterable

import rdflib
from pyoxigraph import DefaultGraph, Quad, Store
from rdflib import RDF, BNode, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import SH

from iclr_kg.build.validate import ValidationResult, Violation
from iclr_kg.errors import UnsupportedShapes

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
NODE_KINDS = {
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


def _path(shapes: rdflib.Graph, node: rdflib.term.Node) -> tuple[str, str]:
    """(SPARQL property path, the path as pySHACL reports it for comparison)."""
    if isinstance(node, URIRef):
        return f"<{node}>", str(node)
    inverse = shapes.value(node, SH.inversePath)
    if inverse is not None:
        inner, label = _path(shapes, inverse)
        return f"^{inner}", f"^{label}"
    if shapes.value(node, RDF.first) is not None:
        steps = [_path(shapes, step) for step in Collection(shapes, node)]
        return "/".join(s for s, _ in steps), "/".join(label for _, label in steps)
    raise UnsupportedShapes(f"path {node} is not an IRI, an inverse or a sequence")


def _focus(shapes: rdflib.Graph, shape: rdflib.term.Node) -> str:
    parts = [
        f"{{ ?this a/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* {_term(c)} }}"
        for c in shapes.objects(shape, SH.targetClass)
    ]
    parts += [f"{{ ?this {_term(p)} ?target_any }}" for p in shapes.objects(shape, SH.targetSubjectsOf)]
    if not parts:
        return ""
    return "{ SELECT DISTINCT ?this WHERE { " + " UNION ".join(parts) + " } }"


def _queries(shapes: rdflib.Graph) -> Iterable[tuple[str, str, str, rdflib.term.Node | None]]:
    """(SPARQL query, reported path, default message, sh:message node) per constraint."""
    for shape in set(shapes.subjects(RDF.type, SH.NodeShape)):
        if shapes.value(shape, SH.deactivated) == Literal(True):
            continue
        for predicate in set(shapes.predicates(shape)):
            if predicate not in SUPPORTED_NODE:
                raise UnsupportedShapes(f"{predicate} on node shape {shape}")
        focus = _focus(shapes, shape)
        if not focus:
            continue
        node_kind = shapes.value(shape, SH.nodeKind)
        if node_kind is not None:
            test = NODE_KINDS[node_kind].replace("?v", "?this")
            yield (
                f"SELECT ?this WHERE {{ {focus} FILTER (!{test}) }}",
                "",
                f"Node is not a {node_kind}",
                shapes.value(shape, SH.message),
            )
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
            yield (
                f"{prefixes}{head} WHERE {{ {focus} {where[where.index('{') :]} }}",
                "",
                "SPARQL constraint",
                shapes.value(sparql, SH.message),
            )
        for prop in shapes.objects(shape, SH.property):
            yield from _property_queries(shapes, prop, focus)


def _property_queries(
    shapes: rdflib.Graph, prop: rdflib.term.Node, focus: str
) -> Iterable[tuple[str, str, str, rdflib.term.Node | None]]:
    for predicate in set(shapes.predicates(prop)):
        if predicate not in SUPPORTED_PROPERTY:
            raise UnsupportedShapes(f"{predicate} on property shape {prop}")
    path_node = shapes.value(prop, SH.path)
    path, label = _path(shapes, path_node)
    label = label if isinstance(path_node, URIRef) else "(path)"  # as validate.py reports pySHACL's
    message = shapes.value(prop, SH.message)
    value = shapes.value
    if (n := value(prop, SH.minCount)) is not None:
        yield (
            f"SELECT ?this WHERE {{ {focus} OPTIONAL {{ ?this {path} ?v }} }} GROUP BY ?this HAVING (COUNT(DISTINCT ?v) < {int(n)})",
            label,
            f"Less than {n} values",
            message,
        )
    if (n := value(prop, SH.maxCount)) is not None:
        yield (
            f"SELECT ?this WHERE {{ {focus} ?this {path} ?v }} GROUP BY ?this HAVING (COUNT(DISTINCT ?v) > {int(n)})",
            label,
            f"More than {n} values",
            message,
        )
    tests = []
    if (d := value(prop, SH.datatype)) is not None:
        tests.append(f"(!isLiteral(?v) || DATATYPE(?v) != {_term(d)})")
    if (c := value(prop, SH["class"])) is not None:
        tests.append(f"NOT EXISTS {{ ?v a/<http://www.w3.org/2000/01/rdf-schema#subClassOf>* {_term(c)} }}")
    if (k := value(prop, SH.nodeKind)) is not None:
        tests.append(f"!{NODE_KINDS[k]}")
    if (p := value(prop, SH.pattern)) is not None:
        flags = value(prop, SH.flags)
        pattern = Literal(str(p)).n3()
        tests.append(f"(isBlank(?v) || !REGEX(STR(?v), {pattern}{', ' + Literal(str(flags)).n3() if flags else ''}))")
    if (n := value(prop, SH.minLength)) is not None:
        tests.append(f"(isBlank(?v) || STRLEN(STR(?v)) < {int(n)})")
    if (members := value(prop, SH["in"])) is not None:
        allowed = " || ".join(f"sameTerm(?v, {_term(m)})" for m in Collection(shapes, members))
        tests.append(f"!({allowed})")
    if (x := value(prop, SH.minInclusive)) is not None:
        tests.append(f"!COALESCE(?v >= {_term(x)}, false)")
    if (x := value(prop, SH.maxInclusive)) is not None:
        tests.append(f"!COALESCE(?v <= {_term(x)}, false)")
    for test in tests:
        yield (
            f"SELECT DISTINCT ?this ?v WHERE {{ {focus} ?this {path} ?v . FILTER ({test}) }}",
            label,
            f"Value does not conform ({test})",
            message,
        )


def validate(asserted: Iterable[Quad], ontology: Iterable[Quad], shapes: rdflib.Graph) -> ValidationResult:
    """Validate the asserted quads (read as one graph, with the ontology) against `shapes`."""
    store = Store()
    default = DefaultGraph()
    store.extend(Quad(q.subject, q.predicate, q.object, default) for q in (*asserted, *ontology))
    violations = set()
    for query, path, default_message, message in _queries(shapes):
        for row in store.query(query):
            focus = row["this"]
            text = str(message) if message is not None else default_message
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
                    path=path,
                    message=text,
                    severity="Violation",
                )
            )
    ordered = sorted(violations, key=lambda v: (v.focus, v.path, v.message))
    return ValidationResult(not ordered, ordered)
