"""The entity index: every entity's kind, label (English and Chinese), key facts and names, for
people: labels in result tables, search, and the lists of each kind.

One SQLite file beside each store generation (`<generation>.index.sqlite`), built from that
generation's default graph before it is published, by a build and by every update alike, so it
swaps with the store: a page never labels one generation's IRIs with another's names. Search
uses FTS5 (in Python's standard library): a word index with prefixes and accent folding, a
trigram index for substrings (Chinese included) and, when neither finds anything, for names
a typo away. Papers are also found by topic: their titles, keywords and abstracts in a stemmed
word index (`topics.py` turns a query into its expression, with a table of synonyms).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import functools
import io
import os
import re
import shutil
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from pyoxigraph import DefaultGraph, Literal, NamedNode, QueryResultsFormat, QuerySolutions, Variable

from iclr_kg import terms, vocab
from iclr_kg.graph import ReadableGraph, serialized, value
from iclr_kg.kinds import LISTED
from iclr_kg.topics import HAN, topic_expression

SUFFIX = ".index.sqlite"
SCHEMA_VERSION = 6  # 2: the authorship table; 3: the credit table; 4: the rating table; 5: topics; 6: natural
# Kinds a person looks for by name; the others (authorships, reviews...) get labels only.
TOPIC = "topic"  # search's tab of papers by what they are about (title, keywords, abstract)
RANKED_TOPICS = 2_000  # topic matches ranked by relevance up to here; more are listed in order
# The highest page number a list or sitemap accepts: far past any kind's last page, and well inside
# SQLite's 64-bit OFFSET, which a larger number overflows (a 500 instead of a 404).
MAX_PAGE = 10**9
# A list's orders: by name in natural order ("paper 9" before "paper 10": the `natural` column,
# numbers zero-padded), newest first, most papers first.
SORTS = {"name": "natural", "year": "year DESC, natural", "papers": "papers DESC, natural"}

iclr = vocab.iclr
DCTERMS_TITLE = NamedNode(vocab.DCTERMS + "title")
AUTHOR_OF, CREDITED, PART_OF = iclr("authorOf"), iclr("creditedOrganization"), iclr("subOrganizationOf")
REVIEW_OF, RATING, SUBMITTED_TO = iclr("reviewOf"), iclr("rating"), iclr("submittedTo")
NAME_PREDICATES = (iclr("title"), iclr("name"), vocab.RDFS_LABEL, iclr("nativeName"), iclr("alias"), DCTERMS_TITLE)


def index_path(generation: Path) -> Path:
    return generation.with_name(generation.name + SUFFIX)


def fold(text: str) -> str:
    """Case, accents, width and Chinese script folded: "Gémp" and "ＧＥＭＰ" both become "gemp",
    "杰出論文獎" and "杰出论文奖" both "杰出论文奖" (OpenCC's Traditional-to-Simplified tables)."""
    if text.isascii():  # nothing to decompose: most names and titles, several times faster
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    return _simplified(folded) if HAN.search(folded) else folded


@functools.cache
def _converter() -> Any:
    import opencc  # here: its tables load in 30 ms, only once a Chinese name is folded

    return opencc.OpenCC("t2s")


def _simplified(text: str) -> str:
    return str(_converter().convert(text))


# --------------------------------------------------------------------------------------------
# Building


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
    year: int | None = None
    papers: int = 0


def kind_and_key(iri: str) -> tuple[str, str] | None:
    """(kind, key) of one of our entity IRIs (…/resource/paper/NzTU59SYbNq), else None."""
    if not iri.startswith(vocab.RESOURCE_BASE):
        return None
    kind, _, key = iri[len(vocab.RESOURCE_BASE) :].partition("/")
    return (kind, key) if kind in vocab.ENTITY_KINDS and key else None


TYPED = "SELECT DISTINCT ?e WHERE { ?e a ?type }"  # each typed subject once (most have ten types)
NAMING = {predicate.value.rsplit("#", 1)[-1].rsplit("/", 1)[-1]: predicate for predicate in NAME_PREDICATES}
NAMES = {  # one query per naming property (by its local name): a third cheaper than one over all six
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
    chinese = least.get("zh", "")  # shown on pages in Simplified (zh-Hans), whatever script a source used
    return english or least.get("name") or least.get("title") or least.get("en", ""), (
        _simplified(chinese) if HAN.search(chinese) else chinese
    )


FACTS = {
    "paper": """
SELECT ?e (SAMPLE(?edition) AS ?a) (SAMPLE(?decision) AS ?b) (SAMPLE(?presentation) AS ?c) (SAMPLE(?first) AS ?d)
       (SAMPLE(?year) AS ?y) (COUNT(DISTINCT ?award) AS ?n) WHERE {
  ?e a iclr:Paper .
  OPTIONAL { ?e iclr:submittedTo ?ed . ?ed iclr:name ?edition . OPTIONAL { ?ed iclr:year ?year } }
  OPTIONAL { ?e iclr:decision ?decision }
  OPTIONAL { ?e iclr:presentationType ?presentation }
  OPTIONAL { ?e iclr:firstAuthor/iclr:name ?first }
  OPTIONAL { ?e iclr:receivedAward ?award }
} GROUP BY ?e""",
    "person": """
SELECT ?e (SAMPLE(?employer) AS ?a) (SAMPLE(?school) AS ?b) ("" AS ?c) ("" AS ?d) (0 AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) WHERE {
  ?e a iclr:Person .
  OPTIONAL { ?e iclr:employedBy/iclr:name ?employer }
  OPTIONAL { ?e iclr:affiliatedWith/iclr:name ?school }
  OPTIONAL { ?e iclr:authorOf ?paper }
} GROUP BY ?e""",
    "organization": """
SELECT ?e (SAMPLE(?cls) AS ?a) (SAMPLE(?parent) AS ?b) ("" AS ?c) ("" AS ?d) (0 AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) WHERE {
  ?e a iclr:Organization .
  OPTIONAL { ?e a ?cls . FILTER (?cls != iclr:Organization && ?cls != iclr:Agent && STRSTARTS(STR(?cls), STR(iclr:))) }
  OPTIONAL { ?e iclr:subOrganizationOf/iclr:name ?parent }
  OPTIONAL { ?paper iclr:creditedOrganization ?e }
} GROUP BY ?e""",
    "edition": """
SELECT ?e (SAMPLE(?city) AS ?a) (SAMPLE(?country) AS ?b) ("" AS ?c) ("" AS ?d) (SAMPLE(?year) AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) WHERE {
  ?e a iclr:ConferenceEdition .
  OPTIONAL { ?e iclr:year ?year } OPTIONAL { ?e iclr:city ?city } OPTIONAL { ?e iclr:country ?country }
  OPTIONAL { ?paper iclr:submittedTo ?e }
} GROUP BY ?e""",
    "award": """
SELECT ?e (SAMPLE(?edition) AS ?a) ("" AS ?b) ("" AS ?c) ("" AS ?d) (SAMPLE(?year) AS ?y)
       (COUNT(DISTINCT ?paper) AS ?n) WHERE {
  ?e a iclr:Award .
  OPTIONAL { ?e iclr:awardedAt ?ed . ?ed iclr:name ?edition . OPTIONAL { ?ed iclr:year ?year } }
  OPTIONAL { ?c iclr:conferredAward ?e ; iclr:conferredOn ?paper }
} GROUP BY ?e""",
    "source": """
SELECT ?e (SAMPLE(?outlet) AS ?a) (SAMPLE(?lang) AS ?b) ("" AS ?c) ("" AS ?d) (0 AS ?y) (0 AS ?n) WHERE {
  ?e a iclr:Source .
  OPTIONAL { ?e iclr:outlet ?outlet } OPTIONAL { ?e schema:inLanguage ?lang }
} GROUP BY ?e""",
}
# Labels of the entities that only link others: built from what they link.
DERIVED = {
    "authorship": """
SELECT ?e (CONCAT(?written, ", author ", STR(?position), " of ", ?title) AS ?label) WHERE {
  ?e a iclr:Authorship ; iclr:authorNameAsWritten ?written ; iclr:authorPosition ?position ;
     iclr:authorshipOf/iclr:title ?title }""",
    "review": """
SELECT ?e (CONCAT("Review of ", ?title, COALESCE(CONCAT(" (rating ", STR(?rating), ")"), "")) AS ?label) WHERE {
  ?e a iclr:Review ; iclr:reviewOf/iclr:title ?title . OPTIONAL { ?e iclr:rating ?rating } }""",
    "role": """
SELECT ?e (CONCAT(?person, ": ", ?role, " at ", ?org) AS ?label) WHERE {
  ?e a iclr:Role ; iclr:roleName ?role ; iclr:roleAt/iclr:name ?org ; iclr:roleOf/iclr:name ?person }""",
    "conferral": """
SELECT ?e (CONCAT(?award, ": ", ?title) AS ?label) WHERE {
  ?e a iclr:AwardConferral ; iclr:conferredAward/iclr:name ?award ; iclr:conferredOn/iclr:title ?title }""",
}


def _facts(kind: str, row: list[str]) -> str:
    """One line of what matters about an entity, for search results and lists. Decisions and
    presentation types stay terms (`iclr:Accepted (iclr:Oral)`): a page shows them in its reader's
    language (`terms.Terms.readable`)."""
    a, b, c, d = row
    terms_ = [f"iclr:{x.rsplit('#', 1)[-1]}" if x else "" for x in (b, c)]
    if kind == "paper":
        decided = f"{terms_[0]} ({terms_[1]})" if terms_[0] and terms_[1] else terms_[0]
        return " · ".join(x for x in (a, decided, f"{d} et al." if d else "") if x)
    if kind == "organization":  # its kind, a term of the ontology: iclr:University
        kind_term = f"iclr:{a.rsplit('#', 1)[-1]}" if a else ""
        return " · ".join(x for x in (kind_term, f"part of {b}" if b else "") if x)
    return " · ".join(x for x in (a, b) if x)


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
    facts = [(kind, pool.submit(_solutions, store, kind, query, only)) for kind, query in FACTS.items()]
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
        for iri, a, b, c, d, year, papers in rows:
            entity = found.get(iri)
            if entity is None or entity.kind != kind:
                continue
            entity.facts = _facts(kind, [a, b, c, d])
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


_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE entity (id INTEGER PRIMARY KEY, iri TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
                     label TEXT NOT NULL, label_zh TEXT NOT NULL, facts TEXT NOT NULL, sort TEXT NOT NULL,
                     year INTEGER, papers INTEGER NOT NULL, names TEXT NOT NULL, natural TEXT NOT NULL);
CREATE INDEX entity_kind ON entity (kind, natural);
-- who wrote what, by entity id (iclr:authorOf of the default graph): a person's papers and
-- co-authors read here, a prolific person's in milliseconds (SPARQL sorted 31,810 paper IRIs in
-- 3.5 s at 50,000 papers)
CREATE TABLE authorship (person INTEGER NOT NULL, paper INTEGER NOT NULL, PRIMARY KEY (person, paper)) WITHOUT ROWID;
CREATE INDEX authorship_paper ON authorship (paper, person);
-- which organizations a paper credits (via 0), and each organization above a credited one (via:
-- the credited unit): an organization page's papers, years and award papers
CREATE TABLE credit (organization INTEGER NOT NULL, paper INTEGER NOT NULL, via INTEGER NOT NULL,
                     PRIMARY KEY (organization, paper, via)) WITHOUT ROWID;
CREATE INDEX credit_paper ON credit (paper);
-- each rated paper's average public rating and number of ratings, per edition it was submitted
-- to: an edition page's top-rated papers (SPARQL averaged 26,521 ratings in 0.5 s at 50,000 papers)
CREATE TABLE rating (paper INTEGER NOT NULL, edition INTEGER NOT NULL, average REAL NOT NULL,
                     ratings INTEGER NOT NULL, PRIMARY KEY (paper, edition)) WITHOUT ROWID;
CREATE INDEX rating_edition ON rating (edition, average DESC, ratings DESC);
CREATE VIRTUAL TABLE words USING fts5(names, content='', tokenize="unicode61 remove_diacritics 2", prefix='2 3');
CREATE VIRTUAL TABLE grams USING fts5(names, content='', tokenize='trigram');
-- each paper's title, keywords and abstract, stemmed: topic search (rowid: the paper's entity id;
-- the text kept, so that a patch deletes a row by its id alone)
CREATE VIRTUAL TABLE topics USING fts5(text, tokenize="porter unicode61 remove_diacritics 2");
"""


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
            "INSERT INTO entity (id, iri, kind, key, label, label_zh, facts, sort, year, papers, names, natural) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            entity.year, entity.papers, folded, natural_key(fold(label)))  # fmt: skip


def natural_key(text: str) -> str:
    """`text` with every run of digits zero-padded to twelve: ordered as text, "paper 9" comes
    before "paper 10" and "1022" after "110"."""
    return re.sub(r"\d+", lambda m: m.group(0).zfill(12), text)


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


def _patch_topics(db: sqlite3.Connection, store: ReadableGraph, gone: Iterable[int], papers: dict[str, int]) -> None:
    """The topic rows of the entity ids `gone` out; those of `papers` (IRI to entity id) in again,
    read from the store by pattern (a patch touches a few papers)."""
    db.executemany("DELETE FROM topics WHERE rowid = ?", [(number,) for number in gone])
    default = DefaultGraph()
    rows = [
        (iri, value(quad.object))
        for iri in papers
        for predicate in TOPIC_PREDICATES
        for quad in store.quads_for_pattern(NamedNode(iri), predicate, None, default)
    ]
    _add_topics(db, rows, papers)


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


def _patch_credits(db: sqlite3.Connection, store: ReadableGraph, touched: list[tuple[Any, Any, Any]]) -> None:
    """The credit table after a change: all of it again where the organization tree changed
    (rare: a curator's edit), else the rows of each paper whose credits changed, from the store."""
    if any(p == PART_OF for _, p, _ in touched):
        db.execute("DELETE FROM credit")
        _add_credits(db, _select(store, CREDITS))
        return
    papers = sorted({s for s, p, _ in touched if p == CREDITED and isinstance(s, NamedNode)}, key=str)
    if not papers:
        return
    default, rows = DefaultGraph(), []
    for paper in papers:
        for credit in store.quads_for_pattern(paper, CREDITED, None, default):
            rows.append((value(credit.object), paper.value, ""))
            for above in store.quads_for_pattern(credit.object, PART_OF, None, default):
                rows.append((value(above.object), paper.value, value(credit.object)))
    db.executemany(
        "DELETE FROM credit WHERE paper = (SELECT id FROM entity WHERE iri = ?)", [(p.value,) for p in papers]
    )
    _add_credits(db, rows)


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


def _patch_ratings(db: sqlite3.Connection, store: ReadableGraph, touched: list[tuple[Any, Any, Any]]) -> None:
    """The rating rows of each paper whose reviews, ratings or edition changed, from the store."""
    default = DefaultGraph()
    papers: set[str] = set()
    for s, p, o in touched:
        if p == REVIEW_OF and isinstance(o, NamedNode):
            papers.add(o.value)
        elif p == SUBMITTED_TO and isinstance(s, NamedNode):
            papers.add(s.value)
        elif p == RATING and isinstance(s, NamedNode):
            papers |= {value(q.object) for q in store.quads_for_pattern(s, REVIEW_OF, None, default)}
    rows = []
    for paper in sorted(papers):
        node = NamedNode(paper)
        ratings = [
            float(value(r.object))
            for review in store.quads_for_pattern(None, REVIEW_OF, node, default)
            for r in store.quads_for_pattern(review.subject, RATING, None, default)
        ]
        if ratings:
            for edition in store.quads_for_pattern(node, SUBMITTED_TO, None, default):
                rows.append((paper, value(edition.object), sum(ratings) / len(ratings), len(ratings)))
    db.executemany("DELETE FROM rating WHERE paper = (SELECT id FROM entity WHERE iri = ?)", [(p,) for p in papers])
    _add_ratings(db, rows)


def _drop_rows_of(db: sqlite3.Connection, gone: list[int]) -> None:
    """The authorship, credit and rating rows that name an entity that is gone (by its id)."""
    for start in range(0, len(gone), 500):
        batch, marks = gone[start : start + 500], ",".join("?" * len(gone[start : start + 500]))
        db.execute(f"DELETE FROM authorship WHERE person IN ({marks}) OR paper IN ({marks})", batch + batch)
        db.execute(
            f"DELETE FROM credit WHERE organization IN ({marks}) OR paper IN ({marks}) OR via IN ({marks})", batch * 3
        )
        db.execute(f"DELETE FROM rating WHERE paper IN ({marks}) OR edition IN ({marks})", batch * 2)


def _patch_authorships(db: sqlite3.Connection, store: ReadableGraph, touched: list[tuple[Any, Any, Any]]) -> None:
    """The authorship table after a change: each changed iclr:authorOf triple is added or removed
    as the default graph now has it or not."""
    default = DefaultGraph()
    stated: list[tuple[str, str]] = []
    dropped: list[tuple[str, str]] = []
    for s, p, o in touched:
        if p == AUTHOR_OF and isinstance(s, NamedNode) and isinstance(o, NamedNode):
            held = next(store.quads_for_pattern(s, p, o, default), None) is not None
            (stated if held else dropped).append((s.value, o.value))
    _add_authorships(db, stated)
    db.executemany(
        "DELETE FROM authorship WHERE person = (SELECT id FROM entity WHERE iri = ?) "
        "AND paper = (SELECT id FROM entity WHERE iri = ?)",
        dropped,
    )


def neighbourhood(store: ReadableGraph, changed: Iterable[tuple[Any, Any, Any]]) -> set[str]:
    """The entities whose rows a change of the default graph's triples `changed` can alter: the
    entities in them; what a linking entity (DERIVED: an authorship, a conferral...) in them
    links to (an award's row counts the papers its conferrals name); and, where a name, title or
    year changed, what links to that entity (a paper's row shows its edition's name, an
    authorship's label its paper's title). The other rows read only their entity's own links."""
    default = DefaultGraph()
    out: set[str] = set()
    named = {p.value for p in NAME_PREDICATES} | {iclr("year").value}
    for s, p, o in changed:
        out |= {t.value for t in (s, o) if isinstance(t, NamedNode) and kind_and_key(t.value)}
        parsed = kind_and_key(s.value) if isinstance(s, NamedNode) else None
        if parsed is None:
            continue
        if parsed[0] in DERIVED:
            for quad in store.quads_for_pattern(s, None, None, default):
                if isinstance(quad.object, NamedNode) and kind_and_key(quad.object.value):
                    out.add(quad.object.value)
        if p.value in named:
            for quad in store.quads_for_pattern(None, None, s, default):
                if isinstance(quad.subject, NamedNode) and kind_and_key(quad.subject.value):
                    out.add(quad.subject.value)
    return out


def patch_index(
    store: ReadableGraph,
    generation: Path,
    base: Path,
    iris: set[str],
    touched: Iterable[tuple[Any, Any, Any]] = (),
    in_place: bool = False,
) -> Path:
    """The index of `store` (at `generation`), made from the index `base` of a generation that
    differed only in the rows of the entities `iris` (`neighbourhood` of the triples `touched`):
    those rows are computed again, the others kept. An entity keeps its row id; a new one gets
    the next. A base index of an older schema is not patched: the index is built whole.

    A copy of `base` for an incremental build, whose generation has an index of its own.
    `in_place` for an update, whose cost must grow with the change and not with the index
    (copying it is 40 MB at 10,000 papers): the rows change in the file `base` is, and
    `generation`'s index is a link to it. Readers of the generation before see the new rows
    from the commit on, a few milliseconds before the new generation is published: a label or a
    search hit may be one update ahead of the store a page reads, never behind it. The file is
    in WAL mode, so readers are never blocked and never see a half-written patch."""
    if not current_index(base):
        return build_index(store, generation)
    found = _described(store, only=iris)
    path = index_path(generation)
    written = base.resolve() if in_place else path.with_name(f".{path.name}-{os.getpid()}")
    if in_place:
        db = _writing_connection(written)
    else:
        shutil.copyfile(base, written)
        db = sqlite3.connect(written)
    try:
        _patch_rows(db, store, found, iris, touched)
        db.commit()
    except BaseException:
        db.rollback()
        raise
    finally:
        if not in_place:
            db.close()
    if in_place:
        link = path.with_name(f".{path.name}-{os.getpid()}")
        link.unlink(missing_ok=True)
        link.symlink_to(written.name)  # beside it: a relative link
        os.replace(link, path)
    else:
        os.replace(written, path)
    return path


_WRITING: dict[Path, sqlite3.Connection] = {}


def _writing_connection(real: Path) -> sqlite3.Connection:
    """A writer's connection to an index file, kept open between updates (closing the last one
    checkpoints the WAL: a cost per update otherwise). WAL, so readers go on reading while it
    writes; synchronous=NORMAL, as the index is rebuilt from the store whenever in doubt."""
    db = _WRITING.get(real)
    if db is None or not real.exists():
        for held in _WRITING.values():
            held.close()
        _WRITING.clear()
        db = _WRITING[real] = sqlite3.connect(real, timeout=30, check_same_thread=False)  # under the write lock
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
    return db


def _patch_rows(
    db: sqlite3.Connection,
    store: ReadableGraph,
    found: dict[str, _Entity],
    iris: set[str],
    touched: Iterable[tuple[Any, Any, Any]],
) -> None:
    """Replace the rows of the entities `iris` by those `found` for them (what is not found has
    gone), and the authorships, credits and ratings the triples `touched` reach; not committed."""
    wanted, old = sorted(iris), []
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        old += db.execute(
            f"SELECT id, iri, kind, names FROM entity WHERE iri IN ({','.join('?' * len(batch))})", batch
        ).fetchall()
    ids = {iri: number for number, iri, _, _ in old}
    # read before the old rows go: the entity with the highest id may be among them, and a
    # new entity numbered after what is left would take its id
    last = db.execute("SELECT COALESCE(MAX(id), 0) FROM entity").fetchone()[0]
    for table in ("words", "grams"):  # contentless FTS5: a row goes out by its old text
        db.executemany(
            f"INSERT INTO {table} ({table}, rowid, names) VALUES ('delete', ?, ?)",
            [(number, names) for number, _, kind, names in old if kind in LISTED],
        )
    db.executemany("DELETE FROM entity WHERE id = ?", [(number,) for number in ids.values()])
    rows = []
    papers: dict[str, int] = {}  # IRI → entity id, of the papers among them
    for entity in sorted(found.values(), key=lambda e: e.iri):
        if entity.iri not in ids:
            last += 1
        number = ids.get(entity.iri, last)
        rows.append(_row(number, entity))
        if entity.kind == "paper":
            papers[entity.iri] = number
    db.executemany("INSERT INTO entity VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    touched = list(touched)
    _drop_rows_of(db, [number for iri, number in ids.items() if iri not in found])
    _patch_authorships(db, store, touched)
    _patch_credits(db, store, touched)
    _patch_ratings(db, store, touched)
    for table in ("words", "grams"):
        db.executemany(
            f"INSERT INTO {table} (rowid, names) VALUES (?, ?)", [(r[0], r[10]) for r in rows if r[2] in LISTED]
        )
    old_papers = [number for number, _, kind, _ in old if kind == "paper"]
    _patch_topics(db, store, old_papers, papers)


def ensure_index(store: ReadableGraph, generation: Path) -> Path:
    """The index of a generation, built now if it has none (a generation from before indexes)."""
    path = index_path(generation)
    if not current_index(path):
        build_index(store, generation)
    return path


def current_index(path: Path) -> bool:
    """An index is at `path`, written with this schema (an older one is built again)."""
    return path.exists() and schema_version(path) == SCHEMA_VERSION


def schema_version(path: Path) -> int:
    """The schema version an index was written with (0: none, or no index there)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    except sqlite3.Error:
        return 0
    return int(row[0]) if row and str(row[0]).isdigit() else 0


# --------------------------------------------------------------------------------------------
# Reading


@dataclass
class Hit:
    iri: str
    kind: str
    key: str
    label: str
    label_zh: str
    facts: str
    year: int | None
    papers: int

    def as_json(self) -> dict[str, object]:
        return {
            "iri": self.iri,
            "kind": self.kind,
            "label": self.label,
            "label_zh": self.label_zh or None,
            "facts": terms.packaged().readable(self.facts),
            "url": f"/resource/{self.kind}/{self.key}",
        }


_COLUMNS = "e.iri, e.kind, e.key, e.label, e.label_zh, e.facts, e.year, e.papers"


FACTS_PATTERNS = {"decision": "%iclr:{}%", "presentation": "%(iclr:{})%"}
"""How a paper's decision and presentation are found in its facts line (`iclr:Accepted
(iclr:Oral)`): as that token, which no other term contains (LIKE patterns, by ListFilter field)."""


def facts_pattern(field: str, local_name: str) -> str:
    """The LIKE pattern that keeps papers whose `field` (decision or presentation) is that term."""
    return FACTS_PATTERNS[field].format(local_name)


@dataclass(frozen=True)
class ListFilter:
    """What a list of entities is narrowed to: a year, a decision (an iclr:Decision's local name),
    papers all of `people` wrote (IRIs: a person's papers, with a co-author), papers credited to
    `organization` (an IRI; its sub-organizations' papers too)."""

    year: int | None = None
    decision: str | None = None
    people: tuple[str, ...] = ()
    organization: str | None = None
    presentation: str | None = None  # an iclr:PresentationType's local name (Oral)
    awarded: bool = False  # papers with an award only
    topic: str | None = None  # papers whose title, keywords or abstract say it (an FTS5 expression)

    def where(self, kind: str) -> tuple[str, tuple[object, ...]]:
        """The WHERE clause. A paper's decision and presentation are terms of its facts line
        (`iclr:Accepted (iclr:Oral)`): matched as that token, which no other term contains; an
        award paper's row counts its awards."""
        where: list[str] = ["kind = ?"]
        args: list[object] = [kind]
        if self.year is not None:
            where.append("year = ?")
            args.append(self.year)
        for field in FACTS_PATTERNS:
            if (chosen := getattr(self, field)) is not None:
                where.append("facts LIKE ?")
                args.append(facts_pattern(field, chosen))
        if self.awarded:
            where.append("papers > 0")
        if self.topic is not None:
            where.append("e.id IN (SELECT rowid FROM topics WHERE topics MATCH ?)")
            args.append(self.topic)
        for person in self.people:
            where.append("e.id IN (SELECT paper FROM authorship WHERE person = (SELECT id FROM entity WHERE iri = ?))")
            args.append(person)
        if self.organization is not None:
            where.append(
                "e.id IN (SELECT paper FROM credit WHERE organization = (SELECT id FROM entity WHERE iri = ?))"
            )
            args.append(self.organization)
        return " AND ".join(where), tuple(args)

    def without(self, field: str) -> ListFilter:
        """This filter with the choice of one field (a facet) undone."""
        return dataclasses.replace(self, **{field: False if field == "awarded" else None})  # type: ignore[arg-type]


class Index:
    """Read-only access to one generation's index (a connection per use: SQLite opens in microseconds)."""

    def __init__(self, path: Path):
        self.path = path

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            yield db
        finally:
            db.close()

    def labels(self, iris: Iterable[str]) -> dict[str, tuple[str, str]]:
        """IRI -> (label, Chinese label) for those of `iris` that are entities."""
        wanted = sorted({i for i in iris if i.startswith(vocab.RESOURCE_BASE)})
        out: dict[str, tuple[str, str]] = {}
        with self._db() as db:
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                marks = ",".join("?" * len(batch))
                query = f"SELECT iri, label, label_zh FROM entity WHERE iri IN ({marks})"
                out.update((iri, (label, zh)) for iri, label, zh in db.execute(query, batch))
        return out

    def entity(self, iri: str) -> Hit | None:
        with self._db() as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM entity e WHERE iri = ?", (iri,)).fetchone()
        return Hit(*row) if row else None

    def browse(
        self,
        kind: str,
        sort: str = "name",
        limit: int = 100,
        offset: int = 0,
        narrowed: ListFilter = ListFilter(),
    ) -> tuple[list[Hit], int]:
        """One page of a kind's entities in `sort` order (SORTS), and how many there are, as
        `narrowed` narrows them."""
        order = SORTS.get(sort, SORTS["name"])
        where, args = narrowed.where(kind)
        with self._db() as db:
            total = db.execute(f"SELECT COUNT(*) FROM entity e WHERE {where}", args).fetchone()[0]
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM entity e WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
                (*args, limit, offset),
            ).fetchall()
        return [Hit(*row) for row in rows], total

    def facets(
        self,
        kind: str,
        decisions: Iterable[str],
        narrowed: ListFilter = ListFilter(),
        presentations: Iterable[str] = (),
    ) -> dict[str, list[tuple[Any, int]]]:
        """What a list can be narrowed to, each value with how many it would keep under the other
        filters chosen: years and, for papers, `decisions`, `presentations` and award papers. One
        pass over the kept rows counts every value per year (a person's 46,962 papers at 50,000
        papers: 85 ms, where a count per decision took 40 ms each); a facet already chosen is
        counted again without its own choice."""
        facets: dict[str, tuple[str, list[str]]] = {}  # facet: (its field in ListFilter, the SUM terms)
        values: dict[str, list[Any]] = {}
        if kind == "paper":
            values = {"decision": list(decisions), "presentation": list(presentations), "award": ["yes"]}
            facets = {
                "decision": ("decision", ["facts LIKE ?"] * len(values["decision"])),
                "presentation": ("presentation", ["facts LIKE ?"] * len(values["presentation"])),
                "award": ("awarded", ["papers > 0"]),
            }

        def arguments(facet: str) -> list[str]:
            return [facts_pattern(facet, v) for v in values[facet]] if facet in FACTS_PATTERNS else []

        with self._db() as db:

            def per_year(without: ListFilter, chosen: list[str]) -> list[Any]:
                where, args = dataclasses.replace(without, year=None).where(kind)
                sums = "".join(f", SUM({term})" for facet in chosen for term in facets[facet][1])
                marks = [a for facet in chosen for a in arguments(facet)]
                return db.execute(
                    f"SELECT year, COUNT(*){sums} FROM entity e WHERE {where} GROUP BY year ORDER BY year",
                    (*marks, *args),
                ).fetchall()

            def summed(rows: list[Any], chosen: list[str]) -> dict[str, list[tuple[Any, int]]]:
                kept = [r for r in rows if narrowed.year is None or r[0] == narrowed.year]
                out, column = {}, 2
                for facet in chosen:
                    counted = [(v, sum(r[column + i] or 0 for r in kept)) for i, v in enumerate(values[facet])]
                    out[facet] = [(v, n) for v, n in counted if n]
                    column += len(values[facet])
                return out

            unchosen = [f for f, (field, _) in facets.items() if not getattr(narrowed, field)]
            rows = per_year(narrowed, unchosen)
            found = {"year": [(r[0], r[1]) for r in rows if r[0] is not None]} | summed(rows, unchosen)
            for facet in facets.keys() - set(unchosen):  # chosen: counted without its own choice
                field = facets[facet][0]
                without = narrowed.without(field)
                found |= summed(per_year(without, [facet]), [facet])
        return {facet: found[facet] for facet in ["year", *facets]}

    def _counted_rows(self, iri: str, count: str, rows: str, limit: int, *more: int) -> tuple[list[Any], int]:
        """How many rows `count` finds for the entity `iri` (its id the one parameter), and the
        first `limit` rows of `rows` (its id, the limit, then `more`: an offset); nothing for an
        unknown entity."""
        with self._db() as db:
            found = db.execute("SELECT id FROM entity WHERE iri = ?", (iri,)).fetchone()
            if found is None:
                return [], 0
            total = db.execute(count, found).fetchone()[0]
            return db.execute(rows, (found[0], limit, *more)).fetchall(), total

    def papers_of(self, person: str, limit: int, offset: int = 0) -> tuple[list[tuple[str, int | None]], int]:
        """A person's papers, newest first (then in natural order: paper 9 before paper 10), the
        `limit` from `offset`, with their years; and how many there are."""
        listed, total = self._counted_rows(
            person,
            "SELECT COUNT(*) FROM authorship WHERE person = ?",
            "SELECT e.iri, e.year FROM authorship a JOIN entity e ON e.id = a.paper WHERE a.person = ? "
            "ORDER BY e.year IS NULL, e.year DESC, e.natural LIMIT ? OFFSET ?",
            limit,
            offset,
        )
        return listed, total

    def organizations_of(self, person: str, limit: int) -> list[tuple[str, int, int | None, int | None]]:
        """The organizations a person's papers credit directly, most papers first (then by IRI),
        cut at `limit`: (organization, papers, first year, last year)."""
        with self._db() as db:
            return db.execute(
                "SELECT o.iri, COUNT(DISTINCT c.paper) AS n, MIN(p.year), MAX(p.year) FROM authorship a "
                "JOIN entity me ON me.id = a.person JOIN credit c ON c.paper = a.paper AND c.via = 0 "
                "JOIN entity o ON o.id = c.organization JOIN entity p ON p.id = a.paper WHERE me.iri = ? "
                "GROUP BY c.organization ORDER BY n DESC, o.iri LIMIT ?",
                (person, limit),
            ).fetchall()

    def papers_per_year(self, person: str) -> list[tuple[int, int]]:
        """(year, papers) of a person, in year order."""
        with self._db() as db:
            return db.execute(
                "SELECT p.year, COUNT(DISTINCT a.paper) FROM authorship a JOIN entity me ON me.id = a.person "
                "JOIN entity p ON p.id = a.paper WHERE me.iri = ? AND p.year IS NOT NULL GROUP BY p.year ORDER BY p.year",
                (person,),
            ).fetchall()

    def co_authors(self, person: str, limit: int, offset: int = 0) -> tuple[list[tuple[str, int]], int]:
        """Who wrote papers with a person, most papers together first (then by IRI), the `limit`
        from `offset`, with how many papers each; and how many co-authors there are."""
        with self._db() as db:  # one pass over the pairs: every co-author, then the first `limit`
            together = db.execute(
                "SELECT e.iri, t.n FROM (SELECT b.person AS other, COUNT(*) AS n FROM authorship a "
                "JOIN authorship b ON b.paper = a.paper JOIN entity me ON me.id = a.person "
                "WHERE me.iri = ? AND b.person != a.person GROUP BY b.person) t JOIN entity e ON e.id = t.other",
                (person,),
            ).fetchall()
        together.sort(key=lambda row: (-row[1], row[0]))
        return together[offset : offset + limit], len(together)

    def credited_papers(
        self, organization: str, limit: int, offset: int = 0
    ) -> tuple[list[tuple[str, int | None, list[str]]], int]:
        """The papers crediting an organization or a unit under it, newest first (then in natural
        order), the `limit` from `offset`, each with its year and the units it is credited
        through (none: directly); and how many there are."""
        listed, total = self._counted_rows(
            organization,
            "SELECT COUNT(DISTINCT paper) FROM credit WHERE organization = ?",
            "SELECT p.iri, p.year, GROUP_CONCAT(v.iri, ' ') FROM credit c JOIN entity p ON p.id = c.paper "
            "LEFT JOIN entity v ON v.id = c.via WHERE c.organization = ? GROUP BY c.paper "
            "ORDER BY p.year IS NULL, p.year DESC, p.natural LIMIT ? OFFSET ?",
            limit,
            offset,
        )
        return [(paper, year, sorted((vias or "").split())) for paper, year, vias in listed], total

    def top_rated(self, edition: str, limit: int) -> list[tuple[str, float, int]]:
        """An edition's papers by average public rating, highest first (then more ratings, then
        IRI), cut at `limit`: (paper, average, number of ratings)."""
        with self._db() as db:
            return db.execute(
                "SELECT p.iri, r.average, r.ratings FROM rating r JOIN entity p ON p.id = r.paper "
                "JOIN entity e ON e.id = r.edition WHERE e.iri = ? ORDER BY r.average DESC, r.ratings DESC, p.iri LIMIT ?",
                (edition, limit),
            ).fetchall()

    def credited_counts(self) -> list[tuple[str, int]]:
        """Every credited organization with the papers crediting it or a unit under it (its page's
        count), most first, then in natural order."""
        with self._db() as db:
            return db.execute(
                "SELECT o.iri, COUNT(DISTINCT c.paper) AS n FROM credit c JOIN entity o ON o.id = c.organization "
                "GROUP BY c.organization ORDER BY n DESC, o.natural"
            ).fetchall()

    def credited_per_year(self, organization: str) -> list[tuple[int, int]]:
        """(year, papers) crediting an organization or a unit under it, in year order."""
        with self._db() as db:
            return db.execute(
                "SELECT p.year, COUNT(DISTINCT c.paper) FROM credit c JOIN entity p ON p.id = c.paper "
                "JOIN entity o ON o.id = c.organization WHERE o.iri = ? AND p.year IS NOT NULL "
                "GROUP BY p.year ORDER BY p.year",
                (organization,),
            ).fetchall()

    def credited_award_papers(self, organization: str, limit: int) -> tuple[list[str], int]:
        """The papers with an award (the count a paper's row keeps) that credit an organization
        or a unit under it, newest first, cut at `limit`; and how many there are."""
        listed, total = self._counted_rows(
            organization,
            "SELECT COUNT(DISTINCT c.paper) FROM credit c JOIN entity p ON p.id = c.paper "
            "WHERE c.organization = ? AND p.papers > 0",
            "SELECT DISTINCT p.iri FROM credit c JOIN entity p ON p.id = c.paper WHERE c.organization = ? "
            "AND p.papers > 0 ORDER BY p.year IS NULL, p.year DESC, p.natural LIMIT ?",
            limit,
        )
        return [iri for (iri,) in listed], total

    def edition_year(self, key: str) -> int | None:
        """The year of the edition keyed `key` (iclr2021 -> 2021), for `?edition=` on lists."""
        with self._db() as db:
            row = db.execute("SELECT year FROM entity WHERE kind = 'edition' AND key = ?", (key,)).fetchone()
        return row[0] if row else None

    def search(self, text: str, kind: str | None = None, limit: int = 20) -> list[Hit]:
        """Entities whose names match `text`, best first: a name that is the query, names that
        begin with it, names with words beginning with its words, any name containing it (three
        characters or more), and, only if none of these matched, names a typo or two away.
        Case, accents and width never matter.

        No step ranks every match (at 50,000 papers a common prefix matches them all): each reads
        at most a few times `limit` rows in index order and orders those.
        """
        query = _searched(text)
        if not query:
            return []
        kinds = [kind] if kind else list(LISTED)
        window = limit * 5
        found: dict[str, Hit] = {}
        with self._db() as db:
            marks = ",".join("?" * len(kinds))
            starts = db.execute(
                f"SELECT {_COLUMNS} FROM entity e WHERE sort >= ? AND sort < ? AND kind IN ({marks}) "
                "ORDER BY sort LIMIT ?",
                (query, query + "\U0010ffff", *kinds, limit),
            )
            for row in starts:
                found.setdefault(row[0], Hit(*row))
            words = search_words(query)
            if len(found) < limit and words:
                self._collect(db, "words", " ".join(f'"{w}"*' for w in words), kinds, window, found)
            if len(found) < limit and len(query) >= 3:
                self._collect(db, "grams", '"' + query.replace('"', '""') + '"', kinds, window, found)
            if not found and 4 <= len(query) <= MAX_FUZZY_LENGTH:
                self._fuzzy(db, query, words, kinds, limit, found)
        ranked = sorted(found.values(), key=lambda h: (fold(h.label) != query, not fold(h.label).startswith(query)))
        return ranked[:limit]

    def search_page(self, text: str, kind: str, limit: int, offset: int) -> list[Hit]:
        """One page of a kind's matches, all of what `match_counts` counts for it (names with words
        beginning with the query's words): the name that is the query first, then names that begin
        with it, then the entities with most papers, then by name. A fixed order, so that pages
        neither repeat nor skip an entity."""
        query = _searched(text)
        words = search_words(query)
        if not words:
            return []
        with self._db() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM words JOIN entity e ON e.id = words.rowid WHERE words MATCH ? AND e.kind = ? "
                "ORDER BY e.sort = ? DESC, substr(e.sort, 1, length(?)) = ? DESC, e.papers DESC, e.sort, e.id "
                "LIMIT ? OFFSET ?",
                (" ".join(f'"{w}"*' for w in words), kind, query, query, query, limit, offset),
            ).fetchall()
        return [Hit(*row) for row in rows]

    def match_counts(self, text: str, cap: int = 10_000) -> dict[str, int]:
        """How many entities of each searched kind have names with words beginning with the
        query's words (what search's word step matches), each counted up to `cap`: the search
        page's tabs say "papers (1,234)" rather than the 50 it shows. With them, under TOPIC, the
        papers that match as a topic (`topic_count`), where any do."""
        words = search_words(_searched(text))
        if not words:
            return {}
        match = " ".join(f'"{w}"*' for w in words)
        with self._db() as db:
            rows = db.execute(
                "SELECT kind, COUNT(*) FROM (SELECT e.kind AS kind FROM words JOIN entity e ON e.id = words.rowid "
                "WHERE words MATCH ? LIMIT ?) GROUP BY kind",
                (match, cap * len(LISTED)),
            ).fetchall()
        counts = {kind: min(n, cap) for kind, n in rows if kind in LISTED}
        topics = self.topic_count(text, cap)
        return counts | ({TOPIC: topics} if topics else {})

    @staticmethod
    def topic_filter(text: str) -> str | None:
        """What a list's `?topic=` keeps, as the topic search reads it (None: no word to look for)."""
        return topic_expression(_searched(text))

    def topic_count(self, text: str, cap: int = 10_000) -> int:
        """How many papers' titles, keywords or abstracts match `text` as a topic, up to `cap`."""
        expression = topic_expression(_searched(text))
        if expression is None:
            return 0
        with self._db() as db:
            row = db.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM topics WHERE topics MATCH ? LIMIT ?)", (expression, cap)
            ).fetchone()
        return int(row[0])

    def topic_page(self, text: str, limit: int, offset: int) -> list[Hit]:
        """One page of the papers matching `text` as a topic, the best match first (FTS5's bm25:
        the query's words rare in the index and frequent in the paper's text) where at most
        RANKED_TOPICS match; beyond, in the index's order. Ranking costs a score per match (100
        ms for the 20,000 papers on "learning" at 50,000 papers) and tells little among papers
        that all say it; reading in order stops at the page."""
        expression = topic_expression(_searched(text))
        if expression is None:
            return []
        with self._db() as db:
            many = db.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM topics WHERE topics MATCH ? LIMIT ?)",
                (expression, RANKED_TOPICS + 1),
            ).fetchone()[0]
            inner, outer = ("rowid", "t.rowid") if many > RANKED_TOPICS else ("rank, rowid", "t.rank, t.rowid")
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM (SELECT rowid, rank FROM topics WHERE topics MATCH ? "
                f"ORDER BY {inner} LIMIT ? OFFSET ?) t JOIN entity e ON e.id = t.rowid ORDER BY {outer}",
                (expression, limit, offset),
            ).fetchall()
        return [Hit(*row) for row in rows]

    def _collect(
        self, db: sqlite3.Connection, table: str, match: str, kinds: list[str], window: int, found: dict[str, Hit]
    ) -> None:
        """Up to `window` matches of `match` in `table`, the entities with most papers first."""
        marks = ",".join("?" * len(kinds))
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM {table} JOIN entity e ON e.id = {table}.rowid "
            f"WHERE {table} MATCH ? AND e.kind IN ({marks}) LIMIT ?",
            (match, *kinds, window),
        ).fetchall()
        for row in sorted(rows, key=lambda r: -r[7]):
            found.setdefault(row[0], Hit(*row))

    def _fuzzy(
        self, db: sqlite3.Connection, query: str, words: list[str], kinds: list[str], limit: int, found: dict[str, Hit]
    ) -> None:
        """Names whose words begin as the query's words do (their first three letters), kept if
        close enough to the query (difflib's ratio): a typo after the third letter of a word."""
        if not words:
            return
        match = " ".join(f'"{w[:3]}"*' for w in words)
        marks = ",".join("?" * len(kinds))
        rows = db.execute(
            f"SELECT {_COLUMNS}, e.names FROM words JOIN entity e ON e.id = words.rowid "
            f"WHERE words MATCH ? AND e.kind IN ({marks}) LIMIT 2000",
            (match, *kinds),
        )
        scored = []
        for *row, names in rows:
            best = max(_closeness(query, name) for name in names.split(" | "))
            if best >= 0.75:
                scored.append((best, row))
        for _, row in sorted(scored, key=lambda s: -s[0])[:limit]:
            found.setdefault(row[0], Hit(*row))


# Bounds on what one search may cost: a name has a few words, and a typo is looked for in a name,
# not a paragraph. Forty repeated words took 1.94 s at 5,000 papers before (each word a prefix
# match, then every candidate compared with a 200-character query, window by window).
MAX_SEARCH_WORDS = 8
MAX_FUZZY_LENGTH = 64


def _searched(text: str) -> str:
    """What a search looks for: the text folded (`fold`), without control characters (a NUL ends
    an FTS5 string), its spaces collapsed, at most 200 characters."""
    printable = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return fold(" ".join(printable.split()))[:200]


def search_words(query: str) -> list[str]:
    """The distinct words of a folded query, in order, at most MAX_SEARCH_WORDS of them."""
    return list(dict.fromkeys(re.findall(r"\w+", query)))[:MAX_SEARCH_WORDS]


def _closeness(query: str, name: str) -> float:
    """How close `query` is to `name` or to any run of its words as long as the query."""
    best = SequenceMatcher(None, query, name).ratio()
    words = name.split()
    n = max(1, len(query.split()))
    for i in range(len(words)):
        best = max(best, SequenceMatcher(None, query, " ".join(words[i : i + n])).ratio())
    return best
