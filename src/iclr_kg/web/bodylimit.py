"""WSGI middleware: a request body over the limit is a 413, whatever its transfer encoding, and
a body that trickles is cut at the request timeout.

Werkzeug enforces `MAX_CONTENT_LENGTH` against a Content-Length header, but a chunked body has
none: its stream is cut at the limit and the prefix is parsed as if it were whole (an update
over 1 MiB ran its first operation and dropped the rest). Here every body is read before the
app sees it, up to the limit; a longer one is refused, a shorter one is handed on with its
length, as if the client had sent one.

Granian hands a request over once its headers are in, and reads the body as the app asks for
it, holding the thread that asks (a read of granian's returns when its chunk is whole, and
cannot be interrupted). So one client may have only `PER_CLIENT` bodies arriving at once per
web process (more: 503 at once), and granian has eight threads per `--threads`: a few clients
trickling bodies cannot take the threads others need. A body that is complete after the
request timeout (counted from the request's start here) is answered 408.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from iclr_kg.errors import IclrKgError, RequestTimeout, TooLarge, TooManyRequests, status_line

BODYLESS = ("GET", "HEAD", "OPTIONS")  # no body unless chunked: nothing to read (granian marks every input terminated)
PER_CLIENT = 4  # bodies one client may have arriving at once, per web process
CHUNK = 64 * 1024


class BodyLimit:
    def __init__(self, app: Callable[..., Iterable[bytes]], limit: int, timeout: float = 20.0):
        self.app, self.limit, self.timeout = app, limit, timeout
        self._arriving: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        length = environ.get("CONTENT_LENGTH") or ""
        if length.isdigit() and int(length) > self.limit:
            return _answer(start_response, TooLarge(f"the request body is larger than {self.limit} bytes"))
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        terminated = environ.get("wsgi.input_terminated") and environ.get("REQUEST_METHOD") not in BODYLESS
        if not ((length.isdigit() and int(length) > 0) or (not length and (chunked or terminated))):
            return self.app(environ, start_response)
        client = environ.get("REMOTE_ADDR", "")
        with self._lock:
            if self._arriving.get(client, 0) >= PER_CLIENT:
                return _answer(
                    start_response,
                    TooManyRequests(
                        f"this client already has {PER_CLIENT} request bodies arriving here; send the next when one is in"
                    ),
                )
            self._arriving[client] = self._arriving.get(client, 0) + 1
        try:
            body = _read_up_to(environ["wsgi.input"], self.limit + 1, time.monotonic() + self.timeout)
        finally:
            with self._lock:
                left = self._arriving.pop(client, 1) - 1
                if left > 0:
                    self._arriving[client] = left
        if body is None:
            return _answer(
                start_response,
                RequestTimeout(f"the request body did not arrive within {self.timeout:g} s"),
                [("Connection", "close")],
            )
        if len(body) > self.limit:
            return _answer(start_response, TooLarge(f"the request body is larger than {self.limit} bytes"))
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("wsgi.input_terminated", None)
        environ.pop("HTTP_TRANSFER_ENCODING", None)  # Werkzeug ignores a length beside "chunked"
        return self.app(environ, start_response)


def _answer(
    start_response: Callable[..., Any], error: IclrKgError, headers: list[tuple[str, str]] | None = None
) -> Iterable[bytes]:
    """`error` in plain text, before Flask: its status (and Retry-After) as errors.py gives it."""
    text = (str(error) + "\n").encode()
    retry = [("Retry-After", str(error.retry_after))] if error.retry_after is not None else []
    start_response(
        status_line(error),
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(text))), *retry, *(headers or [])],
    )
    return [text]


def _read_up_to(stream: Any, size: int, deadline: float) -> bytes | None:
    """Read until `size` bytes or the end (a server's stream may return less than asked per
    read); None when the body is still arriving at `deadline`, checked as each read returns."""
    parts, total = [], 0
    while total < size:
        part = stream.read(min(CHUNK, size - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
        if time.monotonic() > deadline:
            return None
    return b"".join(parts)
