"""Query workers: what a request does to the process answering it. HEAD requests and clients
that never read give their worker back; a stream cut by the time limit is visibly broken; a
worker past its memory limit is stopped; dead, grown or idle workers are replaced or retired."""

from __future__ import annotations

import http.client
import http.server
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from iclr_kg.query.answering import QueryRequest
from iclr_kg.web import create_app
from testbed.helpers import eventually, get, q, swallow

BIG = "SELECT * WHERE { ?s ?p ?o } LIMIT 6000"  # well over one 64 KiB chunk


CROSS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"


def test_head_requests_release_their_query_workers(default_server: str) -> None:
    paths = [f"/sparql?{q(BIG, format='tsv')}", f"/?{q(BIG)}", "/queries/award-papers?format=csv"]
    for path in paths:
        for _ in range(10):  # more than the 8 workers of two web processes
            status, _ = get(default_server + path, method="HEAD")
            assert status == 200, path
    status, body = get(f"{default_server}/sparql?{q('ASK {}', format='json')}", timeout=10)
    assert status == 200 and b"true" in body


def test_head_on_exports_leaves_no_thread_behind(server: str) -> None:
    before = threading.active_count()
    for _ in range(40):
        get(f"{server}/data?default", method="HEAD")
        get(f"{server}/resource/paper/NzTU59SYbNq", method="HEAD", headers={"Accept": "text/turtle"})
    eventually(lambda: threading.active_count() <= before + 4, "the requests' threads ended")


def test_a_query_past_the_memory_limit_is_503_and_others_are_served(real_store, real_settings) -> None:
    app = create_app(real_settings.replace(query_workers=1, query_memory=1024, result_cache=0))
    client = app.test_client()
    try:
        query = "SELECT ?a ?o WHERE { ?a ?b ?c . ?d ?e ?o } ORDER BY ?o LIMIT 1"
        response = client.get("/sparql", query_string={"query": query, "format": "json", "timeout": "25"})
        assert response.status_code == 503 and b"memory" in response.data, response.data
        ok = client.get("/sparql", query_string={"query": "ASK { ?s ?p ?o }", "format": "json"})
        assert ok.status_code == 200
    finally:
        app.extensions["iclr_kg"].pool.close()


def test_a_client_that_never_reads_loses_its_worker_at_the_deadline(app, server: str) -> None:
    """Counted by running queries, not idle workers: idle ones retire after a minute of quiet
    (query_idle_timeout), which a long test session reaches."""
    pool = app.extensions["iclr_kg"].pool
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(f"GET /sparql?{q(CROSS, format='tsv', timeout='2')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        eventually(lambda: pool.running == 1, "the worker busy, blocked writing", 10)
        # killed at its deadline (2 s), the client still connected
        eventually(lambda: pool.running == 0, "the worker stopped at the query's deadline")
        # and the pool still answers: the killed worker's replacement is started after the query
        # leaves the running ones, which on a loaded machine takes a moment
        eventually(lambda: pool.idle >= 1, "a worker started in its place")


def test_a_stream_cut_by_the_time_limit_is_a_broken_transfer(default_server: str) -> None:
    url = f"{default_server}/sparql?{q(CROSS, format='csv', timeout='2')}"
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        with pytest.raises(http.client.IncompleteRead):
            while response.read(65536):
                pass


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
def test_a_worker_that_died_while_idle_is_replaced_not_used(real_store, real_settings) -> None:
    """Seen once in CI: a query sent to a worker that had died while idle failed with a 500
    (BrokenPipeError). Idle workers are checked when taken, and a failed send is a 503."""
    import os
    import signal

    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    pool = QueryPool(1, memory_mib=1024)
    try:
        (pid,) = pool.worker_pids()
        os.kill(pid, signal.SIGKILL)
        eventually(lambda: _exited(pid), "the worker dead")
        running = pool.start(current_generation(real_settings.store), QueryRequest("ASK {}", row_limit=1), 10)
        assert running.rows == {"boolean": True}
        assert pid not in pool.worker_pids()
    finally:
        pool.close()


def _exited(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie, or gone): not only on its way out, when its
    memory (and /proc's cmdline) is already released but a parent's waitpid still finds it
    running (seen in the quick suite: the worker then died after it was taken)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


def test_a_worker_capped_at_512_mib_answers_queries(real_store, real_settings) -> None:
    """The cap is on address space (RLIMIT_AS), and glibc reserved 64 MiB of it for each thread's
    malloc arena: a worker that had run one query held ~945 MiB for ~40 MiB resident, and under a
    tight cap it could not start a thread and died ("Resource temporarily unavailable")."""
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    generation = current_generation(real_settings.store)
    pool = QueryPool(1, memory_mib=512)
    try:
        for query in ("ASK {}", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "SELECT ?s WHERE { ?s a ?c } LIMIT 5"):
            answer = pool.start(generation, QueryRequest(query, formats={"results": "json", "rdf": None}), 20)
            assert answer.prefetched is not None and answer.prefetched.startswith(b"{")
    finally:
        pool.close()


def test_a_worker_grown_past_the_recycling_size_is_replaced_after_its_query(
    real_store, real_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python and RocksDB keep what a large query grew to: after each query the worker's resident
    size is read (from its /proc file, kept open), and a worker over the line is replaced."""
    import os

    from iclr_kg.query import pool as pool_module
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    generation = current_generation(real_settings.store)
    pool = QueryPool(1, memory_mib=1024)
    try:
        ask = QueryRequest("ASK {}", formats={"results": "json", "rdf": None})
        pool.start(generation, ask, 20)
        (pid,) = pool.worker_pids()
        worker = pool._idle.queue[0]
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        assert abs(worker.rss() - pages * os.sysconf("SC_PAGE_SIZE")) < 16 * 2**20 and worker.rss() > 2**20
        pool.start(generation, ask, 20)
        assert pool.worker_pids() == {pid}  # under the line: kept
        monkeypatch.setattr(pool_module, "RECYCLE_RSS", 2**20)
        pool.memory_mib = 1  # the line is the larger of RECYCLE_RSS and a quarter of the cap
        pool.start(generation, ask, 20)
        (replacement,) = pool.worker_pids()
        assert replacement != pid and worker._statm is None  # the old worker's file was closed
    finally:
        pool.close()


def test_the_worker_used_last_answers_next_and_the_others_retire(
    real_store, real_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One client asking one query after another gets the same worker each time (its caches are
    warm); the workers it left idle are the ones that retire."""
    from iclr_kg.query import pool as pool_module
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    monkeypatch.setattr(pool_module, "RETIRE_INTERVAL", 0.2)
    generation = current_generation(real_settings.store)
    pool = QueryPool(3, memory_mib=1024, retire_after=1.0)
    try:
        ask = QueryRequest("ASK {}", formats={"results": "json", "rdf": None})
        used = set()

        def asked_again() -> bool:  # queries keep one worker busy meanwhile
            used.add(pool.start(generation, ask, 10).worker.process.pid)
            return pool.idle <= 1

        eventually(asked_again, "the workers not used retired", 20)
        assert len(used) == 1 and pool.worker_pids() == used
    finally:
        pool.close()


def test_idle_workers_stop_but_one_and_start_again_when_queries_need_them(
    real_store, real_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory at rest: a web process keeps one query worker once the others sat idle for
    ICLR_KG_QUERY_WORKER_IDLE seconds; concurrent queries start them again, up to the size."""
    import os

    from iclr_kg.query import pool as pool_module
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    monkeypatch.setattr(pool_module, "RETIRE_INTERVAL", 0.2)
    generation = current_generation(real_settings.store)
    pool = QueryPool(3, memory_mib=1024, retire_after=0.5)
    try:
        started = pool.worker_pids()
        assert len(started) == 3
        eventually(lambda: pool.idle == 1, "the idle workers retired to one", 20)
        (kept,) = pool.worker_pids()
        eventually(
            lambda: [pid for pid in started - {kept} if os.path.exists(f"/proc/{pid}")] == [],
            "the retired workers stopped, not left zombies",
        )
        slow = QueryRequest(
            "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", formats={"results": "json", "rdf": None}
        )
        busy = threading.Thread(target=lambda: swallow(lambda: pool.start(generation, slow, 2)))
        busy.start()
        eventually(lambda: pool.idle == 0, "the one kept worker running the slow query")
        answer = pool.start(generation, QueryRequest("ASK {}", formats={"results": "json", "rdf": None}), 10)
        assert answer.prefetched is not None and b"true" in answer.prefetched
        assert answer.worker.process.pid != kept  # a worker started for it
        busy.join()
        # the slow one's worker was replaced at its time limit; then the idle ones retire to one
        # again (how many are alive right after the join races with that: checked when settled)
        assert kept not in pool.worker_pids()
        eventually(lambda: pool.idle == 1 and len(pool.worker_pids()) == 1, "the idle workers retired to one", 40)
    finally:
        pool.close()


def test_health_goes_through_a_query_worker(real_store, real_settings) -> None:
    app = create_app(real_settings.replace(query_workers=1))
    client = app.test_client()
    try:
        assert client.get("/health").get_json()["status"] == "ok"
        pool = app.extensions["iclr_kg"].pool
        held = pool.start(
            app.extensions["iclr_kg"].generation_key(),
            QueryRequest(CROSS, formats={"results": "tsv", "rdf": None}),
            60,
        )
        response = client.get("/health")
        assert response.status_code == 503 and response.get_json()["status"] == "unavailable"
        held.abandon()
        assert client.get("/health").status_code == 200
    finally:
        app.extensions["iclr_kg"].pool.close()


@pytest.mark.slow
def test_each_web_process_starts_its_query_workers_as_it_starts(real_store, real_settings) -> None:
    """The first page that lints a query or counts in a worker waited 1-2 s for the pool's
    interpreters to start: each web process now starts them as it starts, before any request
    reaches it (`AppState.start_workers`). The server's readiness check reached one process."""
    from testbed.helpers import query_workers_started, serving

    with serving(real_settings.store) as (_, process):
        assert len(query_workers_started(process, 1)) >= 2
