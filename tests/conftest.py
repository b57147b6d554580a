"""Shared fixtures: the real graph built once per session, and tiny data sets made per test."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyoxigraph import Store

from iclr_kg.build.pipeline import build
from iclr_kg.config import Settings, resource_dir
from iclr_kg.store import open_read_only
from testbed.helpers import free_port, serving, wait_for
from testbed.tiny import TINY_REGISTRIES, TINY_SOURCE

SEEDS = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"

# Markers by what a test needs (registered in pyproject.toml): `-m "not slow and not browser and
# not engines"` is the quick run. Files whose every test is slow: they build stores again and
# again, start servers, or kill processes on purpose; elsewhere a test that starts gunicorn or
# kills a process carries `@pytest.mark.slow` itself.
SLOW_FILES = {"test_faults.py", "test_incremental.py", "test_w3c.py", "test_admission.py", "test_openreview_import.py"}
ENGINE_FIXTURES = {"engine", "published", "hostile_engine"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "chromium" in names:
            item.add_marker(pytest.mark.browser)
        if names & ENGINE_FIXTURES:
            item.add_marker(pytest.mark.engines)
        if item.path.name in SLOW_FILES or names & {"default_server", "update_server", "deployed"}:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ICLR_KG_* setting from the developer's shell leaks into a test."""
    import os

    for name in list(os.environ):
        if name.startswith("ICLR_KG_"):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def wikidata_standin(tmp_path_factory: pytest.TempPathFactory):
    """Oxigraph's own server (PyPI `oxigraph`) on 127.0.0.1 with a few Wikidata-shaped and
    dblp-shaped triples: the stand-in for Wikidata's query service and dblp's SPARQL service
    (QLever) in federated queries; both answer in the SPARQL 1.1 results formats."""
    import subprocess
    import sys

    location = tmp_path_factory.mktemp("wikidata-standin")
    oxigraph = str(Path(sys.executable).with_name("oxigraph"))
    for name in ("wikidata-standin.ttl", "dblp-standin.ttl"):  # one SPARQL service answers for both
        fixture = Path(__file__).parent / "fixtures" / name
        subprocess.run(
            [oxigraph, "load", "--location", str(location), "--file", str(fixture)], check=True, capture_output=True
        )
    port = free_port()
    process = subprocess.Popen(
        [oxigraph, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/query"
    wait_for(url + "?query=ASK%7B%7D", 30)
    yield url
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def real_settings(tmp_path_factory: pytest.TempPathFactory, wikidata_standin: str) -> Settings:
    """Settings for the real data/, ontology/ and queries/, with a store of the session's own;
    the Wikidata stand-in is allow-listed for SERVICE."""
    return Settings(store=tmp_path_factory.mktemp("real") / "store", services=(*Settings().services, wikidata_standin))


def saved_query_values(saved, standin: str) -> dict[str, str]:
    """Parameter values for running a saved query in tests: federated ones ask the stand-in."""
    return {p.name: standin for p in saved.params if p.name in ("wikidata", "dblp")}


@pytest.fixture(scope="session")
def real_store(real_settings: Settings) -> Store:
    """The real graph, built once by the real pipeline and opened read-only."""
    build(real_settings)
    return open_read_only(real_settings.store)


@pytest.fixture(scope="session")
def default_serving(real_store, real_settings: Settings) -> Iterator[tuple[str, subprocess.Popen]]:
    """`iclr-kg serve` as shipped (gunicorn, two web processes, query workers) on the real graph:
    its base URL and its main process. A short request timeout, so that the slowloris test sees
    trickling clients cut off quickly."""
    env = {"ICLR_KG_SERVICES": ",".join(real_settings.services), "ICLR_KG_REQUEST_TIMEOUT": "4"}
    with serving(real_settings.store, env) as served:
        yield served


@pytest.fixture(scope="session")
def default_server(default_serving: tuple[str, subprocess.Popen]) -> str:
    """The shipped server's base URL."""
    return default_serving[0]


def write_tiny(
    root: Path, source: str = TINY_SOURCE, extra_sources: dict[str, str] | None = None, **files: str
) -> Settings:
    """A tiny data/ (registries plus sources) and a copy of the ontology under `root`: Settings for
    them, with the store at root/store (see `tiny_data` for the arguments)."""
    data = root / "data"
    (data / "sources").mkdir(parents=True, exist_ok=True)
    for name, text in {**TINY_REGISTRIES, **files}.items():
        (data / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (data / "sources" / "tiny.yaml").write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    for name, text in (extra_sources or {}).items():
        (data / "sources" / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    ontology = root / "ontology"
    if not ontology.exists():
        shutil.copytree(resource_dir("ontology"), ontology)
    return Settings(store=root / "store", data_dir=data, ontology_dir=ontology)


@pytest.fixture
def tiny_data(tmp_path: Path) -> Callable[..., Settings]:
    """Make a tiny data/ (registries plus sources) and return Settings pointing at it.

    Keyword arguments replace a file's text: `tiny_data(source=...)` for sources/tiny.yaml,
    `tiny_data(**{"people.yaml": ...})` for a registry; `extra_sources={name: text}` adds files.
    """
    return lambda *args, **kwargs: write_tiny(tmp_path, *args, **kwargs)


@pytest.fixture(scope="session")
def tiny_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default tiny data/ built once per session: a store that tests copy (a directory copy
    is a fraction of a build) and none opens."""
    settings = write_tiny(tmp_path_factory.mktemp("tiny-built"))
    build(settings)
    return settings.store


@pytest.fixture
def tiny_store(tiny_data: Callable[..., Settings], tiny_built: Path) -> Settings:
    """The default tiny data/ and a built store of the test's own to write to: a copy of
    `tiny_built`, which `build(tiny_data())` would make again."""
    settings = tiny_data()
    shutil.copytree(tiny_built, settings.store, symlinks=True)  # `current` is a relative link
    return settings


@pytest.fixture(scope="session")
def tiny_compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """The tiny fixture compiled once: (asserted graph, ontology graph, shapes) in rdflib."""
    from iclr_kg.build.pipeline import compile_graph
    from iclr_kg.build.validate import load_shapes
    from iclr_kg.reasoning.convert import to_rdflib

    settings = write_tiny(tmp_path_factory.mktemp("shapes"))
    compiled = compile_graph(settings)
    shapes = load_shapes(settings.ontology_dir / "shapes.ttl")
    return to_rdflib(compiled.asserted), to_rdflib(compiled.ontology), shapes


def select(store: Store, query: str, **kwargs: object) -> list[dict[str, str]]:
    """Run a SELECT through the product's query helper; rows as {variable: value}."""
    from iclr_kg.store import run_query

    result = run_query(store, query, **kwargs)  # type: ignore[arg-type]
    names = [v.value for v in result.variables]  # type: ignore[union-attr]
    return [{n: row[n].value for n in names if row[n] is not None} for row in result]  # type: ignore[union-attr]
