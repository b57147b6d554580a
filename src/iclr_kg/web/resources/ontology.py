"""/ontology: the ontology's classes, properties and individuals as a page, or as RDF."""

from __future__ import annotations

from collections import defaultdict

from flask import Response, render_template
from pyoxigraph import Literal, NamedNode

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph, Term, value
from iclr_kg.web.html import cell
from iclr_kg.web.resources.serialized import rdf_response, wants_rdf
from iclr_kg.web.state import state

RDFS_LABEL = vocab.RDFS_LABEL.value


def ontology() -> Response | str:
    store = state().store()
    graph = NamedNode(vocab.GRAPH_ONTOLOGY)
    if wants_rdf():
        return rdf_response(
            lambda: (q.triple for q in store.quads_for_pattern(None, None, None, graph)), compacted=True
        )
    return render_template("ontology.html", **ontology_terms(store, graph))


def ontology_terms(store: ReadableGraph, graph: NamedNode) -> dict[str, object]:
    """Classes and properties of our namespace with labels, comments, domains, ranges, parents."""
    rdf_type = vocab.RDF_TYPE
    kinds = {
        vocab.OWL_CLASS.value: "classes",
        vocab.OWL_OBJECT_PROPERTY.value: "object_properties",
        vocab.OWL_DATATYPE_PROPERTY.value: "datatype_properties",
        vocab.OWL_NAMED_INDIVIDUAL.value: "individuals",
    }
    sections: dict[str, list[dict[str, object]]] = {name: [] for name in kinds.values()}
    for kind_iri, section in kinds.items():
        for quad in store.quads_for_pattern(None, rdf_type, NamedNode(kind_iri), graph):
            term = quad.subject
            if not isinstance(term, NamedNode) or not term.value.startswith(vocab.ONTOLOGY_NS):
                continue
            facts: dict[str, list[Term]] = defaultdict(list)
            for q in store.quads_for_pattern(term, None, None, graph):
                facts[q.predicate.value].append(q.object)
            labels = {o.language: o.value for o in facts.get(RDFS_LABEL, []) if isinstance(o, Literal)}
            sections[section].append(
                {
                    "name": term.value[len(vocab.ONTOLOGY_NS) :],
                    "iri": term.value,
                    "label": labels.get("en", ""),
                    "label_zh": labels.get("zh", ""),
                    "comment": " ".join(value(o) for o in facts.get(vocab.RDFS_COMMENT.value, [])),
                    "relations": [
                        (name, [cell(o) for o in facts.get(p, []) if isinstance(o, NamedNode)])
                        for name, p in (
                            ("subclass of", vocab.RDFS_SUBCLASS_OF.value),
                            ("subproperty of", vocab.RDFS_SUBPROPERTY_OF.value),
                            ("inverse of", vocab.OWL_INVERSE_OF.value),
                            ("domain", vocab.RDFS_DOMAIN.value),
                            ("range", vocab.RDFS_RANGE.value),
                            ("type", vocab.RDF_TYPE.value),
                        )
                    ],
                }
            )
    for entries in sections.values():
        entries.sort(key=lambda e: str(e["name"]).lower())
    return {"sections": sections, "namespace": vocab.ONTOLOGY_NS}
