"""Graph Store Protocol reads (/data): the merged graph, one named graph, or every graph, gzip'd
where the client offers it (writes: web/writes.py)."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

from flask import Response, request
from pyoxigraph import DefaultGraph
from werkzeug.datastructures import MIMEAccept

from iclr_kg.errors import NotFound
from iclr_kg.query.streaming import ClosingBody
from iclr_kg.sparql.formats import choose
from iclr_kg.sparql.saved import parse_iri
from iclr_kg.store import built_on
from iclr_kg.web.assets import chosen_encoding
from iclr_kg.web.http import requested_format
from iclr_kg.web.resources.serialized import rdf_response
from iclr_kg.web.state import state


def data() -> Response:
    """Graph Store Protocol reads: ?default (the merged graph), ?graph=IRI, or the whole graph
    (writes: writes.py). The whole graph is every named graph in N-Quads or TriG, the formats
    that carry graph names (the default), or their union in any other RDF format (Turtle,
    N-Triples, JSON-LD, RDF/XML); `?format=` makes it a file named for the dataset and its date.
    Gzip'd when the client offers it: N-Quads of 10,000 papers are 278 MB, a tenth of that so."""
    store = state().store()
    graph_iri = request.args.get("graph")

    def merged() -> Iterable[Any]:
        return (q.triple for q in store.quads_for_pattern(None, None, None, DefaultGraph()))

    if "default" in request.args and graph_iri is None:
        return gzipped(rdf_response(merged))
    if graph_iri is not None:
        return gzipped(named_graph_response(graph_iri))
    asked = requested_format()
    chosen = choose("rdf", asked or None, request.accept_mimetypes if asked else _quads_first())
    if chosen.supports_graphs:

        def every_quad() -> Iterable[Any]:
            named = list(store.named_graphs())
            return chain.from_iterable(store.quads_for_pattern(None, None, None, g) for g in named)

        response = rdf_response(every_quad, graph_aware=True, fixed=chosen.name)
    else:
        response = rdf_response(merged, fixed=chosen.name)
    if asked:  # the Data page's links: saved as a file named for the dataset and its date
        day = built_on(state().generation) or "current"
        response.headers["Content-Disposition"] = f'attachment; filename="iclr-kg-{day}.{chosen.file_extension}"'
    return gzipped(response)


def _quads_first() -> Any:
    """The client's Accept, with N-Quads first where it accepts anything (`*/*`, none given): a
    bare GET of the whole graph keeps every graph's name."""
    accept = request.accept_mimetypes
    if not request.headers.get("Accept") or accept.best == "*/*":
        return MIMEAccept([("application/n-quads", 1)])
    return accept


def gzipped(response: Response) -> Response:
    """`response`'s streamed body gzip'd as it goes, where the client offers gzip (level 1: a
    graph's N-Quads shrink about tenfold at a fraction of the CPU of the default level)."""
    response.vary.add("Accept-Encoding")
    if chosen_encoding(request.headers.get("Accept-Encoding", "")) is None or response.status_code != 200:
        return response
    body = response.response
    response.response = ClosingBody(_gzip(body), getattr(body, "close", lambda: None))
    response.headers["Content-Encoding"] = "gzip"
    response.headers.pop("Content-Length", None)
    return response


def _gzip(chunks: Iterable[str] | Iterable[bytes]) -> Iterator[bytes]:
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    for chunk in chunks:
        packed = compressor.compress(chunk.encode() if isinstance(chunk, str) else chunk)
        if packed:
            yield packed
    yield compressor.flush()


def data_direct(_: str) -> Response:
    """Graph Store Protocol, direct identification: the graph whose IRI is this URL."""
    return named_graph_response(request.base_url)


def named_graph_response(graph_iri: str) -> Response:
    store = state().store()
    graph = parse_iri(graph_iri, "graph")
    if not store.contains_named_graph(graph):
        raise NotFound(f"no graph {graph_iri} in this store")
    return rdf_response(lambda: (q.triple for q in store.quads_for_pattern(None, None, None, graph)))
