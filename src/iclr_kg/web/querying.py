"""Running a query for a request: the worker hop, the time limit, formats, the result cache."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from flask import Response, current_app, has_request_context, request
from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header
from werkzeug.sansio.utils import get_current_url

from iclr_kg import counts
from iclr_kg.errors import IclrKgError, NotAcceptable, QueryError, UnknownFormat
from iclr_kg.query.answering import QueryRequest
from iclr_kg.query.pool import ActiveQuery
from iclr_kg.query.streaming import ClosingBody
from iclr_kg.sparql import spreadsheet
from iclr_kg.sparql.formats import RDF_FORMATS, RESULT_FORMATS, Format, choose
from iclr_kg.sparql.lint import Problem, problem_of
from iclr_kg.web.conditional import not_modified, variant_etag
from iclr_kg.web.html import HTML_ROW_LIMIT
from iclr_kg.web.http import graph_list, requested_format
from iclr_kg.web.readrequest import Negotiation, ReadRequest, read_request, started
from iclr_kg.web.state import AppState, state


def query_timeout() -> float:
    """The configured time limit, or a lower one asked with `timeout=` (seconds; none asks
    outside a request: the app's own queries, `rows_outside_request`)."""
    limit = state().settings.query_timeout
    asked = request.values.get("timeout") if has_request_context() else None
    if asked:
        try:
            value = float(asked)
        except ValueError:
            raise QueryError(f"timeout: {asked!r} is not a number of seconds") from None
        if not 0 < value < float("inf"):
            raise QueryError("timeout must be a positive number of seconds")
        limit = min(limit, value)
    return limit


@functools.lru_cache(maxsize=256)
def negotiated(kind: str, requested: str | None, accept: str) -> Format | tuple[type[Exception], str]:
    try:
        return choose(kind, requested, parse_accept_header(accept, MIMEAccept) if accept else None)
    except (NotAcceptable, UnknownFormat) as refused:
        return type(refused), str(refused)


def negotiate(kind: str) -> Format:
    """`formats.choose` for this request: clients send the same few Accept headers, so each
    (kind, format parameter, Accept), and each refusal, is worked out once per process (a tenth
    of a millisecond of every uncached query, measured)."""
    chosen = negotiated(kind, requested_format(), request.headers.get("Accept", ""))
    if isinstance(chosen, tuple):
        error, message = chosen
        raise error(message)
    return chosen


def preferred_formats() -> dict[str, str | None]:
    """The format for each kind of result, decided before the query runs (None: 406/400)."""
    chosen: dict[str, str | None] = {}
    for kind in ("results", "rdf"):
        try:
            chosen[kind] = negotiate(kind).name
        except (NotAcceptable, UnknownFormat):
            chosen[kind] = None
    return chosen


# The request's URL without its query string: the base IRI of relative IRIs (SPARQL Protocol
# §2.1.4). Werkzeug's request.base_url decodes it anew on every request; the same few are cached.
base_url = functools.lru_cache(maxsize=64)(get_current_url)


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
        base=base_url(request.scheme, request.host, request.root_path, request.path),
    )


_CLIENT = object()


def start_query(
    text: str,
    substitutions: dict | None = None,
    row_limit: int | None = None,
    prepared: QueryRequest | None = None,
    timeout: float | None = None,
    client: object = _CLIENT,
) -> ActiveQuery:
    """Start the query under the time limit: on this process's lane where the server installed one
    (query/local.py), else in a worker process (in-process without a limit if workers = 0).

    `client` is who counts against the per-client share of workers: the remote address, or None
    for the app's own checks (/health)."""
    query = prepared or query_request(text, substitutions, row_limit)
    who = request.remote_addr if client is _CLIENT else client
    limit = query_timeout() if timeout is None else min(timeout, query_timeout())
    return start_prepared(state(), query, limit, who)  # type: ignore[arg-type]


def start_prepared(app_state: AppState, query: QueryRequest, limit: float, who: str | None) -> ActiveQuery:
    """Start `query` under `limit` seconds for the client `who` (None: the app's own, never
    refused) where the app runs queries (`AppState.evaluator`, chosen once)."""
    return started(app_state.evaluator, query, limit, who, app_state.target())


def rows_outside_request(text: str, row_limit: int) -> dict:
    """The first rows of one of the app's own queries (its counts for /stats), from a query
    worker under the configured time limit, read from no request: the default dataset, inferred
    triples included; also on a thread of the app's own (`AppState.warm`)."""
    query = QueryRequest(text=text, row_limit=row_limit, services=state().settings.services)
    return start_query(text, prepared=query, client=None).rows or {}


def stats_counts() -> dict:
    """What /stats and VoID show (counts.Counts, as plain data): kept beside the generation,
    counted by query workers as soon as a build's generation appears (`AppState.warm`: at
    50,000 papers the four scans take 16 s); an update's generation has them from its change.
    The four queries run at once, each in a worker of its own: the first view after a build
    waits for the longest, not for their sum."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def rows(text: str) -> dict:
        with app.app_context():
            return rows_outside_request(text, HTML_ROW_LIMIT)

    queries = counts.queries()
    with ThreadPoolExecutor(max_workers=len(queries), thread_name_prefix="iclr-kg-counts") as running:
        return counts.as_json(counts.Counts.from_rows(*running.map(rows, queries)))


def generation_counts() -> counts.Counts:
    """The current generation's counts (computed once per generation, by whichever asks first)."""
    return counts.Counts(**state().per_generation(counts.KEPT, stats_counts, kept=True))


# Seconds a lint may take in its worker (the editor asks as one types): a 12 KB text takes rdflib
# a few seconds to read for the domains; a lint that takes longer reports none of what parsing
# finds: the query's run says what is wrong, under its own time limit.
LINT_TIMEOUT = 10.0


def parsed_in_worker(text: str, syntax: bool = True) -> list[Problem]:
    """The lint's checks that parse `text` (lint.parsed_problems: Oxigraph's verdict on its syntax
    where `syntax`, the ontology's domains and ranges), asked of a query worker (QueryRequest.lint):
    the web process never parses query text, since preparing it can take seconds, evaluate
    aggregates and crash on deep nesting, and rdflib reads a long text for seconds of CPU.
    A busy endpoint or a slow check reports nothing."""
    app_state = state()
    prepared = QueryRequest(
        text=text, syntax_only=syntax, ontology=str(app_state.ontology_file), services=app_state.settings.services
    )
    try:
        return list(start_query(text, prepared=prepared, timeout=LINT_TIMEOUT).problems)
    except QueryError as exc:  # refused before it reached a worker (too deep a nesting)
        return [problem_of(exc)]
    except IclrKgError:
        return []


DOWNLOAD_NAME = re.compile(r"^[A-Za-z0-9_-]{1,60}$")


def with_charset(media_type: str) -> str:
    """A result's Content-Type: text, JSON and XML say their charset."""
    return (
        f"{media_type}; charset=utf-8"
        if media_type.startswith("text/") or media_type.endswith(("json", "xml"))
        else media_type
    )


def result_response(body: Iterable[bytes] | bytes, media_type: str, etag: str | None = None) -> Response:
    """A result's response; `download=<name>` (the pages' download links) makes it a file
    `<name>.<extension>` for the browser to save, instead of a page to show, and a CSV or TSV
    file one whose cells no spreadsheet runs as formulas (sparql/spreadsheet.py; its own ETag)."""
    name = request.args.get("download", "")
    chosen = next((f for f in (*RESULT_FORMATS.values(), *RDF_FORMATS.values()) if f.media_type == media_type), None)
    download = DOWNLOAD_NAME.match(name) is not None and chosen is not None
    if download and chosen is not None and chosen.name in ("csv", "tsv"):
        body, etag = _for_a_spreadsheet(body, chosen.name), None if etag is None else variant_etag(etag, "sheet")
    response = Response(body, content_type=with_charset(media_type))
    response.headers["Vary"] = "Accept"
    if etag is not None:
        response.headers["ETag"] = etag
    if download and chosen is not None:
        response.headers["Content-Disposition"] = f'attachment; filename="{name}.{chosen.file_extension}"'
    return response


def _for_a_spreadsheet(body: Iterable[bytes] | bytes, format_name: str) -> Iterable[bytes] | bytes:
    if isinstance(body, bytes):
        return b"".join(spreadsheet.guarded([body], format_name))
    return ClosingBody(spreadsheet.guarded(body, format_name), getattr(body, "close", lambda: None))


def negotiation(requested: str | None, accept: str) -> Negotiation:
    """The format for each kind of result, or its refusal, for a `format=` and an Accept header."""
    return {kind: negotiated(kind, requested, accept) for kind in ("results", "rdf")}


def read_of(query: QueryRequest) -> ReadRequest:
    """This request's read of `query` (web/readrequest.py), on the generation it pinned."""
    app_state = state()
    chosen = negotiation(requested_format(), request.headers.get("Accept", ""))
    return read_request(app_state, app_state.pinned(), query, chosen, query_timeout(), request.remote_addr)


def execute(text: str, *, substitutions: dict | None = None, prepared: QueryRequest | None = None) -> Response:
    """Run `text` where the app runs queries and stream its results in the negotiated format
    (small answers that may be kept are served from the result cache, where one is configured,
    and carry an ETag either way: ReadRequest.etag)."""
    read = read_of(prepared or query_request(text, substitutions))
    cache = state().cache
    if cache is not None and read.keep:
        hit = cache.get(read.key)
        if hit is not None:
            return not_modified(hit.etag) or result_response(hit.body, hit.media_type, hit.etag)
    running = read.start()
    chosen = read.chosen(running)  # raises 406 / 400
    etag = read.etag(running, chosen)
    if etag is not None and running.prefetched is not None:
        if cache is not None:
            cache.put(read.key, running.prefetched, chosen.media_type, etag=etag)
        return not_modified(etag) or result_response(running.prefetched, chosen.media_type, etag)
    return result_response(running.body(chosen.name), chosen.media_type)
