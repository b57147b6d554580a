"""Regressions from the adversarial review of the public endpoint (hardening, round two).

One test per defect, each against the real store and, where the defect lived in the server, a
real server on 127.0.0.1 (`default_server` is `iclr-kg serve` as shipped: gunicorn).
"""

from __future__ import annotations

import gc
import http.client
import http.server
import socket
import subprocess
import threading
import time
import tracemalloc
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from iclr_kg.web import create_app

from ..helpers import CLI

BIG = "SELECT * WHERE { ?s ?p ?o } LIMIT 6000"  # well over one 64 KiB chunk
CROSS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"


def get(url: str, timeout: float = 15, method: str = "GET", headers: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def q(query: str, **params: str) -> str:
    return urllib.parse.urlencode({"query": query, **params})


# --- 1. HEAD requests must not keep query workers or threads ---------------------------------


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
    deadline = time.monotonic() + 5
    while threading.active_count() > before + 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert threading.active_count() <= before + 4


# --- 2. SERVICE and LOAD reach only allow-listed hosts -----------------------------------------


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
    done = subprocess.run(
        [CLI, "query", "--store", str(real_settings.store), query],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "escapes" in done.stderr and "Traceback" not in done.stderr
    assert hits == []


def test_load_on_update_is_refused_unless_allow_listed(tiny_app, trap) -> None:
    url, hits = trap
    settings, client = tiny_app(update_token="secret")
    auth = {"Authorization": "Bearer secret"}
    for update in (
        f"LOAD <{url}>",
        f"LOAD SILENT <{url}> INTO GRAPH <urn:g>",
        f"LOAD#c\n<{url}>",
        f"INSERT {{ ?s ?p ?o }} WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    ):
        response = client.post("/update", data={"update": update}, headers=auth)
        assert response.status_code == 400 and b"not allowed" in response.data, (update, response.data)
    assert hits == []


# --- 3. A memory bound per query worker --------------------------------------------------------


def test_a_query_past_the_memory_limit_is_503_and_others_are_served(real_settings) -> None:
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


# --- 4. No super-linear regular expression on user input in the web process -------------------


def test_update_hint_is_linear_on_hostile_input(client) -> None:
    from iclr_kg.query.querytext import update_keyword

    hostile = "PREFIX " + "<" * 261_993
    started = time.monotonic()
    assert update_keyword(hostile) is None
    assert time.monotonic() - started < 1.0
    response = client.post("/sparql", data=hostile.encode(), content_type="application/sparql-query")
    assert response.status_code == 400


@pytest.mark.parametrize("prologue", ["# a comment\n", "\ufeff", "PREFIX x: <http://x/>\n# c\nBASE <http://b/>\n"])
def test_update_hint_sees_past_comments_and_bom(client, prologue: str) -> None:
    response = client.post("/sparql", data={"query": prologue + "INSERT DATA { <a:b> <a:b> <a:b> }"})
    assert response.status_code == 400 and b"/update" in response.data


# --- 5. Bodies over the limit are 413 whatever the transfer encoding ---------------------------


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


# --- 6. Deadlines hold while writing to a client that does not read; admission is bounded -------


def test_a_client_that_never_reads_loses_its_worker_at_the_deadline(app, server: str) -> None:
    pool = app.extensions["iclr_kg"].pool
    workers = app.extensions["iclr_kg"].settings.query_workers
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(f"GET /sparql?{q(CROSS, format='tsv', timeout='2')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        time.sleep(1)
        assert pool.idle < workers  # the worker is busy, blocked writing
        deadline = time.monotonic() + 8
        while pool.idle < workers and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.idle == workers  # killed at its deadline and replaced, client still connected


def test_slowloris_neither_starves_health_nor_keeps_its_sockets(default_server: str) -> None:
    host, port = default_server.removeprefix("http://").split(":")
    trickling = [socket.create_connection((host, int(port))) for _ in range(200)]  # 25x the threads of both processes
    try:
        for sock in trickling:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        for _ in range(3):
            for sock in trickling:
                sock.sendall(b"X-Slow: 1\r\n")  # never the blank line that ends the headers
            assert get(default_server + "/health", timeout=5)[0] == 200
            time.sleep(0.5)
        time.sleep(max(0.0, started + 4 + 2 * 2 + 1 - time.monotonic()))  # request timeout (4 s) + two sweeps
        closed = 0
        for sock in trickling:
            sock.settimeout(2)
            try:
                closed += sock.recv(1) == b""
            except ConnectionResetError:
                closed += 1
        assert closed == len(trickling)  # each cut off at ICLR_KG_REQUEST_TIMEOUT, trickle or not
    finally:
        for sock in trickling:
            sock.close()


def test_admission_is_bounded_per_client(real_store, real_settings) -> None:
    from iclr_kg.errors import PoolBusy
    from iclr_kg.query.pool import QueryPool, QueryRequest
    from iclr_kg.store import current_generation

    generation = current_generation(real_settings.store)
    pool = QueryPool(2)
    slow = QueryRequest(
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", formats={"results": "json", "rdf": None}
    )
    started: list[object] = []
    try:
        threads = [threading.Thread(target=lambda: _swallow(lambda: pool.start(generation, slow, 3, client="greedy")))]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while pool.idle == 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.share == 1 and pool.idle == 1
        began = time.monotonic()
        with pytest.raises(PoolBusy, match="share"):  # while a worker is idle too: the rest is the others'
            pool.start(generation, slow, 3, client="greedy")
        assert time.monotonic() - began < 1  # refused at once, not after waiting
        fair = pool.start(
            generation, QueryRequest("ASK {}", formats={"results": "json", "rdf": None}), 10, client="other"
        )
        started.append(fair)
        assert time.monotonic() - began < 2  # served at once: the greedy client cannot hold every worker
        assert fair.prefetched is not None and b"true" in fair.prefetched
        for thread in threads:
            thread.join()
    finally:
        pool.close()


def _swallow(call) -> None:  # type: ignore[no-untyped-def]
    try:
        call()
    except Exception:  # noqa: BLE001, S110 - the slow queries are meant to time out
        pass


# --- 7. A stream that fails after its status is visibly broken ---------------------------------


def test_a_stream_cut_by_the_time_limit_is_a_broken_transfer(default_server: str) -> None:
    url = f"{default_server}/sparql?{q(CROSS, format='csv', timeout='2')}"
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        with pytest.raises(http.client.IncompleteRead):
            while response.read(65536):
                pass


# --- 9. Deep nesting is refused before the parser recurses -------------------------------------


def test_deep_nesting_is_a_400_not_a_crash(client, real_settings) -> None:
    deep = "SELECT * WHERE " + "{" * 10_000 + " ?s ?p ?o " + "}" * 10_000
    response = client.post("/sparql", data=deep.encode(), content_type="application/sparql-query")
    assert response.status_code == 400 and b"nests" in response.data
    assert client.get("/sparql", query_string={"query": "ASK {}", "format": "json"}).status_code == 200
    done = subprocess.run(
        [CLI, "query", "--store", str(real_settings.store), deep],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "nests" in done.stderr


def test_deep_nesting_on_update_is_a_400(tiny_app) -> None:
    settings, client = tiny_app(update_token="secret")
    deep = "INSERT { <urn:a> <urn:b> 1 } WHERE " + "{" * 10_000 + "}" * 10_000
    response = client.post("/update", data={"update": deep}, headers={"Authorization": "Bearer secret"})
    assert response.status_code == 400 and b"nests" in response.data


def test_nesting_depth_ignores_brackets_in_strings_and_comments() -> None:
    from iclr_kg.query.querytext import nesting_depth

    assert nesting_depth('SELECT * { ?s ?p "{{{{" # {{{{\n FILTER((1)) }') == 3
    assert nesting_depth("SELECT * { ?s ?p '''{{{'''. { ?a ?b ?c } }") == 2


def test_may_mention_rules_out_only_ascii_text_without_the_words() -> None:
    from iclr_kg.query.querytext import may_mention

    assert not may_mention("SELECT * { ?s ?p ?o }", ("service", "now"))
    assert may_mention("SELECT * { SeRvIcE <urn:x> {} }", ("service",))
    assert may_mention("SELECT * { ſervice <urn:x> {} }", ("service",))  # not ASCII: a fold may match
    assert may_mention('SELECT * { ?s ?p "机构" }', ("service",))


def test_check_nesting_counts_depth_not_brackets() -> None:
    """Text with few brackets skips the scan; with many, the depth decides, not their number."""
    from iclr_kg.errors import QueryError
    from iclr_kg.query.querytext import MAX_NESTING, check_nesting

    check_nesting("SELECT * WHERE " + "{ ?s ?p ?o } UNION " * 500 + "{}")  # 501 brackets, depth 1
    check_nesting("SELECT * WHERE " + "{" * MAX_NESTING + "}" * MAX_NESTING)
    with pytest.raises(QueryError, match="nests brackets 201 deep"):
        check_nesting("SELECT * WHERE " + "{" * (MAX_NESTING + 1) + "}" * (MAX_NESTING + 1))
    with pytest.raises(QueryError, match="nests brackets 201 deep"):
        check_nesting('SELECT * { "' + "{" * 300 + '" ' + "(" * (MAX_NESTING) + ")" * MAX_NESTING + "}")


# --- 10. The result cache counts what it holds ---------------------------------------------------


def test_result_cache_keys_do_not_grow_memory() -> None:
    from iclr_kg.web.cache import ResultCache

    cache = ResultCache(64 * 2**20)
    gc.collect()
    tracemalloc.start()
    try:
        for i in range(200):
            key = ("generation", f"SELECT * {{}} # {i} " + "x" * 250_000)
            cache.put(key, b"small result", "application/json")
            del key
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 2 * 2**20  # 200 keys of 250 KB would hold 50 MB
    assert cache.get(("generation", "SELECT * {} # 7 " + "x" * 250_000)) is not None


# --- 11. Invalid IRIs are 400 --------------------------------------------------------------------


@pytest.mark.parametrize("value", ["a:%00", "a:%7F", "a:b%23c%23d", "a:\x00"])
def test_invalid_graph_iris_are_400(client, value: str) -> None:
    for name in ("default-graph-uri", "named-graph-uri"):
        response = client.get("/sparql", query_string={"query": "ASK {}", name: urllib.parse.unquote(value)})
        assert response.status_code == 400, (name, value, response.data)
    assert client.get("/data", query_string={"graph": urllib.parse.unquote(value)}).status_code == 400


# --- 13. /health answers ok only when a query can be answered ----------------------------------


def test_health_goes_through_a_query_worker(real_settings) -> None:
    app = create_app(real_settings.replace(query_workers=1))
    client = app.test_client()
    try:
        assert client.get("/health").get_json()["status"] == "ok"
        pool = app.extensions["iclr_kg"].pool
        held = pool.start(
            app.extensions["iclr_kg"].generation_key(),
            __import__("iclr_kg.query.pool", fromlist=["QueryRequest"]).QueryRequest(
                CROSS, formats={"results": "tsv", "rdf": None}
            ),
            60,
        )
        response = client.get("/health")
        assert response.status_code == 503 and response.get_json()["status"] == "unavailable"
        held.abandon()
        assert client.get("/health").status_code == 200
    finally:
        app.extensions["iclr_kg"].pool.close()


# --- 15. Small ones ------------------------------------------------------------------------------


def test_javascript_iris_in_results_are_not_links(client) -> None:
    page = client.get("/", query_string={"query": "SELECT ?x WHERE { BIND(<javascript:alert(1)> AS ?x) }"})
    assert page.status_code == 200
    assert b"javascript:alert(1)" in page.data and b'href="javascript:' not in page.data


def test_invalid_utf8_escapes_in_a_query_string_are_400(client) -> None:
    response = client.get("/sparql?query=SELECT%20(%22%FF%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert response.status_code == 400 and b"UTF-8" in response.data
    form = client.post(
        "/sparql",
        data=b"query=SELECT%20(%22%FF%22%20AS%20%3Fx)%20%7B%7D",
        content_type="application/x-www-form-urlencoded",
    )
    assert form.status_code == 400
    lower = client.get("/sparql?query=SELECT%20(%22%c3%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert lower.status_code == 400 and b"UTF-8" in lower.data  # a lone lead byte, escaped in lower case
    chinese = client.get("/sparql?query=SELECT%20(%22%e6%9c%ba%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert chinese.status_code == 200 and "机" in chinese.get_data(as_text=True)
    plain = client.get("/sparql?query=SELECT%20(%22%7e%22%20AS%20%3Fx)%20%7B%7D&format=json")
    assert plain.status_code == 200 and "~" in plain.get_data(as_text=True)


def test_a_worker_that_died_while_idle_is_replaced_not_used(real_store, real_settings) -> None:
    """Seen once in CI: a query sent to a worker that had died while idle failed with a 500
    (BrokenPipeError). Idle workers are checked when taken, and a failed send is a 503."""
    import os
    import signal

    from iclr_kg.query.pool import QueryPool, QueryRequest
    from iclr_kg.store import current_generation

    pool = QueryPool(1, memory_mib=1024)
    try:
        (pid,) = pool.worker_pids()
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
        running = pool.start(current_generation(real_settings.store), QueryRequest("ASK {}", row_limit=1), 10)
        assert running.rows == {"boolean": True}
        assert pid not in pool.worker_pids()
    finally:
        pool.close()


def test_a_worker_capped_at_512_mib_answers_queries(real_store, real_settings) -> None:
    """The cap is on address space (RLIMIT_AS), and glibc reserved 64 MiB of it for each thread's
    malloc arena: a worker that had run one query held ~945 MiB for ~40 MiB resident, and under a
    tight cap it could not start a thread and died ("Resource temporarily unavailable")."""
    from iclr_kg.query.pool import QueryPool, QueryRequest
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
    from iclr_kg.query.pool import QueryPool, QueryRequest
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
    from iclr_kg.query.pool import QueryPool, QueryRequest
    from iclr_kg.store import current_generation

    monkeypatch.setattr(pool_module, "RETIRE_INTERVAL", 0.2)
    generation = current_generation(real_settings.store)
    pool = QueryPool(3, memory_mib=1024, retire_after=1.0)
    try:
        ask = QueryRequest("ASK {}", formats={"results": "json", "rdf": None})
        used = set()
        deadline = time.monotonic() + 20
        while pool.idle > 1 and time.monotonic() < deadline:  # queries keep one worker busy meanwhile
            running = pool.start(generation, ask, 10)
            used.add(running.worker.process.pid)
            time.sleep(0.05)
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
    from iclr_kg.query.pool import QueryPool, QueryRequest
    from iclr_kg.store import current_generation

    monkeypatch.setattr(pool_module, "RETIRE_INTERVAL", 0.2)
    generation = current_generation(real_settings.store)
    pool = QueryPool(3, memory_mib=1024, retire_after=0.5)
    try:
        started = pool.worker_pids()
        assert len(started) == 3
        deadline = time.monotonic() + 20
        while pool.idle > 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pool.idle == 1
        (kept,) = pool.worker_pids()
        time.sleep(0.5)
        assert [pid for pid in started - {kept} if os.path.exists(f"/proc/{pid}")] == []  # stopped, not zombies
        slow = QueryRequest(
            "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", formats={"results": "json", "rdf": None}
        )
        busy = threading.Thread(target=lambda: _swallow(lambda: pool.start(generation, slow, 2)))
        busy.start()
        while pool.idle and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.idle == 0  # the one kept worker runs the slow query
        began = time.monotonic()
        answer = pool.start(generation, QueryRequest("ASK {}", formats={"results": "json", "rdf": None}), 10)
        assert answer.prefetched is not None and b"true" in answer.prefetched  # a worker started for it
        assert time.monotonic() - began < 5
        busy.join()
        assert len(pool.worker_pids()) == 2  # the slow one's worker replaced at its time limit, both idle
    finally:
        pool.close()
