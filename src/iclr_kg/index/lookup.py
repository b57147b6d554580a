"""What pages read from an index: labels for IRIs, lists of a kind narrowed by filters with the
counts of each facet, and search by name, substring, typo and topic."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from iclr_kg import terms, vocab
from iclr_kg.index.text import MAX_FUZZY_LENGTH, _closeness, _searched, fold, search_words
from iclr_kg.kinds import LISTED, EntityKind
from iclr_kg.topics import topic_expression

# Kinds a person looks for by name; the others (authorships, reviews...) get labels only.
TOPIC: Final[Literal["topic"]] = "topic"  # search's tab of papers by what they are about (title, keywords, abstract)


RANKED_TOPICS = 2_000  # topic matches ranked by relevance up to here; more are listed in order


# The highest page number a list or sitemap accepts: far past any kind's last page, and well inside
# SQLite's 64-bit OFFSET, which a larger number overflows (a 500 instead of a 404).
MAX_PAGE = 10**9


# A list's orders: by name in natural order ("paper 9" before "paper 10": the `natural` column,
# numbers zero-padded), newest first, most papers first; for papers, the highest average public
# rating first (unrated last) and, on a topic, the best match first (FTS5's bm25, as search ranks).
AVERAGE_RATING = "(SELECT MAX(average) FROM rating r WHERE r.paper = e.id)"
SORTS = {
    "name": "natural",
    "year": "year DESC, natural",
    "papers": "papers DESC, natural",
    "rating": f"{AVERAGE_RATING} IS NULL, {AVERAGE_RATING} DESC, natural",
    "relevance": "t.rank, natural",
}
PAPER_SORTS = {"rating", "relevance"}  # the orders of paper lists only (relevance: with a topic)


@dataclass
class Hit:
    iri: str
    kind: EntityKind
    key: str
    label: str
    label_zh: str
    facts: str
    year: int | None
    papers: int
    facts_zh: str = ""  # the facts line with linked entities' Chinese names
    rating: float | None = None  # a paper's average public rating, read only by a list sorted by it

    def label_in(self, lang: str) -> str:
        """Its name in `lang` where it has one there (宋飏), else its name."""
        return self.label_zh if lang == "zh" and self.label_zh else self.label

    def facts_in(self, lang: str) -> str:
        """The facts line with linked entities named in `lang` (terms and words still to be read:
        `Terms.readable`, the web's `readable_facts`)."""
        return self.facts_zh if lang == "zh" and self.facts_zh else self.facts

    def as_json(self) -> dict[str, object]:
        return {
            "iri": self.iri,
            "kind": self.kind,
            "label": self.label,
            "label_zh": self.label_zh or None,
            "facts": terms.packaged().readable(self.facts),
            "url": f"/resource/{self.kind}/{self.key}",
        }


_COLUMNS = "e.iri, e.kind, e.key, e.label, e.label_zh, e.facts, e.year, e.papers, e.facts_zh"


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
    among: tuple[str, ...] | None = None  # these papers only (IRIs: those with an award of one kind)

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
        if self.among is not None:
            where.append(f"e.iri IN ({','.join('?' * len(self.among))})")
            args.extend(self.among)
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
        """This filter with the choice of one field (a facet) undone (the award facet: any kind)."""
        if field == "awarded":
            return dataclasses.replace(self, awarded=False, among=None)
        return dataclasses.replace(self, **{field: None})  # type: ignore[arg-type]


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
        ranked = sort == "relevance" and narrowed.topic is not None
        if sort == "relevance" and not ranked:
            order = SORTS["name"]
        joined = "JOIN (SELECT rowid, rank FROM topics WHERE topics MATCH ?) t ON t.rowid = e.id" if ranked else ""
        columns = f"{_COLUMNS}, {AVERAGE_RATING}" if sort == "rating" else _COLUMNS  # the order shown beside it
        with self._db() as db:
            total = db.execute(f"SELECT COUNT(*) FROM entity e WHERE {where}", args).fetchone()[0]
            rows = db.execute(
                f"SELECT {columns} FROM entity e {joined} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
                (*((narrowed.topic,) if ranked else ()), *args, limit, offset),
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
        order), the `limit` from `offset`, each with its year and what it credits: the
        organization itself (directly), the units under it, or both; and how many there are."""
        listed, total = self._counted_rows(
            organization,
            "SELECT COUNT(DISTINCT paper) FROM credit WHERE organization = ?",
            "SELECT p.iri, p.year, GROUP_CONCAT(COALESCE(v.iri, o.iri), ' ') FROM credit c "
            "JOIN entity p ON p.id = c.paper JOIN entity o ON o.id = c.organization "
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

    def search_ranked(self, text: str, kinds: Iterable[str], limit: int) -> list[Hit]:
        """The best `limit` matches over several kinds (search's "all" tab), ranked as each kind's
        tab ranks its own (`search_page`): the name that is the query, names that begin with it,
        then most papers, then by name; what the word step misses (a part of a word, a typo)
        after them, as `search` finds it."""
        query = _searched(text)
        hits = [hit for kind in kinds for hit in self.search_page(text, kind, limit, 0)]
        hits.sort(key=lambda h: (fold(h.label) != query, not fold(h.label).startswith(query), -h.papers, fold(h.label)))
        seen = {hit.iri for hit in hits}
        more = [hit for hit in self.search(text, None, limit) if hit.iri not in seen] if len(hits) < limit else []
        return (hits + more)[:limit]

    def dated(self, kind: str) -> bool:
        """Whether any entity of `kind` has a year (a list sorted by year would otherwise not move)."""
        with self._db() as db:
            return (
                db.execute("SELECT 1 FROM entity WHERE kind = ? AND year IS NOT NULL LIMIT 1", (kind,)).fetchone()
                is not None
            )

    def close_keys(self, kind: str, key: str, limit: int = 3) -> list[Hit]:
        """Entities of `kind` whose keys are close to `key` (a misspelt address: person/yang-sung
        is near yang-song): those whose key begins as it does, by difflib's ratio, 0.75 or closer."""
        with self._db() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM entity e WHERE kind = ? AND key >= ? AND key < ?",
                (kind, key[:3], key[:3] + "\U0010ffff"),
            ).fetchall()
        scored = sorted(((_closeness(key, row[2]), row) for row in rows), key=lambda s: (-s[0], s[1][2]))
        return [Hit(*row) for score, row in scored[:limit] if score >= 0.75]

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

    def match_counts(self, text: str) -> dict[str, int]:
        """How many entities of each searched kind have names with words beginning with the
        query's words (what search's word step matches), every one counted: the search page's
        tabs say "person (30,000)" rather than the 50 it shows (a kind's tab pages through them
        all, sorting them all). With them, under TOPIC, the papers that match as a topic
        (`topic_count`), where any do."""
        words = search_words(_searched(text))
        if not words:
            return {}
        match = " ".join(f'"{w}"*' for w in words)
        with self._db() as db:
            rows = db.execute(
                "SELECT e.kind, COUNT(*) FROM words JOIN entity e ON e.id = words.rowid WHERE words MATCH ? GROUP BY e.kind",
                (match,),
            ).fetchall()
        counts = {kind: n for kind, n in rows if kind in LISTED}
        topics = self.topic_count(text)
        return counts | ({TOPIC: topics} if topics else {})

    @staticmethod
    def topic_filter(text: str) -> str | None:
        """What a list's `?topic=` keeps, as the topic search reads it (None: no word to look for)."""
        return topic_expression(_searched(text))

    def topic_count(self, text: str) -> int:
        """How many papers' titles, keywords or abstracts match `text` as a topic."""
        expression = topic_expression(_searched(text))
        if expression is None:
            return 0
        with self._db() as db:
            row = db.execute("SELECT COUNT(*) FROM topics WHERE topics MATCH ?", (expression,)).fetchone()
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
        self, db: sqlite3.Connection, table: str, match: str, kinds: Sequence[str], window: int, found: dict[str, Hit]
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
        self,
        db: sqlite3.Connection,
        query: str,
        words: list[str],
        kinds: Sequence[str],
        limit: int,
        found: dict[str, Hit],
    ) -> None:
        """Names whose words begin as the query's words do (their first three letters), kept if
        close enough to the query (difflib's ratio): a typo after the third letter of a word;
        the closest first, then, as equally close, by most papers (as the kinds' tabs rank), not
        in the index's lexical order (Person 0, 1, 10, 100...)."""
        if not words:
            return
        match = " ".join(f'"{w[:3]}"*' for w in words)
        marks = ",".join("?" * len(kinds))
        rows = db.execute(
            f"SELECT {_COLUMNS}, e.names FROM words JOIN entity e ON e.id = words.rowid "
            f"WHERE words MATCH ? AND e.kind IN ({marks}) ORDER BY e.papers DESC LIMIT 2000",
            (match, *kinds),
        )
        scored = []
        for *row, names in rows:
            best = max(_closeness(query, name) for name in names.split(" | "))
            if best >= 0.75:
                scored.append((best, Hit(*row)))
        for _, hit in sorted(scored, key=lambda s: (-s[0], -s[1].papers, fold(s[1].label)))[:limit]:
            found.setdefault(hit.iri, hit)
