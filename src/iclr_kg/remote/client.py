"""The SPARQL 1.1 Protocol and Graph Store Protocol over HTTP (requests), streaming both ways.

Results are parsed as they arrive by pyoxigraph's own parsers, so a remote answer is the same
kind of object (`QuerySolutions`, `QueryBoolean`, triples) as an embedded one, and everything
that serializes or tabulates results works on it unchanged.

Credentials: `user:password` is sent as HTTP Basic, or as Digest where the engine asks for it
(Virtuoso's `/sparql-auth`); `bearer:TOKEN` as a bearer token. The target URL is the one the
operator configured (an allow-list of one): nothing a web user sends picks where we connect.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterable, Iterator
from typing import Any

import requests
from pyoxigraph import QueryResultsFormat, RdfFormat, parse, parse_query_results

from iclr_kg.errors import EngineError, QueryError
from iclr_kg.remote.engines import Engine, engine_for, kind_from_server, mend
from iclr_kg.remote.names import Names

RDF_ACCEPT = "application/n-triples"  # CONSTRUCT and DESCRIBE: the one line format every engine writes

# When every call to the engine made for one web request must end: a page or a search makes
# several, each bounded by the client's timeout, so a slow engine held a request for as many
# times that bound (round four's item 12). Set by `time_budget`; None outside a request.
_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar("engine_deadline", default=None)


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Every engine call made inside shares one time limit of `seconds`, however many there are."""
    token = start_budget(seconds)
    try:
        yield
    finally:
        end_budget(token)


def start_budget(seconds: float) -> contextvars.Token:
    """`time_budget` for a web request, whose start and end are two hooks: give the token to `end_budget`."""
    return _DEADLINE.set((time.monotonic() + seconds, seconds))


def end_budget(token: contextvars.Token) -> None:
    try:
        _DEADLINE.reset(token)
    except ValueError:  # ended in another context (a streamed body closed elsewhere)
        _DEADLINE.set(None)


class _Bearer(requests.auth.AuthBase):
    def __init__(self, token: str):
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


def make_auth(credentials: str | None, challenge: str = "") -> requests.auth.AuthBase | None:
    """`user:password` or `bearer:TOKEN` as requests' auth (Digest where the engine's
    `WWW-Authenticate` challenge asks for it, else Basic); None for no credentials."""
    if not credentials:
        return None
    user, sep, secret = credentials.partition(":")
    if not sep:
        raise EngineError("credentials for the SPARQL engine are `user:password` or `bearer:TOKEN`")
    if user.lower() == "bearer":
        return _Bearer(secret)
    if challenge.lower().startswith("digest"):
        return requests.auth.HTTPDigestAuth(user, secret)
    return requests.auth.HTTPBasicAuth(user, secret)


class SparqlClient:
    """One engine, reached over HTTP. `timeout` bounds connecting and each wait for bytes; the
    query pool bounds a whole query (it stops the worker that waits)."""

    def __init__(self, engine: Engine, auth: str | None = None, timeout: float = 60.0, challenge: str = ""):
        self.engine = engine
        self.timeout = timeout
        self.session = requests.Session()
        self.session.auth = make_auth(auth, challenge)
        self.session.headers["User-Agent"] = "iclr-kg (SPARQL client)"

    @classmethod
    def connect(
        cls, url: str, auth: str | None = None, graph_store: str | None = None, timeout: float = 60.0
    ) -> SparqlClient:
        """Ask the engine at `url` which it is (`ASK {}`), and a client for its endpoints."""
        probe = requests.Session()
        try:
            response = probe.get(
                url,
                params={"query": "ASK {}"},
                headers={"Accept": "application/sparql-results+xml, application/sparql-results+json"},
                timeout=timeout,
            )
        except requests.RequestException as exc:
            raise EngineError(f"the SPARQL engine at {url} cannot be reached: {_reason(exc)}") from None
        if response.status_code >= 400:
            raise EngineError(
                f"{url} does not answer a SPARQL query (HTTP {response.status_code}): is it the query endpoint?"
            )
        server = response.headers.get("server", "")
        engine = engine_for(kind_from_server(server, dict(response.headers)), url, server, graph_store)
        challenge = ""
        if auth:  # which scheme the write endpoint asks for (Virtuoso: Digest)
            with contextlib.suppress(requests.RequestException):
                challenge = probe.get(engine.update_url, timeout=timeout).headers.get("www-authenticate", "")
        return cls(engine, auth=auth, timeout=timeout, challenge=challenge)

    # -- queries -------------------------------------------------------------------------

    def query(
        self,
        text: str,
        *,
        kind: str,
        default_graphs: Iterable[str] = (),
        named_graphs: Iterable[str] = (),
        answers: Names | None = None,
    ) -> Any:
        """Run a query; `kind` is "results" (SELECT, ASK) or "rdf" (CONSTRUCT, DESCRIBE). The
        answer streams: QuerySolutions or QueryBoolean, or an iterator of triples; `answers`:
        the publication's graph names, renamed back in it."""
        accept = self.engine.results_media_type if kind == "results" else RDF_ACCEPT
        data = [("query", self.engine.query_prologue + text)]
        data += [("default-graph-uri", g) for g in default_graphs]
        data += [("named-graph-uri", g) for g in named_graphs]
        deadline, seconds = self._deadline()
        wait = min(self.timeout, deadline - time.monotonic())
        try:
            response = self._send(
                "POST", self.engine.query_url, data=data, headers={"Accept": accept}, stream=True, timeout=wait
            )
        except EngineError:
            if time.monotonic() < deadline - 0.05:
                raise
            raise EngineError(f"the SPARQL engine did not answer within {seconds:g} s") from None
        response.raw.decode_content = True
        body: Any = Deadlined(response, deadline, seconds)
        if answers is not None:
            body = answers.answers(body, xml=kind == "results" and self.engine.results == QueryResultsFormat.XML)
        if kind == "results":
            return parse_query_results(mend(self.engine, body), self.engine.results)
        return (quad.triple for quad in parse(body, RdfFormat.N_TRIPLES))

    def _deadline(self) -> tuple[float, float]:
        """When this call must end, and the limit that says so: the client's timeout, or the
        request's shared budget (`time_budget`) where it ends sooner; EngineError if spent."""
        own = (time.monotonic() + self.timeout, self.timeout)
        shared = _DEADLINE.get()
        if shared is None or shared[0] >= own[0]:
            return own
        if shared[0] <= time.monotonic():
            raise EngineError(f"the SPARQL engine did not finish this request's queries within {shared[1]:g} s")
        return shared

    def select(self, text: str, answers: Names | None = None, **dataset: Iterable[str]) -> Iterator[dict[str, Any]]:
        """The rows of a SELECT as {variable: term} (unbound ones left out). An answer that does
        not parse as SPARQL results is the engine's fault: EngineError, not the parser's error."""
        try:
            solutions = self.query(text, kind="results", answers=answers, **dataset)
            names = [v.value for v in solutions.variables]
            for row in solutions:
                yield {name: row[name] for name in names if row[name] is not None}
        except SyntaxError as exc:
            raise EngineError(
                f"the SPARQL engine at {self.engine.query_url} answered with broken results: {exc}"
            ) from None

    def update(self, text: str, timeout: float | None = None) -> None:
        """Run a SPARQL update (in one request: one transaction where the engine has them);
        `timeout`: seconds to wait for its answer, where an update may take long (the swap)."""
        self._send("POST", self.engine.update_url, data={"update": text}, timeout=timeout or self.timeout).close()

    # -- Graph Store Protocol --------------------------------------------------------------

    def write_graph(self, graph: str, ntriples: bytes, replace: bool) -> None:
        """PUT (replace) or POST (add) N-Triples into `graph` (a body in memory: Digest
        authentication may have to send it twice)."""
        if self.engine.graph_store_url is None:
            self._insert_data(graph, ntriples, replace)
            return
        self._send(
            "PUT" if replace else "POST",
            self.engine.graph_store_url,
            params=[(self.engine.graph_param, graph), *self.engine.bulk_params],
            data=ntriples,
            headers={"Content-Type": "application/n-triples"},
        ).close()

    def _insert_data(self, graph: str, ntriples: bytes, replace: bool) -> None:
        body = ntriples.decode("utf-8")
        drop = f"DROP SILENT GRAPH <{graph}> ;\n" if replace else ""
        self.update(f"{drop}INSERT DATA {{ GRAPH <{graph}> {{\n{body}\n}} }}")

    def count(self, graph: str) -> int:
        """Triples in `graph` on the engine."""
        rows = list(self.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"))
        return int(rows[0]["n"].value) if rows else 0

    # -- HTTP ------------------------------------------------------------------------------

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        try:
            response = self.session.request(method, url, **{"timeout": self.timeout, **kwargs})
        except requests.RequestException as exc:
            raise EngineError(f"the SPARQL engine at {url} failed: {_reason(exc)}") from None
        if response.status_code < 400:
            return response
        detail = response.text[:500].strip()
        response.close()
        if response.status_code == 400:
            raise QueryError(f"the SPARQL engine refused the request: {detail}")
        if response.status_code in (401, 403):
            raise EngineError(
                f"the SPARQL engine at {url} refused our credentials (HTTP {response.status_code}): "
                "give `user:password` with --auth (ICLR_KG_BACKEND_AUTH)"
            )
        raise EngineError(f"the SPARQL engine at {url} answered HTTP {response.status_code}: {detail}")


CHUNK = 64 * 1024


class Deadlined:
    """A response body that may be read until `deadline` (a `time.monotonic()` value) and no
    longer: requests' timeout bounds each wait for bytes, so an engine that trickles its answer
    a byte at a time would hold the reader (a web thread, for pages) without end."""

    def __init__(self, response: requests.Response, deadline: float, seconds: float):
        self.response, self.deadline, self.seconds = response, deadline, seconds

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self.deadline:
            self.response.close()
            raise EngineError(f"the SPARQL engine did not finish its answer within {self.seconds:g} s")
        # read1: what one wait for bytes brings (read(n) would wait on until n bytes had come)
        return self.response.raw.read1(size if size and size > 0 else CHUNK)

    def readable(self) -> bool:
        return True


def _reason(exc: requests.RequestException) -> str:
    text = str(exc)
    if isinstance(exc, requests.ConnectionError) and "refused" in text.lower():
        return "it refused the connection (is it running?)"
    if isinstance(exc, requests.Timeout):
        return "it did not answer in time"
    return text
