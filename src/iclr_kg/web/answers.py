"""Saved queries' whole answers, computed with each generation and kept beside it.

Some saved queries aggregate or list every paper: at 50,000 papers `schema-org-articles` is
50,000 rows and seconds of evaluation, on any engine. Their answer changes only with the store,
so it is computed once per generation and kept beside it as SPARQL JSON results: by the build,
before the generation is served (query/kept.py), and for a generation an update made, by the
warmer (`AppState.warm`, one query worker, soon after the generation appears). A request for the same answer, that is a saved query with its defaults, in any
results format, at `/queries/<name>` or as the same text at `/sparql`, is then served from the
file (converted by pyoxigraph for CSV, TSV and XML) instead of being evaluated again. A request
that comes before the answer is kept is evaluated as before; one with another dataset (graph
parameters, `inferred=false`) or other parameter values always is.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import IO, Any

from flask import Response, request
from pyoxigraph import QueryResultsFormat, parse_query_results

from iclr_kg.query.answering import QueryRequest, result_rows
from iclr_kg.query.kept import answer_name, answer_path, write_answer
from iclr_kg.query.streaming import stream
from iclr_kg.sparql.formats import RESULT_FORMATS
from iclr_kg.sparql.saved import SavedQuery
from iclr_kg.web.conditional import kept_etag, not_modified
from iclr_kg.web.querying import execute, negotiate, query_request, result_response, start_query
from iclr_kg.web.state import state

CHUNK = 64 * 1024


def compute(saved: SavedQuery) -> dict[str, Any]:
    """Evaluate the saved query with its defaults in a query worker (the usual limits) and write
    its whole answer beside the generation (query/kept.py): for a generation the build did not
    make (an update's), or one made before builds kept answers."""
    folder = state().generation_folder()
    if folder is None:
        return {}
    text = saved.text_with({})
    prepared = QueryRequest(text=text, formats={"results": "json", "rdf": None}, services=state().settings.services)
    running = start_query(text, prepared=prepared, client=None)
    if running.kind != "results":  # only SELECT and ASK answers are kept
        running.cancel()
        return {}
    if state().generation_folder() != folder:  # the worker may have another generation: keep none
        running.cancel()
        return {}
    return write_answer(folder, saved, lambda out: out.writelines(running.body("json")))


def answers_to_keep() -> list[tuple[str, Any]]:
    """The answers the warmer computes for a new generation, after the pages' own values."""
    kept = {saved.name: saved for saved in state().answered.values()}
    return [(answer_name(saved), functools.partial(compute, saved)) for saved in kept.values()]


def answer(text: str, substitutions: dict | None = None) -> Response:
    """The query's answer for this request (`querying.execute`), from the kept file when it is
    a saved query's default answer and that is kept for the current generation."""
    query = query_request(text, substitutions)
    return kept_response(query) or execute(text, prepared=query)


def run_saved(saved: SavedQuery) -> Response:
    """Run a saved query with parameters from the URL, bound as RDF terms."""
    values = {p.name: request.args[p.name] for p in saved.params if p.name in request.args}
    return answer(saved.text, saved.substitutions(values))


def kept_response(query: QueryRequest) -> Response | None:
    """The kept answer for `query`, in the negotiated format, if it asks for a saved query's
    default answer on the default dataset and the answer is kept for the current generation."""
    if query.default_graph is not None or query.named_graphs is not None or not query.include_inferred:
        return None
    saved = state().answered.get((query.text, tuple(sorted(query.substitutions.items()))))
    if saved is None:
        return None
    folder = state().generation_folder()
    if folder is None:
        return None
    path = answer_path(folder, saved)
    if not path.exists():
        return None
    chosen = negotiate("results")
    etag = kept_etag(str(path), chosen.name)
    if (unchanged := not_modified(etag)) is not None:
        return unchanged
    # A generation replaced a moment ago is kept for KEEP_SECONDS (store.pruning): the file stays.
    if chosen.name == "json":
        body: Any = _KeptFile(path)
    else:
        body = stream(lambda: parse_query_results(path=path, format=QueryResultsFormat.JSON), _serializer(chosen.name))
    return result_response(body, chosen.media_type, etag)


def kept_rows(saved: SavedQuery, limit: int) -> dict[str, Any] | None:
    """The first `limit` rows of the saved query's kept answer, as a page shows them (None when
    it is not kept for the current generation)."""
    folder = state().generation_folder()
    if folder is None:
        return None
    try:
        with open(answer_path(folder, saved), "rb") as kept:
            return result_rows(parse_query_results(kept, QueryResultsFormat.JSON), limit)
    except FileNotFoundError:
        return None


class _KeptFile:
    """A kept answer's bytes, chunk by chunk; the file is closed when read to its end or when
    the server closes the response (a HEAD, a client gone)."""

    def __init__(self, path: Path):
        self._file = open(path, "rb")  # noqa: SIM115 (closed below)

    def __iter__(self) -> _KeptFile:
        return self

    def __next__(self) -> bytes:
        chunk = self._file.read(CHUNK)
        if not chunk:
            self.close()
            raise StopIteration
        return chunk

    def close(self) -> None:
        self._file.close()


def _serializer(name: str) -> Any:
    def write(results: Any, output: IO[bytes]) -> None:
        results.serialize(output, RESULT_FORMATS[name].results)

    return write
