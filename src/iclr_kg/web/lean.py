"""The protocol's hot path: `GET /sparql?query=...` answered without Flask's request machinery.

A plain query by URL, with an Accept header and nothing else, is what SPARQL clients send most.
Flask's request path (the request context, URL matching, the `request` proxies, the response
object, the after-request hooks) cost a web process more than the engine's own evaluation of a
point lookup, measured. This WSGI layer, inside the app (`create_app` wraps `app.wsgi_app`), reads
such a request from the environ into the one read request the Flask view also makes
(web/readrequest.py: negotiation, the generation the request pinned, where it runs, the time
limit, admission), and writes the same headers. It keeps no answer itself: where a result cache
is configured, the response memo in front of it (web/cache.py) has looked this very request up
and missed, and it keeps the response if it carries an ETag, which the read request gives each
small answer that may be kept. (A second lookup here, under the Flask view's key, and a second
copy of each answer cost every uncached request, for the rare one the memo missed and that
lookup found.)
Anything else (other parameters, a page for a browser, a kept saved answer, a conditional
request, a query string that is not plain UTF-8) goes to Flask unchanged; so does every error:
its answer is the app's one error handler's.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from flask import Flask

from iclr_kg.errors import IclrKgError
from iclr_kg.query.answering import QueryRequest
from iclr_kg.web.http import MAX_QUERY_BYTES, NON_ASCII_ESCAPE
from iclr_kg.web.querying import base_url, negotiation, with_charset
from iclr_kg.web.readrequest import ReadRequest, read_request
from iclr_kg.web.state import AppState

COMMON = [("Vary", "Accept"), ("Access-Control-Allow-Origin", "*"), ("X-Content-Type-Options", "nosniff")]


class LeanQueries:
    """WSGI middleware: answers plain GET /sparql?query= requests itself, passes the rest on."""

    def __init__(self, app: WSGIApplication, flask_app: Flask, state: AppState):
        self.app, self.flask_app, self.state = app, flask_app, state

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        text = self._plain_query(environ)
        if text is None:
            return self.app(environ, start_response)
        chosen = negotiation(None, environ.get("HTTP_ACCEPT", ""))
        formats = {kind: None if isinstance(format, tuple) else format.name for kind, format in chosen.items()}
        if (formats["results"] or formats["rdf"]) is None or (text, ()) in self.state.answered:
            return self.app(environ, start_response)  # a 406, or a kept answer: Flask says it
        try:
            base = base_url(environ["wsgi.url_scheme"], environ["HTTP_HOST"], environ.get("SCRIPT_NAME", ""), "/sparql")
        except ValueError:  # a malformed Host (`[::1`, `e:99999`): Flask's path answers it as it does any
            return self.app(environ, start_response)
        query = QueryRequest(text=text, formats=formats, services=self.state.settings.services, base=base)
        try:
            read = read_request(
                self.state,
                self.state.pinned(environ),
                query,
                chosen,
                self.state.settings.query_timeout,
                environ.get("REMOTE_ADDR"),
            )
            return self._answer(read, environ, start_response)
        except IclrKgError as exc:
            return self._error(exc, environ, start_response)

    @staticmethod
    def _plain_query(environ: WSGIEnvironment) -> str | None:
        """The query of a request this layer answers, else None."""
        if environ.get("PATH_INFO") != "/sparql" or environ.get("REQUEST_METHOD") != "GET":
            return None
        raw = environ.get("QUERY_STRING", "")
        if not raw.startswith("query=") or "&" in raw or "HTTP_IF_NONE_MATCH" in environ or "HTTP_HOST" not in environ:
            return None
        encoded = raw.encode("latin-1")
        if not encoded.isascii() or NON_ASCII_ESCAPE.search(encoded):
            return None  # may not be UTF-8: Flask checks it and says so
        text = _unquote(raw[6:])
        return text if text and len(text) <= MAX_QUERY_BYTES else None

    def _answer(self, read: ReadRequest, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        running = read.start()
        chosen = read.chosen(running)  # not acceptable for this kind: the Flask view's 406, raised
        body = running.prefetched
        if body is not None:
            return _respond(start_response, body, chosen.media_type, read.etag(running, chosen))
        start_response("200 OK", [("Content-Type", with_charset(chosen.media_type)), *COMMON])
        return running.body(chosen.name)

    def _error(self, exc: IclrKgError, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """The app's own answer to `exc` (web/__init__.py's handler and after-request hooks)."""
        with self.flask_app.request_context(environ):
            response = self.flask_app.handle_user_exception(exc)
            response = self.flask_app.process_response(response)  # type: ignore[arg-type]
        return response(environ, start_response)


def _unquote(encoded: str) -> str | None:
    """A form value decoded (`+` a space, %XX a byte, UTF-8), in C: every escape becomes a
    `\\x` escape that the `unicode_escape` codec reads (urllib's decoder loops over the escapes
    in Python: a query with our prefixes has hundreds). Text with a backslash of its own, or an
    escape that is not two hex digits, is left to urllib; None if it is not UTF-8."""
    if "\\" not in encoded:
        try:
            latin = encoded.replace("+", " ").replace("%", "\\x").encode("ascii").decode("unicode_escape")
            return latin.encode("latin-1").decode("utf-8")
        except UnicodeError:
            pass
    try:
        return urllib.parse.unquote_plus(encoded, errors="strict")
    except UnicodeDecodeError:
        return None


def _respond(start_response: StartResponse, body: bytes, media_type: str, etag: str | None) -> list[bytes]:
    headers = [("Content-Type", with_charset(media_type)), ("Content-Length", str(len(body))), *COMMON]
    if etag is not None:
        headers.append(("ETag", etag))
    start_response("200 OK", headers)
    return [body]
