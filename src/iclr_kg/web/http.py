"""Reading SPARQL Protocol requests and writing plain answers: shared by every blueprint."""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from flask import Response, render_template, request
from pyoxigraph import NamedNode

from iclr_kg import vocab
from iclr_kg.errors import IclrKgError, QueryError, RequestError, TooLarge
from iclr_kg.sparql.formats import RDF_FORMATS, RESULT_FORMATS
from iclr_kg.sparql.saved import parse_iri
from iclr_kg.web.i18n import translate

MAX_QUERY_BYTES = 256 * 1024


PROTOCOL_BLUEPRINTS = ("sparql", "writes")  # machine clients: errors as plain text, whatever Accept says


def error_response(exc: IclrKgError) -> Response:
    """The one answer to an error of ours: its HTTP status and message, plain text for protocol
    clients and the error page for a browser on a page, with Retry-After when it has one."""
    # best_match, not `best`: werkzeug orders a browser's Accept by specificity first, so Chromium's
    # `best` is application/signed-exchange;v=b3 (q=0.7), and its pages' errors came as plain text
    reads_html = request.accept_mimetypes.best_match(["text/html", "text/plain"]) == "text/html"
    browser = reads_html and request.blueprint not in PROTOCOL_BLUEPRINTS
    if browser:
        near = getattr(exc, "near", "")
        message = str(exc)
        if isinstance(exc, RequestError) and exc.wording:  # said in the page's language
            message = translate(exc.wording).format(**exc.values)
        response = Response(
            render_template("error.html", status=exc.http_status, message=message, suggestions=_suggestions(near)),
            status=exc.http_status,
            mimetype="text/html",
        )
    else:
        response = text_error(exc.http_status, str(exc))
    if exc.retry_after is not None:
        response.headers["Retry-After"] = str(exc.retry_after)
    response.headers.update(exc.headers)
    return response


def _suggestions(words: str) -> list[Any]:
    """Entities whose names come close to `words` (a path's parts), for a 404 page: for an
    entity's address (`person/yang-sung`), first the entities of its kind whose keys are close
    (Yang Song), then those whose names match the key's words."""
    if not words:
        return []
    from iclr_kg.web.state import state  # here: the state module imports the blueprints' helpers

    index = state().index()
    if index is None:
        return []
    kind, _, key = words.partition("/")
    close = []
    if key and kind in vocab.ENTITY_KINDS:
        close, words = index.close_keys(kind, key), key
    named = index.search(" ".join(re.split(r"[-_/]+", words)), limit=8)
    return (close + [hit for hit in named if hit.iri not in {c.iri for c in close}])[:8]


def wants_html(kinds: tuple[str, ...] = ("results", "rdf")) -> bool:
    """Whether the client asks for a page rather than data of these kinds: `format=html`, or an
    Accept header where text/html beats every format we could send instead (none: a page)."""
    asked = requested_format()
    if asked:
        return asked.strip().lower() == "html"
    offers = ["text/html"]
    for kind in kinds:
        offers += [f.media_type for f in (RESULT_FORMATS if kind == "results" else RDF_FORMATS).values()]
    return request.accept_mimetypes.best_match(offers) in (None, "text/html")


def text_error(status: int, message: str) -> Response:
    return Response(message.rstrip() + "\n", status=status, mimetype="text/plain")


def requested_format() -> str | None:
    """`format`, `output` or `results` (clients send all three; first non-empty wins)."""
    for name in ("format", "output", "results"):
        for value in request.values.getlist(name):
            if value.strip():
                return value
    return None


def graph_list(name: str) -> list[NamedNode] | None:
    values = request.values.getlist(name)
    if not values:
        return None
    return [parse_iri(v, name) for v in values]


def read_query() -> str | None:
    """The one query of the request, from the URL, a form or the body; 400 on two or none."""
    found: list[str] = []
    _check_percent_encoding(request.query_string)
    if request.method == "POST" and request.mimetype == "application/x-www-form-urlencoded":
        _check_percent_encoding(request.get_data(cache=True))
    if request.method == "POST" and request.mimetype == "application/sparql-query":
        found.append(utf8_body("query"))
        found += request.args.getlist("query")
    else:
        found += request.args.getlist("query")
        if request.method == "POST":
            found += request.form.getlist("query")
    if len(found) > 1:
        raise QueryError("the request carries more than one query")
    if not found:
        return None
    if len(found[0].encode("utf-8")) > MAX_QUERY_BYTES:
        raise TooLarge(f"the query is longer than {MAX_QUERY_BYTES} bytes")
    return found[0]


def utf8_body(what: str) -> str:
    """The request body as text: the protocol requires UTF-8 (a charset other than it is a 400)."""
    charset = request.mimetype_params.get("charset", "utf-8").lower().replace("_", "-")
    if charset not in ("utf-8", "utf8"):
        raise QueryError(f"the {what} must be sent as UTF-8, not {charset}")
    try:
        return request.get_data(cache=False).decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError(f"the {what} is not valid UTF-8") from None


JSON_MAX_NESTING = 32


def json_object(what: str, max_nesting: int = JSON_MAX_NESTING) -> dict:
    """The request body as a JSON object, or RequestError saying what is wrong with it (not JSON,
    not an object, nested deeper than any request of ours: Python's parser recurses, and a
    body of ten thousand `[` took the process's stack)."""
    text = utf8_body(what)
    deepest = json_depth(text)
    if deepest > max_nesting:
        raise RequestError(f"the {what} nests {deepest} levels deep; at most {max_nesting} are accepted")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RequestError(f"the {what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise RequestError(f"the {what} must be a JSON object, not {type(value).__name__}")
    return value


def json_depth(text: str) -> int:
    """How deep JSON text nests its arrays and objects: one linear scan, strings skipped."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
        i += 1
    return deepest


_XML_TAG = re.compile(r"<(/?)([^<>]*?)(/?)>")


def xml_depth(text: str) -> int:
    """How deep XML text nests its elements (comments, declarations and instructions skipped)."""
    depth = deepest = 0
    for tag in _XML_TAG.finditer(text):
        closing, inside, empty = tag.groups()
        if inside[:1] in ("!", "?") or empty:
            continue
        depth += -1 if closing else 1
        deepest = max(deepest, depth)
    return deepest


NON_ASCII_ESCAPE = re.compile(rb"%[89a-fA-F]")


def _check_percent_encoding(raw: bytes) -> None:
    """A query string or form whose %-escapes are not UTF-8 is a 400: decoding them leniently
    would run a query other than the one sent (U+FFFD where the bytes were).

    ASCII text whose escapes all stand for ASCII bytes (`%00`-`%7F`) decodes to ASCII, which is
    UTF-8: that is checked in C, and only other text is decoded here (a twentieth of a
    millisecond for a query with our prefixes, on every request)."""
    if raw.isascii() and not NON_ASCII_ESCAPE.search(raw):
        return
    try:
        for part in raw.split(b"&"):
            urllib.parse.unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError("the request's %-escapes are not valid UTF-8") from None
