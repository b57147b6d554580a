"""Pages and Linked Data: query page, saved queries, entity pages, ontology, /data, health, stats."""

from __future__ import annotations

import html
import json
import re

import pytest
import rdflib

from iclr_kg import vocab
from iclr_kg.config import resource_dir
from iclr_kg.sparql.saved import load_saved
from testbed.helpers import eventually


def test_query_page_shows_editor_saved_queries_and_results(client) -> None:
    page = client.get("/query")
    assert page.status_code == 200 and b"<textarea" in page.data and b"PREFIX iclr:" in page.data
    from markupsafe import escape

    for saved in load_saved(resource_dir("queries")).values():
        assert str(escape(saved.title)).encode() in page.data
    run = client.get(
        "/query", query_string={"query": "SELECT ?p ?t WHERE { ?p a iclr:OutstandingPaper ; iclr:title ?t }"}
    )
    html = run.data.decode()
    assert run.status_code == 200 and "<table>" in html and "EigenGame" in html
    assert "rows" in html and " ms" in html
    assert 'href="/resource/paper/NzTU59SYbNq"' in html
    for fmt in ("json", "xml", "csv", "tsv"):
        assert f"format={fmt}" in html


def test_query_page_shows_syntax_errors(client) -> None:
    page = client.get("/query", query_string={"query": "SELECT * WHERE { ?s ?p }"})
    assert page.status_code == 400 and b"SPARQL syntax error at line 1, column" in page.data


def test_templates_escape_everything(client) -> None:
    page = client.get("/query", query_string={"query": "SELECT ('<script>alert(1)</script>' AS ?x) WHERE {}"})
    assert b"<script>alert(1)</script>" not in page.data and b"&lt;script&gt;" in page.data
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY" and page.headers["X-Content-Type-Options"] == "nosniff"
    entity = client.get("/resource/paper/NzTU59SYbNq")
    assert "Content-Security-Policy" in entity.headers


def test_saved_query_list_html_and_json(client) -> None:
    saved = load_saved(resource_dir("queries"))
    assert len(saved) >= 15
    html = client.get("/queries").data.decode()
    listed = json.loads(client.get("/queries", headers={"Accept": "application/json"}).data)
    assert {q["name"] for q in listed} == set(saved)
    for name in saved:
        assert f'href="/queries/{name}"' in html


@pytest.mark.parametrize("name", sorted(load_saved(resource_dir("queries"))))
def test_every_saved_query_runs_as_page_and_as_data(client, name: str, wikidata_standin: str) -> None:
    from ..conftest import saved_query_values

    saved = load_saved(resource_dir("queries"))[name]
    values = saved_query_values(saved, wikidata_standin)
    page = client.get(f"/queries/{name}", query_string=values)
    data = client.get(f"/queries/{name}", query_string=values, headers={"Accept": "application/sparql-results+json"})
    assert page.status_code == 200 and b"<table>" in page.data and data.status_code == 200
    if saved.requires == "openreview-import":  # no import in this graph: no rows, and the page says so
        assert b"holds none of it yet" in page.data and json.loads(data.data)["results"]["bindings"] == []
        assert b"iclr-kg import" not in page.data  # the operator's command is in docs/openreview.md
    else:
        assert b"<tbody>\n<tr>" in page.data and json.loads(data.data)["results"]["bindings"]


def test_saved_query_parameters_are_bound_not_spliced(client) -> None:
    gemp = client.get(
        "/queries/coauthors",
        query_string={"person": "https://w3id.org/iclr-kg/resource/person/yoshua-bengio", "format": "csv"},
    )
    assert gemp.status_code == 200 and "Edward J Hu" in gemp.data.decode()
    injected = client.get("/queries/coauthors", query_string={"person": "x> } ; DROP ALL ; <y", "format": "csv"})
    assert injected.status_code == 400 and b"not a valid iri" in injected.data
    assert client.get("/queries/coauthors", query_string={"nope": "1", "format": "csv"}).status_code == 200


def test_unknown_saved_query_is_404(client) -> None:
    assert client.get("/queries/nope").status_code == 404
    assert client.get("/queries/..%2F..%2Fetc%2Fpasswd").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/resource/paper/NzTU59SYbNq",
        "/resource/person/ian-gemp",
        "/resource/organization/google",
        "/resource/edition/iclr2021",
        "/resource/award/iclr2024-honorable-mention",
        "/resource/source/iclr2021-outstanding-papers",
        "/resource/conference/iclr",
        "/resource/authorship/NzTU59SYbNq-1",
        "/resource/conferral/iclr2021-outstanding-paper-NzTU59SYbNq",
        "/resource/review/how-neural-networks-extrapolate-1",
        "/resource/role/yang-song-iclr2021-outstanding-papers-1",
    ],
)
def test_every_kind_of_entity_dereferences(client, path: str) -> None:
    page = client.get(path, headers={"Accept": "text/html"})
    assert page.status_code == 200 and b'<table class="properties">' in page.data
    turtle = client.get(path, headers={"Accept": "text/turtle"})
    assert turtle.status_code == 200 and turtle.mimetype == "text/turtle"
    graph = rdflib.Graph().parse(data=turtle.data, format="turtle")
    assert (rdflib.URIRef("https://w3id.org/iclr-kg" + path), None, None) in graph
    for accept, fmt in (("application/ld+json", "json-ld"), ("application/n-triples", "nt")):
        other = client.get(path, headers={"Accept": accept})
        assert len(rdflib.Graph().parse(data=other.data, format=fmt)) == len(graph)


def test_entity_page_marks_inferred_and_sources_and_wikidata(client) -> None:
    html = client.get("/resource/organization/google-brain").data.decode()
    assert 'class="inferred"' in html and "<em>inferred</em>" in html
    paper = client.get("/resource/paper/PxTIG12RRHS").data.decode()
    assert "iclr2021-outstanding-papers" in paper and "iclr2021-notable-submissions" in paper
    google = client.get("/resource/organization/google").data.decode()
    assert 'href="http://www.wikidata.org/entity/Q95"' in google
    assert "Referenced by" in google


def test_unknown_entity_is_404(client) -> None:
    assert client.get("/resource/paper/doesNotExist").status_code == 404
    assert client.get("/resource/nosuchkind/x").status_code == 404
    assert client.get("/resource/paper/..%2F..%2Fetc").status_code == 404


CHROMIUM_ACCEPT = (  # what Chromium sends when it opens a page: werkzeug's `best` of it is the last entry
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
    "application/signed-exchange;v=b3;q=0.7"
)


def test_a_browser_gets_the_404_page_with_entities_near_what_it_asked(client) -> None:
    """NotFound (errors.py) is the site's 404 page for a browser, in its language, with entities
    whose names come close to the address; a client that asks for no page gets the sentence."""
    for path, lang, near in (("/resource/person/yang-sonng", "en", "Yang Song"), ("/queries/nope", "zh", "")):
        page = client.get(path, query_string={"lang": lang}, headers={"Accept": CHROMIUM_ACCEPT})
        html = page.get_data(as_text=True)
        assert page.status_code == 404 and page.mimetype == "text/html" and near in html
        if lang == "zh":
            assert "浏览全部论文" in html and "browse every paper" not in html
    plain = client.get("/resource/person/yang-sonng", headers={"Accept": "application/json"})
    assert plain.status_code == 404 and plain.mimetype == "text/plain" and b"No entity" in plain.data


def test_ontology_page_and_turtle(client) -> None:
    html = client.get("/ontology").data.decode()
    assert 'id="Paper"' in html and 'id="hasAuthor"' in html and 'id="subOrganizationOf"' in html
    assert "论文" in html
    turtle = client.get("/ontology", headers={"Accept": "text/turtle"})
    graph = rdflib.Graph().parse(data=turtle.data, format="turtle")
    assert (rdflib.URIRef("https://w3id.org/iclr-kg/ontology#Paper"), rdflib.RDF.type, rdflib.OWL.Class) in graph


def test_graph_store_protocol_reads(client) -> None:
    default = client.get("/data?default", headers={"Accept": "application/n-triples"})
    assert default.status_code == 200 and len(rdflib.Graph().parse(data=default.data, format="nt")) > 5000
    wikidata = client.get(
        "/data", query_string={"graph": "https://w3id.org/iclr-kg/graph/wikidata"}, headers={"Accept": "text/turtle"}
    )
    assert b"Q95" in wikidata.data
    everything = client.get("/data", headers={"Accept": "application/n-quads"})
    dataset = rdflib.Dataset().parse(data=everything.data, format="nquads")
    assert len(list(dataset.graphs())) >= 9
    assert client.get("/data", query_string={"graph": "https://example.org/none"}).status_code == 404
    assert client.get("/data", query_string={"graph": "../../etc/passwd"}).status_code == 400
    assert client.put("/data?default", data=b"").status_code == 403  # writes need the update token


def test_health_and_stats(client) -> None:
    health = client.get("/health")
    assert health.status_code == 200 and health.json["status"] == "ok" and health.json["quads"] > 5000
    stats = client.get("/stats").data.decode()
    assert "https://w3id.org/iclr-kg/graph/inferred" in stats
    assert "iclr:Paper" in stats


def test_stats_are_counted_once_per_generation_before_anyone_asks(tiny_app, monkeypatch) -> None:
    """A new generation's /stats counts and saved queries' first rows are computed in the
    background soon after a request first sees it, and kept beside it: another web process
    (another app) reads them, counting nothing. A query that calls another service is not kept."""

    from iclr_kg import counts
    from iclr_kg.store import current_generation, kept_beside
    from iclr_kg.web import create_app, querying

    settings, client = tiny_app()
    kept = kept_beside(current_generation(settings.store), counts.KEPT)
    assert client.get("/").status_code == 200 and not kept.exists()
    eventually(kept.exists, "the counts kept beside the generation")
    counted = json.loads(kept.read_text())
    assert "https://w3id.org/iclr-kg/graph/inferred" in json.dumps(counted)
    saved = kept_beside(current_generation(settings.store), "saved-award-papers")  # a saved query's page
    eventually(saved.exists, "the saved query's page kept beside the generation")
    assert json.loads(saved.read_text())["columns"] == ["edition", "paper", "title", "award", "kind"]
    assert not kept_beside(
        current_generation(settings.store), "saved-wikidata-countries"
    ).exists()  # SERVICE: never kept

    def no_counting() -> None:
        raise AssertionError("counted again")

    monkeypatch.setattr(querying, "stats_counts", no_counting)
    other = create_app(settings).test_client()
    stats = other.get("/stats", headers={"Accept": "text/html"})
    assert stats.status_code == 200 and "https://w3id.org/iclr-kg/graph/inferred" in stats.data.decode()


def test_a_rebuild_goes_live_without_restart(tiny_app, tiny_data) -> None:
    from iclr_kg.build.pipeline import build

    settings, client = tiny_app()
    count = lambda: int(
        client.get(
            "/sparql", query_string={"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "format": "csv"}
        ).data.split()[1]
    )
    before = count()
    settings = tiny_data(
        extra_sources={
            "more.yaml": """
        source: {key: more, title: More, language: zh-Hans, seed: s, summary: s}
        papers:
          - openreview: NzTU59SYbNq
            edition: ICLR 2021
            title: "EigenGame: PCA as a Nash Equilibrium"
        """
        }
    )
    build(settings)
    assert count() > before


def test_the_front_page_answers_without_sparql_and_old_editor_links_move(client) -> None:
    """Issue #37 item 1: search first, then editions, awards, top organizations and what the
    graph holds; the editor lives at /query, and /?query=... links are sent there."""
    page = client.get("/").get_data(as_text=True)
    assert 'action="/search"' in page and 'name="q"' in page and "<textarea" not in page
    assert 'href="/resource/edition/iclr2021"' in page and 'href="/resource/award/' in page
    assert 'href="/resource/organization/google"' in page and 'href="/query"' in page
    assert re.search(r'href="/resource/paper/">Papers</a></td><td class="num">\d+', page)  # what is inside
    moved = client.get("/", query_string={"query": "ASK {}", "view": "table"})
    assert moved.status_code == 301 and moved.headers["Location"].startswith("/query?query=ASK")
    assert client.get(moved.headers["Location"]).status_code == 200


def test_the_front_page_counts_iclr_editions_and_awards_by_the_ontology(client, real_store) -> None:
    """Issue #67 item 3: "edition 15" counted NeurIPS 2020 among ICLR's editions (and "award 21" the
    Turing Award). Each figure counts what it says, ICLR's own by iclr:editionOf and iclr:awardedAt,
    and the graph's other events are named as context, not counted."""
    iclr = "<https://w3id.org/iclr-kg/resource/conference/iclr>"

    def count(where: str) -> int:
        query = f"SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE {{ {where} }}"
        return int(next(iter(real_store.query(query, prefixes=vocab.QUERY_PREFIXES)))[0].value)

    editions, every_edition = count(f"?e iclr:editionOf {iclr}"), count("?e a iclr:ConferenceEdition")
    awards, every_award = count(f"?e iclr:awardedAt/iclr:editionOf {iclr}"), count("?e a iclr:Award")
    assert editions < every_edition and awards < every_award  # the graph holds others: the test means something
    for lang, words in (("en", ("Editions of ICLR", "Awards given at ICLR")), ("zh", ("ICLR 各届", "ICLR 颁发的奖项"))):
        page = client.get("/", query_string={"lang": lang}).get_data(as_text=True)
        inside = page.split('<section class="panel"><h2>')[1].split("</section>")[0]
        shown = dict(re.findall(r'<a href="[^"]+">([^<]+)</a></td><td class="num">([\d,]+)<', inside))
        assert shown[words[0]] == str(editions) and shown[words[1]] == str(awards), shown
        assert not {"edition", "届次", "award", "奖项", "conference", "会议"} & shown.keys()
        assert 'href="/resource/edition/neurips2020">NeurIPS 2020</a>' in inside  # named, not counted


def test_writers_and_criteria_are_shown_in_their_sources_order(client) -> None:
    """Issue #67 item 7: the byline read 小舟, 維度, 陳萍 (the store's order) where the article
    gives 維度, 陳萍, 小舟; ICLR 2021's criteria came in any order, in both languages."""

    def shown(path: str, label: str, lang: str) -> list[str]:
        page = client.get(path, query_string={"lang": lang}).get_data(as_text=True)
        return re.findall(r"<span[^>]*>([^<]+)</span>", page.split(f"{label}</dt><dd>")[1].split("</dd>")[0])

    source = "/resource/source/iclr2021-outstanding-papers"
    assert shown(source, "Written by", "en") == ["維度", "陳萍", "小舟"]
    award = "/resource/award/iclr2021-outstanding-paper"
    criteria = ["technical quality", "potential impact", "opening a new direction", "solving an important problem"]
    assert shown(award, "Criteria", "en") == criteria
    assert shown(award, "评选标准", "zh") == ["技术质量", "潜在影响", "开辟新方向", "解决重要问题"]
    members = re.findall(
        r">([^<]+)</a>",
        client.get(award, query_string={"lang": "en"})
        .get_data(as_text=True)
        .split("Committee</dt><dd>")[1]
        .split("</dd>")[0],
    )
    assert members == [
        "Meta Platforms",
        "Google DeepMind",
        "University of Texas at Austin",
        "Stanford University",
        "Microsoft",
    ]


def test_sources_are_shown_by_their_names_and_titles_not_keys(client) -> None:
    """review24 item 10: /stats rows "source: aissential-announcing-...", statement tables citing
    sources as unlinked slugs, tooltips title="source:...", a source counting itself among what it
    states under internal kind names."""
    stats = client.get("/stats").get_data(as_text=True)
    assert "source: Announcing the ICLR 2026 Outstanding Papers</a>" in stats and "source: aissential" not in stats
    paper = client.get("/resource/paper/NzTU59SYbNq").get_data(as_text=True)
    statements = paper.split('<details class="statements"')[1]
    assert re.search(r'<td><a href="/resource/source/iclr2021-outstanding-papers" title="[^"]+">ICLR 2021', statements)
    assert "<td>iclr2021-" not in statements and 'title="source:' not in paper
    kinds = client.get("/resource/source/iclr2021-outstanding-papers").get_data(as_text=True).split('class="bars"')[1]
    kinds = kinds.split("</table>")[0]
    assert ">award conferral<" in kinds and ">conferral<" not in kinds and ">source<" not in kinds
    chinese = client.get("/resource/source/iclr2021-outstanding-papers", query_string={"lang": "zh"}).get_data(
        as_text=True
    )
    assert ">作者署名<" in chinese.split('class="bars"')[1].split("</table>")[0]


def test_saved_query_descriptions_show_code_as_code_and_no_other_markup(client) -> None:
    from iclr_kg.web.html import inline_code

    page = client.get("/queries").get_data(as_text=True)
    assert "`" not in page and "~~" not in page
    assert inline_code("run `a <b>` then *c*") == "run <code>a &lt;b&gt;</code> then *c*"


def test_sub_organizations_are_listed_in_natural_order(client) -> None:
    """review24 item 15: Organization 0's units read "unit 1, unit 0"; "unit 2" comes before "unit 10"."""
    from pyoxigraph import NamedNode

    from iclr_kg.web.kinds.organization import in_natural_order

    units = [NamedNode(f"https://w3id.org/iclr-kg/resource/organization/org-0-{j}") for j in (10, 1, 2, 0)]
    assert [u.value[-2:].lstrip("-") for u in in_natural_order(units, None)] == ["0", "1", "2", "10"]
    index = client.application.extensions["iclr_kg"].index()
    google = client.get("/resource/organization/google").get_data(as_text=True)
    shown = re.findall(r"<a [^>]*>([^<]+)</a>", google.split("<dt>Sub-organizations</dt><dd>")[1].split("</dd>")[0])
    assert len(shown) >= 2 and shown == sorted(shown, key=str.casefold) and index is not None


def test_cosmetics_of_lists_downloads_and_the_view_picker(client) -> None:
    """review24 item 17: "Page 1 of 1" on a one-page list, ICLR 2013's blank paper count, the view
    picker's options carrying their reasons (a very wide dropdown), /downloads' note as a bullet,
    filters that were case-sensitive."""
    editions = client.get("/resource/edition/").get_data(as_text=True)
    assert "Page 1 of 1" not in editions
    assert re.search(r'ICLR 2013</a></td><td></td><td class="num">2013</td><td class="num">0<', editions)
    query = client.get("/queries/decisions-by-year").get_data(as_text=True)
    picker = query.split('<select id="view-kind"')[1].split("</select>")[0]
    assert "(needs" not in picker and 'title="needs two columns of entities (from, to)"' in picker
    downloads = client.get("/downloads").get_data(as_text=True)
    assert '<li class="note">' not in downloads and '<p class="note">streamed from the store' in downloads
    counts = {
        case: client.get("/resource/paper/", query_string={"decision": case}).status_code
        for case in ("accepted", "Accepted", "ACCEPTED")
    }
    assert set(counts.values()) == {200}, counts


def test_a_source_states_entities_not_the_places_of_its_values(client, real_store) -> None:
    """Issue #67: a source's "What it states" listed "ordered statement 3" (有序陈述), the places
    of its writers, reified: bookkeeping no reader asked for. Kinds whose root class the ontology
    makes an rdfs:subClassOf rdf:Statement are left out; the qualified relations (authorships,
    conferrals, roles: facts the source states) stay."""
    source = "/resource/source/iclr2021-outstanding-papers"
    places = f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s a iclr:OrderedStatement ; rdf:subject <{vocab.RESOURCE_BASE}source/iclr2021-outstanding-papers> }}"
    assert int(next(iter(real_store.query(places, prefixes=vocab.QUERY_PREFIXES)))[0].value) == 3  # there to leave out
    for lang, left_out, kept in (("en", "ordered statement", "award conferral"), ("zh", "有序陈述", "作者署名")):
        page = client.get(source, query_string={"lang": lang}).get_data(as_text=True)
        bars = page.split('class="bars"')[1].split("</table>")[0]
        assert f">{kept}<" in bars and left_out not in bars, lang


def test_the_front_pages_note_on_other_events_reads_as_each_language_writes(client) -> None:
    """Issue #67: the Chinese note read "另收录（…）： NeurIPS 2020", a space after the full-width
    colon (and ", " between the names): the sentence is one string per language, names inside."""
    for lang, said in (("en", "name them: <a"), ("zh", "的背景）：<a")):
        page = client.get("/", query_string={"lang": lang}).get_data(as_text=True)
        note = page.split('<section class="panel"><h2>')[1].split("</section>")[0].split('<p class="note">')[1]
        assert said in note and "： " not in note and "NeurIPS 2020</a>" in note, note
        assert note.split("</p>")[0].endswith("</a>." if lang == "en" else "</a>。"), note


def test_the_front_pages_award_figure_links_a_list_of_exactly_those_awards(client, real_store) -> None:
    """Issue #67: "awards given at ICLR 20" linked the awards' page, whose list holds 21 (the
    Turing Award too). It links the award list narrowed to ICLR (`?conference=iclr`: the awards
    given at its editions, by iclr:awardedAt/iclr:editionOf), which lists those and no other."""
    at_iclr = "SELECT ?e WHERE { ?e iclr:awardedAt/iclr:editionOf <https://w3id.org/iclr-kg/resource/conference/iclr> }"
    awards = {row["e"].value.rsplit("/", 1)[-1] for row in real_store.query(at_iclr, prefixes=vocab.QUERY_PREFIXES)}
    for lang, words in (("en", "Awards given at ICLR"), ("zh", "ICLR 颁发的奖项")):
        front = client.get("/", query_string={"lang": lang}).get_data(as_text=True)
        href, n = re.search(rf'<a href="([^"]+)">{words}</a></td><td class="num">(\d+)<', front).groups()
        listing = client.get(html.unescape(href)).get_data(as_text=True)
        listed = set(re.findall(r'<td><a href="/resource/award/([^"/?]+)"', listing))
        assert listed == awards and int(n) == len(awards) and "turing-award" not in listing, (lang, href)
        assert re.search(rf"<h1>[^<]*· {n}</h1>", listing), lang  # the heading's figure, the front page's
    assert client.get("/resource/person/", query_string={"conference": "iclr"}).status_code == 400
    assert client.get("/resource/award/", query_string={"conference": "nope"}).status_code == 404


def test_the_inside_panel_and_search_headings_name_kinds_in_the_plural(client) -> None:
    """review25 17: the Inside table and search's headings said "paper", "person" (lower-case
    singulars); they say what a list's heading says ("Papers", "People"; zh 论文, 人物)."""
    for lang, papers, people in (("en", "Papers", "People"), ("zh", "论文", "人物")):
        home = client.get("/", query_string={"lang": lang}).get_data(as_text=True)
        inside = home.split('<section class="panel"><h2>')[1].split("</section>")[0]
        shown = re.findall(r'<a href="[^"]+">([^<]+)</a></td><td class="num">', inside)
        assert shown[:3] == [papers, people, "Organizations" if lang == "en" else "机构"], shown
        found = client.get("/search", query_string={"q": "song", "lang": lang}).get_data(as_text=True)
        assert f"<h2>{people}</h2>" in found, re.findall(r"<h2>[^<]*</h2>", found)


def test_stats_names_each_source_by_a_distinct_title_by_kind_then_title(client) -> None:
    """review25 / review24 10: /stats titled three sources by a file path ("source: _data/papers.yml"),
    two rows both "Awesome AI Best Papers", in no order. Each source is named by its kind and a
    title a reader understands, distinct, ordered by kind, then title."""
    from html import unescape

    for lang in ("en", "zh"):
        stats = client.get("/stats", query_string={"lang": lang}, headers={"Accept": "text/html"}).get_data(
            as_text=True
        )
        table = stats.split("<table><tbody>")[1].split("</table>")[0]
        rows = [
            unescape(name)
            for href, name in re.findall(r'<td title="[^"]+">(?:<a href="([^"]+)">)?([^<]*)', table)
            if href.startswith("/resource/source/")
        ]
        assert len(rows) == len(set(rows)) > 50, rows
        kinds = [row.split(":")[0] for row in rows]
        assert kinds == sorted(kinds, key=kinds.index) and len(set(kinds)) == 2, kinds  # each kind together
        for kind in set(kinds):
            titles = [row.split(": ", 1)[1].casefold() for row in rows if row.split(":")[0] == kind]
            assert titles == sorted(titles), titles
        assert not [row for row in rows if re.match(r"[^:]+: [\w.-]+\.(yml|json|csv)$", row)], rows
        assert any(row.endswith("clemense/ai-bestpapers: _data/papers.yml") for row in rows)


def test_a_readers_page_shows_no_prefixed_key_on_hover(client) -> None:
    """review25 / review24 10: entity pages showed title="edition:iclr2021", "conferral:…" on
    hover; a reader's page shows a source's title or nothing, while query results keep the CURIE."""
    for path in (
        "/resource/paper/NzTU59SYbNq",
        "/resource/award/iclr2021-outstanding-paper",
        "/resource/edition/iclr2021",
    ):
        html = client.get(path, headers={"Accept": "text/html"}).get_data(as_text=True)
        keys = re.findall(
            r'title="((?:paper|person|organization|edition|award|conferral|authorship|source|review):[^"]*)"', html
        )
        assert keys == [], (path, keys[:5])
