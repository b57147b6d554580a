"""Pages for people: the query page, saved queries, stats, health."""

from __future__ import annotations

import time

from flask import Blueprint, Response, abort, jsonify, redirect, render_template, request, url_for

from iclr_kg import vocab
from iclr_kg.errors import IclrKgError, QueryError
from iclr_kg.query.formats import RDF_FORMATS, RESULT_FORMATS
from iclr_kg.query.saved import NAME
from iclr_kg.store import STATS_CLASSES, STATS_GRAPHS
from iclr_kg.web.html import HTML_ROW_LIMIT, rows_table
from iclr_kg.web.http import wants_html
from iclr_kg.web.querying import run_saved, start_query
from iclr_kg.web.state import state

blueprint = Blueprint("pages", __name__)

PREFIX_BLOCK = "".join(
    f"PREFIX {p}: <{ns}>\n" for p, ns in vocab.PREFIXES.items() if p in ("iclr", "schema", "rdfs", "skos")
)
EXAMPLE = (
    PREFIX_BLOCK
    + """
SELECT ?paper ?title ?award WHERE {
  ?paper iclr:receivedAward/iclr:name ?award ; iclr:title ?title .
}
ORDER BY ?award ?title
LIMIT 20
"""
)


def download_links(text: str, saved: str | None, values: dict[str, str], include_inferred: bool):
    """A function the templates call to link each download format of the shown result."""
    extra = {} if include_inferred else {"inferred": "false"}

    def link(fmt: str) -> str:
        if saved:
            return url_for("pages.saved_query", name=saved, format=fmt, **values, **extra)
        return url_for("sparql.sparql", query=text, format=fmt, **extra)

    return link


def result_page(
    template: str, text: str, substitutions: dict | None = None, **context: object
) -> str | tuple[str, int]:
    """Run `text` and render it as a table in `template`; a bad query shows the parser's message."""
    include_inferred = request.args.get("inferred", "true") != "false"
    saved = context.get("saved")
    context["download"] = download_links(
        text,
        saved.name if hasattr(saved, "name") else None,
        context.get("values", {}),
        include_inferred,  # type: ignore[arg-type]
    )
    started = time.perf_counter()
    try:
        running = start_query(text, substitutions, row_limit=HTML_ROW_LIMIT)
        return render_template(
            template, query=text, table=rows_table(running.rows or {}, started), inferred=include_inferred, **context
        )
    except IclrKgError as exc:  # shown in the page, beside the query, with the error's own status
        return render_template(
            template, query=text, error=str(exc), inferred=include_inferred, **context
        ), exc.http_status


@blueprint.route("/")
def index() -> str | tuple[str, int]:
    text = request.args.get("query")
    context = {"saved": state().saved, "formats": list(RESULT_FORMATS) + list(RDF_FORMATS)}
    if not text:
        return render_template("index.html", query=EXAMPLE, table=None, inferred=True, **context)
    return result_page("index.html", text, **context)


@blueprint.route("/queries")
def queries() -> Response | str:
    saved = state().saved
    if (
        request.accept_mimetypes.best_match(["text/html", "application/json"]) == "application/json"
        or request.args.get("format") == "json"
    ):
        return jsonify(
            [
                {
                    "name": q.name,
                    "title": q.title,
                    "description": q.description,
                    "params": [{"name": p.name, "kind": p.kind, "default": p.default} for p in q.params],
                    "url": f"/queries/{q.name}",
                }
                for q in saved.values()
            ]
        )
    return render_template("queries.html", saved=saved)


@blueprint.route("/queries/<name>")
def saved_query(name: str) -> Response | str | tuple[str, int]:
    if not NAME.match(name) or name not in state().saved:
        abort(404)
    saved = state().saved[name]
    if not wants_html():
        return run_saved(saved)
    values = {p.name: request.args[p.name] for p in saved.params if request.args.get(p.name)}
    try:
        substitutions = saved.substitutions(values)
    except QueryError as exc:
        return render_template(
            "saved.html",
            saved=saved,
            query=saved.text,
            error=str(exc),
            values=values,
            formats=list(RESULT_FORMATS) + list(RDF_FORMATS),
            inferred=True,
        ), 400
    return result_page(
        "saved.html",
        saved.text,
        substitutions,
        saved=saved,
        values=values,
        formats=list(RESULT_FORMATS) + list(RDF_FORMATS),
    )


HEALTH_QUERY = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
HEALTH_TIMEOUT = 5.0


@blueprint.route("/favicon.ico")
def favicon() -> Response:
    """Browsers ask for /favicon.ico whatever the page links; send them to the icon we have."""
    return redirect(url_for("static", filename="favicon.svg"), code=301)  # type: ignore[return-value]


@blueprint.route("/health")
def health() -> tuple[Response, int]:
    """ok only if a query can be answered now: the count goes through a query worker, under the
    same time and memory limits as any query (a damaged store cannot hang or bloat this process)."""
    started = time.perf_counter()
    try:
        running = start_query(HEALTH_QUERY, row_limit=1, timeout=HEALTH_TIMEOUT, client=None)
        count = int(running.rows["rows"][0][0][1])  # type: ignore[index]
    except IclrKgError as exc:  # whatever stops a query makes the endpoint unhealthy
        return jsonify({"status": "unavailable", "error": str(exc)}), 503
    return jsonify(
        {
            "status": "ok",
            "generation": state().generation,
            "quads": count,
            "seconds": round(time.perf_counter() - started, 3),
        }
    ), 200


@blueprint.route("/stats")
def stats() -> str | tuple[str, int]:
    """Counts per graph and class, computed by query workers under the usual limits."""
    started = time.perf_counter()
    graphs = rows_table(start_query(STATS_GRAPHS, row_limit=HTML_ROW_LIMIT).rows or {}, started)
    classes = rows_table(start_query(STATS_CLASSES, row_limit=HTML_ROW_LIMIT).rows or {}, started)
    return render_template("stats.html", graphs=graphs, classes=classes, generation=state().generation)
