"""Queries and updates on a generation as the product runs them: the merged default graph (or the
named graphs without the inferred one), the allow-listed SERVICE calls, and the engine's errors
as ours."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from pyoxigraph import (
    Literal,
    NamedNode,
    QueryBoolean,
    QuerySolutions,
    QueryTriples,
    Store,
    Variable,
)

from iclr_kg import vocab
from iclr_kg.errors import QueryError
from iclr_kg.graph import ReadableGraph
from iclr_kg.sparql.federation import check_services
from iclr_kg.sparql.lint import friendly_syntax
from iclr_kg.sparql.querytext import check_nesting, check_operators, check_patterns, with_values


def query_graphs(store: ReadableGraph, include_inferred: bool = True) -> list[NamedNode]:
    """The named graphs that make up the default graph of queries."""
    graphs = [g for g in store.named_graphs() if isinstance(g, NamedNode)]
    if include_inferred:
        return graphs
    return [g for g in graphs if g.value != vocab.GRAPH_INFERRED]


@contextlib.contextmanager
def _query_errors(text: str, failed: str, refused: tuple[type[Exception], ...]) -> Iterator[None]:
    """What the engine raises for a query or an update text, as the QueryError a client reads:
    a syntax error in words with its line and column (`lint.friendly_syntax`), the `refused`
    errors with the engine's own message. (An update's OSError is LOAD failing to fetch: the
    writer reports that as the outside service's fault, so it passes through.)"""
    try:
        yield
    except SyntaxError as exc:
        problem = friendly_syntax(str(exc), text)
        error = QueryError(problem.message)
        error.said = problem
        raise error from None
    except refused as exc:
        raise QueryError(f"{failed}: {exc}") from None


def run_update(store: Store, text: str, base: str | None) -> None:
    """Run SPARQL Update `text` on `store` with our prefixes; a syntax error or a refusal
    becomes a QueryError with the parser's message in words (`lint.friendly_syntax`)."""
    check_nesting(text)
    check_operators(text)
    with _query_errors(text, "the update failed", (ValueError,)):
        try:
            store.update(text, base_iri=base, prefixes=vocab.QUERY_PREFIXES)
        except RuntimeError as exc:  # also RocksDB's failures: only the graph's existence is the request's fault
            if _GRAPH_EXISTENCE.fullmatch(str(exc)):
                raise QueryError(f"the update failed: {exc} (SILENT makes that no error)") from None
            raise


# What Oxigraph raises (as RuntimeError) for CREATE of a graph that is there, or DROP, CLEAR, ADD,
# COPY, MOVE of one that is not: SPARQL 1.1 Update says the operation fails, unless SILENT.
_GRAPH_EXISTENCE = re.compile(r"The graph \S+ (does not exist|already exists)")


def run_query(
    store: ReadableGraph,
    sparql: str,
    *,
    include_inferred: bool = True,
    substitutions: dict[Variable, NamedNode | Literal] | None = None,
    default_graph: list[NamedNode] | None = None,
    named_graphs: list[NamedNode] | None = None,
    services: tuple[str, ...] | None = None,
    base: str | None = None,
) -> QueryBoolean | QuerySolutions | QueryTriples:
    """Run a SPARQL query whose default graph is the merge of all graphs (inferred optional).

    The store's own default graph holds that merge, built once by `publish`, so a triple stated
    by two articles is one triple, as RDF merge semantics says. Without the inferred graph the
    default graph is the list of the other graphs, where such a triple counts once per graph.

    A syntax error becomes a QueryError carrying the parser's message and position. SERVICE
    may only call the endpoints in `services` (default: the configured allow-list). Relative
    IRIs resolve against `base` (the endpoint's URL on the web; SPARQL Protocol §2.1.4).
    """
    check_nesting(sparql)
    check_operators(sparql)
    check_patterns(sparql)
    bound = {v.value: t.value for v, t in (substitutions or {}).items() if isinstance(t, NamedNode)}
    if services is None:  # the settings, imported here: a query worker always passes its allow-list
        from iclr_kg.config import Settings

        services = Settings.from_env().services
    check_services(sparql, services, vocab.QUERY_PREFIXES, bound)
    if default_graph is None and not include_inferred:
        default_graph = query_graphs(store, include_inferred=False)
    if substitutions:  # written in, not `substitutions=`: pyoxigraph plans before it binds them
        sparql = with_values(sparql, substitutions)
    with _query_errors(sparql, "query failed", (OSError, ValueError, RuntimeError)):
        return store.query(
            sparql,
            prefixes=vocab.QUERY_PREFIXES,
            base_iri=base,
            default_graph=list(default_graph) if default_graph is not None else None,
            named_graphs=list(named_graphs) if named_graphs is not None else None,
        )
