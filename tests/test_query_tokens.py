"""The one reader of query text (`querytext.tokens`), against queries whose truth is known.

Hypothesis writes SPARQL queries from the grammar's parts, with the traps a scanner falls into
placed where they do harm: brackets, quotes and `#` inside strings, comments and IRIs; escaped
quotes; long strings; prefixed names with dots; numbers with a dot. The writer knows how deep
the groups nest, how many triple patterns there are and which graph IRIs stand as code, and
pyoxigraph's parser confirms that every text is SPARQL (so the reader is held to what the real
parser reads, not to our idea of it).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Store

from iclr_kg.remote.names import Names
from iclr_kg.sparql.querytext import (
    declarations,
    nesting_bound,
    nesting_depth,
    top_level_words,
    triple_patterns,
    update_keyword,
)

GRAPH = "http://example.org/graph#g1"
TRAPS = ["{", "}", "(", ")", "[", "]", "#", "'", '"', "\\\\", "<", ">", ".", ";", ",", "SELECT", "PREFIX", " "]


@dataclass
class Written:
    text: str
    depth: int
    patterns: int
    graphs: int  # GRAPH <GRAPH> clauses written as code


def _string(parts: list[str], long: bool, quote: str) -> str:
    body = "".join(parts)
    if long:
        body = body.replace("\\\\", "\\\\\\\\")
        return quote * 3 + body.replace(quote, "\\" + quote) + quote * 3
    body = body.replace("\\\\", "\\\\\\\\").replace(quote, "\\" + quote)
    return quote + body + quote


strings = st.builds(_string, st.lists(st.sampled_from(TRAPS), max_size=6), st.booleans(), st.sampled_from("'\""))
# a comment ends at LF or at a bare CR (the grammar's EOL): what follows a CR is code again
comments = st.builds(
    lambda p, end: "# " + "".join(p) + end,
    st.lists(st.sampled_from([t for t in TRAPS if t != "\\\\"]), max_size=6),
    st.sampled_from(["\n", "\r", "\r\n"]),
)
objects = st.one_of(
    strings,
    st.sampled_from(["?o", "ex:a.b", "<http://example.org/x#frag>", "1.5", "2", "-3.0e2", "true", "ex:c"]),
    # escapes the grammar allows: \u in an IRI (a `#` after it is no comment), \-escapes in a local
    # name (not `\#` here: pyoxigraph 0.5.13 reads `ex:a\#b` in an object as the start of a comment,
    # where the reader sees code, so it counts high there, the safe way; test_recursion.py)
    st.sampled_from(["<http://example.org/\\u0041#x>", "<urn:x\\U0001F600>", "ex:a\\'b", "ex:a\\.b", "ex:a\\,b"]),
)


@st.composite
def groups(draw: st.DrawFn, depth: int) -> Written:
    """A group pattern nested `depth` deep: triple patterns, comments, and inner groups."""
    patterns, graphs, parts = 0, 0, []
    for _ in range(draw(st.integers(1, 3))):
        if draw(comments.map(bool)) and draw(st.booleans()):
            parts.append(draw(comments))
        parts.append(f"?s ex:p {draw(objects)} .")
        patterns += 1
    inner_depth = 0
    if depth > 1:
        inner = draw(groups(depth - 1))
        as_graph = draw(st.booleans())
        parts.append(f"GRAPH <{GRAPH}> {inner.text}" if as_graph else f"OPTIONAL {inner.text}")
        patterns, graphs, inner_depth = patterns + inner.patterns, graphs + inner.graphs + as_graph, inner.depth
    if draw(st.booleans()):
        parts.append(f'FILTER (STR(?o) != "<{GRAPH}> }}")')
        inner_depth = max(inner_depth, 2)  # FILTER (STR(...)): two parentheses
    # separators between patterns and inner groups: one per pattern (its " .") plus the group itself
    return Written("{ " + " ".join(parts) + " }", 1 + inner_depth, patterns + 1, graphs)


@st.composite
def queries(draw: st.DrawFn) -> Written:
    group = draw(groups(draw(st.integers(1, 5))))
    prologue = draw(st.sampled_from(["", "# PREFIX x: <y> {\n", "BASE <http://example.org/>\n"]))
    text = f"{prologue}PREFIX ex: <http://example.org/ns#>\nSELECT * WHERE {group.text}"
    return Written(text, group.depth, group.patterns, group.graphs)


@settings(max_examples=300, deadline=None)
@given(queries())
def test_the_reader_counts_what_the_parser_reads(query: Written) -> None:
    Store().query(query.text)  # it is SPARQL: pyoxigraph parses and runs it
    assert nesting_depth(query.text) == query.depth
    assert nesting_bound(query.text) >= query.depth
    assert triple_patterns(query.text) == query.patterns
    assert [word for _, word in top_level_words(query.text)] == (
        ["BASE", "PREFIX", "SELECT", "WHERE"] if "BASE" in query.text.split("\n")[0] else ["PREFIX", "SELECT", "WHERE"]
    )
    assert update_keyword(query.text) is None
    assert declarations(query.text) == {"ex": ["http://example.org/ns#"]}


@settings(max_examples=200, deadline=None)
@given(queries())
def test_graph_names_are_renamed_where_they_are_code_only(query: Written) -> None:
    names = Names("20260101T000000-1-2", [GRAPH])
    renamed = names.query(query.text)
    Store().query(renamed)
    published = names.name(GRAPH)
    assert renamed.count(f"<{published}>") == query.graphs
    assert renamed.count(GRAPH) == query.text.count(GRAPH) - query.graphs  # strings keep theirs


@given(st.sampled_from(["INSERT DATA {}", "delete where { ?s ?p ?o }", "WITH <g> DELETE {} WHERE {}", "LOAD <x>"]))
def test_the_update_keyword_is_found_past_any_prologue(operation: str) -> None:
    prologue = "\ufeff# a comment { with brackets\nPREFIX ex: <http://example.org/#>\nBASE <http://example.org/>\n"
    assert update_keyword(prologue + operation) == operation.split()[0].upper()


def test_a_prefix_declared_twice_alike_still_renames_and_differently_does_not() -> None:
    """A prefixed name is renamed where its prefix stands for one IRI, however often declared;
    declared as two IRIs, it is left as written (which one holds where is the parser's to say)."""
    names = Names("20260101T000000-1-2", [GRAPH])
    published = f"<{names.name(GRAPH)}>"
    twice = "PREFIX g: <http://example.org/graph#>\nPREFIX g: <http://example.org/graph#>\n"
    assert published in names.query(twice + "SELECT * { GRAPH g:g1 { ?s ?p ?o } }")
    other = "PREFIX g: <http://example.org/graph#>\nPREFIX g: <http://example.org/other#>\n"
    assert published not in names.query(other + "SELECT * { GRAPH g:g1 { ?s ?p ?o } }")
