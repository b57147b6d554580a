"""Stage 5: OWL RL reasoning into the inferred graph, the filter rule, inconsistency errors."""

from __future__ import annotations

import pytest
import rdflib
from rdflib import OWL, RDF, RDFS, BNode, Literal, URIRef

from iclr_kg.convert import to_rdflib
from iclr_kg.errors import InconsistentGraph
from iclr_kg.pipeline import compile_graph
from iclr_kg.reason import infer, keep_inferred

I = rdflib.Namespace("https://w3id.org/iclr-kg/ontology#")
R = "https://w3id.org/iclr-kg/resource/"
SCHEMA = rdflib.Namespace("http://schema.org/")
WDT = rdflib.Namespace("http://www.wikidata.org/prop/direct/")
PAPER = URIRef(R + "paper/PxTIG12RRHS")
SONG = URIRef(R + "person/yang-song")


@pytest.fixture(scope="module")
def tiny_inferred(tiny_compiled):
    data, ontology, _ = tiny_compiled
    return data, ontology, infer(data, ontology)


def test_filter_rule() -> None:
    thing = URIRef(R + "person/x")
    assert keep_inferred(thing, RDF.type, SCHEMA.Person)
    assert not keep_inferred(thing, RDF.type, OWL.Thing)
    assert not keep_inferred(thing, RDF.type, RDFS.Resource)
    assert not keep_inferred(thing, OWL.sameAs, thing)
    assert not keep_inferred(Literal("x"), RDF.type, RDFS.Literal)
    assert not keep_inferred(BNode(), RDF.type, OWL.Class)
    assert not keep_inferred(OWL.sameAs, RDF.type, RDF.Property)
    assert not keep_inferred(I.Paper, RDFS.subClassOf, OWL.Thing)
    assert keep_inferred(I.Paper, RDFS.subClassOf, SCHEMA.CreativeWork)


def test_property_chains_inverses_and_alignments(tiny_inferred) -> None:
    data, _, inferred = tiny_inferred
    for triple in [
        (PAPER, I.hasAuthor, SONG),
        (SONG, I.authorOf, PAPER),
        (PAPER, SCHEMA.author, SONG),
        (PAPER, WDT.P50, SONG),
        (PAPER, I.receivedAward, URIRef(R + "award/iclr2021-outstanding-paper")),
        (PAPER, RDF.type, I.AwardedPaper),
        (PAPER, RDF.type, I.OutstandingPaper),
        (PAPER, RDF.type, SCHEMA.ScholarlyArticle),
        (SONG, RDF.type, SCHEMA.Person),
        (PAPER, SCHEMA.name, Literal("Score-Based Generative Modeling through Stochastic Differential Equations")),
        (PAPER, SCHEMA.sourceOrganization, URIRef(R + "organization/google-brain")),
        (URIRef(R + "organization/google-brain"), I.subOrganizationOf, URIRef(R + "organization/google")),
        (URIRef(R + "organization/google-brain"), SCHEMA.parentOrganization, URIRef(R + "organization/google")),
        (URIRef(R + "organization/stanford"), RDF.type, SCHEMA.CollegeOrUniversity),
    ]:
        assert triple in inferred, triple
        assert triple not in data


def test_inferred_holds_nothing_asserted_or_trivial(tiny_inferred) -> None:
    data, ontology, inferred = tiny_inferred
    assert len(inferred) > 50
    for s, p, o in inferred:
        assert (s, p, o) not in data and (s, p, o) not in ontology
        assert keep_inferred(s, p, o)


def test_disjoint_classes_fail_with_the_entities_named(tiny_data) -> None:
    settings = tiny_data()
    compiled = compile_graph(settings)
    data = to_rdflib(compiled.asserted)
    data.add((SONG, RDF.type, I.Organization))
    with pytest.raises(InconsistentGraph) as info:
        infer(data, to_rdflib(compiled.ontology))
    message = str(info.value)
    assert "yang-song" in message and "disjoint" in message.lower()


def test_unknown_reasoner_is_refused() -> None:
    from iclr_kg.errors import SettingsError

    with pytest.raises(SettingsError, match="unknown reasoner"):
        infer(rdflib.Graph(), rdflib.Graph(), reasoner="magic")


def _synth():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "synth.py"
    spec = importlib.util.spec_from_file_location("synth", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_fast_reasoner_equals_owlrl_on_the_real_data(real_settings) -> None:
    compiled = compile_graph(real_settings)
    data, ontology = to_rdflib(compiled.asserted), to_rdflib(compiled.ontology)
    reference = infer(data, ontology, reasoner="owlrl")
    fast = infer(data, ontology, reasoner="fast")
    assert len(reference) > 4000
    assert fast == reference, {"missing": sorted(reference - fast)[:5], "extra": sorted(fast - reference)[:5]}


def test_fast_reasoner_equals_owlrl_on_300_synthetic_papers(tmp_path) -> None:
    from iclr_kg.config import Settings

    data_dir = _synth().write(300, tmp_path / "data", seed=11)
    compiled = compile_graph(Settings(store=tmp_path / "store", data_dir=data_dir))
    assert compiled.validation.conforms, compiled.validation.report
    data, ontology = to_rdflib(compiled.asserted), to_rdflib(compiled.ontology)
    reference = infer(data, ontology, reasoner="owlrl")
    fast = infer(data, ontology, reasoner="fast")
    assert len(reference) > 20000
    assert fast == reference, {"missing": sorted(reference - fast)[:5], "extra": sorted(fast - reference)[:5]}


def test_fast_reasoner_handles_equality_and_functional_properties() -> None:
    """prp-fp makes two objects of a functional property the same; eq-rep copies their triples."""
    g, onto = rdflib.Graph(), rdflib.Graph()
    a, b, paper = URIRef(R + "x/a"), URIRef(R + "x/b"), URIRef(R + "paper/p")
    onto.add((I.decision, RDF.type, OWL.FunctionalProperty))
    g.add((paper, I.decision, a))
    g.add((paper, I.decision, b))
    g.add((a, RDFS.label, Literal("A")))
    assert infer(g, onto, "fast") == infer(g, onto, "owlrl")
    assert (b, RDFS.label, Literal("A")) in infer(g, onto, "fast")


def test_fast_reasoner_refuses_constructs_it_does_not_compile() -> None:
    from iclr_kg.fastrl import UnsupportedOntology

    onto = rdflib.Graph()
    onto.add((I.X, OWL.unionOf, RDF.nil))
    with pytest.raises(UnsupportedOntology, match="--reasoner owlrl"):
        infer(rdflib.Graph(), onto, "fast")


def test_disjointness_found_by_the_fast_reasoner_too(tiny_data) -> None:
    compiled = compile_graph(tiny_data())
    data = to_rdflib(compiled.asserted)
    data.add((SONG, RDF.type, I.Paper))
    with pytest.raises(InconsistentGraph, match="yang-song"):
        infer(data, to_rdflib(compiled.ontology), "fast")


def test_fast_reasoner_on_pyoxigraph_terms_equals_the_rdflib_path(real_settings) -> None:
    """The build runs the fast reasoner on pyoxigraph triples; same result, same filter."""
    from iclr_kg.convert import from_rdflib
    from iclr_kg.reason import infer_oxigraph, keep_inferred_oxigraph

    compiled = compile_graph(real_settings)
    on_rdflib = {str(t) for t in from_rdflib(infer(compiled.asserted_graph, compiled.ontology_graph, "fast"))}
    on_oxigraph = {
        str(t) for t in infer_oxigraph([q.triple for q in compiled.asserted], [q.triple for q in compiled.ontology])
    }
    assert on_rdflib == on_oxigraph and len(on_oxigraph) > 4000
    samples = [t for t in compiled.ontology_graph if not isinstance(t[0], BNode) and not isinstance(t[2], BNode)]
    thing = URIRef(R + "person/x")
    samples += [
        (thing, RDF.type, OWL.Thing),
        (thing, OWL.sameAs, thing),
        (I.Paper, RDFS.subClassOf, OWL.Thing),
        (I.title, RDFS.domain, OWL.Thing),
        (OWL.sameAs, RDF.type, RDF.Property),
        (thing, RDF.type, SCHEMA.Person),
    ]
    kept = 0
    for s, p, o in samples:
        oxi = from_rdflib([(s, p, o)])[0]
        assert keep_inferred(s, p, o) == keep_inferred_oxigraph(oxi.subject, oxi.predicate, oxi.object), (s, p, o)
        kept += keep_inferred(s, p, o)
    assert 0 < kept < len(samples)
