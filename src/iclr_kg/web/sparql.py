"""SPARQL 1.1 Protocol: the query operation at /sparql, updates at /update, CORS preflight.

https://www.w3.org/TR/sparql11-protocol/ — GET ?query=, POST form, POST application/sparql-query;
default-graph-uri / named-graph-uri; content negotiation with `format=` overriding Accept.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable

from flask import Blueprint, Response, current_app, render_template, request, url_for
from pyoxigraph import NamedNode, serialize

from ..errors import QueryError
from ..formats import NotAcceptable, choose
from ..pool import (
    UNAVAILABLE,
    EvaluationFailed,
    InProcessQuery,
    PoolBusy,
    QueryRequest,
    RunningQuery,
    ServiceFailed,
)
from ..querytext import update_keyword
from ..saved import SavedQuery, parse_iri
from .state import AppState

blueprint = Blueprint("sparql", __name__)

MAX_QUERY_BYTES = 256 * 1024


def state() -> AppState:
    return current_app.extensions["iclr_kg"]  # type: ignore[no-any-return]


def text_error(status: int, message: str) -> Response:
    return Response(message.rstrip() + "\n", status=status, mimetype="text/plain")


def requested_format() -> str | None:
    """`format`, `output` or `results` (clients send all three; first non-empty wins)."""
    for name in ("format", "output", "results"):
        for value in request.values.getlist(name):
            if value.strip():
                return value
    return None


def graph_list(name: str) -> list[NamedNode] | None:
    values = request.values.getlist(name)
    if not values:
        return None
    return [parse_iri(v, name) for v in values]


def read_query() -> str | None:
    """The one query of the request, from the URL, a form or the body; 400 on two or none."""
    found: list[str] = []
    _check_percent_encoding(request.query_string)
    if request.method == "POST" and request.mimetype == "application/x-www-form-urlencoded":
        _check_percent_encoding(request.get_data(cache=True))
    if request.method == "POST" and request.mimetype == "application/sparql-query":
        found.append(utf8_body("query"))
        found += request.args.getlist("query")
    else:
        found += request.args.getlist("query")
        if request.method == "POST":
            found += request.form.getlist("query")
    if len(found) > 1:
        raise QueryError("the request carries more than one query")
    if not found:
        return None
    if len(found[0].encode("utf-8")) > MAX_QUERY_BYTES:
        raise _TooLarge(f"the query is longer than {MAX_QUERY_BYTES} bytes")
    return found[0]


def utf8_body(what: str) -> str:
    """The request body as text: the protocol requires UTF-8 (a charset other than it is a 400)."""
    charset = request.mimetype_params.get("charset", "utf-8").lower().replace("_", "-")
    if charset not in ("utf-8", "utf8"):
        raise QueryError(f"the {what} must be sent as UTF-8, not {charset}")
    try:
        return request.get_data(cache=False).decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError(f"the {what} is not valid UTF-8") from None


def _check_percent_encoding(raw: bytes) -> None:
    """A query string or form whose %-escapes are not UTF-8 is a 400: decoding them leniently
    would run a query other than the one sent (U+FFFD where the bytes were)."""
    try:
        for part in raw.split(b"&"):
            urllib.parse.unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError("the request's %-escapes are not valid UTF-8") from None


class _TooLarge(QueryError):
    pass


def query_timeout() -> float:
    """The configured time limit, or a lower one asked with `timeout=` (seconds)."""
    limit = state().settings.query_timeout
    asked = request.values.get("timeout")
    if asked:
        try:
            value = float(asked)
        except ValueError:
            raise QueryError(f"timeout: {asked!r} is not a number of seconds") from None
        if not 0 < value < float("inf"):
            raise QueryError("timeout must be a positive number of seconds")
        limit = min(limit, value)
    return limit


def preferred_formats() -> dict[str, str | None]:
    """The format for each kind of result, decided before the query runs (None: 406/400)."""
    chosen: dict[str, str | None] = {}
    for kind in ("results", "rdf"):
        try:
            chosen[kind] = choose(kind, requested_format(), request.accept_mimetypes).name
        except NotAcceptable:
            chosen[kind] = None
    return chosen


def query_request(text: str, substitutions: dict | None = None, row_limit: int | None = None) -> QueryRequest:
    default_graph, named_graphs = graph_list("default-graph-uri"), graph_list("named-graph-uri")
    return QueryRequest(
        formats=preferred_formats() if row_limit is None else None,
        text=text,
        include_inferred=request.values.get("inferred", "true").lower() not in ("false", "0", "no"),
        default_graph=[g.value for g in default_graph] if default_graph is not None else None,
        named_graphs=[g.value for g in named_graphs] if named_graphs is not None else None,
        substitutions={v.value: str(t) for v, t in (substitutions or {}).items()},
        row_limit=row_limit,
        services=state().settings.services,
        base=request.base_url,
    )


_CLIENT = object()


def start_query(
    text: str,
    substitutions: dict | None = None,
    row_limit: int | None = None,
    prepared: QueryRequest | None = None,
    timeout: float | None = None,
    client: object = _CLIENT,
) -> RunningQuery | InProcessQuery:
    """Hand the query to a worker process under the time limit (in-process if workers = 0).

    `client` is who counts against the per-client share of workers: the remote address, or None
    for the app's own checks (/health)."""
    try:
        query = prepared or query_request(text, substitutions, row_limit)
        if state().settings.query_workers == 0:
            return InProcessQuery(state().store(), query)
        who = request.remote_addr if client is _CLIENT else client
        limit = query_timeout() if timeout is None else min(timeout, query_timeout())
        return state().pool.start(state().generation_key(), query, limit, client=who)  # type: ignore[arg-type]
    except QueryError:
        if update_keyword(text):
            raise QueryError("SPARQL Update is not accepted at /sparql; updates go to /update (with a token)") from None
        raise


def result_response(body: Iterable[bytes] | bytes, media_type: str) -> Response:
    response = Response(body, mimetype=media_type)
    if media_type.startswith("text/") or media_type.endswith(("json", "xml")):
        response.mimetype_params["charset"] = "utf-8"
    response.headers["Vary"] = "Accept"
    return response


def cache_key(query: QueryRequest) -> tuple:
    """Everything the bytes of a result depend on: the store generation and the request."""
    return (
        str(state().generation_key()),
        query.text,
        query.include_inferred,
        None if query.default_graph is None else tuple(query.default_graph),
        None if query.named_graphs is None else tuple(query.named_graphs),
        tuple(sorted(query.substitutions.items())),
        tuple(sorted((query.formats or {}).items(), key=str)),
        query.base,
    )


def execute(text: str, *, substitutions: dict | None = None) -> Response:
    """Run `text` in a worker and stream its results in the negotiated format (small, deterministic
    results of the current store are served from the result cache)."""
    cache = state().cache
    query = query_request(text, substitutions)
    key = cache_key(query) if cache is not None and cache.cacheable(text) else None
    if key is not None:
        hit = cache.get(key)  # type: ignore[union-attr]
        if hit is not None:
            if request.if_none_match.contains(hit.etag.strip('"')):
                return Response(status=304, headers={"ETag": hit.etag, "Vary": "Accept"})
            response = result_response(hit.body, hit.media_type)
            response.headers["ETag"] = hit.etag
            return response
    running = start_query(text, substitutions, prepared=query)
    try:
        chosen = choose(running.kind, requested_format(), request.accept_mimetypes)  # raises 406 / 400
    except NotAcceptable:
        running.cancel()
        raise
    prefetched = getattr(running, "prefetched", None)
    if key is not None and prefetched is not None and running.format == chosen.name:
        item = cache.put(key, prefetched, chosen.media_type)  # type: ignore[union-attr]
        response = result_response(prefetched, chosen.media_type)
        if item is not None:
            response.headers["ETag"] = item.etag
        return response
    return result_response(running.body(chosen.name), chosen.media_type)


def evaluation_failed(exc: Exception) -> Response:
    """A query that failed while running: 502 when a SERVICE call failed, else 500, with the reason."""
    if isinstance(exc, ServiceFailed):
        return text_error(502, f"a federated SERVICE call failed: {exc}")
    return text_error(500, f"the query failed while running: {exc}")


def run_or_error(text: str, substitutions: dict | None = None) -> Response:
    """`execute`, with the client's mistakes (and our limits) mapped to HTTP status codes."""
    try:
        return execute(text, substitutions=substitutions)
    except UNAVAILABLE as exc:
        response = text_error(503, str(exc))
        if isinstance(exc, PoolBusy):
            response.headers["Retry-After"] = "5"
        return response
    except EvaluationFailed as exc:
        return evaluation_failed(exc)
    except _TooLarge as exc:
        return text_error(413, str(exc))
    except NotAcceptable as exc:
        status = 400 if requested_format() else 406
        return text_error(status, str(exc))
    except QueryError as exc:
        return text_error(400, str(exc))


@blueprint.route("/sparql", methods=["GET", "POST"], provide_automatic_options=False)
def sparql() -> Response:
    try:
        text = read_query()
    except _TooLarge as exc:
        return text_error(413, str(exc))
    except QueryError as exc:
        return text_error(400, str(exc))
    if request.method == "POST" and request.mimetype not in (
        "application/sparql-query",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ):
        return text_error(
            415, "POST a query as application/sparql-query or as a form (application/x-www-form-urlencoded)"
        )
    if text is None:
        if request.method == "POST" or request.values.get("update"):
            return text_error(400, "no query given: send it as the `query` parameter or as the request body")
        return service_description()
    return run_or_error(text)


def service_description() -> Response:
    """GET /sparql without a query: a SPARQL Service Description for RDF clients, else the page."""
    best = request.accept_mimetypes.best_match(
        ["text/html", "text/turtle", "application/n-triples", "application/rdf+xml", "application/ld+json"]
    )
    if best in (None, "text/html"):  # a browser: a page on how to use the endpoint
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
        prefixes={"sd": "http://www.w3.org/ns/sparql-service-description#"},
    )
    return Response(data, mimetype=chosen.media_type)


def _named_graphs() -> Iterable[NamedNode]:
    return sorted((g for g in state().store().named_graphs() if isinstance(g, NamedNode)), key=lambda g: g.value)


def run_saved(saved: SavedQuery) -> Response:
    """Run a saved query with parameters from the URL, bound as RDF terms."""
    values = {p.name: request.args[p.name] for p in saved.params if p.name in request.args}
    try:
        substitutions = saved.substitutions(values)
    except QueryError as exc:
        return text_error(400, str(exc))
    return run_or_error(saved.text, substitutions)


@blueprint.route("/sparql", methods=["OPTIONS"])
@blueprint.route("/update", methods=["OPTIONS"])
def preflight() -> Response:
    response = Response(status=204)
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
    response.headers["Access-Control-Allow-Headers"] = "Content-Type, Accept, Authorization"
    response.headers["Access-Control-Max-Age"] = "86400"
    return response
