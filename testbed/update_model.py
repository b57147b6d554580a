"""A reference for what an update does to iclr-kg's dataset, and random update requests to hold
the server to it (tests/web/test_update_semantics.py, bench/update_semantics.py).

The reference is written the plain way, sharing no code with the product's update paths:

- the dataset is the named graphs (the asserted ones, the ontology, the inferred graph) and a
  default graph that is the union of them all, for reading;
- an operation is run by pyoxigraph over that dataset in memory, as SPARQL 1.1 Update says. What
  it deletes from and inserts into each graph is read off two runs on copies: the operation
  itself (A) and the operation without its inserts (B): deleted = before - B, inserted = A - B
  (a triple deleted and inserted again by one operation is in both, as SPARQL means it);
- the rule for the default graph: what is deleted from it is deleted from every named graph
  that states it, first; what is inserted into it goes into the updates graph; nothing may be
  inserted into the inferred graph (the request is refused, the dataset unchanged); what is
  deleted from the inferred graph comes back while its premises stand; `owl:sameAs` to a literal
  is refused (OWL's sameAs links two resources);
- after each operation the inferred graph is the reasoner's closure of the asserted graphs with
  the ontology (owlrl, the reference reasoner, unless told otherwise), less what is asserted.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from http.client import HTTPConnection
from typing import Any, Protocol

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Store, Triple, parse

from iclr_kg import vocab
from iclr_kg.errors import IclrKgError
from iclr_kg.reasoning.reason import infer_triples

INFERRED = NamedNode(vocab.GRAPH_INFERRED)
ONTOLOGY = NamedNode(vocab.GRAPH_ONTOLOGY)
UPDATES = NamedNode(vocab.GRAPH_UPDATES)
SAME_AS = NamedNode(vocab.OWL + "sameAs")
DEFAULT = DefaultGraph()


@dataclass(frozen=True)
class Operation:
    """One operation of a request: its text, and the same operation without its inserts (what
    deletes alone do; None: it deletes nothing)."""

    text: str
    deletes_only: str | None
    # the operation's inserts into the default graph put into MARKER instead (None: it has none):
    # what it inserts there, even where the union already holds it
    marked: str | None = None
    # ADD, COPY, MOVE: the source graph; where it is not there the operation fails, unless SILENT
    source: str | None = None
    # it reads what the operations before it leave (a WHERE; ADD, COPY, MOVE from the default or
    # the inferred graph): the closure is brought up to date, and checked, before it
    reads: bool = False
    # ADD, COPY, MOVE to a named graph: it is there afterwards, empty or not (SPARQL 1.1 Update
    # 3.2.3-3.2.5; Oxigraph leaves it out when the source is empty)
    creates: str | None = None
    silent: bool = False


MARKER = "urn:update-model:inserted-into-the-default-graph"


_CLOSURES: dict[tuple[str, frozenset[Any]], set[Triple]] = {}  # the reasoner's closures, by what they closed


class Refused(Exception):
    """The reference refuses the request (a SPARQL error, or an insert into the inferred graph)."""


class Reference:
    """The dataset after each request, by the rules of the module docstring."""

    def __init__(self, named: Iterable[Quad], reasoner: str = "owlrl", graphs: Iterable[NamedNode] = ()):
        """`named`: the named graphs' quads; `graphs`: the named graphs there are (empty ones too)."""
        self.reasoner = reasoner
        self.store = Store()
        self.store.extend(q for q in named if q.graph_name not in (INFERRED, DEFAULT))
        for graph in graphs:
            if graph != INFERRED:
                self.store.add_graph(graph)
        self._close()

    def apply(self, operations: Sequence[Operation]) -> None:
        """Run a request's operations in order; Refused leaves the dataset as it was."""
        kept = list(self.store)
        kept_graphs = set(self.store.named_graphs())
        try:
            for number, operation in enumerate(operations, 1):
                self._apply(operation)
                if number == len(operations) or any(later.reads for later in operations[number:]):
                    self._close()
                else:
                    self._union()
        except Refused:
            self.store = Store()
            self.store.extend(kept)
            for graph in kept_graphs:
                self.store.add_graph(graph)
            raise

    def quads(self) -> list[Quad]:
        """Every quad of every named graph (the inferred graph included) and of the default graph."""
        return list(self.store)

    def held(self, graph: str) -> list[str]:
        """A named graph's triples (`graph` as written in a request: `<iri>`), as N-Triples lines,
        at most 40: what a reload puts back."""
        name = NamedNode(graph.strip("<>"))
        return [
            f"{q.subject} {q.predicate} {q.object} ." for q in self.store.quads_for_pattern(None, None, None, name)
        ][:40]

    def _apply(self, operation: Operation) -> None:
        before = _graphs(self.store)
        after = self._run(operation.text)
        absent = operation.source is not None and NamedNode(operation.source) not in set(self.store.named_graphs())
        if absent and not operation.silent:
            raise Refused(f"the graph <{operation.source}> does not exist")  # SPARQL 1.1 Update 3.2.3-3.2.5
        # SILENT: the source reads as an empty graph (COPY and MOVE empty the target, as pyoxigraph does)
        deleting = self._run(operation.deletes_only) if operation.deletes_only is not None else self.store
        without_inserts = _graphs(deleting)
        inserted = _graphs(after)
        names = set(before) | set(inserted) | set(without_inserts)
        deleted = {g: before.get(g, set()) - without_inserts.get(g, set()) for g in names}
        added = {g: inserted.get(g, set()) - without_inserts.get(g, set()) for g in names}
        added[DEFAULT] = set()
        if operation.marked is not None:
            added[DEFAULT] = {
                q.triple for q in self._run(operation.marked).quads_for_pattern(None, None, None, NamedNode(MARKER))
            }
        if added.get(INFERRED, set()) - before.get(INFERRED, set()):
            raise Refused("an insert into the inferred graph")
        if any(t.predicate == SAME_AS and isinstance(t.object, Literal) for ts in added.values() for t in ts):
            raise Refused("owl:sameAs to a literal")
        result: dict[Any, set[Triple]] = {}
        for graph, triples in before.items():
            if graph in (DEFAULT, INFERRED):
                continue
            result[graph] = triples - deleted.get(graph, set()) - deleted.get(DEFAULT, set())
        for graph, triples in added.items():
            if graph == INFERRED or not triples:
                continue
            target = UPDATES if graph == DEFAULT else graph
            result.setdefault(target, set()).update(triples)
        existing = set(after.named_graphs()) | {g for g, t in result.items() if t}
        if operation.creates is not None:
            existing.add(NamedNode(operation.creates))
        fresh = Store()
        fresh.extend(Quad(*t, g) for g, triples in result.items() for t in triples)
        for graph in existing - {INFERRED}:
            fresh.add_graph(graph)
        fresh.add_graph(INFERRED)  # always there, between operations too (its triples follow at the closure)
        self.store = fresh

    def _run(self, text: str) -> Store:
        """A copy of the dataset with `text` run on it by pyoxigraph (our prefixes declared)."""
        copy = Store()
        copy.extend(self.store)
        for graph in self.store.named_graphs():
            copy.add_graph(graph)
        try:
            copy.update(text, prefixes=vocab.QUERY_PREFIXES)
        except (SyntaxError, OSError, ValueError, RuntimeError) as exc:
            raise Refused(str(exc)) from None
        return copy

    def _union(self) -> None:
        """The default graph made the union of the named graphs again (the inferred graph as it is)."""
        graphs = _graphs(self.store)
        self.store.clear_graph(DEFAULT)
        self.store.extend(Quad(*t, DEFAULT) for g, triples in graphs.items() if g != DEFAULT for t in triples)

    def _close(self) -> None:
        """The inferred graph and the default graph made what the asserted graphs give."""
        graphs = _graphs(self.store)
        asserted = set().union(*(t for g, t in graphs.items() if g not in (DEFAULT, INFERRED, ONTOLOGY)))
        key = frozenset(asserted) | frozenset((ONTOLOGY, t) for t in graphs.get(ONTOLOGY, set()))
        derived = _CLOSURES.get((self.reasoner, key))
        if derived is None:
            schema = list(graphs.get(ONTOLOGY, set()))
            try:
                derived = set(infer_triples(list(asserted), schema, self.reasoner)) - asserted
            except IclrKgError as exc:  # inconsistent (disjoint classes...): the request is refused
                raise Refused(str(exc)) from None
            if len(_CLOSURES) > 256:
                _CLOSURES.clear()
            _CLOSURES[(self.reasoner, key)] = derived
        self.store.remove_graph(INFERRED)
        self.store.clear_graph(DEFAULT)
        self.store.add_graph(INFERRED)  # always there, empty or not
        self.store.extend(Quad(*t, INFERRED) for t in derived)
        union = set().union(*(t for g, t in graphs.items() if g not in (DEFAULT, INFERRED))) | derived
        self.store.extend(Quad(*t, DEFAULT) for t in union)


def _graphs(store: Store) -> dict[Any, set[Triple]]:
    out: dict[Any, set[Triple]] = {}
    for quad in store:
        out.setdefault(quad.graph_name, set()).add(quad.triple)
    return out


def canonical(quads: Iterable[Quad]) -> Counter[tuple[str, str, str, str]]:
    """Quads comparable across stores: a blank node (whose label each store draws anew) as `_`."""

    def term(value: Any) -> str:
        return "_" if isinstance(value, BlankNode) else str(value)

    return Counter((str(q.graph_name), term(q.subject), str(q.predicate), term(q.object)) for q in quads)


def difference(expected: Iterable[Quad], found: Iterable[Quad], limit: int = 8) -> str:
    """What one side has and the other lacks, in a few lines (empty: the same)."""
    a, b = canonical(expected), canonical(found)
    missing, extra = sorted((a - b).elements())[:limit], sorted((b - a).elements())[:limit]
    if not missing and not extra:
        return ""
    return "\n".join([*(f"missing {m}" for m in missing), *(f"unexpected {e}" for e in extra)])


# ------------------------------------------------------------------------------------------------
# Random requests


class Chooser(Protocol):
    """Where choices come from: Hypothesis's `data.draw` (shrinks) or a seeded random.Random."""

    def pick(self, options: Sequence[Any]) -> Any: ...

    def number(self, low: int, high: int) -> int: ...


class RandomChooser:
    def __init__(self, rng: Any):
        self.rng = rng

    def pick(self, options: Sequence[Any]) -> Any:
        return self.rng.choice(list(options))

    def number(self, low: int, high: int) -> int:
        return int(self.rng.randint(low, high))


RES = vocab.RESOURCE_BASE
PAPER = f"<{RES}paper/PxTIG12RRHS>"
SUBJECTS = ["<urn:s1>", "<urn:s2>", PAPER, f"<{RES}person/ben-poole>", f"<{RES}authorship/test-1>"]
PREDICATES = [
    "<urn:p>",
    "iclr:hasAuthorship",
    "iclr:authorshipBy",
    "rdf:type",
    "rdfs:label",
    "iclr:position",
    "owl:sameAs",
    "rdfs:subClassOf",
]
OBJECTS = [
    "<urn:s1>",
    "<urn:s2>",
    f"<{RES}person/yang-song>",
    "iclr:Authorship",
    "iclr:Paper",
    '"x"@en',
    '"x"@zh',
    '"x"',
    '"1"^^xsd:integer',
    '"01"^^xsd:integer',
]
GRAPHS = ["<urn:g1>", "<urn:g2>", "DEFAULT", f"<{vocab.GRAPH_UPDATES}>", f"<{vocab.GRAPH_INFERRED}>"]
KINDS = [
    "insert data",
    "delete data",
    "modify",
    "delete where",
    "drop",
    "clear",
    "create",
    "add",
    "copy",
    "move",
    "reload",
]


def _triple(choose: Chooser, blank: bool) -> str:
    subject = choose.pick(SUBJECTS + (["_:b1"] if blank else []))
    predicate = choose.pick(PREDICATES)
    objects = OBJECTS + (["_:b1", "_:b2"] if blank else [])
    object_ = choose.pick(objects + ([SUBJECTS[0]] if predicate in ("owl:sameAs", "rdfs:subClassOf") else []))
    return f"{subject} {predicate} {object_} ."


def _block(choose: Chooser, blank: bool, graphs: Sequence[str] = GRAPHS) -> str:
    graph = choose.pick(graphs)
    triples = " ".join(_triple(choose, blank) for _ in range(choose.number(1, 3)))
    return triples if graph == "DEFAULT" else f"GRAPH {graph} {{ {triples} }}"


def _pattern(choose: Chooser) -> tuple[str, str]:
    """A WHERE pattern binding ?s and ?o, and a template over them."""
    subject = choose.pick(["?s", *SUBJECTS[:3]])
    predicate = choose.pick(PREDICATES)
    object_ = choose.pick(["?o", *OBJECTS[:4]])
    pattern = f"{subject} {predicate} {object_} ."
    if subject != "?s":
        pattern += f" BIND({subject} AS ?s)"
    if object_ != "?o":
        pattern += f" BIND({object_} AS ?o)"
    return pattern, f"?s {choose.pick(PREDICATES)} ?o ."


def _wrapped(graph: str, triples: str) -> str:
    return triples if graph == "DEFAULT" else f"GRAPH {graph} {{ {triples} }}"


def operation(choose: Chooser, held: Callable[[str], list[str]], existence_errors: bool = False) -> list[Operation]:
    """One random operation (a reload is two: a graph dropped, then filled with what it held).
    `existence_errors`: graph operations without SILENT too (CREATE of a graph that is there, DROP
    of one that is not: 400); off by default, as the reference and the server still disagree on
    whether a graph emptied by some sequences is there (bench/update_semantics.py --existence).
    `held(graph)` gives a named graph's triples as N-Triples lines (for the reload)."""
    kind = choose.pick(KINDS)
    silent = choose.pick(["", "SILENT "]) if existence_errors else "SILENT "
    if kind == "insert data":
        graph = choose.pick(GRAPHS)
        triples = " ".join(_triple(choose, True) for _ in range(choose.number(1, 3)))
        text = f"INSERT DATA {{ {_wrapped(graph, triples)} }}"
        marked = f"INSERT DATA {{ GRAPH <{MARKER}> {{ {triples} }} }}" if graph == "DEFAULT" else None
        return [Operation(text, None, marked)]
    if kind == "delete data":
        text = f"DELETE DATA {{ {_block(choose, blank=False)} }}"
        return [Operation(text, text)]
    if kind in ("modify", "delete where"):
        where_graph = choose.pick(GRAPHS[:3])
        pattern, template = _pattern(choose)
        where = f"WHERE {{ {_wrapped(where_graph, pattern)} }}"
        if kind == "delete where":  # its pattern is its template: no BIND
            triple = f"{choose.pick(['?s', *SUBJECTS[:3]])} {choose.pick(PREDICATES)} {choose.pick(['?o', *OBJECTS])} ."
            text = f"DELETE WHERE {{ {_wrapped(where_graph, triple)} }}"
            return [Operation(text, text, reads=True)]
        delete = _wrapped(choose.pick(GRAPHS[:4]), template) if choose.pick([True, False]) else ""
        _, other = _pattern(choose)
        insert_graph, inserted = choose.pick(GRAPHS), choose.pick([template, other])
        insert = _wrapped(insert_graph, inserted) if choose.pick([True, False]) else ""
        if not delete and not insert:
            delete = _wrapped("DEFAULT", template)
        parts = ([f"DELETE {{ {delete} }}"] if delete else []) + ([f"INSERT {{ {insert} }}"] if insert else [])
        text = f"{' '.join(parts)} {where}"
        marked = (
            f"INSERT {{ GRAPH <{MARKER}> {{ {inserted} }} }} {where}" if insert and insert_graph == "DEFAULT" else None
        )
        return [Operation(text, f"DELETE {{ {delete} }} {where}" if delete else None, marked, reads=True)]
    if kind in ("drop", "clear", "create"):
        which = choose.pick(["graph", "graph", "graph", "DEFAULT", "ALL", "NAMED"] if kind != "create" else ["graph"])
        named = _named_graph(choose, COPIED if kind != "create" else COPIED[:3])
        target = f"GRAPH {named.written}" if which == "graph" else which
        text = f"{named.prologue if which == 'graph' else ''}{kind.upper()} {silent}{target}"
        return [Operation(text, text)]
    if kind == "reload":
        graph = choose.pick(["<urn:g1>", "<urn:g2>"])
        lines = held(graph)
        drop = f"DROP SILENT GRAPH {graph}"
        refill = f"INSERT DATA {{ GRAPH {graph} {{ {' '.join(lines)} }} }}"
        return [Operation(drop, drop)] + ([Operation(refill, None)] if lines else [])
    return [_graph_copy(choose, kind, silent)]


@dataclass(frozen=True)
class Named:
    """A graph as an operation names it: its IRI (None: DEFAULT), as written, and the PREFIX
    declaration a prefixed name needs."""

    iri: str | None
    written: str
    prologue: str = ""


# The graphs ADD, COPY, MOVE, DROP and CLEAR name: two the dataset may fill, one that is mostly
# absent or empty (CREATE makes it), the updates graph (what the default graph's inserts fill),
# the inferred graph
COPIED = ["urn:g1", "urn:g2", "urn:g3", vocab.GRAPH_UPDATES, vocab.GRAPH_INFERRED]


def _named_graph(choose: Chooser, iris: Sequence[str | None]) -> Named:
    """A graph of `iris` (None: DEFAULT), named by a full IRI, a prefixed name or a relative IRI
    under BASE, with or without the word GRAPH where the grammar allows it."""
    iri = choose.pick(iris)
    if iri is None:
        return Named(None, "DEFAULT")
    namespace, local = iri.rsplit("/", 1) if "/" in iri else iri.split(":", 1)
    namespace += "/" if "/" in iri else ":"
    how = choose.pick(["full", "prefixed", "prefixed", "based"])
    if how == "prefixed":
        return Named(iri, f"g:{local}", f"PREFIX g: <{namespace}>\n")
    if how == "based" and "/" in iri:
        return Named(iri, f"<{local}>", f"BASE <{namespace}>\n")
    return Named(iri, f"<{iri}>")


def _graph_copy(choose: Chooser, kind: str, silent: str) -> Operation:
    """ADD, COPY or MOVE between any two of the graphs (the same one too, DEFAULT on either side),
    each named any way the grammar allows; the source may be full, empty or absent."""
    source = _named_graph(choose, [*COPIED, None])
    destination = _named_graph(choose, [*COPIED[:4], None] if choose.pick([True, False]) else [source.iri])
    if source.prologue and destination.prologue and source.prologue != destination.prologue:
        destination = Named(destination.iri, f"<{destination.iri}>") if destination.iri else destination
    prologue = "".join(dict.fromkeys([source.prologue, destination.prologue]))

    def written(named: Named) -> str:
        return named.written if named.iri is None else f"{choose.pick(['', 'GRAPH '])}{named.written}"

    text = f"{prologue}{kind.upper()} {silent}{written(source)} TO {written(destination)}"
    reads, is_silent = source.iri in (None, vocab.GRAPH_INFERRED), bool(silent)
    if source.iri == destination.iri:
        return Operation(text, None, reads=reads, silent=is_silent)
    emptied = "DEFAULT" if destination.iri is None else f"GRAPH <{destination.iri}>"
    full_source = "DEFAULT" if source.iri is None else f"<{source.iri}>"
    marked = f"ADD {silent}{full_source} TO <{MARKER}>" if destination.iri is None else None
    deletes_only = {
        "add": None,
        "copy": f"DROP SILENT {emptied}",
        "move": f"DROP SILENT {emptied} ; DROP SILENT {'DEFAULT' if source.iri is None else f'GRAPH <{source.iri}>'}",
    }[kind]
    return Operation(text, deletes_only, marked, source.iri, reads, destination.iri, is_silent)


# What may stand between two operations: nothing, or comments, one ended by a bare CR (as
# Oxigraph ends it; a reader that ends it at LF alone would take the next operation for comment)
BETWEEN = ["", "", "# a comment\r", "# ; DROP ALL ;\r", "#\r\n", "# INSERT DATA { <urn:s1> <urn:p> <urn:s2> }\r"]


def request(choose: Chooser, held: Callable[[str], list[str]], existence_errors: bool = False) -> list[Operation]:
    """A request of one to four operations, comments between them."""
    operations: list[Operation] = []
    for _ in range(choose.number(1, 4)):
        for drawn in operation(choose, held, existence_errors):
            comment = choose.pick(BETWEEN)
            operations.append(replace(drawn, text=comment + drawn.text) if comment else drawn)
    return operations


def request_text(operations: Sequence[Operation]) -> str:
    return " ;\n".join(o.text for o in operations)


# ------------------------------------------------------------------------------------------------
# The server side: what the test and the bench read and send

# relative, as a user in the server's folder would give them
SERVER_ENV = {
    "ICLR_KG_UPDATE_TOKEN": "s3cret",
    "ICLR_KG_DATA_DIR": "data",
    "ICLR_KG_ONTOLOGY_DIR": "ontology",
    # no bound on what an update costs: owl:sameAs accepted, so equality's meaning stays under test
    # (the bounds themselves: tests/web/test_untrusted_input.py)
    "ICLR_KG_UPDATE_MAX_DERIVED": "0",
}
AUTH = {"Authorization": f"Bearer {SERVER_ENV['ICLR_KG_UPDATE_TOKEN']}"}


def http(
    url: str, data: bytes | None = None, headers: dict | None = None, method: str | None = None
) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def dataset(base: str, connection: HTTPConnection | None = None) -> list[Quad]:
    """Every quad the server holds: each named graph's (/data) and the default graph's; read on
    `connection` (one web process's: `each_process`) or on fresh connections."""
    status, named = _get(base, "/data", "application/n-quads", connection)
    assert status == 200, named
    status, default = _get(base, "/data?default", "application/n-triples", connection)
    assert status == 200, default
    quads = list(parse(named, format=RdfFormat.N_QUADS))
    return quads + [Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in parse(default, RdfFormat.N_TRIPLES)]


def _get(base: str, path: str, accept: str, connection: HTTPConnection | None) -> tuple[int, bytes]:
    if connection is None:
        return http(f"{base}{path}", headers={"Accept": accept})
    connection.request("GET", path, headers={"Accept": accept})
    response = connection.getresponse()
    return response.status, response.read()


def each_process(base: str, processes: int = 2, attempts: int = 60) -> dict[int, HTTPConnection]:
    """A kept-alive connection to each web process (`/health` says which answered): the kernel
    spreads new connections over them, so a few tries find them all."""
    found: dict[int, HTTPConnection] = {}
    parts = urllib.parse.urlsplit(base)
    for _ in range(attempts):
        connection = HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)
        connection.request("GET", "/health")
        response = connection.getresponse()
        process = json.loads(response.read())["process"]
        if process in found:
            connection.close()
        else:
            found[process] = connection
        if len(found) == processes:
            return found
    raise AssertionError(f"found {len(found)} web processes of {processes} in {attempts} connections")


def named_graphs(base: str) -> list[NamedNode]:
    """The named graphs the server has, empty ones too (which the dumps cannot show)."""
    query = urllib.parse.urlencode({"query": "SELECT ?g WHERE { GRAPH ?g { } }", "format": "json"})
    status, body = http(f"{base}/sparql?{query}")
    assert status == 200, body
    return [NamedNode(row["g"]["value"]) for row in json.loads(body)["results"]["bindings"]]


def post(base: str, text: str) -> tuple[int, bytes]:
    return http(f"{base}/update", text.encode(), {**AUTH, "Content-Type": "application/sparql-update"})


def reset(base: str, first: list[Quad]) -> None:
    """Bring the server back to the dataset `first` (its named graphs; the inferred graph follows):
    DROP ALL, then a Graph Store POST of each graph, so that every example starts from the same
    dataset and a failure can be replayed from it."""
    status, body = post(base, "DROP ALL")
    assert status == 204, body
    blocks: dict[Any, list[str]] = {}
    for quad in first:
        if quad.graph_name not in (DefaultGraph(), INFERRED):
            blocks.setdefault(quad.graph_name, []).append(f"{quad.subject} {quad.predicate} {quad.object} .\n")
    for graph, lines in blocks.items():
        url = f"{base}/data?" + urllib.parse.urlencode({"graph": graph.value})
        status, body = http(url, "".join(lines).encode(), {**AUTH, "Content-Type": "application/n-triples"}, "POST")
        assert status in (200, 201, 204), body


def _blank(quad: Quad) -> bool:
    return isinstance(quad.subject, BlankNode) or isinstance(quad.object, BlankNode)
