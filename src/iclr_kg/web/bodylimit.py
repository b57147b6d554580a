"""WSGI middleware: a request body over the limit is a 413, whatever its transfer encoding.

Werkzeug enforces `MAX_CONTENT_LENGTH` against a Content-Length header, but a chunked body has
none: its stream is cut at the limit and the prefix is parsed as if it were whole (an update
over 1 MiB ran its first operation and dropped the rest). Here a body without a length is read
up to the limit first; a longer one is refused before the app sees it, a shorter one is handed
on with its length, as if the client had sent one.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any


class BodyLimit:
    def __init__(self, app: Callable[..., Iterable[bytes]], limit: int):
        self.app, self.limit = app, limit

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        length = environ.get("CONTENT_LENGTH") or ""
        if length.isdigit() and int(length) > self.limit:
            return self._too_large(start_response)
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if not length and (chunked or environ.get("wsgi.input_terminated")):
            body = _read_up_to(environ["wsgi.input"], self.limit + 1)
            if len(body) > self.limit:
                return self._too_large(start_response)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            environ.pop("wsgi.input_terminated", None)
            environ.pop("HTTP_TRANSFER_ENCODING", None)  # Werkzeug ignores a length beside "chunked"
        return self.app(environ, start_response)

    def _too_large(self, start_response: Callable[..., Any]) -> Iterable[bytes]:
        message = f"the request body is larger than {self.limit} bytes\n".encode()
        start_response(
            "413 Content Too Large",
            [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(message)))],
        )
        return [message]


def _read_up_to(stream: Any, size: int) -> bytes:
    """Read until `size` bytes or the end: a server's stream may return less than asked per read."""
    parts, total = [], 0
    while total < size:
        part = stream.read(size - total)
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)
