"""What differs between SPARQL engines, in one table, and how we tell which one answers.

Every engine speaks the SPARQL 1.1 Protocol, but each puts its update and Graph Store endpoints
elsewhere, and some answer in their own dialect:
- Oxigraph's server: `/query`, `/update`, `/store?graph=` (Graph Store Protocol, with
  `no_transaction` its bulk loader); one update request is one transaction.
- Apache Jena Fuseki: a dataset `/ds` with `/ds/query`, `/ds/update`, `/ds/data?graph=`; TDB2
  runs one update request in one transaction: atomic too.
- Virtuoso: `/sparql` (anonymous reads), `/sparql-auth` (digest login, for updates),
  `/sparql-graph-crud-auth?graph-uri=` for the Graph Store Protocol. Its blank nodes come back
  as `nodeID://b123`, not a valid blank node label, so its results are mended on the way in
  (`mend`); it runs the operations of one update request one after another (publish.py moves
  nothing there: it switches a small publication record); its optimizer's join order gave wrong
  answers for some datasets, so every query is sent with `DEFINE sql:select-option "order"`
  (joined as written: our queries start from their selective part).
- Anything else: the URL given answers queries and updates; Graph Store writes go to the URL
  given with `--graph-store`, or else as `INSERT DATA` updates (slow, but any engine takes them).

`SparqlClient.connect` asks the engine once (`ASK {}`) and reads its `Server` header.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import IO, Protocol, cast
from urllib.parse import urlsplit, urlunsplit

from pyoxigraph import QueryResultsFormat


@dataclass(frozen=True)
class Engine:
    """One SPARQL engine's endpoints and dialect."""

    kind: str  # "oxigraph", "fuseki", "virtuoso"; "sparql" for an engine we know nothing special about
    query_url: str
    update_url: str
    graph_store_url: str | None  # None: write graphs with INSERT DATA on update_url
    graph_param: str = "graph"  # the Graph Store Protocol's graph parameter (Virtuoso: graph-uri)
    results: QueryResultsFormat = QueryResultsFormat.JSON
    version: str = ""
    # Parameters that make a Graph Store write go to the engine's bulk loader (Oxigraph's server:
    # no transaction, its loader's speed; a failed request may leave part of it, which the
    # count check before the switch catches)
    bulk_params: tuple[tuple[str, str], ...] = ()
    query_prologue: str = ""  # written before every query's text

    @property
    def results_media_type(self) -> str:
        return self.results.media_type

    def describe(self) -> str:
        """One line for a person: which engine, where its endpoints are."""
        store = self.graph_store_url or f"INSERT DATA on {self.update_url}"
        return (
            f"{self.kind} {self.version}".strip()
            + f" (query {self.query_url}, update {self.update_url}, graphs {store})"
        )


def _with_path(url: str, path: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


# Engines whose endpoints hang under one base path: what a given URL may end with, and the Graph
# Store path (Oxigraph's server: /query, /update, /store; a Fuseki dataset: /ds/query, /ds/update, /ds/data).
DATASET_LAYOUTS = {
    "oxigraph": (("/query", "/sparql"), "/store"),
    "fuseki": (("/query", "/sparql", "/update", "/data", "/get"), "/data"),
}


def engine_for(kind: str, url: str, server_header: str = "", graph_store: str | None = None) -> Engine:
    """The endpoints of engine `kind` whose query endpoint (or dataset) is `url`."""
    path = urlsplit(url).path.rstrip("/")
    version = server_header.split("/", 1)[1].split()[0] if "/" in server_header else ""
    if kind in DATASET_LAYOUTS:  # a base path with /query, /update and a Graph Store path under it
        endings, store = DATASET_LAYOUTS[kind]
        base = path
        for ending in endings:
            base = base.removesuffix(ending)
        engine = Engine(
            kind, _with_path(url, base + "/query"), _with_path(url, base + "/update"), _with_path(url, base + store)
        )
        if kind == "oxigraph":
            engine = replace(engine, bulk_params=(("no_transaction", ""), ("lenient", "")))
    elif kind == "virtuoso":
        engine = Engine(
            "virtuoso",
            _with_path(url, "/sparql"),
            _with_path(url, "/sparql-auth"),
            _with_path(url, "/sparql-graph-crud-auth"),
            graph_param="graph-uri",
            results=QueryResultsFormat.XML,  # its JSON says "typed-literal", from before SPARQL 1.1
            # Joins in the order written: its optimizer's own order, for some datasets (which
            # graph IRIs, which queries ran before), joined an OPTIONAL { GRAPH ?g { ... } } to
            # nothing and answered `edition-statistics` with another edition's figures
            query_prologue='DEFINE sql:select-option "order"\n',
        )
    else:
        engine = Engine("sparql", url, url, None)
    engine = replace(engine, version=version)
    return replace(engine, graph_store_url=graph_store) if graph_store else engine


def kind_from_server(server_header: str, headers: dict[str, str]) -> str:
    """Which engine answered, from its `Server` header (Fuseki also sends `Fuseki-Request-Id`)."""
    lowered = server_header.lower()
    if lowered.startswith("oxigraph"):
        return "oxigraph"
    if lowered.startswith("virtuoso"):
        return "virtuoso"
    if "fuseki" in lowered or any(k.lower() == "fuseki-request-id" for k in headers):
        return "fuseki"
    return "sparql"


VIRTUOSO_BNODE = b"<bnode>nodeID://"


class Readable(Protocol):
    """What pyoxigraph's parsers read of a stream: `read` (and `readable`)."""

    def read(self, size: int = -1, /) -> bytes: ...


class Mended:
    """A binary stream of Virtuoso's XML results with its blank node labels made valid
    (`nodeID://b1` → `b1`), read through in chunks: a label cut between two chunks is kept
    back until the next one, so nothing is buffered beyond a chunk."""

    def __init__(self, raw: Readable, chunk: int = 64 * 1024):
        self.raw, self.chunk, self.held = raw, chunk, b""

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(self.chunk if size is None or size < 0 else max(size, 1))
        if not data:
            rest, self.held = self.held, b""
            return rest
        data = (self.held + data).replace(VIRTUOSO_BNODE, b"<bnode>")
        keep = _partial_suffix(data, VIRTUOSO_BNODE)
        self.held = data[len(data) - keep :] if keep else b""
        out = data[: len(data) - keep] if keep else data
        return out if out or not self.held else self.read(size)

    def readable(self) -> bool:
        return True


def _partial_suffix(data: bytes, token: bytes) -> int:
    """The length of the longest end of `data` that is a proper beginning of `token`."""
    for length in range(min(len(token) - 1, len(data)), 0, -1):
        if data.endswith(token[:length]):
            return length
    return 0


def mend(engine: Engine, raw: Readable) -> IO[bytes]:
    """The engine's result stream as pyoxigraph's parsers read it (they call `read` only: the
    cast says so to a type checker that wants a whole file object)."""
    return cast(IO[bytes], Mended(raw) if engine.kind == "virtuoso" else raw)
