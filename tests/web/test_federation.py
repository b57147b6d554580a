"""Federated queries through the endpoint: SERVICE to allow-listed endpoints only."""

from __future__ import annotations

import csv
import io

from ..helpers import dead_url


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


def test_an_unreachable_service_is_a_502_not_a_500(real_settings, tmp_path) -> None:

    from iclr_kg.web import create_app

    dead = dead_url("/sparql")
    app = create_app(real_settings.replace(services=(dead,), query_workers=1))
    client = app.test_client()
    query = f"SELECT * WHERE {{ SERVICE <{dead}> {{ ?s ?p ?o }} }}"
    response = client.get("/sparql", query_string={"query": query, "format": "json"})
    assert response.status_code == 502 and b"it refused the connection" in response.data
    page = client.get("/", query_string={"query": query})
    assert page.status_code == 502 and b"Connection refused" in page.data
    assert client.get("/sparql", query_string={"query": "ASK {}", "format": "json"}).status_code == 200
    app.extensions["iclr_kg"].pool.close()
