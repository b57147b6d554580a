"""Run the W3C SPARQL 1.1 Protocol, Graph Store Protocol and Service Description manifests
(`../shared/w3c/`) against a live endpoint on 127.0.0.1.

Used by tests/web/test_w3c.py, and by hand for before/after figures:

    python -m tests.w3c --url http://127.0.0.1:8000 --token TOKEN

Requests are read from the manifests (rdflib parses them; the deprecated http-rdf-update tests
are prose, read by `prose_tests`). A manifest's `/sparql/` path goes to our /sparql for queries
and /update for updates; `/gsp` is our /data. The graphs a test needs (`ut:graphData`) are put
with Graph Store PUTs first. Updates and Graph Store writes carry the token.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import rdflib
from rdflib.collection import Collection
from rdflib.compare import isomorphic

W3C = Path(__file__).resolve().parents[1].parent / "shared" / "w3c"
MF = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = rdflib.Namespace("http://www.w3.org/2011/http#")
CNT = rdflib.Namespace("http://www.w3.org/2011/content#")
UT = rdflib.Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
DAWGT = rdflib.Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")
SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
NAMED_STATUS = {"OK": 200, "Created": 201, "NoContent": 204, "NotFound": 404, "BadRequest": 400}
RESULT_TYPES = {
    "application/sparql-results+json",
    "application/sparql-results+xml",
    "text/csv",
    "text/tab-separated-values",
}
RDF_TYPES = {
    "text/turtle",
    "application/n-triples",
    "application/rdf+xml",
    "application/ld+json",
    "application/n-quads",
    "application/trig",
}
# Tests that cannot pass on a conforming server, each with the reason (reported as skipped).
MANIFEST_DEFECTS = {
    "delete__existing_graph": "deletes person/2.ttl, which no earlier test of this deprecated manifest creates",
    "get_of_delete__existing_graph": "follows delete__existing_graph",
    "post__existing_graph": "its Turtle body lacks the closing '.', so a conforming parser refuses it (400)",
    "get_of_post__existing_graph": "follows post__existing_graph",
    "post__multipart_formdata": "its Turtle parts lack the closing '.', so a conforming parser refuses them (400)",
    "get_of_post__multipart_formdata": "follows post__multipart_formdata",
}
# Where we differ from a test on purpose, with why; such a test runs, and must still fail (if it
# passes, its entry goes). Nothing else may fail.
DEVIATIONS = {
    "get_of_put__default_graph": (
        "our default graph is the union of every graph (DESIGN.md), and this deprecated manifest runs its "
        "tests on one store: the named graphs earlier tests PUT are in it too. A PUT of ?default replaces "
        "only what was written to the default graph (graph/updates); it used to drop every graph, the "
        "sources' included. The Graph Store manifests, each test on a fresh store, pass the same check."
    ),
}
MANIFESTS = {
    "protocol": "protocol/manifest.ttl",
    "graph-store-protocol (indirect)": "graph-store-protocol/manifest-indirect.ttl",
    "graph-store-protocol (direct)": "graph-store-protocol/manifest-direct.ttl",
    "http-rdf-update": "http-rdf-update/manifest.ttl",
    "service-description": "service-description/manifest.ttl",
}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    encoding: str = "utf-8"
    statuses: list[str] = field(default_factory=list)  # hts: local names
    boolean: bool | None = None
    result_format: str | None = None  # "boolean", "tabular", "RDF"
    content_type: str | None = None
    graph: str | None = None  # expected response body (Turtle)
    location: str | None = None  # a template variable to fill from the Location header


@dataclass
class Test:
    name: str
    title: str
    requests: list[Request]
    graph_data: list[tuple[Path, str]] = field(default_factory=list)
    skip: str | None = None


def _local(term: rdflib.term.Node) -> str:
    return str(term).rsplit("#", 1)[-1]


def _headers(graph: rdflib.Graph, node: rdflib.term.Node) -> dict[str, str]:
    """A request's or response's ht:headers list, names lower-cased."""
    found = graph.value(node, HT.headers)
    if found is None:
        return {}
    return {
        str(graph.value(h, HT.fieldName)).lower(): str(graph.value(h, HT.fieldValue)) for h in Collection(graph, found)
    }


def protocol_tests(path: Path) -> list[Test]:
    """The tests of an ht:-encoded manifest, in manifest order."""
    graph = rdflib.Graph().parse(path, format="turtle")
    manifest = next(graph.subjects(rdflib.RDF.type, MF.Manifest))
    tests = []
    for node in Collection(graph, graph.value(manifest, MF.entries)):
        requests = []
        action = graph.value(node, MF.action)
        for request_node in Collection(graph, graph.value(action, HT.requests)):
            headers = _headers(graph, request_node)
            body = graph.value(request_node, HT.body)
            response = graph.value(request_node, HT.resp)
            expected = _headers(graph, response)
            response_body = graph.value(response, HT.body)
            boolean = graph.value(response, MF.expectedBoolean)
            requests.append(
                Request(
                    method=str(graph.value(request_node, HT.methodName)),
                    path=str(graph.value(request_node, HT.absolutePath)),
                    headers=headers,
                    body=str(graph.value(body, CNT.chars)) if body is not None else None,
                    encoding=str(graph.value(body, CNT.characterEncoding) or "utf-8") if body is not None else "utf-8",
                    statuses=sorted(_local(s) for s in graph.objects(response, MF.expectedStatus)),
                    boolean=None if boolean is None else bool(boolean.toPython()),
                    result_format=str(graph.value(response, MF.expectedFormat) or "") or None,
                    content_type=expected.get("content-type"),
                    graph=str(graph.value(response_body, CNT.chars)) if response_body is not None else None,
                    location=str(graph.value(response, MF.expectedLocation) or "") or None,
                )
            )
        data = [
            (path.parent / str(graph.value(d, UT.graph)).rsplit("/", 1)[-1], str(graph.value(d, rdflib.RDFS.label)))
            for d in graph.objects(node, UT.graphData)
        ]
        tests.append(Test(_local(node), str(graph.value(node, MF.name)), requests, data))
    return tests


def prose_tests(path: Path) -> list[Test]:
    """The deprecated http-rdf-update tests: raw HTTP in rdfs:comment, $HOST$ and $GRAPHSTORE$ to fill."""
    graph = rdflib.Graph().parse(path, format="turtle")
    manifest = next(graph.subjects(rdflib.RDF.type, MF.Manifest))
    tests = []
    for node in Collection(graph, graph.value(manifest, MF.entries)):
        text = next((str(c) for c in graph.objects(node, rdflib.RDFS.comment) if "#### Request" in str(c)), "")
        request_text, _, response_text = text.partition("#### Response")
        lines = [line.removeprefix("    ") for line in request_text.split("#### Request", 1)[1].strip("\n").split("\n")]
        method, target, _ = lines[0].split(" ", 2)
        headers, body_lines, in_body = {}, [], False
        for line in lines[1:]:
            if in_body:
                body_lines.append(line)
            elif not line.strip():
                in_body = True
            else:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        headers.pop("host", None)
        response_lines = [line.removeprefix("    ") for line in response_text.strip("\n").split("\n")]
        status = response_lines[0].strip().split(" ", 1)
        expected_type, expected_body, in_body, location = None, [], False, None
        for line in response_lines[1:]:
            if in_body:
                expected_body.append(line)
            elif not line.strip():
                in_body = True
            elif line.lower().startswith("content-type:"):
                expected_type = line.split(":", 1)[1].strip()
            elif line.lower().startswith("location:"):
                location = line.split(":", 1)[1].strip()
        code = int(status[0])
        name = {200: "OK", 201: "Created", 204: "NoContent", 404: "NotFound"}.get(code, f"StatusCode{code // 100}xx")
        body = "\n".join(body_lines).strip() or None
        tests.append(
            Test(
                _local(node),
                str(graph.value(node, MF.name)),
                [
                    Request(
                        method=method,
                        path=target,
                        headers=headers,
                        body=body,
                        statuses=[name],
                        content_type=expected_type,
                        graph="\n".join(expected_body).strip() or None,
                        location=location,
                    )
                ],
            )
        )
    return tests


class Runner:
    """Sends a test's requests to the endpoint and checks each answer."""

    def __init__(self, url: str, token: str | None):
        parsed = urllib.parse.urlparse(url)
        self.host, self.port, self.token = parsed.hostname, parsed.port, token
        self.authority = f"{self.host}:{self.port}"
        self.variables: dict[str, str] = {}

    def send(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def fill(self, text: str) -> str:
        text = text.replace("$HOST$", self.authority).replace("$GRAPHSTORE$", "data")
        for name, value in self.variables.items():
            text = text.replace(name, value)
        return text

    def route(self, request: Request) -> tuple[str, bool]:
        """Our path for a manifest path, and whether the request writes (and so needs the token)."""
        path = self.fill(request.path)
        if path.startswith("http"):  # an absolute URL (from a Location header)
            parsed = urllib.parse.urlparse(path)
            path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        if path.startswith("/sparql/"):
            rest = path[len("/sparql/") :]
            body = request.body or ""
            content_type = request.headers.get("content-type", "")
            is_update = (
                content_type.startswith("application/sparql-update")
                or (content_type.startswith("application/x-www-form-urlencoded") and body.startswith("update="))
                or "update=" in rest
            )
            return ("/update" if is_update else "/sparql") + rest, is_update
        if path.startswith("/gsp"):
            path = "/data" + path[len("/gsp") :]
        elif path.startswith("data"):
            path = "/" + path
        return path, request.method in ("PUT", "POST", "DELETE")

    def reset(self) -> None:
        """An empty store: every graph dropped."""
        self.send(
            "POST",
            "/update",
            {"Content-Type": "application/sparql-update", "Authorization": f"Bearer {self.token}"},
            b"DROP ALL",
        )

    def put_graph(self, data: Path, iri: str) -> None:
        """Load a test's graph with SPARQL Update (the Graph Store tests test the Graph Store)."""
        update = f"INSERT DATA {{ GRAPH <{iri}> {{ {data.read_text(encoding='utf-8')} }} }}"
        status, _, body = self.send(
            "POST",
            "/update",
            {"Content-Type": "application/sparql-update", "Authorization": f"Bearer {self.token}"},
            update.encode("utf-8"),
        )
        if status not in (200, 204):
            raise AssertionError(f"loading {data.name} as <{iri}> failed: {status} {body[:200]!r}")

    def run(self, test: Test, fresh: bool = False) -> str | None:
        """None if the test passes, else what went wrong. `fresh`: start from an empty store."""
        if fresh:
            self.reset()
        if test.graph_data:
            self.send(
                "POST",
                "/update",
                {"Content-Type": "application/sparql-update", "Authorization": f"Bearer {self.token}"},
                b"CLEAR ALL",
            )
            for data, iri in test.graph_data:
                self.put_graph(data, iri)
        for number, request in enumerate(test.requests, 1):
            path, writes = self.route(request)
            headers = dict(request.headers)
            if writes and self.token:
                headers["Authorization"] = f"Bearer {self.token}"
            body = self.fill(request.body).encode(request.encoding) if request.body is not None else None
            if headers.get("content-type", "").startswith("multipart/form-data") and body is not None:
                body = body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            status, response_headers, content = self.send(request.method, path, headers, body)
            problem = self.check(request, status, response_headers, content)
            if problem:
                return f"request {number} ({request.method} {path}): {problem}"
            if request.location:
                self.variables[request.location] = response_headers.get("location", "")
        return None

    def check(self, request: Request, status: int, headers: dict[str, str], content: bytes) -> str | None:
        allowed = set()
        for name in request.statuses:
            if name.startswith("StatusCode"):
                allowed |= set(range(int(name[10]) * 100, int(name[10]) * 100 + 100))
            else:
                allowed.add(NAMED_STATUS[name])
        if allowed and status not in allowed:
            return f"status {status}, expected {', '.join(request.statuses)}: {content[:200]!r}"
        media_type = headers.get("content-type", "").split(";")[0].strip()
        if request.result_format == "boolean" or request.boolean is not None:
            found = _boolean(media_type, content)
            if found is None:
                return f"expected a boolean result, got {media_type}"
            if request.boolean is not None and found != request.boolean:
                return f"expected {request.boolean}, got {found}"
        if request.result_format == "tabular" and media_type not in RESULT_TYPES:
            return f"expected a results format, got {media_type}"
        if request.result_format == "RDF" and media_type not in RDF_TYPES:
            return f"expected an RDF format, got {media_type}"
        expected_type = (request.content_type or "").split(";")[0].strip()
        if expected_type and request.method != "HEAD" and media_type != expected_type:
            return f"content type {media_type}, expected {request.content_type}"
        if request.graph is not None and request.method != "HEAD":
            expected = rdflib.Graph().parse(data=self.fill(request.graph), format="turtle")
            try:
                found_graph = rdflib.Graph().parse(data=content, format=_rdflib_format(media_type))
            except Exception as exc:  # noqa: BLE001 - reported as the test's failure
                return f"the body does not parse as {media_type}: {exc}"
            if not isomorphic(expected, found_graph):
                return f"graph differs: expected {len(expected)} triples, got {len(found_graph)}"
        return None


def _boolean(media_type: str, content: bytes) -> bool | None:
    if media_type == "application/sparql-results+json":
        return json.loads(content).get("boolean")
    if media_type == "application/sparql-results+xml":
        match = re.search(rb"<boolean>\s*(true|false)\s*</boolean>", content)
        return None if match is None else match.group(1) == b"true"
    return None


def _rdflib_format(media_type: str) -> str:
    return {
        "text/turtle": "turtle",
        "application/n-triples": "nt",
        "application/rdf+xml": "xml",
        "application/ld+json": "json-ld",
    }.get(media_type, "turtle")


def service_description_tests(runner: Runner) -> list[tuple[str, str | None]]:
    """The three service description tests, on GET /sparql with an RDF Accept."""
    status, headers, content = runner.send("GET", "/sparql", {"Accept": "text/turtle"}, None)
    media_type = headers.get("content-type", "").split(";")[0]
    results: list[tuple[str, str | None]] = []
    if status != 200 or media_type not in RDF_TYPES:
        problem = f"GET /sparql gave {status} {media_type}"
        return [("returns-rdf", problem), ("has-endpoint-triple", problem), ("conforms-to-schema", problem)]
    graph = rdflib.Graph().parse(data=content, format=_rdflib_format(media_type))
    results.append(("returns-rdf", None))
    endpoint = rdflib.URIRef(f"http://{runner.authority}/sparql")
    has = (None, SD.endpoint, endpoint) in graph
    results.append(("has-endpoint-triple", None if has else f"no ?service sd:endpoint <{endpoint}>"))
    services = list(graph.subjects(rdflib.RDF.type, SD.Service))
    problems = []
    if len(services) != 1:
        problems.append(f"{len(services)} sd:Service nodes")
    for service in services:
        languages = set(graph.objects(service, SD.supportedLanguage))
        if not languages or not languages <= {SD.SPARQL10Query, SD.SPARQL11Query, SD.SPARQL11Update}:
            problems.append(f"sd:supportedLanguage {sorted(map(str, languages))}")
        for prop in (SD.resultFormat, SD.inputFormat, SD.feature, SD.endpoint):
            if any(not isinstance(o, rdflib.URIRef) for o in graph.objects(service, prop)):
                problems.append(f"a {_local(prop)} that is not an IRI")
        for dataset in graph.objects(service, SD.defaultDataset):
            if (dataset, rdflib.RDF.type, SD.Dataset) not in graph or graph.value(dataset, SD.defaultGraph) is None:
                problems.append("sd:defaultDataset without sd:Dataset type or sd:defaultGraph")
            for named in graph.objects(dataset, SD.namedGraph):
                if not isinstance(graph.value(named, SD.name), rdflib.URIRef):
                    problems.append("an sd:namedGraph without an IRI sd:name")
    results.append(("conforms-to-schema", "; ".join(problems) or None))
    return results


def run_all(url: str, token: str | None) -> dict[str, list[tuple[str, str | None]]]:
    """Outcome per test, per manifest: None (passed), "skipped: …", or the failure."""
    runner = Runner(url, token)
    outcomes: dict[str, list[tuple[str, str | None]]] = {}
    for label, relative in MANIFESTS.items():
        if label == "service-description":
            outcomes[label] = service_description_tests(runner)
            continue
        tests = prose_tests(W3C / relative) if label == "http-rdf-update" else protocol_tests(W3C / relative)
        outcomes[label] = []
        runner.reset()
        for test in tests:
            if label == "http-rdf-update" and test.name in MANIFEST_DEFECTS:
                outcomes[label].append((test.name, f"skipped: {MANIFEST_DEFECTS[test.name]}"))
                continue
            try:
                problem = runner.run(test, fresh=label.startswith("graph-store"))
                if test.name in DEVIATIONS:
                    problem = f"deviation: {DEVIATIONS[test.name]}" if problem else "listed as a deviation, but passes"
                outcomes[label].append((test.name, problem))
            except (OSError, http.client.HTTPException, AssertionError) as exc:
                outcomes[label].append((test.name, f"error: {exc}"))
    return outcomes


NOT_FAILURES = ("skipped:", "deviation:")


def summary(outcomes: dict[str, list[tuple[str, str | None]]]) -> str:
    lines = ["| manifest | passed | failed | deviations | skipped |", "|---|---:|---:|---:|---:|"]
    for label, results in outcomes.items():
        count = {kind: sum(1 for _, p in results if p and p.startswith(kind)) for kind in NOT_FAILURES}
        failed = len(failures({label: results}))
        passed = len(results) - failed - sum(count.values())
        lines.append(f"| {label} | {passed} | {failed} | {count['deviation:']} | {count['skipped:']} |")
    for label, results in outcomes.items():
        for name, problem in results:
            if problem:
                kind = problem.split(":", 1)[0].upper() if problem.startswith(NOT_FAILURES) else "FAILED"
                lines.append(f"{kind} {label} {name}: {problem}")
    return "\n".join(lines)


def failures(outcomes: dict[str, list[tuple[str, str | None]]]) -> list[str]:
    """Every test that failed, other than the manifest's own defects and our listed deviations."""
    return [
        f"{label} {name}: {problem}"
        for label, results in outcomes.items()
        for name, problem in results
        if problem and not problem.startswith(NOT_FAILURES)
    ]


Outcomes = dict[str, list[tuple[str, str | None]]]


def cli(run: Callable[[str, str | None], Outcomes], description: str) -> None:
    """Run a harness's manifests against --url, print the summary, exit 1 on a failure."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--url", required=True)
    parser.add_argument("--token")
    args = parser.parse_args()
    outcomes = run(args.url, args.token)
    print(summary(outcomes))
    sys.exit(1 if failures(outcomes) else 0)


def main() -> None:
    cli(run_all, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    main()
