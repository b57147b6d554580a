"""The ontology: parses, is consistent (HermiT), documents every term, covers the data, aligns."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import rdflib
from rdflib import OWL, RDF, RDFS

from iclr_kg.config import resource_dir
from iclr_kg.reasoning.convert import to_rdflib
from iclr_kg.vocab import ONTOLOGY_NS

from .conftest import select

ONTOLOGY = resource_dir("ontology") / "iclr.ttl"
ICLR = rdflib.Namespace(ONTOLOGY_NS)


@pytest.fixture(scope="module")
def ontology() -> rdflib.Graph:
    return rdflib.Graph().parse(ONTOLOGY, format="turtle")


def declared_terms(ontology: rdflib.Graph) -> set[rdflib.URIRef]:
    kinds = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.NamedIndividual)
    return {s for kind in kinds for s in ontology.subjects(RDF.type, kind) if str(s).startswith(ONTOLOGY_NS)}


def test_every_term_has_english_label_chinese_label_and_comment(ontology: rdflib.Graph) -> None:
    terms = declared_terms(ontology)
    assert len(terms) > 100
    for term in terms:
        labels = {label.language for label in ontology.objects(term, RDFS.label)}
        assert {"en", "zh"} <= labels, term
        if (term, RDF.type, OWL.NamedIndividual) not in ontology:
            assert ontology.value(term, RDFS.comment) is not None, term


def test_ontology_metadata(ontology: rdflib.Graph) -> None:
    node = rdflib.URIRef("https://w3id.org/iclr-kg/ontology")
    assert (node, RDF.type, OWL.Ontology) in ontology
    assert ontology.value(node, OWL.versionIRI) is not None
    assert ontology.value(node, rdflib.DCTERMS.license) is not None
    assert ontology.value(node, rdflib.DCTERMS.creator) is not None


def test_sub_organization_is_transitive(ontology: rdflib.Graph) -> None:
    assert (ICLR.subOrganizationOf, RDF.type, OWL.TransitiveProperty) in ontology


def test_restrictions_stay_in_owl2_rl(ontology: rdflib.Graph) -> None:
    """someValuesFrom restrictions only as subclasses (OWL 2 RL forbids them as superclasses)."""
    for restriction in ontology.subjects(OWL.someValuesFrom, None):
        assert not list(ontology.subjects(RDFS.subClassOf, restriction)), restriction
        assert list(ontology.objects(restriction, RDFS.subClassOf)), restriction
    assert not list(ontology.subjects(OWL.unionOf, None))
    assert not list(ontology.subjects(OWL.minCardinality, None))


def test_every_term_the_data_uses_is_declared(real_store, ontology: rdflib.Graph) -> None:
    declared = declared_terms(ontology)
    rows = select(
        real_store,
        """
        SELECT DISTINCT ?term WHERE {
          GRAPH ?g { { ?s ?term ?o } UNION { ?s a ?term } }
          FILTER (?g NOT IN (<https://w3id.org/iclr-kg/graph/ontology>, <https://w3id.org/iclr-kg/graph/inferred>))
        }""",
    )
    used = {rdflib.URIRef(row["term"]) for row in rows}
    ours = {t for t in used if str(t).startswith(ONTOLOGY_NS)}
    assert ours and ours <= declared, ours - declared
    allowed = {
        RDF.type,
        RDFS.label,
        RDF.Statement,
        RDF.subject,
        RDF.predicate,
        RDF.object,
        rdflib.DCTERMS.title,
        rdflib.DCTERMS.description,
        rdflib.URIRef("http://schema.org/inLanguage"),
        rdflib.SKOS.exactMatch,
    }
    # other vocabularies' properties the ontology declares (Wikidata's identifier properties) are fine
    theirs = {s for s in ontology.subjects(RDF.type, OWL.DatatypeProperty) if not str(s).startswith(ONTOLOGY_NS)}
    assert used - ours - theirs <= allowed, (used - ours - theirs) - allowed


@pytest.mark.parametrize(
    "question",
    [
        "?x a schema:ScholarlyArticle",
        "?x a schema:Person",
        "?x a schema:Organization",
        "?x schema:name ?n",
        "?x schema:author ?a",
        "?x schema:sourceOrganization ?o",
        "?x schema:affiliation ?o",
        "?x schema:alumniOf ?o",
        "?x wdt:P50 ?a",
        "?x schema:worksFor ?o",
        "?x wdt:P166 ?a",
        "organization:google-brain schema:parentOrganization organization:google",
        "organization:aws-ai schema:parentOrganization organization:amazon",
    ],
)
def test_schema_org_and_wikidata_terms_answer_after_reasoning(real_store, question: str) -> None:
    from iclr_kg.store import run_query

    assert bool(run_query(real_store, f"ASK {{ {question} }}")) is True
    assert bool(run_query(real_store, f"ASK {{ {question} }}", include_inferred=False)) is False


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs Java")
def test_ontology_and_data_are_consistent_for_hermit(real_store, tmp_path) -> None:
    owlready2 = pytest.importorskip("owlready2")
    from pyoxigraph import NamedNode

    from iclr_kg.store import query_graphs

    graphs = [g for g in query_graphs(real_store) if g != NamedNode("https://w3id.org/iclr-kg/graph/inferred")]
    quads = [q for g in graphs for q in real_store.quads_for_pattern(None, None, None, g)]
    path = tmp_path / "all.nt"
    to_rdflib(quads).serialize(path, format="nt", encoding="utf-8")
    world = owlready2.World()
    onto = world.get_ontology(path.as_uri()).load()
    try:
        with onto:
            # xsd:date, xsd:gYear and xsd:gYearMonth are outside the OWL 2 datatype map (see the
            # ontology's header); HermiT treats them as opaque instead of refusing the ontology.
            owlready2.sync_reasoner_hermit(
                [onto], infer_property_values=False, debug=0, ignore_unsupported_datatypes=True
            )
    except owlready2.OwlReadyInconsistentOntologyError as exc:  # pragma: no cover - the failure we test for
        pytest.fail(f"HermiT finds the ontology with the data inconsistent: {exc}")
    except subprocess.CalledProcessError as exc:  # pragma: no cover
        pytest.fail(f"HermiT failed: {exc}")
    assert len(list(world.inconsistent_classes())) == 0
