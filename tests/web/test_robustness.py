"""A public endpoint under bad input, runaway queries and random garbage: clear 4xx/503, never 500."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testbed.helpers import eventually

RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
OK = "SELECT ?t WHERE { paper:NzTU59SYbNq iclr:title ?t }"

# (case, request arguments for the Flask test client, expected status, expected text in the body)
BAD_INPUT = [
    (
        "malformed SPARQL",
        {"path": "/sparql", "query_string": {"query": "SELEKT * WHERE {"}},
        400,
        "SPARQL syntax error",
    ),
    (
        "query of 1 MB",
        {
            "path": "/sparql",
            "method": "POST",
            "data": ("SELECT * {} #" + "x" * 1_000_000).encode(),
            "content_type": "application/sparql-query",
        },
        413,
        "",
    ),
    (
        "invalid UTF-8 body",
        {
            "path": "/sparql",
            "method": "POST",
            "data": b"SELECT * WHERE { ?s ?p \xff\xfe }",
            "content_type": "application/sparql-query",
        },
        400,
        "UTF-8",
    ),
    ("invalid UTF-8 in the URL", {"path": "/sparql?query=SELECT%20%FF%FE%20WHERE%20%7B%7D"}, 400, ""),
    (
        "invalid IRI in default-graph-uri",
        {"path": "/sparql", "query_string": {"query": OK, "default-graph-uri": "not an iri"}},
        400,
        "not an absolute IRI",
    ),
    (
        "IRI with spaces in named-graph-uri",
        {"path": "/sparql", "query_string": {"query": OK, "named-graph-uri": "http://a b"}},
        400,
        "not an absolute IRI",
    ),
    ("unknown format", {"path": "/sparql", "query_string": {"query": OK, "format": "exe"}}, 400, "unknown format"),
    (
        "unsatisfiable Accept",
        {"path": "/sparql", "query_string": {"query": OK}, "headers": {"Accept": "image/png"}},
        406,
        "",
    ),
    ("garbage Accept", {"path": "/sparql", "query_string": {"query": OK}, "headers": {"Accept": ";;;q=x,,"}}, 406, ""),
    ("path traversal in /resource", {"path": "/resource/paper/..%2F..%2F..%2Fetc%2Fpasswd"}, 404, ""),
    ("path traversal in /resource kind", {"path": "/resource/..%2F..%2Fetc/passwd"}, 404, ""),
    ("path traversal in /queries", {"path": "/queries/..%2F..%2Fpyproject"}, 404, ""),
    (
        "path traversal in /data",
        {"path": "/data", "query_string": {"graph": "../../etc/passwd"}},
        400,
        "not an absolute IRI",
    ),
    ("file IRI as a graph", {"path": "/data", "query_string": {"graph": "file:///etc/passwd"}}, 404, "no graph"),
    (
        "SPARQL Update on /sparql",
        {"path": "/sparql", "method": "POST", "data": {"query": "INSERT DATA { <a:b> <a:b> <a:b> }"}},
        400,
        "/update",
    ),
    (
        "LOAD on /sparql",
        {"path": "/sparql", "method": "POST", "data": {"query": "LOAD <http://example.org/data.ttl>"}},
        400,
        "/update",
    ),
    ("DROP on /sparql", {"path": "/sparql", "query_string": {"query": "DROP ALL"}}, 400, "/update"),
    (
        "update without a token configured",
        {"path": "/update", "method": "POST", "data": {"update": "CLEAR ALL"}},
        403,
        "disabled",
    ),
    (
        "SERVICE to a host not allowed",
        {
            "path": "/sparql",
            "query_string": {"query": "SELECT * WHERE { SERVICE <http://evil.example/sparql> { ?s ?p ?o } }"},
        },
        400,
        "not allowed",
    ),
    (
        "SERVICE to a variable",
        {
            "path": "/sparql",
            "query_string": {"query": "SELECT * WHERE { BIND(<http://x/> AS ?e) SERVICE ?e { ?s ?p ?o } }"},
        },
        400,
        "fixed endpoint",
    ),
    (
        "SERVICE hidden behind a prefix",
        {
            "path": "/sparql",
            "query_string": {
                "query": "PREFIX e: <http://evil.example/> SELECT * WHERE { SERVICE e:sparql { ?s ?p ?o } }"
            },
        },
        400,
        "not allowed",
    ),
    ("oversized form POST", {"path": "/sparql", "method": "POST", "data": {"query": "x" * 2_000_000}}, 413, ""),
    ("two queries", {"path": "/sparql", "query_string": [("query", OK), ("query", OK)]}, 400, "more than one query"),
    ("bad timeout", {"path": "/sparql", "query_string": {"query": OK, "timeout": "soon"}}, 400, "timeout"),
    ("negative timeout", {"path": "/sparql", "query_string": {"query": OK, "timeout": "-1"}}, 400, "timeout"),
    (
        "bad saved-query parameter",
        {"path": "/queries/coauthors", "query_string": {"person": "javascript:alert(1) x", "format": "json"}},
        400,
        "not a valid iri",
    ),
    (
        "unsupported POST media type",
        {"path": "/sparql", "method": "POST", "data": b"{}", "content_type": "application/json"},
        415,
        "",
    ),
    (
        "PUT on /data without a token configured",
        {"path": "/data?default", "method": "PUT", "data": b""},
        403,
        "disabled",
    ),
]


@pytest.mark.parametrize("case, kwargs, status, text", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_gets_a_clear_4xx(client, case, kwargs, status, text) -> None:
    response = client.open(**kwargs)
    assert response.status_code == status, response.data[:300]
    assert text.encode() in response.data
    assert (
        client.get("/sparql", query_string={"query": OK, "format": "json"}).status_code == 200
    )  # nothing else affected


def test_wrong_token_is_401(tiny_app) -> None:
    settings, client = tiny_app(update_token="right")
    for header in (
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": "Basic right"},
        {"Authorization": "Bearer right "},
    ):
        assert client.post("/update", data={"update": "CLEAR ALL"}, headers=header).status_code == 401


def test_runaway_query_is_stopped_with_503_and_its_worker_killed(app, client) -> None:
    pool = app.extensions["iclr_kg"].pool
    response = client.get("/sparql", query_string={"query": RUNAWAY, "timeout": "1.5"})
    assert response.status_code == 503 and b"time limit of 1.5 s" in response.data  # stopped by its limit
    # a fresh worker replaced the killed one (idle workers may have retired to one before: the
    # pool keeps one and starts the others as queries need them)
    eventually(lambda: pool.running == 0 and pool.idle >= 1, "the killed worker replaced, idle", 20)
    alive = [os.path.exists(f"/proc/{pid}") for pid in pool.worker_pids()]
    assert alive and all(alive)
    assert client.get("/sparql", query_string={"query": OK, "format": "json"}).status_code == 200


def test_timeout_cannot_be_raised_above_the_configured_limit(client) -> None:
    from iclr_kg.config import Settings

    assert Settings().query_timeout == 30
    response = client.get("/query", query_string={"query": RUNAWAY, "timeout": "1"})
    assert response.status_code == 503 and b"time limit" in response.data


def test_other_clients_are_served_while_a_runaway_query_runs(server: str) -> None:
    outcome = {}

    def runaway() -> None:
        url = f"{server}/sparql?" + urllib.parse.urlencode({"query": RUNAWAY, "timeout": "4"})
        try:
            urllib.request.urlopen(url, timeout=30)
        except urllib.error.HTTPError as exc:
            outcome["status"] = exc.code
            outcome["body"] = exc.read()

    thread = threading.Thread(target=runaway)
    thread.start()
    served = 0
    while thread.is_alive():  # others' queries, answered while the runaway holds its worker
        with urllib.request.urlopen(
            f"{server}/sparql?" + urllib.parse.urlencode({"query": "ASK { ?s ?p ?o }", "format": "json"}), timeout=10
        ) as r:
            assert json.loads(r.read())["boolean"] is True
        served += not outcome  # counted only while the runaway has no answer yet
    thread.join()
    assert outcome.get("status") == 503 and b"time limit" in outcome["body"]
    assert served >= 5, served


def test_killed_worker_frees_its_cpu(app, client) -> None:
    """The runaway runs on an idle worker (the one used last is handed out first), which is
    killed at the time limit and replaced: its process is gone, not left spinning."""
    pool = app.extensions["iclr_kg"].pool
    before = pool.worker_pids()
    assert before, "no idle worker to run the query on"
    response = client.get("/sparql", query_string={"query": RUNAWAY, "timeout": "1"})
    assert response.status_code == 503
    eventually(lambda: len(before - pool.worker_pids()) == 1, "the runaway's worker replaced", 10)
    killed = before - pool.worker_pids()
    for pid in killed:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


QUERY_TEXT = st.one_of(
    st.text(max_size=300),
    st.builds(lambda a, b: f"SELECT * WHERE {{ {a} }} {b}", st.text(max_size=80), st.text(max_size=40)),
    st.sampled_from(
        [
            "SELECT",
            "ASK {",
            "CONSTRUCT WHERE { ?s ?p ?o } LIMIT 3",
            "DESCRIBE <x:y>",
            "PREFIX : <",
            "SERVICE",
            "SELECT * { ?s ?p ?o } LIMIT 2",
            'SELECT ("\\uD800" AS ?x) {}',
            "SELECT (1/0 AS ?x) {}",
        ]
    ),
)
PARAM_VALUE = st.one_of(
    st.none(),
    st.text(max_size=40),
    st.sampled_from(["json", "xml", "csv", "turtle", "html", "0", "-1", "1e309", "nan"]),
)
# Header values a client can send at all (no line breaks; HTTP headers are Latin-1 text).
HEADER_VALUE = st.one_of(
    st.none(),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60),
    st.sampled_from(["text/turtle;q=0.1, */*;q=0", "application/sparql-results+json;q=abc", "*/*;q=2"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=QUERY_TEXT, fmt=PARAM_VALUE, timeout=PARAM_VALUE, graph=PARAM_VALUE, accept=HEADER_VALUE, post=st.booleans()
)
def test_random_requests_never_get_a_500(client, query, fmt, timeout, graph, accept, post) -> None:
    params = {"query": query}
    for name, value in (("format", fmt), ("timeout", timeout), ("default-graph-uri", graph)):
        if value is not None:
            params[name] = value
    headers = {"Accept": accept} if accept else {}
    response = (
        client.post("/sparql", data=params, headers=headers)
        if post
        else client.get("/sparql", query_string=params, headers=headers)
    )
    assert response.status_code < 500 or response.status_code == 503, (response.status_code, response.data[:200])
    response.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.text(min_size=1, max_size=60), accept=HEADER_VALUE)
def test_random_paths_never_get_a_500(client, path, accept) -> None:
    for prefix in ("/resource/", "/queries/", "/data?graph=", "/ontology?format=", "/"):
        # "//host..." would be a URL with a host in it: the test client, not the app, refuses those
        quoted = urllib.parse.quote(path, safe="/?=&")
        quoted = quoted.lstrip("/") if prefix.endswith("/") else quoted
        response = client.get(prefix + quoted, headers={"Accept": accept} if accept else {})
        assert response.status_code < 500, (prefix, path, response.status_code)
        response.close()
