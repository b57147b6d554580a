"""Identifiers elsewhere (issue #38): read from the OpenReview profiles we already fetch, checked,
modelled as resolvable IRIs and values under Wikidata's properties, and findable by any of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from iclr_kg.build.pipeline import build
from iclr_kg.external.openreview_import import run_import
from iclr_kg.identifiers import SCHEMES, BadIdentifier, orcid_checksum_ok, recognize
from iclr_kg.store import open_read_only, run_query
from iclr_kg.web import create_app
from testbed.openreview_standin import Paper, StandIn, profile, venue_id, venue_notes

# ORCID's own example iD (its documentation), and the same with a wrong check character
ORCID, BAD_ORCID = "0000-0002-1825-0097", "0000-0002-1825-0098"


@pytest.mark.parametrize(
    "scheme, written, value",
    [
        ("orcid", f"https://orcid.org/{ORCID}", ORCID),
        ("orcid", "0000-0002-1694-233x", "0000-0002-1694-233X"),
        ("dblp", "https://dblp.org/pid/34/8532-2.html", "34/8532-2"),
        ("dblp", "https://dblp.uni-trier.de/pid/h/GeoffreyEHinton", "h/GeoffreyEHinton"),
        ("s2", "https://www.semanticscholar.org/author/Ian-Gemp/3024563", "3024563"),
        ("gscholar", "https://scholar.google.com/citations?user=5JhwNDkAAAAJ&hl=en", "5JhwNDkAAAAJ"),
        ("wikidata", "https://www.wikidata.org/wiki/Q95", "Q95"),
        ("openreview", "https://openreview.net/profile?id=~Ian_Gemp1", "~Ian_Gemp1"),
        ("openreview-paper", "https://openreview.net/forum?id=PxTIG12RRHS", "PxTIG12RRHS"),
        ("ror", "https://ror.org/00f54p054", "00f54p054"),
        ("ror", "00T33HH48", "00t33hh48"),
        ("grid", "https://www.grid.ac/institutes/grid.168010.e", "grid.168010.e"),
        ("arxiv", "https://arxiv.org/abs/2011.13456v2", "2011.13456"),
        ("arxiv", "arXiv:math.GT/0309136", "math.GT/0309136"),
        ("doi", "https://doi.org/10.48550/arXiv.2011.13456", "10.48550/ARXIV.2011.13456"),
        ("dblp-paper", "https://dblp.org/rec/conf/iclr/0011SKKEP21.html", "conf/iclr/0011SKKEP21"),
        ("s2-paper", "https://www.semanticscholar.org/paper/Title/" + "0a" * 20, "0a" * 20),
    ],
)
def test_each_scheme_reads_the_forms_people_paste(scheme: str, written: str, value: str) -> None:
    assert SCHEMES[scheme].parse(written) == value


@pytest.mark.parametrize(
    "scheme, written, why",
    [
        ("orcid", BAD_ORCID, "fails ORCID's checksum"),
        ("orcid", "0000-0002-1825", "four groups of four digits"),
        ("dblp", "https://dblp.org/pers/hd/h/Hinton:Geoffrey_E=", "persistent URL"),
        ("s2", "https://www.semanticscholar.org/paper/abc", "Semantic Scholar author id"),
        ("gscholar", "https://evil.example/citations?user=5JhwNDkAAAAJ", "Google Scholar author id"),
        ("ror", "https://ror.org/00f54p055", "fail ROR's checksum"),
        ("ror", "https://ror.org/stanford", "nine characters"),
        ("doi", "https://doi.org/abc", "is not a DOI"),
        ("arxiv", "https://arxiv.org/abs/hello", "is not an arXiv id"),
    ],
)
def test_a_malformed_identifier_is_refused_in_words(scheme: str, written: str, why: str) -> None:
    with pytest.raises(BadIdentifier, match=why):
        SCHEMES[scheme].parse(written)


def test_every_schemes_iris_fit_the_shapes_links_pattern() -> None:
    """shapes.ttl's pattern for links elsewhere (skos:exactMatch) admits each scheme's IRI (it is written out there
    as SHACL needs it; this keeps the two in step), and refuses a look-alike."""
    from iclr_kg.config import resource_dir

    shapes = (resource_dir("ontology") / "shapes.ttl").read_text(encoding="utf-8")
    [written] = re.findall(r'sh:pattern "(\^\(http://www\\\\.wikidata[^"]+)"', shapes)
    pattern = re.compile(written.replace("\\\\", "\\"))
    samples = {
        "orcid": ORCID, "dblp": "34/8532-2", "s2": "3024563", "gscholar": "5JhwNDkAAAAJ", "openreview": "~Ian_Gemp1",
        "ror": "00f54p054", "grid": "grid.168010.e", "arxiv": "2011.13456", "doi": "10.48550/ARXIV.2011.13456",
        "dblp-paper": "conf/iclr/0011SKKEP21", "s2-paper": "0a" * 20, "openreview-paper": "PxTIG12RRHS", "wikidata": "Q95",
    }  # fmt: skip
    exact = {name for name, scheme in SCHEMES.items() if scheme.linked_by.endswith("#exactMatch")}
    assert set(samples) == exact and {"homepage", "domain"}.isdisjoint(exact)  # a page is not the entity
    for name, value in samples.items():
        assert pattern.search(SCHEMES[name].iri(SCHEMES[name].parse(value))), name
    assert not pattern.search("https://orcid.org.evil.example/" + ORCID)


def test_the_orcid_checksum_is_iso_7064() -> None:
    assert orcid_checksum_ok(ORCID.replace("-", "")) and not orcid_checksum_ok(BAD_ORCID.replace("-", ""))
    assert orcid_checksum_ok("000000021694233X")  # X stands for 10
    assert recognize("song yang") is None and recognize(f"https://orcid.org/{ORCID}") == ("orcid", ORCID)


@pytest.mark.parametrize(
    "pasted, found",
    [
        ("https://ror.org/00f54p054", ("ror", "00f54p054")),
        ("arXiv:2011.13456v2", ("arxiv", "2011.13456")),
        ("2011.13456", ("arxiv", "2011.13456")),
        ("doi:10.48550/arXiv.2011.13456", ("doi", "10.48550/ARXIV.2011.13456")),
        ("https://dblp.org/rec/conf/iclr/0011SKKEP21", ("dblp-paper", "conf/iclr/0011SKKEP21")),
        ("https://openreview.net/forum?id=PxTIG12RRHS", ("openreview-paper", "PxTIG12RRHS")),
        ("https://ror.org/00f54p055", None),  # its check digits fail: searched as words instead
    ],
)
def test_the_search_box_recognizes_a_pasted_identifier(pasted: str, found: tuple[str, str] | None) -> None:
    assert recognize(pasted) == found


PROFILES = {
    p["id"]: p
    for p in [
        profile(
            "~Jane_Roe1",
            "Jane Roe",
            "Example Institute of Learning",
            "example.edu",
            links={
                "orcid": f"https://orcid.org/{ORCID}",
                "dblp": "https://dblp.org/pid/12/3456.html",
                "semanticScholar": "https://www.semanticscholar.org/author/Jane-Roe/123456",
                "gscholar": "https://scholar.google.com/citations?user=AbCdEfGhIjKl&hl=en",
                "homepage": "https://jane.example.edu",
            },
        ),
        profile("~Alex_Example1", "Alex Example", "Google", "google.com", links={"orcid": BAD_ORCID}),
        profile("~Kim_Twin1", "Kim Twin", None, links={"dblp": "https://dblp.org/pid/99/1"}),
        profile("~Lee_Twin1", "Lee Twin", None, links={"dblp": "https://dblp.org/pid/99/1"}),
        profile("~No_Links1", "No Links", None),
    ]
}
PAPERS = [
    Paper("IdentPap01", "A Paper of Linked Authors", [("Jane Roe", "~Jane_Roe1"), ("Alex Example", "~Alex_Example1")], "poster"),
    Paper("IdentPap02", "A Paper of Twins", [("Kim Twin", "~Kim_Twin1"), ("Lee Twin", "~Lee_Twin1"), ("No Links", "~No_Links1")], "reject"),
]  # fmt: skip


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory):
    from iclr_kg.config import Settings

    tmp = tmp_path_factory.mktemp("ids")
    server = StandIn(venue_notes("v1", venue_id(2021), PAPERS), PROFILES).start()
    try:
        settings = Settings(
            store=tmp / "store",
            openreview_api=server.url,
            openreview_api_v2=server.url,
            openreview_pause=0,
            openreview_retries=0,
        )
        result = run_import(settings, venue_id(2021))
        build(settings)
    finally:
        server.stop()
    return settings, result


def ask(store, query: str) -> list[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    return [tuple(t.value for t in row) for row in run_query(store, query)]


def test_profiles_identifiers_are_imported_checked_and_attributed(imported) -> None:
    settings, result = imported
    # Jane's four ids and homepage; the web domains of Jane's and Alex's institutions
    assert result.stats["identifiers from profiles"] == 7 and result.stats["identifiers refused"] == 2
    assert any("~Alex_Example1: ORCID left out" in w and "checksum" in w for w in result.warnings)
    assert any("dblp 99/1 is stated by 2 profiles (~Kim_Twin1, ~Lee_Twin1)" in w for w in result.warnings)
    store = open_read_only(settings.store)
    jane = "person:or-jane-roe1"
    stated = set(ask(store, f"SELECT ?p ?o ?g WHERE {{ GRAPH ?g {{ {jane} ?p ?o }} }}"))
    graph = "https://w3id.org/iclr-kg/graph/source/openreview-iclr-2021"  # the profile's word, in the import's graph
    ns = "https://w3id.org/iclr-kg/ontology#"
    wdt = "http://www.wikidata.org/prop/direct/"
    skos = "http://www.w3.org/2004/02/skos/core#exactMatch"
    for prop, value, iri in (  # each value under Wikidata's property, stated in the source's graph
        ("P496", ORCID, f"https://orcid.org/{ORCID}"),
        ("P2456", "12/3456", "https://dblp.org/pid/12/3456"),
        ("P4012", "123456", "https://www.semanticscholar.org/author/123456"),
        ("P1960", "AbCdEfGhIjKl", "https://scholar.google.com/citations?user=AbCdEfGhIjKl"),
    ):
        assert (wdt + prop, value, graph) in stated and (skos, iri, graph) in stated
    # stated once: no copy in the inferred graph
    inferred = "https://w3id.org/iclr-kg/graph/inferred"
    assert ask(store, f"SELECT ?v WHERE {{ GRAPH <{inferred}> {{ {jane} wdt:P496 ?v }} }}") == []
    assert ask(store, f"SELECT ?v WHERE {{ {jane} wdt:P496 ?v }}") == [(ORCID,)]
    assert ask(store, 'SELECT ?p WHERE { ?p wdt:P2456 "99/1" }') == []  # claimed twice: no link
    assert ask(store, "SELECT ?p WHERE { person:or-alex-example1 wdt:P496 ?v }") == []
    homepage = "http://xmlns.com/foaf/0.1/homepage"
    assert (ns + "homepage", "https://jane.example.edu", graph) in stated and (
        homepage,
        "https://jane.example.edu",
        graph,
    ) in stated
    domains = ask(store, "SELECT ?org ?d WHERE { GRAPH ?g { ?org iclr:webDomain ?d } } ORDER BY ?d")
    assert [d for _, d in domains] == ["example.edu", "google.com"]  # from each profile's history entry
    everything = " ".join(" ".join(row) for row in ask(store, "SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }"))
    assert "@example.org" not in everything  # no e-mail address


def test_an_entity_is_found_by_any_of_its_identifiers(imported) -> None:
    settings, _ = imported
    client = create_app(settings).test_client()
    for path in (
        f"/id/orcid/{ORCID}",
        "/id/dblp/12/3456",
        "/id/s2/123456",
        "/id/gscholar/AbCdEfGhIjKl",
        "/id/openreview/~Jane_Roe1",
        "/id/homepage/https://jane.example.edu",
    ):
        answer = client.get(path)
        assert answer.status_code == 303 and answer.headers["Location"].endswith("/resource/person/or-jane-roe1"), path
    paper = client.get("/id/openreview/IdentPap01")
    assert paper.status_code == 303 and paper.headers["Location"].endswith("/resource/paper/IdentPap01")
    unknown = client.get("/id/orcid/0000-0001-5109-3700")
    assert unknown.status_code == 404 and "No entity here is known by the ORCID identifier" in unknown.get_data(
        as_text=True
    )
    bad = client.get(f"/id/orcid/{BAD_ORCID}")
    assert bad.status_code == 400 and "checksum" in bad.get_data(as_text=True)
    assert client.get("/id/isbn/123").status_code == 404
    pasted = client.get("/search", query_string={"q": f"https://orcid.org/{ORCID}"})
    assert pasted.status_code == 303 and pasted.headers["Location"].endswith(f"/id/orcid/{ORCID}")


def test_a_person_page_lists_the_identifiers_with_links(imported) -> None:
    settings, _ = imported
    page = create_app(settings).test_client().get("/resource/person/or-jane-roe1").get_data(as_text=True)
    for label, href in (
        ("ORCID", f"https://orcid.org/{ORCID}"),
        ("dblp", "https://dblp.org/pid/12/3456"),
        ("Semantic Scholar", "https://www.semanticscholar.org/author/123456"),
        ("Google Scholar", "https://scholar.google.com/citations?user=AbCdEfGhIjKl"),
    ):
        assert f">{label}<" in page and f'href="{href}"' in page.replace("&amp;", "&"), label


def test_coverage_is_counted_per_kind_and_scheme(imported) -> None:
    from testbed.helpers import run_cli

    settings, _ = imported
    page = create_app(settings).test_client().get("/stats").get_data(as_text=True)
    assert page.count("Identifiers elsewhere</h2>") == 1 and re.search(
        r"<title>[^<]*</title>", page
    )  # not in the title
    rows = re.findall(r"<tr><td>(\w+)</td><td>([\w ]+)</td><td class=\"num\">(\d+)</td></tr>", page)
    counts = {(kind, scheme): int(n) for kind, scheme, n in rows}  # the curated graph's included
    assert counts[("person", "ORCID")] == 1 and counts[("person", "dblp")] == 1  # the shared pid: no one
    assert counts[("paper", "OpenReview")] >= 2 and counts[("organization", "Wikidata")] > 10
    assert counts[("person", "Homepage")] == 1 and counts[("organization", "Web domain")] == 2
    done = run_cli("stats", "--store", str(settings.store))
    assert done.returncode == 0 and re.search(r"\n\s+1\s+person\s+ORCID\n", done.stdout), done.stdout


def test_the_mappings_export_as_valid_sssom_with_source_and_date(imported, tmp_path: Path) -> None:
    """`iclr-kg export --mappings sssom`: the Wikidata links and the profiles' identifiers, each
    with who states it and when, read back and validated by the sssom package (PyPI)."""
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate

    from testbed.helpers import run_cli

    settings, _ = imported
    out = tmp_path / "mappings.sssom.tsv"
    done = run_cli("export", "--store", str(settings.store), "--mappings", "sssom", "--output", str(out))
    assert done.returncode == 0, done.stderr
    mappings = parse_sssom_table(str(out))
    report = validate(mappings, [SchemaValidationType.JsonSchema], fail_on_error=False)
    assert all(not r.results for r in report.values()), report
    rows = mappings.df.to_dict("records")
    orcid = [r for r in rows if r["object_id"] == f"orcid:{ORCID}"]
    assert len(orcid) == 1 and orcid[0]["subject_id"] == "iclr:person/or-jane-roe1"
    assert orcid[0]["mapping_provider"] == "https://openreview.net/profile?id=~Jane_Roe1"
    assert str(orcid[0]["mapping_date"])[:2] == "20" and "openreview-iclr-2021" in orcid[0]["comment"]
    assert any(r["object_id"] == "wikidata:Q95" for r in rows)  # the curated links are still there
    assert not any("99/1" in str(r["object_id"]) for r in rows)  # claimed by two profiles: no mapping


def test_the_mappings_keep_one_row_per_line_and_run_no_formula(imported) -> None:
    """An imported name with a line break and a tab, starting like a spreadsheet formula: the
    SSSOM file keeps one row per mapping, and the name as text (round four's item 6)."""
    import io

    from iclr_kg.build.sources import load_dataset
    from iclr_kg.external.wikidata import SSSOM_COLUMNS, write_sssom

    settings, _ = imported
    dataset = load_dataset(settings.data_dir, settings.imports)
    hostile = '=HYPERLINK("https://evil.example/","Jane")\nRoe\tJr'
    dataset.people = [p.model_copy(update={"name": hostile}) if p.key == "or-jane-roe1" else p for p in dataset.people]
    out = io.StringIO()
    write_sssom(dataset, out)
    rows = [line.split("\t") for line in out.getvalue().splitlines() if not line.startswith("#")]
    assert all(len(row) == len(SSSOM_COLUMNS) for row in rows), [r for r in rows if len(r) != len(SSSOM_COLUMNS)]
    janes = [row for row in rows if row[0] == "iclr:person/or-jane-roe1"]
    assert janes and all(row[1] == "'" + '=HYPERLINK("https://evil.example/","Jane") Roe Jr' for row in janes)


def test_our_people_join_with_dblp_by_their_pid(imported, wikidata_standin: str) -> None:
    """dblp-publications: our person's dblp pid, joined live with a dblp-shaped SPARQL service
    (the local stand-in answers in the SPARQL results format dblp's QLever service uses)."""
    from iclr_kg.config import resource_dir
    from iclr_kg.sparql.saved import load_saved

    settings, _ = imported
    saved = load_saved(resource_dir("queries"))["dblp-publications"]
    store = open_read_only(settings.store)
    rows = [
        tuple(t.value if t is not None else None for t in row)
        for row in run_query(
            store,
            saved.text,
            substitutions=saved.substitutions({"dblp": wikidata_standin}),
            services=(wikidata_standin,),
        )
    ]
    assert [(r[2], r[4], r[5][:4]) for r in rows] == [
        ("Jane Roe", "A Paper of Linked Authors.", "2021"),
        ("Jane Roe", "Another Paper.", "2020"),
    ]
