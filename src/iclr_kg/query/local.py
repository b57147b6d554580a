"""Queries evaluated in the web process that received them, under the time limit all the same.

A query worker process (pool.py) costs every request a hop: pickling, a pipe, a second process
to schedule. For a point lookup that was half of its time. Here the web process evaluates the
query itself, on an evaluator thread of its own, while the request thread waits for the answer
with the deadline, so a query past its limit is still answered `QueryTimeout` on time.

pyoxigraph cannot stop a query that runs (no cancellation; it releases the GIL, so every other
thread goes on). So a query still running past its deadline makes this web process *retire*:
the lane calls `retire(reason)`, the server (web/server.py) stops taking connections, lets the
requests in flight finish, and exits; gunicorn, its supervisor, starts a fresh process. The
runaway burns a core until then, as it did in a worker process until the worker was killed. The
same for memory: past the limit while queries run here, they fail `QueryMemoryExceeded` and the
process retires at once.

The lane answers only what is safe to evaluate here (`LocalLane.takes`): no lints (the syntax
and domain checks of the editor and pages) and no SERVICE calls (those stay with the workers), text already bounded in size and
nesting (querytext.py: the parser recurses), and only where a supervisor replaces the process
(`iclr-kg serve` with gunicorn installs the lane; the test client and `--server waitress` have
none, and use the workers).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from iclr_kg import deepstack
from iclr_kg.errors import IclrKgError
from iclr_kg.graph import ReadableGraph
from iclr_kg.processes import PAGE_SIZE
from iclr_kg.query.answering import Message, QueryRequest, answer
from iclr_kg.query.pool import ActiveQuery, ClientShares, Evaluator, RunningQuery, Target, memory_exceeded
from iclr_kg.query.streaming import ClientGone
from iclr_kg.sparql.querytext import says

WATCH_INTERVAL = 0.05  # seconds between the watchdog's looks at deadlines and memory
GRACE = 0.5  # seconds a cancelled evaluation has to notice before the process retires
QUEUED = 8  # chunks of a streamed result waiting for the request thread, at most


class _Evaluation:
    """One query on an evaluator thread: its messages (pool.py's protocol) go into a queue.

    The hand-off is C's `queue.SimpleQueue` and plain flags: queue.Queue's conditions and two
    Events per query took a tenth of a point lookup's Python time in the web process."""

    def __init__(self, store: ReadableGraph, request: QueryRequest):
        self.store: ReadableGraph | None = store  # dropped once evaluated (`run`)
        self.request = request
        self.messages: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self.cancelled = False
        self.ended = False
        self.failure: IclrKgError | None = None  # set by the watchdog: memory
        self.cancelled_at = 0.0

    def run(self) -> None:
        store = self.store
        assert store is not None, "an evaluation runs once"
        try:
            answer(store, self.request, self._send)
        except ClientGone:
            pass
        except MemoryError:
            self.fail(memory_exceeded())
        finally:
            self.store = store = None  # the result's iterators were dropped on this thread, as pyoxigraph needs
            self.ended = True

    def _send(self, message: Message) -> None:
        """Queue a message; a reader behind by QUEUED chunks (a slow client) holds the writer."""
        while self.messages.qsize() >= QUEUED:
            if self.cancelled:
                raise ClientGone("the request ended")
            time.sleep(0.005)
        if self.cancelled:
            raise ClientGone("the request ended")
        self.messages.put(message)

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled_at = time.monotonic()
            self.cancelled = True

    def fail(self, error: IclrKgError) -> None:
        self.failure = error
        self.cancel()


class LocalQuery(RunningQuery):
    """A query evaluated on this process's evaluator thread: RunningQuery's interface, read
    from a queue instead of a pipe."""

    def __init__(self, lane: LocalLane, evaluation: _Evaluation, deadline: float, timeout: float, client: str | None):
        super().__init__(lane._release, deadline, timeout, client)
        self.evaluation = evaluation

    def receive(self) -> Message:
        while True:
            if self.evaluation.failure is not None:
                raise self.evaluation.failure
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise self.timed_out()
            try:
                return self.evaluation.messages.get(timeout=min(remaining, 0.25))
            except queue.Empty:
                continue


class LocalLane:
    """Evaluator threads in this web process, the watchdog over them, and the client shares."""

    def __init__(
        self,
        store: Callable[[], ReadableGraph],
        retire: Callable[[str, bool], None],
        threads: int,
        share: int,
        memory_mib: int = 0,
        client_queries: int = 5,
        fallback: Evaluator | None = None,
    ):
        """`fallback`: where the queries this lane does not take run (`evaluate`)."""
        self._store, self._retire, self.fallback = store, retire, fallback
        self.shares = ClientShares(share, client_queries)
        self.memory_mib = memory_mib
        self._tasks: queue.SimpleQueue[_Evaluation] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._running: set[LocalQuery] = set()
        self._retiring = False
        self._base_rss = _rss()
        for n in range(threads):
            deepstack.start_thread(self._evaluate, name=f"iclr-kg-evaluator-{n}")
        threading.Thread(target=self._watch, name="iclr-kg-lane-watchdog", daemon=True).start()

    @staticmethod
    def takes(request: QueryRequest) -> bool:
        """Whether this query may be evaluated here (see the module docstring)."""
        text = request.text
        return not request.lint and not says(text, "SERVICE")

    def evaluate(self, query: QueryRequest, timeout: float, client: str | None, target: Target) -> ActiveQuery:
        """The Evaluator's one method: here what the lane takes from a client, the rest (the
        app's own queries, `client` None, what `takes` refuses, and what reads a generation not
        yet known to read back whole: store/checking.py) on the fallback."""
        if client is not None and self.takes(query) and target.intact():
            return self._start(target.graph(), query, timeout, client)
        if self.fallback is None:
            raise RuntimeError("this lane has no fallback for what it does not take")
        return self.fallback.evaluate(query, timeout, client, target)

    def start(self, request: QueryRequest, timeout: float, client: str | None = None) -> LocalQuery:
        """Evaluate `request` here, on the store the lane was made with."""
        return self._start(self._store(), request, timeout, client)

    def _start(self, store: ReadableGraph, request: QueryRequest, timeout: float, client: str | None) -> LocalQuery:
        """Evaluate `request` here; returns once its kind (or the whole small result) is known."""
        deadline = time.monotonic() + timeout
        self.shares.enter(client, timeout)
        evaluation = _Evaluation(store, request)
        running = LocalQuery(self, evaluation, deadline, timeout, client)
        with self._lock:
            self._running.add(running)
        self._tasks.put(evaluation)
        try:
            running.take_first(request)
        except BaseException:
            running.abandon()
            raise
        return running

    def _release(self, running: RunningQuery, healthy: bool) -> None:
        """RunningQuery's end: the evaluation is told to stop if it has not ended (the watchdog
        retires the process if it does not within GRACE)."""
        assert isinstance(running, LocalQuery)
        if not healthy:
            running.evaluation.cancel()
        with self._lock:
            if running.evaluation.ended or healthy:
                self._running.discard(running)
        self.shares.leave(running.client)

    def _evaluate(self) -> None:
        while True:
            self._tasks.get().run()

    def _watch(self) -> None:
        while not self._retiring:
            time.sleep(WATCH_INTERVAL)
            now = time.monotonic()
            with self._lock:
                running = list(self._running)
            for query in running:
                evaluation = query.evaluation
                if evaluation.ended:
                    if query.finished:
                        with self._lock:
                            self._running.discard(query)
                    continue
                if now > query.deadline:
                    evaluation.cancel()
                if evaluation.cancelled and now - evaluation.cancelled_at > GRACE:
                    self._retire_now(f"a query ran past its time limit of {query.timeout:g} s and cannot be stopped")
                    return
            if running and self.memory_mib and _rss() - self._base_rss > self.memory_mib * 2**20:
                for query in running:
                    query.evaluation.fail(memory_exceeded())
                self._retire_now("queries grew this web process past the query memory limit", at_once=True)
                return

    def _retire_now(self, reason: str, at_once: bool = False) -> None:
        self._retiring = True
        self._retire(reason, at_once)

    def in_flight(self) -> int:
        """Queries whose answer is still being read or written (for tests and monitoring)."""
        with self._lock:
            return sum(1 for q in self._running if not q.finished)


def _rss() -> int:
    """This process's resident bytes (0 where /proc cannot tell)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return 0
