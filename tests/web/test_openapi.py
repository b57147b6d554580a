"""schemathesis reads our OpenAPI description and throws generated requests at every operation."""

from __future__ import annotations

from importlib.metadata import version

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iclr_kg.web.openapi import spec


@pytest.fixture(scope="module")
def operations(app) -> list:
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    found = [result.ok() for result in schema.get_all_operations()]
    assert len(found) == len([m for path in spec()["paths"].values() for m in path])
    return found


# Routes the description leaves out, each with why: pages for people, files for crawlers, and
# writes (which need the update token; the W3C manifests test them).
UNDESCRIBED = {
    "/": "the front page",
    "/query": "the query page (HTML): the editor, and a query's results as a page",
    "/favicon.ico": "a file",
    "/robots.txt": "for crawlers",
    "/sitemap.xml": "for crawlers",
    "/sitemap-pages.xml": "for crawlers",
    "/sitemap-<kind>-<int:page>.xml": "for crawlers",
    "/static/<path:filename>": "files",
    "/openapi.json": "this description",
    "/data/<path:_>": "Graph Store direct identification: a graph named by its own URL",
    "/update": "writes, with the update token",
    "/q": "makes a permalink (a form post from the query page)",
    "/api/labels": "names of IRIs for the graph view (a JSON post from the query page)",
}


def test_the_description_matches_the_routes(app) -> None:
    """Every described operation is routed with its method, and every route is described or
    listed above with a reason (the description was once compared with itself)."""
    import re

    routed: dict[str, set[str]] = {}
    for rule in app.url_map.iter_rules():
        # a path converter (a dblp pid, a release's graphs/x.ttl: a slash inside) is one parameter to OpenAPI
        path = re.sub(r"<path:(\w+)>", r"<\1>", rule.rule) if rule.rule.startswith(("/id/", "/release/")) else rule.rule
        routed.setdefault(path, set()).update(m.lower() for m in rule.methods - {"HEAD", "OPTIONS"})
    described = {re.sub(r"\{(\w+)\}", r"<\1>", path): set(methods) for path, methods in spec()["paths"].items()}
    for path, methods in described.items():
        assert path in routed and methods <= routed[path], (path, methods, routed.get(path))
    missing = {path for path in routed if path not in described and path not in UNDESCRIBED}
    assert missing == set(), f"routes neither described nor listed in UNDESCRIBED: {sorted(missing)}"
    assert spec()["info"]["version"] == version("iclr-kg")


def test_every_operation_survives_generated_requests(operations) -> None:
    """schemathesis cases for each operation: the server never answers 5xx (but 503 at a limit)."""
    for operation in operations:

        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(data=st.data())
        def run(data) -> None:
            case = data.draw(operation.as_strategy())
            response = case.call()
            assert response.status_code < 500 or response.status_code == 503, (
                operation.label,
                case.path_parameters,
                case.query,
                response.status_code,
                response.text[:200],
            )

        run()


def test_openapi_is_served(client) -> None:
    served = client.get("/openapi.json").json
    assert served["openapi"].startswith("3.") and "/sparql" in served["paths"]
