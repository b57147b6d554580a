"""Run the W3C SPARQL 1.1 Update evaluation tests (`../shared/w3c/update/*/manifest.ttl`, the
`mf:UpdateEvaluationTest` entries: the graphs before, the request, the graphs after) against a
live endpoint on 127.0.0.1.

Used by tests/web/test_w3c.py, and by hand:

    python -m tests.w3c_update --url http://127.0.0.1:8000 --token TOKEN

Each test starts from an empty dataset (`DROP ALL`): its default graph (`ut:data`) is written by
`INSERT DATA` into the default graph, which keeps it in graph/updates, and each named graph
(`ut:graphData`) is created, then filled. After the request the named graphs are read whole
(/data, N-Quads) and compared, each up to blank node labels, with the expected ones: the test's
default graph with graph/updates (what an update writes to the default graph), the inferred
graph left out (the reasoner's, and empty of anything these tests state). Our default graph is the
union of the named graphs for reading: a test whose expected result needs it separate is listed in
UNION_DEFAULT_GRAPH with the reason, runs, and must fail (if it passes, its entry goes)."""

from __future__ import annotations

import http.client
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import rdflib
from rdflib.collection import Collection
from rdflib.compare import isomorphic

from tests.w3c import MF, UT, W3C, cli

UPDATES_GRAPH = "https://w3id.org/iclr-kg/graph/updates"
INFERRED_GRAPH = "https://w3id.org/iclr-kg/graph/inferred"
MANIFESTS = sorted((W3C / "update").glob("*/manifest.ttl"))

# The tests whose expected result needs a default graph separate from the named graphs, with why
# (DESIGN.md, Wave 4: the default graph is the union of every graph for reading).
_CLEARED = (
    "emptying the default graph empties every graph (each of its triples is deleted from every graph that states it)"
)
_NAMED = "graph/updates, which keeps the default graph's own triples, is a named graph: NAMED empties it too"
_READ = "the source, the default graph, is read as the union: the target's own triples are copied back into it"
_DELETED = "a triple deleted from the default graph is deleted from every graph that states it (here g2 too)"
UNION_DEFAULT_GRAPH: dict[str, str] = {
    "clear/dawg-clear-default-01": _CLEARED,
    "drop/dawg-drop-default-01": _CLEARED,
    "copy/copy06": f"COPY g1 TO DEFAULT: {_CLEARED}, g1 included",
    "clear/dawg-clear-named-01": _NAMED,
    "drop/dawg-drop-named-01": _NAMED,
    "copy/copy01": f"COPY DEFAULT TO g1: {_READ}",
    "move/move01": f"MOVE DEFAULT TO g1: {_READ}",
    "delete/dawg-delete-05": _DELETED,
    "delete/dawg-delete-using-01": _DELETED,
    "delete-data/dawg-delete-data-05": _DELETED,
    "delete-where/dawg-delete-where-05": _DELETED,
}


@dataclass
class State:
    """A dataset as a test gives it: the default graph's files, and each named graph's (IRI: files)."""

    default: list[Path] = field(default_factory=list)
    named: dict[str, list[Path]] = field(default_factory=dict)


@dataclass
class UpdateTest:
    name: str
    request: Path
    before: State
    after: State


def _state(manifest: rdflib.Graph, node: rdflib.term.Node | None, folder: Path) -> State:
    state = State()
    if node is None:
        return state
    for data in manifest.objects(node, UT.data):
        state.default.append(folder / Path(urllib.parse.urlsplit(str(data)).path).name)
    for graph_data in manifest.objects(node, UT.graphData):
        graph = manifest.value(graph_data, UT.graph)
        label = str(manifest.value(graph_data, rdflib.RDFS.label))
        files = state.named.setdefault(label, [])
        if graph is not None:
            files.append(folder / Path(urllib.parse.urlsplit(str(graph)).path).name)
    return state


def update_tests(path: Path) -> list[UpdateTest]:
    """The manifest's update evaluation tests, in its order."""
    manifest = rdflib.Graph().parse(path, format="turtle", publicID=path.as_uri())
    entries = next(manifest.objects(None, MF.entries), None)
    tests = []
    for entry in Collection(manifest, entries) if entries is not None else []:
        if (entry, rdflib.RDF.type, MF.UpdateEvaluationTest) not in manifest:
            continue
        action, result = manifest.value(entry, MF.action), manifest.value(entry, MF.result)
        request = manifest.value(action, UT.request)
        assert request is not None, f"{entry}: no ut:request"
        tests.append(
            UpdateTest(
                f"{path.parent.name}/{str(entry).rsplit('#', 1)[-1]}",
                path.parent / Path(urllib.parse.urlsplit(str(request)).path).name,
                _state(manifest, action, path.parent),
                _state(manifest, result, path.parent),
            )
        )
    return tests


def _triples(files: list[Path]) -> rdflib.Graph:
    graph = rdflib.Graph()
    for file in files:
        graph.parse(file, format="turtle", publicID=file.as_uri())
    return graph


def _ntriples(graph: rdflib.Graph) -> str:
    return graph.serialize(format="nt")


class UpdateRunner:
    def __init__(self, url: str, token: str | None):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.token = token

    def _send(self, method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def update(self, text: str) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/sparql-update"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return self._send("POST", "/update", headers, text.encode("utf-8"))

    def load(self, state: State) -> None:
        """An empty dataset, then the test's graphs (a named graph is there even where empty)."""
        operations = ["DROP ALL"]
        if state.default:
            operations.append(f"INSERT DATA {{ {_ntriples(_triples(state.default))} }}")
        for iri, files in state.named.items():
            operations.append(f"CREATE GRAPH <{iri}>")
            if files:
                operations.append(f"INSERT DATA {{ GRAPH <{iri}> {{ {_ntriples(_triples(files))} }} }}")
        status, body = self.update(" ;\n".join(operations))
        assert status == 204, f"loading the test's graphs: {status} {body[:300]!r}"

    def graphs(self) -> dict[str, rdflib.Graph]:
        """Every named graph's triples but the inferred graph's, graph/updates as "" (the default graph)."""
        status, body = self._send("GET", "/data", {"Accept": "application/n-quads"})
        assert status == 200, f"reading the dataset: {status} {body[:300]!r}"
        dataset = rdflib.Dataset()
        dataset.parse(data=body.decode("utf-8"), format="nquads")
        found: dict[str, rdflib.Graph] = {}
        for context in dataset.graphs():
            iri = str(context.identifier)
            if iri == INFERRED_GRAPH or not len(context):
                continue
            graph = found.setdefault("" if iri == UPDATES_GRAPH else iri, rdflib.Graph())
            for triple in context:
                graph.add(triple)
        return found

    def run(self, test: UpdateTest) -> str | None:
        """None if the dataset after the request is the expected one, else what differs."""
        self.load(test.before)
        status, body = self.update(test.request.read_text(encoding="utf-8"))
        if status != 204:
            return f"the request answered {status}: {body[:300]!r}"
        expected = {"": _triples(test.after.default)} | {
            iri: _triples(files) for iri, files in test.after.named.items()
        }
        found = self.graphs()
        problems = []
        for iri in sorted(set(expected) | set(found)):
            want, have = expected.get(iri, rdflib.Graph()), found.get(iri, rdflib.Graph())
            if not isomorphic(want, have):
                name = iri or "the default graph (graph/updates)"
                problems.append(f"{name}: expected {len(want)} triples, found {len(have)}")
        return "; ".join(problems) or None


def run_all(url: str, token: str | None) -> dict[str, list[tuple[str, str | None]]]:
    """Outcome per test, per manifest: None (passed), "deviation: …", or the failure."""
    runner = UpdateRunner(url, token)
    outcomes: dict[str, list[tuple[str, str | None]]] = {}
    for path in MANIFESTS:
        results = outcomes.setdefault(f"update/{path.parent.name}", [])
        for test in update_tests(path):
            try:
                problem = runner.run(test)
            except (OSError, http.client.HTTPException, AssertionError) as exc:
                problem = f"error: {exc}"
            if test.name in UNION_DEFAULT_GRAPH:
                reason = UNION_DEFAULT_GRAPH[test.name]
                problem = f"deviation: {reason}" if problem else "listed as a deviation, but passes"
            results.append((test.name, problem))
    return outcomes


def main() -> None:
    cli(run_all, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    main()
