"""Stream a pyoxigraph result to the client as it is produced.

pyoxigraph's result iterators must be used on the thread that created them, so one worker
thread does everything for a request: it runs the query (or opens the quad iterator), reports
back what kind of result it got, or the error, so the request thread can still answer 400 or
406, then serializes into a small bounded queue that the WSGI response iterates. Memory stays
bounded whatever the result size, and a client that goes away closes the generator, which makes
the next write fail and ends the work.
"""

from __future__ import annotations

import contextlib
import io
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Generic, TypeVar

from iclr_kg import deepstack

CHUNK = 64 * 1024
_DONE = object()
R = TypeVar("R")


class ClosingBody:
    """A response body whose `close()` releases what it holds, whether or not it was iterated.

    WSGI servers call `close()` on every response body; Werkzeug answers HEAD (and 204/304)
    without iterating the body at all, so a generator's `finally` never runs there. Cleanup that
    hangs off `close()` holds for HEAD, for clients that go away, and for bodies read to the end.
    """

    def __init__(self, chunks: Iterable[bytes], release: Callable[[], None]):
        self._body, self._chunks, self._release = chunks, iter(chunks), release

    def __iter__(self) -> ClosingBody:
        return self

    def __next__(self) -> bytes:
        return next(self._chunks)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._release()


class ClientGone(OSError):
    """Raised inside the serializer when nobody reads the response any more."""


class _QueueWriter(io.RawIOBase):
    def __init__(self, chunks: queue.Queue[object], cancelled: threading.Event):
        self.chunks, self.cancelled = chunks, cancelled

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        payload = bytes(data)
        _put(self.chunks, payload, self.cancelled)
        return len(payload)


def _put(chunks: queue.Queue[object], item: object, cancelled: threading.Event) -> None:
    while True:
        if cancelled.is_set():
            raise ClientGone("client disconnected")
        try:
            chunks.put(item, timeout=0.5)
            return
        except queue.Full:
            continue


class Producer(Generic[R]):
    """Runs `produce()` on a worker thread, then, once told how, writes its result out. A thread
    that evaluates query text gets a deep `stack` (deepstack.py); 0, the default, is an ordinary
    one (serializing what is stored, as exports do, recurses on nothing)."""

    def __init__(self, produce: Callable[[], R], describe: Callable[[R], Any], stack: int = 0):
        self._chunks: queue.Queue[object] = queue.Queue(maxsize=8)
        self._writer: queue.Queue[Callable[[R, IO[bytes]], object] | None] = queue.Queue(maxsize=1)
        self._cancelled = threading.Event()
        self._ready: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
        self._thread = deepstack.start_thread(self._work, args=(produce, describe), name="sparql-worker", stack=stack)

    def _work(self, produce: Callable[[], R], describe: Callable[[R], Any]) -> None:
        try:
            result = produce()
            self._ready.put((True, describe(result)))
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, which raises it
            self._ready.put((False, exc.with_traceback(None)))
            return
        error: BaseException | None = None
        try:
            write = self._writer.get()
            if write is not None:
                with io.BufferedWriter(_QueueWriter(self._chunks, self._cancelled), buffer_size=CHUNK) as output:
                    write(result, output)
        except ClientGone:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported to the reader, which ends the response
            error = exc.with_traceback(None)
        finally:
            # pyoxigraph iterators must be dropped on the thread that made them: close ours here
            close = getattr(result, "close", None)
            if close is not None:
                close()
            del result
        try:
            _put(self._chunks, error if error is not None else _DONE, self._cancelled)
        except ClientGone:
            pass

    def wait(self) -> Any:
        """What `describe` said of the result; re-raises the error `produce` raised."""
        ok, value = self._ready.get()
        if not ok:
            raise value
        return value

    def cancel(self) -> None:
        """Do not write anything (the request ended with an error, or its body was closed)."""
        self._cancelled.set()
        with contextlib.suppress(queue.Full):
            self._writer.put_nowait(None)  # wakes the thread if it still waits to be told how

    def body(self, write: Callable[[R, IO[bytes]], object]) -> ClosingBody:
        """Start writing with `write(result, output)`; the bytes as they come, released on close."""
        return ClosingBody(self._chunks_of(write), self.cancel)

    def _chunks_of(self, write: Callable[[R, IO[bytes]], object]) -> Iterator[bytes]:
        self._writer.put(write)
        try:
            while True:
                item = self._chunks.get()
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item  # type: ignore[misc]
        finally:
            self._cancelled.set()


def stream(produce: Callable[[], R], write: Callable[[R, IO[bytes]], object]) -> ClosingBody:
    """Produce and write on one worker thread when nothing needs deciding in between."""
    producer = Producer(produce, lambda result: None)
    producer.wait()
    return producer.body(write)
