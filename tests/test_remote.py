"""Our graph on real SPARQL engines started here (tests/engines.py): publish, then serve from them.

Every saved query must give the embedded store's answer on each engine; where an engine's own
SPARQL deviates from the standard in a way no phrasing of ours avoids, the test names the
deviation (`ENGINE_DEVIATIONS`) and still requires the rest of that query list to agree.
"""

from __future__ import annotations

import http.server
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator

import pytest
from pyoxigraph import DefaultGraph, NamedNode, QueryBoolean, QuerySolutions

from iclr_kg import vocab
from iclr_kg.config import Settings
from iclr_kg.errors import EngineError, QueryError
from iclr_kg.query.saved import load_saved
from iclr_kg.remote import publish as publishing
from iclr_kg.remote.client import SparqlClient
from iclr_kg.remote.engines import Mended
from iclr_kg.remote.store import RemoteStore, read_publication
from iclr_kg.store import run_query
from testbed import engines
from testbed.helpers import dead_url, run_cli, serving
from tests.conftest import saved_query_values

# Saved queries whose answers on an engine differ from the standard's in ways a query cannot
# avoid, with the reason (checked: each of them does differ, or the entry goes).
ENGINE_DEVIATIONS: dict[str, dict[str, str]] = {
    "virtuoso": {
        # Virtuoso 7.2 evaluates SERVICE by rewriting the pattern for the remote side: with an
        # OPTIONAL first in the SERVICE group the rows come back without the remote bindings, and
        # with OPTIONAL { SERVICE ... } it sends a query other engines reject ("expected OPTIONAL").
        "wikidata-countries": "Virtuoso's SERVICE drops the remote side's bindings",
        "wikidata-founders": "Virtuoso's SERVICE drops the remote side's bindings",
        "wikidata-ror": "Virtuoso's SERVICE drops the remote side's bindings",
    },
}


@pytest.fixture(scope="module", params=engines.ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[engines.Running]:
    try:
        with engines.start(request.param, tmp_path_factory.mktemp(request.param)) as running:
            yield running
    except engines.Unavailable as exc:
        pytest.skip(f"{request.param}: {exc}")


@pytest.fixture(scope="module")
def published(engine: engines.Running, real_store, real_settings: Settings) -> publishing.PublishReport:
    return publishing.publish(real_settings, engine.url, auth=engine.auth)


def _graph_counts(store) -> dict[str, int]:
    counts = Counter(
        q.graph_name.value if isinstance(q.graph_name, NamedNode) else vocab.GRAPH_MERGED
        for q in store.quads_for_pattern(None, None, None, None)
    )
    return dict(counts)


def test_publish_sends_every_graph_and_verifies_counts(published, real_store, engine) -> None:
    local = _graph_counts(real_store)
    assert published.graphs == local
    assert vocab.GRAPH_INFERRED in published.graphs and published.graphs[vocab.GRAPH_MERGED] > 0
    client = SparqlClient.connect(engine.url)
    record = read_publication(client)
    assert record is not None and record.generation == published.generation
    assert record.merged == local[vocab.GRAPH_MERGED]
    assert record.graphs == {g: n for g, n in local.items() if g != vocab.GRAPH_MERGED}
    staging = list(
        client.select(
            "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } FILTER STRSTARTS(STR(?g), 'urn:iclr-kg:staging') }"
        )
    )
    assert staging == []  # every staging graph was moved in
    # Virtuoso's default graph is the union of its graphs; Oxigraph's server (without
    # --union-default-graph) has one of its own: the report says which, answers do not differ
    assert published.union_default == (engine.kind == "virtuoso")


def _answer(result) -> object:
    """A query's answer, comparable across engines: rows as a multiset (row order is an
    engine's choice unless ORDER BY fixes it, and ties leave it open)."""
    if isinstance(result, QueryBoolean):
        return bool(result)
    if isinstance(result, QuerySolutions):
        names = [v.value for v in result.variables]
        return sorted(tuple(str(row[n]) if row[n] is not None else "" for n in names) for row in result)
    return sorted(str(triple) for triple in result)


def test_every_saved_query_answers_the_same(
    published, real_store, real_settings: Settings, engine, wikidata_standin
) -> None:
    remote = RemoteStore.connect(engine.url)
    deviations = ENGINE_DEVIATIONS.get(engine.kind, {})
    compared, differing = 0, {}
    for name, saved in sorted(load_saved(real_settings.queries_dir).items()):
        substitutions = saved.substitutions(saved_query_values(saved, wikidata_standin))
        here = _answer(run_query(real_store, saved.text, substitutions=substitutions, services=real_settings.services))
        try:
            there = _answer(run_query(remote, saved.text, substitutions=substitutions, services=real_settings.services))
        except (EngineError, QueryError, SyntaxError) as exc:  # the engine refused, failed, or broke off
            there = f"error: {exc}"
        compared += 1
        if here != there:
            differing[name] = there
    assert compared == len(load_saved(real_settings.queries_dir)) >= 25
    assert set(differing) == set(deviations), {n: str(a)[:300] for n, a in differing.items() if n not in deviations}


def test_quads_for_pattern_match_the_store(published, real_store, engine) -> None:
    remote = RemoteStore.connect(engine.url)
    google = vocab.entity("organization", "google")
    for graph in (None, DefaultGraph(), NamedNode(vocab.GRAPH_ENTITIES)):
        here = sorted(str(q) for q in real_store.quads_for_pattern(google, None, None, graph))
        there = sorted(str(q) for q in remote.quads_for_pattern(google, None, None, graph))
        assert here == there and here
    assert sorted(g.value for g in remote.named_graphs()) == sorted(
        g.value for g in real_store.named_graphs() if isinstance(g, NamedNode)
    )


def test_publish_again_drops_graphs_no_longer_published(published, real_settings: Settings, engine) -> None:
    client = SparqlClient.connect(engine.url, auth=engine.auth)
    gone = vocab.GRAPH_SOURCE_BASE + "withdrawn-article"
    sd = vocab.SD
    client.update(
        f"INSERT DATA {{ GRAPH <{gone}> {{ <urn:x> <urn:y> <urn:z> }} "
        f"GRAPH <{vocab.GRAPH_PUBLICATION}> {{ <{vocab.GRAPH_PUBLICATION}> <{sd}namedGraph> <urn:entry> . "
        f"<urn:entry> <{sd}name> <{gone}> ; <{sd}graph> <urn:size> . <urn:size> <{vocab.PREFIXES['void']}triples> 1 }} }}"
    )
    assert client.count(gone) == 1
    again = publishing.publish(real_settings, engine.url, auth=engine.auth)
    assert client.count(gone) == 0
    assert again.graphs == published.graphs


def test_an_interrupted_publish_resumes_from_the_last_chunk(
    published, real_settings: Settings, engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(publishing, "CHUNK_TRIPLES", 500)
    real_write = SparqlClient.write_graph
    calls = {"n": 0}

    def cut_after_five(self, graph, body, replace):  # the connection drops at the sixth chunk
        calls["n"] += 1
        if calls["n"] == 6:
            raise EngineError("the SPARQL engine failed: connection reset")
        return real_write(self, graph, body, replace)

    monkeypatch.setattr(SparqlClient, "write_graph", cut_after_five)
    with pytest.raises(EngineError, match="connection reset"):
        publishing.publish(real_settings, engine.url, auth=engine.auth)
    assert read_publication(SparqlClient.connect(engine.url)).generation == published.generation  # the old one serves
    monkeypatch.setattr(SparqlClient, "write_graph", real_write)
    resumed = publishing.publish(real_settings, engine.url, auth=engine.auth)
    assert resumed.resumed_chunks == 5
    assert resumed.graphs == published.graphs


def _get(url: str, accept: str = "*/*") -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": accept}), timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_web_app_serves_from_the_engine(published, real_settings: Settings, engine, default_server: str) -> None:
    env = {"ICLR_KG_BACKEND": f"sparql+{engine.url}", "ICLR_KG_QUERY_TIMEOUT": "3"}
    with serving(real_settings.store.parent / f"remote-{engine.kind}", env=env) as (base, _process):
        for path in ("/resource/organization/google", "/resource/person/yang-song", "/stats", "/queries/award-papers"):
            status, body = _get(base + path, "text/html")
            expected_status, expected = _get(default_server + path, "text/html")
            assert status == expected_status == 200, (path, body[:300])
        assert b"Google Brain" in _get(base + "/resource/organization/google", "text/html")[1]
        assert engine.url.encode() in _get(base + "/stats", "text/html")[1]  # says where the graph is read
        assert b"Yang Song" in _get(base + "/search?q=yang+song", "text/html")[1]
        query = urllib.parse.quote("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY ?p")
        for fmt in ("json", "csv", "xml"):
            status, body = _get(f"{base}/sparql?query={query}&format={fmt}")
            assert status == 200
            assert body == _get(f"{default_server}/sparql?query={query}&format={fmt}")[1]
        status, body = _get(f"{base}/resource/organization/google", "text/turtle")
        assert status == 200 and b"Google" in body
        runaway = urllib.parse.quote("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
        status, body = _get(f"{base}/sparql?query={runaway}")
        assert status == 503 and b"time limit" in body, body[:300]
        assert _get(f"{base}/sparql?query={query}")[0] == 200  # served while and after
        request = urllib.request.Request(f"{base}/update", data=b"update=CLEAR+ALL", method="POST")
        try:
            urllib.request.urlopen(request, timeout=30)
            raise AssertionError("a write was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 405 and b"iclr-kg publish" in exc.read()
    assert json.loads(_get(default_server + "/health")[1])  # the embedded server is untouched


def test_cli_commands_read_the_engine(published, engine, tmp_path) -> None:
    backend = f"sparql+{engine.url}"
    out = run_cli("query", "--backend", backend, "--saved", "award-papers", "-f", "csv")
    assert out.returncode == 0, out.stderr
    assert "Amortizing intractable inference" in out.stdout
    out = run_cli("stats", "--backend", backend)
    assert out.returncode == 0 and vocab.GRAPH_INFERRED in out.stdout, out.stderr
    exported = tmp_path / "inferred.nt"
    out = run_cli("export", "--backend", backend, "--graph", "inferred", "-f", "ntriples", "-o", str(exported))
    assert out.returncode == 0, out.stderr
    assert len(exported.read_text().splitlines()) == published.graphs[vocab.GRAPH_INFERRED]


def test_publish_command_reports_and_an_unreachable_engine_is_one_line(real_store, real_settings: Settings) -> None:
    env = {"ICLR_KG_STORE": str(real_settings.store)}
    out = run_cli("publish", "--to", dead_url("/query"), env={**_env(), **env})
    assert out.returncode == 1
    assert out.stderr.startswith("error: the SPARQL engine at") and "refused the connection" in out.stderr
    out = run_cli("serve", "--backend", "sparql+" + dead_url("/sparql"))
    assert out.returncode == 1 and "cannot be reached" in out.stderr


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("ICLR_KG_")}


def test_virtuoso_blank_node_labels_are_mended_across_chunk_boundaries() -> None:
    import io

    document = (
        b'<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="b"/></head><results>'
        + b"".join(b'<result><binding name="b"><bnode>nodeID://b%d</bnode></binding></result>' % i for i in range(50))
        + b"</results></sparql>"
    )
    for chunk in (1, 3, 7, 16, 64):
        mended = Mended(io.BytesIO(document), chunk=chunk)
        text = b"".join(iter(lambda m=mended: m.read(chunk), b""))
        assert b"nodeID://" not in text and text.count(b"<bnode>b") == 50


def test_a_wrong_backend_setting_is_named() -> None:
    out = run_cli("stats", "--backend", "virtuoso://x", env=_env())
    assert out.returncode == 1 and "ICLR_KG_BACKEND" in out.stderr


def test_substitutions_are_written_into_the_where_group() -> None:
    from pyoxigraph import Literal, Variable

    from iclr_kg.query.querytext import with_values
    from iclr_kg.remote.store import with_prologue

    text = 'SELECT ?w ?x WHERE { ?x ?p "}{" . { SELECT ?y WHERE { ?y ?p ?o } } SERVICE ?w { ?x ?q ?r } } ORDER BY ?x'
    written = with_values(text, {Variable("w"): NamedNode("http://e/q"), Variable("x"): Literal('a"b')})
    assert written == (
        'SELECT ?w ?x WHERE { VALUES ?x { "a\\"b" }  ?x ?p "}{" . { SELECT ?y WHERE { ?y ?p ?o } } '
        "SERVICE <http://e/q> { ?x ?q ?r }  BIND (<http://e/q> AS ?w) } ORDER BY ?x"
    )
    assert (
        with_values("ASK { ?s ?p ?o }", {Variable("s"): NamedNode("urn:a")})
        == "ASK { VALUES ?s { <urn:a> }  ?s ?p ?o   }"
    )
    prologue = with_prologue(
        "PREFIX iclr: <urn:mine#> SELECT * { ?s a iclr:X }", {"iclr": "urn:ours#", "xsd": "urn:x#"}, "http://b/"
    )
    assert prologue.splitlines() == [
        "BASE <http://b/>",
        "PREFIX xsd: <urn:x#>",
        "PREFIX iclr: <urn:mine#> SELECT * { ?s a iclr:X }",
    ]


def test_a_publish_whose_swap_answer_was_lost_sends_everything_again(
    published, real_settings: Settings, engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_update = SparqlClient.update

    def moved_then_lost(self, text, timeout=None):  # the engine swapped, its answer never came
        real_update(self, text, timeout)
        if "MOVE" in text:
            raise EngineError("the SPARQL engine failed: it did not answer in time")

    monkeypatch.setattr(SparqlClient, "update", moved_then_lost)
    with pytest.raises(EngineError, match="did not answer"):
        publishing.publish(real_settings, engine.url, auth=engine.auth)
    monkeypatch.setattr(SparqlClient, "update", real_update)
    again = publishing.publish(real_settings, engine.url, auth=engine.auth)  # the staging graphs are empty now
    assert again.resumed_chunks == 0 and again.graphs == published.graphs


def test_an_engine_that_loses_triples_gets_nothing_swapped_in(
    published, real_settings: Settings, engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = SparqlClient.connect(engine.url, auth=engine.auth)
    before = read_publication(client)
    real_count = SparqlClient.count

    def one_short(self, graph):  # as an engine that merges two terms we keep apart would count
        found = real_count(self, graph)
        return found - 1 if graph.startswith("urn:iclr-kg:staging") and graph.endswith(":0") else found

    monkeypatch.setattr(SparqlClient, "count", one_short)
    with pytest.raises(EngineError, match="nothing was swapped in"):
        publishing.publish(real_settings, engine.url, auth=engine.auth)
    monkeypatch.setattr(SparqlClient, "count", real_count)
    assert read_publication(client) == before
    staging = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } FILTER STRSTARTS(STR(?g), 'urn:iclr-kg:staging') }"
    assert list(client.select(staging)) == []
    assert not list((real_settings.store / "publish").glob("*.json"))


class _LyingEngine(http.server.BaseHTTPRequestHandler):
    """An engine that takes every write (204) and answers every query with something that is not
    SPARQL results: the count check before a swap cannot be answered."""

    def _answer(self, status: int, body: bytes = b"", media_type: str = "application/sparql-results+json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # the probe: ASK {}
        self._answer(200, b'{"head":{},"boolean":true}')

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.startswith("/update"):
            self._answer(204)
        else:
            self._answer(
                200, b'{"head":{"vars":["n"]},"results":{"bindings":[{"n":{"type":"literal","value":"' + b"9" * 5000
            )

    def do_PUT(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer(204)

    def log_message(self, *args: object) -> None:
        pass


def test_publish_to_an_engine_that_answers_garbage_fails_in_one_line(real_store, real_settings: Settings) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _LyingEngine)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/sparql"
        out = run_cli("publish", "--to", url, env={**_env(), "ICLR_KG_STORE": str(real_settings.store)})
        last = out.stderr.splitlines()[-1]
        assert out.returncode == 1 and last.startswith("error: the SPARQL engine") and "broken results" in last
        assert "Traceback" not in out.stderr, out.stderr
    finally:
        server.shutdown()
        server.server_close()


def test_a_binding_reaches_the_sub_selects_that_project_it() -> None:
    """Engines evaluate a sub-SELECT before joining the VALUES outside it: the binding is written
    into each one that projects the variable as it is, so that it restricts early; never into one
    with a LIMIT (the restriction would change its rows) nor one that only computes from it."""
    from pyoxigraph import Variable

    from iclr_kg.query.querytext import with_values

    text = (
        "SELECT ?e ?n WHERE { { SELECT ?e (COUNT(?p) AS ?n) WHERE { ?p <urn:in> ?e } GROUP BY ?e } "
        "{ SELECT ?e WHERE { ?e a <urn:E> } LIMIT 3 } { SELECT (COUNT(?e) AS ?all) WHERE { ?e a <urn:E> } } }"
    )
    written = with_values(text, {Variable("e"): NamedNode("urn:x")})
    assert written.count("VALUES ?e { <urn:x> }") == 2  # the outer group and the first sub-SELECT
    assert "WHERE { VALUES ?e { <urn:x> }  ?p <urn:in> ?e }" in written
    assert "LIMIT 3" in written and "WHERE { ?e a <urn:E> } LIMIT 3" in written
