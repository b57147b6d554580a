"""`iclr-kg query`, `export`, `dump` and `stats`: the graph read, each query in a worker under the
endpoint's time and memory limits."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import sys
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from pyoxigraph import NamedNode, serialize

from iclr_kg import terms, vocab
from iclr_kg.atomic import atomic_output, check_writable
from iclr_kg.config import Settings, flag_help
from iclr_kg.errors import (
    QueryError,
    QueryMemoryExceeded,
    SettingsError,
    engine_errors,
)
from iclr_kg.identifiers import SCHEMES, coverage_query
from iclr_kg.progress import Progress
from iclr_kg.query.answering import QueryRequest
from iclr_kg.query.pool import QueryPool, RunningQuery
from iclr_kg.sparql.formats import EXPORT_FORMATS, RDF_FORMATS, RESULT_FORMATS
from iclr_kg.sparql.lint import check, parsed_problems
from iclr_kg.sparql.saved import get_saved
from iclr_kg.store import (
    STATS_CLASSES,
    STATS_GRAPHS,
    built_on,
    current_generation,
    open_read_only,
    query_graphs,
)

if TYPE_CHECKING:
    pass
from iclr_kg.cli.common import (
    GRAPH_CHOICES,
    backend_option,
    fails_cleanly,
    main,
    open_graph,
    output_stream,
    store_option,
)
from iclr_kg.served import current_key


def _read_query_argument(argument: str) -> str:
    """The query text: the argument itself, or the file it names.

    An argument without whitespace and without `{` cannot be a query, so it names a file, and
    a missing or unreadable file is said so, instead of being parsed as SPARQL."""
    candidate = Path(argument)
    looks_like_path = not any(c.isspace() for c in argument) and "{" not in argument
    if len(argument) < 4096 and (looks_like_path or candidate.is_file()):
        try:
            return candidate.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise QueryError(f"no such query file: {argument}") from None
        except UnicodeDecodeError:
            raise QueryError(f"{argument} is not UTF-8 text") from None
        except OSError as exc:
            raise QueryError(f"cannot read {argument}: {exc.strerror}") from None
    return argument


@main.command()
@click.argument("query_or_file", required=False)
@store_option
@click.option("--saved", "saved_name", metavar="NAME", help="Run the saved query queries/NAME.rq.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE", help="A saved query parameter.")
@click.option(
    "-f",
    "--format",
    "fmt",
    default=None,
    help="json|xml|csv|tsv for SELECT/ASK; turtle|ntriples|nquads|trig|jsonld|rdfxml for CONSTRUCT/DESCRIBE.",
)
@click.option("--no-inferred", is_flag=True, help="Leave the inferred graph out of the default graph.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write to FILE instead of stdout.")
@backend_option
@fails_cleanly
def query(
    query_or_file: str | None,
    store: Path | None,
    backend: str | None,
    saved_name: str | None,
    params: tuple[str, ...],
    fmt: str | None,
    no_inferred: bool,
    output: Path | None,
) -> None:
    """Run a SPARQL query (inline text, a file, or --saved NAME) against the store.

    The default graph is the union of every graph, inferred included, as on the endpoint.
    """
    settings = Settings.from_env(store=store, backend=backend)
    substitutions = None
    if saved_name:
        saved = get_saved(settings.queries_dir, saved_name)
        values = dict(p.split("=", 1) for p in params if "=" in p)
        if len(values) != len(params):
            raise QueryError("--param takes NAME=VALUE")
        text, substitutions = saved.text, saved.substitutions(values)
    elif query_or_file:
        text = _read_query_argument(query_or_file)
    else:
        raise QueryError("give a query, a query file, or --saved NAME")
    if output is not None:
        check_writable(output)
    _say_problems(text, settings)
    formats: dict[str, str | None] = {
        kind: name if name in (RESULT_FORMATS if kind == "results" else RDF_FORMATS) else None
        for kind, name in {"results": fmt or "csv", "rdf": fmt or "turtle"}.items()
    }
    request = QueryRequest(
        text,
        include_inferred=not no_inferred,
        services=settings.services,
        formats=formats,
        substitutions={v.value: str(t) for v, t in (substitutions or {}).items()},
    )
    with isolated_query(settings, request) as running:  # failures: one line, by fails_cleanly
        _write_running(running, fmt, output)


def _say_problems(text: str, settings: Settings) -> None:
    """What the query page's editor would underline (`lint.check`: undeclared prefixes, terms
    the ontology lacks, with the nearest one), on standard error before the query runs: 0 rows
    for `iclr:titel` then come with the reason. An error (the query cannot run) is the command's
    one line: the query is not run to say it again in the engine's words."""
    ontology = terms.read(settings.ontology_dir / "iclr.ttl")
    for problem in check(text, ontology.names, parsing=lambda parsed: parsed_problems(parsed, ontology=ontology)):
        where = f"line {problem.line}, column {problem.column}: {problem.message}"
        if problem.severity == "error":
            raise QueryError(where)
        click.echo(f"{problem.severity}: {where}", err=True)


def _write_running(running: RunningQuery, fmt: str | None, output: Path | None) -> None:
    """Copy a worker's serialization to `output` (whole, or not at all) or standard output."""
    if running.format is None:
        kind, known = ("a result", RESULT_FORMATS) if running.kind == "results" else ("an RDF", RDF_FORMATS)
        raise QueryError(f"format {fmt!r} is not {kind} format: {', '.join(known)}")
    with output_stream(output) as out:
        for chunk in running.body(running.format):
            out.write(chunk)


def _rows(settings: Settings, text: str) -> list[list[Any]]:
    """The rows of a small SELECT, as (kind, value, language, datatype) per term, from a worker."""
    with isolated_query(settings, QueryRequest(text, row_limit=10_000)) as running:
        return (running.rows or {}).get("rows", [])


@contextlib.contextmanager
def isolated_query(settings: Settings, request: QueryRequest) -> Iterator[RunningQuery]:
    """Run a query in a worker process under the query time and memory limits, as the endpoint does.

    A damaged store can abort the reading process or make it allocate without bound; here that
    ends the worker and the command prints one line, instead of aborting or hanging the CLI.
    """
    generation = current_key(settings)
    pool = QueryPool(1, memory_mib=settings.query_memory, backend_auth=settings.backend_auth, quiet=True)
    try:
        yield pool.start(generation, request, settings.query_timeout)
    except QueryMemoryExceeded as exc:  # the reader died: the query, or a damaged store
        raise QueryMemoryExceeded(
            f"{exc}, or the store is damaged: `iclr-kg check-store` reads every generation and names the damage"
        ) from None
    finally:
        pool.close()


def _graphs_for(choice: str, db: Any) -> list[NamedNode]:
    named = {
        "inferred": vocab.GRAPH_INFERRED,
        "ontology": vocab.GRAPH_ONTOLOGY,
        "wikidata": vocab.GRAPH_WIKIDATA,
        "entities": vocab.GRAPH_ENTITIES,
    }
    everything = query_graphs(db)
    if choice == "all":
        return everything
    if choice == "asserted":
        return [g for g in everything if g.value not in (vocab.GRAPH_INFERRED, vocab.GRAPH_ONTOLOGY)]
    iri = named.get(choice, choice)
    if not any(g.value == iri for g in everything):
        known = ", ".join(sorted(g.value for g in everything))
        raise QueryError(f"no graph {choice!r}; choose {GRAPH_CHOICES}; graphs in the store: {known}")
    return [NamedNode(iri)]


@main.command()
@store_option
@click.option(
    "--graph", "graph_choice", default="all", show_default=True, metavar=GRAPH_CHOICES, help="Which graph(s) to export."
)
@click.option("-f", "--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="turtle", show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write to FILE instead of stdout.")
@click.option("--mappings", type=click.Choice(["sssom"]), help="Export the Wikidata links as an SSSOM TSV instead.")
@click.option(
    "--quickstatements",
    is_flag=True,
    help="Export QuickStatements for what Wikidata may lack (checked links only, referenced by URL).",
)
@backend_option
@fails_cleanly
def export(
    store: Path | None,
    graph_choice: str,
    fmt: str,
    output: Path | None,
    mappings: str | None,
    quickstatements: bool,
    backend: str | None,
) -> None:
    """Export the graph, streamed. Turtle and N-Triples merge the chosen graphs into one."""
    settings = Settings.from_env(store=store, backend=backend)
    if mappings or quickstatements:
        from iclr_kg.build.sources import load_dataset
        from iclr_kg.external.wikidata import quickstatements as statements
        from iclr_kg.external.wikidata import write_sssom

        dataset = load_dataset(settings.data_dir, settings.imports)
        with atomic_output(output, "w") if output else contextlib.nullcontext(sys.stdout) as out:
            if mappings:
                write_sssom(dataset, out)
            else:
                lines, unreferenced = statements(dataset, open_read_only(settings.store))
                out.write("".join(line + "\n" for line in lines))
                click.echo(f"{len(lines)} QuickStatements lines", err=True)
                if unreferenced:
                    click.echo(
                        f"{unreferenced} award statement(s) left out: no source of theirs gives a URL Wikidata "
                        "accepts as a reference (an official ICLR announcement, or OpenReview)",
                        err=True,
                    )
        return
    if output is not None:
        check_writable(output)
    db = open_graph(settings)
    graphs = _graphs_for(graph_choice, db)
    chosen = RDF_FORMATS[fmt]
    shown_on = Progress.for_terminal(settings) if output is not None else Progress.silent()  # stdout may be the data
    with (
        engine_errors("the export"),
        output_stream(output) as out,
        shown_on.stage("export", unit="quads" if chosen.supports_graphs else "triples") as shown,
    ):
        if chosen.supports_graphs:
            quads = chain.from_iterable(db.quads_for_pattern(None, None, None, g) for g in graphs)
            serialize(shown.track(quads), out, chosen.rdf, prefixes=vocab.EXPORT_PREFIXES)
        else:
            # CONSTRUCT over the chosen graphs merges them as a set: a triple stated in two
            # graphs is written once.
            merged = db.query("CONSTRUCT WHERE { ?s ?p ?o }", default_graph=graphs)
            serialize(shown.track(merged), out, chosen.rdf, prefixes=vocab.EXPORT_PREFIXES)


@main.command()
@store_option
@click.option(
    "--to",
    "-o",
    "parent",
    type=click.Path(path_type=Path, file_okay=False),
    help=flag_help(
        "releases_dir",
        "The folder the release goes into, as iclr-kg-<version>/ (default: releases/ beside the store; /downloads lists it).",
    ),
)
@click.option("--version", help="The release's version [default: the date the current generation was built].")
@backend_option
@fails_cleanly
def dump(store: Path | None, parent: Path | None, version: str | None, backend: str | None) -> None:
    """Write a versioned release: every graph as gzipped N-Quads and as Turtle, VoID and DCAT
    (sizes, formats, checksums, licence), SHA256SUMS and a CITATION.cff."""
    from iclr_kg.release import VERSION, write_release

    settings = Settings.from_env(store=store, backend=backend, releases_dir=parent)
    parent = settings.releases
    generation = current_generation(settings.store)
    version = version or built_on(generation.name if generation else None) or dt.date.today().isoformat()
    if not re.fullmatch(VERSION, version):
        raise SettingsError(f"--version {version!r}: letters, digits, '.' and '-' only (2026-12-01, 1.0)")
    try:
        with engine_errors("the dump"):
            folder = write_release(open_graph(settings), parent, version, Progress.for_terminal(settings))
    except FileExistsError as exc:
        raise SettingsError(str(exc)) from None
    click.echo(f"{folder}: written ({', '.join(sorted(p.name for p in folder.iterdir()))})")


@main.command()
@store_option
@backend_option
@fails_cleanly
def stats(store: Path | None, backend: str | None) -> None:
    """Triples per graph and entities per class of the ontology."""
    settings = Settings.from_env(store=store, backend=backend)
    graphs, classes, coverage = (_rows(settings, q) for q in (STATS_GRAPHS, STATS_CLASSES, coverage_query()))
    lines = ["triples per graph:", *(f"  {int(triples[1]):>8}  {graph[1]}" for graph, triples in graphs)]
    lines.append("entities per class (inferred included):")
    lines += (f"  {int(entities[1]):>8}  iclr:{cls[1].split('#', 1)[1]}" for cls, entities in classes)
    lines.append("entities with an identifier elsewhere, per kind and scheme:")
    lines += (f"  {int(n[1]):>8}  {kind[1]:<13} {SCHEMES[scheme[1]].label}" for kind, scheme, n in coverage)
    click.echo("\n".join(lines))  # all read first: an error is the only line printed
