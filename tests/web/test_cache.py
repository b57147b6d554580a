"""The result cache: repeated small results skip the worker, ETags answer 304, a rebuild or a
volatile query is never served stale."""

from __future__ import annotations

import gc
import shutil
import tracemalloc

from iclr_kg.build.pipeline import build

POINT = "SELECT ?name WHERE { ?a iclr:authorshipOf paper:NzTU59SYbNq ; iclr:authorPosition 1 ; iclr:authorshipBy/iclr:name ?name }"


def test_repeated_query_is_served_from_the_cache_with_an_etag(app, client) -> None:
    memo = app.extensions["iclr_kg"].cache  # one cache: exact repeats of a GET are answered before Flask
    hits = memo.hits
    first = client.get("/sparql", query_string={"query": POINT, "format": "csv"})
    second = client.get("/sparql", query_string={"query": POINT, "format": "csv"})
    assert first.status_code == second.status_code == 200
    assert first.data == second.data == b"name\r\nIan Gemp\r\n"
    assert memo.hits >= hits + 1 and second.headers["ETag"] == first.headers["ETag"]
    assert second.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert second.headers["Access-Control-Allow-Origin"] == "*" and second.headers["Vary"] == "Accept"
    # The same query asked another way (POST) is answered from the result cache behind it.
    cache = app.extensions["iclr_kg"].cache
    hits = cache.hits
    posted = client.post("/sparql", data=POINT, content_type="application/sparql-query", headers={"Accept": "text/csv"})
    assert posted.data == first.data and cache.hits == hits + 1
    again = client.get(
        "/sparql", query_string={"query": POINT, "format": "csv"}, headers={"If-None-Match": second.headers["ETag"]}
    )
    assert again.status_code == 304 and again.data == b""
    as_json = client.get(
        "/sparql", query_string={"query": POINT}, headers={"Accept": "application/sparql-results+json"}
    )
    assert as_json.headers["Content-Type"].startswith("application/sparql-results+json") and b"Ian Gemp" in as_json.data


def test_volatile_queries_are_not_cached(app, client) -> None:
    cache = app.extensions["iclr_kg"].cache
    before = cache.size
    values = {
        client.get("/sparql", query_string={"query": "SELECT (STRUUID() AS ?u) WHERE {}", "format": "csv"}).data
        for _ in range(3)
    }
    assert len(values) == 3 and cache.size == before


def test_cacheable_refuses_every_volatile_word_in_any_case_and_only_those() -> None:
    from iclr_kg.sparql.querytext import keepable

    for word in ("SERVICE <urn:x> {}", "now()", "Rand()", "UUID()", "struuid()", "bNode()"):
        assert not keepable(f"SELECT * WHERE {{ ?s ?p ?o }} # {word}"), word
    for text in (POINT, "SELECT ?known ?brand ?services WHERE { ?s ?p ?known }", "SELECT * { ?s <urn:now_x> ?o }"):
        assert keepable(text), text  # the letters inside longer words are not the functions


def test_a_rebuild_is_never_answered_from_the_cache(tiny_app, tmp_path) -> None:
    settings, client = tiny_app()
    query = {"query": "SELECT (COUNT(*) AS ?n) WHERE { ?p a iclr:Paper }", "format": "csv"}
    before = client.get("/sparql", query_string=query).data
    assert client.get("/sparql", query_string=query).data == before
    source = next((settings.data_dir / "sources").glob("*.yaml"))
    copy = source.with_name("zz-copy.yaml")
    text = source.read_text(encoding="utf-8")
    shutil.copy(source, copy)
    import re

    key = re.search(r"^  key: (\S+)", text, re.M).group(1)  # type: ignore[union-attr]
    copy.write_text(
        text.replace(f"key: {key}", f"key: {key}-copy", 1).replace("openreview: ", "openreview: X", 1), encoding="utf-8"
    )
    build(settings)
    assert client.get("/sparql", query_string=query).data != before


def test_result_cache_keys_do_not_grow_memory() -> None:
    from iclr_kg.web.cache import ResultCache

    cache = ResultCache(64 * 2**20)
    gc.collect()
    tracemalloc.start()
    try:
        for i in range(200):
            key = ("generation", f"SELECT * {{}} # {i} " + "x" * 250_000)
            cache.put(cache.digest(key), b"small result", "application/json")
            del key
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 2 * 2**20  # 200 keys of 250 KB would hold 50 MB
    assert cache.get(cache.digest(("generation", "SELECT * {} # 7 " + "x" * 250_000))) is not None


def test_a_kept_response_is_sent_gzip_only_to_clients_that_offered_it() -> None:
    """Issue #54 item 3: the response memo ignored Accept-Encoding: after one client asked for a
    gzip'd answer, clients that never offered gzip got gzip bytes until the next generation.
    The memo in front of a WSGI app that answers as ours does (gzip where offered, an ETag)."""
    import gzip

    from iclr_kg.web.cache import ResponseMemo, ResultCache

    def answering(environ: dict, start_response) -> list[bytes]:
        body = b'{"a": 1}'
        headers = [("Content-Type", "application/ld+json"), ("ETag", '"e1"')]
        if "gzip" in environ.get("HTTP_ACCEPT_ENCODING", ""):
            body, headers = gzip.compress(body), [*headers, ("Content-Encoding", "gzip")]
        start_response("200 OK", [*headers, ("Content-Length", str(len(body)))])
        return [body]

    memo = ResponseMemo(answering, lambda environ: "generation-1", ResultCache(2**20))

    def get(**headers: str) -> tuple[bytes, dict]:
        seen: dict = {}
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/sparql", "QUERY_STRING": "query=x", **headers}
        body = b"".join(memo(environ, lambda status, hs, exc=None: seen.update(hs)))
        return body, seen

    zipped, headers = get(HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert headers.get("Content-Encoding") == "gzip" and gzip.decompress(zipped) == b'{"a": 1}'
    for _ in range(2):
        plain, headers = get()
        assert plain == b'{"a": 1}' and "Content-Encoding" not in headers


def test_one_module_decides_what_a_client_may_keep() -> None:
    """ETags and 304s are made in web/conditional.py alone: no other module hashes an ETag or
    reads If-None-Match (there were three schemes in four modules)."""
    import re
    from pathlib import Path

    import iclr_kg.web

    for path in Path(iclr_kg.web.__file__).parent.glob("*.py"):
        if path.name == "conditional.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"if_none_match|status=304|-sheet", text), path.name
        assert "blake2b" not in text or path.name == "cache.py", path.name  # the cache's keys, not ETags


def test_a_kept_response_is_keyed_on_the_encoding_actually_chosen(client) -> None:
    """Issue #69 item 5: the memo keyed on the word "gzip" in Accept-Encoding, Flask-Compress on
    what the header means: primed with `*` (gzip chosen), every `identity` or `deflate` request
    for that URL got gzip bytes; primed with `gzip;q=0` (nothing chosen), a gzip client got the
    plain bytes kept under "offers gzip"."""
    import gzip

    url = "/sparql?query=CONSTRUCT+%7B+%3Fs+%3Fp+%3Fo+%7D+WHERE+%7B+%3Fs+a+iclr%3APaper+%3B+%3Fp+%3Fo+%7D+LIMIT+40&format=json-ld"
    for primer, encoding in (("*", "gzip"), ("gzip;q=0, identity", None)):
        first = client.get(f"{url}&n={primer}", headers={"Accept-Encoding": primer})
        assert first.status_code == 200 and first.headers.get("Content-Encoding") == encoding, primer
        plain = gzip.decompress(first.data) if encoding else first.data
        assert "ETag" in first.headers and len(plain) > 1024  # kept by the memo, and compressible
        for offered, expected in (("identity", None), ("deflate", None), ("", None), ("gzip", "gzip"), ("*", "gzip")):
            again = client.get(f"{url}&n={primer}", headers={"Accept-Encoding": offered})
            assert again.headers.get("Content-Encoding") == expected, (primer, offered)
            assert (gzip.decompress(again.data) if expected else again.data) == plain, (primer, offered)
