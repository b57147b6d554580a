"""schemathesis reads our OpenAPI description and throws generated requests at every operation."""

from __future__ import annotations

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
