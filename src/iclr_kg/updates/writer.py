"""The writer process: one per store, started by the first web process that writes and found by
the others at its address; it applies the updates one at a time, answers each once journaled,
and publishes bursts on its own thread."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import signal
import tempfile
import threading
import time
import traceback
from dataclasses import asdict
from multiprocessing import AuthenticationError
from pathlib import Path
from typing import Any

from iclr_kg import deepstack
from iclr_kg.errors import (
    Failure,
    IclrKgError,
    StoreError,
    UpdateTimeout,
    WriterEnded,
    engine_errors,
)
from iclr_kg.processes import exit_out_of_memory, limit_address_space, start_without_main
from iclr_kg.sparql.querytext import says, top_level_words
from iclr_kg.updates.applying import apply, publish
from iclr_kg.updates.bursts import PENDING, PUBLISH_IDLE, publish_due, publish_due_bursts
from iclr_kg.updates.journal import Entry, journal_of


class Writer:
    """A web process's way to the store's one writer process, which runs `apply` one write at a
    time under a time limit, for every web process of the server.

    One process for all: the writer keeps what the next update needs in memory (its working copy
    of the store, the reasoning state, the reasoner's compiled rules), so an update that came
    through another web process would otherwise find all of it cold, a few hundred milliseconds.
    The first web process that writes starts it (spawned: a RocksDB database opened for writing
    after gunicorn's fork waits forever for background threads that did not survive it); the
    others connect to it (a Unix socket under the temporary directory, an authentication key
    kept in the store with mode 0600). It holds `writer.lock` while it lives, so a second one
    never starts, and it ends with the web process that started it (the next write starts
    another). It takes the query memory limit; at an update's time limit it is killed (its
    flock goes with it, and the partial generation it leaves is pruned).
    """

    def __init__(self, memory_mib: int):
        import multiprocessing

        self._context = multiprocessing.get_context("spawn")
        self._memory_mib = memory_mib
        self._lock = threading.Lock()
        self._conn: Any = None
        self._pid = 0
        self._started: list[Any] = []  # writer processes this one started (reaped in close)

    def apply(
        self,
        store_dir: Path,
        update: str,
        *,
        base: str | None,
        kind: str,
        reasoner: str,
        timeout: float,
        max_derived: int = 0,
    ) -> Entry:
        """Run `update` in the writer: journaled when this returns, published soon after (every
        reader of the server asks for that first: `publish`).

        The journal is the acknowledgement point, and the writer goes on after it (publishing,
        saving the reasoning state). So where the writer ends before answering (this request's
        time limit, another web process's, its memory), the journal says what happened: the
        update carries an id chosen here, and if its entry is there the update was accepted,
        whatever ended the writer after; if not, nothing was written and the error says so."""
        request = secrets.token_hex(8)
        asked = ("update", str(store_dir), update, base, kind, reasoner, max_derived, request)
        try:
            return Entry(**self._ask(store_dir, asked, timeout))
        except (UpdateTimeout, WriterEnded):
            journal = journal_of(store_dir)
            journaled = journal.find(request)
            if journaled is None:
                raise
            journal.sync()  # the writer may have ended inside the append's fsync
            return journaled

    def publish(self, store_dir: Path, *, reasoner: str, timeout: float) -> None:
        """Have the writer publish every acknowledged update now; returns once it has. Past
        `timeout` the writer is left to finish (it is not killed: publishing is not a runaway
        query, and another reader would only ask again) and StoreError says so."""
        self._ask(store_dir, ("publish", str(store_dir), reasoner), timeout, kill=False)

    def _ask(self, store_dir: Path, request: tuple[Any, ...], timeout: float, kill: bool = True) -> Any:
        deadline = time.monotonic() + timeout
        with self._lock:
            conn = self._handed(store_dir, request, deadline)
            try:
                if not conn.poll(max(0.0, deadline - time.monotonic())):
                    if not kill:
                        self._drop()
                        raise StoreError(f"the store's writer did not publish the last updates within {timeout:g} s")
                    self._kill()
                    raise UpdateTimeout(
                        f"the update was stopped after its time limit of {timeout:g} s; nothing was written"
                    )
                answer = conn.recv()
            except (EOFError, OSError):
                self._drop()
                raise WriterEnded(
                    "the store's writer ended before it answered (a time limit or its memory limit, "
                    "ICLR_KG_QUERY_MEMORY): nothing was written; send the update again"
                ) from None
        if isinstance(answer, Failure):
            raise answer.exception()
        return answer

    def _handed(self, store_dir: Path, request: tuple[Any, ...], deadline: float) -> Any:
        """Hand `request` to the writer, which says TAKEN on receiving it: a writer that ended
        before saying so (killed at another web process's time limit) never ran it, and the
        request goes to a new one."""
        for attempt in (1, 2):
            conn = self._connection(store_dir)
            try:
                conn.send(request)
                if conn.poll(max(0.0, deadline - time.monotonic())) and conn.recv() == TAKEN:
                    return conn
                self._kill()
                raise UpdateTimeout(
                    "the update was stopped after its time limit before the writer took it; nothing was written"
                )
            except (EOFError, OSError):
                self._drop()
                if attempt == 2:
                    raise StoreError("the store's writer process ended twice before taking the update") from None
        raise AssertionError("unreachable")

    def _connection(self, store_dir: Path) -> Any:
        """The connection to the store's writer, which this process starts if none answers."""
        if self._conn is not None:
            return self._conn
        from multiprocessing.connection import Client

        address, key = _writer_address(store_dir), _writer_key(store_dir)
        deadline = time.monotonic() + WRITER_START_SECONDS
        while True:
            try:
                self._conn = Client(address, family="AF_UNIX", authkey=key)
                self._pid = self._conn.recv()  # the writer says who it is (to be stopped at a time limit)
                return self._conn
            except (OSError, EOFError):  # none listens yet, or the one that did is ending
                if time.monotonic() > deadline:
                    raise StoreError("the store's writer process did not start") from None
                if not any(p.is_alive() for p in self._started):
                    self._start(store_dir, address)
                time.sleep(0.02)

    def _start(self, store_dir: Path, address: str) -> None:
        process = self._context.Process(
            target=_writer_main,
            args=(str(store_dir), address, self._memory_mib, os.getpid()),
            daemon=True,
            name="iclr-kg-writer",
        )
        start_without_main(process)
        self._started = [p for p in self._started if p.is_alive()] + [process]

    def _kill(self) -> None:
        """Kill the writer, and return once it has ended (it writes nothing more: the journal
        then says whether the update it had was accepted)."""
        with contextlib.suppress(OSError):
            os.kill(self._pid, signal.SIGKILL)
        for process in self._started:
            if process.pid == self._pid:  # ours to reap (another web process's writer is its own)
                process.join(timeout=10)
        deadline = time.monotonic() + 10
        while _running(self._pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
        self._conn = None

    def close(self) -> None:
        """End the writer this process started, once it has published what it acknowledged."""
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(EOFError, OSError):
                    self._conn.send(("publish", None, "fast"))
                    deadline = time.monotonic() + 30
                    while self._conn.poll(max(0.0, deadline - time.monotonic())) and self._conn.recv() == TAKEN:
                        pass
            self._drop()
            for process in self._started:
                if process.is_alive():
                    process.kill()
                process.join(timeout=10)
            self._started = []


WRITER_START_SECONDS = 60.0


def _running(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, dead but not yet reaped by its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


TAKEN = "taken"  # the writer's first answer to a request: it has it


def _writer_address(store_dir: Path) -> str:
    """Where the store's writer listens: under the temporary directory (a Unix socket's path may
    not be longer than 107 bytes, and a store's may be), named after the store."""
    digest = hashlib.sha256(str(store_dir.resolve()).encode()).hexdigest()[:16]
    return str(Path(tempfile.gettempdir()) / f"iclr-kg-writer-{digest}.sock")


def _writer_key(store_dir: Path) -> bytes:
    """The key a web process proves it may write with (kept in the store, readable by its owner
    only): the socket's own permissions depend on the temporary directory's."""
    path = store_dir / "writer.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        store_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".writer.key-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # the first one written wins
        tmp.unlink()
        return path.read_bytes()


def _writer_main(
    store_dir: str, address: str, memory_mib: int, parent: int
) -> None:  # pragma: no cover - child process
    """The writer process: one `apply` at a time, for every web process that connects."""
    from multiprocessing.connection import Listener

    limit_address_space(memory_mib)
    lock = open(Path(store_dir) / "writer.lock", "a+")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return  # another web process started one first
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)
    listener = Listener(address, family="AF_UNIX", authkey=_writer_key(Path(store_dir)))
    os.chmod(address, 0o600)
    one_at_a_time = threading.Lock()
    # Stopped with the web process that started it (multiprocessing terminates a daemon child
    # at exit): what it acknowledged is published first
    signal.signal(signal.SIGTERM, lambda *_: _publish_and_end(one_at_a_time, address))
    threading.Thread(target=_end_with, args=(parent, one_at_a_time, address), daemon=True).start()
    threading.Thread(target=_publisher, args=(one_at_a_time,), daemon=True).start()
    while True:
        try:
            conn = listener.accept()
        except (OSError, EOFError, AuthenticationError):
            continue
        # updates are parsed and evaluated by recursion, as queries are: a deep stack (deepstack.py)
        deepstack.start_thread(
            _serve, args=(conn, one_at_a_time), name="iclr-kg-writer", stack=deepstack.stack_within(memory_mib)
        )


def _end_with(parent: int, one_at_a_time: threading.Lock, address: str) -> None:  # pragma: no cover
    """End the writer when the web process that started it has gone (killed, not exited),
    after publishing what it acknowledged."""
    while os.getppid() == parent:
        time.sleep(1.0)
    _publish_and_end(one_at_a_time, address)


def _publish_and_end(one_at_a_time: threading.Lock, address: str) -> None:  # pragma: no cover - child process
    """Publish what was acknowledged, remove the socket (the store's lock is still held, so no
    other writer listens there yet) and end."""
    with one_at_a_time:
        for store_dir in list(PENDING):
            with contextlib.suppress(Exception):  # journaled: the next writer or build publishes it
                publish(store_dir)
        with contextlib.suppress(OSError):
            os.unlink(address)
    os._exit(0)


def _publisher(one_at_a_time: threading.Lock) -> None:  # pragma: no cover - child process
    """Publish each burst of acknowledged updates once it is due (`publish_due`)."""
    while True:
        with one_at_a_time:
            wait = publish_due(time.monotonic())
        if wait is None or wait > 0:
            time.sleep(min(wait if wait is not None else PUBLISH_IDLE, PUBLISH_IDLE))
            continue
        with one_at_a_time:
            try:
                publish_due_bursts()
            except Exception:  # noqa: BLE001 - journaled: a reader's request or the next update catches up
                traceback.print_exc()


def _serve(conn: Any, one_at_a_time: threading.Lock) -> None:  # pragma: no cover - child process
    conn.send(os.getpid())
    while True:
        try:
            request = conn.recv()
            conn.send(TAKEN)
        except (EOFError, OSError):
            return
        with one_at_a_time:
            answer = _answer(request)
        try:
            conn.send(answer)
        except OSError:
            return


def _answer(request: tuple[Any, ...]) -> Any:  # pragma: no cover - child process
    try:
        if request[0] == "publish":
            for store_dir in [Path(request[1])] if request[1] else list(PENDING):
                publish(store_dir, reasoner=request[2])
            return None
        _, store_dir, update, base, kind, reasoner, max_derived, request_id = request
        # an operation of it is LOAD; `says` first (a C search: the tokenizer's Python loop took
        # 94 ms over a 1 MB INSERT DATA, on every update, for what matters only when one fails)
        loads = says(update, "LOAD") and any(word == "LOAD" for _, word in top_level_words(update))
        with engine_errors("the update", fetching="what it loads" if loads else None):
            entry = apply(
                Path(store_dir),
                update,
                base=base,
                kind=kind,
                reasoner=reasoner,
                max_derived=max_derived,
                defer=True,
                request=request_id,
            )
    except MemoryError:
        exit_out_of_memory()
    except IclrKgError as exc:
        return Failure.of(exc)
    except Exception as exc:  # noqa: BLE001 - a defect of ours: 500, and its traceback in the log
        traceback.print_exc()
        return Failure.of(exc)
    return asdict(entry)
