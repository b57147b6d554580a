"""What query text may cost before it runs: the web process never parses it (the editor's lint
asks a query worker), and the size, nesting and number of triple patterns are bounded, each
with a 400 that says which bound.

Each test here failed before the lint moved to the workers: the nesting attacks killed the
process serving them (SIGSEGV, here the test process itself), and the ORDER BY attack spent
seconds of CPU in it.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import psutil
import pytest
from flask.testing import FlaskClient

from iclr_kg.errors import QueryError
from iclr_kg.sparql.querytext import MAX_TRIPLE_PATTERNS, check_patterns, triple_patterns
from testbed.helpers import eventually, run_cli, web_processes

DEEP = "SELECT * WHERE " + "{" * 20_000 + " ?s ?p ?o " + "}" * 20_000
FLAT = "SELECT * WHERE { " + " ".join(f"?s{i} ?p ?o ." for i in range(11_500)) + " }"
# Three lists of 200 values, crossed and sorted: 8 million rows evaluated on an empty store.
VALUES = " ".join(f"VALUES ?{v} {{ {' '.join(str(i) for i in range(200))} }}" for v in "abc")
SORTED = f"SELECT * WHERE {{ {VALUES} }} ORDER BY ?a ?b ?c"


def cpu_seconds(pids: set[int]) -> float:
    """CPU time these processes spent, in all their threads (ended ones too), not their children."""
    return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids)  # user and system


def test_lint_of_deep_nesting_is_a_problem_not_a_crash(client: FlaskClient) -> None:
    response = client.post("/api/check", data={"query": DEEP})
    assert response.status_code == 200
    [problem] = response.get_json()["problems"]
    assert problem["severity"] == "error" and "nests brackets 20000 deep" in problem["message"]


def test_the_query_page_refuses_deep_nesting_with_a_400(client: FlaskClient) -> None:
    deep = "SELECT * WHERE " + "{" * 3_000 + " ?s ?p ?o " + "}" * 3_000
    page = client.get("/query", query_string={"query": deep}, headers={"Accept": "text/html"})
    assert page.status_code == 400 and "nests brackets 3000 deep" in page.data.decode()
    assert client.get("/sparql", query_string={"query": "ASK {}", "format": "json"}).status_code == 200


@pytest.mark.parametrize("where", ["/sparql", "/api/check", "/query"])
def test_too_many_triple_patterns_are_refused_by_name(client: FlaskClient, where: str) -> None:
    response = client.post(where, data={"query": FLAT}) if where == "/api/check" else None
    if response is None:
        response = client.get(where, query_string={"query": FLAT}, headers={"Accept": "text/html"})
        assert response.status_code == 400
    text = response.data.decode()
    assert f"at most {MAX_TRIPLE_PATTERNS} are accepted" in text, text[:500]


def test_lint_evaluates_nothing_in_the_web_process(default_serving: tuple[str, subprocess.Popen]) -> None:
    """Preparing SORTED evaluates its 8 million rows (13.7 s of CPU and 1.2 GiB where the web
    process did it). Now a worker prepares it, under the lint's time limit; the web processes of
    the shipped server only wait."""
    problems, spent = lint_on_the_shipped_server(default_serving, SORTED)
    assert problems == [] and spent < 1.0, f"the web processes spent {spent:.2f} s of CPU on a lint"


# 12.6 KB that rdflib reads for a second or more (a FILTER of 1,050 comparisons), around a pattern
# that cannot match: iclr:year is an edition's, not a paper's
LONG_CLASH = (
    "SELECT ?p ?y WHERE {\n  ?p a iclr:Paper ;\n     iclr:year ?y .\n  FILTER("
    + " || ".join(f"?y = {i}" for i in range(1050))
    + ")\n}"
)


def test_a_long_lint_costs_the_web_process_little_and_still_warns(
    default_serving: tuple[str, subprocess.Popen],
) -> None:
    """Issue #69 item 4: the domain check parsed the text with rdflib in the web process (0.5-1 ms
    of CPU a character, on 2 cores shared by every request). Now a query worker reads it, where
    the syntax check runs; the web process only waits, and the warning still comes."""
    problems, spent = lint_on_the_shipped_server(default_serving, LONG_CLASH)
    assert len(LONG_CLASH) > 12_000 and spent < 0.5, f"the web processes spent {spent:.2f} s of CPU on a lint"
    [warning] = problems
    assert warning["severity"] == "warning" and "iclr:submittedTo/iclr:year" in warning["message"], problems
    assert (warning["line"], warning["column"]) == (3, 6)


def lint_on_the_shipped_server(serving: tuple[str, subprocess.Popen], text: str) -> tuple[list[dict], float]:
    """`text`'s problems from /api/check, and the CPU seconds the web processes spent on it:
    measured once they are idle (a warmer of an earlier test's generation may still be reading),
    over every thread they have."""
    base, main = serving
    web = web_processes(main)

    def idle() -> bool:
        before = cpu_seconds(web)
        time.sleep(0.5)  # a sampling interval, not a wait for an outcome
        return cpu_seconds(web) - before < 0.05

    eventually(idle, "the web processes idle", 60)
    before = cpu_seconds(web)
    body = urllib.parse.urlencode({"query": text}).encode()
    with urllib.request.urlopen(urllib.request.Request(base + "/api/check", data=body), timeout=120) as response:
        assert response.status == 200
        problems = json.load(response)["problems"]
    return problems, cpu_seconds(web) - before


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


def test_update_hint_is_linear_on_hostile_input(client) -> None:
    from iclr_kg.sparql.querytext import update_keyword

    hostile = "PREFIX " + "<" * 261_993
    found: list[object] = []
    scan = threading.Thread(target=lambda: found.append(update_keyword(hostile)), daemon=True)
    scan.start()
    scan.join(60)  # a hang guard, not a speed bound: a quadratic scan of this input runs for hours
    assert found == [None]
    response = client.post("/sparql", data=hostile.encode(), content_type="application/sparql-query")
    assert response.status_code == 400


@pytest.mark.parametrize("prologue", ["# a comment\n", "\ufeff", "PREFIX x: <http://x/>\n# c\nBASE <http://b/>\n"])
def test_update_hint_sees_past_comments_and_bom(client, prologue: str) -> None:
    response = client.post("/sparql", data={"query": prologue + "INSERT DATA { <a:b> <a:b> <a:b> }"})
    assert response.status_code == 400 and b"/update" in response.data


def test_deep_nesting_is_a_400_not_a_crash(client, real_settings) -> None:
    deep = "SELECT * WHERE " + "{" * 10_000 + " ?s ?p ?o " + "}" * 10_000
    response = client.post("/sparql", data=deep.encode(), content_type="application/sparql-query")
    assert response.status_code == 400 and b"nests" in response.data
    assert client.get("/sparql", query_string={"query": "ASK {}", "format": "json"}).status_code == 200
    done = run_cli("query", "--store", str(real_settings.store), deep)
    assert done.returncode == 1 and "nests" in done.stderr


def test_deep_nesting_on_update_is_a_400(tiny_app) -> None:
    settings, client = tiny_app(update_token="secret")
    deep = "INSERT { <urn:a> <urn:b> 1 } WHERE " + "{" * 10_000 + "}" * 10_000
    response = client.post("/update", data={"update": deep}, headers={"Authorization": "Bearer secret"})
    assert response.status_code == 400 and b"nests" in response.data


def test_nesting_depth_ignores_brackets_in_strings_and_comments() -> None:
    from iclr_kg.sparql.querytext import nesting_depth

    assert nesting_depth('SELECT * { ?s ?p "{{{{" # {{{{\n FILTER((1)) }') == 3
    assert nesting_depth("SELECT * { ?s ?p '''{{{'''. { ?a ?b ?c } }") == 2


def test_may_mention_rules_out_only_ascii_text_without_the_words() -> None:
    from iclr_kg.sparql.querytext import may_mention

    assert not may_mention("SELECT * { ?s ?p ?o }", ("service", "now"))
    assert may_mention("SELECT * { SeRvIcE <urn:x> {} }", ("service",))
    assert may_mention("SELECT * { ſervice <urn:x> {} }", ("service",))  # not ASCII: a fold may match
    assert may_mention('SELECT * { ?s ?p "机构" }', ("service",))


def test_check_nesting_counts_depth_not_brackets() -> None:
    """Text with few brackets skips the scan; with many, the depth decides, not their number."""
    from iclr_kg.errors import QueryError
    from iclr_kg.sparql.querytext import MAX_NESTING, check_nesting

    check_nesting("SELECT * WHERE " + "{ ?s ?p ?o } UNION " * 500 + "{}")  # 501 brackets, depth 1
    check_nesting("SELECT * WHERE " + "{" * MAX_NESTING + "}" * MAX_NESTING)
    with pytest.raises(QueryError, match="nests brackets 201 deep"):
        check_nesting("SELECT * WHERE " + "{" * (MAX_NESTING + 1) + "}" * (MAX_NESTING + 1))
    with pytest.raises(QueryError, match="nests brackets 201 deep"):
        check_nesting('SELECT * { "' + "{" * 300 + '" ' + "(" * (MAX_NESTING) + ")" * MAX_NESTING + "}")


def test_one_reader_says_whether_a_query_calls_service_or_may_change() -> None:
    """querytext.says answers "calls SERVICE", "may its answer change" and "is an ASK" for the
    lane, the result cache and the editor alike, as a whole word in any case, anywhere."""
    from iclr_kg.query.answering import QueryRequest
    from iclr_kg.query.local import LocalLane
    from iclr_kg.sparql.lint import parse_worthy
    from iclr_kg.sparql.querytext import keepable, says

    calling = "SELECT * WHERE { Service <https://query.wikidata.org/sparql> { ?s ?p ?o } }"
    for text, word in ((calling, "SERVICE"), ("SELECT (now() AS ?t) {}", "NOW"), ("ask {}", "ASK")):
        assert says(text, word) and says(text.replace(word.lower(), word), word)
    assert not says("SELECT ?serviced ?nowhere WHERE { ?serviced ?p ?nowhere }", "SERVICE", "NOW")
    assert not LocalLane.takes(QueryRequest(calling)) and LocalLane.takes(QueryRequest("SELECT ?serviced {}"))
    assert not keepable(calling) and keepable("SELECT ?nowhere {}")
    assert not parse_worthy(calling) and parse_worthy("SELECT ?serviced {}")
