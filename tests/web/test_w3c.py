"""The W3C SPARQL 1.1 Protocol, Graph Store Protocol, Service Description and Update evaluation
manifests, run against `iclr-kg serve` as shipped (gunicorn) with updates enabled, on a scratch
store (the tests clear and drop graphs). The harnesses are tests/w3c.py and tests/w3c_update.py;
manifests come from ../shared/w3c/."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from iclr_kg.store import publish
from testbed.helpers import serving

from .. import w3c, w3c_update

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


@pytest.fixture(scope="module")
def update_outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    store = tmp_path_factory.mktemp("w3c-update") / "store"
    publish(store, [])
    with serving(store, {"ICLR_KG_UPDATE_TOKEN": TOKEN}) as (base, _):
        results = w3c_update.run_all(base, TOKEN)
        print(w3c.summary(results))
        yield results


@pytest.mark.slow  # 94 tests, two updates each: about 90 s here
def test_w3c_update_evaluation_tests(update_outcomes: dict) -> None:
    """Every SPARQL 1.1 Update evaluation test passes, but those whose expected result needs a
    default graph apart from the named graphs (listed with the reason: ours is their union), which
    run and must fail; none is skipped."""
    ran = [name for results in update_outcomes.values() for name, _ in results]
    assert len(ran) == 94, f"{len(ran)} update evaluation tests ran, of 94"
    assert w3c.failures(update_outcomes) == [], "\n".join(w3c.failures(update_outcomes))
    deviating = {name for results in update_outcomes.values() for name, problem in results if problem}
    assert deviating == set(w3c_update.UNION_DEFAULT_GRAPH)
