"""Entity profiles: what a person reads about a paper, a person, an organization, an edition...

Each kind has a few SPARQL queries about one entity (`?e`), run on the read-only store of this
process (they are bounded by the entity: a LIMIT where a list could grow with the graph), and a
function that arranges their answers into panels: facts (label: values), tables and bars. IRIs
become names through the generation's index (index/), in the page's language; the raw
statements stay below the panels, folded, for whoever wants every triple with its provenance.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from flask import url_for
from pyoxigraph import DefaultGraph, NamedNode

from iclr_kg import terms, vocab
from iclr_kg.graph import ReadableGraph, Term, value
from iclr_kg.identifiers import SCHEMES
from iclr_kg.index import Index, ListFilter, ranked_titles
from iclr_kg.kinds import KINDS
from iclr_kg.web.charts import star
from iclr_kg.web.html import LANGUAGE_NAMES, Cell, Labeler, OntologyLabel, Remarked, web_link
from iclr_kg.web.i18n import translate

LIST_LIMIT = 200  # rows of a list that is not paged

Value = Term | Cell | Remarked | OntologyLabel | str | int | float | None
"""What a panel's row shows: a term as the Labeler names it, or a cell or words of the page's."""


LIST_PAGE = 50  # rows of a paged list on a profile (a person's papers, co-authors)
SUMMARY_ITEMS = 5  # organizations and co-authors named in a person's summary
STAR_POINTS = 12  # co-authors drawn around a person
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


@dataclass
class Panel:
    """One box of a profile: `facts` (rows of label and values), `table` or `bars`."""

    title: str
    kind: str = "facts"
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
    svg: str = ""  # a star: drawn when the page is drawn (charts.star)
    wide: bool = False  # the page's whole width (a table of many columns, a paged list, a star are too)

    def add(self, label: str, *values: Value) -> None:
        kept = [v for v in values if v not in (None, "")]
        if kept:
            self.rows.append((label, kept))

    def properties(self, store: ReadableGraph, iri: NamedNode, rows: list[tuple[str, str | NamedNode]]) -> None:
        """One row per (label, property): the entity's values of it (ours by local name)."""
        for label, prop in rows:
            predicate = prop if isinstance(prop, NamedNode) else vocab.iclr(prop)
            self.add(label, *[q.object for q in store.quads_for_pattern(iri, predicate, None, DefaultGraph())])

    def __bool__(self) -> bool:
        return bool(self.rows or self.table or self.bars)


def as_query(query: str, iri: NamedNode, view: str) -> str:
    """The query page asking `query` about the entity, drawn as `view`: a chart's rows, and
    more of them, one click away."""
    return url_for("pages.index", query=about(query, iri), view=view)


def about(query: str, iri: NamedNode) -> str:
    """`query` with the entity's IRI in place of `?e`: written into the text because pyoxigraph
    binds only projected variables; safe, since it is one of ours, made from a key checked against KEY."""
    return re.sub(r"\?e\b", f"<{iri.value}>", query)


def _select(store: ReadableGraph, query: str, iri: NamedNode) -> list[dict[str, Any]]:
    """Rows of `query` about the entity `?e`."""
    solutions = store.query(about(query, iri), prefixes=vocab.QUERY_PREFIXES)
    names = [v.value for v in solutions.variables]
    return [{n: s[n] for n in names} for s in solutions]


def _values(store: ReadableGraph, iri: NamedNode, local: str) -> list[Any]:
    return [q.object for q in store.quads_for_pattern(iri, vocab.iclr(local), None, DefaultGraph())]


def _heading(store: ReadableGraph, iri: NamedNode) -> str:
    """The entity's name (the first in order if sources give several), else its key."""
    names = sorted(v.value for v in _values(store, iri, "name"))
    return names[0] if names else iri.value.rsplit("/", 1)[-1]


def _per_graph(store: ReadableGraph, iri: NamedNode, local: str) -> dict[str, list[Any]]:
    """Values of one property of `iri`, per source graph (entities and inferred graphs left out)."""
    out: dict[str, list[Any]] = defaultdict(list)
    for q in store.quads_for_pattern(iri, vocab.iclr(local), None, None):
        graph = q.graph_name
        if isinstance(graph, NamedNode) and graph.value.startswith(vocab.GRAPH_SOURCE_BASE):
            out[graph.value].append(q.object)
    return out


def _source_of(graph: str) -> NamedNode:
    return NamedNode(vocab.RESOURCE_BASE + "source/" + graph[len(vocab.GRAPH_SOURCE_BASE) :])


def _number(term: Any) -> float | None:
    try:
        return float(term.value)
    except (AttributeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# Paper

PAPER_AUTHORS = """
SELECT ?position ?person ?written WHERE {
  ?a iclr:authorshipOf ?e ; iclr:authorPosition ?position ; iclr:authorshipBy ?person .
  OPTIONAL { ?a iclr:authorNameAsWritten ?written }
} ORDER BY ?position"""
PAPER_AWARDS = """
SELECT ?award ?reason WHERE { ?c iclr:conferredOn ?e ; iclr:conferredAward ?award . OPTIONAL { ?c iclr:reason ?reason } }"""
PAPER_REVIEWS = """
SELECT ?review ?rating ?confidence WHERE {
  ?review iclr:reviewOf ?e ; iclr:rating ?rating . OPTIONAL { ?review iclr:confidence ?confidence }
} ORDER BY ?review"""
REVIEW_RATINGS = "SELECT ?review ?rating WHERE { ?review iclr:reviewOf ?e ; iclr:rating ?rating } ORDER BY ?review"
MENTIONS = """
SELECT DISTINCT ?source WHERE { GRAPH ?g { ?e ?p ?o } ?g iclr:statedIn ?source }"""


def paper(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    titles = _per_graph(store, iri, "title")
    counted = Counter(str(t.value) for values in titles.values() for t in values)
    ranked = ranked_titles(counted)
    heading = ranked[0] if ranked else iri.value.rsplit("/", 1)[-1]
    about = Panel("Paper")
    if not ranked and _values(store, iri, "titleWithdrawn"):
        heading = ""  # the page says the title was withdrawn, in the reader's language
        about.rows.append(("Title", [OntologyLabel("titleWithdrawn")]))
    about.add("Also titled", *ranked[1:])
    about.add("Edition", *_values(store, iri, "submittedTo"))
    about.add("Decision", *_values(store, iri, "decision"), *_values(store, iri, "presentationType"))
    about.properties(
        store,
        iri,
        [
            ("Method", "methodName"),
            ("Summary", "summary"),
            ("Note", "note"),
            ("OpenReview", "openReviewUrl"),
            ("Code", "codeRepository"),
        ],
    )
    _identifiers(store, iri, about, "paper")
    authors = Panel("Authors", kind="table", columns=["#", "author", "as written"])
    for row in _select(store, PAPER_AUTHORS, iri):
        written = row["written"].value if row["written"] is not None else ""
        authors.table.append([row["position"].value, row["person"], written])
    organizations = Panel("Credited organizations")
    per_source = _per_graph(store, iri, "creditedOrganization")
    distinct = {frozenset(str(o) for o in orgs) for orgs in per_source.values()}
    if len(distinct) == 1:
        organizations.add("Organizations", *next(iter(per_source.values())))
    else:
        for graph, orgs in sorted(per_source.items()):
            organizations.add(f"per {graph.rsplit('/', 1)[-1]}", *orgs)
    awards = Panel("Awards", kind="table", columns=["award", "the committee's reason"])
    for row in _select(store, PAPER_AWARDS, iri):
        awards.table.append([row["award"], row["reason"].value if row["reason"] is not None else ""])
    reviews = Panel("Reviews", kind="table", columns=["review", "rating", "confidence"])
    ratings = []
    for row in _select(store, PAPER_REVIEWS, iri):
        ratings.append(float(row["rating"].value))
        confidence = row["confidence"].value if row["confidence"] is not None else ""
        reviews.table.append([row["review"], row["rating"].value, confidence])
    stated_average = [_number(v) for v in _values(store, iri, "averageRating")]
    if ratings:
        reviews.note = "{n} ratings, average {average}"
        reviews.figures = {"n": f"{len(ratings):,}", "average": f"{sum(ratings) / len(ratings):.2f}"}
    elif stated_average:
        reviews.note = "average rating as reported: {averages}"
        reviews.figures = {"averages": ", ".join(f"{a:g}" for a in stated_average if a is not None)}
    chart = Panel("Review ratings", kind="bars")
    chart.bars = [(review, float(rating), "") for review, rating, _ in reviews.table]
    chart.links = [("This as a query", as_query(REVIEW_RATINGS, iri, "bar x=review y=rating"))]
    mentions = Panel("Stated in")
    mentions.add("Sources", *[row["source"] for row in _select(store, MENTIONS, iri)])
    return heading, [about, authors, organizations, awards, reviews, chart, mentions]


# --------------------------------------------------------------------------------------------
# Person

PERSON_ROLES = """
SELECT ?org ?role ?degree ?current ?education WHERE {
  ?r iclr:roleOf ?e ; iclr:roleAt ?org ; iclr:roleName ?role .
  OPTIONAL { ?r iclr:degree ?degree } OPTIONAL { ?r iclr:isCurrent ?current } OPTIONAL { ?r iclr:isEducation ?education }
} ORDER BY DESC(?current) ?role"""
# Decision and awards of the papers a page lists from the index (VALUES: those papers)
PAPER_DETAILS = """
SELECT ?paper (SAMPLE(?decision) AS ?d) (GROUP_CONCAT(DISTINCT STR(?award); separator=" ") AS ?awards)
WHERE {
  VALUES ?paper { PAPERS }
  OPTIONAL { ?paper iclr:decision ?decision }
  OPTIONAL { ?paper iclr:receivedAward ?award }
} GROUP BY ?paper"""


PAPERS_PER_YEAR = """
SELECT ?year (COUNT(DISTINCT ?paper) AS ?papers) WHERE { ?e iclr:authorOf ?paper . ?paper iclr:submittedTo/iclr:year ?year }
GROUP BY ?year ORDER BY ?year"""
CO_AUTHORS = """
SELECT ?person ?coauthor (COUNT(DISTINCT ?paper) AS ?papers) WHERE {
  BIND (?e AS ?person) ?paper iclr:hasAuthor ?person , ?coauthor . FILTER (?coauthor != ?person)
} GROUP BY ?person ?coauthor ORDER BY DESC(?papers) ?coauthor"""


def person(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    """A person as dblp shows one: who they are, a summary of their work, their papers by year
    and their co-authors, each list a page at a time (`pages`: ?papers=2, ?coauthors=3)."""
    heading = _heading(store, iri)
    names = Panel("Person")
    names.properties(
        store,
        iri,
        [
            ("Native name", "nativeName"),
            ("Also known as", "alias"),
            ("Honours", "honoredWith"),
            ("Student of", "formerStudentOf"),
            ("Notable work", "notableWork"),
            ("OpenReview", "openReviewProfilePage"),
        ],
    )
    _identifiers(store, iri, names, "person")
    roles = Panel("Positions and education", kind="table", columns=["organization", "role", "degree", "now"])
    for row in _select(store, PERSON_ROLES, iri):
        degree = row["degree"].value if row["degree"] is not None else ""
        now = "current" if row["current"] is not None and row["current"].value == "true" else ""
        roles.table.append([row["org"], row["role"].value, degree, now])
    if index is None:
        return heading, [names, roles]
    closest, _ = index.co_authors(iri.value, STAR_POINTS)  # the summary names the first few
    summary, years = _summary(index, iri, closest[:SUMMARY_ITEMS])
    papers = _papers_by_year(store, index, iri, pages.get("papers", 1), years.bars)
    co, graph = _co_authors(index, iri, pages.get("coauthors", 1), closest)
    return heading, [summary, names, roles, years, graph, papers, co]


def _summary(index: Index, iri: NamedNode, closest: list[tuple[str, int]]) -> tuple[Panel, Panel]:
    """A person's work at a glance, from the index (milliseconds for 47,000 papers): papers and
    years, the share accepted, award papers, the organizations their papers credit over the
    years, the closest co-authors; and their papers per year, as bars."""
    decisions = index.facets(
        "paper", terms.packaged().enumeration("Decision").values(), ListFilter(people=(iri.value,))
    )
    per_year = decisions["year"]
    key = _key(iri.value)
    years = Panel("Papers per year", kind="bars")
    years.bars = [(str(year), n, f"/resource/paper/?author={key}&year={year}") for year, n in per_year]
    years.links = [("This as a query", as_query(PAPERS_PER_YEAR, iri, "bar x=year y=papers"))]
    summary = Panel("At a glance", wide=True)
    total = sum(n for _, n in per_year)
    span = " – ".join(dict.fromkeys([str(per_year[0][0]), str(per_year[-1][0])])) if per_year else ""
    summary.add("Papers", Cell(f"{total:,}", href=f"/resource/paper/?author={key}", note=span))
    decided = dict(decisions["decision"])
    if decided:
        accepted, every = decided.get("Accepted", 0), sum(decided.values())
        share = translate("{accepted} of {decided} with a decision ({percent})").format(
            accepted=f"{accepted:,}", decided=f"{every:,}", percent=_percent(accepted / every, 1)
        )
        summary.add("Accepted", Cell(share))
    awarded = sum(n for _, n in decisions["award"])  # the same pass counted the award papers
    if awarded:
        summary.add("Award papers", Cell(f"{awarded:,}"))
    summary.add(
        "Organizations on their papers",
        *[
            Remarked(NamedNode(org), " – ".join(dict.fromkeys([str(first), str(last)])) + f" · {n:,}")
            for org, n, first, last in index.organizations_of(iri.value, SUMMARY_ITEMS)
        ],
    )
    summary.add("Closest co-authors", *[Remarked(NamedNode(other), f"{n:,}") for other, n in closest])
    return summary, years


def _papers_by_year(
    store: ReadableGraph, index: Index, iri: NamedNode, page: int, per_year: list[tuple[Any, ...]]
) -> Panel:
    """A person's papers newest first, grouped under their years (dblp's order), a page at a
    time; a line of years jumps to the page where each begins."""
    papers = Panel("Papers", kind="table", columns=["paper", "decision", "awards"])
    listed, papers.total = index.papers_of(iri.value, LIST_PAGE, (page - 1) * LIST_PAGE)
    details = _paper_details(store, [paper for paper, _ in listed])
    papers.table = [[NamedNode(paper), *details[paper]] for paper, _ in listed]
    papers.groups = [str(year) if year else "" for _, year in listed]
    papers.pager = Pager.of("papers", page, papers.total)
    start = 0
    for year, n, _ in sorted(per_year, key=lambda bar: bar[0], reverse=True):  # newest first, as listed
        papers.jumps.append((year, start // LIST_PAGE + 1))
        start += n
    papers.more = f"/resource/paper/?author={_key(iri.value)}"
    return papers


def _co_authors(index: Index, iri: NamedNode, page: int, closest: list[tuple[str, int]]) -> tuple[Panel, Panel]:
    """Every co-author, most papers together first, a page at a time, each count linking to the
    papers the two wrote together; and the closest drawn around the person (an SVG star)."""
    key = _key(iri.value)
    co = Panel("Co-authors", kind="table", columns=["co-author", "papers together"])
    others, co.total = index.co_authors(iri.value, LIST_PAGE, (page - 1) * LIST_PAGE)
    co.table = [
        [NamedNode(other), Cell(f"{n:,}", href=f"/resource/paper/?author={key}&coauthor={_key(other)}")]
        for other, n in others
    ]
    co.pager = Pager.of("coauthors", page, co.total)
    graph = Panel("Co-author graph", kind="star")
    graph.bars = [(iri, 0), *[(NamedNode(other), n) for other, n in closest]] if closest else []
    graph.note = "The {n} closest co-authors, lines as thick as their papers together."
    graph.figures = {"n": str(len(closest))}
    graph.links = [
        (
            "Every co-author, in the query page",
            as_query(CO_AUTHORS, iri, "graph source=person target=coauthor weight=papers"),
        )
    ]
    return co, graph


def _key(iri: str) -> str:
    """An entity's key, the last segment of its IRI (person/ian-gemp -> ian-gemp)."""
    return iri.rsplit("/", 1)[-1]


def _award_order(store: ReadableGraph, index: Index) -> Callable[[tuple[NamedNode, Any]], tuple[int, bool, str]]:
    """A sort key for (award, ...) pairs: the newest edition's first, an honorable mention after
    the award it accompanies (the ontology's iclr:HonorableMention)."""
    mention = vocab.iclr("HonorableMention")

    def key(pair: tuple[NamedNode, Any]) -> tuple[int, bool, str]:
        award = pair[0]
        hit = index.entity(award.value)
        is_mention = any(True for _ in store.quads_for_pattern(award, vocab.RDF_TYPE, mention, DefaultGraph()))
        return (-(hit.year or 0) if hit else 0, is_mention, award.value)

    return key


def _paper_details(store: ReadableGraph, papers: list[str]) -> dict[str, tuple[Any, list[NamedNode]]]:
    """Each paper's decision (None if it has none) and awards (by IRI), in one query."""
    details: dict[str, tuple[Any, list[NamedNode]]] = {paper: (None, []) for paper in papers}
    if papers:
        query = PAPER_DETAILS.replace("PAPERS", " ".join(f"<{paper}>" for paper in papers))  # the index's IRIs
        for row in store.query(query, prefixes=vocab.QUERY_PREFIXES):
            awards = sorted(row["awards"].value.split()) if row["awards"] is not None else []
            details[row["paper"].value] = (row["d"], [NamedNode(a) for a in awards])
    return details


def _identifiers(store: ReadableGraph, iri: NamedNode, panel: Panel, kind: str) -> None:
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


# --------------------------------------------------------------------------------------------
# Organization


def organization(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = _heading(store, iri)
    entities = NamedNode(vocab.GRAPH_ENTITIES)
    about = Panel("Organization")
    about.add("Names", *[q.object for q in store.quads_for_pattern(iri, vocab.RDFS_LABEL, None, entities)])
    about.add("Also known as", *_values(store, iri, "alias"))
    chain: list[Term] = []
    node: Term = iri
    for _ in range(20):  # the chain of parents, nearest first (asserted parents only)
        parents = [q.object for q in store.quads_for_pattern(node, vocab.iclr("subOrganizationOf"), None, entities)]
        if not parents:
            break
        node = parents[0]
        chain.append(node)
    about.add("Part of", *chain)
    subs = [q.subject for q in store.quads_for_pattern(None, vocab.iclr("subOrganizationOf"), iri, entities)]
    about.add("Sub-organizations", *subs)
    about.add("Note", *_values(store, iri, "note"))
    _identifiers(store, iri, about, "organization")
    if index is None:
        return heading, [about]
    key = _key(iri.value)
    years = Panel("Papers per year (sub-organizations included)", kind="bars")
    years.bars = [
        (str(year), n, f"/resource/paper/?organization={key}&year={year}")
        for year, n in index.credited_per_year(iri.value)
    ]
    awards = Panel("Award papers", kind="table", columns=["award", "count", "paper"], wide=True)
    awarded, total = index.credited_award_papers(iri.value, LIST_LIMIT)
    awards.note, awards.figures = "{n} award papers, its sub-organizations' included", {"n": f"{total:,}"}
    details = _paper_details(store, awarded)
    by_award: dict[NamedNode, list[NamedNode]] = defaultdict(list)
    for paper in awarded:
        for award in details[paper][1]:
            by_award[award].append(NamedNode(paper))
    awards.table = [  # each award once, with its count and papers: newest first, outstanding before mentions
        [award, f"{len(papers):,}", papers]
        for award, papers in sorted(by_award.items(), key=_award_order(store, index))
    ]
    papers = Panel("Papers", kind="table", columns=["paper", "credited as"])
    page = pages.get("papers", 1)
    listed, papers.total = index.credited_papers(iri.value, LIST_PAGE, (page - 1) * LIST_PAGE)
    papers.table = [[NamedNode(paper), [NamedNode(v) for v in vias]] for paper, _, vias in listed]
    papers.groups = [str(year) if year else "" for _, year, _ in listed]
    papers.pager = Pager.of("papers", page, papers.total)
    papers.more = f"/resource/paper/?organization={key}"
    return heading, [about, years, awards, papers]


# --------------------------------------------------------------------------------------------
# Edition

EDITION_FIGURES = (
    "submissionCount",
    "acceptedCount",
    "oralCount",
    "spotlightCount",
    "acceptanceRate",
    "highScorePaperCount",
    "perfectScorePaperCount",
    "perfectScorePaperCountAtLeast",
    "resubmissionCount",
    "arxivPostedCount",
    "decisionsAnnounced",
)
# Who won and from where, one row per award paper: its first author (more than one where sources
# differ), the organizations it credits, the award and the committee's reason (from each source
# that gives one), outstanding papers before honorable mentions. `{conferred}` binds ?c, ?paper
# and ?award from ?e: an award or an edition.
AWARDED = """
SELECT ?paper ?award (GROUP_CONCAT(DISTINCT STR(?first); separator=" ") AS ?firsts)
       (GROUP_CONCAT(DISTINCT STR(?organization); separator=" ") AS ?organizations)
       (GROUP_CONCAT(DISTINCT ?said; separator=" · ") AS ?reason)
WHERE {{ {conferred}
  BIND (EXISTS {{ ?award a iclr:HonorableMention }} AS ?mention)
  OPTIONAL {{ ?c iclr:reason ?said }}
  OPTIONAL {{ ?paper iclr:firstAuthor ?first }}
  OPTIONAL {{ ?paper iclr:creditedOrganization ?organization }}
}} GROUP BY ?paper ?award ?mention ORDER BY ?mention ?award ?paper LIMIT {limit}"""
EDITION_AWARDS = AWARDED.format(
    conferred="?c iclr:conferredAward ?award ; iclr:conferredOn ?paper . ?award iclr:awardedAt ?e .", limit=LIST_LIMIT
)
AWARD_PAPERS = AWARDED.format(
    conferred="?c iclr:conferredAward ?e ; iclr:conferredOn ?paper . BIND (?e AS ?award)", limit=LIST_LIMIT
)
AWARDED_COLUMNS = ["paper", "first author", "credited organizations", "award", "the committee's reason"]


def _awarded(store: ReadableGraph, query: str, iri: NamedNode, award: bool = True) -> Panel:
    """The award papers of an edition or an award (`award`: with the award column), each row
    answering who and from where."""

    def entities(value: Any) -> list[NamedNode]:
        return [NamedNode(v) for v in str(value.value).split()] if value is not None else []

    rows = [
        [row["paper"], entities(row["firsts"]), entities(row["organizations"]), row["award"],
         row["reason"].value if row["reason"] is not None else ""]
        for row in _select(store, query, iri)
    ]  # fmt: skip
    keep = [i for i, column in enumerate(AWARDED_COLUMNS) if award or column != "award"]
    panel = Panel("Award papers" if award else "Papers", kind="table", columns=[AWARDED_COLUMNS[i] for i in keep])
    panel.table = [[row[i] for i in keep] for row in rows]
    return panel


EDITION_DECISIONS = """
SELECT ?decision (COUNT(DISTINCT ?paper) AS ?n) WHERE { ?paper iclr:submittedTo ?e ; iclr:decision ?decision }
GROUP BY ?decision ORDER BY DESC(?n)"""
# What the graph itself holds of an edition: its submissions, and its accepted papers per tier
EDITION_SUBMISSIONS = "SELECT (COUNT(DISTINCT ?paper) AS ?n) WHERE { ?paper iclr:submittedTo ?e }"
EDITION_TIERS = """
SELECT ?tier (COUNT(DISTINCT ?paper) AS ?n) WHERE { ?paper iclr:submittedTo ?e ; iclr:presentationType/iclr:tier ?tier }
GROUP BY ?tier"""


def edition(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = _heading(store, iri)
    about = Panel("Edition")
    about.add("Conference", *_values(store, iri, "editionOf"))
    about.add("Place", ", ".join(str(v.value) for local in ("city", "country") for v in _values(store, iri, local)))
    about.add(
        "Dates", " – ".join(str(v.value) for local in ("startDate", "endDate") for v in _values(store, iri, local))
    )
    about.properties(store, iri, [("Held online", "heldOnline"), ("Rating scale", "ratingScaleLevel")])
    _neighbours(store, iri, about)
    figures = Panel("Figures by source", kind="table")
    stated = {local: _per_graph(store, iri, local) for local in EDITION_FIGURES}
    notes = _per_graph(store, iri, "note")
    sources = sorted({g for per in [*stated.values(), notes] for g in per})
    figures.columns = ["figure", *[_source_of(g) for g in sources]]
    for local, per in stated.items():
        if per:
            values = [", ".join(_figure(local, v.value) for v in per.get(g, [])) for g in sources]
            differ = len({v for v in values if v}) > 1
            figures.table.append([OntologyLabel(local, "(sources differ)" if differ else ""), *values])
    if notes:  # why figures differ, in each source's own terms ("counted when submissions closed")
        figures.table.append([OntologyLabel("note"), *[notes.get(g, []) for g in sources]])
    decisions = Panel("Decisions (all submissions in the graph)", kind="bars")
    decisions.bars = [(row["decision"], int(row["n"].value)) for row in _select(store, EDITION_DECISIONS, iri)]
    awards = _awarded(store, EDITION_AWARDS, iri)
    top = Panel("Top-rated papers (public reviews)", kind="table", columns=["paper", "average rating", "reviews"])
    if index is not None:  # averaged with the generation (the index's rating table)
        top.table = [[NamedNode(paper), f"{average:.2f}", n] for paper, average, n in index.top_rated(iri.value, 10)]
    rates = Panel("Acceptance rate over the years", kind="bars")
    rates.bars = [
        (
            row["year"].value[:4],
            float(row["percent"].value),
            f"/resource/edition/{row['edition'].value.rsplit('/', 1)[-1]}",
            f"{float(row['percent'].value):g}%",
        )
        for row in _select(store, RATE_OVER_YEARS, iri)
    ]
    rates.links = [("This as a query", as_query(RATE_OVER_YEARS, iri, "line x=year y=percent"))]
    glance = _at_a_glance(store, iri, stated, decisions.bars)
    key = iri.value.rsplit("/", 1)[-1]
    decisions.bars = [  # each count links to the list of those papers
        (d, n, f"/resource/paper/?edition={key}&decision={d.value.rsplit('#', 1)[-1]}") for d, n in decisions.bars
    ]
    return heading, [glance, about, figures, decisions, rates, awards, top]


# Each edition of the conference: the rate stated, or accepted over submitted (the mean where
# sources differ), in percent
RATE_OVER_YEARS = """
SELECT ?year ?edition (ROUND(AVG(?rate) * 1000) / 10 AS ?percent) WHERE { ?e iclr:editionOf ?conference .
  ?edition iclr:editionOf ?conference ; iclr:year ?year .
  { ?edition iclr:acceptanceRate ?rate } UNION
  { ?edition iclr:acceptedCount ?accepted ; iclr:submissionCount ?submitted FILTER (?submitted > 0) BIND (?accepted / ?submitted AS ?rate) }
} GROUP BY ?year ?edition ORDER BY ?year"""
EDITION_NEIGHBOURS = """
SELECT ?other ?year WHERE { ?e iclr:editionOf ?conference ; iclr:year ?this . ?other iclr:editionOf ?conference ; iclr:year ?year .
  FILTER (?other != ?e) } ORDER BY ?year"""


def _neighbours(store: ReadableGraph, iri: NamedNode, about: Panel) -> None:
    """The editions of the same conference just before and after this one."""
    this = next((int(v.value[:4]) for v in _values(store, iri, "year")), None)
    if this is None:
        return
    neighbours = _select(store, EDITION_NEIGHBOURS, iri)
    about.add("Previous edition", *[r["other"] for r in neighbours if int(r["year"].value[:4]) < this][-1:])
    about.add("Next edition", *[r["other"] for r in neighbours if int(r["year"].value[:4]) > this][:1])


def _figure(local: str, value: str) -> str:
    """A stated figure as a person reads it: a rate as the percentage the source gave (0.29 -> 29%)."""
    return _percent(float(value)) if local == "acceptanceRate" else str(value)


def _percent(rate: float, digits: int | None = None) -> str:
    """0.29 -> "29%", 0.265 -> "26.5%" (as stated: no digit added); `digits` for a computed rate."""
    return f"{rate * 100:.{digits}f}%" if digits is not None else f"{round(rate * 100, 6):g}%"


# Tiers as a person names them (iclr:tier: 1 oral, talk or notable-top-5%; 2 spotlight...; 3 poster)
TIERS = {1: ("Orals", "oralCount"), 2: ("Spotlights", "spotlightCount"), 3: ("Posters", "")}


def _at_a_glance(
    store: ReadableGraph, iri: NamedNode, stated: dict[str, dict[str, list[Any]]], decided: list[tuple[Any, int]]
) -> Panel:
    """The headline figures of an edition twice, each column labelled: as its sources state them
    (a range where they differ, a rate as stated) and as the graph counts its own papers
    (submissions, decisions, tiers, and, where every paper it holds has a decision, the rate
    they make, with its fraction)."""
    glance = Panel("At a glance", kind="table", columns=["figure", "stated by sources", "counted in the graph"])

    def values(local: str) -> list[float]:
        return sorted({float(v.value) for per in stated.get(local, {}).values() for v in per})

    def span(numbers: list[float]) -> Cell | Remarked:
        shown = " – ".join(dict.fromkeys([f"{numbers[0]:,.0f}", f"{numbers[-1]:,.0f}"])) if numbers else ""
        return Remarked(shown, "(sources differ)") if len(numbers) > 1 else Cell(shown)

    def rate(accepted: float, submitted: float) -> str:
        return f"{_percent(accepted / submitted, 1)} ({accepted:,.0f} / {submitted:,.0f})" if submitted else ""

    submitted = _count(store, EDITION_SUBMISSIONS, iri)
    accepted = sum(n for d, n in decided if str(d.value).endswith("#Accepted"))
    every_decided = bool(submitted) and sum(n for _, n in decided) == submitted  # else a rate of a sample
    tiers = {int(row["tier"].value): int(row["n"].value) for row in _select(store, EDITION_TIERS, iri)}
    said_submitted, said_accepted = values("submissionCount"), values("acceptedCount")
    said_rate = Cell(" – ".join(dict.fromkeys(_percent(r) for r in values("acceptanceRate"))))
    fractions = [  # the fraction behind a rounded rate, from a source that states both: say which
        rate(float(accepted_[0].value), float(submitted_[0].value))
        for g, submitted_ in stated.get("submissionCount", {}).items()
        if (accepted_ := stated.get("acceptedCount", {}).get(g))
    ]
    if fractions:
        fraction = " · ".join(dict.fromkeys(fractions))
        said_rate = Cell(said_rate.text, note=fraction) if said_rate.text else Cell(fraction)
    rows: list[list[Any]] = [
        ["Submissions", span(said_submitted), Cell(f"{submitted:,}" if submitted else "")],
        ["Accepted", span(said_accepted), Cell(f"{accepted:,}" if accepted else "")],
        ["Acceptance rate", said_rate, Cell(rate(accepted, submitted) if every_decided else "")],
    ]
    for tier, (label, local) in TIERS.items():
        in_graph = Cell(f"{tiers[tier]:,}" if tier in tiers else "")
        rows.append([label, span(values(local)) if local else Cell(""), in_graph])
    glance.table = [row for row in rows if any(c.text for c in row[1:])]
    if submitted and said_submitted and submitted < said_submitted[-1]:
        glance.note = "The graph holds {shown} of the {total} submissions its sources count: those the sources name, and any OpenReview import."
        glance.figures = {"shown": f"{submitted:,}", "total": f"{said_submitted[-1]:,.0f}"}
    return glance


def _count(store: ReadableGraph, query: str, iri: NamedNode) -> int:
    rows = _select(store, query, iri)
    return int(rows[0]["n"].value) if rows and rows[0]["n"] is not None else 0


# --------------------------------------------------------------------------------------------
# Award, conference, source


def award(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = _heading(store, iri)
    about = Panel("Award")
    about.properties(
        store,
        iri,
        [
            ("Edition", "awardedAt"),
            ("Inaugural", "isInaugural"),
            ("Criteria", "criterion"),
            ("Committee", "committeeOrganization"),
            ("Note", "note"),
        ],
    )
    papers = _awarded(store, AWARD_PAPERS, iri, award=False)
    honoured = Panel("People honoured")
    honoured.add(
        "People", *[q.subject for q in store.quads_for_pattern(None, vocab.iclr("honoredWith"), iri, DefaultGraph())]
    )
    return heading, [about, papers, honoured]


def conference(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = _heading(store, iri)
    about = Panel("Conference")
    about.properties(
        store,
        iri,
        [("Founded", "foundedIn"), ("Founders", "founder"), ("Uses OpenReview", "usesOpenReview"), ("Note", "note")],
    )
    about.add("Editions", *sorted(_values(store, iri, "hasEdition"), key=str))
    return heading, [about]


SOURCE_STATES = """
SELECT ?kind (COUNT(DISTINCT ?s) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } ?g iclr:statedIn ?e .
  BIND (STRBEFORE(STRAFTER(STR(?s), STR(res:)), "/") AS ?kind) FILTER (?kind != "")
} GROUP BY ?kind ORDER BY DESC(?n)"""


def source(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    title = [q.object for q in store.quads_for_pattern(iri, NamedNode(vocab.DCTERMS + "title"), None, DefaultGraph())]
    heading = value(title[0]) if title else iri.value.rsplit("/", 1)[-1]
    about = Panel("Source")
    about.properties(
        store,
        iri,
        [
            ("Outlet", "outlet"),
            ("Written by", "writer"),
            ("About", "about"),
            ("Retrieved", "retrievedAt"),
            ("Service", "service"),
            ("Cites", "cites"),
            ("Summary", NamedNode(vocab.DCTERMS + "description")),
            ("Note", "note"),
        ],
    )
    tags = [value(q.object) for q in store.quads_for_pattern(iri, NamedNode(vocab.SCHEMA + "inLanguage"), None, None)]
    about.add("Language", *sorted({translate(LANGUAGE_NAMES.get(tag.lower(), tag)) for tag in tags}))
    if any(True for _ in store.quads_for_pattern(iri, vocab.RDF_TYPE, vocab.iclr("Article"), DefaultGraph())):
        # an article's date and address, or that it gives none (the five seed articles give neither)
        dated: list[Value] = [
            q.object
            for q in store.quads_for_pattern(iri, NamedNode(vocab.SCHEMA + "datePublished"), None, DefaultGraph())
        ]
        about.add("Published", *(dated or [translate("not stated in the article")]))
        kept = sorted({value(q.object) for q in store.quads_for_pattern(iri, vocab.iclr("seedFile"), None, None)})
        address: list[Value] = [
            q.object for q in store.quads_for_pattern(iri, NamedNode(vocab.SCHEMA + "url"), None, DefaultGraph())
        ]
        unstated = translate("not stated in the article; its text is kept as {file}").format(file=", ".join(kept))
        about.add("Address", *(address or [unstated]))
    states = Panel("What it states (entities per kind)", kind="bars")
    states.bars = [(row["kind"].value, int(row["n"].value)) for row in _select(store, SOURCE_STATES, iri)]
    return heading, [about, states]


# What each kind's page shows: (the store, the entity, the generation's index) -> heading, panels.
PROFILES: dict[str, Callable[[ReadableGraph, NamedNode, Index | None, Mapping[str, int]], tuple[str, list[Panel]]]] = {
    "paper": paper,
    "person": person,
    "organization": organization,
    "edition": edition,
    "award": award,
    "conference": conference,
    "source": source,
}


# --------------------------------------------------------------------------------------------
# From terms to what a person reads


def _drop_empty_columns(panel: Panel) -> None:
    """A column no row fills (no award came with a reason) says nothing: leave it out."""
    if not panel.table:
        return
    keep = [i for i in range(len(panel.columns)) if any(any(c.text for c in row[i]) for row in panel.table)]
    panel.columns = [panel.columns[i] for i in keep]
    panel.table = [[row[i] for i in keep] for row in panel.table]


def _bar(name: Cell, n: float, href: str = "", shown: str = "", *, star: bool = False) -> tuple[Any, float, str, str]:
    """A bar as the page draws it: its name (a cell, linked, in a star), its length, where its
    count links, and the count as read ("1,128", "26.5%")."""
    return (name if star else name.text, n, href, shown or (f"{n:,}" if isinstance(n, int) else f"{n:g}"))


def render_panels(panels: list[Panel], labeler: Labeler) -> list[Panel]:
    """The panels with every term turned into a cell; empty panels dropped."""
    terms: list[Any] = []
    for panel in panels:
        for _, values in panel.rows:
            terms += values
        for row in panel.table:
            for item in row:
                terms += item if isinstance(item, list) else [item]
        terms += panel.columns + [bar[0] for bar in panel.bars] + panel.groups
    labeler.learn(terms)

    def cells(value: Any) -> list[Cell]:
        return [labeler.cell(v) for v in value] if isinstance(value, list) else [labeler.cell(value)]

    out = []
    for panel in panels:
        if not panel:
            continue
        panel.title = translate(panel.title, labeler.lang)
        panel.rows = [
            (translate(label, labeler.lang), [labeler.cell(v) for v in values]) for label, values in panel.rows
        ]
        panel.table = [[cells(v) for v in row] for row in panel.table]
        panel.groups = [labeler.cell(group) for group in panel.groups]
        panel.bars = [_bar(labeler.cell(bar[0]), *bar[1:4], star=panel.kind == "star") for bar in panel.bars]
        panel.links = [(translate(words, labeler.lang), href) for words, href in panel.links]
        if panel.kind == "star" and panel.bars:
            panel.svg = star(panel.bars[0][0], [(bar[0], bar[1]) for bar in panel.bars[1:]])
        if panel.total is not None and panel.total > len(panel.table):
            panel.note = "{shown} of {total} shown"
            panel.figures = {"shown": f"{len(panel.table):,}", "total": f"{panel.total:,}"}
        panel.note = translate(panel.note, labeler.lang).format(**panel.figures) if panel.note else ""
        panel.columns = [
            labeler.cell(c).text if not isinstance(c, str) else translate(c, labeler.lang) for c in panel.columns
        ]
        _drop_empty_columns(panel)
        out.append(panel)
    return out


# --------------------------------------------------------------------------------------------
# schema.org, for crawlers and citation tools


def schema_org(store: ReadableGraph, iri: NamedNode, kind: str, index: Index | None) -> dict[str, Any]:
    """The entity as schema.org JSON-LD: type, name, its people and the same item elsewhere."""
    hit = index.entity(iri.value) if index else None
    data: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": KINDS[kind].schema_type if kind in KINDS else "Thing",
        "@id": iri.value,
        "url": iri.value,
        "name": hit.label if hit else iri.value.rsplit("/", 1)[-1],
    }
    same = [value(q.object) for q in store.quads_for_pattern(iri, vocab.SKOS_EXACT_MATCH, None, DefaultGraph())]
    same += [v.value for v in _values(store, iri, "openReviewUrl") + _values(store, iri, "openReviewProfilePage")]
    if same:
        data["sameAs"] = same
    if kind == "paper":
        people = [row["person"] for row in _select(store, PAPER_AUTHORS, iri)]
        names = index.labels(p.value for p in people) if index else {}
        data["author"] = [
            {"@type": "Person", "@id": p.value, "name": names.get(p.value, (p.value, ""))[0]} for p in people
        ]
        if hit and hit.year:
            data["datePublished"] = str(hit.year)
    elif kind == "person":
        data["alternateName"] = [v.value for v in _values(store, iri, "nativeName") + _values(store, iri, "alias")]
        employers = _values(store, iri, "employedBy")
        names = index.labels(e.value for e in employers) if index else {}
        data["affiliation"] = [
            {"@type": "Organization", "@id": e.value, "name": names.get(e.value, (e.value, ""))[0]} for e in employers
        ]
    return data


def bibtex(store: ReadableGraph, iri: NamedNode, index: Index | None) -> str:
    """The paper as a BibTeX entry (@inproceedings): its title, its authors in order, the year and
    edition, and where to read it. Braces and backslashes in the data are escaped."""
    key = iri.value.rsplit("/", 1)[-1]
    titles = Counter(str(t.value) for values in _per_graph(store, iri, "title").values() for t in values)
    title = (ranked_titles(titles) or [f"[title withdrawn: {key}]"])[0]
    people = [row["person"] for row in _select(store, PAPER_AUTHORS, iri)]
    names = index.labels(p.value for p in people) if index else {}
    authors = " and ".join(names.get(p.value, (p.value.rsplit("/", 1)[-1], ""))[0] for p in people)
    years = sorted({v.value[:4] for e in _values(store, iri, "submittedTo") for v in _values(store, e, "year")})
    year = years[0] if years else ""
    forum = [v.value for v in _values(store, iri, "openReviewUrl")]
    fields = {
        "title": "{" + title + "}",  # the inner braces keep its capitals as written
        "author": authors,
        "booktitle": f"International Conference on Learning Representations (ICLR {year})".replace(" ()", ""),
        "year": year,
        "url": forum[0] if forum else iri.value,
        "note": f"iclr-kg: {iri.value}",
    }
    lines = [f"  {name} = {{{_bib(value, keep=name == 'title')}}}," for name, value in fields.items() if value]
    return "@inproceedings{" + f"iclr{year}-{re.sub(r'[^A-Za-z0-9_-]', '', key)},\n" + "\n".join(lines) + "\n}\n"


# BibTeX counts every brace, `\}` too, when it finds a field's end: a stray one is written as a
# command whose own braces balance
_BIB_ESCAPES = {"\\": "\\textbackslash{}", "{": "\\textbraceleft{}", "}": "\\textbraceright{}"}


def _bib(text: str, keep: bool = False) -> str:
    """A value safe inside BibTeX's braces: a stray brace or backslash would end or break it."""
    inner = text[1:-1] if keep else text
    escaped = re.sub(r"[\\{}]", lambda m: _BIB_ESCAPES[m[0]], inner)  # one pass: escapes are not escaped again
    return "{" + escaped + "}" if keep else escaped
