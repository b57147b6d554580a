"""The web app: one Flask application factory, blueprints for the protocol and the pages."""

from __future__ import annotations

from flask import Flask, Response, request

from iclr_kg import vocab
from iclr_kg.config import Settings
from iclr_kg.errors import IclrKgError
from iclr_kg.store import built_on
from iclr_kg.web.bodylimit import BodyLimit
from iclr_kg.web.html import inline_code, readable_facts
from iclr_kg.web.http import error_response
from iclr_kg.web.lean import LeanQueries
from iclr_kg.web.proxies import TrustedProxies, networks
from iclr_kg.web.state import AppState

MAX_BODY = 1024 * 1024
# Endpoints whose answer depends on Accept (a page or data); what depends on the reader's language
# says so itself (i18n.install: every response for which a language was chosen)
NEGOTIATED = {
    "sparql.sparql",
    "pages.queries",
    "pages.saved_query",
    "pages.search",
    "resources.resource",
    "resources.ontology",
    "resources.data",
    "discovery.void",
}


def create_app(settings: Settings | None = None) -> Flask:
    """Build the app for `settings` (defaults and ICLR_KG_* variables if None)."""
    settings = settings or Settings.from_env()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY  # larger POST bodies get 413
    state = app.extensions["iclr_kg"] = AppState(settings)

    from iclr_kg.web import assets, discovery, endpoint, i18n, openapi, pages, resources, workbench, writes

    app.register_blueprint(endpoint.blueprint)
    app.register_blueprint(writes.blueprint)
    app.register_blueprint(pages.blueprint)
    app.register_blueprint(resources.blueprint)
    app.register_blueprint(openapi.blueprint)
    app.register_blueprint(discovery.blueprint)
    app.register_blueprint(workbench.blueprint)
    i18n.install(app)
    assets.install(app)
    state.warm(app, pages.warmed)  # /stats' counts and saved queries' pages, ready before anyone asks
    app.jinja_env.filters["facts"] = lambda hit: readable_facts(  # a hit's facts line, in the page's language
        hit.facts_in(i18n.language()), i18n.language(), state.terms()
    )
    app.jinja_env.filters["inline_code"] = inline_code
    app.jinja_env.filters["reject_key"] = lambda mapping, key: {k: v for k, v in mapping.items() if k != key}

    @app.context_processor
    def dataset_facts() -> dict[str, object]:
        """What every page's footer says of the dataset: its licence and how current it is."""
        try:
            as_of = built_on(state.generation)
            sources = state.per_generation("footer sources", lambda: _sources(state))
        except IclrKgError:  # no store yet (the error page says so)
            as_of, sources = None, 0
        return {"data_as_of": as_of, "licence": vocab.LICENSE, "sources": sources}

    if state.served.budgets_time:
        _bound_engine_time(app, settings.query_timeout)

    @app.errorhandler(IclrKgError)
    def our_error(exc: IclrKgError) -> Response:
        return error_response(exc)

    @app.after_request
    def common_headers(response):
        if request.endpoint in NEGOTIATED:  # the same URL answers a page or data: caches must know
            response.vary.add("Accept")
        response.headers.setdefault("Access-Control-Allow-Origin", "*")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        if response.mimetype == "text/html":
            response.headers.setdefault("X-Frame-Options", "DENY")
            response.headers.setdefault("Referrer-Policy", "same-origin")
            response.headers.setdefault(
                "Content-Security-Policy",
                "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; img-src 'self' data:",
            )
        return response

    app.wsgi_app = LeanQueries(app.wsgi_app, app, state)  # type: ignore[method-assign]
    if state.cache is not None:
        from iclr_kg.web.cache import ResponseMemo

        state.memo = ResponseMemo(app.wsgi_app, state.pinned_key, state.cache)
        app.wsgi_app = state.memo  # type: ignore[method-assign]
    app.wsgi_app = BodyLimit(app.wsgi_app, MAX_BODY, settings.request_timeout)  # type: ignore[method-assign]
    if settings.trusted_proxies:  # outermost: everything after it sees the client, not the proxy
        app.wsgi_app = TrustedProxies(app.wsgi_app, networks(settings.trusted_proxies))  # type: ignore[method-assign]
    return app


def _sources(state: AppState) -> int:
    """How many sources the graph is built from (news articles, imports): the footer says it."""
    index = state.index()
    return index.browse("source", "name", 1)[1] if index is not None else 0


def _bound_engine_time(app: Flask, seconds: float) -> None:
    """With a remote engine, the calls one request makes to it share the query time limit
    (remote.client.time_budget): a page that asks five questions of a slow engine ends in
    `seconds`, not five times that."""
    from flask import g

    from iclr_kg.remote.client import end_budget, start_budget

    @app.before_request
    def engine_budget_starts() -> None:
        g.engine_budget = start_budget(seconds)

    @app.teardown_request
    def engine_budget_ends(_error: BaseException | None) -> None:
        token = g.pop("engine_budget", None)
        if token is not None:
            end_budget(token)
