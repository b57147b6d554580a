"""The `iclr-kg` command: thin wrappers over the pipeline, store and query modules.

Errors the user can fix print one line (or a readable report) and exit non-zero; `--debug`
shows the traceback instead.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import re
import sys
from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

import click
from pyoxigraph import NamedNode, serialize

from iclr_kg import gcpause, terms, vocab
from iclr_kg.atomic import atomic_output, check_writable
from iclr_kg.config import Settings, flag_help
from iclr_kg.errors import (
    Failure,
    IclrKgError,
    ImportFailed,
    QueryError,
    QueryMemoryExceeded,
    SettingsError,
    StoreError,
    engine_errors,
)
from iclr_kg.graph import ReadableGraph
from iclr_kg.identifiers import SCHEMES, coverage_query
from iclr_kg.processes import memory_limit
from iclr_kg.progress import Progress
from iclr_kg.query.formats import EXPORT_FORMATS, RDF_FORMATS, RESULT_FORMATS
from iclr_kg.query.lint import check
from iclr_kg.query.pool import QueryPool, QueryRequest, RunningQuery
from iclr_kg.query.saved import get_saved, load_saved
from iclr_kg.store import (
    STATS_CLASSES,
    STATS_GRAPHS,
    built_on,
    check_generation,
    current_generation,
    generations,
    open_read_only,
    query_graphs,
)

GRAPH_CHOICES = "all|asserted|inferred|ontology|wikidata|entities|GRAPH_IRI"

if TYPE_CHECKING:
    from iclr_kg.remote.store import RemoteStore


def store_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--store DIR` (or ICLR_KG_STORE) on every command."""
    return click.option(
        "--store",
        type=click.Path(path_type=Path),
        default=None,
        help=flag_help("store", "Store directory."),
    )(command)


def backend_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--backend embedded|sparql+URL` (or ICLR_KG_BACKEND) on the commands that read the graph."""
    return click.option("--backend", default=None, metavar="embedded|sparql+URL", help=flag_help("backend"))(command)


def imports_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--imports DIR` (or ICLR_KG_IMPORTS_DIR) on the commands that write an import."""
    return click.option(
        "--imports",
        "imports_dir",
        type=click.Path(file_okay=False, path_type=Path),
        help=flag_help("imports_dir", "Imports directory (default: imports/ beside the store)."),
    )(command)


def open_graph(settings: Settings) -> ReadableGraph:
    """The graph a command reads: the store, or the engine `--backend` names (remote/store.py;
    imported only then, so `serve`'s web processes do not carry an HTTP client they never use)."""
    from iclr_kg.remote.store import open_graph as opened

    return opened(settings)


def open_remote(settings: Settings) -> RemoteStore:
    """The engine `--backend` names (imported only then, as in `open_graph`)."""
    from iclr_kg.remote.store import open_remote as opened

    return opened(settings)


def fails_cleanly(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn IclrKgError into a one-line message and its exit code, unless --debug."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except IclrKgError as exc:
            if click.get_current_context().find_root().params.get("debug"):
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


_PROGRAM = False  # True in the `iclr-kg` program (`run`): its process ends when the command does


def run() -> None:
    """The `iclr-kg` program (pyproject's console script): `main`, in a process of its own."""
    global _PROGRAM
    _PROGRAM = True
    main()


def end_program() -> NoReturn:
    """End the `iclr-kg` process now, its output flushed, without freeing what the command made
    one object at a time nor tearing the interpreter down. After a 10,000-paper build, whose
    store is by then flushed, closed and published, that took 0.46 s: collecting cycles 0.12 s,
    freeing the quads and facts 0.21 s, finalizing 0.13 s. Only for the program (`run`):
    `main` called in-process (click's test runner) returns as usual. A reader that went away
    (`iclr-kg build | head -1`) loses the rest of the report, not the build."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.version_option(package_name="iclr-kg")
def main(debug: bool) -> None:
    """iclr-kg: a knowledge graph of ICLR papers, authors, organizations and awards."""


@main.command()
@store_option
@click.option(
    "--reasoner",
    type=click.Choice(["fast", "owlrl"]),
    default=None,
    help=flag_help("reasoner"),
)
@click.option(
    "--validator",
    type=click.Choice(["fast", "pyshacl"]),
    default=None,
    help=flag_help("validator"),
)
@click.option("--full", is_flag=True, help="Build everything again, even where the last build could be reused.")
@fails_cleanly
def build(store: Path | None, reasoner: str | None, validator: str | None, full: bool) -> None:
    """Build data/ + ontology/ into a validated, reasoned Oxigraph store.

    The new store replaces the old one only if every stage succeeds. After an edit the build is
    incremental: only what changed is reasoned, validated, stored and indexed again.
    """
    from iclr_kg.build.pipeline import build as run_build

    settings = Settings.from_env(store=store, reasoner=reasoner, validator=validator)
    with gcpause.paused(collect=not _PROGRAM):
        report = run_build(settings, Progress.for_terminal(settings), full=full)
    click.echo(f"{report.summary()}\nstore: {settings.store} -> {report.generation}")
    if _PROGRAM:
        end_program()


@main.command()
@store_option
@click.option(
    "--validator",
    type=click.Choice(["fast", "pyshacl"]),
    default="pyshacl",
    show_default=True,
    help="pyshacl (the reference) or fast (SHACL compiled to SPARQL).",
)
@fails_cleanly
def validate(store: Path | None, validator: str) -> None:
    """Check data/ against the SHACL shapes and print a readable report (exit 1 on violations)."""
    from iclr_kg.build.pipeline import compile_graph

    validation = compile_graph(Settings.from_env(store=store, validator=validator)).validation
    if validation is None:  # compile_graph validates unless told not to
        raise ValueError("the graph was compiled without validating it")
    click.echo(validation.report)
    if not validation.conforms:
        click.echo(f"{len(validation.violations)} violation(s)", err=True)
        sys.exit(1)


@contextlib.contextmanager
def _output(path: Path | None) -> Iterator[IO[bytes]]:
    """Standard output, or a file written whole only if everything succeeds."""
    if path is None:
        yield sys.stdout.buffer
        return
    with atomic_output(path) as out:
        yield out


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
    for problem in check(text, ontology.names, ontology=ontology):
        where = f"line {problem.line}, column {problem.column}: {problem.message}"
        if problem.severity == "error":
            raise QueryError(where)
        click.echo(f"{problem.severity}: {where}", err=True)


def _write_running(running: RunningQuery, fmt: str | None, output: Path | None) -> None:
    """Copy a worker's serialization to `output` (whole, or not at all) or standard output."""
    if running.format is None:
        kind, known = ("a result", RESULT_FORMATS) if running.kind == "results" else ("an RDF", RDF_FORMATS)
        raise QueryError(f"format {fmt!r} is not {kind} format: {', '.join(known)}")
    with _output(output) as out:
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
    if settings.remote is not None:
        generation: Any = open_remote(settings).key
    else:
        generation = current_generation(settings.store)
        if generation is None:
            open_read_only(settings.store)  # raises the clear "no store" error
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
        _output(output) as out,
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


@main.group("link-wikidata", invoke_without_command=True)
@store_option
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(["organization", "person", "paper"]),
    help="Which unlinked entities to reconcile (repeatable; default all).",
)
@click.option("--limit", type=int, help="Reconcile at most N entities.")
@click.option(
    "--min-score", type=float, default=0.7, show_default=True, help="Propose only candidates scoring this or more."
)
@click.option("--dry-run", is_flag=True, help="Print the proposals; write nothing.")
@click.option("--api", help=flag_help("wikidata_api", "Wikidata Action API URL."))
@click.option("--review", type=click.Path(path_type=Path), help="Review file [default: next to the store].")
@click.pass_context
@fails_cleanly
def link_wikidata(
    ctx: click.Context,
    store: Path | None,
    kinds: tuple[str, ...],
    limit: int | None,
    min_score: float,
    dry_run: bool,
    api: str | None,
    review: Path | None,
) -> None:
    """Propose Wikidata links for unlinked entities, with evidence, into a review file.

    `iclr-kg link-wikidata accept` then moves the proposals a curator keeps into data/wikidata.yaml.
    """
    ctx.obj = {"store": store, "review": review}
    if ctx.invoked_subcommand:
        return
    from iclr_kg.build.sources import load_dataset
    from iclr_kg.external.wikidata import WikidataClient, reconcile, write_proposals

    settings = Settings.from_env(store=store, wikidata_api=api)
    review_file = review or settings.store.parent / "wikidata-proposals.yaml"
    client = WikidataClient.for_settings(settings)
    dataset = load_dataset(settings.data_dir, settings.imports)

    def bar(items):
        listed = list(items)
        with Progress.for_terminal(settings).stage("reconcile", total=len(listed), unit="entities") as shown:
            yield from shown.track(listed, every=1)

    proposals = reconcile(dataset, client, kinds or ("organization", "person", "paper"), limit, min_score, progress=bar)
    for p in proposals:
        click.echo(f"{p.status:9} {p.entity} -> {p.qid} ({p.label}) score {p.score}: {'; '.join(p.evidence)}")
    if dry_run:
        click.echo(f"{len(proposals)} proposal(s); --dry-run: nothing written ({client.requests} API requests)")
        return
    write_proposals(proposals, review_file)
    click.echo(
        f"{len(proposals)} proposal(s) written to {review_file} ({client.requests} API requests); "
        f"review, then `iclr-kg link-wikidata accept`"
    )


@link_wikidata.command("accept")
@click.argument("entities", nargs=-1)
@click.pass_context
@fails_cleanly
def link_wikidata_accept(ctx: click.Context, entities: tuple[str, ...]) -> None:
    """Accept proposals (all unambiguous ones, or the ENTITIES named, e.g. person/yang-song)."""
    from iclr_kg.external.wikidata import accept

    settings = Settings.from_env(store=ctx.obj.get("store"))
    review_file = ctx.obj.get("review") or settings.store.parent / "wikidata-proposals.yaml"
    accepted = accept(review_file, settings.data_dir / "wikidata.yaml", list(entities) or None)
    for p in accepted:
        click.echo(f"accepted {p.entity} -> {p.qid}")
    click.echo(
        f"{len(accepted)} link(s) added to {settings.data_dir / 'wikidata.yaml'}; run `iclr-kg build` "
        "(and `iclr-kg import wikidata` for the identifiers their items state)"
    )


@main.group("import")
def import_group() -> None:
    """Import whole venues from outside services as sources of their own (see `build`)."""


@import_group.command("openreview")
@store_option
@click.option(
    "--venue",
    required=True,
    help="An ICLR year (2021), its OpenReview venue id (ICLR.cc/2021/Conference), or `all` for every supported year.",
)
@click.option("--reviews", is_flag=True, help="Also import each public review's rating and confidence.")
@click.option(
    "--limit", type=click.IntRange(min=1), help="Import at most N submissions (a partial import states no counts)."
)
@click.option(
    "--api",
    "api",
    type=click.Choice(["auto", "v1", "v2"]),
    default="auto",
    show_default=True,
    help="OpenReview API version; auto takes the year's (v1 up to 2023, v2 from 2024).",
)
@click.option("--base-url", help=flag_help("openreview_api", "API v1 base URL."))
@click.option("--base-url-v2", help=flag_help("openreview_api_v2", "API v2 base URL."))
@imports_option
@click.option("--refresh", is_flag=True, help="Drop this venue's cached pages and fetch everything again.")
@fails_cleanly
def import_openreview(
    store: Path | None,
    venue: str,
    reviews: bool,
    limit: int | None,
    api: str,
    base_url: str | None,
    base_url_v2: str | None,
    imports_dir: Path | None,
    refresh: bool,
) -> None:
    """Import a venue's submissions, decisions, authors and (--reviews) review scores from OpenReview.

    Pages are cached as they arrive: an interrupted import resumes where it stopped. The import
    folder is written only when complete and buildable; then run `iclr-kg build`. The years
    supported, and what each holds, are in docs/openreview.md ("Every ICLR edition").
    """
    from iclr_kg.external.openreview_import import run_all, run_import

    settings = Settings.from_env(
        store=store, openreview_api=base_url, openreview_api_v2=base_url_v2, imports_dir=imports_dir
    )
    if venue.strip().lower() == "all":
        if limit is not None or api != "auto":
            raise click.UsageError("--venue all takes neither --limit nor --api")
        results = run_all(
            settings, reviews=reviews, refresh=refresh, progress=lambda fmt: _fetch_bar(settings, f"ICLR {fmt.year}")
        )
        failed = 0
        for year in results:
            if year.result is not None:
                _report_import(year.result, hint=False)
            else:
                click.echo(
                    f"ICLR {year.fmt.year}: {'skipped' if year.skipped else 'FAILED'}: {year.skipped or year.failed}"
                )
                failed += year.failed is not None
        if failed:
            raise ImportFailed(f"{failed} year(s) failed; rerun to resume them (what was fetched is cached)")
        if any(year.result and year.result.changed for year in results):
            click.echo("run `iclr-kg build` to include them")
        return
    with _fetch_bar(settings, f"fetching {venue}") as progress:
        result = run_import(settings, venue, api=api, reviews=reviews, limit=limit, refresh=refresh, progress=progress)
    _report_import(result)


@import_group.command("wikidata")
@store_option
@click.option("--api", help=flag_help("wikidata_api", "Wikidata Action API URL."))
@imports_option
@fails_cleanly
def import_wikidata(store: Path | None, api: str | None, imports_dir: Path | None) -> None:
    """Import the identifiers (ORCID, dblp, ROR, arXiv, DOI, Semantic Scholar...) that Wikidata
    states for every entity data/wikidata.yaml links, as imports/wikidata-identifiers/.

    Answers are cached beside the store (as for `link-wikidata`): a rerun asks only what is new.
    Each identifier is checked by its scheme; one stated for two of our entities, or values that
    differ between sources, are reported by `iclr-kg build` for a curator."""
    from iclr_kg.external.wikidata import WikidataClient, import_identifiers

    settings = Settings.from_env(store=store, wikidata_api=api, imports_dir=imports_dir)
    client = WikidataClient.for_settings(settings)
    _report_import(import_identifiers(settings, client))


@contextlib.contextmanager
def _fetch_bar(settings: Settings, label: str) -> Iterator[Callable[[int, int], None]]:
    """Progress of one fetch: (done, total) as pages arrive (progress.py: a bar on a terminal)."""
    with Progress.for_terminal(settings).stage(label, unit="submissions") as shown:

        def progress(done: int, total: int) -> None:
            shown.total(max(total, done))
            shown.advance(done - shown.count)

        yield progress


def _report_import(result: Any, hint: bool = True) -> None:
    figures = ", ".join(f"{count} {name}" for name, count in result.stats.items())
    verdict = "written" if result.changed else "unchanged"
    click.echo(f"{result.folder}: {verdict} (API {result.api}, {result.requests} requests): {figures}")
    for warning in getattr(result, "warnings", []):
        click.echo(f"warning: {warning}", err=True)
    if result.changed and hint:
        click.echo("run `iclr-kg build` to include it")


@main.command()
@store_option
@click.option("--host", default=None, help=flag_help("host", "Interface to listen on."))
@click.option("--port", type=int, default=None, help=flag_help("port", "Port."))
@click.option(
    "--server",
    type=click.Choice(["gunicorn", "waitress"]),
    default=None,
    help=flag_help("server", "WSGI server (waitress where gunicorn is not available)."),
)
@click.option("--processes", type=int, default=2, show_default=True, help="Web processes (gunicorn).")
@click.option(
    "--threads", type=int, default=8, show_default=True, help="Threads per web process that evaluate queries."
)
@backend_option
@fails_cleanly
def serve(
    store: Path | None,
    host: str | None,
    port: int | None,
    server: str | None,
    processes: int,
    threads: int,
    backend: str | None,
) -> None:
    """Serve the SPARQL endpoint and pages; builds the store first if there is none.

    gunicorn supervises several web processes, so the Python web layer uses every core; in
    each, granian's Rust HTTP server reads the requests and queries run on the process's own
    threads (web/server.py, query/local.py). `--server waitress` is one process without
    gunicorn, its queries in worker processes, and works on any platform.
    """
    from iclr_kg.web import create_app

    settings = Settings.from_env(store=store, host=host, port=port, server=server, backend=backend)
    if settings.remote is not None:
        served = open_remote(settings)  # the engine answers, and something was published there
        where = f"{settings.backend} (generation {served.publication.generation})"
    else:
        where = str(settings.store)
        if current_generation(settings.store) is None:
            click.echo(f"no store at {settings.store}: building it first")
        # In a spawned process: gunicorn forks the web processes from this one, and RocksDB opened
        # before a fork breaks in the children (its threads do not survive: a writer hangs, readers
        # abort or segfault at exit). A corrupt store fails here, with a clear message.
        built = _in_fresh_process(_prepare_store, settings)
        if built:
            click.echo(built)
    load_saved(settings.queries_dir)  # a malformed saved query fails here, not in every web process's boot
    chosen = settings.server
    if chosen == "gunicorn" and not _gunicorn_available():
        chosen = "waitress"
    from iclr_kg.web.server import check_port_free

    check_port_free(settings.host, settings.port)  # before saying "serving": a busy port is the one line
    click.echo(f"serving {where} at http://{settings.host}:{settings.port}/ (SPARQL endpoint: /sparql) with {chosen}")
    if chosen == "gunicorn":
        _serve_gunicorn(settings, processes, threads)
        return
    from iclr_kg.web.server import make_server, serve_forever

    try:
        server = make_server(
            create_app(settings), None, threads, settings.request_timeout, host=settings.host, port=settings.port
        )
    except OSError as exc:
        raise SettingsError(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}") from None
    serve_forever(server)


def _prepare_store(settings: Settings) -> str:
    """Build the store if there is none, then open it once (what `serve` checks before starting)."""
    from iclr_kg.build.pipeline import build as run_build

    summary = run_build(settings).summary() if current_generation(settings.store) is None else ""
    open_read_only(settings.store)
    return summary


def _in_fresh_process(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in a spawned process; an IclrKgError there is raised here, as one line."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        outcome = pool.apply(_capture, (function, *args))
    if isinstance(outcome, Failure):
        raise outcome.exception()
    return outcome


def _capture(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except IclrKgError as exc:
        return Failure.of(exc)


def _gunicorn_available() -> bool:
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        return False
    return sys.platform != "win32"


def _serve_gunicorn(settings: Settings, processes: int, threads: int) -> None:
    from iclr_kg.web import create_app
    from iclr_kg.web.server import serve_gunicorn

    serve_gunicorn(
        lambda: create_app(settings),  # in each web process, after the fork
        settings.host,
        settings.port,
        processes,
        threads,
        settings.request_timeout,
        timeout=int(settings.query_timeout) + 60,
    )


@main.command()
@store_option
@click.option(
    "--to", "to", required=True, metavar="URL", help="The engine's SPARQL query endpoint (or Fuseki dataset)."
)
@click.option(
    "--graph-store", metavar="URL", help="Its Graph Store Protocol endpoint, where it is not the engine's usual one."
)
@click.option(
    "--auth", metavar="USER:PASSWORD|bearer:TOKEN", help=flag_help("backend_auth", "Credentials for writing.")
)
@fails_cleanly
def publish(store: Path | None, to: str, graph_store: str | None, auth: str | None) -> None:
    """Send the current generation to a SPARQL 1.1 engine (Oxigraph, Fuseki, Virtuoso, ...).

    Every graph, the inferred one and the merged default graph included, goes there under a
    name of the generation's own; counts are verified, then the publication record readers look
    up is switched to it (nothing is moved on the engine). Run it again after a failure: it goes
    on from the last chunk the engine took. Then `iclr-kg serve --backend sparql+URL`.
    """
    from iclr_kg.remote.publish import publish as run_publish

    settings = Settings.from_env(store=store, backend_auth=auth)
    report = run_publish(settings, to, graph_store=graph_store, auth=settings.backend_auth,
                         progress=Progress.for_terminal(settings))  # fmt: skip
    click.echo(report.summary())


@main.group("updates")
def updates_group() -> None:
    """The journal of accepted updates: list them, export them as SPARQL Update, drop them.

    Every update accepted on /update (and every Graph Store write) is journaled before it is
    acknowledged and replayed onto each new build. To make one permanent, turn the export into
    data/ and drop it from the journal.
    """


@updates_group.command("list")
@store_option
@fails_cleanly
def updates_list(store: Path | None) -> None:
    """One line per journaled update: id, time, kind, size and its first line."""
    from iclr_kg.updates import Journal

    entries = Journal(Settings.from_env(store=store).store).entries()
    for entry in entries:
        first = next((line.strip() for line in entry.update.splitlines() if line.strip()), "")
        click.echo(f"{entry.id:>5}  {entry.at}  {entry.kind:<11} {len(entry.update):>7} chars  {first[:80]}")
    click.echo(f"{len(entries)} journaled update(s)", err=True)


@updates_group.command("export")
@store_option
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write to FILE instead of stdout.")
@fails_cleanly
def updates_export(store: Path | None, output: Path | None) -> None:
    """The journal as one SPARQL Update file (our prefixes declared), runnable as it is."""
    from iclr_kg.updates import Journal, export_text

    if output is not None:
        check_writable(output)
    text = export_text(Journal(Settings.from_env(store=store).store).entries())
    with _output(output) as out:
        out.write(text.encode("utf-8"))


@updates_group.command("drop")
@store_option
@click.argument("ids", nargs=-1, type=int)
@click.option("--all", "drop_all", is_flag=True, help="Drop every entry.")
@fails_cleanly
def updates_drop(store: Path | None, ids: tuple[int, ...], drop_all: bool) -> None:
    """Remove entries from the journal (the next build will not replay them)."""
    from iclr_kg.updates import drop

    if not ids and not drop_all:
        raise QueryError("name the entries to drop (ids from `iclr-kg updates list`), or --all")
    dropped = drop(Settings.from_env(store=store).store, None if drop_all else set(ids))
    click.echo(f"dropped {len(dropped)} update(s); the store being served keeps them until the next build")


@main.command("check-store")
@store_option
@fails_cleanly
def check_store(store: Path | None) -> None:
    """Read every generation of the store whole and name the damaged ones (exit 1 if the
    current one is damaged: rebuild with `iclr-kg build`)."""
    settings = Settings.from_env(store=store)
    current = current_generation(settings.store)
    found = generations(settings.store)
    if not found:
        raise StoreError(f"no store at {settings.store}: run `iclr-kg build --store {settings.store}` first")
    damaged_current = False
    for generation in found:
        ok, detail = check_generation(generation, memory_limit(settings.query_memory))
        mark = " (current)" if generation == current else ""
        click.echo(f"{'ok' if ok else 'DAMAGED':8} {generation.name}{mark}: {detail}")
        damaged_current |= not ok and generation == current
    if damaged_current:
        click.echo("the current generation is damaged: run `iclr-kg build` to make a new one", err=True)
        sys.exit(1)


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


if __name__ == "__main__":
    main()
