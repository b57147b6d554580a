"""What Oxigraph recurses on cannot take a web process down (#69, items 1, 2, 3 and 7).

Before: `BIND(1-1-…-1)` with 9,000 terms, `||` chains of 12,000, property paths of 12,000 steps
or alternatives, and 3,000 `{` after a comment ended by a bare CR each killed the web process
that evaluated them (SIGSEGV: the evaluator thread's 8 MiB stack overflowed), with every request
in flight on it. Now the bounds refuse them with a 400 that says why, and what passes the
bounds runs on a thread deep enough for it (deepstack.py): 4,000 BINDs, which overflow an
ordinary thread, are answered.
"""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest
from pyoxigraph import Store

from iclr_kg.errors import QueryError
from iclr_kg.sparql.federation import check_update
from iclr_kg.sparql.querytext import (
    MAX_OPERATORS,
    check_nesting,
    check_operators,
    nesting_bound,
    nesting_depth,
    operators,
    split_update,
    tokens,
)
from testbed.helpers import web_processes

ATTACKS = {
    "minus chain": "SELECT * WHERE { BIND(" + "-".join(["1"] * 9_000) + " AS ?x) }",
    "or chain": "SELECT * WHERE { BIND(" + "||".join(["true"] * 12_000) + " AS ?x) }",
    "path sequence": "SELECT * WHERE { ?s " + "/".join(["a"] * 12_000) + " ?o }",
    "path alternatives": "SELECT * WHERE { ?s " + "|".join(["a"] * 12_000) + " ?o }",
    "brackets after a CR comment": "SELECT * WHERE { # c\r" + "{" * 3_000 + "}" * 3_000 + " }",
}
# No operator, no bracket past the bounds, and still too deep for an ordinary thread's stack
DEEP_BUT_BOUNDED = "SELECT (COUNT(*) AS ?n) WHERE { " + " ".join(f"BIND(1 AS ?x{i})" for i in range(4_000)) + " }"


def _get(url: str, body: bytes | None = None) -> tuple[int, str]:
    headers = {"Content-Type": "application/sparql-query", "Accept": "application/sparql-results+json"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=120) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.slow
def test_no_query_text_takes_a_web_process_down(default_serving: tuple[str, subprocess.Popen]) -> None:
    base, main = default_serving
    before = web_processes(main)
    for name, text in ATTACKS.items():
        for route in ("/sparql", "/query"):  # a GET; past the server's URL limit, 414
            status, body = _get(f"{base}{route}?" + urllib.parse.urlencode({"query": text, "format": "json"}))
            assert status == 414 or (status == 400 and "at most" in body), (name, route, status, body[:300])
        status, body = _get(f"{base}/sparql", text.encode())
        assert status == 400 and "at most" in body, (name, status, body[:300])
    status, body = _get(f"{base}/sparql", DEEP_BUT_BOUNDED.encode())
    assert status == 200 and '"value":"1"' in body.replace(" ", ""), body[:300]
    assert web_processes(main) == before, "a web process died and was replaced"


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_attack_is_refused_by_a_bound(name: str) -> None:
    with pytest.raises(QueryError, match="at most"):
        check_nesting(ATTACKS[name])
        check_operators(ATTACKS[name])


def test_the_bounds_let_real_queries_through() -> None:
    text = 'SELECT * { ?p a iclr:Paper ; iclr:title ?t FILTER(?y >= 2020 && !BOUND(?x) || "a"^^xsd:string = "b") }'
    check_operators(text)
    assert operators(text) == len(">=&&!||=") + 1  # SELECT *; the datatype's ^^ is no operator
    check_operators("SELECT * { VALUES ?x { " + " ".join(['"v"^^<urn:t>'] * 6_000) + " } }")
    check_operators("SELECT * WHERE { BIND(" + "-".join(["1"] * (MAX_OPERATORS - 1)) + " AS ?x) }")


def test_the_operator_count_errs_high() -> None:
    assert operators("SELECT * { BIND(true-true-true AS ?x) }") >= 2  # one word to the tokenizer
    assert operators('SELECT * { BIND("a"@en-US AS ?x) }') == 2  # SELECT *, and en-US's -
    assert operators("SELECT * { ?s ^^^^a ?o }") == 4 + 1  # inverse paths: no literal before them


def test_a_comment_ends_at_cr_as_the_grammar_says() -> None:
    text = "SELECT * WHERE { # c\r ?s ?p ?o }"
    assert [t.group() for t in tokens(text)][3:] == ["# c", "?s", "?p", "?o", "}"]
    assert Store().query(text).variables  # the parser agrees


def test_escapes_in_iris_and_local_names_are_part_of_the_term() -> None:
    for text, term in [
        ("SELECT * WHERE { <urn:\\u0041#> ?p ?o }", "<urn:\\u0041#>"),
        ("PREFIX s: <urn:> SELECT * WHERE { s:x\\#y ?p ?o }", "s:x\\#y"),
        ("PREFIX s: <urn:> SELECT * WHERE { s:x\\'y ?p ?o }", "s:x\\'y"),
    ]:
        Store().query(text)
        assert term in [t.group() for t in tokens(text)]
        assert nesting_depth(text) == 1


def test_the_nesting_bound_counts_openers_in_comments() -> None:
    assert nesting_bound("SELECT * { # {{{ }}}\n ?s ?p ?o }") == 4
    assert nesting_depth("SELECT * { # {{{ }}}\n ?s ?p ?o }") == 1


def test_a_load_behind_a_cr_comment_is_checked() -> None:
    update = "INSERT DATA { <urn:a> <urn:b> <urn:c> } # c\r; LOAD <http://127.0.0.1:9/x> INTO GRAPH <urn:g>"
    with pytest.raises(QueryError, match="LOAD <http://127.0.0.1:9/x> is not allowed"):
        check_update(update, (), (), {})
    service = "INSERT { ?s ?p ?o } WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"
    with pytest.raises(QueryError, match="not allowed"):
        check_update(service, (), (), {})


def test_a_bare_cr_splits_an_update_as_pyoxigraph_does() -> None:
    update = "DELETE DATA { <urn:a> <urn:a> <urn:a> } # c\r; INSERT DATA { <urn:b> <urn:b> <urn:b> }"
    parts = split_update(update)
    assert len(parts) == 2 and "INSERT DATA" in parts[1] and "INSERT DATA" not in parts[0]
