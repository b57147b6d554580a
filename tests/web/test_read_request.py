"""One read request per query (web/readrequest.py, issue 68 item 1): the generation a request
reads is looked up once, and the response memo, the lean path and the Flask view give the same
answer to "may this be kept and given an ETag", with the result cache on or off."""

from __future__ import annotations

import threading
import urllib.parse

import pytest
from flask import Flask
from flask.testing import FlaskClient

from iclr_kg.config import Settings
from iclr_kg.sparql.querytext import keepable
from iclr_kg.web import create_app

KEPT = (
    "ASK { ?s a iclr:Paper }",
    "SELECT ?s WHERE { ?s a iclr:Paper } ORDER BY ?s LIMIT 2",
    "CONSTRUCT { ?s a iclr:Paper } WHERE { ?s a iclr:Paper } LIMIT 1",
)
NOT_KEPT = (
    "SELECT (NOW() AS ?t) WHERE {}",
    "SELECT (RAND() AS ?r) WHERE {}",
    "SELECT (BNODE() AS ?b) WHERE {}",
    "SELECT (UUID() AS ?u) WHERE {}",
    "SELECT (STRUUID() AS ?u) WHERE {}",
    "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",  # refused: not an allowed service
)


def plain(text: str) -> str:
    """The lean path's shape: `query=` and nothing else."""
    return "/sparql?query=" + urllib.parse.quote_plus(text)


@pytest.fixture(scope="module")
def uncached(real_store, real_settings: Settings) -> Flask:
    return create_app(real_settings.replace(result_cache=0))


@pytest.fixture
def lookups(app: Flask, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each look at what is served now (the real backend's `current`, counted where it is asked)
    made by this test's thread: the test client handles the request on it."""
    served = app.extensions["iclr_kg"].served
    real, mine, seen = served.current, threading.get_ident(), []

    def counted():  # type: ignore[no-untyped-def]
        if threading.get_ident() == mine:
            seen.append("current")
        return real()

    monkeypatch.setattr(served, "current", counted)
    return seen


@pytest.mark.parametrize(
    "url",
    [
        plain("SELECT ?s WHERE { ?s a iclr:Paper } ORDER BY ?s LIMIT 5"),  # memo, then the lean path
        plain("SELECT ?s WHERE { ?s a iclr:Paper } ORDER BY ?s LIMIT 5"),  # answered by the memo
        plain("SELECT (NOW() AS ?t) WHERE {}"),  # never kept
        "/sparql?format=csv&query=" + urllib.parse.quote_plus("ASK { ?s ?p ?o }"),  # the Flask view
    ],
)
def test_one_request_looks_up_the_served_generation_once(client: FlaskClient, lookups: list[str], url: str) -> None:
    answer = client.get(url, headers={"Accept": "application/sparql-results+json"})
    assert answer.status_code == 200, answer.data
    assert lookups == ["current"]


@pytest.mark.parametrize("text", KEPT + NOT_KEPT)
@pytest.mark.parametrize("cached", [True, False], ids=["result cache", "no result cache"])
def test_memo_lean_path_and_view_agree_on_what_may_be_kept(
    app: Flask, uncached: Flask, text: str, cached: bool
) -> None:
    chosen = app if cached else uncached
    client, cache = chosen.test_client(), chosen.extensions["iclr_kg"].cache
    expected = keepable(text)
    assert expected == (text in KEPT)
    lean = client.get(plain(text), headers={"Accept": "*/*"})
    through_flask = client.get(plain(text) + "&timeout=30", headers={"Accept": "*/*"})
    ok = lean.status_code == 200
    assert through_flask.status_code == lean.status_code and ok == (text != NOT_KEPT[-1]), lean.data
    assert ("ETag" in lean.headers) == ("ETag" in through_flask.headers) == expected
    if expected:
        assert lean.headers["ETag"] == through_flask.headers["ETag"]
    if cache is not None:  # the memo keeps what carries an ETag: a repeat is a hit exactly then
        hits = cache.hits
        again = client.get(plain(text) + "&timeout=30", headers={"Accept": "*/*"})
        assert again.status_code == through_flask.status_code
        assert (cache.hits == hits + 1) == expected, (cache.hits, hits)
