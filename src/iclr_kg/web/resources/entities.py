"""An entity's page, /resource/<kind>/<key>: its profile's panels over every statement about it
(folded, with the graphs that state each), or its description as RDF; a replaced IRI redirects."""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from flask import Response, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from pyoxigraph import DefaultGraph, NamedNode

from iclr_kg import vocab
from iclr_kg.errors import NotFound, QueryError
from iclr_kg.graph import ReadableGraph
from iclr_kg.index import kind_and_key
from iclr_kg.kinds import entity_kind
from iclr_kg.web.html import Labeler, cell, short
from iclr_kg.web.i18n import language
from iclr_kg.web.kinds import PAGES, render_panels
from iclr_kg.web.kinds.panels import source_of
from iclr_kg.web.resources.jsonld import jsonld
from iclr_kg.web.resources.serialized import rdf_response, wants_rdf
from iclr_kg.web.state import state

INCOMING_LIMIT = 200


VALUES_SHOWN = 50  # values of one property in the statements fold; the RDF forms have them all


MAX_REPLACEMENTS = 16


def last_successor(store: ReadableGraph, iri: NamedNode) -> NamedNode | None:
    """Where `iri` lives on: the end of its chain of `dcterms:isReplacedBy` (one redirect, not one
    per step), or None where it was not replaced, or where the chain runs in a circle or past
    MAX_REPLACEMENTS steps (a curation error: the entity is shown as it is, not redirected forever)."""
    seen, current = {iri}, iri
    for _ in range(MAX_REPLACEMENTS):
        found = next(store.quads_for_pattern(current, vocab.DCTERMS_IS_REPLACED_BY, None, DefaultGraph()), None)
        if found is None or not isinstance(found.object, NamedNode):
            return current if current != iri else None
        if found.object in seen:
            return None
        seen.add(found.object)
        current = found.object
    return None


def resource(kind: str, key: str) -> ResponseReturnValue:
    entity = entity_kind(kind)
    if entity is None or not vocab.ENTITY_KEY.match(key):
        path = f"/resource/{kind}/{key}"
        raise NotFound(
            f"No such entity: {path}", near=f"{kind} {key}", wording="No such entity: {path}", values={"path": path}
        )
    iri = NamedNode(f"{vocab.RESOURCE_BASE}{kind}/{key}")
    store = state().store()
    successor = last_successor(store, iri)
    target = kind_and_key(successor.value) if successor is not None else None
    if target is not None:  # a former IRI (a paper first named by title): the entity lives on there
        query = f"?{request.query_string.decode()}" if request.query_string else ""
        return redirect(url_for("resources.resource", kind=target[0], key=target[1]) + query, 301)
    if not any(True for _ in store.quads_for_pattern(iri, None, None, DefaultGraph())):
        wording, values = "No entity {iri} in this graph.", {"iri": iri.value}
        raise NotFound(wording.format(**values), near=f"{kind}/{key}", wording=wording, values=values)
    shown = PAGES[entity]
    download = shown.downloads.get(request.args.get("format", ""))
    if download is not None:  # a format only this kind has: a paper's BibTeX
        return Response(
            download.write(store, iri, state().index()),
            mimetype=download.media_type,
            headers={"Content-Disposition": f'inline; filename="{key}.{download.extension}"'},
        )
    if wants_rdf():
        return rdf_response(
            lambda: (q.triple for q in store.quads_for_pattern(iri, None, None, DefaultGraph())), compacted=True
        )
    index = state().index()
    labeler = Labeler(index, language(), state().terms())
    pages = _profile_pages()
    heading, panels = shown.profile(store, iri, index, pages) if shown.profile else (None, [])
    statements = describe(store, iri, labeler)
    response = Response(
        render_template(
            "resource.html",
            kind=kind,
            heading=(labeler.name(iri.value) if labeler.lang == "zh" else None) or heading or statements["label"],
            panels=render_panels(panels, labeler),
            page_url=page_url,
            jsonld=jsonld(store, iri, entity),
            **statements,
        ),
        mimetype="text/html",
    )
    return response


PROFILE_PAGES = ("papers", "coauthors")  # the paged lists of a profile: ?papers=2


def _profile_pages() -> dict[str, int]:
    """The page asked of each paged list of a profile, checked: a 400 that says what is taken."""
    pages = {}
    for argument in PROFILE_PAGES:
        asked = request.args.get(argument)
        if asked is None:
            continue
        if not (asked.isascii() and asked.isdigit() and len(asked) < 10 and int(asked) >= 1):
            raise QueryError(f"{argument}={asked!r}: pages are numbered from 1")
        pages[argument] = int(asked)
    return pages


def page_url(argument: str, page: int) -> str:
    """This page with `argument` set to `page`, every other argument kept (the language)."""
    args = {k: v for k, v in request.args.items() if k != argument} | ({argument: str(page)} if page > 1 else {})
    return f"{request.path}?{urlencode(args)}" if args else request.path


def describe(store: ReadableGraph, iri: NamedNode, labeler: Labeler) -> dict[str, object]:
    """Every statement about an entity, grouped by property, each with its graphs; and the
    statements that point at it (incoming). Names for IRIs come from `labeler`."""
    graphs_of: dict[tuple[str, str], list[str]] = defaultdict(list)
    objects: dict[str, dict[str, Any]] = defaultdict(dict)
    # How many values each property has, counted by the engine on the merged default graph
    # (which holds each statement once); then each property's first VALUES_SHOWN values are read
    # (a prolific author's 31,810 iclr:authorOf were read one by one in Python: 1.1 s of the page
    # at 50,000 papers; the page shows 50 and says how many more).
    counted = store.query(f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ <{iri.value}> ?p ?o }} GROUP BY ?p")
    values_of = {row[0].value: int(row[1].value) for row in counted}
    for p in values_of:
        predicate = NamedNode(p)
        # each value once, from the merged default graph; then the graphs that state it
        for quad in itertools.islice(store.quads_for_pattern(iri, predicate, None, DefaultGraph()), VALUES_SHOWN):
            objects[p][str(quad.object)] = quad.object
            graphs_of[(p, str(quad.object))] = [
                q.graph_name.value
                for q in store.quads_for_pattern(iri, predicate, quad.object, None)
                if not isinstance(q.graph_name, DefaultGraph)
            ]
    incoming_quads = []
    for quad in store.quads_for_pattern(None, None, iri, DefaultGraph()):
        incoming_quads.append(quad)
        if len(incoming_quads) >= INCOMING_LIMIT:
            break
    sources = {stated_in(g) for graphs in graphs_of.values() for g in graphs}
    labeler.learn(
        [
            iri,
            *[o for values in objects.values() for o in values.values()],
            *[q.subject for q in incoming_quads],
            *[s for s in sources if isinstance(s, NamedNode)],
        ]
    )

    def asserted(p: str) -> bool:
        return any(graphs_of[(p, key)] != [vocab.GRAPH_INFERRED] for key in objects[p])

    def order(x: str) -> tuple[bool, bool, str]:  # rdf:type first, then asserted properties, then inferred ones
        return (x != vocab.RDF_TYPE.value, not asserted(x), short(x))

    properties = []
    for p in sorted(objects, key=order):
        values: list[dict[str, Any]] = []
        for key, o in objects[p].items():
            graphs = sorted(set(graphs_of[(p, key)]))
            values.append(
                {
                    "cell": labeler.cell(o),
                    "inferred": graphs == [vocab.GRAPH_INFERRED],
                    "sources": [labeler.cell(stated_in(g)) for g in graphs if g != vocab.GRAPH_INFERRED],
                }
            )
        values.sort(key=lambda v: (v["inferred"], v["cell"].text))
        properties.append({"predicate": cell(NamedNode(p)), "values": values, "more": values_of[p] - len(objects[p])})
    incoming = [{"subject": labeler.cell(q.subject), "predicate": cell(q.predicate)} for q in incoming_quads]
    wikidata = [  # the heading links the Wikidata item; other identifiers are in the panels
        o for o in objects.get(vocab.SKOS_EXACT_MATCH.value, {}).values() if o.value.startswith(vocab.PREFIXES["wd"])
    ]
    return {
        "iri": iri.value,
        "label": labeler.name(iri.value) or iri.value.rsplit("/", 1)[-1],
        "properties": properties,
        "incoming": incoming,
        "wikidata": [w.value for w in wikidata],
        "limit": INCOMING_LIMIT,
    }


def stated_in(graph: str) -> NamedNode | str:
    """Where a statement is stated: a source's graph as the source (named and linked as every
    page names it), another graph by its last word (entities, wikidata: the page translates it)."""
    if graph.startswith(vocab.GRAPH_SOURCE_BASE):
        return source_of(graph)
    return graph.rsplit("/", 1)[-1]
