"""Static files and compression: versioned static URLs are cached for a year, pages, JSON and
JavaScript are gzipped for clients that accept it, and SPARQL results stream uncompressed."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

GZIP = {"Accept-Encoding": "gzip"}


def test_pages_and_json_are_gzipped_for_clients_that_accept_it(client) -> None:
    plain = client.get("/resource/organization/google")
    packed = client.get("/resource/organization/google", headers=GZIP)
    assert plain.headers.get("Content-Encoding") is None and "Accept-Encoding" in packed.headers["Vary"]
    assert packed.headers["Content-Encoding"] == "gzip" and len(packed.data) < len(plain.data) / 2
    assert gzip.decompress(packed.data) == plain.data
    api = client.get("/api/vocabulary", headers=GZIP)
    assert api.headers["Content-Encoding"] == "gzip" and gzip.decompress(api.data).startswith(b"{")


def test_static_urls_are_versioned_and_cached_for_a_year(client) -> None:
    page = client.get("/query").get_data(as_text=True)
    found = re.search(r'src="(/static/vendor/codemirror/codemirror\.js\?v=(\w+))"', page)
    assert found, "the editor's script is linked without a version"
    version = found.group(2)
    assert f'data-static-version="{version}"' in page  # what the workbench appends to what it loads
    script = client.get(found.group(1), headers=GZIP)
    assert script.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert script.headers["Content-Encoding"] == "gzip"
    with client.get("/static/vendor/codemirror/codemirror.js") as unversioned:  # a file: closed after
        assert "immutable" not in unversioned.headers.get("Cache-Control", "")
        assert gzip.decompress(script.data) == unversioned.data
    with client.get("/static/vendor/codemirror/codemirror.js?v=0ld") as stale:
        assert "immutable" not in stale.headers.get("Cache-Control", "")


def test_sparql_results_are_never_compressed(client) -> None:
    answer = client.get(
        "/sparql", query_string={"query": "SELECT * WHERE { ?s ?p ?o } LIMIT 300", "format": "json"}, headers=GZIP
    )
    assert answer.status_code == 200 and answer.headers.get("Content-Encoding") is None
    assert answer.data.startswith(b'{"head"')


def test_a_static_file_is_compressed_and_kept_once_whatever_its_query_string(app, client) -> None:
    """Issue #54 item 1: the gzip cache of static files was keyed by the whole URL and never
    evicted: 500 requests for `vega.min.js?r=<n>` added 83 MiB to one web process."""
    cache = app.config["COMPRESS_CACHE_BACKEND"]()
    before = dict(cache.bodies)
    plain = (Path(app.static_folder) / "workbench.js").read_bytes()
    for n in range(40):
        answer = client.get(f"/static/workbench.js?r={n}", headers={"Accept-Encoding": "gzip"})
        assert answer.status_code == 200 and answer.headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(answer.data) == plain
    added = set(cache.bodies) - set(before)
    assert len(added) <= 1, added  # one entry for the file, whatever the query string
    assert sum(map(len, cache.bodies.values())) <= cache.limit


def test_gzip_is_sent_where_accept_encoding_means_it_and_only_there(client) -> None:
    """Issue #69 item 5: one decision of what a header means (web/assets.chosen_encoding), and the
    app's answers (a page, a static file, an export) coded as it says: `*` offers gzip, `q=0`
    refuses it (Flask-Compress alone gzip'd for `gzip;q=0`), `identity` preferred wins."""
    from iclr_kg.web.assets import chosen_encoding

    meanings = {
        "": None,
        "identity": None,
        "deflate": None,
        "br, deflate": None,
        "gzip": "gzip",
        "GZip": "gzip",
        "*": "gzip",
        "gzip, deflate, br": "gzip",
        "br;q=1.0, gzip;q=0.8, *;q=0.1": "gzip",
        "gzip;q=0": None,
        "gzip; q=0": None,
        "gzip;q=0, identity": None,
        "*;q=0": None,
        "*, identity": None,
        "identity;q=1, gzip;q=0.5": None,
        "gzip;q=0.5, identity;q=0.5": "gzip",
        "*, gzip;q=0": None,
    }
    for header, meaning in meanings.items():
        assert chosen_encoding(header) == meaning, header
        for url in (
            "/resource/organization/google",
            "/static/workbench.js",
            "/data?graph=https://w3id.org/iclr-kg/graph/ontology&format=turtle",
        ):
            with client.get(url, headers={"Accept-Encoding": header}) as answer:
                assert answer.status_code == 200 and answer.headers.get("Content-Encoding") == meaning, (url, header)
