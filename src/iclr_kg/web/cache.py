"""A result cache for the endpoint: the store is read-only between builds, so the same query asks
for the same bytes until the next build.

Keys hold the store generation, so a rebuild (or an update) starts afresh without any flush.
Only deterministic queries are kept (querytext.keepable), and only results a
worker sent whole in its first message (complete, and at most one pipe chunk, 64 KiB: large
results stream straight through and are never copied). `ResponseMemo` keeps whole responses
(at most ITEM_LIMIT, 256 KiB each) in the same cache: one byte budget per web process
(`ICLR_KG_RESULT_CACHE`), least recently used out first.
A hit skips the query worker hop and the evaluation: on repeated point lookups (entity pages,
saved queries) that is most of a request's cost. `ICLR_KG_RESULT_CACHE=0` turns it off.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from iclr_kg.web.assets import chosen_encoding
from iclr_kg.web.conditional import content_etag

ITEM_LIMIT = 256 * 1024


@dataclass(frozen=True)
class Cached:
    body: bytes
    media_type: str
    etag: str
    headers: tuple[tuple[str, str], ...] = ()  # the whole response's, for ResponseMemo


class ResultCache:
    """LRU of serialized results, bounded in bytes; safe for the web process's threads."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.size = 0
        self.hits = self.misses = 0
        self._items: OrderedDict[bytes, Cached] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def digest(key: tuple) -> bytes:
        """What the cache keeps of a key: 16 bytes, however long the query was (the budget then
        counts what is really held; a key of a 250 KiB query used to cost 250 KiB uncounted).
        Each part is hashed after its length, so no text can pass for other parts; `str`, not
        `repr`, of the long ones (repr escaped a query's text anew: a fifth of a request's time
        outside the engine went to the four digests of a lookup, measured)."""
        digest = hashlib.blake2b(digest_size=16)
        for part in key:
            text = (part if isinstance(part, str) else repr(part)).encode("utf-8", "surrogatepass")
            digest.update(b"%d:" % len(text))
            digest.update(text)
        return digest.digest()

    def get(self, key: bytes) -> Cached | None:
        """The item kept under `key`, a key's `digest` (made once by a caller that also puts)."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(
        self,
        key: bytes,
        body: bytes,
        media_type: str,
        headers: tuple[tuple[str, str], ...] = (),
        etag: str | None = None,
    ) -> Cached | None:
        """Keep `body` under `key` (a key's `digest`), with its `etag` unless given (a whole
        response kept by ResponseMemo has its own already)."""
        if len(body) > min(ITEM_LIMIT, self.budget):
            return None
        item = Cached(body, media_type, etag or content_etag(body, media_type), headers)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.size -= _cost(old)
            self._items[key] = item
            self.size += _cost(item)
            while self.size > self.budget:
                _, evicted = self._items.popitem(last=False)
                self.size -= _cost(evicted)
        return item


def _cost(item: Cached) -> int:
    """Bytes an entry holds: its body, headers, and about 200 for the key and bookkeeping."""
    return len(item.body) + sum(len(k) + len(v) for k, v in item.headers) + 200


class ResponseMemo:
    """WSGI middleware: an exact repeat of a GET /sparql whose answer the result cache holds is
    answered before Flask is entered (same query string, same Accept, same store generation).

    The outermost layer that reads a request: `generation_key` pins the generation the request
    reads in its environ (AppState.pin: the lean path and the Flask view read that one) and
    gives its key, or None when nothing is served yet. What it keeps are whole responses that
    the app marked as kept (200 with an ETag, which only the read request's one answer gives:
    web/readrequest.py), so it never decides on its own what may be kept. A reverse proxy would
    do the same; doing it here saves the proxy and most of the per-request Python work.
    """

    def __init__(
        self, app: WSGIApplication, generation_key: Callable[[WSGIEnvironment], str | None], cache: ResultCache
    ):
        self.app, self.generation_key = app, generation_key
        self.memo = cache  # the app's one result cache: one budget for results and whole responses

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if (
            environ.get("REQUEST_METHOD") != "GET"
            or environ.get("PATH_INFO") != "/sparql"
            or "HTTP_IF_NONE_MATCH" in environ
            or not environ.get("QUERY_STRING")
        ):
            return self.app(environ, start_response)
        # the encoding the app chooses for this header: a response is kept under the one it was sent in
        encoding = chosen_encoding(environ.get("HTTP_ACCEPT_ENCODING", ""))
        try:
            generation = self.generation_key(environ)
        except Exception:  # noqa: BLE001 - the backend failed: the app says so properly
            return self.app(environ, start_response)
        if generation is None:  # no store yet: the app says so properly
            return self.app(environ, start_response)
        key = (
            "response",
            generation,
            environ["QUERY_STRING"],
            environ.get("HTTP_ACCEPT", ""),
            encoding,
            environ.get("wsgi.url_scheme", ""),  # relative IRIs resolve against the URL asked
            environ.get("HTTP_HOST", ""),
        )
        digest = self.memo.digest(key)
        hit = self.memo.get(digest)
        if hit is not None:
            start_response("200 OK", list(hit.headers))
            return [hit.body]
        seen: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            seen["status"], seen["headers"] = status, headers
            return start_response(status, headers, exc_info)

        body = self.app(environ, capture)
        headers = seen.get("headers") or []
        etag = next((value for name, value in headers if name.lower() == "etag"), None)
        length = next((value for name, value in headers if name.lower() == "content-length"), "")
        sent_in = next((value for name, value in headers if name.lower() == "content-encoding"), None)
        if not seen.get("status", "").startswith("200 ") or etag is None or sent_in not in (None, encoding):
            return body  # (coded otherwise than this header chooses: never handed to the next one)
        if not length.isdigit() or int(length) > ITEM_LIMIT:
            return body  # streamed, or larger than what is kept: never read whole to decide
        try:
            whole = b"".join(body)
        finally:
            getattr(body, "close", lambda: None)()
        media_type = next((value for name, value in headers if name.lower() == "content-type"), "")
        self.memo.put(digest, whole, media_type, tuple(headers), etag=etag)
        return [whole]
