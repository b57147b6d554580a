"""An edition's page: what the sources state beside what the graph counts, figures by source,
the acceptance rate over the years, its award papers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pyoxigraph import Literal, NamedNode

from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index
from iclr_kg.web.html import SOURCES_DIFFER, Attributed, Cell, OntologyLabel, Remarked, StatedFigures, reconciled
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds.kindpage import KindPage
from iclr_kg.web.kinds.panels import (
    AWARDED,
    LIST_LIMIT,
    NO_PAGES,
    Panel,
    as_percent,
    awarded_panel,
    heading_of,
    per_graph,
    select_rows,
    source_cells,
    source_of,
    values_of,
)
from iclr_kg.web.trends import coverage, edition_figures, query_link, rate_chart
from iclr_kg.web.trends import span as stated_span

EDITION_FIGURES = (
    "submissionCount",
    "acceptedCount",
    "oralCount",
    "spotlightCount",
    "posterCount",
    "withdrawnCount",
    "deskRejectedCount",
    "acceptanceRate",
    "highScorePaperCount",
    "perfectScorePaperCount",
    "perfectScorePaperCountAtLeast",
    "resubmissionCount",
    "arxivPostedCount",
    "decisionsAnnounced",
    "noPaperAwards",  # ICLR 2020: the sources that say no paper award was given, beside any list
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

Cited = Mapping[str, Any]  # each source's IRI -> how a page names it (panels.source_cells)


def _place(
    cities: dict[str, list[Any]], countries: dict[str, list[Any]], online: dict[str, list[Any]], cited: Cited
) -> list[Attributed]:
    """The city and country each source states (per_graph), as one place, once per language it
    is written in, as that language writes a place ("Vienna, Austria"; 奥地利维也纳, country first;
    joined as two values, Chinese pages read 维也纳、奥地利, two places), named by the source that
    states it. Where another source says the edition was held online, the place is remarked:
    sources differ (ICLR 2020's place is the venue an article gave before the conference moved
    online)."""
    held_online = {graph for graph, values in online.items() if any(v.value == "true" for v in values)}
    return [
        Attributed(
            tuple(_written_places(cities[graph], countries[graph])),
            (cited.get(source_of(graph).value, source_of(graph)),),
            SOURCES_DIFFER if held_online - {graph} else "",
        )
        for graph in sorted(cities.keys() & countries.keys())
    ]


def _written_places(cities: list[Any], countries: list[Any]) -> list[Literal]:
    written: dict[str, dict[str, str]] = {}
    for local, values in (("city", cities), ("country", countries)):
        for value in values:
            if isinstance(value, Literal):
                written.setdefault(value.language or "", {})[local] = value.value
    english = written.get("en", {})
    return [
        Literal(
            translate("{city}, {country}", lang[:2]).format(**{**english, **parts}).strip(", "), language=lang or None
        )
        for lang, parts in sorted(written.items())
        if {**english, **parts}.keys() == {"city", "country"}
    ]


def _held_online(online: dict[str, list[Any]], cited: Cited) -> list[Attributed]:
    """Whether the edition was held online (per_graph), each value once, named by the sources
    that state it."""
    stated: dict[Literal, list[str]] = {}
    for graph, values in sorted(online.items()):
        for value in values:
            stated.setdefault(value, []).append(source_of(graph).value)
    return [
        Attributed((value,), tuple(cited.get(s, NamedNode(s)) for s in sources)) for value, sources in stated.items()
    ]


def edition(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = heading_of(store, iri)
    about = Panel("Edition")
    about.add("Conference", *values_of(store, iri, "editionOf"))
    cities, countries, online = (per_graph(store, iri, local) for local in ("city", "country", "heldOnline"))
    cited = source_cells(store, sorted({source_of(graph).value for graph in {*cities, *countries, *online}}))
    about.add("Place", *_place(cities, countries, online, cited))
    about.add(
        "Dates", " – ".join(str(v.value) for local in ("startDate", "endDate") for v in values_of(store, iri, local))
    )
    about.add("Held online", *_held_online(online, cited))
    about.add("Rating scale", *_rating_scale(store, iri))
    _neighbours(store, iri, about)
    stated = {local: per_graph(store, iri, local) for local in EDITION_FIGURES}
    figures = _figures_by_source(store, iri, stated)
    decisions = Panel("Decisions (all submissions in the graph)", kind="bars")
    decisions.bars = [(row["decision"], int(row["n"].value)) for row in select_rows(store, EDITION_DECISIONS, iri)]
    awards = awarded_panel(store, EDITION_AWARDS, iri)
    top = Panel("Top-rated papers (public reviews)", kind="table", columns=["paper", "average rating", "reviews"])
    if index is not None:  # averaged with the generation (the index's rating table)
        top.table = [[NamedNode(paper), f"{average:.2f}", n] for paper, average, n in index.top_rated(iri.value, 10)]
    conference = next(iter(values_of(store, iri, "editionOf")), None)
    rates = (
        rate_chart(edition_figures(store, conference), query_link("line x=year y=rateHigh", conference))
        if conference
        else Panel("")
    )
    glance = _at_a_glance(store, iri, stated, decisions.bars)
    key = iri.value.rsplit("/", 1)[-1]
    decisions.bars = [  # each count links to the list of those papers
        (d, n, f"/resource/paper/?edition={key}&decision={d.value.rsplit('#', 1)[-1]}") for d, n in decisions.bars
    ]
    return heading, [glance, about, figures, decisions, rates, awards, top]


RECOMMENDATIONS = "SELECT ?level ?words ?leaning WHERE { ?level a iclr:Recommendation ; skos:notation ?words ; iclr:leaning ?leaning }"
LEADING_NUMBER = re.compile(r"\s*(\d+(?:\.\d+)?)\s*:")


def _rating_scale(store: ReadableGraph, iri: NamedNode) -> list[Any]:
    """An edition's rating levels in the scale's order, lowest first: by the number that leads a
    level ("1: strong reject" before "10: strong accept"), else by how far its words lean towards
    acceptance (iclr:leaning: reject, weak reject, weak accept, accept); words alone are named by
    the ontology's label in the page's language."""
    known = {
        r["words"].value: (r["level"].value, int(r["leaning"].value)) for r in select_rows(store, RECOMMENDATIONS, iri)
    }
    levels = []
    for level in values_of(store, iri, "ratingScaleLevel"):
        number = LEADING_NUMBER.match(level.value)
        term, leaning = known.get(level.value.strip().lower(), (None, None))
        shown = OntologyLabel(term.rsplit("#", 1)[-1]) if term and not number else level
        order = float(number[1]) if number else leaning if leaning is not None else float("inf")
        levels.append((order, level.value, shown))
    return [shown for *_, shown in sorted(levels, key=lambda o: (o[0], o[1]))]


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


def _figures_by_source(store: ReadableGraph, iri: NamedNode, stated: dict[str, dict[str, list[Any]]]) -> Panel:
    """One row per source: the figures it states in one line, and its note (why figures differ,
    in the source's own terms: "counted when submissions closed"); a row per source holds its
    card at any width, where a column per source overflowed it (ICLR 2021 has ten)."""
    figures = Panel("Figures by source", kind="table", columns=["source", "figures it states", OntologyLabel("note")])
    notes = per_graph(store, iri, "note")
    graphs = sorted({g for per in [*stated.values(), notes] for g in per})
    cited = source_cells(store, [source_of(graph).value for graph in graphs])
    for graph in graphs:
        said = tuple(
            (local, ", ".join(_figure(local, v.value) for v in per[graph]))
            for local, per in stated.items()
            if graph in per
        )
        figures.table.append(
            [
                cited.get(source_of(graph).value, source_of(graph)),
                StatedFigures(said) if said else "",
                notes.get(graph, []),
            ]
        )
    return figures


def _figure(local: str, value: str) -> str:
    """A stated figure as a person reads it: a count with thousands separators (2,997), a rate as
    the percentage the source gave (0.29 -> 29%), a yes or no as the words."""
    if local == "noPaperAwards":  # a yes or no, in the page's words
        return "yes" if value == "true" else "no"
    if local == "acceptanceRate":
        return as_percent(float(value))
    return f"{int(value):,}" if value.isdigit() else value


# Tiers (iclr:tier: 1 oral, talk or notable-top-5%; 2 spotlight...; 3 poster) by the property
# that states how many an edition had, named by its label
TIERS: dict[int, str] = {1: "oralCount", 2: "spotlightCount", 3: "posterCount"}


def _at_a_glance(
    store: ReadableGraph, iri: NamedNode, stated: dict[str, dict[str, list[Any]]], decided: list[tuple[Any, int]]
) -> Panel:
    """The headline figures of an edition twice, each column labelled: as its sources state them
    (a range where they differ, a rate as stated) and as the graph counts its own papers: what it
    holds against what the edition had, and its counts (the rate only where every paper it holds
    has a decision), each said to be of the papers held unless the graph holds the edition whole."""
    glance = Panel("At a glance", kind="table", columns=["figure", "stated by sources", "counted in the graph"])

    def values(local: str) -> list[float]:
        return sorted({float(v.value) for per in stated.get(local, {}).values() for v in per})

    def span(numbers: list[float], percent: bool = False) -> Cell | Remarked:
        return stated_span(reconciled(numbers) if numbers else None, percent)

    def rate(accepted: float, submitted: float) -> str:
        return f"{as_percent(accepted / submitted, 1)} ({accepted:,.0f} / {submitted:,.0f})" if submitted else ""

    submitted = _count(store, EDITION_SUBMISSIONS, iri)
    accepted = sum(n for d, n in decided if str(d.value).endswith("#Accepted"))
    tiers = {int(row["tier"].value): int(row["n"].value) for row in select_rows(store, EDITION_TIERS, iri)}
    said_submitted, said_accepted = values("submissionCount"), values("acceptedCount")
    # the graph's counts are the edition's only where it holds every submission a source counts,
    # each with its decision; otherwise they are of the papers it holds, and say so
    every_decided = bool(submitted) and sum(n for _, n in decided) == submitted  # else no rate at all
    whole = every_decided and bool(said_submitted) and submitted >= said_submitted[0]
    held = "" if whole else "among the papers held, not the edition's"

    def counted(n: int, text: str = "") -> Cell | Remarked:
        shown = text or (f"{n:,}" if n else "")
        return Remarked(shown, held) if shown and held else Cell(shown)

    said_rate = span(values("acceptanceRate"), percent=True)
    fractions = [  # the fraction behind a rounded rate, from a source that states both: say which
        rate(float(accepted_[0].value), float(submitted_[0].value))
        for g, submitted_ in stated.get("submissionCount", {}).items()
        if (accepted_ := stated.get("acceptedCount", {}).get(g))
    ]
    if fractions:
        # the rate itself is not said twice: 28.7% (860 / 2,997), not 28.7% 28.7% (860 / 2,997)
        fraction = " · ".join(dict.fromkeys(f.removeprefix(f"{said_rate.text} ") for f in fractions))
        differ = f"{translate(SOURCES_DIFFER)} " if isinstance(said_rate, Remarked) else ""
        said_rate = Cell(said_rate.text, note=differ + fraction) if said_rate.text else Cell(fraction)
    total = (said_submitted[0], said_submitted[-1]) if said_submitted else None
    rows: list[list[Any]] = [
        # each figure named as its property is, in "Figures by source" below too
        [OntologyLabel("submissionCount"), span(said_submitted), coverage(submitted, total) if submitted else Cell("")],
        [OntologyLabel("acceptedCount"), span(said_accepted), counted(accepted)],
        [OntologyLabel("acceptanceRate"), said_rate, counted(0, rate(accepted, submitted) if every_decided else "")],
    ]
    for tier, local in TIERS.items():
        rows.append([OntologyLabel(local), span(values(local)), counted(tiers.get(tier, 0))])
    glance.table = [row for row in rows if any(c.text for c in row[1:])]
    return glance


def _count(store: ReadableGraph, query: str, iri: NamedNode) -> int:
    rows = select_rows(store, query, iri)
    return int(rows[0]["n"].value) if rows and rows[0]["n"] is not None else 0


PAGE = KindPage(profile=edition, plural="Editions")
