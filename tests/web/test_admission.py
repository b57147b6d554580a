"""One client cannot take the endpoint from the others: `iclr-kg serve` as shipped (gunicorn, two
web processes, four query workers each), one client sending runaway queries, another client on
another loopback address sending cheap ones.

Before, a client's queued requests did not count against its share and the share applied only
when no worker was idle: 16 runaway queries from one address took every worker, and a third
client's cheap queries waited until the runaways' time limit (9.1 s with stalled readers).
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


def ask(base: str, query: str, source: str, timeout: float = 30) -> tuple[int, float, dict[str, str], str]:
    """GET /sparql from the loopback address `source`: (status, seconds, headers, body)."""
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout, source_address=(source, 0))
    began = time.monotonic()
    try:
        connection.request("GET", "/sparql?" + urllib.parse.urlencode({"query": query, "timeout": "8"}))
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, time.monotonic() - began, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


def test_a_client_past_its_share_is_refused_at_once_and_others_are_served(default_server: str) -> None:
    outcomes: list[tuple[int, float, dict[str, str], str]] = []
    attackers = [
        threading.Thread(target=lambda: outcomes.append(ask(default_server, RUNAWAY, "127.0.0.1"))) for _ in range(16)
    ]
    for thread in attackers:
        thread.start()

    def refusals() -> list[tuple[int, float, dict[str, str], str]]:
        return [o for o in list(outcomes) if o[0] == 503 and "its share" in o[3]]

    eventually(refusals, "the runaways holding their share of workers (one of them refused)")
    victim = [ask(default_server, "ASK { ?s ?p ?o }", "127.0.0.2") for _ in range(5)]
    served_meanwhile = any(thread.is_alive() for thread in attackers)  # the runaways' 8 s limit not yet reached
    for thread in attackers:
        thread.join(timeout=60)
    assert [status for status, *_ in victim] == [200] * 5 and served_meanwhile
    refused = refusals()
    assert len(outcomes) == 16 and len(refused) >= 16 - 4, outcomes  # at most two per web process admitted
    assert all(headers.get("retry-after") for _, _, headers, _ in refused), refused
    # refused at once: every refusal came back before any runaway was stopped at its time limit
    assert outcomes[: len(refused)] == refused, outcomes
    stopped = [o for o in outcomes if o not in refused]
    assert all(status == 503 and "time limit" in body for status, _, _, body in stopped), stopped


CROSS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"


def test_admission_is_bounded_per_client(real_store, real_settings) -> None:
    from iclr_kg.errors import PoolBusy
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.pool import QueryPool
    from iclr_kg.store import current_generation

    generation = current_generation(real_settings.store)
    pool = QueryPool(2)
    slow = QueryRequest(
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", formats={"results": "json", "rdf": None}
    )
    started: list[object] = []
    try:
        threads = [threading.Thread(target=lambda: swallow(lambda: pool.start(generation, slow, 3, client="greedy")))]
        for thread in threads:
            thread.start()
        eventually(lambda: pool.idle != 2, "the greedy client's query running", 10)
        assert pool.shares.share == 1 and pool.idle == 1
        with pytest.raises(PoolBusy, match="share"):  # while a worker is idle too: the rest is the others'
            pool.start(generation, slow, 3, client="greedy")
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
