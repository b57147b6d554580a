"""Query evaluation in worker processes, so a query past its time limit is stopped for real.

pyoxigraph has no timeout or cancel API, and signals or exceptions from other threads do not
interrupt it. So each query runs in one of a few long-lived worker processes that hold a
read-only handle on the store; the web thread relays what the worker writes. Past the deadline
(or when the client goes away) the worker is killed, which frees its CPU at once, and replaced.

The pipe's protocol is the message types of answering.py. Parent → worker: (generation path,
QueryRequest). Worker → parent, for a result to serialize: `Complete` (a small result, whole), or
`Started` then `Data`... and `Done`; for rows (`row_limit`, the pages): `Started` then `Rows`;
at any point instead: `errors.Failure` (the envelope every child process of ours sends). The format for each kind of result is chosen before the query
runs (QueryRequest.formats); `Started.format` None means the client accepts no format for it."""

from __future__ import annotations

import collections
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection
from typing import Any, Protocol

from iclr_kg import deepstack
from iclr_kg.errors import (
    Failure,
    IclrKgError,
    PoolBusy,
    QueryMemoryExceeded,
    QueryTimeout,
    StoreError,
    StreamAborted,
    TooManyRequests,
    engine_errors,
)
from iclr_kg.graph import ReadableGraph
from iclr_kg.processes import (
    OUT_OF_MEMORY,
    PAGE_SIZE,
    exit_out_of_memory,
    limit_address_space,
    memory_limit,
    start_without_main,
)
from iclr_kg.query.answering import (
    Checked,
    Complete,
    Data,
    Done,
    Message,
    QueryRequest,
    Rows,
    Started,
    answer,
    checked,
    result_kind,
    result_rows,
    run_request,
    write_result,
)
from iclr_kg.query.streaming import ClosingBody
from iclr_kg.served import open_key
from iclr_kg.sparql.lint import Problem

_EMPTY: list[ReadableGraph] = []


def _empty_store() -> ReadableGraph:
    """An empty in-memory store, made once per worker, for syntax checks."""
    if not _EMPTY:
        from pyoxigraph import Store

        _EMPTY.append(Store())
    return _EMPTY[0]


def _worker_main(
    conn: Connection, memory_mib: int = 0, backend_auth: str | None = None, quiet: bool = False
) -> None:  # pragma: no cover
    if quiet:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    limit_address_space(memory_mib)
    # Oxigraph recurses over a query's tree: its evaluations run on a deep stack (deepstack.py)
    stack = deepstack.stack_within(memory_mib)
    deepstack.start_thread(_serve_requests, args=(conn, backend_auth), name="iclr-kg-query", stack=stack).join()


def _serve_requests(conn: Connection, backend_auth: str | None) -> None:  # pragma: no cover - child process
    stores: dict[str, ReadableGraph] = {}
    while True:
        try:
            generation, request = conn.recv()
        except EOFError:
            return
        try:
            store = _empty_store() if request.lint else stores.get(generation)
            if store is None:  # a new build, or an update made since: open a fresh snapshot
                stores.clear()
                store = stores[generation] = _open_for_worker(generation, backend_auth)
        except IclrKgError as exc:
            conn.send(Failure.of(exc))
            continue
        try:
            answer(store, request, conn.send)
        except (BrokenPipeError, EOFError):
            return
        except MemoryError:
            exit_out_of_memory()  # the parent reports the memory limit and starts a fresh worker


def _open_for_worker(generation: str, backend_auth: str | None) -> ReadableGraph:
    with engine_errors("reading the store"):  # a remote engine's EngineError passes as it is
        return open_key(generation, backend_auth)


# A worker whose resident memory is above this after a query is replaced: Python and RocksDB keep
# what a large query grew to, and the next large query would start from there.
RECYCLE_RSS = 512 * 2**20


WATCH_INTERVAL = 0.25  # seconds between the watchdog's looks at running queries' deadlines


RETIRE_INTERVAL = 5.0  # seconds between its looks for workers idle too long


class _Worker:
    def __init__(self, context: Any, memory_mib: int, backend_auth: str | None = None, quiet: bool = False):
        self.idle_since = time.monotonic()
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=_worker_main, args=(child, memory_mib, backend_auth, quiet), daemon=True, name="iclr-kg-query"
        )
        start_without_main(self.process)
        child.close()
        self._statm: int | None = None  # the worker's /proc/<pid>/statm, opened on first use

    def rss(self) -> int:
        """Resident bytes of the worker process (0 where /proc cannot tell). Asked after every
        query: its /proc file stays open and is read again from the start (opening it each
        time took 30 us of every request)."""
        try:
            if self._statm is None:
                self._statm = os.open(f"/proc/{self.process.pid}/statm", os.O_RDONLY | os.O_CLOEXEC)
            return int(os.pread(self._statm, 256, 0).split()[1]) * PAGE_SIZE
        except (OSError, ValueError, IndexError):
            return 0

    def death(self) -> IclrKgError:
        """Why the worker ended, as the error to raise, once it has."""
        self.process.join(timeout=1)
        if self.process.exitcode in (-signal.SIGABRT, -signal.SIGKILL, OUT_OF_MEMORY):
            return memory_exceeded()
        return StoreError("the query worker died (out of memory?)")

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()
        if self._statm is not None:
            os.close(self._statm)
            self._statm = None


class _IdleWorkers(queue.Queue):
    """The idle workers, the one used last handed out first: its caches are warm. Four workers
    taking turns answered a point lookup in 0.40-0.62 ms, one worker used again in 0.25 ms
    (the hop and the evaluation, measured with the pool alone). So those idle longest stay at
    the front, where retiring them takes them (`take_oldest`)."""

    queue: collections.deque[_Worker]

    def _get(self) -> _Worker:
        return self.queue.pop()

    def take_oldest(self, keep: int, idle_before: float) -> _Worker | None:
        """The worker idle longest, if more than `keep` are idle and it has been since before
        `idle_before` (a `time.monotonic()` value); else None."""
        with self.mutex:
            if len(self.queue) <= keep or self.queue[0].idle_since >= idle_before:
                return None
            return self.queue.popleft()


def memory_exceeded() -> QueryMemoryExceeded:
    """What a client reads when its query (in a worker, or on a web process's lane) grew too large."""
    return QueryMemoryExceeded("the query used more memory than a query may (ICLR_KG_QUERY_MEMORY)")


SHARE_WAIT = 10.0  # seconds a client's query may wait for one of its own running ones to end


class ClientShares:
    """Each client's queries: at most `share` run at once (one client cannot take every worker or
    evaluator thread from the others), and up to `parallel` in all, those past its share waiting
    for one of its own to end (a notebook or a dashboard sends a few at once; the Wikidata Query
    Service allows five). A client's excess is its own: TooManyRequests (429, Retry-After), at
    once past `parallel`, or after SHARE_WAIT seconds of waiting (at most half its time limit: the
    rest is for running)."""

    def __init__(self, share: int, parallel: int = 5):
        self.share, self.parallel = share, max(share, parallel)
        self._changed = threading.Condition()
        self._running: dict[str, int] = {}
        self._admitted: dict[str, int] = {}  # running or waiting

    def enter(self, client: str | None, timeout: float = 2 * SHARE_WAIT) -> None:
        """Count one more query of `client` (None: the app's own, never refused), whose time limit
        is `timeout` seconds, once it may run; or TooManyRequests."""
        if client is None:
            return
        with self._changed:
            if self._admitted.get(client, 0) >= self.parallel:
                raise TooManyRequests(
                    f"this client already has {self.parallel} queries running or waiting here, its share of the "
                    "endpoint; send the next when one has finished"
                )
            _count(self._admitted, client, 1)
            wait = min(timeout / 2, SHARE_WAIT)
            deadline = time.monotonic() + wait
            while self._running.get(client, 0) >= self.share:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    _count(self._admitted, client, -1)
                    raise TooManyRequests(
                        f"this client's {self.share} queries running here, its share of the endpoint, held it for "
                        f"the {wait:g} s its next may wait; send it when one has finished"
                    )
                self._changed.wait(remaining)
            _count(self._running, client, 1)

    def leave(self, client: str | None) -> None:
        if client is None:
            return
        with self._changed:
            _count(self._running, client, -1)
            _count(self._admitted, client, -1)
            self._changed.notify_all()


def _count(counts: dict[str, int], client: str, change: int) -> None:
    """Change `client`'s count by `change`; a count of zero is not kept."""
    left = counts.get(client, 0) + change
    if left > 0:
        counts[client] = left
    else:
        counts.pop(client, None)


class QueryPool:
    """Up to `size` query worker processes, handed out one per running query.

    Admission is bounded: a client may hold at most half of the workers while others wait, with
    up to `client_queries` of its queries admitted (ClientShares: past it, 429), and at most
    `4 × size` requests wait for a worker at all; past that, `PoolBusy` at once (503 with
    Retry-After) instead of a queue that grows with every slow query. A watchdog thread kills
    the worker of any query past its deadline, also while the web thread is blocked writing to a
    client that does not read. The workers start with the pool (`start` of them, else all
    `size`), the others when queries need them; one idle for more than
    `retire_after` seconds stops (but `keep` of them), and starts again when a query needs it:
    a server at rest holds `keep` workers per web process, not `size` (their interpreters and
    libraries are most of its memory), and pays a worker's start, a few tenths of a second,
    for the second concurrent query after a quiet spell.
    """

    def __init__(
        self,
        size: int = 4,
        wait_for_worker: float = 30.0,
        memory_mib: int | None = None,
        backend_auth: str | None = None,
        keep: int = 1,
        retire_after: float = 60.0,
        quiet: bool = False,
        client_queries: int = 5,
        start: int | None = None,
    ):
        """`quiet`: the workers' own error output (a dying reader's allocator or C++ runtime
        lines) goes nowhere; a command that prints one line for the error says it. `start`: how
        many workers start with the pool (all `size` by default); the others start when queries
        need them."""
        self._context = multiprocessing.get_context("spawn")
        self.quiet = quiet
        self.backend_auth = backend_auth  # for workers that read a remote engine
        self.size = size
        self.keep, self.retire_after = keep, retire_after
        self.memory_mib = memory_limit(memory_mib)
        self._idle = _IdleWorkers()
        self._wait = wait_for_worker
        self._lock = threading.Lock()
        self._closed = False
        self._running: set[WorkerQuery] = set()
        self.shares = ClientShares(max(1, size // 2), client_queries)
        self._waiting = 0
        self._live = size if start is None else max(1, min(start, size))  # started and not stopped
        for _ in range(self._live):
            self._idle.put(self._spawn())
        self._watchdog = threading.Thread(target=self._watch, name="iclr-kg-query-watchdog", daemon=True)
        self._watchdog.start()

    def _spawn(self) -> _Worker:
        return _Worker(self._context, self.memory_mib, self.backend_auth, self.quiet)

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().kill()
            except queue.Empty:
                return

    @property
    def idle(self) -> int:
        """How many workers wait for a query now."""
        return self._idle.qsize()

    @property
    def running(self) -> int:
        """How many queries workers are answering now (for tests and monitoring)."""
        with self._lock:
            return len(self._running)

    def worker_pids(self) -> set[int]:
        """The process ids of the idle workers (for tests and monitoring)."""
        return {w.process.pid for w in list(self._idle.queue)}

    def _admit(self, client: str | None, timeout: float) -> None:
        """Count the request in once its client's share lets it run (ClientShares: a client's
        excess waits for its own queries, not for the others'), or refuse it: too long a queue."""
        self.shares.enter(client, timeout)
        with self._lock:
            if self._idle.qsize() == 0 and self._live >= self.size and self._waiting >= 4 * self.size:
                self.shares.leave(client)
                raise PoolBusy(f"the endpoint is busy: {self._waiting} queries are waiting for a worker")
            self._waiting += 1

    def _leave(self, client: str | None) -> None:
        """A client's admitted request that got no worker is no longer counted."""
        self.shares.leave(client)

    def _acquire(self, wait: float) -> _Worker:
        """An idle worker that is alive: one that died while idle (the kernel's OOM killer, an
        operator's kill) is replaced here, not handed to a query that would fail on it."""
        try:
            worker = self._take(wait)
            if not worker.process.is_alive():
                worker.kill()
                worker = self._spawn()
            return worker
        finally:
            with self._lock:
                self._waiting -= 1

    def _take(self, wait: float) -> _Worker:
        """An idle worker; with none idle and fewer than `size` started (some retired), a new
        one; else the first to come free within `wait` seconds."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            grow = self._live < self.size
            if grow:
                self._live += 1
        if grow:
            try:
                return self._spawn()
            except BaseException:
                with self._lock:
                    self._live -= 1
                raise
        try:
            return self._idle.get(timeout=max(0.0, wait))
        except queue.Empty:
            raise PoolBusy(f"the endpoint is busy: no query worker became free within {wait:.0f} s") from None

    def _release(self, running: RunningQuery, healthy: bool) -> None:
        assert isinstance(running, WorkerQuery)
        with self._lock:
            self._running.discard(running)
        self._leave(running.client)
        worker = running.worker
        healthy = healthy and worker.process.is_alive()  # it may have died after its last message
        if healthy and not self._closed and worker.rss() < max(RECYCLE_RSS, self.memory_mib * 2**20 // 4):
            worker.idle_since = time.monotonic()
            self._idle.put(worker)
            return
        worker.kill()
        if not self._closed:
            self._idle.put(self._spawn())

    def _watch(self) -> None:
        """Kill the workers of queries past their deadline, whatever the web thread is doing;
        now and then, stop the workers idle for too long."""
        retired_at = time.monotonic()
        while not self._closed:
            time.sleep(WATCH_INTERVAL)
            now = time.monotonic()
            with self._lock:
                late = [r for r in self._running if now > r.deadline + WATCH_INTERVAL]
            for running in late:
                running.abandon()
            if now - retired_at > RETIRE_INTERVAL:
                retired_at = now
                self._retire(now)

    def _retire(self, now: float) -> None:
        """Stop the idle workers unused for `retire_after` seconds, oldest first, but `keep`."""
        while not self._closed:
            worker = self._idle.take_oldest(self.keep, now - self.retire_after)
            if worker is None:
                return
            with self._lock:
                self._live -= 1
            worker.kill()

    def start(self, generation: str, request: QueryRequest, timeout: float, client: str | None = None) -> WorkerQuery:
        """Send `request` to a worker; returns once the worker knows the result's kind.

        Raises QueryError (parser message), QueryTimeout, PoolBusy or StoreError.
        """
        deadline = time.monotonic() + timeout
        self._admit(client, timeout)
        try:
            worker = self._acquire(min(self._wait, deadline - time.monotonic()))
        except BaseException:
            self._leave(client)
            raise
        running = WorkerQuery(self._release, worker, deadline, timeout, client)
        with self._lock:
            self._running.add(running)
        try:
            try:
                worker.conn.send((str(generation), request))
            except OSError:  # the worker died between its check and this query: 503, not 500
                raise worker.death() from None
            running.take_first(request)
        except BaseException:
            running.abandon()
            raise
        return running


class RunningQuery:
    """A query evaluated elsewhere under a deadline, read as messages (`receive`: from a worker's
    pipe, WorkerQuery; from a thread's queue, local.LocalQuery); stream its serialization with
    `body(format)`. `release` is told once when it ends, healthy or not."""

    def __init__(
        self,
        release: Callable[[RunningQuery, bool], None],
        deadline: float,
        timeout: float,
        client: str | None = None,
    ):
        self._release, self.deadline, self.timeout, self.client = release, deadline, timeout, client
        self.kind = ""
        self.format: str | None = None  # chosen up front (QueryRequest.formats)
        self.prefetched: bytes | None = None
        self.rows: dict[str, Any] | None = None
        self.problems: tuple[Problem, ...] = ()  # a lint's (QueryRequest.lint)
        self.finished = False
        self._done = threading.Lock()

    def timed_out(self) -> QueryTimeout:
        return QueryTimeout(f"the query was stopped after its time limit of {self.timeout:g} s")

    def take_first(self, request: QueryRequest) -> None:
        """Read the evaluation's first answer: the kind of result and, for a small one, the whole
        serialization (`prefetched`), or the rows asked for; raises the error it failed with."""
        message = self.receive()
        match message:
            case Failure():
                self.finish()
                raise message.exception()
            case Checked(problems=problems):  # a lint: its problems, and nothing more
                self.problems = problems
                self.finish()
            case Complete(kind=kind, format=fmt, body=body):  # the whole (small) result at once
                self.kind, self.format, self.prefetched = kind, fmt, body
                self.finish()
            case Started(kind=kind, format=fmt):
                self.kind, self.format = kind, fmt
                if request.row_limit is not None:
                    answer = self.receive()
                    self.finish()
                    if isinstance(answer, Failure):
                        raise answer.exception()
                    if not isinstance(answer, Rows):
                        raise RuntimeError(f"a query worker sent {type(answer).__name__} where rows were due")
                    self.rows = answer.table
                elif fmt is None:
                    self.finish()  # nothing the client accepts; the evaluation sent no more

    def receive(self) -> Message:
        """The evaluation's next message, by the deadline."""
        raise NotImplementedError

    def _end(self, healthy: bool) -> None:
        with self._done:
            if self.finished:
                return
            self.finished = True
        self._release(self, healthy)

    def finish(self) -> None:
        """The worker answered in full and waits for the next query."""
        self._end(healthy=True)

    def abandon(self) -> None:
        """Kill the worker (deadline passed, client gone, or an error mid-way) and replace it."""
        self._end(healthy=False)

    def cancel(self) -> None:
        """The client will not get this result: stop the worker if it is still at it."""
        self.abandon()

    def body(self, fmt: str) -> ClosingBody:
        """The serialization in format `fmt`, chunk by chunk, as the worker writes it.

        The worker is released when the body is closed, iterated or not (HEAD never iterates).
        A failure after the first chunk was sent (the deadline, an evaluation error) cannot change
        the status any more: it raises StreamAborted, and the server cuts the connection, so that
        a client sees a broken transfer rather than a short result that looks whole.
        """
        return ClosingBody(self._chunks(fmt), self.abandon)

    def _chunks(self, fmt: str) -> Iterator[bytes]:
        if self.prefetched is not None:
            yield self.prefetched
            return
        try:
            while True:
                try:
                    message = self.receive()
                except IclrKgError as exc:
                    raise StreamAborted(f"result cut short: {exc}") from None
                match message:
                    case Data(body=body):
                        yield body
                    case Done():
                        self.finish()
                        return
                    case Failure():
                        raise StreamAborted(f"result cut short: {message.exception()}")
                    case _:
                        raise StreamAborted(f"result cut short: unexpected {message!r} from the worker")
        finally:
            self.abandon()


class WorkerQuery(RunningQuery):
    """A query that a worker process evaluates: its messages come through the worker's pipe."""

    def __init__(
        self,
        release: Callable[[RunningQuery, bool], None],
        worker: _Worker,
        deadline: float,
        timeout: float,
        client: str | None = None,
    ):
        super().__init__(release, deadline, timeout, client)
        self.worker = worker

    def receive(self) -> Message:
        remaining = self.deadline - time.monotonic()
        try:
            if remaining <= 0 or not self.worker.conn.poll(remaining):
                raise self.timed_out()
            return self.worker.conn.recv()
        except (EOFError, OSError):
            if time.monotonic() >= self.deadline:  # the watchdog stopped it
                raise self.timed_out() from None
            raise self.worker.death() from None


class InProcessQuery:
    """The RunningQuery interface (`ActiveQuery`), evaluated on a thread of this process.

    For `query_workers = 0`: no process hop, but also no time limit (nothing can stop the
    query). Used to measure what the worker processes cost, and where isolation is not wanted.
    """

    format: str | None = None
    prefetched: bytes | None = None

    def __init__(self, store: ReadableGraph, request: QueryRequest):
        from iclr_kg.query.streaming import Producer

        self.rows: dict[str, Any] | None = None
        self.problems: tuple[Problem, ...] = ()
        if request.lint:  # no process to parse in: this one, as asked
            self.kind, self.problems = "", tuple(checked(store, request))
            return
        self._producer = Producer(lambda: run_request(store, request), result_kind, stack=deepstack.STACK)
        self.kind = self._producer.wait()
        if request.row_limit is not None:
            limit = request.row_limit
            collected: list[dict[str, Any]] = []
            for _ in self._producer.body(lambda result, _output: collected.append(result_rows(result, limit))):
                pass
            self.rows = collected[0] if collected else {}
        elif request.formats is not None:
            self.format = request.formats.get(self.kind)

    def cancel(self) -> None:
        self._producer.cancel()

    def body(self, fmt: str) -> Iterator[bytes]:
        return self._producer.body(lambda result, output: write_result(result, output, fmt))


class ActiveQuery(Protocol):
    """What a started query offers, in a worker or on the lane (RunningQuery) or in-process
    (InProcessQuery)."""

    kind: str  # "results" or "rdf"
    format: str | None  # the format chosen up front for this kind (None: not acceptable)
    prefetched: bytes | None  # the whole serialization, when it was small
    rows: dict[str, Any] | None  # result_rows(), when rows were asked for
    problems: tuple[Problem, ...]  # a lint's (QueryRequest.lint)

    def body(self, fmt: str) -> Iterable[bytes]: ...

    def cancel(self) -> None: ...


class Target(Protocol):
    """What a query reads: the key a worker process opens it by (served.Generation.key), and
    this process's own handle on it; each asked only by the evaluator that needs it."""

    def key(self) -> str: ...

    def graph(self) -> ReadableGraph: ...

    def intact(self) -> bool:
        """Whether it was found to read back whole, so a query may read it where it cannot be
        stopped (a web process's lane); StoreDamaged where it was found damaged."""
        ...


class Evaluator(Protocol):
    """Where a query runs, one interface for every place (httpx's transports): in this thread
    (InProcess), on this process's lane (local.LocalLane) or in a worker process (OnWorkers).
    The app chooses one when it starts (web/state.py) and every query goes through it."""

    def evaluate(self, query: QueryRequest, timeout: float, client: str | None, target: Target) -> ActiveQuery:
        """Start `query` on `target` under `timeout` seconds for `client` (None: the app's own,
        never refused); returns once the result's kind (or the whole small result) is known."""
        ...


class InProcess:
    """Queries evaluated by the request's own thread, without a time limit (`query_workers = 0`:
    no isolation was asked for); a lint reads an empty store, as a worker's does."""

    def evaluate(self, query: QueryRequest, timeout: float, client: str | None, target: Target) -> ActiveQuery:
        from pyoxigraph import Store

        return InProcessQuery(Store() if query.lint else target.graph(), query)


class OnWorkers:
    """Queries evaluated in the worker processes of a pool started on first use (`pool`)."""

    def __init__(self, pool: Callable[[], QueryPool]):
        self.pool = pool

    def evaluate(self, query: QueryRequest, timeout: float, client: str | None, target: Target) -> ActiveQuery:
        if not query.lint:  # a lint reads no store; a query on one found damaged is refused here too
            target.intact()
        return self.pool().start(target.key(), query, timeout, client=client)
