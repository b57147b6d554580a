"""The endpoint behind a real waitress server on 127.0.0.1, used by real SPARQL clients."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import CSV, JSON, TURTLE, XML, SPARQLWrapper

from testbed.helpers import CHROMIUM_ARGS, eventually, get

QUERY = """PREFIX iclr: <https://w3id.org/iclr-kg/ontology#>
SELECT ?title WHERE { ?p a iclr:OutstandingPaper ; iclr:submittedTo <https://w3id.org/iclr-kg/resource/edition/iclr2024> ; iclr:title ?title }
ORDER BY ?title"""


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_sparqlwrapper_select(server: str, method: str) -> None:
    client = SPARQLWrapper(f"{server}/sparql")
    client.setMethod(method)
    client.setQuery(QUERY)
    client.setReturnFormat(JSON)
    rows = client.query().convert()["results"]["bindings"]
    assert [r["title"]["value"] for r in rows][:1] == [
        "Generalization in diffusion models arises from geometry-adaptive harmonic representations"
    ]
    assert len(rows) == 5
    client.setReturnFormat(XML)
    assert len(client.query().convert().getElementsByTagName("result")) == 5
    client.setReturnFormat(CSV)
    assert len(client.query().convert().decode().splitlines()) == 6


def test_sparqlwrapper_construct_and_ask(server: str) -> None:
    client = SPARQLWrapper(f"{server}/sparql")
    client.setQuery("DESCRIBE <https://w3id.org/iclr-kg/resource/paper/NzTU59SYbNq>")
    client.setReturnFormat(TURTLE)
    graph = rdflib.Graph().parse(data=client.query().convert(), format="turtle")
    assert len(graph) > 10
    client.setReturnFormat(XML)
    assert len(client.query().convert()) == len(graph)  # RDF/XML parsed by SPARQLWrapper into an rdflib graph
    client.setQuery("ASK { ?s a <http://schema.org/ScholarlyArticle> }")
    client.setReturnFormat(JSON)
    assert client.query().convert()["boolean"] is True


def test_rdflib_sparqlstore(server: str) -> None:
    store = SPARQLStore(f"{server}/sparql", returnFormat="json")
    graph = rdflib.Graph(store=store)
    rows = list(graph.query(QUERY))
    assert len(rows) == 5 and str(rows[0][0]).startswith("Generalization")
    triples = list(graph.triples((rdflib.URIRef("https://w3id.org/iclr-kg/resource/person/ian-gemp"), None, None)))
    assert len(triples) > 5


def test_large_result_streams_in_chunks(server: str) -> None:
    query = "SELECT * WHERE { ?s ?p ?o . ?s2 a <https://w3id.org/iclr-kg/ontology#Paper> } LIMIT 200000"
    request = urllib.request.Request(
        f"{server}/sparql?" + urllib.parse.urlencode({"query": query}), headers={"Accept": "text/tab-separated-values"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.headers.get("Transfer-Encoding") == "chunked" or response.headers.get("Content-Length") is None
        first = response.read(1024)
        assert sorted(first.split(b"\n")[0].split(b"\t")) == [b"?o", b"?p", b"?s", b"?s2"]
        total = len(first) + sum(len(chunk) for chunk in iter(lambda: response.read(1 << 16), b""))
    assert total > 10_000_000


def test_client_that_disconnects_frees_the_server(server: str) -> None:
    query = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"
    request = urllib.request.Request(
        f"{server}/sparql?" + urllib.parse.urlencode({"query": query}), headers={"Accept": "text/csv"}
    )
    response = urllib.request.urlopen(request, timeout=30)
    assert len(response.read(4096)) == 4096
    response.close()
    with urllib.request.urlopen(f"{server}/health", timeout=10) as health:
        assert health.status == 200


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"), reason="Debian chromium is not installed (CI installs it)"
)
def test_headless_chromium_runs_a_saved_query(server: str, tmp_path) -> None:
    """A real browser loads /query, follows a saved query into the editor page and sees the table."""
    assert CHROMIUM, "chromium must be installed in CI"
    from iclr_kg.config import resource_dir
    from iclr_kg.sparql.saved import parse_saved

    saved = parse_saved(resource_dir("queries") / "award-reasons.rq")
    home = dump_dom(server + "/query", tmp_path)
    assert "<textarea" in home and saved.title in home
    link = server + "/query?" + urllib.parse.urlencode({"query": saved.text})
    page = dump_dom(link, tmp_path)
    assert re.search(r"<table[ >]", page) and "Vision Transformers Need Registers" in page and "rows" in page


def dump_dom(url: str, tmp_path) -> str:
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            *CHROMIUM_ARGS,
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'chromium'}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"), reason="Debian chromium is not installed (CI installs it)"
)
def test_pages_load_without_console_errors_and_the_endpoint_link_explains_it(server: str, tmp_path) -> None:
    """Regression (correctness #6): the nav's "SPARQL endpoint" opened /sparql?query=ASK {} (406 or
    raw JSON in a browser) and /favicon.ico was a 404 on every page (a console error)."""
    assert CHROMIUM, "chromium must be installed in CI"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on(
                "response",
                lambda response: errors.append(f"{response.status} {response.url}") if response.status >= 400 else None,
            )
            for path in ("/", "/queries", "/ontology", "/stats"):
                page.goto(server + path)
                page.wait_for_load_state("networkidle")
            page.click("nav >> text=SPARQL endpoint")
            page.wait_for_load_state("networkidle")
            assert page.url == server + "/sparql"
            assert page.locator("h1").inner_text() == "SPARQL endpoint"
            assert f"{server}/sparql" in page.locator("main").inner_text()
            page.screenshot(path=str(tmp_path / "endpoint.png"), full_page=True)
            icon = page.request.get(server + "/favicon.ico")
            assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
            assert errors == []
        finally:
            browser.close()


def _chunked_post(base: str, path: str, content_type: str, body: bytes) -> tuple[int, bytes]:
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request(
            "POST",
            path,
            body=iter([body[i : i + 65536] for i in range(0, len(body), 65536)]),
            headers={"Content-Type": content_type, "Transfer-Encoding": "chunked"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        return response.status, response.read()
    except (ConnectionResetError, BrokenPipeError):
        return 413, b"connection cut after the limit"
    finally:
        connection.close()


@pytest.mark.parametrize("which", ["default_server", "server"])
def test_chunked_bodies_over_the_limit_are_413(request, which: str) -> None:
    base = request.getfixturevalue(which)
    update = (
        "INSERT DATA { <urn:a> <urn:b> 1 } ;\n" + "# padding\n" * 120_000 + "INSERT DATA { <urn:a> <urn:b> 2 }"
    ).encode()
    assert _chunked_post(base, "/update", "application/sparql-update", update)[0] == 413
    form = urllib.parse.urlencode({"query": "ASK {} #" + "x" * 1_100_000}).encode()
    assert _chunked_post(base, "/sparql", "application/x-www-form-urlencoded", form)[0] == 413
    status, body = _chunked_post(base, "/sparql", "application/sparql-query", b"ASK { ?s ?p ?o }")
    assert status == 200 and b"true" in body, body  # a chunked body under the limit is read whole


def test_a_body_still_arriving_at_the_request_timeout_is_a_408(default_server: str) -> None:
    """A body that trickles in (headers complete, then a byte a second) is answered 408 once it
    is in, past the request timeout (4 s here), with the connection closed: the status is
    errors.RequestTimeout's, written below Flask by web/bodylimit.py."""
    host, port = default_server.removeprefix("http://").split(":")
    body = b"query=ASK%7B%7D"
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
        )
        for byte in body[:6]:
            sock.sendall(bytes([byte]))
            time.sleep(1)  # the slow client's pace: six seconds, past the timeout
        sock.sendall(body[6:])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 408"), answer[:300]
    assert b"connection: close" in head and b"did not arrive within 4 s" in answer


def test_slowloris_neither_starves_health_nor_keeps_its_sockets(default_server: str) -> None:
    host, port = default_server.removeprefix("http://").split(":")
    trickling = [socket.create_connection((host, int(port))) for _ in range(200)]  # 25x the threads of both processes
    try:
        for sock in trickling:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        for _ in range(3):  # a trickle, one header line at a time, meanwhile health answers
            for sock in trickling:
                with contextlib.suppress(OSError):  # cut off already
                    sock.sendall(b"X-Slow: 1\r\n")  # never the blank line that ends the headers
            assert get(default_server + "/health", timeout=5)[0] == 200
            time.sleep(0.5)  # the slow client's pace (what it does, not a wait for the server)
        open_ones = list(trickling)

        def all_cut_off() -> bool:  # each at ICLR_KG_REQUEST_TIMEOUT (4 s), trickle or not
            for sock in list(open_ones):
                sock.settimeout(0.05)
                try:
                    if sock.recv(1) == b"":
                        open_ones.remove(sock)
                except TimeoutError:
                    return False
                except ConnectionResetError:
                    open_ones.remove(sock)
            return not open_ones

        eventually(all_cut_off, "every trickling connection closed by the server", 30)
    finally:
        for sock in trickling:
            sock.close()
