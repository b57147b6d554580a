"""`iclr-kg serve` and `publish`: the endpoint and pages behind a production server, and the graph
sent to another SPARQL engine."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from iclr_kg.config import Settings, flag_help
from iclr_kg.errors import (
    Failure,
    IclrKgError,
    SettingsError,
)
from iclr_kg.progress import Progress
from iclr_kg.served import served
from iclr_kg.sparql.saved import load_saved
from iclr_kg.store import (
    current_generation,
    open_read_only,
)

if TYPE_CHECKING:
    pass
from iclr_kg.cli.common import backend_option, fails_cleanly, main, store_option


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
    serves = served(settings)
    if serves.builds_here:
        if current_generation(settings.store) is None:
            click.echo(f"no store at {settings.store}: building it first")
        # In a spawned process: gunicorn forks the web processes from this one, and RocksDB opened
        # before a fork breaks in the children (its threads do not survive: a writer hangs, readers
        # abort or segfault at exit). A corrupt store fails here, with a clear message.
        built = _in_fresh_process(_prepare_store, settings)
        if built:
            click.echo(built)
    where = serves.describe()  # a remote engine is asked here: it answers, and something is published
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
