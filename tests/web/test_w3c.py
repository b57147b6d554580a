"""The W3C SPARQL 1.1 Protocol, Graph Store Protocol and Service Description manifests, run
against `iclr-kg serve` as shipped (gunicorn) with updates enabled, on a scratch store (the tests
clear and drop graphs). The harness is tests/w3c.py; manifests come from ../shared/w3c/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from iclr_kg.store import publish
from testbed.helpers import serving

from .. import w3c

pytestmark = pytest.mark.skipif(not w3c.W3C.is_dir(), reason=f"the W3C manifests are not at {w3c.W3C}")
TOKEN = "w3c-token"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    store = tmp_path_factory.mktemp("w3c") / "store"
    publish(store, [])  # an empty store: the tests bring their own graphs
    with serving(store, {"ICLR_KG_UPDATE_TOKEN": TOKEN}) as (base, _):
        results = w3c.run_all(base, TOKEN)
        print(w3c.summary(results))
        yield results


@pytest.mark.parametrize("manifest", list(w3c.MANIFESTS))
def test_w3c_manifest(outcomes: dict, manifest: str) -> None:
    results = outcomes[manifest]
    assert results, f"no test ran from {manifest}"
    failed = w3c.failures({manifest: results})
    assert failed == [], "\n".join(failed)
    skipped = [name for name, problem in results if problem and problem.startswith("skipped:")]
    assert set(skipped) <= set(w3c.MANIFEST_DEFECTS)  # only tests the manifest itself gets wrong
    deviating = [name for name, problem in results if problem and problem.startswith("deviation:")]
    assert set(deviating) <= set(w3c.DEVIATIONS)
