"""A person's page: a summary, papers per year, the co-author star, their papers by year and
every co-author, paged (the index's authorship table: milliseconds for the most prolific)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyoxigraph import NamedNode

from iclr_kg import terms
from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Hit, Index, ListFilter
from iclr_kg.web.html import Cell, Remarked
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds.kindpage import KindPage
from iclr_kg.web.kinds.panels import (
    LIST_PAGE,
    NO_PAGES,
    Pager,
    Panel,
    as_percent,
    as_query,
    heading_of,
    identifiers_panel,
    in_both,
    key_of,
    paper_details,
    reasons,
    said_in_both,
    select_rows,
    values_of,
)

SUMMARY_ITEMS = 5  # organizations and co-authors named in a person's summary
ORGANIZATIONS_COUNTED = (
    "Organizations on their papers: the years and the papers that credit each one itself; a unit "
    "counts apart from the organization it is part of."
)


STAR_POINTS = 12  # co-authors drawn around a person


# One row per role, its name and degree in English and in Chinese (`reasons` picks the page's)
PERSON_ROLES = f"""
SELECT ?org ?current ?education {in_both("role", "name")} {in_both("degree")} WHERE {{
  ?r iclr:roleOf ?e ; iclr:roleAt ?org . {said_in_both("?r", "roleName", "name")} {said_in_both("?r", "degree")}
  OPTIONAL {{ ?r iclr:isCurrent ?current }} OPTIONAL {{ ?r iclr:isEducation ?education }}
}} GROUP BY ?r ?org ?current ?education ORDER BY DESC(?current) ?role"""


# Decision and awards of the papers a page lists from the index (VALUES: those papers)


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
    heading = heading_of(store, iri)
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
    identifiers_panel(store, iri, names, "person")
    roles = Panel("Positions and education", kind="table", columns=["organization", "role", "degree", "now"])
    for row in select_rows(store, PERSON_ROLES, iri):
        now = "current" if row["current"] is not None and row["current"].value == "true" else ""
        roles.table.append([row["org"], reasons(row, "role"), reasons(row, "degree"), now])
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
    key = key_of(iri.value)
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
            accepted=f"{accepted:,}", decided=f"{every:,}", percent=as_percent(accepted / every, 1)
        )
        summary.add("Accepted", Cell(share))
    awarded = sum(n for _, n in decisions["award"])  # the same pass counted the award papers
    if awarded:
        summary.add("Award papers", Cell(f"{awarded:,}"))
    credited = index.organizations_of(iri.value, SUMMARY_ITEMS)
    summary.add(
        "Organizations on their papers",
        *[
            Remarked(NamedNode(org), " – ".join(dict.fromkeys([str(first), str(last)])) + f" · {n:,}")
            for org, n, first, last in credited
        ],
    )
    if credited:  # its counts are not an organization page's, which counts its units' papers too
        summary.note = ORGANIZATIONS_COUNTED
    summary.add("Closest co-authors", *[Remarked(NamedNode(other), f"{n:,}") for other, n in closest])
    return summary, years


def _papers_by_year(
    store: ReadableGraph, index: Index, iri: NamedNode, page: int, per_year: list[tuple[Any, ...]]
) -> Panel:
    """A person's papers newest first, grouped under their years (dblp's order), a page at a
    time; a line of years jumps to the page where each begins."""
    papers = Panel("Papers", kind="table", columns=["paper", "decision", "awards"])
    listed, papers.total = index.papers_of(iri.value, LIST_PAGE, (page - 1) * LIST_PAGE)
    details = paper_details(store, [paper for paper, _ in listed])
    papers.table = [[NamedNode(paper), *details[paper]] for paper, _ in listed]
    papers.groups = [str(year) if year else "" for _, year in listed]
    papers.pager = Pager.of("papers", page, papers.total)
    start = 0
    for year, n, _ in sorted(per_year, key=lambda bar: bar[0], reverse=True):  # newest first, as listed
        papers.jumps.append((year, start // LIST_PAGE + 1))
        start += n
    papers.more = f"/resource/paper/?author={key_of(iri.value)}"
    return papers


def _co_authors(index: Index, iri: NamedNode, page: int, closest: list[tuple[str, int]]) -> tuple[Panel, Panel]:
    """Every co-author, most papers together first, a page at a time, each count linking to the
    papers the two wrote together; and the closest drawn around the person (an SVG star)."""
    key = key_of(iri.value)
    co = Panel("Co-authors", kind="table", columns=["co-author", "papers together"])
    others, co.total = index.co_authors(iri.value, LIST_PAGE, (page - 1) * LIST_PAGE)
    co.table = [
        [NamedNode(other), Cell(f"{n:,}", href=f"/resource/paper/?author={key}&coauthor={key_of(other)}")]
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


def schema_org_fields(store: ReadableGraph, iri: NamedNode, index: Index | None, hit: Hit | None) -> dict[str, Any]:
    """What a person's schema.org JSON-LD adds: their other names, and where they work."""
    employers = values_of(store, iri, "employedBy")
    names = index.labels(e.value for e in employers) if index else {}
    return {
        "alternateName": [v.value for v in values_of(store, iri, "nativeName") + values_of(store, iri, "alias")],
        "affiliation": [
            {"@type": "Organization", "@id": e.value, "name": names.get(e.value, (e.value, ""))[0]} for e in employers
        ],
    }


PAGE = KindPage(profile=person, plural="People", schema_org=schema_org_fields)
