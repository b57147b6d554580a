"""Queries evaluated in the web process (query/local.py): answered without a hop, still stopped
at their time limit, and a process holding a query it cannot stop retires and is replaced while
the other web process answers."""

from __future__ import annotations

import contextlib
import json
import os
import threading

import psutil
import pytest

from iclr_kg.errors import QueryMemoryExceeded, QueryTimeout, TooManyRequests
from iclr_kg.query.answering import QueryRequest
from iclr_kg.query.local import LocalLane
from iclr_kg.store import open_read_only
from testbed.helpers import eventually, get, q, serving, web_processes

RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
# The lanes below run in this test process, where nothing can stop a query either: their
# runaway counts 41 million rows (3 s here) and then ends by itself.
VALUES = " ".join(f"VALUES ?{v} {{ {' '.join(str(i) for i in range(80))} }}" for v in "abcd")
BOUNDED = f"SELECT (COUNT(*) AS ?n) WHERE {{ {VALUES} }}"
JSON = {"results": "json", "rdf": "turtle"}


@pytest.fixture
def lane(real_store, real_settings):
    """A lane over the real store whose `retire` only records why it was called."""
    store = open_read_only(real_settings.store)
    retired: list[tuple[str, bool]] = []
    built = LocalLane(lambda: store, lambda reason, at_once: retired.append((reason, at_once)), threads=2, share=1)
    built.retired = retired  # type: ignore[attr-defined]
    return built


def test_a_query_is_answered_on_the_lane(lane) -> None:
    running = lane.start(QueryRequest("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", formats=JSON), 10, client="a")
    rows = json.loads(running.prefetched)["results"]["bindings"]
    assert running.kind == "results" and int(rows[0]["n"]["value"]) > 1000
    assert lane.retired == [] and lane.in_flight() == 0


def test_a_large_result_streams_from_the_lane(lane) -> None:
    running = lane.start(QueryRequest("SELECT * WHERE { ?s ?p ?o }", formats={"results": "tsv"}), 10, client="a")
    body = b"".join(running.body("tsv"))
    assert running.prefetched is None and body.count(b"\n") > 5000  # more than one chunk, streamed
    assert lane.in_flight() == 0


def test_a_runaway_is_answered_at_its_limit_and_the_process_retires(lane) -> None:
    with pytest.raises(QueryTimeout, match="time limit of 1 s"):  # answered by its limit, the query still running
        lane.start(QueryRequest(BOUNDED, formats=JSON), 1, client="a")
    eventually(lambda: lane.retired, "the process asked to retire", 5)
    assert "time limit" in lane.retired[0][0] and lane.retired[0][1] is False


def test_a_client_past_its_share_waits_for_its_own_past_its_queries_429_and_others_are_served(
    real_store, real_settings
) -> None:
    """Share 1, two queries a client: its second waits for its first (stopped at 1 s) and is
    answered; its third is refused at once (429); another client is served meanwhile."""
    store = open_read_only(real_settings.store)
    lane = LocalLane(lambda: store, lambda reason, at_once: None, threads=3, share=1, client_queries=2)
    held = threading.Thread(target=lambda: pytest.raises(QueryTimeout, lane.start, QueryRequest(BOUNDED), 1, "a"))
    held.start()
    eventually(lambda: lane.in_flight() == 1, "client a's query running")
    waited: list[object] = []
    second = threading.Thread(target=lambda: waited.append(lane.start(QueryRequest("ASK {}", formats=JSON), 5, "a")))
    second.start()
    eventually(lambda: lane.shares._admitted.get("a") == 2, "client a's second query waiting")
    with pytest.raises(TooManyRequests, match="its share") as refused:
        lane.start(QueryRequest("ASK {}", formats=JSON), 5, client="a")
    assert refused.value.http_status == 429 and refused.value.retry_after
    other = lane.start(QueryRequest("ASK { ?s ?p ?o }", formats=JSON), 5, client="b")
    assert b"true" in other.prefetched and not waited  # b at once, a's second still waiting for a's first
    held.join()
    second.join(timeout=10)
    assert len(waited) == 1 and b"true" in waited[0].prefetched  # type: ignore[attr-defined]


def test_memory_past_the_limit_fails_the_queries_and_retires_at_once(real_store, real_settings) -> None:
    """The lane watches the whole process (nothing can attribute memory to one query): while a
    query runs, this process grows by 64 MiB of real, written memory, past the lane's 16 MiB."""
    store = open_read_only(real_settings.store)
    retired: list[tuple[str, bool]] = []
    lane = LocalLane(lambda: store, lambda reason, at_once: retired.append((reason, at_once)), 2, 1, memory_mib=16)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            lane.start(QueryRequest(BOUNDED, formats=JSON), 20, client="a")
        except BaseException as exc:  # noqa: BLE001 - looked at below
            outcome.append(exc)

    query = threading.Thread(target=run)
    query.start()
    eventually(lambda: lane.in_flight() == 1, "the query running")
    ballast = b"x" * (64 * 2**20)
    query.join(timeout=10)
    del ballast
    assert outcome and isinstance(outcome[0], QueryMemoryExceeded), outcome
    assert retired and retired[0][1] is True and "memory" in retired[0][0]


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
def test_the_served_endpoint_replaces_a_process_that_held_a_runaway(real_store, real_settings) -> None:
    with serving(real_settings.store, {"ICLR_KG_QUERY_TIMEOUT": "2"}) as (base, process):
        before = web_processes(process)
        outcome: list[tuple[int, bytes]] = []
        runaway = threading.Thread(target=lambda: outcome.append(get(f"{base}/sparql?{q(RUNAWAY)}", timeout=30)))
        runaway.start()
        answered = []
        while runaway.is_alive():
            answered.append(get(f"{base}/sparql?{q('ASK { ?s ?p ?o }', format='json')}", timeout=10)[0])
        assert outcome[0][0] == 503 and b"time limit" in outcome[0][1]
        assert answered and set(answered) == {200}  # the other process, and this one's other threads
        eventually(
            lambda: web_processes(process) != before and len(web_processes(process)) == 2,
            "a fresh web process in place of the one that held the runaway",
            20,
        )
        after = web_processes(process)
        assert len(after) == 2 and after != before  # one process retired, a fresh one took its place
        for _ in range(10):
            assert get(f"{base}/sparql?{q('ASK { ?s ?p ?o }', format='json')}", timeout=10)[0] == 200
    assert "retires: a query ran past its time limit" in process.output  # type: ignore[attr-defined]


@pytest.mark.slow  # starts gunicorn or kills a process on purpose
def test_each_web_process_keeps_to_its_own_cores_and_starts_its_children_on_all(real_store, real_settings) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: nothing to share out")
    with serving(real_settings.store, {}) as (base, process):
        assert get(f"{base}/health", timeout=30)[0] == 200  # /health asks a query worker: one starts
        assert get(f"{base}/health", timeout=30)[0] == 200  # (each web process may have answered one)
        shares = []
        for pid in web_processes(process):
            threads = {tid: os.sched_getaffinity(tid) for tid in map(int, os.listdir(f"/proc/{pid}/task"))}
            assert len(set(map(frozenset, threads.values()))) == 1, threads  # every thread, the same share
            shares.append(set(next(iter(threads.values()))))
            for child in psutil.Process(pid).children():
                with contextlib.suppress(ProcessLookupError):  # an idle worker may have just retired
                    assert sorted(os.sched_getaffinity(child.pid)) == cpus  # a query worker: unpinned
        assert len(shares) == 2 and not shares[0] & shares[1] and shares[0] | shares[1] == set(cpus), shares
