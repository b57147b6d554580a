"""Every error the user (a curator, an operator, an HTTP client) can act on, in one hierarchy.

Each class says how the CLI exits (`exit_code`) and what HTTP status the web app answers
(`http_status`), so neither is chosen anywhere else: the CLI prints one line and exits with the
code, the web app's one error handler answers the status with the message.

    IclrKgError                      exit 1, HTTP 500
    ├── InternalError                a defect of ours (logged with its traceback where it happened)
    ├── DataError                    exit 2: a curated file is wrong (file:line: field: message)
    ├── ValidationFailed             the data violate the SHACL shapes (a readable report)
    ├── InconsistentGraph            OWL RL reasoning found a contradiction
    ├── UnsupportedSchema            the fast reasoner or validator cannot run this schema
    │   ├── UnsupportedOntology        (use --reasoner owlrl)
    │   └── UnsupportedShapes          (use --validator pyshacl)
    ├── SettingsError                a setting (flag or ICLR_KG_*) has a value no command can use
    ├── ImportFailed                 exit 3: an import could not fetch, or would not build
    │   └── NothingListed              the venue lists no submission yet (`--venue all` skips it)
    ├── ExternalServiceError         HTTP 502: a service we call failed us
    │   ├── WikidataError              Wikidata's API, in link-wikidata
    │   └── EngineError                the SPARQL engine we publish to or serve from
    ├── RequestError                 HTTP 400: the request (or the query in it) is wrong
    │   ├── QueryError                 a query or update that does not parse or cannot run as given
    │   ├── BadIdentifier              not an identifier of its scheme (an ORCID whose checksum fails)
    │   ├── UnknownFormat              `format=` names no format for this kind of result
    │   ├── NotAcceptable              HTTP 406: nothing the `Accept` header allows can be made
    │   ├── NotFound                   HTTP 404: no such graph, sitemap or permalink
    │   ├── Unauthorized               HTTP 401: a write without the update token
    │   ├── Forbidden                  HTTP 403: writes are off (no update token is configured)
    │   ├── UnsupportedMediaType       HTTP 415: a body of a type we do not read
    │   ├── ReadOnlyBackend            HTTP 405: writes on a server that reads a remote engine
    │   ├── RequestTimeout             HTTP 408: the request's body did not arrive in time
    │   ├── TooLarge                   HTTP 413: over a size limit
    │   └── TooManyRequests            HTTP 429: this client has more at once than its share (with Retry-After)
    ├── Unavailable                  HTTP 503: not now (a limit, the store); try again later
    │   ├── StoreError                 the store is missing, damaged, or locked by a build
    │   │   ├── StoreDamaged             a table file of the generation served reads back damaged
    │   │   ├── UpdateTimeout            an update ran past its time limit and was stopped
    │   │   └── WriterEnded              the writer ended before answering; nothing was written
    │   ├── QueryTimeout               a query ran past its time limit and was stopped
    │   ├── QueryMemoryExceeded        a query grew its worker past the memory limit
    │   └── PoolBusy                   the endpoint is out of capacity: every worker busy (with Retry-After)
    └── EvaluationFailed             HTTP 500: the query parsed, then failed while running
        ├── ServiceFailed              HTTP 502: a federated SERVICE call failed
        └── StreamAborted              after the status was sent: the connection is cut
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Self


class IclrKgError(Exception):
    """An error reported as one line: `exit_code` for the CLI, `http_status` for the web."""

    exit_code = 1
    http_status = 500
    retry_after: int | None = None  # seconds, sent as Retry-After with the HTTP answer
    headers: dict[str, str] = {}  # sent with the HTTP answer (class-level: never changed in place)


class InternalError(IclrKgError):
    """A defect of ours, not of the request or the store: HTTP 500, its traceback logged where it
    happened (a query worker prints it to the server's log)."""


class DataError(IclrKgError):
    """A problem in a curated data file, located by file, line and field."""

    exit_code = 2

    def __init__(self, file: Path | str, line: int | None, field: str | None, message: str):
        self.file, self.line, self.field, self.message = Path(file), line, field, message
        where = f"{file}:{line}" if line else str(file)
        super().__init__(f"{where}: {field + ': ' if field else ''}{message}")


class ValidationFailed(IclrKgError):
    """The data violates the SHACL shapes; `report` is the readable report."""

    def __init__(self, report: str, count: int):
        self.report, self.count = report, count
        super().__init__(f"{count} SHACL violation(s):\n{report}")


class InconsistentGraph(IclrKgError):
    """OWL RL reasoning found a contradiction (e.g. an entity in two disjoint classes)."""


class UnsupportedSchema(IclrKgError):
    """A schema construct outside what the fast engines implement; the reference engine can."""


class UnsupportedOntology(UnsupportedSchema):
    """The ontology uses a construct the fast reasoner does not implement: use `--reasoner owlrl`."""


class UnsupportedShapes(UnsupportedSchema):
    """The shapes use a feature the SPARQL-compiled validator does not implement: use `--validator pyshacl`."""


class SettingsError(IclrKgError):
    """A setting (flag or ICLR_KG_* variable) has a value no command can use."""


class ImportFailed(IclrKgError):
    """An import could not fetch, or its result would not build; nothing was written."""

    exit_code = 3


class NothingListed(ImportFailed):
    """The venue lists no submission (a year not open yet): `--venue all` skips such a year."""


class ExternalServiceError(IclrKgError):
    """A service we call (Wikidata's API) failed or answered what it should not."""

    http_status = 502


class WikidataError(ExternalServiceError):
    """Wikidata could not be reached or answered with an error; nothing was written."""


class EngineError(ExternalServiceError):
    """The SPARQL engine we publish to or serve from cannot be reached, refused, or failed."""


class RequestError(IclrKgError):
    """The request, or the query or update in it, is wrong: the client can fix it. `wording` and
    `values`: the message as a page says it, its words translated and then filled
    (`worded`); the API says the English message."""

    http_status = 400
    wording = ""
    values: dict[str, str] = {}  # class-level default: `worded` gives an instance its own

    @classmethod
    def worded(cls, wording: str, **values: str) -> Self:
        """The error whose message is `wording` filled with `values` ("year={asked}: ...")."""
        error = cls(wording.format(**values))
        error.wording, error.values = wording, values
        return error


class QueryError(RequestError):
    """A query or update failed to parse or cannot run as given; the message is the parser's
    (`said`: the lint's problem where the lint rewrote it, to say it in the page's language)."""

    said: object = None


class BadIdentifier(RequestError):
    """A value that is not an identifier of its scheme (an ORCID whose checksum fails); the
    message says why, for a person (identifiers.py)."""


class UnknownFormat(RequestError):
    """`format=` (or `output=`, `results=`) names no format for this kind of result."""


class NotAcceptable(RequestError):
    """No format both the client's `Accept` header and we allow."""

    http_status = 406


class NotFound(RequestError):
    """What the request names is not here (a graph, a sitemap, a permalink, an entity). `near`:
    words a page may suggest entities for (the site's 404 lists those whose names come close);
    `wording` and `values` as for any RequestError ("No entity {iri} in this graph.")."""

    http_status = 404

    def __init__(self, message: str, near: str = "", wording: str = "", values: dict[str, str] | None = None):
        super().__init__(message)
        self.near = near
        self.wording, self.values = wording, values or {}


class Unauthorized(RequestError):
    """A write without the configured update token."""

    http_status = 401
    headers = {"WWW-Authenticate": 'Bearer realm="iclr-kg"'}


class Forbidden(RequestError):
    """Writes on an endpoint where none is allowed (no update token is configured)."""

    http_status = 403


class UnsupportedMediaType(RequestError):
    """A request body of a type we do not read."""

    http_status = 415


class ReadOnlyBackend(RequestError):
    """A write sent to a server whose graph lives on a remote engine: updates go to the embedded
    store, and `iclr-kg publish` sends the result."""

    http_status = 405


class RequestTimeout(RequestError):
    """The request's body was still arriving at the request timeout."""

    http_status = 408


class TooLarge(RequestError):
    """A query or body over its size limit."""

    http_status = 413


class TooManyRequests(RequestError):
    """This client has more queries (or request bodies) at once than one client may: its own
    excess, not the endpoint's capacity; it may send again as soon as one of its own ends."""

    http_status = 429
    retry_after = 2


class Unavailable(IclrKgError):
    """Not now: a limit was reached or the store cannot be read. Trying later may work."""

    http_status = 503


class StoreError(Unavailable):
    """The store is missing, corrupt, or locked by another build."""


class StoreDamaged(StoreError):
    """A table file of the generation being read does not read back (a checksum mismatch, a cut
    file): nothing is evaluated on it. The operator rebuilds; check-store says which generations
    read whole."""

    def __init__(self, generation: Path, found: str):
        super().__init__(
            f"the store looks damaged: generation {generation.name} does not read back ({found}); "
            "`iclr-kg check-store` names the generations that read whole, `iclr-kg build` makes a fresh one"
        )


class UpdateTimeout(StoreError):
    """The update ran past its time limit; its process was stopped."""


class WriterEnded(StoreError):
    """The store's writer ended before answering, with the update not in the journal: nothing written."""


class QueryTimeout(Unavailable):
    """The query ran past its time limit and was stopped."""


class QueryMemoryExceeded(Unavailable):
    """The query grew its worker past the memory limit; the worker was replaced."""


class PoolBusy(Unavailable):
    """The endpoint is out of capacity: every worker stayed busy for longer than a request may
    wait, or too many requests wait already."""

    retry_after = 5


class EvaluationFailed(IclrKgError):
    """The query parsed but failed while it ran."""


class ServiceFailed(EvaluationFailed):
    """A federated SERVICE endpoint could not be reached or answered with an error."""

    http_status = 502


class StreamAborted(EvaluationFailed):
    """A streamed result failed after its status was sent: the connection must be cut."""


def status_line(error: IclrKgError) -> str:
    """The HTTP status line of `error` ("413 Request Entity Too Large"), for answers written
    below Flask (raw WSGI)."""
    return f"{error.http_status} {HTTPStatus(error.http_status).phrase}"


@contextlib.contextmanager
def engine_errors(doing: str, fetching: str | None = None) -> Iterator[None]:
    """Translate what the embedded engine raises (pyoxigraph and RocksDB report damage and I/O
    failures as OSError or RuntimeError) into StoreError, so the CLI says one line and the web
    a 503: httpx's `map_exceptions` habit, one table at the boundary. Where the work fetches
    from elsewhere (an update's LOAD: `fetching` says what), an OSError is that fetch failing,
    as pyoxigraph reports it: the outside service's fault (ExternalServiceError, 502)."""
    try:
        yield
    except IclrKgError:
        raise
    except (OSError, RuntimeError) as exc:
        if fetching is not None and isinstance(exc, OSError):
            raise ExternalServiceError(f"{doing} could not fetch {fetching}: {exc}") from exc
        raise StoreError(f"{doing} failed: {exc} (`iclr-kg check-store` names any damage)") from exc


@dataclass(frozen=True)
class Failure:
    """An error as it crosses from a child process to its parent (a query worker, the writer, a
    store check, a build in a fresh process): the name of its class here and its message. The
    one envelope every child of ours sends; the parent raises `exception()`, the same class with
    the same message, so the CLI's exit code and the web's status are the child's error's own."""

    error: str
    message: str

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        """`exc` as sent: ours as it is; anything else is a defect (500, its traceback logged
        by the child)."""
        if isinstance(exc, IclrKgError):
            return cls(type(exc).__name__, str(exc))
        return cls(InternalError.__name__, f"{type(exc).__name__}: {exc}")

    def exception(self) -> IclrKgError:
        cls = _classes().get(self.error, InternalError)
        error = cls.__new__(cls)  # not cls(...): some take more than a message (DataError)
        Exception.__init__(error, self.message)
        return error


def _classes() -> dict[str, type[IclrKgError]]:
    found: dict[str, type[IclrKgError]] = {}
    pending: list[type[IclrKgError]] = [IclrKgError]
    while pending:
        cls = pending.pop()
        found[cls.__name__] = cls
        pending += cls.__subclasses__()
    return found
