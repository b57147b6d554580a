"""A whole index built from a generation's default graph: the entities with their names, labels
and facts (SPARQL read as CSV, off the GIL), and the authorship, credit, rating and topic tables."""

from __future__ import annotations

import csv
import io
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyoxigraph import DefaultGraph, Literal, NamedNode, QueryResultsFormat, QuerySolutions, Variable

from iclr_kg import terms, vocab
from iclr_kg.graph import ReadableGraph, serialized, value
from iclr_kg.index.facts import DERIVED, FACTS
from iclr_kg.index.schema import _DDL, SCHEMA_VERSION, current_index, index_path, kind_and_key
from iclr_kg.index.text import fold, natural_key, simplified
from iclr_kg.kinds import LISTED
from iclr_kg.topics import HAN

iclr = vocab.iclr


DCTERMS_TITLE = NamedNode(vocab.DCTERMS + "title")


AUTHOR_OF, CREDITED, PART_OF = iclr("authorOf"), iclr("creditedOrganization"), iclr("subOrganizationOf")


REVIEW_OF, RATING, SUBMITTED_TO = iclr("reviewOf"), iclr("rating"), iclr("submittedTo")


NAME_PREDICATES = (
    iclr("title"),
    iclr("alternativeTitle"),  # found by any spelling a source writes; labelled by the preferred one
    iclr("name"),
    vocab.RDFS_LABEL,
    iclr("nativeName"),
    iclr("alias"),
    DCTERMS_TITLE,
)


@dataclass
class _Entity:
    iri: str
    kind: str
    key: str
    names: list[tuple[str, str, str | None]]  # (predicate local name, text, language)
    titles: dict[str, int]  # a title -> how many source graphs state it
    label: str = ""
    label_zh: str = ""
    facts: str = ""
    facts_zh: str = ""  # the facts line with linked entities' Chinese names
    year: int | None = None
    papers: int = 0


TYPED = "SELECT DISTINCT ?e WHERE { ?e a ?type }"  # each typed subject once (most have ten types)


NAMING = {predicate.value.rsplit("#", 1)[-1].rsplit("/", 1)[-1]: predicate for predicate in NAME_PREDICATES}


NAMES = {  # one query per naming property (by its local name): a third cheaper than one over all seven
    local: f"SELECT ?e ?name (LANG(?name) AS ?lang) WHERE {{ ?e <{predicate.value}> ?name FILTER (isLiteral(?name)) }}"
    for local, predicate in NAMING.items()
}


TITLES = "SELECT ?e ?title WHERE { GRAPH ?source { ?e iclr:title ?title } }"  # a row per source graph stating it


def _entities(typed: list[list[str]], names: dict[str, list[list[str]]], titles: list[list[str]]) -> dict[str, _Entity]:
    """Every entity with a type (TYPED), the names it goes by in the merged default graph
    (NAMES) and its titles per source graph (TITLES, for ranked_titles)."""
    found: dict[str, _Entity] = {}
    for (iri,) in typed:  # a blank node ("_:b1" in CSV) is no entity: kind_and_key wants our IRIs
        if iri not in found and (parsed := kind_and_key(iri)):
            found[iri] = _Entity(iri, *parsed, names=[], titles={})
    for local, rows in names.items():
        for iri, text, language in rows:
            entity = found.get(iri)
            if entity is not None:
                entity.names.append((local, text, language or None))
    for iri, title in titles:
        entity = found.get(iri)
        if entity is not None:
            entity.titles[title] = entity.titles.get(title, 0) + 1
    return found


def ranked_titles(stated: Mapping[str, int]) -> list[str]:
    """A paper's titles, the display title first: the one most sources state (articles may
    shorten or translate it), then in alphabetical order. Pages and the index agree by this."""
    return [title for title, _ in sorted(stated.items(), key=lambda t: (-t[1], t[0]))]


def _label(entity: _Entity) -> tuple[str, str]:
    """(English label, Chinese label) from the names, by the kind's own naming property: the
    ranked title, else the least name, else the least title, else the least English
    `rdfs:label`; the least Chinese `rdfs:label` or native name. The least of several, as for
    names: the same whatever order a store reads them in. One pass over the names (a dict of
    lists per entity was a third of the index's row time)."""
    least: dict[str, str] = {}  # "name", "title", "en" (an English label), "zh" (a Chinese one)
    for local, text, language in entity.names:
        if local == "name" or local == "title":
            slot = local
        elif local == "label" and language == "en":
            slot = "en"
        elif (local == "label" or local == "nativeName") and language and language.startswith("zh"):
            slot = "zh"
        else:
            continue
        if slot not in least or text < least[slot]:
            least[slot] = text
    english = ranked_titles(entity.titles)[0] if entity.titles else ""
    label = english or least.get("name") or least.get("title") or least.get("en", "")
    # shown on pages in Simplified (zh-Hans), whatever script a source used; a name written in
    # Chinese (an article's title in Traditional script) is its own Chinese label, in Simplified
    chinese = least.get("zh", "") or (label if HAN.search(label) else "")
    return label, simplified(chinese)


def _select(store: ReadableGraph, query: str) -> list[list[str]]:
    """All solutions of `query` as rows of values ("" where unbound), in the order of its SELECT."""
    return _table(store.query(query, prefixes=vocab.QUERY_PREFIXES))


def _solutions(store: ReadableGraph, kind: str, query: str, only: set[str] | None) -> list[list[str]]:
    """The rows of a FACTS or DERIVED query: for all entities, or for those of `only` of that
    kind, one query each with ?e bound (Oxigraph then starts from the entity; a VALUES block was
    joined after evaluating the whole pattern)."""
    if only is None:
        return _select(store, query)
    entity, rows = Variable("e"), []
    for iri in sorted(only):
        parsed = kind_and_key(iri)
        if parsed is not None and parsed[0] == kind:
            bound = {entity: NamedNode(iri)}
            rows += _table(store.query(query, prefixes=vocab.QUERY_PREFIXES, substitutions=bound))
    return rows


def _table(solutions: QuerySolutions) -> list[list[str]]:
    """Solutions as rows of plain values. Oxigraph evaluates them and writes them as SPARQL CSV
    without holding the GIL, and the csv module reads that in C: the queries of `_described`
    run beside its own thread, where a Python object per solution took the GIL for every row
    (the authorship query: 0.6 s alone, 1.1 s beside Python work)."""
    text = serialized(solutions, QueryResultsFormat.CSV).decode("utf-8")
    return list(csv.reader(io.StringIO(text, newline="")))[1:]


def _described(store: ReadableGraph, only: set[str] | None = None) -> dict[str, _Entity]:
    """The entities (`_entities`) with their facts and derived labels. The queries run on two
    threads (`_table`: without the GIL) while this one reads the entities' names, by query for a
    whole index and by pattern for a patch (`_pattern_rows`), and puts the rows together."""
    pool = _threads()
    facts = [(kind, pool.submit(_solutions, store, kind, said.query, only)) for kind, said in FACTS.items()]
    derived = [pool.submit(_solutions, store, kind, query, only) for kind, query in DERIVED.items()]
    if only is None:
        typed, titles = pool.submit(_select, store, TYPED), pool.submit(_select, store, TITLES)
        names = {local: pool.submit(_select, store, query) for local, query in NAMES.items()}
        found = _entities(typed.result(), {local: n.result() for local, n in names.items()}, titles.result())
    else:
        found = _entities(*_pattern_rows(store, only))
    _add_facts(found, [(kind, f.result()) for kind, f in facts], [d.result() for d in derived])
    return found


_THREADS: dict[int, ThreadPoolExecutor] = {}


def _threads() -> ThreadPoolExecutor:
    """This process's two threads for `_described`, kept: a writer patches the index on every
    update, and starting two threads each time cost more than the patch's queries."""
    pid = os.getpid()  # a forked child does not inherit the threads, only the object
    if pid not in _THREADS:
        _THREADS.clear()
        _THREADS[pid] = ThreadPoolExecutor(max_workers=2, thread_name_prefix="index")
    return _THREADS[pid]


def _pattern_rows(
    store: ReadableGraph, only: set[str]
) -> tuple[list[list[str]], dict[str, list[list[str]]], list[list[str]]]:
    """The rows of TYPED, NAMES and TITLES for the entities `only`, read by pattern: a patch
    names a few thousand entities, and eight SPARQL queries each (parsed every time) took twice
    as long as these lookups. tests/test_store.py checks that a patch gives a whole index's rows."""
    default = DefaultGraph()
    subjects = [NamedNode(iri) for iri in sorted(only)]
    typed = [[s.value] for s in subjects if next(store.quads_for_pattern(s, vocab.RDF_TYPE, None, default), None)]
    names: dict[str, list[list[str]]] = {}
    for local, predicate in NAMING.items():
        names[local] = [
            [s.value, q.object.value, q.object.language or ""]
            for s in subjects
            for q in store.quads_for_pattern(s, predicate, None, default)
            if isinstance(q.object, Literal)
        ]
    titles = [
        [s.value, value(q.object)]
        for s in subjects
        for q in store.quads_for_pattern(s, iclr("title"), None, None)
        if not isinstance(q.graph_name, DefaultGraph)
    ]
    return typed, names, titles


def _add_facts(
    found: dict[str, _Entity], facts: list[tuple[str, list[list[str]]]], derived_rows: list[list[list[str]]]
) -> None:
    """Each entity's facts (FACTS: ?e, ?a..?d, ?y, ?n) and, for those that only link others, the
    label DERIVED from what they link (?e, ?label; "" where a part was unbound)."""
    for kind, rows in facts:
        for iri, a, b, c, d, year, papers, az, bz, dz in rows:
            entity = found.get(iri)
            if entity is None or entity.kind != kind:
                continue
            entity.facts = FACTS[kind].line([a, b, c, d])
            # in Chinese: the same line with each name its Chinese one, in Simplified script (the
            # page's words around them are the page's to translate: html.readable_facts)
            entity.facts_zh = simplified(FACTS[kind].line([az or a, bz or b, c, dz or d]))
            entity.year = int(year[:4]) if year[:4].isdigit() and int(year[:4]) > 0 else None
            entity.papers = int(papers) if papers else 0
    derived: dict[str, str] = {}
    for rows in derived_rows:
        for iri, label in rows:
            if label and (iri not in derived or label < derived[iri]):
                derived[iri] = label  # the least of several (a paper with two titles): any store, same index
    for iri, label in derived.items():
        entity = found.get(iri)
        if entity is not None and not entity.label:
            entity.label = label


def build_index(store: ReadableGraph, generation: Path) -> Path:
    """Write the index of `store` (the generation at `generation`) beside it; returns its path.

    Written to a temporary name and renamed, so a reader finds the whole index or none.
    """
    found = _described(store)
    path = index_path(generation)
    tmp = path.with_name(f".{path.name}-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        db.executescript(_DDL)
        db.execute("INSERT INTO meta VALUES ('version', ?)", (str(SCHEMA_VERSION),))
        db.executemany(
            "INSERT INTO entity (id, iri, kind, key, label, label_zh, facts, sort, year, papers, names, natural, "
            "facts_zh) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _rows(found.values()),
        )
        _add_authorships(db, _select(store, AUTHORSHIPS))
        _add_credits(db, _select(store, CREDITS))
        _add_ratings(db, _select(store, RATINGS))
        _add_topics(db, _select(store, TOPIC_TEXTS))
        searched = ",".join(f"'{k}'" for k in LISTED)
        db.execute(f"INSERT INTO words (rowid, names) SELECT id, names FROM entity WHERE kind IN ({searched})")
        db.execute(f"INSERT INTO grams (rowid, names) SELECT id, names FROM entity WHERE kind IN ({searched})")
        db.commit()
    finally:
        db.close()
    os.replace(tmp, path)
    return path


def _rows(entities: Iterable[_Entity]) -> Iterator[tuple[object, ...]]:
    for number, entity in enumerate(sorted(entities, key=lambda e: e.iri), start=1):
        yield _row(number, entity)


def _row(number: int, entity: _Entity) -> tuple[object, ...]:
    english, chinese = _label(entity)
    if not english and entity.kind == "paper":  # its title was taken down (iclr:titleWithdrawn)
        withdrawn = terms.packaged()
        english = f"[{withdrawn.label('titleWithdrawn')}: {entity.key}]"
        chinese = chinese or f"[{withdrawn.label('titleWithdrawn', 'zh')}：{entity.key}]"
    label = english or entity.label or entity.key
    names = sorted({text for _, text, _ in entity.names} | {label, entity.key})
    folded = " | ".join(dict.fromkeys(fold(n) for n in names))
    return (number, entity.iri, entity.kind, entity.key, label, chinese, entity.facts, fold(label),
            entity.year, entity.papers, folded, natural_key(fold(label)), entity.facts_zh)  # fmt: skip


AUTHORSHIPS = "SELECT ?person ?paper WHERE { ?person iclr:authorOf ?paper }"


TOPIC_PREDICATES = (iclr("title"), iclr("keyword"), iclr("abstract"))


TOPIC_TEXTS = (  # every paper's texts of TOPIC_PREDICATES, for a whole index (a patch reads them by pattern)
    f"SELECT ?paper ?text WHERE {{ VALUES ?p {{ {' '.join(f'<{p.value}>' for p in TOPIC_PREDICATES)} }} ?paper ?p ?text }}"
)


def _add_topics(db: sqlite3.Connection, rows: Iterable[Sequence[str]], ids: Mapping[str, int] | None = None) -> None:
    """Each paper's texts (rows of paper IRI and text) as one row of `topics`, by its entity id
    (`ids`: IRI to id, read from the entity table if not given)."""
    texts: dict[str, list[str]] = {}
    for paper, text in rows:
        texts.setdefault(paper, []).append(text)
    if ids is None:
        ids = dict(db.execute("SELECT iri, id FROM entity WHERE kind = 'paper'"))
    db.executemany(
        "INSERT INTO topics (rowid, text) VALUES (?, ?)",
        ((ids[paper], "\n".join(sorted(found))) for paper, found in texts.items() if paper in ids),
    )


def _staged(db: sqlite3.Connection, table: str, columns: str, rows: Iterable[Sequence[Any]]) -> None:
    """`rows` in the emptied temporary table `table` (`columns` its SQL column list), from which
    an INSERT ... SELECT then writes them by their entities' ids."""
    db.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table} ({columns})")
    db.execute(f"DELETE FROM {table}")
    width = columns.count(",") + 1
    db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * width)})", (tuple(row[:width]) for row in rows))


def _add_authorships(db: sqlite3.Connection, pairs: Iterable[Sequence[str]]) -> None:
    """Rows of the authorship table for (person IRI, paper IRI) pairs, by their entities' ids
    (a pair whose person or paper has no entity row is left out)."""
    _staged(db, "pairs", "person TEXT, paper TEXT", pairs)
    db.execute(
        "INSERT OR IGNORE INTO authorship SELECT a.id, b.id FROM pairs "
        "JOIN entity a ON a.iri = pairs.person JOIN entity b ON b.iri = pairs.paper"
    )


CREDITS = """SELECT ?organization ?paper ?via WHERE {
  { ?paper iclr:creditedOrganization ?organization }
  UNION { ?paper iclr:creditedOrganization ?via . ?via iclr:subOrganizationOf ?organization }
}"""


def _add_credits(db: sqlite3.Connection, rows: Iterable[Sequence[str]]) -> None:
    """Rows of the credit table for (organization, paper, via or "") IRIs, by entity ids."""
    _staged(db, "credits", "organization TEXT, paper TEXT, via TEXT", rows)
    db.execute(
        "INSERT OR IGNORE INTO credit SELECT o.id, p.id, COALESCE(v.id, 0) FROM credits "
        "JOIN entity o ON o.iri = credits.organization JOIN entity p ON p.iri = credits.paper "
        "LEFT JOIN entity v ON v.iri = credits.via AND credits.via != ''"
    )


RATINGS = """SELECT ?paper ?edition (AVG(?rating) AS ?average) (COUNT(?rating) AS ?ratings) WHERE {
  ?paper iclr:submittedTo ?edition . ?review iclr:reviewOf ?paper ; iclr:rating ?rating
} GROUP BY ?paper ?edition"""


def _add_ratings(db: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    """Rows of the rating table for (paper, edition, average, ratings), by entity ids."""
    typed = ((r[0], r[1], float(r[2]), int(r[3])) for r in rows)  # SPARQL CSV gives text
    _staged(db, "ratings", "paper TEXT, edition TEXT, average REAL, ratings INTEGER", typed)
    db.execute(
        "INSERT OR REPLACE INTO rating SELECT p.id, e.id, ratings.average, ratings.ratings FROM ratings "
        "JOIN entity p ON p.iri = ratings.paper JOIN entity e ON e.iri = ratings.edition"
    )


def ensure_index(store: ReadableGraph, generation: Path) -> Path:
    """The index of a generation, built now if it has none (a generation from before indexes)."""
    path = index_path(generation)
    if not current_index(path):
        build_index(store, generation)
    return path
