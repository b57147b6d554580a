"""The store: atomic publication, failed builds that change nothing, the build lock."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad

from iclr_kg.build.pipeline import build
from iclr_kg.errors import DataError, QueryError, StoreError, ValidationFailed
from iclr_kg.store import build_lock, current_generation, kept_for_writing, open_read_only, publish, run_query

from .conftest import select

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"


def count(store_dir: Path) -> int:
    return int(select(open_read_only(store_dir), COUNT)[0]["n"])


def test_build_publishes_a_queryable_store(tiny_data) -> None:
    settings = tiny_data()
    report = build(settings)
    assert current_generation(settings.store) == Path(report.generation).resolve()
    assert count(settings.store) == sum(report.counts.values())
    assert set(report.timings) == {"load", "resolve", "rdf", "validate", "reason", "store", "answers"}


@pytest.mark.parametrize(
    "breakage, error, where",
    [
        ("bad-yaml", DataError, "started at line 3"),
        ("unknown-entity", DataError, "tiny.yaml:16: authors[1]: unknown person 'Nobody'"),
        ("bad-ontology", DataError, "iclr.ttl"),
        ("shacl", ValidationFailed, "rating from 1 to 10"),
    ],
)
def test_a_failed_build_leaves_the_previous_store(tiny_data, breakage: str, error: type, where: str) -> None:
    settings = tiny_data()
    build(settings)
    before_generation, before_count = current_generation(settings.store), count(settings.store)
    source = settings.data_dir / "sources" / "tiny.yaml"
    if breakage == "bad-yaml":
        source.write_text("source:\n  key: tiny\n  title: [oops\n", encoding="utf-8")
    elif breakage == "unknown-entity":
        source.write_text(source.read_text(encoding="utf-8").replace("Ben Poole]", "Nobody]"), encoding="utf-8")
    elif breakage == "bad-ontology":
        (settings.ontology_dir / "iclr.ttl").write_text("@prefix broken", encoding="utf-8")
    else:
        source.write_text(source.read_text(encoding="utf-8").replace("[8, 9]", "[8, 19]"), encoding="utf-8")
    with pytest.raises(error) as info:
        build(settings)
    assert where in str(info.value)
    assert current_generation(settings.store) == before_generation
    assert count(settings.store) == before_count


def test_a_second_build_is_refused_while_one_runs(tiny_data) -> None:
    settings = tiny_data()
    with build_lock(settings.store), pytest.raises(StoreError, match="another build"):
        build(settings)
    build(settings)  # the lock is released afterwards


def test_old_generations_are_pruned(tmp_path: Path, monkeypatch) -> None:
    quad = Quad(NamedNode("http://a"), NamedNode("http://b"), NamedNode("http://c"), NamedNode("http://g"))
    recent = [publish(tmp_path, [quad]) for _ in range(4)]
    assert all(g.is_dir() for g in recent)  # replaced just now: queries may still read them
    monkeypatch.setattr("iclr_kg.store.pruning.KEEP_SECONDS", 0)
    kept_for_writing(recent[-1], "stats").write_text("[]")  # a result kept beside a generation goes with it
    generations = [publish(tmp_path, [quad]) for _ in range(4)]
    assert sorted(p.name for p in (tmp_path / "generations").iterdir()) == sorted(
        [g.name + suffix for g in generations[-2:] for suffix in ("", ".complete", ".index.sqlite", ".kept")]
    )
    assert current_generation(tmp_path) == generations[-1].resolve()


def test_generations_of_one_second_are_kept_newest_first_whatever_their_process_ids(
    tmp_path: Path, monkeypatch
) -> None:
    """Regression: names once sorted by process id within a second, so a build by process 8836
    right after one by process 16688 pruned the newer of the two good generations."""
    monkeypatch.setattr("iclr_kg.store.pruning.KEEP_SECONDS", 0)
    quad = Quad(NamedNode("http://a"), NamedNode("http://b"), NamedNode("http://c"), NamedNode("http://g"))
    made = []
    for pid in (8836, 16688, 8836):  # "16688" < "8836" as text
        monkeypatch.setattr("iclr_kg.store.publishing.os.getpid", lambda pid=pid: pid)
        made.append(publish(tmp_path, [quad]))
    kept = {p for p in (tmp_path / "generations").iterdir() if p.is_dir() and "." not in p.name}
    assert kept == set(made[-2:])


def test_publish_stores_every_quad_and_its_triple_in_the_default_graph(tmp_path: Path, monkeypatch) -> None:
    """The quads go to the bulk loader as N-Quads, each chunk followed by its lines with the
    graph name cut off, and a graph given as triples as text: literals that look like the end
    of a line, typed, tagged, with newlines, escapes and control characters, blank nodes (kept
    by name), and two graphs stating one triple must come out exactly, and chunks must join."""
    monkeypatch.setattr("iclr_kg.store.loading.CHUNK", 2)
    a, b, g, h = NamedNode("http://a"), NamedNode("http://b"), NamedNode("http://g"), NamedNode("http://h")
    objects = [
        Literal('x" <http://g> .'),
        Literal("two\nlines <http://h> .\n"),
        Literal("1", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
        Literal("名前", language="zh"),
        BlankNode("b1"),
    ]
    quads = [Quad(a, b, o, g) for o in objects] + [Quad(a, b, objects[0], h)]
    # A graph given as triples (the build's inferred graph) is written as text, term by term.
    i = NamedNode("http://i")
    texts = [
        Literal('back\\slash, "quote", tab\t, return\r, nul\x00 and \u2028'),
        Literal("ça", language="fr-CA"),
        Literal("2024-05-07", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#date")),
        Literal("x", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#string")),
        NamedNode("http://example.org/é?q=1#f"),
        BlankNode("b2"),
    ]
    triples = [(a, b, o) for o in texts] + [(BlankNode("b3"), b, a), (a, b, objects[0])]
    publish(tmp_path, iter(quads), graphs={i: triples})
    store = open_read_only(tmp_path)
    assert set(store.quads_for_pattern(None, None, None, g)) == set(quads[:5])
    assert set(store.quads_for_pattern(None, None, None, i)) == {Quad(*t, i) for t in triples}
    assert {(q.subject, q.predicate, q.object) for q in store.quads_for_pattern(None, None, None, DefaultGraph())} == {
        (a, b, o) for o in objects
    } | set(triples)
    assert len(store) == 6 + 8 + 5 + 7


def test_missing_store_gives_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store at .* run `iclr-kg build"):
        open_read_only(tmp_path / "nowhere")


def test_default_graph_is_the_merge_of_all_graphs(tiny_data) -> None:
    settings = tiny_data(
        extra_sources={
            "second.yaml": """
        source: {key: second, title: Another, language: zh-Hans, seed: s, summary: s}
        papers:
          - openreview: PxTIG12RRHS
            edition: ICLR 2021
            title: Score-Based Generative Modeling through Stochastic Differential Equations
        """
        }
    )
    build(settings)
    store = open_read_only(settings.store)
    title = "SELECT ?t WHERE { paper:PxTIG12RRHS iclr:title ?t }"
    assert len(select(store, title)) == 1
    assert len(select(store, title, include_inferred=False)) == 2  # one per graph that states it
    assert len(select(store, "SELECT ?g WHERE { GRAPH ?g { paper:PxTIG12RRHS iclr:title ?t } }")) == 2
    inferred_only = "SELECT * WHERE { paper:PxTIG12RRHS iclr:hasAuthor ?a }"
    assert len(select(store, inferred_only)) == 2
    assert select(store, inferred_only, include_inferred=False) == []


def test_syntax_error_carries_the_parser_message(tiny_data) -> None:
    settings = tiny_data()
    build(settings)
    with pytest.raises(QueryError, match=r"SPARQL syntax error at line 1, column \d+"):
        run_query(open_read_only(settings.store), "SELECT * WHERE { ?s ?p }")


def test_store_dir_from_environment(tiny_data, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from iclr_kg.config import Settings

    monkeypatch.setenv("ICLR_KG_STORE", str(tmp_path / "env-store"))
    assert Settings.from_env().store == tmp_path / "env-store"
    assert Settings.from_env(store=tmp_path / "flag").store == tmp_path / "flag"
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    monkeypatch.setenv("ICLR_KG_UPDATE_TOKEN_FILE", str(token))
    assert Settings.from_env().update_token == "s3cret"
    assert os.environ["ICLR_KG_STORE"]


def test_the_index_reads_names_exactly_and_a_patch_agrees_with_a_whole_index(tmp_path: Path) -> None:
    """The index reads its queries as SPARQL CSV: a title with a comma, quotes and a newline, a
    Chinese label, two English labels (the least is taken, whatever order a store reads them
    in) and a derived label must come out exactly, and patching an index built without one
    entity's name must give the rows of an index built whole."""
    from iclr_kg import vocab
    from iclr_kg.index import Index, index_path, neighbourhood, patch_index

    iclr, rdf_type, label = vocab.iclr, vocab.RDF_TYPE, vocab.RDFS_LABEL
    paper, person, org = (vocab.entity(kind, "k1") for kind in ("paper", "person", "organization"))
    authorship = vocab.entity("authorship", "k1-1")
    edition, reviews = vocab.entity("edition", "iclr2030"), [vocab.entity("review", f"k1-{n}") for n in (1, 2)]
    source = NamedNode(vocab.GRAPH_SOURCE_BASE + "s1")
    title = 'Deep, "quoted"\nand long'
    triples = [
        (paper, rdf_type, iclr("Paper")),
        (paper, iclr("title"), Literal(title)),
        (person, rdf_type, iclr("Person")),
        (person, iclr("name"), Literal("Ada Lovelace")),
        (person, label, Literal("阿达", language="zh")),
        *(
            (vocab.entity("organization", f"k{n}"), p, o)
            for n, first, second in (
                (n, f"Zeta Laboratory of Things {n}", f"Alpha Laboratory of Things {n}") for n in range(1, 9)
            )
            for p, o in (
                (rdf_type, iclr("Organization")),
                (label, Literal(first, language="en")),
                (label, Literal(second, language="en")),
            )
        ),
        (authorship, rdf_type, iclr("Authorship")),
        (authorship, iclr("authorNameAsWritten"), Literal("A. Lovelace")),
        (authorship, iclr("authorPosition"), Literal("1", datatype=vocab.XSD_INTEGER)),
        (authorship, iclr("authorshipOf"), paper),
        (person, iclr("authorOf"), paper),
        (paper, iclr("creditedOrganization"), vocab.entity("organization", "k2")),
        (vocab.entity("organization", "k2"), iclr("subOrganizationOf"), org),
        (edition, rdf_type, iclr("ConferenceEdition")),
        (paper, iclr("submittedTo"), edition),
        *((review, iclr("reviewOf"), paper) for review in reviews),
        *(
            (review, iclr("rating"), Literal(str(n), datatype=vocab.XSD_INTEGER))
            for n, review in zip((6, 8), reviews, strict=True)
        ),
    ]
    publish(tmp_path / "whole", (Quad(s, p, o, source) for s, p, o in triples))
    whole = Index(index_path(current_generation(tmp_path / "whole")))
    labels = whole.labels([paper.value, person.value, org.value, authorship.value])
    assert labels == {
        paper.value: (title, ""),
        person.value: ("Ada Lovelace", "阿达"),
        org.value: ("Alpha Laboratory of Things 1", ""),
        authorship.value: (f"A. Lovelace, author 1 of {title}", ""),
    }
    assert whole.search("lovelace", kind="person")[0].iri == person.value
    others = [vocab.entity("organization", f"k{n}").value for n in range(2, 9)]
    assert [label for label, _ in whole.labels(others).values()] == [
        f"Alpha Laboratory of Things {n}" for n in range(2, 9)
    ]

    assert whole.papers_of(person.value, 10) == ([(paper.value, None)], 1)
    unit = vocab.entity("organization", "k2").value
    assert whole.credited_papers(org.value, 10) == ([(paper.value, None, [unit])], 1)  # through its unit
    assert whole.credited_papers(unit, 10) == ([(paper.value, None, [unit])], 1)  # directly: as itself
    assert whole.top_rated(edition.value, 10) == [(paper.value, 7.0, 2)]

    changed = [
        t for t in triples if t[1] in (iclr("name"), iclr("authorOf"), iclr("creditedOrganization"), iclr("rating"))
    ]
    publish(tmp_path / "patched", (Quad(s, p, o, source) for s, p, o in triples if (s, p, o) not in changed))
    base = index_path(current_generation(tmp_path / "patched"))
    assert Index(base).papers_of(person.value, 10) == ([], 0)
    store = open_read_only(tmp_path / "whole")
    patched = patch_index(store, tmp_path / "patched-gen", base, neighbourhood(store, changed), changed)
    assert Index(patched).labels(labels) == labels
    rows = "SELECT iri, kind, key, label, label_zh, facts, sort, year, papers, names FROM entity ORDER BY iri"
    pairs = "SELECT a.iri, b.iri FROM authorship JOIN entity a ON a.id = person JOIN entity b ON b.id = paper"
    with sqlite3.connect(index_path(current_generation(tmp_path / "whole"))) as a, sqlite3.connect(patched) as b:
        assert a.execute(rows).fetchall() == b.execute(rows).fetchall()
        assert a.execute(pairs).fetchall() == b.execute(pairs).fetchall() == [(person.value, paper.value)]
        for table in ("credit", "rating"):
            everything = f"SELECT * FROM {table} ORDER BY 1, 2, 3"
            assert a.execute(everything).fetchall() == b.execute(everything).fetchall() != []

    # the authorOf triple deleted again: the patch drops its row
    unwritten = patch_index(
        open_read_only(tmp_path / "patched"), tmp_path / "again-gen", patched, {person.value}, changed
    )
    assert Index(unwritten).papers_of(person.value, 10) == ([], 0)
    assert Index(unwritten).credited_papers(org.value, 10) == ([], 0)
    assert Index(unwritten).top_rated(edition.value, 10) == []


def test_what_was_kept_for_older_remote_publications_is_pruned(tmp_path: Path) -> None:
    """A remote engine's publications leave their index, answers and counts in
    STORE/remote/<engine>/: all but the current, the newest other and any just written go."""
    import time

    from iclr_kg.store import KEEP_SECONDS, prune_kept_beside

    engine = tmp_path / "remote" / "0123456789abcdef"
    engine.mkdir(parents=True)
    old = time.time() - 10 * KEEP_SECONDS
    for number, name in enumerate(("aaaa", "bbbb", "cccc", "dddd")):
        (engine / name).mkdir()
        (engine / f"{name}.kept").mkdir()
        for kept in (f"{name}.index.sqlite", f"{name}.kept/answer-award-papers.srj", f".{name}.index.sqlite-77"):
            (engine / kept).write_text("x")
            os.utime(engine / kept, (old + number, old + number))
        os.utime(engine / f"{name}.kept", (old + number, old + number))
        os.utime(engine / name, (old + number, old + number))
    assert prune_kept_beside(engine / "dddd") == ["aaaa", "bbbb"]  # cccc: the newest before dddd
    assert {p.name.lstrip(".").split(".")[0] for p in engine.iterdir()} == {"cccc", "dddd"}
    for name in ("bbbb", "cccc", "dddd"):
        (engine / name).mkdir(exist_ok=True)
        os.utime(engine / name, (old, old))
    (engine / "bbbb.kept").mkdir(exist_ok=True)
    (engine / "bbbb.kept" / "counts.json").write_text("just written")  # a reader may still be on bbbb
    assert prune_kept_beside(engine / "dddd") == ["cccc"]  # bbbb: written now, and so the newest
    assert {p.name.lstrip(".").split(".")[0] for p in engine.iterdir()} == {"bbbb", "dddd"}


def test_what_is_kept_for_a_generation_lives_in_one_folder_made_only_to_write(tmp_path: Path) -> None:
    """`<generation>.kept/` holds a generation's kept values; asking where one would be (a read)
    makes nothing, so a generation nobody asked about has no folder beside it."""
    from iclr_kg.store import kept_beside

    generation = tmp_path / "generations" / "20991231T000000-1-1"
    generation.mkdir(parents=True)
    read = kept_beside(generation, "counts")
    assert read == tmp_path / "generations" / "20991231T000000-1-1.kept" / "counts.json" and not read.parent.exists()
    assert kept_for_writing(generation, "counts") == read and read.parent.is_dir()


def test_a_typo_search_ranks_equally_close_names_by_papers(tmp_path: Path) -> None:
    """Issue #67 item 5: "persn" listed Person 0, 1, 10, 100, 1000... (the index's text order);
    names as close to the query as each other now come by most papers, as the kinds' tabs rank."""
    from iclr_kg.config import Settings
    from iclr_kg.index import Index, index_path
    from testbed import synth

    settings = Settings(data_dir=synth.write(700, tmp_path / "data"), store=tmp_path / "store")
    build(settings)  # 2,100 people: more than the 2,000 names the typo step weighs
    index = Index(index_path(current_generation(settings.store)))
    hits = index.search("persn", "person", 20)
    assert len(hits) == 20
    assert [h.papers for h in hits] == sorted((h.papers for h in hits), reverse=True)
    assert [h.iri for h in hits[:5]] == [h.iri for h in index.search_page("person", "person", 5, 0)]
