"""SPARQL 1.1 Protocol behaviour of /sparql and /update, through the Flask test client."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

from iclr_kg.config import Settings
from iclr_kg.web import create_app

SELECT = "SELECT ?name WHERE { paper:NzTU59SYbNq iclr:firstAuthor/iclr:name ?name }"
CONSTRUCT = "CONSTRUCT { paper:NzTU59SYbNq iclr:title ?t } WHERE { paper:NzTU59SYbNq iclr:title ?t }"


def names(response) -> list[str]:
    return [b["name"]["value"] for b in json.loads(response.data)["results"]["bindings"]]


def test_get_post_form_and_post_body(client) -> None:
    accept = {"Accept": "application/sparql-results+json"}
    assert names(client.get("/sparql", query_string={"query": SELECT}, headers=accept)) == ["Ian Gemp"]
    assert names(client.post("/sparql", data={"query": SELECT}, headers=accept)) == ["Ian Gemp"]
    body = client.post("/sparql", data=SELECT.encode(), content_type="application/sparql-query", headers=accept)
    assert names(body) == ["Ian Gemp"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "GET", "query_string": [("query", SELECT), ("query", SELECT)]},
        {"method": "POST", "data": {"query": [SELECT, SELECT]}},
        {
            "method": "POST",
            "data": SELECT.encode(),
            "content_type": "application/sparql-query",
            "query_string": {"query": SELECT},
        },
        {"method": "POST", "data": {"nothing": "x"}},
    ],
)
def test_two_queries_or_none_is_400(client, kwargs) -> None:
    assert client.open("/sparql", **kwargs).status_code == 400


@pytest.mark.parametrize(
    "accept, media_type",
    [
        ("application/sparql-results+json", "application/sparql-results+json"),
        ("application/sparql-results+xml", "application/sparql-results+xml"),
        ("text/csv", "text/csv"),
        ("text/tab-separated-values", "text/tab-separated-values"),
        ("application/json", "application/sparql-results+json"),
        ("text/csv;q=0.5, application/sparql-results+xml;q=0.9", "application/sparql-results+xml"),
        ("*/*", "application/sparql-results+json"),
        ("", "application/sparql-results+json"),
    ],
)
def test_select_negotiation(client, accept: str, media_type: str) -> None:
    response = client.get("/sparql", query_string={"query": SELECT}, headers={"Accept": accept} if accept else {})
    assert response.status_code == 200 and response.mimetype == media_type
    assert b"Ian Gemp" in response.data


@pytest.mark.parametrize(
    "accept, media_type",
    [
        ("text/turtle", "text/turtle"),
        ("application/n-triples", "application/n-triples"),
        ("application/rdf+xml", "application/rdf+xml"),
        ("application/ld+json", "application/ld+json"),
        ("application/n-quads", "application/n-quads"),
        ("application/trig", "application/trig"),
        ("application/ld+json;q=0.2, text/turtle;q=0.8", "text/turtle"),
    ],
)
def test_construct_negotiation(client, accept: str, media_type: str) -> None:
    response = client.get("/sparql", query_string={"query": CONSTRUCT}, headers={"Accept": accept})
    assert response.status_code == 200 and response.mimetype == media_type
    assert b"EigenGame" in response.data


@pytest.mark.parametrize("query, accept", [(SELECT, "image/png"), (CONSTRUCT, "application/sparql-results+json")])
def test_unsatisfiable_accept_is_406(client, query: str, accept: str) -> None:
    assert client.get("/sparql", query_string={"query": query}, headers={"Accept": accept}).status_code == 406


@pytest.mark.parametrize(
    "param, value, query, media_type",
    [
        ("format", "json", SELECT, "application/sparql-results+json"),
        ("format", "csv", SELECT, "text/csv"),
        ("output", "tsv", SELECT, "text/tab-separated-values"),
        ("results", "xml", SELECT, "application/sparql-results+xml"),
        ("format", "xml", CONSTRUCT, "application/rdf+xml"),
        ("format", "turtle", CONSTRUCT, "text/turtle"),
        ("format", "n3", CONSTRUCT, "text/turtle"),
        ("format", "json-ld", CONSTRUCT, "application/ld+json"),
        ("format", "application/ld+json", CONSTRUCT, "application/ld+json"),
        ("format", "rdf+xml", CONSTRUCT, "application/rdf+xml"),
    ],
)
def test_format_parameter_overrides_accept(client, param, value, query, media_type) -> None:
    response = client.get("/sparql", query_string={"query": query, param: value}, headers={"Accept": "image/png"})
    assert response.status_code == 200 and response.mimetype == media_type


def test_unknown_format_is_400(client) -> None:
    response = client.get("/sparql", query_string={"query": SELECT, "format": "pdf"})
    assert response.status_code == 400 and b"unknown format 'pdf'" in response.data


def test_syntax_error_is_400_with_parser_message_and_position(client) -> None:
    response = client.get("/sparql", query_string={"query": "SELECT * WHERE { ?s ?p }"})
    assert response.status_code == 400 and response.mimetype == "text/plain"
    assert b"SPARQL syntax error at line 1, column" in response.data


def test_update_on_query_endpoint_is_400(client) -> None:
    for text in (
        "INSERT DATA { <http://a> <http://b> <http://c> }",
        "PREFIX x: <http://x/> DELETE WHERE { ?s ?p ?o }",
        "LOAD <http://example.org/>",
    ):
        response = client.post("/sparql", data={"query": text})
        assert response.status_code == 400 and b"/update" in response.data


def test_query_over_the_size_limit_is_413(client) -> None:
    huge = "SELECT * WHERE { ?s ?p ?o } #" + "x" * (300 * 1024)
    assert client.post("/sparql", data=huge.encode(), content_type="application/sparql-query").status_code == 413
    assert (
        client.post("/sparql", data=b"x" * (2 * 1024 * 1024), content_type="application/sparql-query").status_code
        == 413
    )


def test_default_graph_and_named_graph_parameters(client) -> None:
    query = "SELECT (COUNT(*) AS ?n) WHERE { paper:NzTU59SYbNq ?p ?o }"
    csv = lambda r: int(r.data.decode().split()[1])
    everything = csv(client.get("/sparql", query_string={"query": query, "format": "csv"}))
    only_2024 = csv(
        client.get(
            "/sparql",
            query_string=[
                ("query", query),
                ("format", "csv"),
                ("default-graph-uri", "https://w3id.org/iclr-kg/graph/source/iclr2021-outstanding-papers"),
            ],
        )
    )
    assert 0 < only_2024 < everything
    named = "SELECT DISTINCT ?g WHERE { GRAPH ?g { paper:NzTU59SYbNq ?p ?o } }"
    rows = (
        client.get(
            "/sparql",
            query_string=[
                ("query", named),
                ("format", "csv"),
                ("named-graph-uri", "https://w3id.org/iclr-kg/graph/inferred"),
            ],
        )
        .data.decode()
        .split()
    )
    assert rows == ["g", "https://w3id.org/iclr-kg/graph/inferred"]
    bad = client.get("/sparql", query_string=[("query", query), ("default-graph-uri", "not an iri")])
    assert bad.status_code == 400


def test_without_inferred_graph(client) -> None:
    query = "ASK { paper:NzTU59SYbNq schema:author person:ian-gemp }"
    with_inference = json.loads(client.get("/sparql", query_string={"query": query, "format": "json"}).data)
    without = json.loads(
        client.get("/sparql", query_string={"query": query, "format": "json", "inferred": "false"}).data
    )
    assert with_inference["boolean"] is True and without["boolean"] is False


def test_service_description_or_endpoint_page(client) -> None:
    response = client.get("/sparql", headers={"Accept": "text/turtle"})
    assert response.status_code == 200 and response.mimetype == "text/turtle"
    assert b"sd:Service" in response.data and b"https://w3id.org/iclr-kg/graph/inferred" in response.data
    page = client.get("/sparql", headers={"Accept": "text/html"})
    assert page.status_code == 200 and page.mimetype == "text/html" and b"<h1>SPARQL endpoint</h1>" in page.data


def test_cors(client) -> None:
    response = client.get("/sparql", query_string={"query": SELECT})
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    preflight = client.options(
        "/sparql", headers={"Origin": "https://yasgui.org", "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 204 and "POST" in preflight.headers["Access-Control-Allow-Methods"]
    assert "Content-Type" in preflight.headers["Access-Control-Allow-Headers"]


def test_update_refused_without_token(client) -> None:
    response = client.post("/update", data={"update": "INSERT DATA { <http://a> <http://b> <http://c> }"})
    assert response.status_code == 403


def test_update_with_token(tiny_app) -> None:
    settings, client = tiny_app(update_token="s3cret")
    update = {"update": "INSERT DATA { GRAPH <http://example.org/g> { <http://a> <http://b> 'c' } }"}
    assert client.post("/update", data=update).status_code == 401
    assert client.post("/update", data=update, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.post("/update", data=update, headers={"Authorization": "Bearer s3cret"}).status_code == 204
    ask = client.get(
        "/sparql", query_string={"query": "ASK { GRAPH ?g { <http://a> <http://b> 'c' } }", "format": "json"}
    )
    assert json.loads(ask.data)["boolean"] is True
    bad = client.post("/update", data={"update": "INSERT nonsense"}, headers={"Authorization": "Bearer s3cret"})
    assert bad.status_code == 400


def test_settings_have_no_token_by_default() -> None:
    assert Settings().update_token is None


def test_the_endpoint_runs_queries_in_process_with_zero_workers(real_store, real_settings) -> None:
    """`ICLR_KG_QUERY_WORKERS=0`: the same answers, without the worker hop (InProcessQuery)."""
    client = create_app(real_settings.replace(query_workers=0, result_cache=0)).test_client()
    select = client.get(
        "/sparql", query_string={"query": "SELECT ?p WHERE { ?p a iclr:Paper } LIMIT 3", "format": "csv"}
    )
    assert select.status_code == 200 and select.data.decode().count("\n") == 4
    graph = client.get(
        "/sparql", query_string={"query": "CONSTRUCT WHERE { ?p a iclr:Paper } LIMIT 2", "format": "ntriples"}
    )
    assert graph.status_code == 200 and graph.data.count(b"\n") == 2
    assert client.get("/sparql", query_string={"query": "ASK {}"}, headers={"Accept": "image/png"}).status_code == 406
    page = client.get("/query", query_string={"query": "SELECT ?p WHERE { ?p a iclr:Paper } LIMIT 3"})
    assert page.status_code == 200 and b"<table>" in page.data
    assert client.get("/health").status_code == 200
    clash = "SELECT ?y WHERE { ?p a iclr:Paper ; iclr:year ?y }"  # a lint, in this process as asked
    [warning] = client.post("/api/check", data={"query": clash}).get_json()["problems"]
    assert "write iclr:submittedTo/iclr:year" in warning["message"]
    [error] = client.post("/api/check", data={"query": "SELECT ?y WHERE { ?p ?q ?y"}).get_json()["problems"]
    assert error["severity"] == "error" and "never closed" in error["message"]


@pytest.mark.parametrize("value", ["a:%00", "a:%7F", "a:b%23c%23d", "a:\x00"])
def test_invalid_graph_iris_are_400(client, value: str) -> None:
    for name in ("default-graph-uri", "named-graph-uri"):
        response = client.get("/sparql", query_string={"query": "ASK {}", name: urllib.parse.unquote(value)})
        assert response.status_code == 400, (name, value, response.data)
    assert client.get("/data", query_string={"graph": urllib.parse.unquote(value)}).status_code == 400


def test_invalid_utf8_escapes_in_a_query_string_are_400(client) -> None:
    response = client.get("/sparql?query=SELECT%20(%22%FF%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert response.status_code == 400 and b"UTF-8" in response.data
    form = client.post(
        "/sparql",
        data=b"query=SELECT%20(%22%FF%22%20AS%20%3Fx)%20%7B%7D",
        content_type="application/x-www-form-urlencoded",
    )
    assert form.status_code == 400
    lower = client.get("/sparql?query=SELECT%20(%22%c3%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert lower.status_code == 400 and b"UTF-8" in lower.data  # a lone lead byte, escaped in lower case
    chinese = client.get("/sparql?query=SELECT%20(%22%e6%9c%ba%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert chinese.status_code == 200 and "机" in chinese.get_data(as_text=True)
    plain = client.get("/sparql?query=SELECT%20(%22%7e%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert plain.status_code == 200 and "~" in plain.get_data(as_text=True)


def test_javascript_iris_in_results_are_not_links(client) -> None:
    page = client.get("/query", query_string={"query": "SELECT ?x WHERE { BIND(<javascript:alert(1)> AS ?x) }"})
    assert page.status_code == 200
    assert b"javascript:alert(1)" in page.data and b'href="javascript:' not in page.data
