"""What query text may cost before it runs: the web process never parses it (the editor's lint
asks a query worker), and the size, nesting and number of triple patterns are bounded, each
with a 400 that says which bound.

Each test here failed before the lint moved to the workers: the nesting attacks killed the
process serving them (SIGSEGV, here the test process itself), and the ORDER BY attack spent
seconds of CPU in it.
"""

from __future__ import annotations

import resource

import pytest
from flask.testing import FlaskClient

from iclr_kg.errors import QueryError
from iclr_kg.query.querytext import MAX_TRIPLE_PATTERNS, check_patterns, triple_patterns

DEEP = "SELECT * WHERE " + "{" * 20_000 + " ?s ?p ?o " + "}" * 20_000
FLAT = "SELECT * WHERE { " + " ".join(f"?s{i} ?p ?o ." for i in range(11_500)) + " }"
# Three lists of 200 values, crossed and sorted: 8 million rows evaluated on an empty store.
VALUES = " ".join(f"VALUES ?{v} {{ {' '.join(str(i) for i in range(200))} }}" for v in "abc")
SORTED = f"SELECT * WHERE {{ {VALUES} }} ORDER BY ?a ?b ?c"


def cpu_seconds() -> float:
    """CPU time of this process (where the Flask test client runs the app), not its children."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def test_lint_of_deep_nesting_is_a_problem_not_a_crash(client: FlaskClient) -> None:
    response = client.post("/api/check", data={"query": DEEP})
    assert response.status_code == 200
    [problem] = response.get_json()["problems"]
    assert problem["severity"] == "error" and "nests brackets 20000 deep" in problem["message"]


def test_the_query_page_refuses_deep_nesting_with_a_400(client: FlaskClient) -> None:
    deep = "SELECT * WHERE " + "{" * 3_000 + " ?s ?p ?o " + "}" * 3_000
    page = client.get("/", query_string={"query": deep}, headers={"Accept": "text/html"})
    assert page.status_code == 400 and "nests brackets 3000 deep" in page.data.decode()
    assert client.get("/sparql", query_string={"query": "ASK {}", "format": "json"}).status_code == 200


@pytest.mark.parametrize("where", ["/sparql", "/api/check", "/"])
def test_too_many_triple_patterns_are_refused_by_name(client: FlaskClient, where: str) -> None:
    response = client.post(where, data={"query": FLAT}) if where == "/api/check" else None
    if response is None:
        response = client.get(where, query_string={"query": FLAT}, headers={"Accept": "text/html"})
        assert response.status_code == 400
    text = response.data.decode()
    assert f"at most {MAX_TRIPLE_PATTERNS} are accepted" in text, text[:500]


def test_lint_evaluates_nothing_in_the_web_process(client: FlaskClient) -> None:
    """Preparing SORTED evaluates its 8 million rows (13.7 s of CPU and 1.2 GiB where the web
    process did it). Now a worker prepares it, under the lint's time limit; this process only
    waits."""
    before = cpu_seconds()
    response = client.post("/api/check", data={"query": SORTED})
    spent = cpu_seconds() - before
    assert response.status_code == 200 and response.get_json()["problems"] == []
    assert spent < 1.0, f"the web process spent {spent:.2f} s of CPU on a lint"


def test_lint_still_names_syntax_errors_where_they_are(client: FlaskClient) -> None:
    def problems(text: str) -> list[dict]:
        return client.post("/api/check", data={"query": text}).get_json()["problems"]

    [unclosed] = problems("SELECT ?x WHERE { ?x a iclr:Paper . FILTER(?x = 3 }")
    assert "the '(' at line 1, column 43 is never closed (a ')' is missing)" in unclosed["message"]
    assert (unclosed["line"], unclosed["severity"]) == (1, "error")
    [paren] = problems("SELECT (COUNT(?x) AS ?n WHERE { ?x ?p ?o }")
    assert paren["column"] == 25 and 'expected ")"' in paren["message"]
    assert problems("SELECT ?x WHERE { ?x a iclr:Paper }") == []


def test_triple_patterns_are_counted_from_the_separators_between_them() -> None:
    assert triple_patterns("SELECT * WHERE { ?s ?p ?o }") == 1
    assert triple_patterns("SELECT * WHERE { ?s ?p ?o ; ?q ?r , ?t . ?a ?b ?c }") == 4
    # not separators: inside strings, IRIs, comments, function calls, names and numbers
    text = 'SELECT * { ?s <urn:a.b,c;d> "x. y; z," ; ex:a.b 1.5 # . ; ,\n FILTER(CONCAT(?a, ?b)) }'
    assert triple_patterns(text) == 2
    assert triple_patterns("SELECT * { ?s ?p [ ?q ?r ; ?t ?u ] }") == 3  # a blank node's patterns count
    check_patterns("SELECT * WHERE { " + "?s ?p ?o . " * (MAX_TRIPLE_PATTERNS - 2) + "}")
    with pytest.raises(QueryError, match="about 101 triple patterns"):
        check_patterns("SELECT * WHERE { " + "?s ?p ?o . " * 100 + "}")
