"""Stage 3: models to quads, one named graph per source, IRIs minted in one place."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pyoxigraph import NamedNode, Quad, RdfFormat, parse

from iclr_kg import vocab
from iclr_kg.build import rdf, sources
from iclr_kg.build.resolve import build_registry
from iclr_kg.build.sources import load_dataset
from iclr_kg.config import resource_dir

ICLR = vocab.ONTOLOGY_NS
RES = vocab.RESOURCE_BASE


def quads_of(settings, extra_sources=None):
    """The asserted quads (tuples of terms) as pyoxigraph quads, to read by name."""
    dataset = load_dataset(settings.data_dir)
    return [Quad(*q) for q in rdf.asserted_quads(dataset, build_registry(dataset))]


def test_iris_follow_the_contract() -> None:
    assert rdf.iri("paper", "PxTIG12RRHS").value == "https://w3id.org/iclr-kg/resource/paper/PxTIG12RRHS"
    assert rdf.source_graph("tiny").value == "https://w3id.org/iclr-kg/graph/source/tiny"


def test_each_source_gets_its_own_graph_and_provenance(tiny_data) -> None:
    quads = quads_of(tiny_data())
    graphs = {q.graph_name.value for q in quads}
    assert graphs == {vocab.GRAPH_ENTITIES, vocab.GRAPH_WIKIDATA, vocab.GRAPH_SOURCE_BASE + "tiny"}
    stated = [q for q in quads if q.predicate.value == ICLR + "statedIn"]
    assert [(q.subject.value, q.object.value) for q in stated] == [
        (vocab.GRAPH_SOURCE_BASE + "tiny", RES + "source/tiny")
    ]


def test_authorships_are_ordered_and_first_author_stated(tiny_data) -> None:
    quads = quads_of(tiny_data())
    positions = {(q.subject.value, q.object.value) for q in quads if q.predicate.value == ICLR + "authorPosition"}
    assert positions == {(RES + "authorship/PxTIG12RRHS-1", "1"), (RES + "authorship/PxTIG12RRHS-2", "2")}
    first = [q.object for q in quads if q.predicate.value == ICLR + "firstAuthor"]
    assert first == [NamedNode(RES + "person/yang-song")]
    written = {q.object.value for q in quads if q.predicate.value == ICLR + "authorNameAsWritten"}
    assert written == {"宋飏", "Ben Poole"}


def test_names_resolve_to_registry_iris(tiny_data) -> None:
    quads = quads_of(tiny_data())
    orgs = {q.object.value for q in quads if q.predicate.value == ICLR + "creditedOrganization"}
    assert orgs == {RES + "organization/stanford", RES + "organization/google-brain"}


def test_typed_literals(tiny_data) -> None:
    quads = quads_of(tiny_data())
    by_predicate = {q.predicate.value: q.object for q in quads}
    assert by_predicate[ICLR + "submissionCount"].datatype.value.endswith("#integer")
    assert by_predicate[ICLR + "acceptanceRate"].datatype.value.endswith("#decimal")
    assert by_predicate[ICLR + "year"].datatype.value.endswith("#integer")  # compares with numbers
    assert by_predicate[ICLR + "calendarYear"].datatype.value.endswith("#gYear")
    assert by_predicate[ICLR + "rating"].datatype.value.endswith("#integer")


def test_wikidata_links_in_their_graph_with_provenance(tiny_data) -> None:
    quads = [q for q in quads_of(tiny_data()) if q.graph_name.value == vocab.GRAPH_WIKIDATA]
    exact = [q for q in quads if q.predicate.value.endswith("#exactMatch")]
    assert [(q.subject.value, q.object.value) for q in exact] == [
        (RES + "organization/google", "http://www.wikidata.org/entity/Q95")
    ]
    assert any(q.predicate.value == ICLR + "linkMethod" and q.object.value == "checked" for q in quads)


def test_ontology_goes_to_its_graph() -> None:
    from iclr_kg.config import resource_dir

    quads = rdf.ontology_quads(resource_dir("ontology") / "iclr.ttl")
    assert {q[3].value for q in quads} == {vocab.GRAPH_ONTOLOGY}
    assert len(quads) > 500


def test_field_terms_skip_only_unstated_values() -> None:
    """False and 0 are statements (held online: no; 0 spotlights); None and "" are silence."""
    assert rdf.term(None, "integer") is None and rdf.term("", "text") is None
    assert rdf.term(False, "boolean").value == "false"
    assert rdf.term(0, "integer").value == "0"
    assert rdf.term(" two  words ", "en").value == "two words"
    assert rdf.term("oral", rdf.PRESENTATIONS) == NamedNode(ICLR + "Oral")
    stamp = rdf.term(dt.datetime(2024, 5, 1, 12, 30), "dateTime")
    assert (stamp.value, stamp.datatype.value) == ("2024-05-01T12:30:00", vocab.XSD + "dateTime")
    # Literals are made once per text, never per equal value (5 == 5.0 == True), each in the form a
    # store gives back: one spelling per value, as an incremental build compares them with a store's
    assert [rdf.term(v, "decimal").value for v in (5, 5.0, Decimal("5"), Decimal("5.50"))] == ["5", "5", "5", "5.5"]
    assert rdf.term(True, "integer").value == "True"  # not 1's literal (ill-typed: validation says so)
    utc = rdf.term(dt.datetime(2026, 1, 1, 0, 0, 0, 250000, tzinfo=dt.UTC), "dateTime")
    assert utc.value == "2026-01-01T00:00:00.25Z"  # isoformat's "...00.250000+00:00"


def test_quads_share_each_entitys_term(tiny_data) -> None:
    """The asserted quads are tuples of terms, an entity's IRI one object in every quad naming it."""
    dataset = load_dataset(tiny_data().data_dir)
    quads = list(rdf.asserted_quads(dataset, build_registry(dataset)))
    assert all(type(q) is tuple and len(q) == 4 for q in quads)
    song = [t for q in quads for t in q[:3] if t == NamedNode(RES + "person/yang-song")]
    assert len(song) > 3 and all(t is song[0] for t in song)


def test_every_table_names_real_fields_and_declared_properties() -> None:
    """A table entry for a renamed model field, or an undeclared property, fails here, not silently."""
    with (resource_dir("ontology") / "iclr.ttl").open("rb") as handle:
        declared = {t.subject for t in parse(handle, format=RdfFormat.TURTLE)}
    tables = {
        "NOTE": sources.Organization,
        "PERSON": sources.Person,
        "EDITION": sources.Edition,
        "SOURCE_INFO": sources.SourceInfo,
        "CONFERENCE_FACTS": sources.ConferenceFacts,
        "EDITION_FACTS": sources.EditionFacts,
        "AWARD_FACTS": sources.AwardFacts,
        "PAPER_FACTS": sources.PaperFacts,
        "REVIEW_FACTS": sources.ReviewFacts,
        "ROLE_FACTS": sources.RoleFacts,
        "PERSON_FACTS": sources.PersonFacts,
    }
    for name, model in tables.items():
        for field, (predicate, _kind) in getattr(rdf, name).items():
            assert field in model.model_fields, f"rdf.{name}: {model.__name__} has no field {field!r}"
            if predicate.value.startswith(ICLR):
                assert predicate in declared, f"rdf.{name}: {predicate.value} is not in the ontology"


def test_writers_and_criteria_keep_their_sources_order_in_the_store(real_store, real_settings) -> None:
    """Issue #67 item 7: a source's writers and an award's criteria were unordered values, shown in
    the store's order (小舟, 維度, 陳萍 for 維度, 陳萍, 小舟). Each value's place is stated beside it
    (iclr:OrderedStatement): read back in order, every list is the curated file's, in each language.
    An award committee's members too (ICLR 2021's read UT Austin, DeepMind, Meta, Stanford,
    Microsoft for the article's Facebook, DeepMind, UT Austin, Stanford, Microsoft)."""
    ordered = """SELECT ?value WHERE {{ GRAPH <{graph}> {{
      ?s rdf:subject <{subject}> ; rdf:predicate iclr:{local} ; rdf:object ?value ; iclr:listPosition ?n
      FILTER (LANG(?value) = "{lang}") }} }} ORDER BY ?n"""

    def read_back(graph: str, subject: str, local: str, lang: str = "") -> list[str]:
        query = ordered.format(graph=graph, subject=subject, local=local, lang=lang)
        return [row[0].value for row in real_store.query(query, prefixes=vocab.QUERY_PREFIXES)]

    dataset = load_dataset(real_settings.data_dir)
    registry = build_registry(dataset)
    lists = 0
    for source in dataset.sources:
        graph = rdf.source_graph(source.source.key).value
        if source.source.writers:
            assert read_back(graph, RES + "source/" + source.source.key, "writer") == source.source.writers
            lists += 1
        for award in (a for a in source.awards if a.criteria):
            subject = RES + "award/" + str(registry.find("award", award.award))
            for lang, words in (
                ("en", [getattr(c, "en", c) for c in award.criteria]),
                ("zh-hans", [getattr(c, "zh", "") for c in award.criteria]),
            ):
                assert read_back(graph, subject, "criterion", lang) == [w for w in words if w], (source.path.name, lang)
            lists += 1
        for award in (a for a in source.awards if a.committee):  # organizations: no language to filter by
            subject = RES + "award/" + str(registry.find("award", award.award))
            query = ordered.format(graph=graph, subject=subject, local="committeeOrganization", lang="")
            members = [
                row[0].value
                for row in real_store.query(
                    query.replace('FILTER (LANG(?value) = "")', ""), prefixes=vocab.QUERY_PREFIXES
                )
            ]
            assert members == [
                RES + "organization/" + str(registry.find("organization", name)) for name in award.committee
            ]
            lists += 1
    assert lists >= 5  # three bylines, ICLR 2021's criteria and its committee, at least
    assert set(sources.SourceInfo.model_fields) | set(sources.AwardFacts.model_fields) >= rdf.ORDERED
