"""What every kind's page is made of: panels (facts, tables, bars), their pagers, the queries
they show as "this as a query", and the lookups the kinds share."""

from __future__ import annotations

import re
import typing
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from flask import url_for
from pyoxigraph import DefaultGraph, Literal, NamedNode

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph, Term, value
from iclr_kg.identifiers import SCHEMES
from iclr_kg.index.text import simplified
from iclr_kg.web.html import Attributed, Cell, OntologyLabel, Remarked, local_path, web_link

LIST_LIMIT = 200  # rows of a list that is not paged

PAPER_DETAILS = """
SELECT ?paper (SAMPLE(?decision) AS ?d) (GROUP_CONCAT(DISTINCT STR(?award); separator=" ") AS ?awards)
WHERE {
  VALUES ?paper { PAPERS }
  OPTIONAL { ?paper iclr:decision ?decision }
  OPTIONAL { ?paper iclr:receivedAward ?award }
} GROUP BY ?paper"""


Value = Term | Cell | Remarked | Attributed | OntologyLabel | str | int | float | None
"""What a panel's row shows: a term as the Labeler names it, or a cell or words of the page's."""


LIST_PAGE = 50  # rows of a paged list on a profile (a person's papers, co-authors)


NO_PAGES: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True)
class Pager:
    """A table shown a page at a time: `?{argument}=N` asks for page N of `pages`."""

    argument: str
    page: int
    pages: int

    @classmethod
    def of(cls, argument: str, page: int, total: int) -> Pager:
        """Page `page` of a list of `total` rows, LIST_PAGE a page (one page when empty)."""
        return cls(argument, page, max(1, -(-total // LIST_PAGE)))


# How a panel is drawn (the class of its box in _panels.html): rows of label and values, a
# table, bars, a star of co-authors, a chart over the years
PanelShape = typing.Literal["facts", "table", "bars", "star", "chart"]


@dataclass
class Panel:
    """One box of a profile: `facts` (rows of label and values), `table` or `bars`..."""

    title: str
    kind: PanelShape = "facts"
    rows: list[tuple[str, list[Any]]] = field(default_factory=list)  # facts: (label, values)
    columns: list[Any] = field(default_factory=list)  # table: words of the page's, or terms (named when drawn)
    table: list[list[Any]] = field(default_factory=list)
    bars: list[tuple[Any, ...]] = field(default_factory=list)  # (a term or a word, a count[, the list it counts])
    note: str = ""  # in English, with {fields} from `figures`: translated when the page is drawn
    figures: dict[str, str] = field(default_factory=dict)
    total: int | None = None  # a table cut short: how many rows there are in all
    more: str = ""  # the list of every row, with its filters (a person's or an organization's papers)
    links: list[tuple[str, str]] = field(default_factory=list)  # (words, address): more of this panel
    groups: list[Any] = field(
        default_factory=list
    )  # table: each row's group (a year, an award), a heading where it changes
    jumps: list[tuple[str, int]] = field(default_factory=list)  # (group, the page where it begins)
    pager: Pager | None = None  # a table shown a page at a time
    svg: str = ""  # a star or a chart: drawn when the page is drawn (charts.star, charts.trend)
    series: list[Any] = field(default_factory=list)  # a chart: its lines (charts.Series), over `years`
    years: list[int] = field(default_factory=list)
    percent: bool = False  # a chart of rates, its axis in percent
    wide: bool = False  # the page's whole width (a table of many columns, a paged list, a star are too)

    def add(self, label: str, *values: Value) -> None:
        kept = [v for v in values if v not in (None, "")]
        if kept:
            self.rows.append((label, kept))

    def properties(self, store: ReadableGraph, iri: NamedNode, rows: list[tuple[str, str | NamedNode]]) -> None:
        """One row per (label, property): the entity's values of it (ours by local name), in the
        order their source gives where it gives one."""
        for label, prop in rows:
            predicate = prop if isinstance(prop, NamedNode) else vocab.iclr(prop)
            values = [q.object for q in store.quads_for_pattern(iri, predicate, None, DefaultGraph())]
            self.add(label, *(in_stated_order(store, iri, predicate, values) if len(values) > 1 else values))

    def __bool__(self) -> bool:
        return bool(self.rows or self.table or self.bars or any(s.points for s in self.series))


# Each value's place in the list its source gives (iclr:OrderedStatement): the first place any
# source gives it, where two sources order the same values
STATED_ORDER = """
SELECT ?value (MIN(?position) AS ?place) WHERE {
  ?statement rdf:subject ?e ; rdf:predicate ?predicate ; rdf:object ?value ; iclr:listPosition ?position .
} GROUP BY ?value"""


def in_stated_order(store: ReadableGraph, iri: NamedNode, predicate: NamedNode, values: list[Any]) -> list[Any]:
    """`values` of `predicate` on `iri` in the order their sources give (a byline, a committee's
    criteria); values no source places come after, as the store gives them."""
    query = about(STATED_ORDER, iri).replace("?predicate", f"<{predicate.value}>")  # ours, as ?e's IRI is
    solutions = store.query(query, prefixes=vocab.QUERY_PREFIXES)
    place = {row["value"]: int(row["place"].value) for row in solutions}
    return sorted(values, key=lambda v: place.get(v, len(place) + 1))


def as_query(query: str, iri: NamedNode, view: str) -> str:
    """The query page asking `query` about the entity, drawn as `view`: a chart's rows, and
    more of them, one click away."""
    return url_for("pages.index", query=about(query, iri), view=view)


def about(query: str, iri: NamedNode) -> str:
    """`query` with the entity's IRI in place of `?e`: written into the text because pyoxigraph
    binds only projected variables; safe, since it is one of ours, made from a key checked against vocab.ENTITY_KEY."""
    return re.sub(r"\?e\b", f"<{iri.value}>", query)


def select_rows(store: ReadableGraph, query: str, iri: NamedNode) -> list[dict[str, Any]]:
    """Rows of `query` about the entity `?e`."""
    solutions = store.query(about(query, iri), prefixes=vocab.QUERY_PREFIXES)
    names = [v.value for v in solutions.variables]
    return [{n: s[n] for n in names} for s in solutions]


def values_of(store: ReadableGraph, iri: NamedNode, local: str) -> list[Any]:
    return [q.object for q in store.quads_for_pattern(iri, vocab.iclr(local), None, DefaultGraph())]


def heading_of(store: ReadableGraph, iri: NamedNode) -> str:
    """The entity's name (the first in order if sources give several), else its key."""
    names = sorted(v.value for v in values_of(store, iri, "name"))
    return names[0] if names else iri.value.rsplit("/", 1)[-1]


def per_graph(store: ReadableGraph, iri: NamedNode, local: str) -> dict[str, list[Any]]:
    """Values of one property of `iri`, per source graph (entities and inferred graphs left out)."""
    out: dict[str, list[Any]] = defaultdict(list)
    for q in store.quads_for_pattern(iri, vocab.iclr(local), None, None):
        graph = q.graph_name
        if isinstance(graph, NamedNode) and graph.value.startswith(vocab.GRAPH_SOURCE_BASE):
            out[graph.value].append(q.object)
    return out


def source_of(graph: str) -> NamedNode:
    return NamedNode(vocab.RESOURCE_BASE + "source/" + graph[len(vocab.GRAPH_SOURCE_BASE) :])


def number_of(term: Any) -> float | None:
    try:
        return float(term.value)
    except (AttributeError, ValueError):
        return None


def key_of(iri: str) -> str:
    """An entity's key, the last segment of its IRI (person/ian-gemp -> ian-gemp)."""
    return iri.rsplit("/", 1)[-1]


def paper_details(store: ReadableGraph, papers: list[str]) -> dict[str, tuple[Any, list[NamedNode]]]:
    """Each paper's decision (None if it has none) and awards (by IRI), in one query."""
    details: dict[str, tuple[Any, list[NamedNode]]] = {paper: (None, []) for paper in papers}
    if papers:
        query = PAPER_DETAILS.replace("PAPERS", " ".join(f"<{paper}>" for paper in papers))  # the index's IRIs
        for row in store.query(query, prefixes=vocab.QUERY_PREFIXES):
            awards = sorted(row["awards"].value.split()) if row["awards"] is not None else []
            details[row["paper"].value] = (row["d"], [NamedNode(a) for a in awards])
    return details


def identifiers_panel(store: ReadableGraph, iri: NamedNode, panel: Panel, kind: str) -> None:
    """One row per scheme the entity is known by elsewhere (identifiers.py), each value linked
    to the page that resolves it, as Scholia lists them; Wikidata first. OpenReview is left to
    the rows that link its pages already (a person's profile page, a paper's forum)."""
    wikidata = [
        q.object
        for q in store.quads_for_pattern(iri, vocab.SKOS_EXACT_MATCH, None, DefaultGraph())
        if isinstance(q.object, NamedNode) and q.object.value.startswith(vocab.PREFIXES["wd"])
    ]
    panel.add("Wikidata", *wikidata)
    for scheme in SCHEMES.values():
        if scheme.prop and kind in scheme.kinds and not scheme.name.startswith("openreview"):
            stated = store.quads_for_pattern(iri, scheme.predicate, None, DefaultGraph())
            values = sorted({value(q.object) for q in stated})
            panel.add(scheme.label, *[Cell(v, href=web_link(scheme.iri(v)), external=True) for v in values])


# A committee's reason as we summarised it (GROUP_CONCAT, from ?c), in English and in Chinese, kept
# apart (`reasons`): the page shows its own language's
def in_both(name: str, said: str = "said") -> str:
    """?`name` and ?`name`Zh: the English and the Chinese texts `said_in_both` bound to ?`said`
    and ?`said`Zh, each GROUP_CONCAT'd (one row per statement, not one per pair of languages)."""
    return (
        f'(GROUP_CONCAT(DISTINCT ?{said}; separator=" · ") AS ?{name})\n'
        f'       (GROUP_CONCAT(DISTINCT ?{said}Zh; separator=" · ") AS ?{name}Zh)'
    )


REASONS = in_both("reason")


def said_in_both(subject: str, local: str, said: str = "said") -> str:
    """Patterns binding ?`said` to `subject`'s iclr:`local` texts in English and ?`said`Zh to its
    Chinese ones (our own words are stated in both), to GROUP_CONCAT apart (`in_both`)."""
    return (
        f'OPTIONAL {{ {subject} iclr:{local} ?{said} FILTER (!LANGMATCHES(LANG(?{said}), "zh")) }}\n'
        f'  OPTIONAL {{ {subject} iclr:{local} ?{said}Zh FILTER (LANGMATCHES(LANG(?{said}Zh), "zh")) }}'
    )


REASONS_SAID = said_in_both("?c", "reason")


def reasons(row: Mapping[str, Any], name: str = "reason") -> list[Literal]:
    """A row's texts in English and Chinese (?reason and ?reasonZh: `REASONS`, or `name` and
    `name`Zh) as texts tagged with their language, for `in_page_language`."""
    found = [(row[name], "en"), (row[name + "Zh"], "zh-Hans")]
    return [Literal(said.value, language=tag) for said, tag in found if said is not None and said.value]


# Who won and from where, one row per award paper: its first author (more than one where sources
# differ), the organizations it credits, the award and the committee's reason (from each source
# that gives one), the sources stating it; the main award, its honorable mentions, then the
# test-of-time award and its runner-up. `{conferred}` binds ?c, ?paper
# and ?award from ?e: an award or an edition.
AWARDED_TEMPLATE = """
SELECT ?paper ?award (GROUP_CONCAT(DISTINCT STR(?first); separator=" ") AS ?firsts)
       (GROUP_CONCAT(DISTINCT STR(?organization); separator=" ") AS ?organizations)
       [reasons]
       (GROUP_CONCAT(DISTINCT STR(?source); separator=" ") AS ?sources)
WHERE {{ {conferred}
  BIND (IF(EXISTS {{ ?award a iclr:HonorableMention }}, 1, IF(EXISTS {{ ?award a iclr:TestOfTimeAward }}, 2,
        IF(EXISTS {{ ?award a iclr:TestOfTimeRunnerUp }}, 3, 0))) AS ?rank)
  [reasons said]
  OPTIONAL {{ ?paper iclr:firstAuthor ?first }}
  OPTIONAL {{ ?paper iclr:creditedOrganization ?organization }}
  OPTIONAL {{ GRAPH ?stating {{ ?c iclr:conferredAward ?award }} ?stating iclr:statedIn ?source }}
}} GROUP BY ?paper ?award ?rank ORDER BY ?rank ?award ?paper LIMIT {limit}"""
AWARDED = AWARDED_TEMPLATE.replace("[reasons]", REASONS).replace(
    "[reasons said]",
    REASONS_SAID.replace("{", "{{").replace("}", "}}"),  # in a str.format template
)


AWARDED_COLUMNS = ["paper", "first author", "credited organizations", "award", "the committee's reason", "sources"]


# How a page names a source it cites: by its title, the label the index (and so every
# statement's table, search and lists) gives it too; who publishes it on hover, marked where it
# is ICLR's own word; read for every source at once
SOURCE_NAMES = """
SELECT ?source (SAMPLE(?publisher) AS ?name) (SAMPLE(?written) AS ?outlet) (SAMPLE(?heading) AS ?title)
       (SAMPLE(?own) AS ?organizer) (SAMPLE(?tag) AS ?language) WHERE {
  ?source a iclr:Source .
  OPTIONAL { ?source iclr:publisherName ?publisher } OPTIONAL { ?source iclr:outlet ?written }
  OPTIONAL { ?source dcterms:title ?heading } OPTIONAL { ?source iclr:organizerStatement ?own }
  OPTIONAL { ?source schema:inLanguage ?tag }
} GROUP BY ?source"""


def source_cells(store: ReadableGraph, sources: list[str]) -> dict[str, Remarked]:
    """Each source (by IRI) as a linked name, the same on every page and in every panel that
    cites it: its title (in its own language), who publishes it on hover, remarked "ICLR's own"
    where it is the organizer's statement. Only a source with no title goes by its publisher
    (or its outlet, or its key)."""
    if not sources:
        return {}
    asked = set(sources)
    named = {}
    for row in store.query(SOURCE_NAMES, prefixes=vocab.QUERY_PREFIXES):
        iri = row["source"].value
        if iri not in asked:
            continue
        title, publisher = (row[k].value if row[k] is not None else "" for k in ("title", "name"))
        outlet = row["outlet"].value if row["outlet"] is not None else ""
        lang = row["language"].value if row["language"] is not None and (title or outlet) else ""
        cell = Cell(
            readable_title(title, publisher) or outlet or publisher or key_of(iri),
            href=local_path(iri),
            title=publisher,
            lang=lang,
            quoted=bool(title),
        )
        own = row["organizer"] is not None and row["organizer"].value == "true"
        named[iri] = Remarked(cell, "ICLR's own" if own else "")
    return named


TITLED_SOURCES = "SELECT ?source ?title WHERE { ?source a iclr:Source ; dcterms:title ?title }"


def sources_named_in(store: ReadableGraph, notes: list[Any]) -> list[Remarked]:
    """The sources our notes name by title (in their own script or in Simplified), in the order
    the notes name them, each linked as every page names it: a note names a source so, never by
    a number of ours."""
    words = " ".join(str(getattr(note, "value", note)) for note in notes)
    if not words:
        return []
    places = {}
    for row in store.query(TITLED_SOURCES, prefixes=vocab.QUERY_PREFIXES):
        found = [words.find(t) for t in {row["title"].value, simplified(row["title"].value)} if t in words]
        if found:
            places[row["source"].value] = min(found)
    named = source_cells(store, list(places))
    return [named[iri] for iri in sorted(places, key=places.__getitem__) if iri in named]


# Each source's kind (its class under iclr:Source), title, publisher (a repository, an outlet),
# language and the years of the editions it is about: what names it in a list of every source
SOURCE_TITLES = """
SELECT ?source ?kind (SAMPLE(?heading) AS ?title) (SAMPLE(?publisher) AS ?by) (SAMPLE(?tag) AS ?language)
       (GROUP_CONCAT(DISTINCT STR(?year); separator=" ") AS ?years) WHERE {
  ?source a iclr:Source ; a ?kind . FILTER (?kind IN (iclr:Article, iclr:WebSource, iclr:DataImport))
  OPTIONAL { ?source dcterms:title ?heading } OPTIONAL { ?source iclr:publisherName ?publisher }
  OPTIONAL { ?source schema:inLanguage ?tag } OPTIONAL { ?source iclr:about/iclr:year ?year }
} GROUP BY ?source ?kind"""


# A title that is a file's name (a repository's "_data/papers.yml"): the repository says more
FILE_NAME = re.compile(r"[\w-]+\.(?:ya?ml|json|csv|tsv|md|txt)\b")


def readable_title(title: str, publisher: str) -> str:
    """A source's title as pages name it: a file's name led by its repository
    ("clemense/ai-bestpapers: _data/papers.yml"), any other title as it is."""
    return f"{publisher}: {title}" if publisher and FILE_NAME.search(title) else title


@dataclass(frozen=True)
class SourceTitle:
    """A source as a list of every source names it: its kind (the ontology's local name), a
    title a reader understands, distinct from every other source's, and the title's language."""

    kind: str
    title: str
    language: str


def source_titles(store: ReadableGraph) -> dict[str, SourceTitle]:
    """Every source (by IRI) with a distinct title: its own, led by its publisher where the title
    is a file's name ("clemense/ai-bestpapers: _data/papers.yml"), the years of the editions it is
    about where another source has that title too ("Awesome AI Best Papers (ICLR 2020)"), its key
    where even that is shared."""
    rows = list(store.query(SOURCE_TITLES, prefixes=vocab.QUERY_PREFIXES))
    found: dict[str, tuple[str, str, str, str]] = {}
    for row in rows:
        title, by = (row[k].value if row[k] is not None else "" for k in ("title", "by"))
        name = readable_title(title, by) or by or key_of(row["source"].value)
        years = sorted(row["years"].value.split())
        about = f" (ICLR {', '.join(years)})" if years else ""
        language = row["language"].value if row["language"] is not None else ""
        found[row["source"].value] = (row["kind"].value.removeprefix(vocab.ONTOLOGY_NS), name, about, language)
    shared = Counter(name for _, name, _, _ in found.values())
    titled = {
        iri: (kind, name + about if shared[name] > 1 else name, lang)
        for iri, (kind, name, about, lang) in found.items()
    }
    still = Counter(title for _, title, _ in titled.values())
    return {
        iri: SourceTitle(kind, f"{title} ({key_of(iri)})" if still[title] > 1 else title, lang)
        for iri, (kind, title, lang) in titled.items()
    }


def awarded_panel(store: ReadableGraph, query: str, iri: NamedNode, award: bool = True) -> Panel:
    """The award papers of an edition or an award, each row answering who and from where, and
    who says so; an edition's (`award`) under a heading per award, outstanding papers first
    (a heading, not a column: on a phone, a line less on each card)."""

    def entities(value: Any) -> list[NamedNode]:
        return [NamedNode(v) for v in str(value.value).split()] if value is not None else []

    found = select_rows(store, query, iri)
    named = source_cells(store, [s.value for row in found for s in entities(row["sources"])])
    rows = [
        [row["paper"], entities(row["firsts"]), entities(row["organizations"]), row["award"],
         reasons(row),
         [named[s.value] for s in entities(row["sources"]) if s.value in named]]
        for row in found
    ]  # fmt: skip
    keep = [i for i, column in enumerate(AWARDED_COLUMNS) if column != "award"]
    panel = Panel("Award papers" if award else "Papers", kind="table", columns=[AWARDED_COLUMNS[i] for i in keep])
    panel.table = [[row[i] for i in keep] for row in rows]
    panel.groups = [row[AWARDED_COLUMNS.index("award")] for row in rows] if award else []
    return panel


def as_percent(rate: float, digits: int | None = None) -> str:
    """0.29 -> "29%", 0.265 -> "26.5%" (as stated: no digit added); `digits` for a computed rate."""
    return f"{rate * 100:.{digits}f}%" if digits is not None else f"{round(rate * 100, 6):g}%"
