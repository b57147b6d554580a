"""SPARQL 1.1 Protocol: the query operation at /sparql, its service description, CORS preflight.

https://www.w3.org/TR/sparql11-protocol/ — GET ?query=, POST form, POST application/sparql-query;
default-graph-uri / named-graph-uri; content negotiation with `format=` overriding Accept.
Updates are in writes.py; errors are answered by the app's one handler (web/__init__.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from flask import Blueprint, Response, render_template, request, url_for
from pyoxigraph import NamedNode, serialize

from iclr_kg import vocab
from iclr_kg.errors import QueryError, UnsupportedMediaType
from iclr_kg.sparql.formats import choose
from iclr_kg.web.answers import answer
from iclr_kg.web.http import read_query, wants_html
from iclr_kg.web.state import state

blueprint = Blueprint("sparql", __name__)


@blueprint.route("/sparql", methods=["GET", "POST"], provide_automatic_options=False)
def sparql() -> Response:
    text = read_query()
    if request.method == "POST" and request.mimetype not in (
        "application/sparql-query",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        raise UnsupportedMediaType(
            "POST a query as application/sparql-query or as a form (application/x-www-form-urlencoded)"
        )
    if text is None:
        if request.method == "POST" or request.values.get("update"):
            raise QueryError("no query given: send it as the `query` parameter or as the request body")
        return service_description()
    return answer(text)


def service_description() -> Response:
    """GET /sparql without a query: a SPARQL Service Description for RDF clients, else the page."""
    if wants_html(("rdf",)):  # a browser: a page on how to use the endpoint
        settings = state().settings
        return Response(
            render_template(
                "endpoint.html",
                endpoint=request.base_url,
                services=settings.services,
                timeout=f"{settings.query_timeout:g}",
                updates=bool(settings.update_token),
                update_endpoint=url_for("writes.update", _external=True),
            ),
            mimetype="text/html",
        )
    endpoint = request.base_url
    turtle = f"""@prefix sd: <http://www.w3.org/ns/sparql-service-description#> .
@prefix formats: <http://www.w3.org/ns/formats/> .
@prefix dcterms: <http://purl.org/dc/terms/> .
<{endpoint}> a sd:Service ;
    sd:endpoint <{endpoint}> ;
    sd:supportedLanguage sd:SPARQL11Query ;
    sd:feature sd:UnionDefaultGraph , sd:BasicFederatedQuery ;
    sd:resultFormat formats:SPARQL_Results_JSON , formats:SPARQL_Results_XML , formats:SPARQL_Results_CSV ,
        formats:SPARQL_Results_TSV , formats:Turtle , formats:N-Triples , formats:N-Quads , formats:TriG ,
        formats:JSON-LD , formats:RDF_XML ;
    sd:defaultDataset [ a sd:Dataset ;
        dcterms:title "iclr-kg: ICLR papers, people, organizations and awards" ;
        sd:defaultGraph [ a sd:Graph ] ;
        {" ; ".join(f"sd:namedGraph [ sd:name <{g.value}> ]" for g in _named_graphs())}
    ] .
"""
    from pyoxigraph import RdfFormat, parse

    chosen = choose("rdf", None, request.accept_mimetypes)
    data = serialize(
        parse(turtle, format=RdfFormat.TURTLE),
        format=chosen.rdf,
        prefixes={"sd": vocab.SD},
    )
    return Response(data, mimetype=chosen.media_type)


def _named_graphs() -> Iterable[NamedNode]:
    return sorted((g for g in state().store().named_graphs() if isinstance(g, NamedNode)), key=lambda g: g.value)


@blueprint.route("/sparql", methods=["OPTIONS"])
@blueprint.route("/update", methods=["OPTIONS"])
def preflight() -> Response:
    response = Response(status=204)
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
    response.headers["Access-Control-Allow-Headers"] = "Content-Type, Accept, Authorization"
    response.headers["Access-Control-Max-Age"] = "86400"
    return response
