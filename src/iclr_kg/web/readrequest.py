"""One read of the SPARQL endpoint, made once: what is asked, of which generation, where it runs,
under which key it is kept, and whether it may be kept at all.

A `ReadRequest` is made where the request is first read whole: by the lean path
(web/lean.py) for a plain `GET /sparql?query=`, by the Flask view (web/querying.py) for every
other shape; the generation it reads was pinned before either, by the outermost layer that
asked (the response memo, web/cache.py, else the lean path, else Flask: `AppState.pin`), one
lookup of what is served per request. From it the lean path and the view answer alike: the
result cache's key (`key`), the query started where the app runs queries (`start`), and the one
answer to "may this be kept and given an ETag" (`keep`, `etag`), which the memo reads back
from the response (a kept response is one with an ETag). Oxigraph's server does the same in
`configure_and_evaluate_sparql_query`: the request read once, then evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from iclr_kg.errors import QueryError, Unavailable
from iclr_kg.query.answering import QueryRequest
from iclr_kg.query.pool import ActiveQuery, Evaluator, Target
from iclr_kg.served import Generation
from iclr_kg.sparql.formats import Format
from iclr_kg.sparql.querytext import keepable, update_keyword
from iclr_kg.web.cache import ResultCache
from iclr_kg.web.conditional import content_etag
from iclr_kg.web.state import AppState

Refusal = tuple[type[Exception], str]  # a format negotiation's 406 or 400, raised when it matters
Negotiation = dict[str, Format | Refusal]  # the format for each kind of result ("results", "rdf")


@dataclass(frozen=True)
class ReadRequest:
    """A query asked of the endpoint (text, dataset, formats, base: `query`), the formats
    negotiated for each kind of result, the generation pinned for the request, where it runs,
    its time limit and client, and whether its answer may be kept and ETagged (`keep`)."""

    query: QueryRequest
    negotiation: Negotiation
    generation: Generation
    evaluator: Evaluator
    state: AppState
    limit: float
    client: str | None

    @cached_property
    def keep(self) -> bool:
        """May the answer be kept (result cache, memo) and given an ETag: querytext.keepable."""
        return keepable(self.query.text)

    @cached_property
    def key(self) -> bytes:
        """The result cache's key: everything the answer's bytes depend on (the generation and
        the request), as ResultCache.digest keeps it."""
        query = self.query
        return ResultCache.digest(
            (
                self.generation.key,
                query.text,
                query.include_inferred,
                None if query.default_graph is None else tuple(query.default_graph),
                None if query.named_graphs is None else tuple(query.named_graphs),
                tuple(sorted(query.substitutions.items())),
                tuple(sorted((query.formats or {}).items(), key=str)),
                query.base,
            )
        )

    def start(self) -> ActiveQuery:
        """The query started on the pinned generation where the app runs queries."""
        return started(self.evaluator, self.query, self.limit, self.client, self.state.target(lambda: self.generation))

    def chosen(self, running: ActiveQuery) -> Format:
        """The negotiated format for what the query turned out to be; a refusal (406, 400)
        cancels it and is raised."""
        chosen = self.negotiation[running.kind]
        if isinstance(chosen, tuple):
            running.cancel()
            error, message = chosen
            raise error(message)
        return chosen

    def etag(self, running: ActiveQuery, chosen: Format) -> str | None:
        """The ETag of the answer where it may be kept: whole in the first message (a streamed
        answer is never read whole to decide), in the format chosen."""
        body = running.prefetched
        if not self.keep or body is None or running.format != chosen.name:
            return None
        return content_etag(body, chosen.media_type)


def started(evaluator: Evaluator, query: QueryRequest, limit: float, client: str | None, target: Target) -> ActiveQuery:
    """`query` started by `evaluator` on `target` under `limit` seconds for `client`, for the
    read request and the app's other queries alike: an update sent here says where updates go,
    and a query stopped at a limit on a generation found damaged meanwhile says so."""
    try:
        return evaluator.evaluate(query, limit, client, target)
    except QueryError as exc:
        raise update_hint(query.text, exc) from None
    except Unavailable:  # a worker stopped at a limit: reading a damaged generation, maybe
        if not query.lint:
            target.intact()  # StoreDamaged, if it was found damaged meanwhile
        raise


def update_hint(text: str, exc: QueryError) -> QueryError:
    """An update sent to /sparql says where updates go; any other query error is as it is."""
    if update_keyword(text):
        return QueryError("SPARQL Update is not accepted at /sparql; updates go to /update (with a token)")
    return exc


def read_request(
    state: AppState,
    generation: Generation,
    query: QueryRequest,
    negotiation: Negotiation,
    limit: float,
    client: str | None,
) -> ReadRequest:
    """The read of `query` on `generation` (the one the request pinned: `AppState.pin`), where
    this app runs queries."""
    return ReadRequest(query, negotiation, generation, state.evaluator, state, limit, client)
