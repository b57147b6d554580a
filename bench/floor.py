"""The floor of our web stack: what `iclr-kg serve`'s HTTP layer alone can answer, no query run.

    python bench/floor.py --port 8123       # then: curl 'http://127.0.0.1:8123/sparql?query=ASK{}'

The same front end as `iclr-kg serve` (gunicorn supervising two web processes, granian's Rust
HTTP server in each: web/server.py) around a Flask app whose `/sparql` answers every request
with one fixed small SPARQL JSON result: no parsing, no store, no worker, no cache.
bench/endpoint.py runs it beside the real servers (`--floor`): the throughput no Flask endpoint
behind this front end can pass on this machine, measured in the same run, so that "ours against
Oxigraph's Rust server" can be read against what the stack itself allows.
"""

from __future__ import annotations

import argparse

from flask import Flask, Response

ANSWER = b'{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"1"}}]}}'


def create_app() -> Flask:
    app = Flask("floor")

    @app.route("/sparql", methods=["GET", "POST"])
    def sparql() -> Response:
        return Response(ANSWER, content_type="application/sparql-results+json")

    return app


def main() -> None:
    from iclr_kg.web.server import serve_gunicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    serve_gunicorn(create_app, "127.0.0.1", args.port, args.processes, args.threads, 20.0)  # as `iclr-kg serve`


if __name__ == "__main__":
    main()
