"""A conference's page: its founders and editions, its figures over the years (stated and
counted, web/trends.py) and how reviews rated papers, year by year."""

from __future__ import annotations

from collections.abc import Mapping

from pyoxigraph import NamedNode

from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index
from iclr_kg.web.html import Worded
from iclr_kg.web.kinds.kindpage import KindPage
from iclr_kg.web.kinds.panels import NO_PAGES, Panel, as_query, heading_of, select_rows, values_of
from iclr_kg.web.trends import trend_panels


def conference(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = heading_of(store, iri)
    about = Panel("Conference")
    about.properties(
        store,
        iri,
        [("Founded", "foundedIn"), ("Founders", "founder"), ("Uses OpenReview", "usesOpenReview"), ("Note", "note")],
    )
    about.add("Editions", *sorted(values_of(store, iri, "hasEdition"), key=str))
    return heading, [about, *trend_panels(store, iri), ratings_panel(store, iri)]


# What a conference holds, by the ontology: its editions (iclr:editionOf) and the awards given at
# them (iclr:awardedAt/iclr:editionOf); the front page counts ICLR's, `?conference=` lists them
HELD_AT = """
SELECT DISTINCT ?held WHERE { { ?held iclr:editionOf ?e } UNION { ?held iclr:awardedAt/iclr:editionOf ?e } }"""
HELD_KINDS = ("edition", "award")  # the kinds of what a conference holds: the lists `?conference=` narrows


def held_at(store: ReadableGraph, iri: NamedNode) -> frozenset[str]:
    """The IRIs of the editions of the conference `iri` and of the awards given at them."""
    return frozenset(row["held"].value for row in select_rows(store, HELD_AT, iri))


# How many reviews gave each rating, per edition of the conference whose reviews the graph holds
RATINGS_BY_YEAR = """
SELECT ?year ?rating (COUNT(DISTINCT ?review) AS ?reviews) WHERE {
  ?edition iclr:editionOf ?e ; iclr:year ?year . ?paper iclr:submittedTo ?edition .
  ?review iclr:reviewOf ?paper ; iclr:rating ?rating .
} GROUP BY ?year ?rating ORDER BY ?year ?rating"""


def ratings_panel(store: ReadableGraph, iri: NamedNode) -> Panel:
    """A row per year with reviews: each rating's share of that year's reviews (shaded by it)."""
    counts: dict[int, dict[int, int]] = {}
    for row in select_rows(store, RATINGS_BY_YEAR, iri):
        year, rating = int(row["year"].value), round(float(row["rating"].value))
        counts.setdefault(year, {})[rating] = counts.get(year, {}).get(rating, 0) + int(row["reviews"].value)
    ratings = sorted({r for per in counts.values() for r in per})
    panel = Panel("Ratings per year (reviews held)", kind="table", columns=["year", "reviews", *map(str, ratings)])
    for year, per in sorted(counts.items(), reverse=True):
        total = sum(per.values())
        shares = [Worded("{share}%", (("share", f"{100 * per[r] / total:.0f}"),)) if r in per else "" for r in ratings]
        panel.table.append([str(year), f"{total:,}", *shares])
    panel.note = "Each rating's share of the year's reviews held in the graph; scales differ between years."
    panel.links = [("This as a query", as_query(RATINGS_BY_YEAR, iri, "bar x=rating y=reviews series=year"))]
    panel.wide = True
    return panel


PAGE = KindPage(profile=conference, plural="Conferences")
