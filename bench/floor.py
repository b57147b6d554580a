"""The floor of our web stack: what `iclr-kg serve`'s HTTP layer alone can answer, no query run.

    python bench/floor.py --port 8123       # then: curl 'http://127.0.0.1:8123/sparql?query=ASK{}'

The same front end as `iclr-kg serve` (gunicorn supervising two web processes, granian's Rust
HTTP server in each: web/server.py) around a Flask app whose `/sparql` answers every request
with one fixed small SPARQL JSON result: no parsing, no store, no worker, no cache.
bench/endpoint.py runs it beside the real servers (`--floor`): the throughput no Flask endpoint
behind this front end can pass on this machine, measured in the same run, so that "ours against
Oxigraph's Rust server" can be read against what the stack itself allows.

    python bench/floor.py --port 8123 --store STORE   # the same front end, and the engine

`--store`: the same front end around a plain WSGI callable that runs each `GET /sparql?query=`
on pyoxigraph (the store's current generation, our prefixes) and answers its JSON: no Flask, no
cache, no checks, no time limit, no admission. No endpoint of ours built on this front end and
this engine can answer more; bench/endpoint.py prints it as "floor, engine" (`--floor`).

    python bench/floor.py --port 8123 --store STORE --hand-off

`--hand-off`: the same callable, but each query is evaluated on an evaluator thread while the
request's thread waits for it under a deadline, as query/local.py must do to answer a runaway
at its time limit (pyoxigraph cannot stop a query): "floor, hand-off". Between the two engine
floors is what the on-time answer costs; between it and ours, everything else ours does.
`--evaluators N`: evaluator threads per web process (8, as `iclr-kg serve`'s threads).
"""

from __future__ import annotations

import argparse
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from flask import Flask, Response

ANSWER = b'{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"1"}}]}}'


def create_app() -> Flask:
    app = Flask("floor")

    @app.route("/sparql", methods=["GET", "POST"])
    def sparql() -> Response:
        return Response(ANSWER, content_type="application/sparql-results+json")

    return app


def create_engine_app(store_dir: Path, hand_off: bool = False, evaluators: int = 8) -> Callable[..., Iterable[bytes]]:
    """A WSGI callable: the query of `GET /sparql?query=...` run by pyoxigraph, JSON back (with
    `hand_off`, on one of `evaluators` threads, the request's thread waiting; eight, as many as
    `iclr-kg serve`'s threads per web process)."""
    from pyoxigraph import QueryResultsFormat, RdfFormat, Store, serialize

    from iclr_kg.query.answering import result_kind
    from iclr_kg.store import current_generation
    from iclr_kg.vocab import QUERY_PREFIXES
    from iclr_kg.web.lean import _unquote

    store = Store.read_only(str(current_generation(store_dir)))

    def evaluate(text: str) -> tuple[bytes, str]:
        result = store.query(text or "ASK {}", prefixes=QUERY_PREFIXES, base_iri="http://127.0.0.1/sparql")
        if result_kind(result) == "results":
            return result.serialize(format=QueryResultsFormat.JSON), "application/sparql-results+json"
        return serialize(result, format=RdfFormat.N_TRIPLES), "application/n-triples"  # CONSTRUCT / DESCRIBE

    tasks: queue.SimpleQueue[tuple[str, queue.SimpleQueue[tuple[bytes, str]]]] = queue.SimpleQueue()

    def evaluator() -> None:
        while True:
            text, answer = tasks.get()
            answer.put(evaluate(text))

    if hand_off:
        for _ in range(evaluators):
            threading.Thread(target=evaluator, daemon=True).start()

    def engine(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        text = _unquote(environ.get("QUERY_STRING", "").removeprefix("query=")) or ""
        if hand_off:
            answer: queue.SimpleQueue[tuple[bytes, str]] = queue.SimpleQueue()
            tasks.put((text, answer))
            body, media_type = answer.get(timeout=60)
        else:
            body, media_type = evaluate(text)
        start_response("200 OK", [("Content-Type", media_type), ("Content-Length", str(len(body)))])
        return [body]

    return engine


def main() -> None:
    from iclr_kg.web.server import serve_gunicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--store", type=Path, help="answer each query with pyoxigraph on this store")
    parser.add_argument("--hand-off", action="store_true", help="with --store: evaluate on an evaluator thread")
    parser.add_argument("--evaluators", type=int, default=8, help="with --hand-off: evaluator threads per process")
    args = parser.parse_args()
    load = create_app if args.store is None else lambda: create_engine_app(args.store, args.hand_off, args.evaluators)
    serve_gunicorn(load, "127.0.0.1", args.port, args.processes, args.threads, 20.0)  # as `iclr-kg serve`


if __name__ == "__main__":
    main()
