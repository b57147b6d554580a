"""The registry of kinds (kinds.py, read from the ontology's annotated root classes), held to the
graph and the pages: every entity's IRI segment is the kind of its root class, and every listed
kind has a list, a profile, pages with its schema.org type, a sitemap and search. The tests
iterate the registry, as rdflib's tests iterate its plugins: a new kind is tested the day it is
added (issue #55 item 1)."""

from __future__ import annotations

import json
import re

import pytest
from flask.testing import FlaskClient
from pyoxigraph import NamedNode

from iclr_kg import vocab
from iclr_kg.kinds import KINDS, LINK, LISTED, REIFIED, ROOTS, WIKIDATA_LINKED
from iclr_kg.terms import packaged
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds import PAGES, PLAIN, plural

PAGE = {"Accept": "text/html"}


def test_every_entity_is_of_the_kind_its_root_class_names(real_store) -> None:
    """The IRI of each typed entity of ours is /resource/<kind>/..., <kind> the one the registry
    gives its classes' root: the registry and the data agree, whatever is added to either."""
    ontology = packaged()
    checked = 0
    rows = real_store.query(
        f"SELECT DISTINCT ?e ?class WHERE {{ ?e a ?class FILTER (STRSTARTS(STR(?e), '{vocab.RESOURCE_BASE}') "
        f"&& STRSTARTS(STR(?class), '{vocab.ONTOLOGY_NS}')) }}"
    )
    for row in rows:
        segment = row["e"].value[len(vocab.RESOURCE_BASE) :].split("/", 1)[0]
        local = row["class"].value[len(vocab.ONTOLOGY_NS) :]
        roots = {ROOTS[root] for root in ROOTS if local in ontology.below(root)}
        if roots:  # an abstract class above the roots (iclr:Agent) names no kind
            assert roots == {segment}, (row["e"].value, local, roots)
            checked += 1
    assert checked > 400
    assert set(vocab.ENTITY_KINDS) == {*KINDS, LINK} and all(k in vocab.EXPORT_PREFIXES for k in KINDS)


@pytest.mark.parametrize("kind", LISTED)
def test_a_listed_kind_has_a_list_a_profile_typed_pages_a_sitemap_and_search(client: FlaskClient, kind: str) -> None:
    assert PAGES[kind].profile is not None, f"no profile for {kind}"
    listing = client.get(f"/resource/{kind}/", headers=PAGE)
    assert listing.status_code == 200
    html = listing.get_data(as_text=True)
    assert (
        f'<strong aria-current="page">{plural(kind)}</strong>' in html
    )  # among the kinds, marked, as its lists are headed
    keys = re.findall(rf'href="/resource/{kind}/([^"/?]+)"', html)
    assert keys, f"no {kind} listed"
    page = client.get(f"/resource/{kind}/{keys[0]}", headers=PAGE).get_data(as_text=True)
    described = json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>', page, re.S).group(1))
    assert described["@type"] == KINDS[kind].schema_type
    assert f"/sitemap-{kind}-1.xml" in client.get("/sitemap.xml").get_data(as_text=True)
    name = re.search(rf'href="/resource/{kind}/{re.escape(keys[0])}"[^>]*>([^<]+)</a>', html).group(1)
    found = client.get("/search", query_string={"q": name, "kind": kind, "format": "json"}).get_json()
    assert any(hit["iri"] == vocab.entity(kind, keys[0]).value for hit in found["results"]), (kind, name)
    assert isinstance(vocab.entity(kind, keys[0]), NamedNode)


def test_every_kind_of_the_ontology_has_its_page_registered() -> None:
    """web/kinds/__init__.py registers each kind's page by name (no module found by its file
    name): every kind the ontology annotates is there, a listed kind with a module of its own
    (web/kinds/<kind>.py, its profile in it), and nothing else is; every module of web/kinds/
    but the shared ones is a registered kind's."""
    from pathlib import Path

    import iclr_kg.web.kinds as pages

    assert set(PAGES) == set(vocab.ENTITY_KINDS), "register the kind in web/kinds/__init__.py: PAGES"
    for kind in KINDS:
        page = PAGES[kind]
        if KINDS[kind].listed:
            assert page is not PLAIN and page.profile is not None, f"no page of its own for {kind}"
            assert page.profile.__module__ == f"iclr_kg.web.kinds.{kind}", kind
            assert page.plural and translate(page.plural, "zh") != page.plural, f"{kind}: a plural, in i18n.py"
    folder = Path(pages.__file__).parent
    modules = {path.stem for path in folder.glob("*.py")} - {"__init__", "panels", "rendering", "kindpage"}
    assert modules == {kind for kind, page in PAGES.items() if page is not PLAIN}


def test_wikidata_classes_per_kind_are_the_ontologys_mappings(real_store) -> None:
    """What link-wikidata takes as a fitting instance-of for each kind is what the ontology maps
    the kind's classes to (`skos:closeMatch`, `skos:narrowMatch`), asked of the built graph's
    ontology with SPARQL: the registry and the graph agree, and the kinds link-wikidata
    proposes (organizations, people, papers) have some."""
    from iclr_kg.external.wikidata import EXPECTED_TYPES

    for name, kind in KINDS.items():
        rows = real_store.query(
            f"SELECT DISTINCT ?wd WHERE {{ GRAPH <{vocab.GRAPH_ONTOLOGY}> {{ ?c rdfs:subClassOf* iclr:{kind.root} ; "
            "skos:closeMatch|skos:narrowMatch ?wd FILTER STRSTARTS(STR(?wd), 'http://www.wikidata.org/entity/') } }",
            prefixes=vocab.QUERY_PREFIXES,
        )
        mapped = {row["wd"].value.rsplit("/", 1)[1] for row in rows}
        assert kind.wikidata_classes == mapped, name
        assert EXPECTED_TYPES.get(name, frozenset()) == mapped, name
    assert all(EXPECTED_TYPES[name] for name in WIKIDATA_LINKED)


def test_the_reified_kinds_are_those_the_ontology_makes_statements(real_store) -> None:
    """The kinds left out of what a source states (kinds.REIFIED) are the Wikidata links and the
    kinds whose root class is an rdfs:subClassOf rdf:Statement in the built graph's ontology."""
    rows = real_store.query(
        "SELECT ?root WHERE { ?root rdfs:subClassOf rdf:Statement ; iclr:kind ?kind }", prefixes=vocab.QUERY_PREFIXES
    )
    statements = {ROOTS[row["root"].value[len(vocab.ONTOLOGY_NS) :]] for row in rows}
    assert "ordered" in statements and {LINK, *statements} == REIFIED
    assert not {"authorship", "conferral", "role", "review"} & REIFIED  # facts a source states
