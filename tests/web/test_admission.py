"""One client cannot take the endpoint from the others: `iclr-kg serve` as shipped (gunicorn, two
web processes, four query workers each), one client sending runaway queries, another client on
another loopback address sending cheap ones.

Before, a client's queued requests did not count against its share and the share applied only
when no worker was idle: 16 runaway queries from one address took every worker, and a third
client's cheap queries waited until the runaways' time limit (9.1 s with stalled readers).

Issue #69 item 11: then a client's third query at once was refused (503, "its share"), where a
notebook or a dashboard sends a few: now up to five wait briefly for the client's own, a
client's excess is its own (429), and 503 is kept for an endpoint out of capacity.
"""

from __future__ import annotations

import http.client
import http.server
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from testbed.helpers import eventually, swallow

RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"


def ask(
    base: str, query: str, source: str, timeout: float = 30, limit: float = 8
) -> tuple[int, float, dict[str, str], str]:
    """GET /sparql from the loopback address `source`, under a time limit of `limit` seconds:
    (status, seconds, headers, body)."""
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout, source_address=(source, 0))
    began = time.monotonic()
    try:
        connection.request("GET", "/sparql?" + urllib.parse.urlencode({"query": query, "timeout": limit}))
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, time.monotonic() - began, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


# A second or so of counting on the real graph: five of them at once overlap (`# n`: none is a
# repeat that the result cache answers)
PANEL = (
    "SELECT (COUNT(*) AS ?n) WHERE {{ {{ SELECT ?a WHERE {{ ?a ?b ?c }} LIMIT 3000 }}"
    " {{ SELECT ?d WHERE {{ ?d ?e ?f }} LIMIT 1000 }} }} # {n}"
)


def test_a_client_sending_five_queries_at_once_gets_all_answered(default_server: str) -> None:
    """Five at once over two web processes: one of them had three, and refused the third (503)."""
    outcomes: list[tuple[int, float, dict[str, str], str]] = []
    panels = [
        threading.Thread(
            target=lambda n=n: outcomes.append(ask(default_server, PANEL.format(n=n), "127.0.0.4", 60, 30))
        )
        for n in range(5)
    ]
    for thread in panels:
        thread.start()
    for thread in panels:
        thread.join(timeout=60)
    assert [status for status, *_ in outcomes] == [200] * 5, outcomes
    assert all('"3000000"' in body for *_, body in outcomes), outcomes


def test_a_client_past_its_share_is_refused_429_and_others_are_served(default_server: str) -> None:
    outcomes: list[tuple[int, float, dict[str, str], str]] = []
    attackers = [
        threading.Thread(target=lambda: outcomes.append(ask(default_server, RUNAWAY, "127.0.0.1"))) for _ in range(16)
    ]
    for thread in attackers:
        thread.start()

    def refusals() -> list[tuple[int, float, dict[str, str], str]]:
        """Refused at once: before any runaway was stopped at its 8 s limit."""
        return [o for o in list(outcomes) if o[0] == 429 and "its share" in o[3] and o[1] < 6]

    eventually(refusals, "the runaways holding their share of workers (one of them refused)")
    victim = [ask(default_server, "ASK { ?s ?p ?o }", "127.0.0.2") for _ in range(5)]
    served_meanwhile = any(thread.is_alive() for thread in attackers)  # the runaways' 8 s limit not yet reached
    for thread in attackers:
        thread.join(timeout=60)
    assert [status for status, *_ in victim] == [200] * 5 and served_meanwhile
    refused = refusals()
    assert len(outcomes) == 16 and len(refused) >= 16 - 10, outcomes  # at most five per web process admitted
    assert all(headers.get("retry-after") for _, _, headers, _ in refused), refused
    assert outcomes[: len(refused)] == refused, outcomes
    # the rest ran to their limit (503), or waited for the client's own the whole time (429)
    stopped = [o for o in outcomes if o not in refused]
    assert all(
        (status, "time limit" in body) == (503, True) or (status, "its share" in body) == (429, True)
        for status, _, _, body in stopped
    ), stopped


CROSS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"


def test_admission_is_bounded_per_client(real_store, real_settings) -> None:
    from iclr_kg.errors import TooManyRequests
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    generation = current_generation(real_settings.store)
    pool = QueryPool(2, client_queries=1)
    slow = QueryRequest(
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", formats={"results": "json", "rdf": None}
    )
    started: list[object] = []
    try:
        threads = [threading.Thread(target=lambda: swallow(lambda: pool.start(generation, slow, 10, client="greedy")))]
        for thread in threads:
            thread.start()
        eventually(lambda: pool.idle != 2, "the greedy client's query running", 10)
        assert pool.shares.share == 1 and pool.idle == 1
        with pytest.raises(TooManyRequests, match="its share") as refused:  # a worker idle too: it is the others'
            pool.start(generation, slow, 3, client="greedy")
        assert refused.value.http_status == 429 and refused.value.retry_after
        refused_meanwhile = threads[0].is_alive()  # at once, not after its query ended
        fair = pool.start(
            generation, QueryRequest("ASK {}", formats={"results": "json", "rdf": None}), 10, client="other"
        )
        started.append(fair)
        served_meanwhile = threads[0].is_alive()  # the greedy client cannot hold every worker
        assert refused_meanwhile and served_meanwhile and fair.prefetched is not None and b"true" in fair.prefetched
        for thread in threads:
            thread.join()
    finally:
        pool.close()


def test_an_endpoint_out_of_capacity_is_still_503(real_store, real_settings) -> None:
    """One worker, held; four other clients wait for it (4 x the workers): a sixth client, whose
    share is untouched, is refused 503, the endpoint's own "busy", at once."""
    from iclr_kg.errors import PoolBusy
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    generation = current_generation(real_settings.store)
    pool = QueryPool(1)
    runaway = QueryRequest(RUNAWAY, formats={"results": "json", "rdf": None})
    try:
        holders = [
            threading.Thread(target=lambda n=n: swallow(lambda: pool.start(generation, runaway, 8, client=f"c{n}")))
            for n in range(5)
        ]
        for thread in holders:
            thread.start()
        eventually(lambda: pool._waiting == 4 and pool.running == 1, "one query running, four waiting", 6)
        began = time.monotonic()
        with pytest.raises(PoolBusy, match="busy") as refused:
            pool.start(generation, QueryRequest("ASK {}", formats={"results": "json"}), 4, client="c5")
        assert refused.value.http_status == 503 and refused.value.retry_after and time.monotonic() - began < 2
        for thread in holders:
            thread.join()
    finally:
        pool.close()


def test_a_client_with_too_many_bodies_arriving_is_refused_429() -> None:
    """A client's own excess of request bodies arriving at once is 429 too (it was 503, "busy")."""
    from iclr_kg.web.bodylimit import PER_CLIENT, BodyLimit

    arrive = threading.Event()

    class Trickle:
        def read(self, size: int) -> bytes:
            arrive.wait(10)
            return b""

    limit = BodyLimit(lambda environ, start_response: [b"ok"], 1024)

    def post(client: str) -> tuple[str, dict[str, str]]:
        seen: dict = {}
        environ = {"REQUEST_METHOD": "POST", "CONTENT_LENGTH": "10", "REMOTE_ADDR": client, "wsgi.input": Trickle()}
        b"".join(limit(environ, lambda status, headers, exc=None: seen.update(status=status, headers=dict(headers))))
        return seen.get("status", "200 OK"), seen.get("headers", {})

    arriving = [threading.Thread(target=post, args=("10.0.0.1",)) for _ in range(PER_CLIENT)]
    for thread in arriving:
        thread.start()
    eventually(lambda: limit._arriving.get("10.0.0.1") == PER_CLIENT, "the client's bodies arriving")
    status, headers = post("10.0.0.1")
    assert status.startswith("429 ") and headers.get("Retry-After"), (status, headers)
    arrive.set()
    for thread in arriving:
        thread.join()
