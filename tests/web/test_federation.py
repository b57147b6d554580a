"""Federated queries through the endpoint: SERVICE to allow-listed endpoints only."""

from __future__ import annotations

import csv
import http.client
import http.server
import io
import threading
from collections.abc import Iterator

import pytest

from iclr_kg.web import create_app
from testbed.helpers import dead_url, run_cli


def test_federated_saved_query_through_the_endpoint(client, wikidata_standin: str) -> None:
    response = client.get("/queries/wikidata-countries", query_string={"wikidata": wikidata_standin, "format": "csv"})
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.data.decode())))
    assert {"Google", "United States of America"} <= {v for r in rows for v in r.values()}
    refused = client.get(
        "/queries/wikidata-countries", query_string={"wikidata": "http://evil.example/sparql", "format": "csv"}
    )
    assert refused.status_code == 400 and b"not allowed" in refused.data


def test_service_to_the_standin_is_refused_unless_allow_listed(client, wikidata_standin: str) -> None:
    query = f"SELECT * WHERE {{ SERVICE <{wikidata_standin}> {{ ?s ?p ?o }} }} LIMIT 1"
    assert client.get("/sparql", query_string={"query": query, "format": "json"}).status_code == 200
    other = query.replace("127.0.0.1", "localhost")
    response = client.get("/sparql", query_string={"query": other, "format": "json"})
    assert response.status_code == 400 and b"not allowed" in response.data


def test_a_prefix_in_a_comment_is_no_declaration_for_the_allow_list(client, wikidata_standin: str) -> None:
    """One answer to "which prefixes does this text declare" (querytext.declarations, #68 item 3):
    a `PREFIX` in a comment declares nothing for the parser, so it does not make the allow-list
    refuse a call the query's own declaration sends to an allowed endpoint."""
    namespace, _, local = wikidata_standin.rpartition("/")
    query = (
        f"PREFIX svc: <{namespace}/>\n# once: PREFIX svc: <http://evil.example/>\n"
        f"SELECT * WHERE {{ SERVICE svc:{local} {{ ?s ?p ?o }} }} LIMIT 1"
    )
    response = client.get("/sparql", query_string={"query": query, "format": "json"})
    assert response.status_code == 200, response.data
    undeclared = query.replace(f"PREFIX svc: <{namespace}/>\n", "")  # only the comment names svc:
    response = client.get("/sparql", query_string={"query": undeclared, "format": "json"})
    assert response.status_code == 400 and b"SERVICE needs a fixed endpoint IRI" in response.data


def test_an_unreachable_service_is_a_502_not_a_500(real_store, real_settings, tmp_path) -> None:

    dead = dead_url("/sparql")
    app = create_app(real_settings.replace(services=(dead,), query_workers=1))
    client = app.test_client()
    query = f"SELECT * WHERE {{ SERVICE <{dead}> {{ ?s ?p ?o }} }}"
    response = client.get("/sparql", query_string={"query": query, "format": "json"})
    assert response.status_code == 502 and b"it refused the connection" in response.data
    page = client.get("/query", query_string={"query": query})
    assert page.status_code == 502 and b"Connection refused" in page.data
    assert client.get("/sparql", query_string={"query": "ASK {}", "format": "json"}).status_code == 200
    app.extensions["iclr_kg"].pool.close()


@pytest.fixture
def trap() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 that records every request: nothing may reach it."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.end_headers()
            self.wfile.write(
                b'{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"leaked"}}]}}'
            )

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/sparql", hits
    httpd.shutdown()
    httpd.server_close()


BYPASSES = [
    "BASE <http://example.org/>\nSELECT ?x WHERE { BIND(<\\u0041#> AS ?a) SERVICE <TRAP> { ?x ?y ?z } }",
    "SELECT * WHERE { ?s ?p 1SERVICE <TRAP> { ?x ?y ?z } }",
    "SELECT * WHERE { ?s ?p ?o.SERVICE <TRAP> { ?x ?y ?z } }",
    "PREFIX e: <TRAPNS> SELECT * WHERE { SERVICEe:sparql { ?x ?y ?z } }",
    "SELECT * WHERE { SERVICE#comment\n<TRAP> { ?x ?y ?z } }",
    "PREFIX wd: <TRAPNS> SELECT * WHERE { SERVICE SILENT wd:sparql { ?x ?y ?z } }",
    "SELECT * WHERE { SERVICE <TRAP\\u003E { ?x ?y ?z } }",
    "SELECT * WHERE { sErViCe <TRAP> { ?x ?y ?z } }",  # the keyword in any case (ASCII: found in C)
    "SELECT * WHERE { \\u0053ERVICE <TRAP> { ?x ?y ?z } }",  # the keyword written as an escape
    'SELECT * WHERE { ?s ?p "机构" . SERVICE <TRAP> { ?x ?y ?z } }',  # not ASCII: the regex reads it
]


@pytest.mark.parametrize("template", BYPASSES)
def test_service_allow_list_bypasses_are_refused(client, trap, template: str) -> None:
    url, hits = trap
    query = template.replace("TRAPNS", url.rsplit("/", 1)[0] + "/").replace("TRAP", url)
    response = client.get("/sparql", query_string={"query": query, "format": "json"})
    assert response.status_code == 400, response.data
    assert hits == []


def test_service_bypass_is_refused_by_the_cli_too(real_settings, trap) -> None:
    url, hits = trap
    query = BYPASSES[0].replace("TRAP", url)
    done = run_cli("query", "--store", str(real_settings.store), query)
    assert done.returncode == 1 and "escapes" in done.stderr and "Traceback" not in done.stderr
    assert hits == []


def test_load_on_update_is_refused_unless_allow_listed(tiny_app, trap) -> None:
    url, hits = trap
    settings, client = tiny_app(update_token="secret")
    auth = {"Authorization": "Bearer secret"}
    for update in (
        f"LOAD <{url}>",
        f"LOAD#c\n<{url}>",
        f"LOAD SILENT <{url}> ; LOAD <{url}>",
        f"INSERT {{ ?s ?p ?o }} WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    ):
        response = client.post("/update", data={"update": update}, headers=auth)
        assert response.status_code == 400 and b"not allowed" in response.data, (update, response.data)
    # SILENT: a LOAD that fails succeeds, having loaded nothing (SPARQL 1.1 Update 3.1.1): not fetched
    for update in (f"LOAD SILENT <{url}> INTO GRAPH <urn:g>", f"LOAD SILENT#c\r<{url}>"):
        response = client.post("/update", data={"update": update}, headers=auth)
        assert response.status_code == 204, (update, response.data)
    assert hits == []


def test_an_allowed_load_that_cannot_fetch_is_the_sources_fault_and_loses_nothing(tiny_app) -> None:
    """LOAD from an allow-listed source where nothing answers: 502, said as a failed fetch
    (errors.engine_errors: the OSError of an update that loads), and the graph as it was."""
    source = dead_url("/data.ttl")
    settings, client = tiny_app(update_token="secret", load_sources=(source,))
    before = client.get("/sparql", query_string={"query": "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }", "format": "csv"})
    response = client.post("/update", data={"update": f"LOAD <{source}>"}, headers={"Authorization": "Bearer secret"})
    assert response.status_code == 502 and b"could not fetch what it loads" in response.data, response.data
    after = client.get("/sparql", query_string={"query": "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }", "format": "csv"})
    assert after.data == before.data and before.status_code == 200


def test_the_word_service_in_prose_before_a_bracket_is_no_call(tiny_app) -> None:
    """The ontology's comment "from a service (OpenReview): what was asked" made every Graph Store
    write of the ontology graph a 400 (the differential test's reset): what follows the word there,
    `(OpenReview):`, holds a colon, but no prefixed name starts with `(`. One that could still is
    refused (tests above: the bypasses)."""
    settings, client = tiny_app(update_token="secret")
    update = 'INSERT DATA { <urn:a> <urn:b> "One import of a venue from a service (OpenReview): what was asked" }'
    response = client.post("/update", data={"update": update}, headers={"Authorization": "Bearer secret"})
    assert response.status_code == 204, response.data


FEDERATED = ("wikidata-countries", "wikidata-founders", "wikidata-ror", "dblp-publications")


def _query_links(page: str) -> list[str]:
    """The query texts the page's links to the query page carry."""
    import html
    import re
    import urllib.parse

    links = [
        urllib.parse.parse_qs(urllib.parse.urlsplit(html.unescape(h)).query)
        for h in re.findall(r'href="(/query\?[^"]*)"', page)
    ]
    return [link["query"][0] for link in links if "query" in link]


def test_open_in_the_query_page_carries_the_endpoint_a_federated_query_calls(client, wikidata_standin) -> None:
    """Review 24 item 5: /queries linked the four federated queries as written, `SERVICE ?wikidata`
    unbound, and the query page answered 400 "SERVICE needs a fixed endpoint IRI". Each link now
    carries its parameters' defaults written in, as the saved query's page runs it; from the saved
    page, the value asked for (here the stand-in, which answers offline)."""
    from iclr_kg.config import WIKIDATA_SERVICES, resource_dir
    from iclr_kg.sparql.federation import check_services
    from iclr_kg.sparql.saved import load_saved
    from iclr_kg.vocab import QUERY_PREFIXES

    saved = load_saved(resource_dir("queries"))
    listed = _query_links(client.get("/queries").get_data(as_text=True))
    examples = _query_links(client.get("/query").get_data(as_text=True))
    for name in FEDERATED:
        text = saved[name].text_with({})
        assert text in listed and text in examples, name
        check_services(text, WIKIDATA_SERVICES, QUERY_PREFIXES)  # no parameter left for SERVICE
    for name in FEDERATED:
        [endpoint] = saved[name].params
        page = client.get(f"/queries/{name}", query_string={endpoint.name: wikidata_standin})
        assert page.status_code == 200, name
        [opened] = [t for t in _query_links(page.get_data(as_text=True)) if "SERVICE" in t]
        assert f"SERVICE <{wikidata_standin}>" in opened
        answer = client.get("/query", query_string={"query": opened})
        assert answer.status_code == 200 and 'class="error"' not in answer.get_data(as_text=True), name


def test_a_refused_service_is_placed_where_it_stands(client) -> None:
    """Review 24 item 5: the refusal said "Line 1, column 1" wherever the SERVICE stood."""
    query = "SELECT * WHERE {\n  ?s ?p ?o .\n  SERVICE ?endpoint { ?s ?q ?r }\n}"
    page = client.get("/query", query_string={"query": query}).get_data(as_text=True)
    assert "SERVICE needs a fixed endpoint IRI here (at line 3, column 11)" in page
    assert "Line 1, column 1" not in page
    other = query.replace("?endpoint", "<http://evil.example/sparql>")
    answer = client.get("/sparql", query_string={"query": other})
    assert answer.status_code == 400 and b"is not allowed (at line 3, column 11)" in answer.data
