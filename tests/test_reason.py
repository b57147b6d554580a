"""Stage 5: OWL RL reasoning into the inferred graph, the filter rule, inconsistency errors.

Both reasoners take and give pyoxigraph triples (reason.REASONERS); owlrl is the reference."""

from __future__ import annotations

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from iclr_kg.build.pipeline import compile_graph
from iclr_kg.errors import InconsistentGraph, SettingsError, UnsupportedOntology
from iclr_kg.reasoning.convert import from_rdflib
from iclr_kg.reasoning.reason import infer_triples, keep_inferred
from testbed import synth

I = "https://w3id.org/iclr-kg/ontology#"
R = "https://w3id.org/iclr-kg/resource/"
SCHEMA = "http://schema.org/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
WDT = "http://www.wikidata.org/prop/direct/"


def n(iri: str) -> NamedNode:
    return NamedNode(iri)


def t(s: str, p: str, o: str | Literal) -> Triple:
    return Triple(n(s), n(p), o if isinstance(o, Literal) else n(o))


PAPER, SONG = R + "paper/PxTIG12RRHS", R + "person/yang-song"


@pytest.fixture(scope="module")
def tiny_inferred(tiny_compiled):
    data, ontology, _ = tiny_compiled
    data, ontology = from_rdflib(data), from_rdflib(ontology)
    return data, ontology, set(infer_triples(data, ontology))


def test_filter_rule() -> None:
    thing = n(R + "person/x")
    assert keep_inferred(thing, n(RDF + "type"), n(SCHEMA + "Person"))
    assert not keep_inferred(thing, n(RDF + "type"), n(OWL + "Thing"))
    assert not keep_inferred(thing, n(RDF + "type"), n(RDFS + "Resource"))
    assert not keep_inferred(thing, n(OWL + "sameAs"), thing)
    assert not keep_inferred(Literal("x"), n(RDF + "type"), n(RDFS + "Literal"))
    assert not keep_inferred(BlankNode(), n(RDF + "type"), n(OWL + "Class"))
    assert not keep_inferred(n(OWL + "sameAs"), n(RDF + "type"), n(RDF + "Property"))
    assert not keep_inferred(n(I + "Paper"), n(RDFS + "subClassOf"), n(OWL + "Thing"))
    assert not keep_inferred(n(I + "title"), n(RDFS + "domain"), n(OWL + "Thing"))
    assert keep_inferred(n(I + "Paper"), n(RDFS + "subClassOf"), n(SCHEMA + "CreativeWork"))


def test_property_chains_inverses_and_alignments(tiny_inferred) -> None:
    data, _, inferred = tiny_inferred
    title = Literal("Score-Based Generative Modeling through Stochastic Differential Equations")
    for triple in [
        t(PAPER, I + "hasAuthor", SONG),
        t(SONG, I + "authorOf", PAPER),
        t(PAPER, SCHEMA + "author", SONG),
        t(PAPER, WDT + "P50", SONG),
        t(PAPER, I + "receivedAward", R + "award/iclr2021-outstanding-paper"),
        t(PAPER, RDF + "type", I + "AwardedPaper"),
        t(PAPER, RDF + "type", I + "OutstandingPaper"),
        t(PAPER, RDF + "type", SCHEMA + "ScholarlyArticle"),
        t(SONG, RDF + "type", SCHEMA + "Person"),
        t(PAPER, SCHEMA + "name", title),
        t(PAPER, SCHEMA + "sourceOrganization", R + "organization/google-brain"),
        t(R + "organization/google-brain", I + "subOrganizationOf", R + "organization/google"),
        t(R + "organization/google-brain", SCHEMA + "parentOrganization", R + "organization/google"),
        t(R + "organization/stanford", RDF + "type", SCHEMA + "CollegeOrUniversity"),
    ]:
        assert triple in inferred, triple
        assert triple not in data


def test_inferred_holds_nothing_asserted_or_trivial(tiny_inferred) -> None:
    data, ontology, inferred = tiny_inferred
    assert len(inferred) > 50
    given = set(data) | set(ontology)
    for triple in inferred:
        assert triple not in given
        assert keep_inferred(triple.subject, triple.predicate, triple.object)


@pytest.mark.parametrize("reasoner", ["owlrl", "fast"])
def test_disjoint_classes_fail_with_the_entities_named(tiny_data, reasoner: str) -> None:
    compiled = compile_graph(tiny_data())
    data = [Triple(*q[:3]) for q in compiled.asserted] + [t(SONG, RDF + "type", I + "Organization")]
    with pytest.raises(InconsistentGraph) as info:
        infer_triples(data, [Triple(*q[:3]) for q in compiled.ontology], reasoner)
    assert "yang-song" in str(info.value)


def test_inferred_triples_are_read_as_tuples_of_terms() -> None:
    """The fast reasoner's result keeps three term ids per triple; read, it gives the terms."""
    from array import array

    from iclr_kg.reasoning.fastrl import TermTriples

    a, b, c = NamedNode("http://a"), NamedNode("http://b"), Literal("c")
    triples = TermTriples([a, b, c], array("I", [0, 1, 2, 1, 1, 0]))
    assert len(triples) == 2
    assert list(triples) == [(a, b, c), (b, b, a)]
    assert triples[1] == triples[-1] == (b, b, a) and triples[-2] == (a, b, c)
    assert (b, b, a) in triples and (a, b, a) not in triples
    for outside in (2, -3):
        with pytest.raises(IndexError):
            triples[outside]


def test_literals_cross_to_rdflib_and_back_as_they_are_spelled() -> None:
    """owlrl's triples come back in the lexical form they went in with, the one a store gives
    back ("...Z"), not rdflib's own normal form of the value ("...+00:00")."""
    from iclr_kg.reasoning.convert import term_from_rdflib, term_to_rdflib

    xsd = "http://www.w3.org/2001/XMLSchema#"
    for value, datatype in [("2026-01-01T00:00:00Z", "dateTime"), ("2026-01-01T00:00:00.25Z", "dateTime")]:
        literal = Literal(value, datatype=NamedNode(xsd + datatype))
        assert term_from_rdflib(term_to_rdflib(literal)) == literal


def test_unknown_reasoner_is_refused() -> None:
    with pytest.raises(SettingsError, match="unknown reasoner"):
        infer_triples([], [], reasoner="magic")


def _fast_equals_owlrl(compiled, at_least: int) -> None:
    data, ontology = [Triple(*q[:3]) for q in compiled.asserted], [Triple(*q[:3]) for q in compiled.ontology]
    reference = set(infer_triples(data, ontology, "owlrl"))
    fast = set(infer_triples(data, ontology, "fast"))
    assert len(reference) > at_least
    assert fast == reference, {
        "missing": sorted(map(str, reference - fast))[:5],
        "extra": sorted(map(str, fast - reference))[:5],
    }


def test_fast_reasoner_equals_owlrl_on_the_real_data(real_settings) -> None:
    _fast_equals_owlrl(compile_graph(real_settings), 4000)


def test_fast_reasoner_equals_owlrl_on_300_synthetic_papers(tmp_path) -> None:
    from iclr_kg.config import Settings

    data_dir = synth.write(300, tmp_path / "data", seed=11)
    compiled = compile_graph(Settings(store=tmp_path / "store", data_dir=data_dir))
    assert compiled.validation.conforms, compiled.validation.report
    _fast_equals_owlrl(compiled, 20000)


def test_fast_reasoner_handles_equality_and_functional_properties() -> None:
    """prp-fp makes two objects of a functional property the same; eq-rep copies their triples."""
    a, b, paper = R + "x/a", R + "x/b", R + "paper/p"
    ontology = [t(I + "decision", RDF + "type", OWL + "FunctionalProperty")]
    data = [t(paper, I + "decision", a), t(paper, I + "decision", b), t(a, RDFS + "label", Literal("A"))]
    fast = set(infer_triples(data, ontology, "fast"))
    assert fast == set(infer_triples(data, ontology, "owlrl"))
    assert t(b, RDFS + "label", Literal("A")) in fast


def test_fast_reasoner_equals_owlrl_where_its_shortcuts_could_go_wrong() -> None:
    """The fast reasoner keeps only the least of a property's domains and of a class's
    superclasses, and indexes only the predicates its rules join on: a hierarchy with an
    equivalence, a domain inherited from a superproperty, a transitive property, an owl:sameAs
    stated in the data (every predicate indexed from then on) and a disjointness checked both
    with that equality and without it (then from the members of the checked classes kept as
    triples come, not from an index) must still give owlrl's closure and owlrl's verdict."""
    ontology = [
        t(I + "Paper", RDFS + "subClassOf", I + "Work"),
        t(I + "Work", OWL + "equivalentClass", I + "CreativeWork"),
        t(I + "CreativeWork", RDFS + "subClassOf", I + "Thing"),
        t(I + "wrote", RDFS + "subPropertyOf", I + "made"),
        t(I + "made", RDFS + "domain", I + "Agent"),
        t(I + "wrote", RDFS + "range", I + "Paper"),
        t(I + "wrote", RDFS + "range", I + "Work"),
        t(I + "partOf", RDF + "type", OWL + "TransitiveProperty"),
    ]
    data = [
        t(R + "x/a", I + "wrote", R + "x/p"),
        t(R + "x/p", I + "partOf", R + "x/q"),
        t(R + "x/q", I + "partOf", R + "x/r"),
        t(R + "x/p", RDFS + "label", Literal("P")),
        t(R + "x/p2", OWL + "sameAs", R + "x/p"),
    ]
    fast = set(infer_triples(data, ontology, "fast"))
    assert fast == set(infer_triples(data, ontology, "owlrl"))
    assert t(R + "x/p2", I + "partOf", R + "x/r") in fast  # transitivity, then equality
    assert t(R + "x/p2", RDF + "type", I + "CreativeWork") in fast
    assert t(R + "x/a", RDF + "type", I + "Agent") in fast
    disjoint = [*ontology, t(I + "Agent", OWL + "disjointWith", I + "Work")]
    without_equality = [x for x in data if x.predicate.value != OWL + "sameAs"]
    for reasoner in ("fast", "owlrl"):
        for given in (data, without_equality):
            with pytest.raises(InconsistentGraph, match="x/a"):  # an Agent (by domain) and a Work (by superclass)
                infer_triples([*given, t(R + "x/a", RDF + "type", I + "Paper")], disjoint, reasoner)
            with pytest.raises(InconsistentGraph, match="x/n>? is an instance of owl:Nothing"):
                infer_triples([*given, t(R + "x/n", RDF + "type", OWL + "Nothing")], disjoint, reasoner)
    assert set(infer_triples(without_equality, disjoint, "fast")) == set(
        infer_triples(without_equality, disjoint, "owlrl")
    )  # and nothing is reported where nothing is wrong


@pytest.mark.parametrize(
    "data",
    [
        # an undeclared class made the same as another: no rule makes it its own subclass
        [t("urn:s1", RDFS + "subClassOf", I + "Authorship"), t("urn:s2", OWL + "sameAs", "urn:s1")],
        # declared in the data (scm-cls), or a property declared (scm-op): then it is
        [t("urn:s1", RDF + "type", OWL + "Class"), t("urn:s2", OWL + "sameAs", "urn:s1")],
        [t("urn:p1", RDF + "type", OWL + "ObjectProperty"), t("urn:p2", OWL + "sameAs", "urn:p1")],
        # a cycle (scm-sco), and an ontology class with an equal
        [
            t("urn:s1", RDFS + "subClassOf", "urn:s3"),
            t("urn:s3", RDFS + "subClassOf", "urn:s1"),
            t("urn:s2", OWL + "sameAs", "urn:s3"),
        ],
        [t("urn:s2", OWL + "sameAs", I + "Paper")],
        # a subclass of a class made the same as an ontology class (found by the update semantics
        # test in CI): OWL RL gives it the ontology class's superclasses, once the schema that
        # equality derives is compiled too
        [
            t("urn:s2", RDFS + "subClassOf", "urn:s1"),
            t("urn:s1", OWL + "sameAs", I + "Paper"),
            t("urn:s1", "urn:p", "urn:s1"),
        ],
        [t("urn:p2", RDFS + "subPropertyOf", "urn:p1"), t("urn:p1", OWL + "sameAs", I + "hasAuthor")],
    ],
)
def test_fast_reasoner_equals_owlrl_on_classes_made_equal(data, tiny_compiled) -> None:
    """bench/update_semantics.py found the fast reasoner making every class of the hierarchy
    its own subclass (then, through owl:sameAs, `urn:s1 rdfs:subClassOf urn:s2`), where OWL RL
    does so only for a declared class or property or one on a cycle."""
    ontology = from_rdflib(tiny_compiled[1])
    for schema in ([], ontology):
        assert set(infer_triples(data, schema, "fast")) == set(infer_triples(data, schema, "owlrl"))


def test_fast_reasoner_reads_axioms_stated_in_the_data_as_owlrl_does() -> None:
    """bench/update_semantics.py: after `COPY DEFAULT TO <g>` and the ontology graph dropped, the
    disjointness lived in <g> only; owlrl refused what broke it, the fast reasoner did not."""
    x = R + "x/a"
    axioms = [
        t(I + "Agent", OWL + "disjointWith", I + "Work"),
        t(I + "wrote", RDFS + "domain", I + "Agent"),
        t(I + "partOf", RDF + "type", OWL + "TransitiveProperty"),
    ]
    data = [
        *axioms,
        t(x, I + "wrote", R + "x/p"),
        t(R + "x/p", I + "partOf", R + "x/q"),
        t(R + "x/q", I + "partOf", R + "x/r"),
    ]
    assert set(infer_triples(data, [], "fast")) == set(infer_triples(data, [], "owlrl"))
    assert t(R + "x/p", I + "partOf", R + "x/r") in set(infer_triples(data, [], "fast"))
    for reasoner in ("fast", "owlrl"):
        with pytest.raises(InconsistentGraph, match="x/a"):
            infer_triples([*data, t(x, RDF + "type", I + "Work")], [], reasoner)


def test_fast_reasoner_reads_part_of_an_ontology_as_owlrl_does() -> None:
    """bench/update_semantics.py, seed 7, request ~6,650: a data graph held part of the ontology
    (a restriction without its property, a chain whose list was deleted); the fast reasoner
    failed on it (`not an RDF term: None`). Such a part says nothing, as in owlrl."""
    r, chain = BlankNode(), BlankNode()
    data = [
        Triple(r, n(OWL + "someValuesFrom"), n(I + "Paper")),
        Triple(n(I + "wrote"), n(OWL + "propertyChainAxiom"), chain),
        t(R + "x/a", I + "wrote", R + "x/p"),
    ]
    assert set(infer_triples(data, [], "fast")) == set(infer_triples(data, [], "owlrl"))


def test_fast_reasoner_refuses_constructs_it_does_not_compile() -> None:
    ontology = [t(I + "X", OWL + "unionOf", RDF + "nil")]
    with pytest.raises(UnsupportedOntology, match="--reasoner owlrl"):
        infer_triples([], ontology, "fast")


def test_the_engines_are_named_once() -> None:
    """The settings name the reasoners and validators (config.Reasoner, config.Validator); the CLI's
    choices and the engines' tables are those names, no more and no fewer."""
    from typing import get_args

    from click import Choice

    from iclr_kg.build.pipeline import VALIDATORS
    from iclr_kg.cli import main
    from iclr_kg.config import Reasoner, Validator
    from iclr_kg.reasoning.reason import REASONERS

    assert set(REASONERS) == set(get_args(Reasoner)) and set(VALIDATORS) == set(get_args(Validator))
    for command, option, named in (("build", "reasoner", Reasoner), ("build", "validator", Validator)):
        (found,) = [p for p in main.commands[command].params if p.name == option]
        assert isinstance(found.type, Choice) and tuple(found.type.choices) == get_args(named)
