"""A query answered: evaluated on a store and its result sent as messages (whole, in chunks, or as
rows for a page), in a worker process or on a thread of a web process alike. The messages are
the pipe's protocol (pool.py's docstring)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryBoolean,
    QuerySolutions,
    RdfFormat,
    Variable,
    parse,
    serialize,
)

from iclr_kg import terms
from iclr_kg.errors import (
    EngineError,
    EvaluationFailed,
    Failure,
    IclrKgError,
    InternalError,
    QueryError,
    ServiceFailed,
)
from iclr_kg.graph import QueryAnswer, ReadableGraph
from iclr_kg.query.streaming import ClientGone
from iclr_kg.sparql.formats import RDF_FORMATS, RESULT_FORMATS
from iclr_kg.sparql.lint import Problem, parsed_problems, problem_of
from iclr_kg.store import run_query

CHUNK = 64 * 1024


@dataclass
class QueryRequest:
    """Everything a worker needs to run one query; plain data, so it crosses the pipe."""

    text: str
    include_inferred: bool = True
    default_graph: list[str] | None = None
    named_graphs: list[str] | None = None
    substitutions: dict[str, str] = field(default_factory=dict)  # variable → term in N-Triples syntax
    row_limit: int | None = None  # for pages: send the first rows as terms instead of a serialization
    services: tuple[str, ...] = ()  # SERVICE endpoints the query may call
    base: str | None = None  # the IRI relative IRIs resolve against (the endpoint's URL)
    # The format to use for each kind of result ("results", "rdf"), chosen before the query runs
    # (None: not acceptable); lets the worker answer in one message instead of three.
    formats: dict[str, str | None] | None = None
    # A lint (the editor's, a page's: lint.parsed_problems), under the same limits as any query,
    # the store never touched: the syntax checked by preparing the text against an empty store
    # and never reading its result (`syntax_only`), the patterns read against the domains and
    # ranges of the `ontology` file (where given). Answered by one `Checked`, or a Failure.
    syntax_only: bool = False
    ontology: str | None = None

    @property
    def lint(self) -> bool:
        """Whether this is a lint rather than a query to answer."""
        return self.syntax_only or self.ontology is not None


@dataclass(frozen=True)
class Started:
    kind: str  # "results" (SELECT, ASK) or "rdf" (CONSTRUCT, DESCRIBE)
    format: str | None = None  # the chosen format; None: nothing the client accepts


@dataclass(frozen=True)
class Complete:
    kind: str
    format: str
    body: bytes  # the whole serialization, at most one chunk


@dataclass(frozen=True)
class Data:
    body: bytes


@dataclass(frozen=True)
class Done:
    pass


@dataclass(frozen=True)
class Rows:
    table: dict[str, Any]  # result_rows()


@dataclass(frozen=True)
class Checked:
    problems: tuple[Problem, ...]  # a lint's (QueryRequest.lint), in reading order


SERVICE_TROUBLES = (
    ("lookup address", "its host name could not be resolved (is this machine offline?)"),
    ("name or service not known", "its host name could not be resolved (is this machine offline?)"),
    ("connection refused", "it refused the connection"),
    ("timed out", "it did not answer in time"),
    ("certificate", "its TLS certificate was not accepted"),
)


def service_sentence(detail: str) -> str:
    """What a person reads when a SERVICE endpoint fails: why, in words, then the raw detail."""
    lowered = detail.lower()
    why = next((words for marker, words in SERVICE_TROUBLES if marker in lowered), "it failed")
    return (
        f"The query calls another SPARQL endpoint (SERVICE) and {why}. Our own graph is fine: "
        f"try again later, or remove the SERVICE part of the query. (Detail: {detail})"
    )


Message = Started | Complete | Data | Done | Rows | Checked | Failure


def _term(text: str) -> Any:
    triple = next(iter(parse(f"<urn:s> <urn:p> {text} .", format=RdfFormat.N_TRIPLES)))
    return triple.object


def run_request(store: ReadableGraph, request: QueryRequest) -> QueryAnswer:
    """Run a QueryRequest on a store: the one place its plain data become pyoxigraph terms."""
    return run_query(
        store,
        request.text,
        include_inferred=request.include_inferred,
        substitutions={Variable(k): _term(v) for k, v in request.substitutions.items()} or None,
        default_graph=[NamedNode(g) for g in request.default_graph] if request.default_graph is not None else None,
        named_graphs=[NamedNode(g) for g in request.named_graphs] if request.named_graphs is not None else None,
        services=request.services,
        base=request.base,
    )


def result_kind(result: QueryAnswer) -> str:
    """ "results" for SELECT / ASK, "rdf" for CONSTRUCT / DESCRIBE."""
    return "results" if isinstance(result, (QueryBoolean, QuerySolutions)) else "rdf"


def write_result(result: QueryAnswer, output: IO[bytes], fmt: str) -> None:
    """Serialize a query result in format `fmt` (a name from formats.py) with pyoxigraph."""
    if isinstance(result, (QueryBoolean, QuerySolutions)):
        result.serialize(output, RESULT_FORMATS[fmt].results)
    else:
        chosen = RDF_FORMATS[fmt]
        serialize(result, output, chosen.rdf, prefixes=chosen.prefixes)


def _plain(term: Any) -> tuple[str, str, str | None, str | None] | None:
    """A term as (kind, value, language, datatype) for the pages."""
    if term is None:
        return None
    if isinstance(term, NamedNode):
        return ("iri", term.value, None, None)
    if isinstance(term, BlankNode):
        return ("bnode", term.value, None, None)
    if isinstance(term, Literal):
        return ("literal", term.value, term.language, term.datatype.value)
    return ("other", str(term), None, None)


class _ChunkWriter:
    """A binary file object that sends what is written in chunks (over the pipe, or a queue).

    Nothing is sent until the first chunk is full: a small result then goes in one `Complete`
    message together with its kind and format; a large one is announced with `Started` and
    streamed as `Data`, then `Done`.
    """

    def __init__(self, send: Callable[[Message], None], head: Started):
        self.send, self.buffer, self.head = send, bytearray(), head
        self.started = False

    def write(self, data: bytes) -> int:
        self.buffer += data
        if len(self.buffer) >= CHUNK:
            self._send()
        return len(data)

    def flush(self) -> None:
        """Serializers flush when they end; sending is decided by size and `finish`, so a
        small result still goes whole in one message."""

    def _send(self) -> None:
        if self.buffer:
            if not self.started:
                self.send(self.head)
                self.started = True
            self.send(Data(bytes(self.buffer)))
            self.buffer.clear()

    def finish(self) -> None:
        if not self.started:
            self.send(Complete(self.head.kind, self.head.format or "", bytes(self.buffer)))
            return
        self._send()
        self.send(Done())


def _evaluation_error(exc: Exception) -> IclrKgError:
    """What an error raised while a result is written means (evaluation is lazy: a SERVICE call
    fails here, and a remote engine's answer is parsed here)."""
    if isinstance(exc, SyntaxError):
        return EngineError(f"the SPARQL engine's answer broke off (an error inside it?): {exc}")
    if isinstance(exc, OSError):  # network errors are OSErrors
        return ServiceFailed(service_sentence(f"{type(exc).__name__}: {exc}"))
    return EvaluationFailed(f"the query failed while running: {type(exc).__name__}: {exc}")


def answer(store: ReadableGraph, request: QueryRequest, send: Callable[[Message], None]) -> None:
    """Evaluate `request` on `store` and `send` what comes of it as the messages above: the one
    place a query is answered, in a worker process (`send`: its pipe) or on a thread of a web
    process (`query/local.py`: a queue). MemoryError and the channel's own errors (the reader
    went away) are raised; anything else is sent as a Failure."""
    try:
        if request.lint:
            send(Checked(tuple(checked(store, request))))
            return
        result = run_request(store, request)
    except (QueryError, EngineError) as exc:
        send(Failure.of(exc))
        return
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a defect of ours: 500, and its traceback in the log
        traceback.print_exc()
        defect = f"a defect in the query worker ({type(exc).__name__}: {exc}); the server's log has its traceback"
        send(Failure.of(InternalError(defect)))
        return
    kind = result_kind(result)
    try:
        if request.row_limit is not None:
            send(Started(kind))
            send(Rows(result_rows(result, request.row_limit)))
            return
        fmt = (request.formats or {}).get(kind)
        if fmt is None:
            send(Started(kind, None))
            return
        writer = _ChunkWriter(send, head=Started(kind, fmt))
        write_result(result, cast(IO[bytes], writer), fmt)  # pyoxigraph calls its write and flush only
        writer.finish()
    except (BrokenPipeError, EOFError, MemoryError, ClientGone):
        raise
    except Exception as exc:  # noqa: BLE001 - evaluation is lazy: SERVICE calls fail here
        send(Failure.of(_evaluation_error(exc)))


def checked(store: ReadableGraph, request: QueryRequest) -> list[Problem]:
    """A lint's problems (QueryRequest.lint): the syntax by preparing the text on `store` (an
    empty one), the domains and ranges of the ontology file (read once per file and version)."""

    def syntax(text: str) -> Problem | None:
        try:
            run_request(store, request)  # prepared, never read: nothing evaluated past what preparing does
        except QueryError as exc:
            return problem_of(exc)
        return None

    ontology = terms.read(Path(request.ontology)) if request.ontology is not None else None
    return parsed_problems(request.text, syntax if request.syntax_only else None, ontology)


def result_rows(result: QueryAnswer, limit: int) -> dict[str, Any]:
    """The first `limit` rows of a result as plain terms (`_plain`), for the pages: the one
    place a result becomes a table, in a worker or in-process."""
    if isinstance(result, QueryBoolean):
        return {"boolean": bool(result)}
    rows: list[list[Any]] = []
    if isinstance(result, QuerySolutions):
        columns = [v.value for v in result.variables]
        for row in result:
            if len(rows) > limit:
                break
            rows.append([_plain(row[c]) for c in columns])
    else:
        columns = ["subject", "predicate", "object"]
        for triple in result:
            if len(rows) > limit:
                break
            rows.append([_plain(triple.subject), _plain(triple.predicate), _plain(triple.object)])
    graph = not isinstance(result, QuerySolutions)
    return {"columns": columns, "rows": rows[:limit], "truncated": len(rows) > limit, "graph": graph}
