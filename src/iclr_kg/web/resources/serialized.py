"""An entity, the ontology or a graph as RDF, in the format the client negotiated, streamed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flask import Response, request
from pyoxigraph import RdfFormat, serialize

from iclr_kg.query.streaming import stream
from iclr_kg.sparql.formats import choose
from iclr_kg.web.http import requested_format, wants_html
from iclr_kg.web.resources.jsonld import compact_jsonld, write_jsonld


def wants_rdf() -> bool:
    """An entity or the ontology as RDF rather than as a page."""
    return not wants_html(("rdf",))


def rdf_response(
    produce: Callable[[], Iterable[Any]], graph_aware: bool = False, fixed: str | None = None, compacted: bool = False
) -> Response:
    """Serialize the triples (or quads) `produce()` returns, in the negotiated format, streamed.
    `compacted`: JSON-LD is compacted with our prefixes as its `@context` (`compact_jsonld`), for
    a description a person or a client reads (an entity, the ontology, VoID), not a whole graph.

    `produce` runs on the streaming worker thread: pyoxigraph iterators stay on one thread.
    """
    chosen = choose("rdf", fixed or requested_format(), request.accept_mimetypes)  # 400 / 406 by the handler
    if not graph_aware and chosen.supports_graphs:
        chosen = choose("rdf", "turtle", None) if chosen.name == "trig" else choose("rdf", "ntriples", None)
    if compacted and chosen.rdf == RdfFormat.JSON_LD:
        body = stream(produce, compact_jsonld)
    elif chosen.rdf == RdfFormat.JSON_LD:  # a whole graph: streamed, with our prefixes as @context
        body = stream(produce, write_jsonld)
    else:
        body = stream(produce, lambda items, out: serialize(items, out, chosen.rdf, prefixes=chosen.prefixes))
    response = Response(body, mimetype=chosen.media_type)
    return response
