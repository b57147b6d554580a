"""What an update means: its change (the quads it adds and removes), planned per operation under the
union-default-graph rule of docs/updates.md, read from the store only where the operation says
so (a pattern matched once, before the change; a graph dropped or copied). Both paths write this
plan; what the fast path cannot maintain raises NotMaintained with the reason."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Store, Triple

from iclr_kg import vocab
from iclr_kg.errors import InconsistentGraph, QueryError
from iclr_kg.reasoning import fastrl
from iclr_kg.sparql.querytext import split_update, top_level_words, without_comments
from iclr_kg.store import run_query, run_update

DEFAULT = DefaultGraph()


INFERRED = NamedNode(vocab.GRAPH_INFERRED)


ONTOLOGY = NamedNode(vocab.GRAPH_ONTOLOGY)


UPDATES = NamedNode(vocab.GRAPH_UPDATES)


NOT_ASSERTED = (DEFAULT, INFERRED)


class NotMaintained(Exception):
    """This update is not one the fast path handles; the message says why (logged)."""


@dataclass
class Change:
    """The asserted quads an update adds and removes, planned against the generation before it
    is written (net: a quad added then removed in one request is neither)."""

    db: Store
    added: set[Quad] = field(default_factory=set)
    removed: set[Quad] = field(default_factory=set)
    # the planned additions by triple, so that `holding` reads no more than the triple's quads
    _added_by_triple: dict[Triple, set[Quad]] = field(default_factory=dict)
    dropped: set[NamedNode] = field(default_factory=set)  # graphs a DROP GRAPH emptied
    created: set[NamedNode] = field(default_factory=set)  # graphs an ADD, COPY or MOVE writes to (there, if empty)

    def present(self, quad: Quad) -> bool:
        return quad in self.added or (quad not in self.removed and quad in self.db)

    def add(self, quad: Quad) -> None:
        check_statable(quad.triple)
        if isinstance(quad.graph_name, NamedNode):  # a graph written to is there, even if emptied later
            self.create(quad.graph_name)
        if self.present(quad):
            return
        if quad in self.removed:
            self.removed.discard(quad)
        else:
            self.added.add(quad)
            self._added_by_triple.setdefault(quad.triple, set()).add(quad)

    def remove(self, quad: Quad) -> None:
        if not self.present(quad):
            return
        if quad in self.added:
            self.added.discard(quad)
            self._added_by_triple[quad.triple].discard(quad)
        else:
            self.removed.add(quad)

    def holding(self, triple: Triple) -> list[Quad]:
        """The asserted quads that state `triple` once the change is made."""
        found = [
            q
            for q in self.db.quads_for_pattern(triple.subject, triple.predicate, triple.object, None)
            if q.graph_name not in NOT_ASSERTED and q not in self.removed
        ]
        return found + list(self._added_by_triple.get(triple, ()))

    def stated_before(self, triple: Triple) -> bool:
        quads = self.db.quads_for_pattern(triple.subject, triple.predicate, triple.object, None)
        return any(q.graph_name not in NOT_ASSERTED for q in quads)

    def graphs(self) -> list[NamedNode]:
        """The named graphs but the inferred one, as the change leaves them so far."""
        there = {g for g in self.db.named_graphs() if isinstance(g, NamedNode)} - self.dropped
        there |= self.created | {q.graph_name for q in self.added if isinstance(q.graph_name, NamedNode)}
        return sorted(there - {INFERRED}, key=str)

    def quads_of(self, graph: NamedNode) -> list[Quad]:
        """The quads of `graph` once the change is made so far."""
        held = [q for q in self.db.quads_for_pattern(None, None, None, graph) if q not in self.removed]
        return held + [q for q in self.added if q.graph_name == graph]

    def empty(self, graph: NamedNode) -> None:
        """Every quad of `graph` goes (CLEAR GRAPH): read from the store, as many as the change has."""
        for quad in self.quads_of(graph):
            self.remove(quad)

    def drop(self, graph: NamedNode) -> None:
        """`empty`, and the graph itself goes unless the change adds to it again (DROP GRAPH)."""
        self.empty(graph)
        self.dropped.add(graph)
        self.created.discard(graph)

    def exists(self, graph: NamedNode) -> bool:
        """Whether the graph is there once the change is made so far (the store's, less what it
        drops, and what it writes to)."""
        if graph in self.created or any(q.graph_name == graph for q in self.added):
            return True
        return graph not in self.dropped and self.db.contains_named_graph(graph)

    def create(self, graph: NamedNode) -> None:
        """The graph is there after the change, empty or not (the target of ADD, COPY, MOVE)."""
        self.created.add(graph)
        self.dropped.discard(graph)

    def write(self) -> None:
        for quad in self.removed:
            self.db.remove(quad)
        for graph in self.dropped:  # emptied: DROP removes the graph itself (Graph Store DELETE then 404s)
            self.db.remove_graph(graph)
        for graph in self.created:
            self.db.add_graph(graph)
        self.db.extend(self.added)


# DROP or CLEAR of one graph named by a full IRI: what a Graph Store PUT or DELETE sends
_GRAPH_OPERATION = re.compile(
    r"\s*(DROP|CLEAR)\s+(SILENT\s+)?(?:GRAPH\s+<([^<>\s]+)>|(DEFAULT|NAMED|ALL))\s*", re.IGNORECASE
)


# ADD, COPY or MOVE of one graph to another, both named by full IRIs
_GRAPH_COPY = re.compile(
    r"\s*(ADD|COPY|MOVE)\s+(SILENT\s+)?(?:(?:GRAPH\s+)?<([^<>\s]+)>|(DEFAULT))"
    r"\s+TO\s+(?:(?:GRAPH\s+)?<([^<>\s]+)>|(DEFAULT))\s*",
    re.IGNORECASE,
)


Graph = NamedNode | DefaultGraph


@dataclass(frozen=True)
class GraphOperation:
    """DROP or CLEAR (`target` a graph, or "NAMED" or "ALL"), or ADD, COPY or MOVE (from `source`)."""

    verb: str
    silent: bool
    target: Graph | str
    source: Graph | None = None


def graph_operation(operation: str, base: str | None = None) -> GraphOperation | None:
    """DROP, CLEAR, ADD, COPY or MOVE as written (None: another operation): graphs named by full
    IRIs are read by a pattern (the cheap common case: every Graph Store write), any other way of
    naming them (a prefixed name, a relative IRI) by rdflib's parser, which resolves them."""
    body = _body(operation)
    if (dropped := _GRAPH_OPERATION.fullmatch(body)) is not None:
        verb, silent, iri, which = dropped.groups()
        target: Graph | str = NamedNode(iri) if iri else _named_or_keyword(which.upper())
        return GraphOperation(verb.upper(), bool(silent), target)
    if (copied := _GRAPH_COPY.fullmatch(body)) is not None:
        verb, silent, source, _, target_iri, _ = copied.groups()
        return GraphOperation(verb.upper(), bool(silent), _graph(target_iri), _graph(source))
    try:
        parsed = _parsed_operation(operation, base, ("Drop", "Clear", "Add", "Copy", "Move"))
    except NotMaintained:
        return None
    silent = _field(parsed, "silent") is not None
    if parsed.name in ("Drop", "Clear"):
        return GraphOperation(parsed.name.upper(), silent, _named_or_keyword(_field(parsed, "graphiri")))
    source, target = (_named_or_keyword(g) for g in _field(parsed, "graph"))
    assert not isinstance(source, str) and not isinstance(target, str)  # the grammar allows no NAMED, ALL here
    return GraphOperation(parsed.name.upper(), silent, target, source)


def _graph(iri: str | None) -> Graph:
    return NamedNode(iri) if iri else DEFAULT


def _named_or_keyword(graph: Any) -> Graph | str:
    """rdflib's or the pattern's graph: an IRI, DEFAULT (the default graph), NAMED or ALL."""
    if str(graph).upper() == "DEFAULT":
        return DEFAULT
    if str(graph).upper() in ("NAMED", "ALL"):
        return str(graph).upper()
    return NamedNode(str(graph))


# A GRAPH block in a DELETE/INSERT ... WHERE (or the word anywhere, in a string even: the full path runs then)
_GRAPH_WORD = re.compile(r"\bGRAPH\b", re.IGNORECASE)


def data_operations(update: str, base: str | None = None) -> list[tuple[str, str]]:
    """(verb, operation) for each operation of `update`, where every one is INSERT DATA, DELETE
    DATA, DROP or CLEAR (verb DROP, CLEAR), ADD, COPY or MOVE (verb COPY), or DELETE/INSERT ...
    WHERE (verb MODIFY); else NotMaintained."""
    found = []
    for operation in split_update(update) or [update]:
        words = [word for _, word in top_level_words(operation)]
        verb = next((w for w in words if w not in ("PREFIX", "BASE")), "")
        following = words[words.index(verb) + 1] if verb in words[:-1] else ""
        if verb in ("DROP", "CLEAR", "ADD", "COPY", "MOVE") and graph_operation(operation, base) is not None:
            found.append(("COPY" if verb in ("ADD", "MOVE") else verb, operation))
            continue
        if verb in ("WITH", "INSERT", "DELETE") and following != "DATA" and "WHERE" in words:
            found.append(("MODIFY", operation))
            continue
        if verb not in ("INSERT", "DELETE") or following != "DATA":
            raise NotMaintained(
                f"{verb or 'an operation'} {following} is not one the fast path takes (INSERT DATA, DELETE DATA, "
                "DELETE/INSERT ... WHERE, DROP, CLEAR, ADD, COPY or MOVE)".strip()
            )
        found.append((verb, operation))
    return found


def _body(operation: str) -> str:
    """The operation without the PREFIX declarations before it (a BASE stays: its graph IRIs may be relative)."""
    words = top_level_words(operation)
    if any(word == "BASE" for _, word in words):
        return operation
    start = next((index for index, word in words if word not in ("PREFIX", "BASE")), 0)
    return operation[start:]


def reads_dataset(operation: str) -> bool:
    """Whether an operation reads what the operations before it leave, the inferred graph
    included (so the closure is brought up to date before it): a WHERE clause, or ADD, COPY or
    MOVE from the default or the inferred graph. One not planned here (LOAD...) counts as reading;
    CREATE does not."""
    try:
        ((verb, text),) = data_operations(operation)
    except NotMaintained:
        words = [word for _, word in top_level_words(operation) if word not in ("PREFIX", "BASE")]
        return words[:1] != ["CREATE"]
    if verb == "MODIFY":
        return True
    if verb == "COPY":
        copied = graph_operation(text)
        return copied is None or copied.source in (DEFAULT, INFERRED)
    return False


def _templates(operation: str) -> tuple[str | None, str | None] | None:
    """The CONSTRUCT queries giving what a DELETE/INSERT ... WHERE on the default graph deletes
    and inserts (None where it has no such template); None if it is not one: WITH, USING or a
    GRAPH block (even the word in a string) leave it to the full path. The short form DELETE
    WHERE's pattern is its template: CONSTRUCT WHERE."""
    words = top_level_words(operation)
    names = [word for _, word in words]
    if _GRAPH_WORD.search(operation) or not set(names) <= {"PREFIX", "BASE", "DELETE", "INSERT", "WHERE"}:
        return None
    at = {word: index for index, word in words if word in ("DELETE", "INSERT", "WHERE")}
    order = [word for word in ("DELETE", "INSERT", "WHERE") if word in at]
    if "WHERE" not in at or [w for w in names if w in at] != order:  # each once, in this order
        return None
    start = min(at[w] for w in at if w != "WHERE")
    prologue, where = operation[:start], operation[at["WHERE"] :]

    def construct(template: str) -> str:
        return f"{prologue}CONSTRUCT {template} {where}"

    delete = insert = None
    if "DELETE" in at:
        template = operation[at["DELETE"] + len("DELETE") : at.get("INSERT", at["WHERE"])]
        delete = construct(template) if template.strip() else f"{prologue}CONSTRUCT {where}"
    if "INSERT" in at:
        insert = construct(operation[at["INSERT"] + len("INSERT") : at["WHERE"]])
    return delete, insert


def check_maintainable(quad: Quad) -> None:
    """NotMaintained for a quad the fast path does not handle."""
    if fastrl.is_schema(quad):
        raise NotMaintained(f"the update states schema ({quad.predicate} {quad.object})")
    if quad.graph_name == ONTOLOGY:
        raise NotMaintained("the update changes the ontology graph")
    if quad.predicate == SAME_AS:  # even `x owl:sameAs x`, which derives nothing new
        raise NotMaintained("the update states owl:sameAs")


def stated_quads(verb: str, operation: str, base: str | None) -> list[Quad]:
    """The quads an INSERT DATA or DELETE DATA operation names, parsed by Oxigraph's own update
    parser into an empty store (DELETE DATA read as INSERT DATA, the same grammar)."""
    text = operation
    if verb == "DELETE":
        at = next(index for index, word in top_level_words(operation) if word == "DELETE")
        text = operation[:at] + "INSERT" + operation[at + len("DELETE") :]
    scratch = Store()
    run_update(scratch, text, base)
    quads = list(scratch)
    for quad in quads:
        if verb == "DELETE" and (isinstance(quad.subject, BlankNode) or isinstance(quad.object, BlankNode)):
            raise NotMaintained("DELETE DATA with blank nodes (the full path says why it may not)")
    return quads  # an inserted blank node is new: Oxigraph's parser gave it a label of its own


def plan_change(db: Store, update: str, base: str | None) -> Change:
    """What `update` does to `db`'s asserted graphs, by its stated quads, with the
    union-default-graph rules of `updates`: inserted into the default graph, kept in
    graph/updates; deleted from it, deleted from every asserted graph that states it. Nothing may
    be inserted into the inferred graph. Nothing is written yet."""
    change = Change(db)
    for verb, operation in data_operations(update, base):
        if verb in ("DROP", "CLEAR"):
            _plan_graph_operation(change, operation, base)
            continue
        if verb == "COPY":
            _plan_graph_copy(change, operation, base)
            continue
        if verb == "MODIFY":
            _plan_modify(change, operation, base)
            continue
        for quad in stated_quads(verb, operation, base):
            (_insert_stated if verb == "INSERT" else _delete_stated)(change, quad)
    return change


def _insert_stated(change: Change, quad: Quad) -> None:
    """A quad an update inserts: into the default graph, kept in graph/updates; into the
    inferred graph, refused (it holds only what the reasoner derives)."""
    if quad.graph_name == INFERRED:
        if change.present(quad):
            return  # adds nothing
        raise QueryError(inferred_refusal(quad.triple))
    graph = UPDATES if quad.graph_name == DEFAULT else quad.graph_name
    change.add(Quad(quad.subject, quad.predicate, quad.object, graph))


def inconsistency(exc: InconsistentGraph) -> str:
    """Why an update that makes the graph inconsistent is refused (a QueryError: 400)."""
    return f"the update would make the graph inconsistent: {exc}"


SAME_AS = NamedNode(vocab.OWL + "sameAs")


def check_statable(triple: Triple) -> None:
    """QueryError (400) for a triple no graph here may state: `owl:sameAs` with a literal. OWL 2
    makes sameAs an object property, linking two resources; under OWL RL's RDF-based semantics the
    link would make an IRI denote the literal's value (owlrl then types the IRI `xsd:integer`,
    `rdfs:Datatype`), which no entity of this graph is, and which the fast reasoner leaves out."""
    if triple.predicate == SAME_AS and isinstance(triple.object, Literal):
        raise QueryError(
            f"owl:sameAs links two resources, and {triple.object} is a literal: {triple}; "
            "to give an entity a value, use a data property (rdfs:label, schema:identifier...)"
        )


def inferred_refusal(example: Triple) -> str:
    """Why an update that adds to the inferred graph is refused (a QueryError: 400)."""
    return (
        f"the update adds to {vocab.GRAPH_INFERRED}, which holds only what the reasoner derives "
        f"(e.g. {example}); put asserted triples in another graph"
    )


def _delete_stated(change: Change, quad: Quad) -> None:
    """A quad an update deletes: from the default graph, deleted from every asserted graph that
    states it; from the inferred graph, nothing (a derived triple stays while its premises stand)."""
    if quad.graph_name == INFERRED:
        return
    for held in change.holding(quad.triple) if quad.graph_name == DEFAULT else [quad]:
        change.remove(held)


def _plan_modify(change: Change, operation: str, base: str | None) -> None:
    """DELETE/INSERT ... WHERE: its pattern is matched once, before the change. On the default
    graph by a CONSTRUCT of each template (the triples it deletes, then those it inserts); with
    WITH, USING or GRAPH by `_plan_quad_modify`. Deleted
    from the default graph, from every graph that states them; inserted, kept in graph/updates.
    An update whose earlier operations change what this one matches is left to the full path."""
    if change.added or change.removed or change.dropped:
        raise NotMaintained("an operation with a WHERE clause after another one in the same update")
    templates = _templates(operation)
    if templates is None:  # WITH, USING or GRAPH
        _plan_quad_modify(change, operation, base)
        return
    delete, insert = templates
    deleted = _constructed(change.db, delete, base)
    inserted = _constructed(change.db, insert, base)
    for triple in deleted:
        _delete_stated(change, Quad(triple.subject, triple.predicate, triple.object, DEFAULT))
    for triple in inserted:
        _insert_stated(change, Quad(triple.subject, triple.predicate, triple.object, DEFAULT))


def _plan_quad_modify(change: Change, operation: str, base: str | None) -> None:
    """DELETE/INSERT ... WHERE with WITH, USING or GRAPH: rdflib's parser gives the templates as
    quads (`Modify`, or the short form `DeleteWhere`), Oxigraph matches the WHERE clause once,
    before the change, as a SELECT over the operation's dataset (SPARQL 1.1 Update §3.1.3:
    USING and USING NAMED, else WITH's graph as the default graph, else ours), and each
    solution fills the templates. A template triple outside GRAPH goes to WITH's graph, or to
    the default graph: deleted from every graph that states it, inserted into graph/updates."""
    operation_ = _parsed_operation(operation, base, ("Modify", "DeleteWhere"))
    words = top_level_words(operation)
    where = next(index for index, word in words if word == "WHERE")
    start = next(index for index, word in words if word in ("WITH", "DELETE", "INSERT"))
    dataset: dict[str, list[NamedNode]] = {}
    using = _field(operation_, "using") or []
    if using:
        dataset["default_graph"] = [NamedNode(str(u.default)) for u in using if _field(u, "default") is not None]
        dataset["named_graphs"] = [NamedNode(str(u.named)) for u in using if _field(u, "named") is not None]
    with_graph = _field(operation_, "withClause")
    target = NamedNode(str(with_graph)) if with_graph is not None else None
    if not using and target is not None:
        dataset["default_graph"] = [target]
    if operation_.name == "DeleteWhere":  # its pattern is its template
        deleting, inserting = _template_quads(operation_), []
    else:
        deleting, inserting = (
            _template_quads(_field(operation_, "delete")),
            _template_quads(_field(operation_, "insert")),
        )
    query = f"{operation[:start]}SELECT * {operation[where:]}"  # the prologue, then the WHERE clause
    try:
        solutions = list(run_query(change.db, query, base=base, services=(), **dataset))  # type: ignore[arg-type]
    except QueryError as exc:  # the full path runs the operation itself and says what is wrong
        raise NotMaintained(f"its WHERE clause, as a SELECT, failed: {exc}") from None
    for solution in solutions:
        for quad in _filled(deleting, solution, target, fresh=False):
            _delete_stated(change, quad)
    for solution in solutions:
        for quad in _filled(inserting, solution, target, fresh=True):
            _insert_stated(change, quad)


def _parsed_operation(operation: str, base: str | None, kinds: tuple[str, ...]) -> Any:
    """The operation as rdflib's SPARQL Update algebra, one of `kinds`, its literals as written
    (rdflib would otherwise rewrite "01"^^xsd:integer as "1", which then deletes nothing here)."""
    import rdflib
    from rdflib.plugins.sparql import prepareUpdate

    kept = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = False
    try:
        parsed = prepareUpdate(without_comments(operation), base=base or "", initNs=vocab.QUERY_PREFIXES)
    except Exception as exc:  # noqa: BLE001 - Oxigraph, on the full path, says what is wrong
        raise NotMaintained(f"rdflib could not read the operation ({exc.__class__.__name__})") from None
    finally:
        rdflib.NORMALIZE_LITERALS = kept
    if len(parsed.algebra) != 1 or parsed.algebra[0].name not in kinds:
        raise NotMaintained("an operation rdflib reads otherwise")
    return parsed.algebra[0]


def _field(node: Any, name: str) -> Any:
    """A field of rdflib's algebra node, None if absent (its own `get` gives the name back then)."""
    return dict.get(node, name)


Template = list[tuple[Any, Any, Any, Any]]  # (graph or None, subject, predicate, object): rdflib terms


def _template_quads(clause: Any) -> Template:
    """A DELETE or INSERT template (or a DeleteWhere's pattern) as quads of rdflib terms."""
    if clause is None:
        return []
    out: Template = [(None, *t) for t in _field(clause, "triples") or []]
    for graph, triples in (_field(clause, "quads") or {}).items():
        out += [(graph, *t) for t in triples]
    return out


def _filled(template: Template, solution: Any, target: NamedNode | None, fresh: bool) -> Iterator[Quad]:
    """The template's quads under one solution; a quad with a variable left unbound, or a term
    where RDF allows none (a literal as subject), is left out, as SPARQL says. Blank nodes of an
    INSERT template are new for each solution (`fresh`); a DELETE template may not have any."""
    import rdflib

    blanks: dict[Any, BlankNode] = {}

    def term(value: Any) -> Any:
        if isinstance(value, rdflib.Variable):
            try:
                return solution[str(value)]
            except KeyError:  # not in the WHERE clause: unbound
                return None
        if isinstance(value, rdflib.BNode):
            if not fresh:
                raise NotMaintained("a DELETE template with a blank node (the full path says why it may not)")
            return blanks.setdefault(value, BlankNode())
        if isinstance(value, rdflib.URIRef):
            return NamedNode(str(value))
        if isinstance(value, rdflib.Literal):
            if value.language:
                return Literal(str(value), language=value.language)
            return Literal(str(value), datatype=NamedNode(str(value.datatype)) if value.datatype else None)
        raise NotMaintained(f"a template term rdflib gives as {value.__class__.__name__}")

    for graph, *triple in template:
        subject, predicate, object_ = (term(t) for t in triple)
        graph_name = term(graph) if graph is not None else (target or DEFAULT)
        if (
            isinstance(subject, (NamedNode, BlankNode))
            and isinstance(predicate, NamedNode)
            and object_ is not None
            and isinstance(graph_name, (NamedNode, DefaultGraph))
        ):
            yield Quad(subject, predicate, object_, graph_name)


def _constructed(db: Store, query: str | None, base: str | None) -> list[Triple]:
    """The triples a CONSTRUCT query gives (Oxigraph's default graph: ours, the union)."""
    if query is None:
        return []
    return list(run_query(db, query, base=base, services=()))  # type: ignore[arg-type]


def _plan_graph_operation(change: Change, operation: str, base: str | None) -> None:
    """DROP or CLEAR: of one graph, its quads (read from the store, as many as the change has)
    are removed; of the default graph, every triple of the union from every graph that states
    it, so every graph is emptied; NAMED or ALL, every named graph. The inferred graph follows
    from the others (it comes back as they leave it). A graph that is not there is left to the
    full path (an error, unless SILENT)."""
    planned = graph_operation(operation, base)
    assert planned is not None  # data_operations read it
    verb, graph = planned.verb, planned.target
    if not isinstance(graph, NamedNode):
        for named in change.graphs():
            if verb == "DROP" and graph != DEFAULT:
                change.drop(named)
            else:
                change.empty(named)
        return
    if graph == INFERRED:
        return  # what it holds follows from the other graphs: it comes back as it was
    if not change.exists(graph) and not planned.silent:
        raise NotMaintained(f"{verb} of a graph that is not there")
    if verb == "DROP":
        change.drop(graph)
    else:
        change.empty(graph)


def _emptied(change: Change, graph: Graph) -> list[NamedNode]:
    """The graphs emptying `graph` empties: the default graph, every one; the inferred graph, none."""
    if isinstance(graph, DefaultGraph):
        return change.graphs()
    return [graph] if graph != INFERRED else []


def _plan_graph_copy(change: Change, operation: str, base: str | None) -> None:
    """ADD, COPY or MOVE, as SPARQL 1.1 Update 3.2.3-3.2.5 defines them: COPY is `DROP SILENT` of
    the target, then the source's triples inserted into it; MOVE that, then `DROP` of the source;
    ADD the insert alone. So the source's triples (the default graph's: the union of all graphs,
    the inferred one too) are read, then COPY and MOVE empty the target (the default graph: every
    graph) and MOVE the source, then the triples go into the target (the default graph:
    graph/updates), as one operation's deletes come before its inserts: copying an empty graph
    empties the target. A source graph that is not there is an error (SPARQL lets a service
    refuse it), unless SILENT: then it reads as an empty graph. Nothing goes into the inferred graph."""
    planned = graph_operation(operation, base)
    assert planned is not None and planned.source is not None  # data_operations read it
    verb, source, target = planned.verb, planned.source, planned.target
    assert not isinstance(target, str)
    if reads_dataset(operation) and (change.added or change.removed or change.dropped):
        raise NotMaintained(f"{verb} from the default or the inferred graph after another operation in the same update")
    if source == target:
        return  # SPARQL 1.1 Update 3.2.3-3.2.5: nothing happens, whether the graph is there or not
    if isinstance(source, DefaultGraph):
        triples = {q.triple for graph in [*change.graphs(), INFERRED] for q in change.quads_of(graph)}
    else:
        quads = change.quads_of(source)
        if not quads and not change.exists(source) and not planned.silent:
            raise QueryError(f"the update failed: The graph {source} does not exist (SILENT makes that no error)")
        triples = {q.triple for q in quads}
    if verb != "ADD":
        for graph in _emptied(change, target):
            change.empty(graph)
    if verb == "MOVE":
        for graph in _emptied(change, source):
            change.empty(graph)
        if isinstance(source, NamedNode) and source != INFERRED:
            change.drop(source)
    if isinstance(target, NamedNode) and target != INFERRED:
        change.create(target)  # SPARQL 1.1 Update 3.2.3-3.2.5: the destination is created
    for triple in triples:
        _insert_stated(change, Quad(triple.subject, triple.predicate, triple.object, target))
