"""The W3C SPARQL 1.1 Protocol, Graph Store Protocol and Service Description manifests, run
against `iclr-kg serve` as shipped (gunicorn) with updates enabled, on a scratch store (the tests
clear and drop graphs). The harness is tests/w3c.py; manifests come from ../shared/w3c/."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from iclr_kg.store import publish

from .. import w3c
from .conftest import free_port, wait_for

pytestmark = pytest.mark.skipif(not w3c.W3C.is_dir(), reason=f"the W3C manifests are not at {w3c.W3C}")
TOKEN = "w3c-token"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    store = tmp_path_factory.mktemp("w3c") / "store"
    publish(store, [])  # an empty store: the tests bring their own graphs
    port = free_port()
    env = {**os.environ, "ICLR_KG_UPDATE_TOKEN": TOKEN}
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("iclr-kg")), "serve", "--store", str(store), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/health")
        results = w3c.run_all(f"http://127.0.0.1:{port}", TOKEN)
        print(w3c.summary(results))
        yield results
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize("manifest", list(w3c.MANIFESTS))
def test_w3c_manifest(outcomes: dict, manifest: str) -> None:
    results = outcomes[manifest]
    assert results, f"no test ran from {manifest}"
    failed = [f"{name}: {problem}" for name, problem in results if problem and not problem.startswith("skipped:")]
    assert failed == [], "\n".join(failed)
    skipped = [name for name, problem in results if problem]
    assert set(skipped) <= set(w3c.MANIFEST_DEFECTS)  # only tests the manifest itself gets wrong
