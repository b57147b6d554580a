"""Writes, with the update token: SPARQL Update at /update and Graph Store writes on /data.

Both become one SPARQL Update that `updates.apply` runs (in the writer process, under the
store's write lock, within the query time limit), journals
before the response, and reasons on (see updates/). Graph Store writes (PUT, POST, DELETE on
`/data?graph=IRI` or `/data?default`, and POST on `/data` to create a graph) are turned into
INSERT DATA / DROP operations, so the journal has one kind of entry to replay.
"""

from __future__ import annotations

import hmac
import uuid

from flask import Blueprint, Response, request
from pyoxigraph import NamedNode, RdfFormat, parse

from iclr_kg import vocab
from iclr_kg.errors import Forbidden, NotFound, QueryError, ReadOnlyBackend, Unauthorized, UnsupportedMediaType
from iclr_kg.graph import rdf_bytes
from iclr_kg.sparql.federation import check_update, without_unfetched_loads
from iclr_kg.sparql.formats import RDF_FORMATS
from iclr_kg.sparql.querytext import add_using, check_nesting, check_operators, nesting_depth
from iclr_kg.sparql.saved import parse_iri
from iclr_kg.web.http import graph_list, json_depth, utf8_body, xml_depth
from iclr_kg.web.state import state

blueprint = Blueprint("writes", __name__)

# Media types a Graph Store write may send (no N-Quads / TriG: the request names the graph).
BODY_FORMATS = {f.media_type: f.rdf for f in RDF_FORMATS.values() if not f.supports_graphs}
BODY_FORMATS["application/x-turtle"] = RdfFormat.TURTLE
BODY_FORMATS["text/plain"] = RdfFormat.N_TRIPLES  # the N-Triples type before it had its own


def require_token() -> None:
    """Refuse a write without the configured token (Forbidden if none is configured). A server
    that reads a remote engine takes no writes: they go to the embedded store, and
    `iclr-kg publish` sends the result (an update here would be lost at the next publish)."""
    if not state().served.accepts_writes:
        raise ReadOnlyBackend(
            f"this server reads the graph from {state().settings.remote}: updates go to the embedded store "
            "(`iclr-kg serve` without a backend), then `iclr-kg publish` sends them there"
        )
    token = state().settings.update_token
    if not token:
        raise Forbidden("updates are disabled on this endpoint (no update token is configured)")
    given = request.headers.get("Authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        raise Unauthorized("updates need the header Authorization: Bearer <token>")


def run_write(text: str, kind: str, base: str, success: int = 204, headers: dict[str, str] | None = None) -> Response:
    """Check, apply and journal one write (errors are answered by the app's handler)."""
    settings = state().settings
    check_nesting(text)
    check_operators(text)
    text = without_unfetched_loads(text, settings.load_sources, vocab.QUERY_PREFIXES)
    check_update(text, settings.services, settings.load_sources, vocab.QUERY_PREFIXES)
    state().writer.apply(
        settings.store,
        text,
        base=base,
        kind=kind,
        reasoner=settings.reasoner,
        timeout=settings.query_timeout,
        max_derived=settings.update_max_derived,
    )
    response = Response(status=success)
    response.headers.update(headers or {})
    return response


@blueprint.route("/update", methods=["POST"], provide_automatic_options=False)
def update() -> Response:
    """SPARQL 1.1 Update over the protocol (§2.2), with the token. Relative IRIs resolve against
    this endpoint's URL; using-graph-uri / using-named-graph-uri set the dataset of each WHERE."""
    require_token()
    if request.mimetype not in ("application/sparql-update", "application/x-www-form-urlencoded"):
        raise UnsupportedMediaType("POST an update as application/sparql-update or as a form field `update`")
    text = read_update()
    using, using_named = graph_list("using-graph-uri"), graph_list("using-named-graph-uri")
    if using or using_named:
        text = add_using(text, [g.value for g in using or []], [g.value for g in using_named or []])
    return run_write(text, "update", request.base_url)


def read_update() -> str:
    """The one update of the request: the body (application/sparql-update) or one form field."""
    if request.mimetype == "application/sparql-update":
        return utf8_body("update")
    found = request.form.getlist("update") + request.args.getlist("update")
    if len(found) > 1:
        raise QueryError("the request carries more than one update")
    if not found or not found[0].strip():
        raise QueryError("no update given: POST application/sparql-update or a form field `update`")
    return found[0]


@blueprint.route("/data", methods=["PUT", "POST", "DELETE"])
def graph_store() -> Response:
    """Graph Store HTTP Protocol writes (§5.3-5.6), indirect graph identification (?graph=, ?default)."""
    graph_iri = request.args.get("graph")
    if graph_iri is None and "default" not in request.args:
        if request.method != "POST":
            require_token()
            raise QueryError("give ?graph=IRI or ?default")
        # §5.5: a POST to the store itself makes a new graph, named by a URL of ours (so that
        # direct identification reaches it too), and says where in Location
        return write_graph(f"{request.host_url}data/{uuid.uuid4()}", created=True)
    return write_graph(graph_iri)


@blueprint.route("/data/<path:_>", methods=["PUT", "POST", "DELETE"])
def graph_store_direct(_: str) -> Response:
    """Graph Store HTTP Protocol writes, direct identification: the graph whose IRI is this URL."""
    return write_graph(request.base_url)


def write_graph(graph_iri: str | None, created: bool = False) -> Response:
    """PUT, POST or DELETE of one graph (None: the default graph) as one journaled update."""
    require_token()
    # The default graph is the union of all graphs: what is written to it lives in graph/updates,
    # and a PUT or DELETE of it replaces or drops that graph only, never the sources' graphs.
    graph = parse_iri(graph_iri, "graph") if graph_iri is not None else NamedNode(vocab.GRAPH_UPDATES)
    target = f"GRAPH <{graph.value}>"
    exists = state().store().contains_named_graph(graph)
    if request.method == "DELETE":
        if not exists:
            raise NotFound(f"no graph {graph_iri or 'written to the default graph'} in this store")
        return _written(run_write(f"DROP {target}", "graph-store", request.base_url), graph_iri, "dropped")
    triples = read_triples(graph_iri or request.base_url)
    data = rdf_bytes(triples, RdfFormat.N_TRIPLES).decode("utf-8") if triples else ""
    insert = f"INSERT DATA {{ GRAPH <{graph.value}> {{ {data} }} }}"
    text = f"DROP SILENT {target} ;\n{insert}" if request.method == "PUT" else insert
    status = 201 if not exists or created else 204
    response = run_write(
        text,
        "graph-store",
        request.base_url,
        success=status,
        headers={"Location": graph_iri} if created and graph_iri else None,
    )
    done = "replaced by" if request.method == "PUT" else "given"
    return _written(response, graph_iri, f"{done} {len(triples):,} triple{'s' * (len(triples) != 1)}")


def _written(response: Response, graph_iri: str | None, what: str) -> Response:
    """For a write to the default graph, a body that says what changed (the union itself cannot
    be replaced): 200 with that sentence instead of 204 No Content."""
    if graph_iri is not None:
        return response
    response.status_code = 201 if response.status_code == 201 else 200
    response.set_data(
        f"The default graph is the union of every graph, so this write went to {vocab.GRAPH_UPDATES}, "
        f"which was {what}; the sources' graphs are unchanged.\n"
    )
    response.mimetype = "text/plain"
    return response


MAX_BODY_NESTING = 100  # real data nests a few levels; the parsers recurse (1,500 JSON-LD objects: SIGSEGV)


def _check_nesting(body: bytes, rdf_format: RdfFormat, media_type: str) -> None:
    """Refuse a body nested deeper than MAX_BODY_NESTING before any parser sees it, in every
    format a write takes. A body with fewer brackets than that cannot be, and is not scanned."""
    text = body.decode("utf-8", errors="replace")
    if rdf_format == RdfFormat.RDF_XML:
        deepest = xml_depth(text) if text.count("<") > MAX_BODY_NESTING else 0
    elif sum(map(text.count, "[({")) <= MAX_BODY_NESTING:
        return
    elif rdf_format == RdfFormat.JSON_LD:
        deepest = json_depth(text)
    else:  # Turtle, N3, TriG, N-Triples: brackets outside strings, comments and IRIs
        deepest = nesting_depth(text)
    if deepest > MAX_BODY_NESTING:
        raise QueryError(f"the {media_type} body nests {deepest} levels deep; at most {MAX_BODY_NESTING} are accepted")


def read_triples(base: str) -> list:
    """The request body's triples, parsed by its Content-Type (a 400 names what is wrong)."""
    media_type = request.mimetype
    if media_type == "multipart/form-data":  # §5.5: each part is a graph to merge
        parts = list(request.files.values())
        return [t for part in parts for t in _parse(part.read(), part.mimetype, base)]
    return _parse(request.get_data(cache=False), media_type, base)


def _parse(body: bytes, media_type: str, base: str) -> list:
    rdf_format = BODY_FORMATS.get(media_type)
    if rdf_format is None:
        raise QueryError(
            f"cannot read {media_type or 'a body without a Content-Type'}; send one of {', '.join(BODY_FORMATS)}"
        )
    _check_nesting(body, rdf_format, media_type)
    try:
        return [quad.triple for quad in parse(body, format=rdf_format, base_iri=base)]
    except SyntaxError as exc:
        raise QueryError(f"the {media_type} body does not parse: {exc}") from None
