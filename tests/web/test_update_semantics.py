"""Every update means one thing: after each request `/update` acknowledged, the server's whole
dataset, read from fresh connections (both web processes), is what the reference gives
(testbed/update_model.py: pyoxigraph over the dataset in memory, the default-graph rule written
plainly, owlrl's closure); a refused request changes nothing there either. Then `iclr-kg build`
replays the journal and the dataset is the same again. The server runs as README's first command
runs it: from a folder of its own, with the default, relative store (`./var/store`).

Random requests of one to three operations from all of SPARQL 1.1 Update, drawn by Hypothesis
(each example starts from the dataset as built, so a failure shrinks to a short request list);
`bench/update_semantics.py` runs the same for thousands."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from pyoxigraph import DefaultGraph, Quad

from iclr_kg import vocab
from iclr_kg.build.pipeline import build
from iclr_kg.config import Settings, resource_dir
from iclr_kg.store import current_generation
from iclr_kg.updates import Journal
from testbed.helpers import run_cli, serving
from testbed.tiny import TINY_REGISTRIES, TINY_SOURCE
from testbed.update_model import (
    INFERRED,
    SERVER_ENV,
    Reference,
    Refused,
    dataset,
    difference,
    each_process,
    http,
    named_graphs,
    post,
    request,
    request_text,
    reset,
)

pytestmark = pytest.mark.slow


@dataclass
class Served:
    """The server under test: its URL, its folder, and its dataset as first built."""

    base: str
    folder: Path
    first: list[Quad] = field(repr=False)


@pytest.fixture(scope="module")
def semantics_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`iclr-kg serve` with no `--store`, from a folder holding a tiny data/; yields its URL,
    the folder, and the dataset as first built."""
    folder = tmp_path_factory.mktemp("semantics")
    (folder / "data" / "sources").mkdir(parents=True)
    for name, text in TINY_REGISTRIES.items():
        (folder / "data" / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (folder / "data" / "sources" / "tiny.yaml").write_text(textwrap.dedent(TINY_SOURCE).lstrip(), encoding="utf-8")
    shutil.copytree(resource_dir("ontology"), folder / "ontology")
    with serving(None, SERVER_ENV, cwd=folder) as (base, process):
        assert (folder / "var" / "store" / "current").exists()  # the relative default, under the folder
        yield Served(base, folder, dataset(base))
    assert "Traceback" not in process.output, process.output  # type: ignore[attr-defined]


def check(base: str, reference: Reference, what: str) -> None:
    """The server's dataset, read on each web process's own connection, is the reference's, and
    /health's count of quads is the dataset's."""
    expected = reference.quads()
    for process, connection in each_process(base).items():
        try:
            found = difference(expected, dataset(base, connection))
        finally:
            connection.close()
        assert not found, f"web process {process}, after:\n{what}\n{found}"
    status, body = http(f"{base}/health")
    named = sum(1 for q in expected if q.graph_name != DefaultGraph())
    assert status == 200 and json.loads(body)["quads"] == named, (body, named, what)


class Drawn:
    """Choices drawn by Hypothesis, so that a failure shrinks to fewer and smaller requests."""

    def __init__(self, data: Any):
        self.data = data

    def pick(self, options: Any) -> Any:
        return self.data.draw(st.sampled_from(list(options)))

    def number(self, low: int, high: int) -> int:
        return int(self.data.draw(st.integers(low, high)))


@pytest.mark.filterwarnings("ignore:Generating overly large repr")  # Hypothesis on the drawn data's repr
@hypothesis_settings(
    max_examples=8,
    deadline=None,
    derandomize=False,  # new requests on every run (a failure prints the seed that replays it: @seed)
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_every_update_does_what_the_reference_does(semantics_server, data) -> None:
    """Each example starts from the dataset as built (`reset`), so that Hypothesis replays it faithfully."""
    base, first = semantics_server.base, semantics_server.first
    reset(base, first)
    now = dataset(base)
    reference = Reference([q for q in now if q.graph_name != DefaultGraph()], graphs=named_graphs(base))
    found = difference(reference.quads(), now)
    assert not found, f"the starting point differs from the reference's closure:\n{found}"
    history: list[str] = []

    choose = Drawn(data)
    for _ in range(choose.number(1, 4)):
        operations = request(choose, reference.held, existence_errors=True)
        text = request_text(operations)
        history.append(text)
        status, body = post(base, text)
        assert status in (204, 400), f"{text}\n{status} {body[:400]!r}"
        try:
            reference.apply(operations)
            expected = 204
        except Refused as why:
            expected = 400
            reason = str(why)
        assert status == expected, f"{text}\nthe server answered {status} {body[:300]!r}; the reference " + (
            "accepts it" if expected == 204 else f"refuses it ({reason})"
        )
        check(base, reference, "\n---\n".join(history))


def test_a_build_replays_the_journal_to_the_same_dataset(semantics_server) -> None:
    """After the random requests above: `iclr-kg build`, run as a user runs it (the folder's
    default store) while the server serves, replays every journaled entry onto a fresh build."""
    base, folder = semantics_server.base, semantics_server.folder
    before = dataset(base)
    listed = run_cli("updates", "list", env={**os.environ, **SERVER_ENV}, cwd=folder)
    assert listed.returncode == 0, listed.stderr
    built = run_cli("build", env={**os.environ, **SERVER_ENV}, cwd=folder)
    assert built.returncode == 0, built.stderr
    found = difference(before, dataset(base))
    assert not found, f"the journal replayed by a build gives another dataset:\n{found}"


def test_a_graph_dropped_and_loaded_again_in_one_request_keeps_what_was_loaded(semantics_server) -> None:
    """What the W3C protocol suite does to load its fixtures: DROP SILENT then INSERT DATA."""
    base = semantics_server.base
    triple = "<urn:reload-s> <urn:reload-p> <urn:reload-o>"
    text = f"DROP SILENT GRAPH <urn:reload> ; INSERT DATA {{ GRAPH <urn:reload> {{ {triple} }} }}"
    for _ in range(2):
        assert post(base, text)[0] == 204
        query = urllib.parse.urlencode({"query": f"ASK {{ GRAPH <urn:reload> {{ {triple} }} }}", "format": "json"})
        assert http(f"{base}/sparql?{query}")[1].find(b"true") > 0


def test_a_build_that_cannot_replay_an_entry_names_it_and_keeps_the_last_generation(tiny_data) -> None:
    """An entry that no longer applies (here one added to the journal by hand) stops the build
    with the entry's number, its first line and how to drop it; the current generation stays,
    and the build after `updates drop` succeeds."""
    settings = tiny_data()
    build(settings)
    kept = current_generation(settings.store)
    Journal(settings.store).append(
        "update", f"INSERT DATA {{ GRAPH <{INFERRED.value}> {{ <urn:a> <urn:b> <urn:c> }} }}", None, 0
    )
    failed = run_cli("build", "--store", str(settings.store), env=_env(settings))
    assert failed.returncode == 1
    assert "journal entry 1" in failed.stderr and "INSERT DATA" in failed.stderr, failed.stderr
    assert "iclr-kg updates drop 1" in failed.stderr and "Traceback" not in failed.stderr
    assert [line for line in failed.stderr.splitlines() if line.startswith("error:")] == [
        failed.stderr.strip().splitlines()[-1]
    ], failed.stderr  # one error line, the last
    assert current_generation(settings.store) == kept
    assert run_cli("updates", "drop", "1", "--store", str(settings.store), env=_env(settings)).returncode == 0
    assert run_cli("build", "--store", str(settings.store), env=_env(settings)).returncode == 0


def _env(settings: Settings) -> dict[str, str]:
    return {
        **os.environ,
        "ICLR_KG_DATA_DIR": str(settings.data_dir),
        "ICLR_KG_ONTOLOGY_DIR": str(settings.ontology_dir),
    }


def _ask(base: str, pattern: str) -> bool:
    query = urllib.parse.urlencode({"query": f"ASK {{ {pattern} }}", "format": "json"})
    status, body = http(f"{base}/sparql?{query}")
    assert status == 200, body
    return bool(json.loads(body)["boolean"])


@pytest.mark.parametrize(
    "source", ["SILENT <urn:copy-absent>", "<urn:copy-empty>", "SILENT GRAPH <urn:copy-empty>"], ids=str
)
@pytest.mark.parametrize("verb", ["COPY", "MOVE"])
def test_copying_an_absent_or_empty_graph_empties_the_target(semantics_server, verb: str, source: str) -> None:
    """#69: COPY is DROP SILENT of the target, then the source's triples inserted (MOVE drops the
    source too), so an empty source, or an absent one with SILENT, leaves the target empty, as
    pyoxigraph does; the target kept its triples after a 204."""
    base = semantics_server.base
    held = "<urn:copy-s> <urn:copy-p> <urn:copy-o>"
    setup = "DROP SILENT GRAPH <urn:copy-absent> ; CREATE SILENT GRAPH <urn:copy-empty> ; CLEAR GRAPH <urn:copy-empty>"
    assert post(base, f"{setup} ; INSERT DATA {{ GRAPH <urn:copy-h> {{ {held} }} }}")[0] == 204
    status, body = post(base, f"{verb} {source} TO <urn:copy-h>")
    assert status == 204, body
    assert not _ask(base, f"GRAPH <urn:copy-h> {{ {held} }}")
    assert not _ask(base, held)


def test_a_graph_moved_to_the_default_graph_by_a_prefixed_name_stays_in_it(semantics_server) -> None:
    """#69, W3C move06: `MOVE :g1 TO DEFAULT` puts g1's triples in the default graph (kept in
    graph/updates); they were gone from it when the graph was named by a prefixed name."""
    base = semantics_server.base
    triple = "<urn:move-s> <urn:move-p> <urn:move-o>"
    assert post(base, f"INSERT DATA {{ GRAPH <http://example.org/g1> {{ {triple} }} }}")[0] == 204
    status, body = post(base, "PREFIX : <http://example.org/>\nMOVE :g1 TO DEFAULT")
    assert status == 204, body
    assert _ask(base, triple)
    assert _ask(base, f"GRAPH <{vocab.GRAPH_UPDATES}> {{ {triple} }}")
    assert not _ask(base, f"GRAPH <http://example.org/g1> {{ {triple} }}")


@pytest.mark.parametrize("into", ["", " INTO GRAPH <http://www.example.org/>"])
def test_load_silent_of_a_source_not_allowed_succeeds_without_fetching(semantics_server, into: str) -> None:
    """#69, W3C load-silent: SILENT makes a LOAD that fails succeed, having loaded nothing; a
    source this server may not fetch answered 400. Without SILENT it is still refused."""
    base = semantics_server.base
    source = "<somescheme://www.example.com/THIS-GRAPH-DOES-NOT-EXIST/>"
    before = dataset(base)
    status, body = post(base, f"INSERT DATA {{ <urn:load-s> <urn:load-p> <urn:load-o> }} ;\nLOAD SILENT {source}{into}")
    assert status == 204, body
    assert _ask(base, "<urn:load-s> <urn:load-p> <urn:load-o>")
    assert post(base, f"LOAD {source}{into}")[0] == 400
    assert post(base, "DELETE DATA { <urn:load-s> <urn:load-p> <urn:load-o> }")[0] == 204
    assert not difference(before, dataset(base))
