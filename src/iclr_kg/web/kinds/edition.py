"""An edition's page: what the sources state beside what the graph counts, figures by source,
the acceptance rate over the years, its award papers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyoxigraph import NamedNode

from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index
from iclr_kg.web.html import Cell, OntologyLabel, Remarked
from iclr_kg.web.kinds.panels import (
    AWARDED,
    LIST_LIMIT,
    NO_PAGES,
    Panel,
    as_percent,
    as_query,
    awarded_panel,
    heading_of,
    per_graph,
    select_rows,
    source_of,
    values_of,
)

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


EDITION_AWARDS = AWARDED.format(
    conferred="?c iclr:conferredAward ?award ; iclr:conferredOn ?paper . ?award iclr:awardedAt ?e .", limit=LIST_LIMIT
)


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
    heading = heading_of(store, iri)
    about = Panel("Edition")
    about.add("Conference", *values_of(store, iri, "editionOf"))
    about.add("Place", ", ".join(str(v.value) for local in ("city", "country") for v in values_of(store, iri, local)))
    about.add(
        "Dates", " – ".join(str(v.value) for local in ("startDate", "endDate") for v in values_of(store, iri, local))
    )
    about.properties(store, iri, [("Held online", "heldOnline"), ("Rating scale", "ratingScaleLevel")])
    _neighbours(store, iri, about)
    figures = Panel("Figures by source", kind="table")
    stated = {local: per_graph(store, iri, local) for local in EDITION_FIGURES}
    notes = per_graph(store, iri, "note")
    sources = sorted({g for per in [*stated.values(), notes] for g in per})
    figures.columns = ["figure", *[source_of(g) for g in sources]]
    for local, per in stated.items():
        if per:
            values = [", ".join(_figure(local, v.value) for v in per.get(g, [])) for g in sources]
            differ = len({v for v in values if v}) > 1
            figures.table.append([OntologyLabel(local, "(sources differ)" if differ else ""), *values])
    if notes:  # why figures differ, in each source's own terms ("counted when submissions closed")
        figures.table.append([OntologyLabel("note"), *[notes.get(g, []) for g in sources]])
    decisions = Panel("Decisions (all submissions in the graph)", kind="bars")
    decisions.bars = [(row["decision"], int(row["n"].value)) for row in select_rows(store, EDITION_DECISIONS, iri)]
    awards = awarded_panel(store, EDITION_AWARDS, iri)
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
        for row in select_rows(store, RATE_OVER_YEARS, iri)
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
    this = next((int(v.value[:4]) for v in values_of(store, iri, "year")), None)
    if this is None:
        return
    neighbours = select_rows(store, EDITION_NEIGHBOURS, iri)
    about.add("Previous edition", *[r["other"] for r in neighbours if int(r["year"].value[:4]) < this][-1:])
    about.add("Next edition", *[r["other"] for r in neighbours if int(r["year"].value[:4]) > this][:1])


def _figure(local: str, value: str) -> str:
    """A stated figure as a person reads it: a rate as the percentage the source gave (0.29 -> 29%)."""
    return as_percent(float(value)) if local == "acceptanceRate" else str(value)


# Tiers (iclr:tier: 1 oral, talk or notable-top-5%; 2 spotlight...; 3 poster) by the property
# that states how many an edition had, named by its label; posters have none: the class's word
TIERS: dict[int, tuple[Any, str]] = {
    1: (OntologyLabel("oralCount"), "oralCount"),
    2: (OntologyLabel("spotlightCount"), "spotlightCount"),
    3: ("Posters", ""),
}


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
        return f"{as_percent(accepted / submitted, 1)} ({accepted:,.0f} / {submitted:,.0f})" if submitted else ""

    submitted = _count(store, EDITION_SUBMISSIONS, iri)
    accepted = sum(n for d, n in decided if str(d.value).endswith("#Accepted"))
    every_decided = bool(submitted) and sum(n for _, n in decided) == submitted  # else a rate of a sample
    tiers = {int(row["tier"].value): int(row["n"].value) for row in select_rows(store, EDITION_TIERS, iri)}
    said_submitted, said_accepted = values("submissionCount"), values("acceptedCount")
    said_rate = Cell(" – ".join(dict.fromkeys(as_percent(r) for r in values("acceptanceRate"))))
    fractions = [  # the fraction behind a rounded rate, from a source that states both: say which
        rate(float(accepted_[0].value), float(submitted_[0].value))
        for g, submitted_ in stated.get("submissionCount", {}).items()
        if (accepted_ := stated.get("acceptedCount", {}).get(g))
    ]
    if fractions:
        fraction = " · ".join(dict.fromkeys(fractions))
        said_rate = Cell(said_rate.text, note=fraction) if said_rate.text else Cell(fraction)
    rows: list[list[Any]] = [
        # each figure named as its property is, in "Figures by source" below too
        [OntologyLabel("submissionCount"), span(said_submitted), Cell(f"{submitted:,}" if submitted else "")],
        [OntologyLabel("acceptedCount"), span(said_accepted), Cell(f"{accepted:,}" if accepted else "")],
        [OntologyLabel("acceptanceRate"), said_rate, Cell(rate(accepted, submitted) if every_decided else "")],
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
    rows = select_rows(store, query, iri)
    return int(rows[0]["n"].value) if rows and rows[0]["n"] is not None else 0
