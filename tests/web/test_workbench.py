"""The query workbench: messages a person acts on, completion data, views, permalinks; and the
editor itself in headless Chromium."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import urllib.parse
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from iclr_kg.config import resource_dir
from iclr_kg.errors import IclrKgError
from iclr_kg.sparql.lint import check
from iclr_kg.sparql.saved import load_saved, parse_saved
from testbed.helpers import CHROMIUM_ARGS

TERMS = {"title", "Paper", "name", "authorOf", "hasAuthor"}


def test_an_undeclared_prefix_is_named_with_the_ones_we_predeclare() -> None:
    [problem] = check("SELECT ?x WHERE {\n  ?x foo:bar ?y }", TERMS)
    assert (problem.line, problem.column, problem.severity) == (2, 6, "error")
    assert "the prefix foo: is not declared" in problem.message and "iclr:" in problem.message
    assert check("PREFIX foo: <http://example.org/>\nSELECT ?x WHERE { ?x foo:bar ?y }", TERMS) == []


def test_a_term_our_ontology_lacks_is_said_with_the_nearest_one() -> None:
    [problem] = check("SELECT ?t WHERE { ?p iclr:titel ?t }", TERMS)
    assert problem.severity == "warning" and problem.column == 22
    assert "iclr:titel is not in the iclr-kg ontology" in problem.message and "iclr:title" in problem.message


def test_strings_iris_and_comments_are_not_prefixed_names() -> None:
    assert check('SELECT ?x WHERE { ?x iclr:name "a:b" . ?x <http://example.org/x> ?z } # c:d', TERMS) == []


def test_a_pattern_the_ontology_says_cannot_match_is_warned_with_the_way_round(client: FlaskClient) -> None:
    """Issue #56 item 12: iclr:year is an edition's (its domain), and a paper is no edition (the
    ontology's disjoint classes): 0 rows, now with the reason and the path that works. The same
    from a range, and nothing said of a pattern that can match or of any saved query."""
    from iclr_kg.sparql.lint import never_met
    from iclr_kg.terms import packaged

    ontology = packaged()
    [problem] = never_met("SELECT ?p ?y WHERE {\n  ?p a iclr:Paper ;\n     iclr:year ?y }", ontology)
    assert (problem.line, problem.column, problem.severity) == (3, 6, "warning")
    assert "as an iclr:ConferenceEdition (subject of iclr:year)" in problem.message
    assert problem.message.endswith("write iclr:submittedTo/iclr:year")
    [ranged] = never_met("SELECT * WHERE { ?x iclr:submittedTo ?e . ?e a iclr:Person }", ontology)
    assert "(value of iclr:submittedTo)" in ranged.message
    fine = "SELECT ?y WHERE { ?p a iclr:OutstandingPaper ; iclr:submittedTo/iclr:year ?y ; iclr:title ?t }"
    assert never_met(fine, ontology) == [] and never_met("SELECT * WHERE { ?s ?p ?o", ontology) == []
    for name, saved in load_saved(resource_dir("queries")).items():
        assert never_met(saved.text, ontology) == [], name
    answer = client.get("/api/check", query_string={"query": "SELECT ?y WHERE { ?p a iclr:Paper ; iclr:year ?y }"})
    assert "write iclr:submittedTo/iclr:year" in answer.get_json()["problems"][0]["message"]
    page = client.get("/query", query_string={"query": "SELECT ?y WHERE { ?p a iclr:Paper ; iclr:year ?y }"})
    assert "write iclr:submittedTo/iclr:year" in page.get_data(as_text=True)  # read in a worker, said on the page


def test_one_domain_mistake_on_an_untyped_variable_is_one_warning_where_it_is_made(client: FlaskClient) -> None:
    """Issue #67 item 8: `?p iclr:title ?t ; iclr:year ?y` made ?p a paper (iclr:title) and an
    edition (iclr:year), and each use was held against the other: two warnings (columns 25 and
    41), each in nested parentheses. Now one, at iclr:year, the use that contradicts the first,
    naming both uses and the way round; in English and Chinese, the same from either order."""
    query = "SELECT ?p ?y WHERE { ?p iclr:title ?t ; iclr:year ?y }"
    [english] = client.post("/api/check", data={"query": query}).get_json()["problems"]
    assert (english["line"], english["column"], english["length"]) == (1, 41, len("iclr:year"))
    assert english["message"] == (
        "?p is used as an iclr:Paper (subject of iclr:title) and as an iclr:ConferenceEdition (subject of "
        "iclr:year): no entity is both, so this pattern matches nothing; for the paper's year, write "
        "iclr:submittedTo/iclr:year"
    )
    [chinese] = client.post("/api/check", data={"query": query}, query_string={"lang": "zh"}).get_json()["problems"]
    assert chinese["column"] == 41 and chinese["message"] == (
        "?p 既被当作 iclr:Paper（iclr:title 的主语）又被当作 iclr:ConferenceEdition（iclr:year 的主语）："
        "没有实体同时属于这两个类，因此这个模式匹配不到任何内容；要取论文的年份，请写 iclr:submittedTo/iclr:year"
    )
    reversed_ = "SELECT * WHERE { ?p iclr:year ?y ; iclr:title ?t }"
    [later] = client.post("/api/check", data={"query": reversed_}, query_string={"lang": "en"}).get_json()["problems"]
    assert later["column"] == 36 and later["message"].endswith("for the paper's year, write iclr:submittedTo/iclr:year")


def test_each_clash_is_warned_once_at_its_own_place() -> None:
    """A range mistake, a stated type, two variables each making the mistake, and a path: one
    warning for each mistake, at the term that makes it, none where nothing clashes."""
    from iclr_kg.sparql.lint import never_met
    from iclr_kg.terms import packaged

    ontology = packaged()

    def places(query: str) -> list[tuple[int, str]]:
        return sorted((p.column, p.message.split(" ")[0]) for p in never_met(query, ontology))

    assert places("SELECT * WHERE { ?x iclr:submittedTo ?e . ?e iclr:title ?t }") == [(46, "?e")]
    assert places("SELECT * WHERE { ?e iclr:title ?t . ?x iclr:submittedTo ?e }") == [(40, "?e")]
    assert places("SELECT * WHERE { ?x iclr:submittedTo ?e . ?e a iclr:Person }") == [(21, "?e")]
    two = "SELECT * WHERE { ?x iclr:title ?t ; iclr:year ?y . ?z iclr:title ?u ; iclr:year ?w }"
    assert places(two) == [(37, "?x"), (71, "?z")]
    typed = "SELECT * WHERE { ?p iclr:year ?y . ?p a iclr:Paper }"  # what is stated wins over a use
    assert places(typed) == [(21, "?p")]
    assert places("SELECT * WHERE { ?p iclr:title ?t ; iclr:submittedTo/iclr:year ?y }") == []
    assert places("SELECT * WHERE { ?p iclr:hasAuthorship [ iclr:authorshipBy ?a ] ; iclr:title ?t }") == []


def test_the_endpoint_answers_syntax_errors_in_words(client: FlaskClient) -> None:
    response = client.get("/sparql", query_string={"query": "SELECT ?x WHERE { ?x nope:y ?z }"})
    text = response.data.decode()
    assert response.status_code == 400 and "the prefix nope: is not declared" in text and "\\u{" not in text
    page = client.get(
        "/query", query_string={"query": "SELECT ?t WHERE { ?p iclr:titel ?t }"}, headers={"Accept": "text/html"}
    )
    assert page.status_code == 200 and "did you mean iclr:title?" in page.data.decode()  # said, and it still runs


def test_completion_data_and_problems_as_json(client: FlaskClient) -> None:
    vocabulary = client.get("/api/vocabulary").get_json()
    title = next(t for t in vocabulary["terms"] if t["name"] == "iclr:title")
    assert title["kind"] == "property" and title["label"] and "Paper" in " ".join(title["domain"])
    assert vocabulary["prefixes"]["paper"].endswith("/resource/paper/") and "SELECT" in vocabulary["keywords"]
    problems = client.post("/api/check", data={"query": "SELECT ?t WHERE { ?p iclr:titel ?t }"}).get_json()["problems"]
    assert [p["severity"] for p in problems] == ["warning"]
    labels = client.post("/api/labels", json={"iris": ["https://w3id.org/iclr-kg/resource/person/ian-gemp"]}).get_json()
    assert labels == {"https://w3id.org/iclr-kg/resource/person/ian-gemp": "Ian Gemp"}


def test_saved_queries_declare_their_view(tmp_path: Path) -> None:
    from iclr_kg.config import resource_dir

    saved = load_saved(resource_dir("queries"))
    assert saved["awards-per-organization"].view.startswith("bar ")
    assert saved["coauthors"].view.startswith("graph ")
    assert saved["organization-hierarchy"].view.startswith("tree ")
    bad = tmp_path / "bad.rq"
    bad.write_text("# title: t\n# description: d\n# view: pie\nSELECT * {}\n", encoding="utf-8")
    with pytest.raises(IclrKgError, match="unknown '# view: pie'"):
        parse_saved(bad)


def test_every_column_a_saved_querys_view_names_is_one_it_returns(tmp_path: Path) -> None:
    """Review 24 item 3: edition-trends drew y=statedRateHigh, a column its query never returned
    (rateHigh), and the chart was blank. Each view's columns are checked against what each saved
    query returns, and a file that names a missing one fails to load, saying which."""
    from iclr_kg.sparql.saved import declared_view, returned_variables, view_columns

    checked = 0
    for name, saved in load_saved(resource_dir("queries")).items():
        view = declared_view(saved.text) or saved.view
        returned = returned_variables(saved.text)
        for column in view_columns(view):
            assert column in returned, f"{name}: '# view: {view}' names {column}; the query returns {returned}"
            checked += 1
    assert checked >= 20  # every chart's axes, not a filter that matched nothing
    assert view_columns("tree node=o parent=p where=inferred:false") == ["o", "p", "inferred"]
    bad = tmp_path / "bad.rq"
    bad.write_text("# title: t\n# description: d\n# view: line x=year y=rate\nSELECT ?year WHERE {}\n", "utf-8")
    with pytest.raises(IclrKgError, match=r"names rate, which the query does not return \(it returns year\)"):
        parse_saved(bad)


NUMBERS = (
    'SELECT ?n ?year ?average ?figures WHERE { VALUES (?n ?year ?average ?figures) { (19797 2021 9.666666666666666666 "2997 / 3013")'
    ' (150 2020 0.265 "7") (12 2019 8.75 "11617 / 19797") } }'
)


def test_result_tables_show_numbers_as_people_read_them_and_downloads_as_written(client: FlaskClient) -> None:
    """Review 24 item 11: saved-query tables showed 19797 where the front page says 9,056-style
    figures, sources' figures "19797 / 19000 / 19525 / 11617" in no order, and review averages
    as 9.666666666666666666. In HTML: separators (not in a column of years), averages to two
    places (a figure stated to three stays); the machine formats keep the W3C lexical forms."""
    page = client.get("/query", query_string={"query": NUMBERS}, headers={"Accept": "text/html"})
    cells = re.findall(r"<td><span[^>]*>([^<]*)</span>", page.get_data(as_text=True))
    assert cells[:4] == ["19,797", "2021", "9.67", "2,997 / 3,013"], cells
    assert cells[4:8] == ["150", "2020", "0.265", "7"] and cells[11] == "11,617 / 19,797"
    assert 'title="xsd:decimal 9.666666666666666666"' in page.get_data(as_text=True)  # as written, on hover
    for fmt in ("csv", "tsv", "json"):
        data = client.get("/sparql", query_string={"query": NUMBERS, "format": fmt}).get_data(as_text=True)
        assert "19797" in data and "9.666666666666666666" in data and "19,797" not in data, fmt
    stated = client.get("/queries/decisions-by-year", query_string={"format": "csv"}).get_data(as_text=True)
    columns = [row.split(",")[-2:] for row in stated.splitlines()[1:]]
    figures = [[int(n) for n in column.split(" / ")] for row in columns for column in row if " / " in column]
    assert len(figures) >= 5 and all(f == sorted(f) for f in figures), figures  # smallest first


def test_permalinks_are_short_stable_and_outlive_a_rebuild(tiny_app) -> None:
    from iclr_kg.build.pipeline import build

    settings, client = tiny_app()
    query = "SELECT ?p WHERE { ?p a iclr:Paper }"
    made = client.post("/q", data={"query": query, "view": "bar x=p"}, headers={"Accept": "application/json"})
    link = made.get_json()
    assert made.status_code == 200 and re.fullmatch(r"[A-Za-z0-9_-]{10}", link["id"])
    again = client.post("/q", data={"query": query, "view": "bar x=p"}, headers={"Accept": "application/json"})
    assert again.get_json()["id"] == link["id"]  # the same query and view: the same link
    build(settings)
    opened = client.get(f"/q/{link['id']}")
    assert opened.status_code == 302
    target = urllib.parse.parse_qs(urllib.parse.urlsplit(opened.headers["Location"]).query)
    assert target == {"query": [query], "view": ["bar x=p"]}
    assert client.get("/q/nosuchlink").status_code == 404
    assert client.post("/q", data={"query": " "}).status_code == 400


# --------------------------------------------------------------------------------------------
# In a browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"), reason="Debian chromium is not installed (CI installs it)"
)


def _until(page, expression: str, seconds: float = 15) -> None:
    """Poll `expression` until true (wait_for_function would need eval, which our CSP forbids)."""
    for _ in range(int(seconds * 10)):
        if page.evaluate(f"(() => {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }})()"):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"never true: {expression}")


@pytest.fixture
def chromium():
    """Opens pages in one headless Chromium; any console error on any of them fails the test."""
    assert CHROMIUM, "chromium must be installed in CI"
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)

        def open_page(fresh: bool = False):
            """A page; `fresh`: in a context of its own (no cookies, no storage shared)."""
            page = (browser.new_context() if fresh else browser).new_page()
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            return page

        try:
            yield open_page
        finally:
            browser.close()
    assert errors == []


def editor_page(server: str, chromium):  # type: ignore[no-untyped-def]
    """The query page in Chromium, with the focus in the editor."""
    page = chromium()
    page.goto(server + "/query")
    page.wait_for_selector(".CodeMirror")
    page.click(".CodeMirror")
    return page


@needs_chromium
def test_the_editor_marks_a_typo_and_completes_after_a_prefix(server: str, chromium) -> None:
    page = editor_page(server, chromium)
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.type("SELECT ?t WHERE {\n?p iclr:titel ?t .\n?p iclr:")
    page.wait_for_selector(".cm-problem-warning")  # the typo, marked in the editor
    assert "did you mean iclr:title?" in page.locator("#problems").inner_text()
    page.wait_for_selector(".CodeMirror-hint")  # completion opened after "iclr:"
    assert any("iclr:" in h for h in page.locator(".CodeMirror-hint").all_inner_texts())
    page.keyboard.type("authorO")
    _until(page, "[...document.querySelectorAll('.CodeMirror-hint')][0].textContent.startsWith('iclr:authorOf')")
    page.keyboard.press("Enter")
    value = page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()")
    assert re.search(r"\n\s*\?p iclr:authorOf\b", value), value


@needs_chromium
def test_a_saved_query_opens_as_its_chart_and_a_permalink_keeps_query_and_view(server: str, chromium) -> None:
    page = chromium()
    page.goto(server + "/queries/awards-per-organization")
    rows = int(re.search(r"(\d+) rows", page.locator("main").inner_text()).group(1))
    page.wait_for_selector("#view svg .mark-rect path")
    assert page.locator("#view svg .mark-rect path").count() == rows  # one bar per organization and year
    page.click("text=Open in the query page")
    page.wait_for_selector(".CodeMirror")
    assert page.locator("#view-kind").input_value() == "bar"
    page.click("#share")
    page.wait_for_selector("#permalink:not([hidden])")
    link = page.locator("#permalink").input_value()
    page.click("#copy-permalink")  # the link to the clipboard (or selected and copied where refused)
    _until(page, "document.querySelector('#copy-permalink').textContent === 'Copied'")
    assert re.search(r"/q/[A-Za-z0-9_-]{10}$", link)
    fresh = chromium(fresh=True)
    fresh.goto(link)
    fresh.wait_for_selector("#view svg .mark-rect path")
    text = fresh.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()")
    assert "?organization" in text and "GROUP BY ?organization ?name ?year" in text
    assert fresh.locator("#view-kind").input_value() == "bar"
    assert fresh.locator("#view svg .mark-rect path").count() == rows


@needs_chromium
def test_the_chart_pickers_read_and_write_the_view_line(server: str, chromium) -> None:
    """x / y / series pickers show what a chart uses and rewrite the editor's `# view:` line;
    the line alone, in a link without `view`, draws the chart again."""
    page = chromium()
    page.goto(server + "/queries/awards-per-organization")
    page.click("text=Open in the query page")
    page.wait_for_selector("#view svg .mark-rect path")
    assert page.locator("#view-axes").is_visible()
    assert page.locator("#view-x").input_value() == "name"  # as the saved query's view says
    assert page.locator("#view-series").input_value() == "year"
    page.select_option("#view-series", "")  # no series: one bar per name, summed by Vega-Lite
    _until(page, "!document.querySelector('#view-kind').dataset.spec.includes('series')")
    text = page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()")
    assert re.search(r"^# view: bar x=name y=\w+$", text, re.M), text
    assert "series=" not in text.split("# view:", 2)[-1].splitlines()[0]
    page.select_option("#view-kind", "line")  # another chart keeps the axes
    _until(page, "document.querySelector('#view svg .mark-line path')")
    text = page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()")
    assert re.search(r"^# view: line x=name y=\w+$", text, re.M), text
    assert "view=line" in page.url
    page.select_option("#view-kind", "table")  # the table needs no line
    _until(page, "document.querySelector('#view-axes').hidden")
    assert "# view:" not in page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()")
    page.close()  # its last edits' syntax checks go with it
    # A text with its own view line, linked without `view`: drawn as the line says.
    fresh = chromium(fresh=True)
    query = "# view: bar x=name y=papers\n" + text.replace("# view: line", "# old")
    fresh.goto(server + "/query?" + urllib.parse.urlencode({"query": query}))
    fresh.wait_for_selector("#view svg .mark-rect path")
    assert fresh.locator("#view-kind").input_value() == "bar"
    assert fresh.locator("#view-y").input_value() == "papers"


@needs_chromium
def test_a_chart_of_no_rows_says_so_and_two_labels_make_a_series(server: str, chromium) -> None:
    """Pages round two, items 10 and 11: a 0-row result asked for as a bar chart showed a raw
    Vega exception, the bar option left enabled; organization x year rows drawn as a plain bar
    chart had no series, so each organization's years stacked into one unlabelled bar."""
    from iclr_kg.config import resource_dir

    page = chromium()
    for lang, said in (("en", "bar: no rows to draw"), ("zh", "柱状图：没有可绘制的结果")):
        query = "SELECT ?name (COUNT(*) AS ?n) WHERE { ?x iclr:name ?name ; iclr:nothing ?y } GROUP BY ?name"
        page.goto(server + "/query?" + urllib.parse.urlencode({"query": query, "view": "bar", "lang": lang}))
        page.wait_for_selector("#results-table")
        assert page.locator("#view-kind").input_value() == "table"
        assert page.locator("#view-kind option[value=bar]").is_disabled()
        assert said.replace("：", ": ") in page.locator("#view-unfit").inner_text().replace("：", ": ")
        assert "could not be drawn" not in page.locator("main").inner_text()
    text = (resource_dir("queries") / "awards-per-organization.rq").read_text(encoding="utf-8")
    plain = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    page.goto(server + "/query?" + urllib.parse.urlencode({"query": plain, "view": "bar"}))
    page.wait_for_selector("#view svg .mark-rect path")
    assert page.locator("#view-series").input_value() == "year"
    assert page.locator("#view svg .role-legend").count() == 1  # the years, told apart


@needs_chromium
def test_a_chart_whose_y_column_is_empty_in_every_row_shows_the_table(server: str, chromium) -> None:
    """Review 24 item 3: decisions-by-year charts acceptanceRate, unbound in all 13 rows of the
    curated graph: an empty frame with one "0" tick, the table hidden. Now the rows are shown as
    a table, with a note in the page's language; the pickers stay, to choose another y."""
    page = chromium()
    query = "SELECT ?year ?rate WHERE { VALUES ?year { 2020 2021 } OPTIONAL { ?year iclr:nothing ?rate } }"
    for lang, said in (("en", "rate has no value in any row"), ("zh", "rate 列在每一行都没有值")):
        page.goto(
            server + "/query?" + urllib.parse.urlencode({"query": query, "view": "bar x=year y=rate", "lang": lang})
        )
        page.wait_for_selector("#view-empty")
        assert said in page.locator("#view-empty").inner_text()
        assert page.locator("#results-table").is_visible() and page.locator("#view svg").count() == 0
        assert page.locator("#view-y").input_value() == "rate"
    page.goto(server + "/queries/decisions-by-year")
    page.wait_for_selector("#view-empty, #view svg .mark-rect path")
    if page.locator("#view-empty").count():  # the curated graph holds no edition whole
        assert page.locator("#results-table").is_visible()


@needs_chromium
def test_a_table_sorts_numbers_with_separators_by_value(server: str, chromium) -> None:
    """Review 24 item 11: with separators, "19,797" is no longer a number to the table's sort."""
    page = chromium()
    page.goto(server + "/query?" + urllib.parse.urlencode({"query": NUMBERS, "view": "table"}))
    page.wait_for_selector("#results-table th")
    page.click("#results-table th >> nth=0")
    _until(page, "document.querySelector('#results-table th').getAttribute('aria-sort') === 'ascending'")
    column = page.evaluate("[...document.querySelectorAll('#results-table tbody tr')].map(r => r.cells[0].textContent)")
    assert column == ["12", "150", "19,797"]


@needs_chromium
def test_graph_and_tree_views_draw_names(server: str, chromium) -> None:
    page = chromium()
    page.goto(server + "/resource/person/ian-gemp")
    page.get_by_role("link", name="Every co-author, in the query page").click()  # the graph, in the workbench
    _until(page, "window.lastGraph && window.lastGraph.nodes().length > 1")
    names = page.evaluate("window.lastGraph.nodes().map(n => n.data('label'))")
    assert "Ian Gemp" in names and "Brian McWilliams" in names
    page.goto(server + "/queries/organization-hierarchy")
    _until(page, "document.querySelectorAll('#view svg text').length > 2")
    texts = page.evaluate("[...document.querySelectorAll('#view svg text')].map(t => t.textContent)")
    assert "Google" in texts and "Google Brain" in texts


def test_the_query_page_stays_within_its_javascript_budget(client: FlaskClient) -> None:
    """Issue budget: under 600 KB of JavaScript, compressed, for the query page (all it loads
    at once, plus what any view loads on demand)."""
    import iclr_kg.web

    static = Path(iclr_kg.web.__file__).parent / "static"
    html = client.get("/query", headers={"Accept": "text/html"}).data.decode()
    scripts = re.findall(r'<script src="/static/([^"?]+)(?:\?v=\w+)?"', html)  # versioned URLs
    on_demand = re.findall(r'script\("(vendor/[^"]+)"\)', (static / "workbench.js").read_text(encoding="utf-8"))
    total = sum(len(gzip.compress((static / s).read_bytes())) for s in {*scripts, *on_demand})
    assert scripts and total < 600 * 1024, f"{total / 1024:.0f} KB"


@needs_chromium
def test_a_timeline_places_dated_rows_by_name(server: str, chromium) -> None:
    query = "SELECT ?edition ?start WHERE { ?edition iclr:startDate ?start }"
    page = chromium()
    page.goto(server + "/query?" + urllib.parse.urlencode({"query": query, "view": "timeline x=start label=edition"}))
    _until(page, "document.querySelectorAll('#view svg .mark-symbol path').length > 0")
    rows = int(re.search(r"(\d+) rows?", page.locator("main").inner_text()).group(1))
    assert page.locator("#view svg .mark-symbol path").count() == rows
    axis = page.evaluate("[...document.querySelectorAll('#view svg text')].map(t => t.textContent)")
    assert "ICLR 2021" in axis  # the edition's name, not its IRI


@needs_chromium
def test_a_graph_node_follows_only_our_own_iris(server: str, chromium) -> None:
    """Regression (hardening #33.15): the node-click check `id.startsWith(location.origin)`
    passed `http://HOST:PORT@evil.example/` (user info), an open redirect."""
    evil = server + "@evil.example/x"
    ours = "https://w3id.org/iclr-kg/resource/person/ian-gemp"
    query = f"SELECT ?a ?b WHERE {{ VALUES (?a ?b) {{ (<{evil}> <{ours}>) }} }}"
    page = chromium()
    page.goto(server + "/query?" + urllib.parse.urlencode({"query": query, "view": "graph source=a target=b"}))
    _until(page, "window.lastGraph && window.lastGraph.nodes().length == 2")
    before = page.url
    # Each tap in a function returning nothing: `emit` returns the node, and Playwright would
    # serialize it with all of Cytoscape behind it (10-50 s, a flaky navigation timeout).
    page.evaluate(f"() => {{ window.lastGraph.getElementById({evil!r}).emit('tap'); }}")
    page.wait_for_timeout(500)
    assert page.url == before  # not followed
    with page.expect_navigation():
        page.evaluate(f"() => {{ window.lastGraph.getElementById({ours!r}).emit('tap'); }}")
    assert page.url == server + "/resource/person/ian-gemp"


def test_an_unclosed_group_is_named_where_it_opens(client: FlaskClient) -> None:
    """A missing '}' before GROUP BY: the parser says 'expected OPTIONAL' at GROUP BY; we say which '{'."""
    text = "SELECT ?x (COUNT(*) AS ?n) WHERE {\n  ?x a iclr:Paper .\n  { ?x iclr:title ?t .\nGROUP BY ?x"
    answer = client.get("/sparql", query_string={"query": text})
    assert answer.status_code == 400
    assert "the '{' at line 3, column 3 is not closed before line 4 ('GROUP BY ?x')" in answer.get_data(as_text=True)


@needs_chromium
def test_the_keyboard_leaves_the_editor_and_reaches_run(server: str, chromium) -> None:
    """WCAG 2.1.2: Tab moves on from the editor (it used to indent forever), to Run."""
    page = editor_page(server, chromium)
    before = page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()")
    reached = []
    for _ in range(6):  # a few stops at most: the editor's options, then Run
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.outerHTML.slice(0, 80)"))
        if "Run" in page.evaluate("document.activeElement.textContent || document.activeElement.value || ''"):
            break
    assert page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()") == before  # no tab typed
    assert "Run" in page.evaluate("document.activeElement.textContent || document.activeElement.value || ''"), reached


@needs_chromium
def test_a_profile_draws_its_charts_without_a_library_and_links_each_as_a_query(server: str, chromium) -> None:
    """Issue #56 items 6 and 15: a person's page draws papers per year as bars and the closest
    co-authors as SVG, loading no script for them; at 400 px nothing runs off the side. The
    bars' "This as a query" opens the workbench, whose chart says what it shows."""
    page = chromium()
    scripts: list[str] = []
    page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto(server + "/resource/person/ian-gemp")
    assert not [url for url in scripts if "vendor/" in url or "workbench" in url], scripts
    assert page.locator("table.bars th", has_text="2021").count() == 1
    assert page.locator("svg.star a").count() >= 3 and page.locator("svg.star").bounding_box()["width"] <= 400
    assert page.evaluate("document.documentElement.scrollWidth") <= 400
    page.locator("section", has_text="Papers per year").get_by_role("link", name="This as a query").click()
    page.wait_for_selector("[role=img]")
    summary = page.locator("[role=img]").first.get_attribute("aria-label")
    assert summary.startswith("bar chart of papers by year, 2 rows: 2021: 1; 2024: 1"), summary


@needs_chromium
def test_an_edition_shows_its_acceptance_rate_over_the_years_in_the_pages_language(server: str, chromium) -> None:
    """Issue #37 item 2: each edition's stated rate (or accepted over submitted) in percent, drawn
    on the page (issue #66: stated and counted as two series, a range where sources differ), and
    as a line in the workbench, in Chinese too."""
    page = chromium()
    page.goto(server + "/resource/edition/iclr2021?lang=zh")
    rates = page.locator("section", has_text="历年接收率")
    assert "来源所述" in rates.inner_text() and "图中计数" in rates.inner_text()  # the legend
    points = rates.locator("svg title").all_text_contents()
    assert "来源所述, 2020: 26.5%" in points and "来源所述, 2021: 28.7%" in points, points
    rates.get_by_role("link", name="以查询打开").click()
    page.wait_for_selector("svg .mark-line path")
    summary = page.locator("[role=img]").first.get_attribute("aria-label")
    assert summary.startswith("折线图：按year的rateHigh"), summary  # the query's own names


@needs_chromium
def test_facets_narrow_a_list_and_the_pager_moves_through_matches(server: str, chromium) -> None:
    """Issue #37 items 3-4 in a browser: a year facet narrows the paper list to as many as it
    said, a decision facet under it too; a search tab's pager goes to the next matches."""
    page = chromium()
    page.goto(server + "/resource/paper/")
    facet = page.locator("p.facet", has_text="year").locator("a", has_text="2021")
    said = int(re.search(r"2021 \(([\d,]+)\)", page.locator("p.facet", has_text="year").inner_text()).group(1))
    facet.click()
    page.wait_for_url("**year=2021**")
    assert page.locator("h1").inner_text().endswith(f" · {said:,}")  # "Papers of ICLR 2021 · 13"
    assert page.locator("tbody tr").count() == min(said, 100)
    accepted = page.locator("p.facet", has_text="decision").locator("a").first
    accepted.click()
    page.wait_for_url("**decision=**")
    assert "year=2021" in page.url and page.locator("tbody tr").count() >= 1
    page.goto(server + "/search?q=learning&kind=paper&limit=2")
    assert "1–2 of" in page.locator("main").inner_text()
    page.click("a[rel=next]")
    page.wait_for_url("**page=2**")
    assert "3–4 of" in page.locator("main").inner_text()


@needs_chromium
def test_the_header_search_box_offers_names_as_one_types(server: str, chromium) -> None:
    page = chromium()
    page.goto(server + "/resource/paper/")
    page.click("#site-search")
    page.keyboard.type("Ian Ge")
    _until(page, "[...document.querySelectorAll('#site-search-names option')].some(o => o.value === 'Ian Gemp')")
    # pages round two, item 9: the front page's and the search page's boxes too, and from one
    # Chinese character (a word in itself)
    for path, box in (("/?lang=zh", "#front-q"), ("/search?q=x&lang=zh", "#q")):
        page.goto(server + path)
        page.fill(box, "")
        page.click(box)
        page.keyboard.type("朱")
        _until(page, f"[...document.querySelectorAll('{box}-names option')].some(o => o.value === '朱军')")


def test_the_view_picker_greys_out_views_the_rows_cannot_make_and_says_why(client) -> None:
    """A result offers only the views it can fill: a graph and a tree need two columns of
    entities, bars a column of numbers, a timeline dates or years; the others are disabled with
    the reason (in the page's language), the saved view itself never."""
    import re

    def options(path: str, lang: str = "en") -> dict[str, str | None]:
        page = client.get(path, query_string={"lang": lang}).get_data(as_text=True)
        picker = re.search(r'<select id="view-kind".*?</select>', page, re.S).group(0)
        return {
            v: (re.search(r'title="([^"]+)"', attrs).group(1) if "disabled" in attrs else None)
            for v, attrs in re.findall(r'<option value="(\w+)"([^>]*)>', picker)
        }

    hierarchy = options("/queries/organization-hierarchy")  # (organization, parent): a tree
    assert hierarchy["tree"] is None and hierarchy["graph"] is None
    assert hierarchy["bar"] == "needs a column of numbers beside another column"
    assert hierarchy["timeline"] == "needs a column of dates or years"
    pairs = options("/queries/coauthors")  # (person, person, papers together): a weighted graph
    assert pairs["graph"] is None and pairs["bar"] is None and pairs["timeline"] is not None
    counts = options("/queries/submission-counts")
    assert counts["graph"] == counts["tree"] == "needs two columns of entities (from, to)"
    assert options("/queries/organization-hierarchy", "zh")["bar"] == "需要一列数字和另一列"


TRADITIONAL_ONLY = set("論獎學爐華軍際國門傑")  # characters Simplified Chinese writes otherwise


@needs_chromium
def test_chinese_pages_show_every_label_in_simplified_script_at_phone_width(server: str, chromium) -> None:
    """Issue #56 item 4 in a browser: a Chinese page at 400 px shows the graph's labels in
    Simplified script (ICLR 2021 杰出论文奖, 斯坦福大学, 朱军), the sources' own script only in the
    statements fold or marked as theirs (an article named by its title, lang="zh-Hant"), and the
    co-author star names people as the page does (宋飏)."""
    page = chromium()
    page.set_viewport_size({"width": 400, "height": 800})
    shown = {}
    for path in ("/resource/award/iclr2021-outstanding-paper", "/resource/person/yang-song", "/resource/paper/"):
        page.goto(server + path + "?lang=zh")
        shown[path] = page.locator("main").inner_text()  # the statements fold is closed: not shown
        marked = page.evaluate("[...document.querySelectorAll('main [lang^=\"zh-Hant\"]')].map(e => e.innerText)")
        ours = shown[path]
        for words in marked:  # a source's own words, marked as such
            ours = ours.replace(words, "")
        found = set(ours) & TRADITIONAL_ONLY
        assert not found, (path, sorted(found))
        assert page.evaluate("document.documentElement.scrollWidth") <= 400, path
    assert "ICLR 2021 杰出论文奖" in shown["/resource/award/iclr2021-outstanding-paper"]
    assert "斯坦福大学" in shown["/resource/person/yang-song"] and "朱军" in shown["/resource/person/yang-song"]
    page.goto(server + "/resource/person/yang-song?lang=zh")
    assert "宋飏" in page.locator("svg.star").inner_html()


@needs_chromium
def test_a_phones_bar_chart_of_names_lies_down_and_reads_across(server: str, chromium) -> None:
    """#67 item 7: at 400 px the names under the bars of "Award papers per organization" stood
    upright, 34 of them unreadable; on a phone the bars now lie down, one named row each."""
    page = chromium()
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto(server + "/queries/awards-per-organization?lang=en")
    page.wait_for_selector("#view svg .mark-rect path")
    labels = page.evaluate(
        "[...document.querySelectorAll('#view svg .role-axis-label text')]"
        ".map(t => [t.textContent, t.getAttribute('transform') || ''])"
    )
    names = [text for text, _ in labels if "Google" in text]
    assert names and not [text for text, turned in labels if "rotate" in turned]
    assert page.evaluate("document.documentElement.scrollWidth") <= 400


OVERLAPPING_NAMES = """() => {
  const boxes = window.lastGraph.nodes().map(n => [n.data('label'),
    n.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true })]);
  const pairs = [];
  boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
    if (p.x1 < q.x2 && q.x1 < p.x2 && p.y1 < q.y2 && q.y1 < p.y2) pairs.push([a, b]);
  }));
  return pairs;
}"""
PAIRS_OF_COAUTHORS = "SELECT ?a ?b WHERE { ?p iclr:hasAuthor ?a , ?b . FILTER(STR(?a) < STR(?b)) } LIMIT 60"


def _drawn_graph(page, least: int) -> None:
    """Waits for what a person sees: the view drawn (no longer aria-busy), its layout done."""
    _until(
        page,
        f"window.lastGraph && window.lastGraph.nodes().length >= {least}"
        " && !document.querySelector('#view').hasAttribute('aria-busy')",
    )


@needs_chromium
def test_a_graphs_names_keep_apart(server: str, chromium) -> None:
    """#67 item 7: the co-author graph drew "Brian McWilliams" over "Ian Gemp"; each node is now
    laid out as wide as its name, and names cose left meeting are moved apart, so no two names
    overlap: in the co-author graph and in one of 60 pairs (67 names), where cose alone left
    three pairs over each other."""
    page = chromium()
    page.goto(server + "/queries/coauthors?lang=en")
    _drawn_graph(page, 4)
    assert page.evaluate(OVERLAPPING_NAMES) == []
    page.goto(server + "/query?" + urllib.parse.urlencode({"query": PAIRS_OF_COAUTHORS, "view": "graph"}))
    _drawn_graph(page, 60)
    assert page.evaluate(OVERLAPPING_NAMES) == []


@needs_chromium
@pytest.mark.parametrize(
    ("lang", "axis"), [("en", "acceptance rate (highest stated)"), ("zh", "接收率（来源所述最高）")]
)
def test_a_saved_querys_chart_names_its_axes_and_shows_rates_in_percent(
    server: str, chromium, lang: str, axis: str
) -> None:
    """Review 25 item 3: edition-trends' y axis was titled "rate high" (in English on zh too) and
    read 0.00–0.40 where the front page shows 40%. Titles come from column_title, the one place
    a column is named (the axis pickers too); a rate is drawn in percent."""
    page = chromium()
    page.goto(f"{server}/queries/edition-trends?lang={lang}")
    page.wait_for_selector("svg .mark-line path")
    titles = page.locator("svg .role-axis-title text").all_text_contents()
    ticks = page.locator("svg .role-axis-label text").all_text_contents()
    assert axis in titles and "rate high" not in titles, titles
    assert "40%" in ticks and "0.40" not in ticks, ticks
    assert page.locator("#view-y option:checked").inner_text() == axis
