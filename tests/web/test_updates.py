"""Updates in every mode: the default server (gunicorn, two web processes), the journal, kill -9,
builds that replay, and inferences that follow each update (checked against full reasoning)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, DefaultGraph, NamedNode, Store

from iclr_kg import maintained, vocab
from iclr_kg.build.pipeline import build
from iclr_kg.config import Settings
from iclr_kg.errors import QueryError
from iclr_kg.index import build_index, index_path
from iclr_kg.reasoning.reason import infer_triples
from iclr_kg.store import current_generation, open_read_only
from iclr_kg.updates import Journal, apply
from testbed.helpers import CLI, serving

TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PAPER = "https://w3id.org/iclr-kg/resource/paper/PxTIG12RRHS"
RES = vocab.RESOURCE_BASE


def http(
    url: str, data: bytes | None = None, headers: dict | None = None, method: str | None = None, timeout: float = 30
) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def post_update(base: str, text: str, **params: str) -> tuple[int, bytes]:
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    return http(f"{base}/update{query}", text.encode(), {**AUTH, "Content-Type": "application/sparql-update"})


def ask(base: str, text: str) -> bool:
    status, body = http(f"{base}/sparql?" + urllib.parse.urlencode({"query": text, "format": "json"}))
    assert status == 200, body
    return bool(json.loads(body)["boolean"])


@pytest.fixture
def update_server(tiny_store: Settings) -> Iterator[tuple[str, Settings, subprocess.Popen]]:
    """`iclr-kg serve` as shipped (gunicorn, two web processes), updates enabled, on a tiny store."""
    settings = tiny_store
    env = {
        "ICLR_KG_UPDATE_TOKEN": TOKEN,
        "ICLR_KG_QUERY_WORKERS": "2",
        "ICLR_KG_DATA_DIR": str(settings.data_dir),
        "ICLR_KG_ONTOLOGY_DIR": str(settings.ontology_dir),
    }
    with serving(settings.store, env) as (base, process):
        yield base, settings, process


def authorship(number: int, person: str = "ben-poole") -> str:
    node = f"<{RES}authorship/test-{number}>"
    return (
        f"<{PAPER}> iclr:hasAuthorship {node} . {node} a iclr:Authorship ; "
        f"iclr:authorshipBy <{RES}person/{person}> ; iclr:position {number} ."
    )


# --- 1. the default server: one writer, every process sees each update, no crash ----------------


def test_concurrent_updates_and_queries_on_the_default_server(update_server) -> None:
    base, settings, process = update_server
    failures: list[object] = []

    def writer(offset: int) -> None:
        for i in range(5):
            text = f"INSERT DATA {{ GRAPH <urn:test> {{ <urn:s{offset}-{i}> <urn:p> {offset * 10 + i} }} }}"
            status, body = post_update(base, text)
            if status != 204:
                failures.append((status, body))

    def reader() -> None:
        for _ in range(15):
            for _attempt in range(50):  # a 429 or 503 with Retry-After is admission control: wait and retry
                status, body = http(
                    f"{base}/sparql?"
                    + urllib.parse.urlencode(
                        {"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s <urn:p> ?o }", "format": "json"}
                    )
                )
                if status not in (429, 503):
                    break
                time.sleep(0.1)
            if status != 200:
                failures.append((status, body))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)] + [
        threading.Thread(target=reader) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for _ in range(8):  # on every web process and query worker: each request sees all 15
        status, body = http(
            f"{base}/sparql?"
            + urllib.parse.urlencode({"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s <urn:p> ?o }", "format": "json"})
        )
        assert status == 200 and json.loads(body)["results"]["bindings"][0]["n"]["value"] == "15"
    assert http(base + "/health")[0] == 200
    assert [e.id for e in Journal(settings.store).entries()] == list(range(1, 16))
    process.terminate()
    process.wait(timeout=30)
    assert process.returncode == 0, process.returncode  # a clean stop; the log is checked below


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
def test_the_default_server_logs_no_crash_under_updates(tiny_store: Settings) -> None:
    settings = tiny_store
    with serving(settings.store, {"ICLR_KG_UPDATE_TOKEN": TOKEN}) as (base, process):
        threads = [
            threading.Thread(target=post_update, args=(base, f"INSERT DATA {{ <urn:c{i}> <urn:p> {i} }}"))
            for i in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert ask(base, "ASK { <urn:c5> <urn:p> 5 }")
    for sign in ("Traceback", "SIGSEGV", "SIGABRT", "LOCK", "terminate called"):
        assert sign not in process.output, process.output


# --- 2. journaled, replayed by build, exported, dropped ----------------------------------------


def test_updates_outlive_builds_until_dropped(tiny_store: Settings, tmp_path: Path) -> None:
    settings = tiny_store
    apply(settings.store, f"INSERT DATA {{ GRAPH <urn:curated> {{ {authorship(7)} }} }}")
    apply(settings.store, "INSERT DATA { <urn:default> <urn:p> 1 }")  # into the default graph
    query = "ASK { GRAPH <urn:curated> { ?a iclr:position 7 } GRAPH ?u { <urn:default> <urn:p> 1 } }"
    assert bool(open_read_only(settings.store).query(query, prefixes=vocab.QUERY_PREFIXES))
    build(settings)  # from data/, then the journal replayed
    assert bool(open_read_only(settings.store).query(query, prefixes=vocab.QUERY_PREFIXES))
    exported = tmp_path / "journal.ru"
    done = subprocess.run(
        [CLI, "updates", "export", "--store", str(settings.store), "-o", str(exported)],
        capture_output=True,
        text=True,
        check=True,
    )
    listed = subprocess.run(
        [CLI, "updates", "list", "--store", str(settings.store)], capture_output=True, text=True, check=True
    )
    assert listed.stdout.count("\n") == 2 and "2 journaled" in listed.stderr and done.returncode == 0
    dropped = subprocess.run(
        [CLI, "updates", "drop", "--all", "--store", str(settings.store)], capture_output=True, text=True, check=False
    )
    assert dropped.returncode == 0 and "dropped 2" in dropped.stdout
    build(settings)
    assert not bool(open_read_only(settings.store).query(query, prefixes=vocab.QUERY_PREFIXES))
    # the export is a SPARQL Update file that runs as it is: it gives back what the journal gave
    apply(settings.store, exported.read_text(encoding="utf-8"))
    assert bool(open_read_only(settings.store).query(query, prefixes=vocab.QUERY_PREFIXES))


def test_dropping_an_unknown_entry_is_one_line(tiny_store: Settings) -> None:
    settings = tiny_store
    done = subprocess.run(
        [CLI, "updates", "drop", "42", "--store", str(settings.store)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and done.stderr.startswith("error: no journaled update 42")


WRITER = """
import sys
from pathlib import Path
from iclr_kg.updates import apply
defer = sys.argv[2] == "defer"
for i in range(1000):
    apply(Path(sys.argv[1]), f"INSERT DATA {{ GRAPH <urn:k> {{ <urn:k{i}> <urn:v> {i} }} }}", defer=defer)
    print(i, flush=True)
"""


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
@pytest.mark.parametrize(
    ("delay", "mode"),
    [(0.0, "publish"), (0.3, "publish"), (0.8, "publish"), (1.5, "publish"), (0.0, "defer"), (0.8, "defer")],
)
def test_kill_9_loses_no_acknowledged_update(tiny_store: Settings, delay: float, mode: str) -> None:
    """SIGKILL lands `delay` seconds after the writer's first acknowledgement (counted from there,
    not from its start, which a busy machine may take longer than a delay to reach). `defer`:
    as the server's writer acknowledges, before publishing (with no publisher here, nothing
    after the first update is published: the next writer catches all of it up from the journal)."""
    settings = tiny_store
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(settings.store), mode], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    out, _ = process.communicate(timeout=30)
    acknowledged = [int(line) for line in (first + out).split()]
    assert acknowledged[0] == 0
    apply(settings.store, "INSERT DATA { <urn:after> <urn:v> 0 }")  # the next writer recovers first
    stored = {
        int(row["o"].value)
        for row in open_read_only(settings.store).query("SELECT ?o WHERE { GRAPH <urn:k> { ?s <urn:v> ?o } }")
    }
    assert set(acknowledged) <= stored
    build(settings)  # and a build replays the same
    rebuilt = {
        int(row["o"].value)
        for row in open_read_only(settings.store).query("SELECT ?o WHERE { GRAPH <urn:k> { ?s <urn:v> ?o } }")
    }
    assert rebuilt == stored
    databases = [p for p in (settings.store / "generations").iterdir() if p.is_dir() and "." not in p.name]
    assert databases and all((p / "CURRENT").exists() for p in databases)  # (<generation>.kept/ holds kept values)


# --- 3. inferences follow updates ---------------------------------------------------------------


def test_inserting_and_deleting_an_authorship_updates_what_is_derived(update_server) -> None:
    base, _, _ = update_server
    derived = f"ASK {{ <{PAPER}> iclr:hasAuthor <{RES}person/new> ; schema:author <{RES}person/new> ; wdt:P50 <{RES}person/new> }}"
    assert not ask(base, derived)
    assert post_update(base, f"INSERT DATA {{ GRAPH <urn:g> {{ {authorship(5, 'new')} }} }}")[0] == 204
    assert ask(base, derived)
    assert post_update(base, f"DELETE WHERE {{ GRAPH <urn:g> {{ <{RES}authorship/test-5> ?p ?o }} }}")[0] == 204
    assert not ask(base, derived)


def test_an_update_may_not_add_to_the_inferred_graph(update_server) -> None:
    base, _, _ = update_server
    status, body = post_update(base, f"INSERT DATA {{ GRAPH <{vocab.GRAPH_INFERRED}> {{ <urn:x> <urn:y> <urn:z> }} }}")
    assert status == 400 and b"reasoner" in body
    assert not ask(base, "ASK { <urn:x> <urn:y> <urn:z> }")


def test_same_as_to_a_literal_is_refused_on_both_paths(update_server) -> None:
    """owlrl types an IRI made the same as `"1"^^xsd:integer` as xsd:integer and rdfs:Datatype and
    the fast reasoner does not: refused (400) whichever path the update takes (the fast path for
    data and for a WHERE; the slow path once a request states schema), and nothing is written."""
    base, _, _ = update_server
    for update in (
        'INSERT DATA { GRAPH <urn:g> { <urn:x> owl:sameAs "1"^^xsd:integer } }',
        'INSERT { <urn:x> owl:sameAs ?v } WHERE { BIND("x"@en AS ?v) }',
        'INSERT DATA { <urn:x> rdfs:subClassOf <urn:y> } ; INSERT DATA { <urn:x> owl:sameAs "x" }',
    ):
        status, body = post_update(base, update)
        assert status == 400 and b"owl:sameAs links two resources" in body, (update, body)
    assert not ask(base, "ASK { <urn:x> ?p ?o }")


PEOPLE = ["yang-song", "ben-poole", "new-1", "new-2"]
step = st.tuples(
    st.sampled_from(["insert", "delete"]),
    st.integers(1, 4),
    st.sampled_from(PEOPLE),
    st.sampled_from(["urn:g1", "urn:g2", "default"]),
)


@hypothesis_settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=6))
def test_the_inferred_graph_equals_full_reasoning_after_any_updates(tiny_data, steps) -> None:
    settings = tiny_data()
    if current_generation(settings.store) is None:
        build(settings)
    for action, number, person, graph in steps:
        triples = authorship(number, person)
        wrapped = triples if graph == "default" else f"GRAPH <{graph}> {{ {triples} }}"
        verb = "INSERT DATA" if action == "insert" else "DELETE DATA"
        apply(settings.store, f"{verb} {{ {wrapped} }}")
    assert_as_if_built(settings)


def assert_as_if_built(settings: Settings) -> None:
    """The inferred graph is owlrl's from scratch, the default graph the union, and the index
    what one built from the store would hold."""
    store = open_read_only(settings.store)
    inferred, ontology = NamedNode(vocab.GRAPH_INFERRED), NamedNode(vocab.GRAPH_ONTOLOGY)
    graphs = [g for g in store.named_graphs() if g not in (inferred, ontology)]
    asserted = {q.triple for g in graphs for q in store.quads_for_pattern(None, None, None, g)}
    schema = [q.triple for q in store.quads_for_pattern(None, None, None, ontology)]
    expected = set(infer_triples(list(asserted), schema, "owlrl")) - asserted  # the reference reasoner
    assert {q.triple for q in store.quads_for_pattern(None, None, None, inferred)} == expected
    union = {q.triple for g in store.named_graphs() for q in store.quads_for_pattern(None, None, None, g)}
    assert {q.triple for q in store.quads_for_pattern(None, None, None, DefaultGraph())} == union
    assert _index_rows(index_path(current_generation(settings.store))) == _index_rows(
        build_index(store, settings.store.parent / "fresh")
    )  # the patched index holds what one built from the store would


def _index_rows(path: Path) -> set[tuple]:
    """The entity index's rows, without their row ids (a patch numbers new entities after the
    rest), and its authorship pairs by IRI (who wrote what: the person pages read them)."""
    import sqlite3

    db = sqlite3.connect(path)
    pairs = (
        "SELECT 'authorship', a.iri, b.iri FROM authorship JOIN entity a ON a.id = person JOIN entity b ON b.id = paper"
    )
    try:
        credits = (
            "SELECT o.iri, p.iri, COALESCE(v.iri, '') FROM credit JOIN entity o ON o.id = organization "
            "JOIN entity p ON p.id = paper LEFT JOIN entity v ON v.id = via"
        )
        ratings = "SELECT p.iri, e.iri, average, ratings FROM rating JOIN entity p ON p.id = paper JOIN entity e ON e.id = edition"
        topics = "SELECT 'topic', e.iri, t.text FROM topics t JOIN entity e ON e.id = t.rowid"
        tables = set(db.execute(pairs)) | set(db.execute(credits)) | set(db.execute(ratings)) | set(db.execute(topics))
        return {row[1:] for row in db.execute("SELECT * FROM entity")} | tables
    finally:
        db.close()


def test_a_keyword_or_abstract_changed_by_an_update_is_searched_at_once(tiny_store: Settings) -> None:
    """The topic rows are patched with the paper's: an inserted keyword finds the paper by
    topic, by its synonym too; deleted, it no longer does; the index stays what a build makes."""
    from iclr_kg.index import Index

    settings = tiny_store
    graph = "https://w3id.org/iclr-kg/graph/source/test-update"

    def found(q: str) -> bool:
        index = Index(index_path(current_generation(settings.store)))
        return PAPER in {hit.iri for hit in index.topic_page(q, 50, 0)}

    assert not found("GNN")
    apply(settings.store, f'INSERT DATA {{ GRAPH <{graph}> {{ <{PAPER}> iclr:keyword "graph neural networks" }} }}')
    assert found("GNN") and found("graph neural network")
    apply(settings.store, f'INSERT DATA {{ GRAPH <{graph}> {{ <{PAPER}> iclr:abstract "On sparse rewards." }} }}')
    assert found("sparse reward") and found("GNN")
    apply(settings.store, f'DELETE DATA {{ GRAPH <{graph}> {{ <{PAPER}> iclr:keyword "graph neural networks" }} }}')
    assert not found("GNN") and found("sparse reward")
    assert_as_if_built(settings)


def test_a_bad_update_writes_nothing(tiny_store: Settings) -> None:
    settings = tiny_store
    before = current_generation(settings.store)
    with pytest.raises(QueryError, match="syntax"):
        apply(settings.store, "INSERT DATA { <urn:a> <urn:b> }")
    assert current_generation(settings.store) == before and Journal(settings.store).entries() == []


# --- 4. the protocol's update details (the W3C manifests run in test_w3c.py) ----------------------


def test_protocol_details_of_updates(update_server) -> None:
    base, _, _ = update_server
    # relative IRIs resolve against the endpoint's URL, in queries and updates
    status, body = http(
        f"{base}/sparql?" + urllib.parse.urlencode({"query": "CONSTRUCT { <s> <p> 1 } WHERE {}", "format": "ntriples"})
    )
    assert status == 200 and f"<{base}/s>".encode() in body
    assert post_update(base, "INSERT DATA { GRAPH <urn:base> { <urn:s> <urn:p> <rel> } }")[0] == 204
    assert ask(base, f"ASK {{ GRAPH <urn:base> {{ <urn:s> <urn:p> <{base}/rel> }} }}")
    # using-graph-uri sets the WHERE's dataset
    assert (
        post_update(base, "INSERT DATA { GRAPH <urn:u1> { <urn:a> a <urn:C> } GRAPH <urn:u2> { <urn:b> a <urn:C> } }")[
            0
        ]
        == 204
    )
    assert (
        post_update(
            base, "INSERT { GRAPH <urn:out> { ?s a <urn:D> } } WHERE { ?s a <urn:C> }", **{"using-graph-uri": "urn:u1"}
        )[0]
        == 204
    )
    assert ask(base, "ASK { GRAPH <urn:out> { <urn:a> a <urn:D> } }") and not ask(
        base, "ASK { GRAPH <urn:out> { <urn:b> a <urn:D> } }"
    )
    # two updates in one request, and a dataset given twice, are 400
    status, _ = http(
        f"{base}/update",
        urllib.parse.urlencode([("update", "CLEAR SILENT GRAPH <urn:x>")] * 2).encode(),
        {**AUTH, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 400
    status, body = post_update(
        base, "WITH <urn:u1> DELETE { ?s a <urn:C> } WHERE { ?s a <urn:C> }", **{"using-named-graph-uri": "urn:u2"}
    )
    assert status == 400 and b"only one way" in body


def test_clearing_then_reinserting_the_same_triples_keeps_them(tiny_store: Settings) -> None:
    """One request that clears everything and puts back a graph's own triples must keep them:
    each operation's effect on the default graph is told apart from the next one's."""
    settings = tiny_store
    apply(settings.store, "INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }")
    apply(settings.store, "CLEAR ALL ; INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }")
    store = open_read_only(settings.store)
    assert bool(store.query("ASK { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }"))
    assert bool(store.query("ASK { <urn:a> <urn:b> <urn:c> }"))  # and in the default graph, the union
    apply(
        settings.store,
        "PREFIX x: <urn:x:> DELETE DATA { <urn:a> <urn:b> <urn:c> } ; INSERT DATA { GRAPH <urn:h> { x:a x:b x:c } }",
    )
    store = open_read_only(settings.store)
    assert not bool(store.query("ASK { GRAPH ?g { <urn:a> <urn:b> <urn:c> } }"))
    assert bool(store.query("ASK { GRAPH <urn:h> { <urn:x:a> <urn:x:b> <urn:x:c> } }"))  # the prefix carried over


def test_no_write_handle_outlives_an_update(tiny_store: Settings) -> None:
    """A published generation is never written again. An update's read-write handle kept alive
    by a reference cycle (dred's closure refers to itself) went on compacting its generation after
    it was published, and readers found files gone. With the collector off, only reference
    counting closes handles: after `apply`, this process can open the generation itself, which
    RocksDB refuses while another handle of this process holds it."""
    import gc

    settings = tiny_store
    enabled = gc.isenabled()
    gc.disable()
    try:
        for verb in ("INSERT", "DELETE"):
            apply(settings.store, f"{verb} DATA {{ GRAPH <urn:c> {{ {authorship(3)} }} }}")
            generation = current_generation(settings.store)
            reopened = Store(str(generation))  # fails with "lock hold by current process" if one is open
            del reopened
    finally:
        if enabled:
            gc.enable()


def test_a_new_entity_beside_the_highest_numbered_one_gets_a_row_of_its_own(tiny_store: Settings) -> None:
    """Found by the property test above: the index patch numbered a new entity after the rows
    that remained once the patched ones were taken out; where the entity with the highest row id
    was among those, the new one took its id (UNIQUE constraint failed)."""
    import sqlite3

    from iclr_kg.index import index_path

    settings = tiny_store
    db = sqlite3.connect(index_path(current_generation(settings.store)))
    top = db.execute("SELECT iri FROM entity ORDER BY id DESC LIMIT 1").fetchone()[0]
    db.close()
    newcomer = "https://w3id.org/iclr-kg/resource/person/new-person"
    apply(
        settings.store, f'INSERT DATA {{ <{top}> iclr:name "Renamed" . <{newcomer}> a iclr:Person ; iclr:name "New" }}'
    )
    db = sqlite3.connect(index_path(current_generation(settings.store)))
    rows = dict(db.execute("SELECT iri, id FROM entity WHERE iri IN (?, ?)", (top, newcomer)).fetchall())
    db.close()
    assert len(rows) == 2 and len(set(rows.values())) == 2


def test_a_restarted_writer_maintains_from_the_changes_saved_beside_generations(
    tiny_store: Settings, monkeypatch, capfd
) -> None:
    """Each maintained update saves only its change to the reasoning state, beside its generation
    (the whole every WHOLE_EVERY updates); a writer that starts afresh (a restart, the other web
    process) reads the chain back and still maintains, with the same closure as owlrl's."""
    import pickle

    from iclr_kg.store import reasoned_path
    from iclr_kg.updates import bursts

    monkeypatch.setattr(maintained.reasoned, "WHOLE_EVERY", 3)
    settings = tiny_store
    saved = []
    for number in (1, 2, 3, 4):
        apply(settings.store, f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(number)} }} }}")
        saved.append(pickle.loads(reasoned_path(current_generation(settings.store)).read_bytes()))
    assert ["parent" in state for state in saved] == [True, True, False, True]  # the third whole
    maintained.forget()  # as a new writer process finds it
    bursts.discard_working_copy(settings.store)
    capfd.readouterr()
    apply(settings.store, f"DELETE DATA {{ GRAPH <urn:c> {{ {authorship(2)} }} }}")
    assert "maintained from its change (delete and rederive)" in capfd.readouterr().err
    assert_as_if_built(settings)


def test_an_updates_index_is_the_file_it_patched_and_goes_with_the_last_link(tiny_store: Settings, monkeypatch) -> None:
    """An update patches the index in place (copying it grew with the store) and its generation's
    index links to that file; pruning keeps the file while a kept generation links to it."""
    from iclr_kg.store import pruning as store_module
    from iclr_kg.updates import bursts

    monkeypatch.setattr(store_module, "KEEP_SECONDS", 0)
    monkeypatch.setattr(bursts, "PRUNE_EVERY", 0)  # every update prunes, not the first in a second
    settings = tiny_store
    built = index_path(current_generation(settings.store))
    for number in (1, 2, 3):
        apply(settings.store, f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(number)} }} }}")
    now = index_path(current_generation(settings.store))
    assert now.is_symlink() and now.resolve() == built.resolve()
    assert not built.with_suffix("").with_suffix("").exists()  # the build's generation itself was pruned
    assert built.exists()  # its index lives on: the current generation links to it
    assert_as_if_built(settings)
    build(settings)
    build(settings)  # two builds later no generation links to it
    assert not built.exists() and not any(built.parent.glob(built.name + "-*"))


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
def test_web_processes_share_one_writer_which_a_time_limit_stops(tiny_store: Settings) -> None:
    """Two web processes' writes go to one writer process, which keeps its working copy between
    them; an update past its time limit kills it, and the next write (from either) starts another."""
    from iclr_kg.errors import UpdateTimeout
    from iclr_kg.updates import Writer

    settings = tiny_store
    first, second = Writer(0), Writer(0)
    options = {"base": None, "kind": "update", "reasoner": "fast"}
    try:
        for number, web in ((1, first), (2, second), (3, first)):
            web.apply(
                settings.store, f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(number)} }} }}", **options, timeout=120
            )
        assert first._pid == second._pid
        assert len(list((settings.store / "writer").iterdir())) == 1  # one working copy, kept open
        with pytest.raises(UpdateTimeout):
            second.apply(settings.store, "INSERT { ?s <urn:seen> 1 } WHERE { ?s ?p ?o }", **options, timeout=0.01)
        stopped = second._pid
        first.apply(settings.store, f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(4)} }} }}", **options, timeout=120)
        assert first._pid != stopped
        first.publish(settings.store, reasoner="fast", timeout=120)  # what a reader asks first
        store = open_read_only(settings.store)
        held = {
            n for n in (1, 2, 3, 4) if any(store.quads_for_pattern(NamedNode(f"{RES}authorship/test-{n}"), None, None))
        }
        assert held == {1, 2, 3, 4}
    finally:
        first.close()
        second.close()


def test_an_updates_generation_has_its_counts_from_the_change(tiny_store: Settings) -> None:
    """/stats and VoID read counts kept beside the generation; an update's generation gets them
    from its change (types, identifiers, graph sizes), equal to counting its store again."""
    from iclr_kg import counts

    settings = tiny_store
    counts.write(current_generation(settings.store), counts.count(open_read_only(settings.store)))
    person = f"{RES}person/new-person"
    steps = [
        f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(1)} }} }}",
        f'INSERT DATA {{ <{person}> a iclr:Person ; iclr:name "New" ; wdt:P496 "0000-0002-1825-0097" }}',
        f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(2, 'new-person')} }} }}",
        f"DELETE DATA {{ GRAPH <urn:c> {{ {authorship(1)} }} }}",
        f'DELETE DATA {{ <{person}> wdt:P496 "0000-0002-1825-0097" }}',
    ]
    for text in steps:
        apply(settings.store, text)
        generation = current_generation(settings.store)
        assert counts.read(generation) == counts.count(open_read_only(settings.store)), text


def test_blank_nodes_inserted_are_maintained_from_their_change(tiny_store: Settings, capfd) -> None:
    """An authorship written as a blank node (as a person writing SPARQL by hand would), then
    deleted by a pattern: each maintained, the closure owlrl's, the new node's derived
    iclr:hasAuthor there and gone again."""
    settings = tiny_store
    new = f"<{RES}person/new-1>"
    node = f"iclr:authorshipBy {new} ; iclr:position 7"
    steps = [
        f"INSERT DATA {{ GRAPH <urn:g1> {{ <{PAPER}> iclr:hasAuthorship _:a . _:a a iclr:Authorship ; {node} }} }}",
        f"INSERT DATA {{ <{PAPER}> iclr:hasAuthorship _:a . _:a a iclr:Authorship ; {node} }}",
        f"DELETE {{ <{PAPER}> iclr:hasAuthorship ?a . ?a ?p ?o }} WHERE {{ ?a {node} ; ?p ?o }}",
    ]
    derived = f"ASK {{ <{PAPER}> iclr:hasAuthor {new} }}"
    for text, there in zip(steps, (True, True, False), strict=True):
        capfd.readouterr()
        apply(settings.store, text)
        assert "maintained from its change (delete and rederive)" in capfd.readouterr().err, text
        assert_as_if_built(settings)
        assert bool(open_read_only(settings.store).query(derived, prefixes=vocab.QUERY_PREFIXES)) is there


def test_dropping_or_clearing_a_graph_is_maintained_from_its_change(tiny_store: Settings, capfd) -> None:
    """A Graph Store PUT (DROP SILENT GRAPH then INSERT DATA) or DELETE (DROP GRAPH), CLEAR
    GRAPH and DELETE WHERE remove what they match as a change: the same closure as owlrl's, the
    dropped graph gone, and no recomputation of the whole store."""
    settings = tiny_store
    steps = [
        f"INSERT DATA {{ GRAPH <urn:g1> {{ {authorship(1)} {authorship(2, 'yang-song')} }} }}",
        f"DROP SILENT GRAPH <urn:g1> ;\nINSERT DATA {{ GRAPH <urn:g1> {{ {authorship(3)} }} }}",  # as a PUT
        f"INSERT DATA {{ GRAPH <urn:g2> {{ {authorship(3)} }} }}",
        "CLEAR GRAPH <urn:g1>",
        "DROP GRAPH <urn:g2>",  # as a DELETE
        f"INSERT DATA {{ GRAPH <urn:g3> {{ {authorship(4)} {authorship(5, 'yang-song')} }} }}",
        f"DELETE WHERE {{ ?a iclr:authorshipBy <{RES}person/yang-song> ; iclr:position 5 }}",
    ]
    for text in steps:
        capfd.readouterr()
        apply(settings.store, text)
        assert "maintained from its change (delete and rederive)" in capfd.readouterr().err, text
        assert_as_if_built(settings)
    store = open_read_only(settings.store)
    assert not store.contains_named_graph(NamedNode("urn:g2"))
    assert not any(store.quads_for_pattern(None, None, None, NamedNode("urn:g1")))


ON_THE_DEFAULT_GRAPH = [
    f"INSERT DATA {{ GRAPH <urn:g1> {{ {authorship(1)} {authorship(2, 'yang-song')} }} }}",
    "DELETE { ?a iclr:position ?n } INSERT { ?a iclr:position 7 } WHERE { ?a iclr:position ?n FILTER (?n < 3) }",
    f'INSERT {{ ?p iclr:name "Renamed" }} WHERE {{ <{RES}person/yang-song> iclr:name ?old . BIND (<{RES}person/yang-song> AS ?p) }}',
    f"DELETE {{ ?paper iclr:hasAuthorship ?a }} WHERE {{ ?paper iclr:hasAuthorship ?a . ?a iclr:authorshipBy <{RES}person/ben-poole> ; iclr:position 7 }}",
    "DELETE WHERE { ?a iclr:position 7 }",
]
WITH_USING_AND_GRAPH = [  # and ADD, COPY, MOVE of graphs
    f"INSERT DATA {{ GRAPH <urn:g1> {{ {authorship(1)} {authorship(2, 'yang-song')} }} GRAPH <urn:g2> {{ {authorship(3)} }} }}",
    "WITH <urn:g1> DELETE { ?a iclr:position ?n } INSERT { ?a iclr:position 9 } WHERE { ?a iclr:position ?n FILTER (?n < 2) }",
    "DELETE { GRAPH ?g { ?a iclr:authorshipBy ?who } } "
    f"INSERT {{ GRAPH ?g {{ ?a iclr:authorshipBy <{RES}person/ben-poole> }} }} "
    "WHERE { GRAPH ?g { ?a iclr:authorshipBy ?who ; iclr:position 2 } }",
    "INSERT { GRAPH <urn:g3> { ?a iclr:position ?n } } USING <urn:g2> WHERE { ?a iclr:position ?n }",
    'INSERT { ?p iclr:name "From g2"@en } USING NAMED <urn:g2> WHERE { GRAPH <urn:g2> { ?a iclr:authorshipBy ?p } }',
    "INSERT { GRAPH <urn:g4> { _:x iclr:authorshipBy ?p } } WHERE { GRAPH <urn:g1> { ?a iclr:authorshipBy ?p } }",
    "DELETE WHERE { GRAPH <urn:g3> { ?a ?p ?o } }",
    'WITH <urn:g2> DELETE { ?a iclr:position "03"^^xsd:integer } WHERE { ?a iclr:position 3 }',
    "ADD <urn:g1> TO <urn:g5>",
    "COPY GRAPH <urn:g2> TO GRAPH <urn:g5>",
    "MOVE <urn:g5> TO <urn:g6>",
    "MOVE SILENT <urn:g6> TO <urn:g6>",
]


@pytest.mark.parametrize(
    "steps", [ON_THE_DEFAULT_GRAPH, WITH_USING_AND_GRAPH], ids=["default-graph", "with-using-graph"]
)
def test_a_delete_insert_where_maintained_does_what_the_full_path_does(
    tiny_data, tmp_path, monkeypatch, capfd, steps
) -> None:
    """DELETE/INSERT ... WHERE is planned from its pattern's matches, before the change (on the
    default graph a CONSTRUCT of each template; with WITH, USING or GRAPH a SELECT filling the
    templates rdflib parsed); the store after it is the one the full path (run the update,
    recompute the closure) makes, quad for quad."""

    def quads_after(maintain: bool) -> set:
        settings = tiny_data().model_copy(update={"store": tmp_path / f"store-{maintain}"})
        build(settings)
        if not maintain:
            monkeypatch.setattr(maintained.plan, "data_operations", _never_maintained)
        for text in steps:
            capfd.readouterr()
            apply(settings.store, text)
            said = capfd.readouterr().err
            assert ("(delete and rederive)" in said) == maintain, (text, said)
        monkeypatch.undo()
        store = open_read_only(settings.store)  # the ontology's blank nodes differ from build to build
        return {
            (q.subject, q.predicate, q.object, q.graph_name)
            for q in store
            if not isinstance(q.subject, BlankNode) and not isinstance(q.object, BlankNode)
        }

    assert quads_after(maintain=True) == quads_after(maintain=False)


def _never_maintained(update: str, base: str | None = None) -> list:
    raise maintained.NotMaintained("the test takes the full path")


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
def test_an_update_journaled_before_the_writer_ends_is_acknowledged_once(tiny_store: Settings) -> None:
    """#69, 6: the journal is the acknowledgement point, and the writer goes on after it. A writer
    frozen right after journaling an update (SIGSTOP, as a slow publish would hold it) is killed at
    the time limit: the client is told the update was accepted (it is in the journal, and is
    published once), not "stopped after its time limit", so a retry does not apply it twice. An
    update that never reached the journal is refused, and the journal does not hold it."""
    import os
    import signal
    import threading

    from iclr_kg.errors import UpdateTimeout
    from iclr_kg.updates import Writer
    from iclr_kg.updates.journal import Journal

    settings = tiny_store
    web = Writer(0)
    options = {"base": None, "kind": "update", "reasoner": "fast"}
    journal = Journal(settings.store)
    try:
        web.apply(settings.store, f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(1)} }} }}", **options, timeout=120)
        stopped_after_journal = False
        for number in range(2, 12):  # until the stop lands between the journal and the answer
            text = f"INSERT DATA {{ GRAPH <urn:c> {{ {authorship(number)} }} }}"
            size, outcome = os.stat(journal.path).st_size, []
            pid = web._pid
            worker = threading.Thread(
                target=lambda t=text: outcome.append(web.apply(settings.store, t, **options, timeout=2)), daemon=True
            )
            worker.start()
            while worker.is_alive() and os.stat(journal.path).st_size == size:
                pass  # a tight loop: the stop must land within the append
            if worker.is_alive():
                os.kill(pid, signal.SIGSTOP)
                stopped_after_journal = True
            worker.join(60)
            assert outcome and outcome[0].update == text, "the journaled update was not acknowledged"
            if stopped_after_journal:
                break
        assert stopped_after_journal, "the writer answered before every stop"
        assert [e.update for e in journal.entries()].count(text) == 1
        with pytest.raises(UpdateTimeout, match="nothing was written"):
            web.apply(settings.store, "INSERT { ?s <urn:seen> 1 } WHERE { ?s ?p ?o }", **options, timeout=0.01)
        assert not any("urn:seen" in e.update for e in journal.entries())
        web.publish(settings.store, reasoner="fast", timeout=120)
        store = open_read_only(settings.store)
        assert len(list(store.quads_for_pattern(NamedNode(f"{RES}authorship/test-{number}"), None, None, None))) > 0
    finally:
        web.close()
