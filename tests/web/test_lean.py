"""The lean path (web/lean.py): a plain `GET /sparql?query=` answered without Flask's request
machinery must answer exactly as the Flask view does, errors included."""

from __future__ import annotations

import urllib.parse

import pytest
from flask.testing import FlaskClient

from iclr_kg.web import create_app
from iclr_kg.web.lean import LeanQueries

JSON = "application/sparql-results+json"
QUERY = "SELECT ?s WHERE { ?s a <https://w3id.org/iclr-kg/ontology#Paper> } ORDER BY ?s LIMIT 3"


def lean(client: FlaskClient, text: str, accept: str = JSON, **headers: str):
    return client.get("/sparql?query=" + urllib.parse.quote_plus(text), headers={"Accept": accept, **headers})


@pytest.mark.parametrize("accept", [JSON, "text/csv", "application/sparql-results+xml", "*/*"])
def test_a_plain_query_is_answered_as_the_flask_view_answers_it(
    client: FlaskClient, accept: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    answered: list[str] = []
    original = LeanQueries._answer
    monkeypatch.setattr(
        LeanQueries,
        "_answer",
        lambda self, read, *rest: answered.append(read.query.text) or original(self, read, *rest),
    )
    answer = lean(client, QUERY, accept)
    assert answered == [QUERY]  # the lean path answered it, not Flask
    through_flask = client.get("/sparql", query_string={"query": QUERY, "timeout": "30"}, headers={"Accept": accept})
    assert answer.status_code == through_flask.status_code == 200
    assert answer.data == through_flask.data
    assert sorted(answer.headers.items()) == sorted(through_flask.headers.items())  # the whole answer


@pytest.mark.parametrize(
    ("text", "accept", "status", "words"),
    [
        ("SELECT * WHERE { ?s ?p }", JSON, 400, b"line"),
        ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", JSON, 400, b"/update"),
        (QUERY, "image/png", 406, b"none of the accepted media types"),
        ("CONSTRUCT WHERE { ?s ?p ?o } LIMIT 1", "application/sparql-results+json", 406, b"offered"),
    ],
)
def test_errors_on_the_lean_path_are_the_apps(
    client: FlaskClient, text: str, accept: str, status: int, words: bytes
) -> None:
    answer = lean(client, text, accept)
    through_flask = client.get("/sparql", query_string={"query": text, "timeout": "30"}, headers={"Accept": accept})
    assert answer.status_code == through_flask.status_code == status
    assert words in answer.data and answer.data == through_flask.data
    assert sorted(answer.headers.items()) == sorted(through_flask.headers.items())


def test_a_cached_answer_has_an_etag_and_a_conditional_request_gets_304(client: FlaskClient) -> None:
    text = QUERY.replace("LIMIT 3", "LIMIT 4")
    first, second = lean(client, text), lean(client, text)
    assert first.status_code == second.status_code == 200 and first.data == second.data
    etag = second.headers["ETag"]
    assert lean(client, text, **{"If-None-Match": etag}).status_code == 304


def test_text_that_is_not_ascii_is_answered(client: FlaskClient) -> None:
    answer = lean(client, 'SELECT ?x WHERE { BIND("图神经网络" AS ?x) }')
    assert answer.status_code == 200 and "图神经网络" in answer.get_data(as_text=True)


def test_without_query_workers_the_lean_path_evaluates_in_process(real_store, real_settings) -> None:
    client = create_app(real_settings.replace(query_workers=0, result_cache=0)).test_client()
    answer = lean(client, "ASK { ?s ?p ?o }")
    assert answer.status_code == 200 and b"true" in answer.data


@pytest.mark.parametrize("host", ["[::1", "e:99999", "[::1]:x"])
def test_a_malformed_host_is_answered_as_flask_answers_it(client, host: str) -> None:
    """Issue #54 item 8: the lean path answered a malformed Host with a bare 500; Flask's path with 200."""
    answer = client.get(
        "/sparql", query_string={"query": "ASK {}"}, headers={"Host": host, "Accept": "application/sparql-results+json"}
    )
    assert answer.status_code < 500, answer.data
