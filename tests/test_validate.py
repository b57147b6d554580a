"""Stage 4: SHACL. Every shape catches a deliberately broken fixture; the real data conforms."""

from __future__ import annotations

import pytest
import rdflib

from iclr_kg.build.pipeline import compile_graph
from iclr_kg.build.validate import validate

PREFIXES = """
@prefix iclr: <https://w3id.org/iclr-kg/ontology#> .
@prefix paper: <https://w3id.org/iclr-kg/resource/paper/> .
@prefix person: <https://w3id.org/iclr-kg/resource/person/> .
@prefix org: <https://w3id.org/iclr-kg/resource/organization/> .
@prefix edition: <https://w3id.org/iclr-kg/resource/edition/> .
@prefix authorship: <https://w3id.org/iclr-kg/resource/authorship/> .
@prefix review: <https://w3id.org/iclr-kg/resource/review/> .
@prefix conferral: <https://w3id.org/iclr-kg/resource/conferral/> .
@prefix award: <https://w3id.org/iclr-kg/resource/award/> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""
P = "https://w3id.org/iclr-kg/resource/paper/PxTIG12RRHS"
I = "https://w3id.org/iclr-kg/ontology#"

# (case, triples to add, (subject, predicate) whose triples to remove, expected message fragment)
BROKEN = [
    ("paper without title", "", (P, I + "title"), "needs a title"),
    ("bad OpenReview id", "paper:PxTIG12RRHS iclr:openReviewId 'no spaces allowed' .", None, "OpenReview id"),
    ("paper without edition", "", (P, I + "submittedTo"), "conference edition"),
    ("two decisions", "paper:PxTIG12RRHS iclr:decision iclr:Accepted, iclr:Rejected .", None, "at most one decision"),
    ("credited non-organization", "paper:PxTIG12RRHS iclr:creditedOrganization person:ben-poole .", None, "registry"),
    ("credited literal", "paper:PxTIG12RRHS iclr:creditedOrganization 'Google' .", None, "registry"),
    ("average rating out of range", "paper:PxTIG12RRHS iclr:averageRating 12.5 .", None, "average rating"),
    (
        "two authors at one position",
        "authorship:x a iclr:Authorship ; iclr:authorshipOf paper:PxTIG12RRHS ; iclr:authorPosition 1 ; iclr:authorshipBy person:ben-poole .",
        None,
        "same position",
    ),
    (
        "authorship without position",
        "",
        (P.replace("paper/", "authorship/") + "-2", I + "authorPosition"),
        "exactly one position",
    ),
    (
        "authorship naming nobody",
        "authorship:y a iclr:Authorship ; iclr:authorshipOf paper:PxTIG12RRHS ; iclr:authorPosition 3 .",
        None,
        "exactly one person",
    ),
    (
        "award paper without authors",
        "paper:other a iclr:Paper ; iclr:title 'Other' ; iclr:submittedTo edition:iclr2021 . conferral:z a iclr:AwardConferral ; iclr:conferredOn paper:other ; iclr:conferredAward award:iclr2021-outstanding-paper .",
        None,
        "at least one author",
    ),
    ("person with two names", "person:ben-poole iclr:name 'B. Poole' .", None, "exactly one canonical name"),
    ("edition year not an integer", 'edition:iclr2021 iclr:year "2021"^^xsd:gYear .', None, "xsd:integer"),
    (
        "acceptance rate as a percentage",
        "edition:iclr2021 iclr:acceptanceRate 29.0 .",
        None,
        "fraction between 0 and 1",
    ),
    ("rating out of range", "review:PxTIG12RRHS-1 iclr:rating 11 .", None, "1 to 10"),
    ("organization cycle", "org:google iclr:subOrganizationOf org:google-brain .", None, "part of itself"),
    (
        "Wikidata link not an entity IRI",
        "org:stanford skos:exactMatch <https://www.wikidata.org/wiki/Q41506> .",
        None,
        "A link elsewhere",
    ),
    (
        "a link to no known scheme",
        "org:stanford skos:exactMatch <https://example.org/stanford> .",
        None,
        "A link elsewhere",
    ),
    ("two links on one entity", "org:google skos:exactMatch wd:Q20800404 .", None, "Wikidata link"),
    ("one QID on two entities", "org:stanford skos:exactMatch wd:Q95 .", None, "linked from two entities"),
]


def test_the_tiny_fixture_conforms(tiny_compiled) -> None:
    data, ontology, shapes = tiny_compiled
    assert validate(data, shapes, ontology).conforms


def broken_copy(data: rdflib.Graph, case: str, add: str, remove: tuple[str, str] | None) -> rdflib.Graph:
    """A copy of the valid fixture with the case's triples added or removed."""
    broken = rdflib.Graph()
    for triple in data:
        broken.add(triple)
    if add:
        broken.parse(data=PREFIXES + add, format="turtle")
    if remove:
        subject, predicate = remove
        removed = list(broken.triples((rdflib.URIRef(subject), rdflib.URIRef(predicate), None)))
        assert removed, f"fixture for {case!r} removes nothing"
        for triple in removed:
            broken.remove(triple)
    return broken


@pytest.mark.parametrize("case, add, remove, expected", BROKEN, ids=[b[0] for b in BROKEN])
def test_each_shape_catches_its_broken_fixture(tiny_compiled, case, add, remove, expected) -> None:
    data, ontology, shapes = tiny_compiled
    broken = broken_copy(data, case, add, remove)
    result = validate(broken, shapes, ontology)
    assert not result.conforms
    assert any(expected in v.message for v in result.violations), result.report
    assert len(data) == len(set(data)), "validate must not mutate its input"


def test_report_names_focus_path_and_message(tiny_compiled) -> None:
    data, ontology, shapes = tiny_compiled
    broken = rdflib.Graph()
    for triple in data:
        broken.add(triple)
    broken.parse(data=PREFIXES + "edition:iclr2021 iclr:acceptanceRate 29.0 .", format="turtle")
    report = validate(broken, shapes, ontology).report
    assert "Violation" in report and "iclr2021" in report and "acceptanceRate" in report


def test_real_data_conforms(real_settings) -> None:
    result = compile_graph(real_settings).validation
    assert result.conforms, result.report


def test_stored_literals_keep_their_datatypes(real_store) -> None:
    """Oxigraph canonicalizes some derived XSD types; ours must survive storage unchanged."""
    from .conftest import select

    rows = select(
        real_store,
        """SELECT DISTINCT ?d WHERE { GRAPH ?g { ?s ?p ?o } FILTER (isLiteral(?o))
        FILTER (?g != <https://w3id.org/iclr-kg/graph/ontology>) BIND (DATATYPE(?o) AS ?d) }""",
    )
    assert {r["d"].rsplit("#", 1)[1] for r in rows} <= {
        "string",
        "langString",
        "integer",
        "decimal",
        "boolean",
        "date",
        "gYear",
        "gYearMonth",
    }


@pytest.mark.parametrize("case, add, remove, expected", BROKEN, ids=[b[0] for b in BROKEN])
def test_compiled_validator_agrees_with_pyshacl(tiny_compiled, case, add, remove, expected) -> None:
    """The SPARQL-compiled validator reports the same focus nodes and paths as pySHACL."""
    from pyoxigraph import DefaultGraph, Quad

    from iclr_kg.build import shaclsparql
    from iclr_kg.reasoning.convert import from_rdflib

    data, ontology, shapes = tiny_compiled
    broken = broken_copy(data, case, add, remove)
    reference = validate(broken, shapes, ontology)
    as_quads = lambda g: [Quad(t.subject, t.predicate, t.object, DefaultGraph()) for t in from_rdflib(g)]
    compiled = shaclsparql.validate(as_quads(broken), as_quads(ontology), shapes)
    assert {(v.focus, v.path) for v in compiled.violations} == {(v.focus, v.path) for v in reference.violations}
    assert any(expected in v.message for v in compiled.violations), compiled.report


def test_compiled_validator_agrees_on_the_real_data(real_settings) -> None:
    from iclr_kg.build import shaclsparql
    from iclr_kg.build.validate import load_shapes

    compiled = compile_graph(real_settings)
    result = shaclsparql.validate(
        compiled.asserted, compiled.ontology, load_shapes(real_settings.ontology_dir / "shapes.ttl")
    )
    assert result.conforms == compiled.validation.conforms is True, result.report
