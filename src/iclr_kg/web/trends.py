"""A conference's figures over the years, stated by its sources and counted in the graph, with
what the graph holds of each edition: read from the saved query `edition-trends` (the page's
"this as a query"), drawn as a table and small charts on the conference page, the front page and
each edition's page."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from flask import url_for
from pyoxigraph import NamedNode

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph
from iclr_kg.web.charts import Series
from iclr_kg.web.html import SOURCES_DIFFER, Cell, Remarked, Worded, reconciled, stated_range
from iclr_kg.web.kinds.panels import Panel, as_percent
from iclr_kg.web.state import state

TRENDS = "edition-trends"  # queries/edition-trends.rq
CONFERENCE = "conference"  # its parameter: whose editions
FIGURES = ("submissions", "accepted", "rate", "orals", "spotlights", "posters")
TIER_FIGURES = {"orals": "heldOrals", "spotlights": "heldSpotlights", "posters": "heldPosters"}


@dataclass(frozen=True)
class EditionFigures:
    """One edition's row: each stated figure as (lowest, highest) over its sources, and what the
    graph counts of its own papers; `counted_rate` only where it holds every submission decided."""

    year: int
    edition: NamedNode
    stated: dict[str, tuple[float, float]]
    held: int = 0
    decided: int = 0
    accepted: int = 0
    tiers: dict[str, int] = field(default_factory=dict)
    counted_rate: float | None = None

    @property
    def whole(self) -> bool:
        """The graph holds every submission a source counts, each with its decision."""
        return self.counted_rate is not None


def edition_figures(store: ReadableGraph, conference: NamedNode) -> list[EditionFigures]:
    """Every edition of `conference`, by year, from the saved query."""
    saved = state().saved[TRENDS]
    rows = []
    bound = saved.substitutions({CONFERENCE: conference.value})
    for s in store.query(saved.text, prefixes=vocab.QUERY_PREFIXES, substitutions=bound):
        number = functools.partial(_number, s)

        stated = {
            figure: (low, number(figure + "High") or low)
            for figure in FIGURES
            if (low := number(figure + "Low")) is not None
        }
        if s["rates"] is not None:  # every source's rate: one that is another's, rounded, is that one
            stated["rate"] = reconciled(float(rate) for rate in s["rates"].value.split(" / "))
        rows.append(
            EditionFigures(
                year=int(s["year"].value),
                edition=s["edition"],
                stated=stated,
                held=int(number("held") or 0),
                decided=int(number("decided") or 0),
                accepted=int(number("heldAccepted") or 0),
                tiers={tier: int(number(name) or 0) for tier, name in TIER_FIGURES.items()},
                counted_rate=number("countedRate"),
            )
        )
    return rows


def _number(solution: Any, name: str) -> float | None:
    return float(solution[name].value) if solution[name] is not None else None


def span(low_high: tuple[float, float] | None, percent: bool = False) -> Cell | Remarked:
    """A stated figure as read (`stated_range`): one number, or the lowest – the highest, said to
    differ where they do beyond rounding."""
    if low_high is None:
        return Cell("")
    text, differ = stated_range(*low_high, as_percent if percent else "{:,.0f}".format)
    return Remarked(text, SOURCES_DIFFER) if differ else Cell(text)


def coverage(held: int, submissions: tuple[float, float] | None) -> Worded | str:
    """What the graph holds of an edition against what it had ("" where it holds none and no
    source gives a total)."""
    if submissions is None:
        return Worded("{held} papers; no source gives a total", (("held", f"{held:,}"),))
    total = span(submissions).text
    if held >= submissions[0]:
        return Worded("the graph holds all {total} submissions", (("total", total),))
    return Worded("the graph holds {held} of {total} submissions", (("held", f"{held:,}"), ("total", total)))


def _series(rows: list[EditionFigures], figure: str) -> dict[int, tuple[float, float]]:
    return {r.year: r.stated[figure] for r in rows if figure in r.stated}


def _whole(rows: list[EditionFigures], count: Any) -> dict[int, tuple[float, float]]:
    return {r.year: (float(count(r)), float(count(r))) for r in rows if r.whole}


def rate_chart(rows: list[EditionFigures], link: str) -> Panel:
    """The acceptance rate per edition, as sources state it and as counted where the graph holds
    the edition whole."""
    panel = Panel("Acceptance rate over the years", kind="chart")
    panel.percent = True
    panel.series = [
        Series("stated by sources", 0, False, _series(rows, "rate")),
        Series("counted in the graph", 1, True, _whole(rows, lambda r: r.counted_rate)),
    ]
    panel.years = [r.year for r in rows]
    whole = sum(r.whole for r in rows)
    panel.note = "Counted only where the graph holds every submission with its decision: {whole} of {editions} editions. A vertical stroke spans figures that sources differ on."
    panel.figures = {"whole": str(whole), "editions": str(len(rows))}
    panel.links = [("This as a query", link)]
    panel.wide = True
    return panel


def query_link(view: str, conference: NamedNode) -> str:
    """The query page asking the saved query for `conference`'s editions, drawn as `view`."""
    return url_for("pages.index", query=state().saved[TRENDS].text_with({CONFERENCE: conference.value}), view=view)


def trend_panels(store: ReadableGraph, conference: NamedNode) -> list[Panel]:
    """The conference page's figures over the years: the rate, submissions and accepted papers,
    the tiers as charts, then the table. `link(view)` is "this as a query" drawn as `view`."""
    link = functools.partial(query_link, conference=conference)
    rows = edition_figures(store, conference)
    if not rows:
        return []
    rate = rate_chart(rows, link("line x=year y=rateHigh"))
    sizes = Panel("Submissions and accepted papers", kind="chart")
    sizes.series = [
        Series("submissions, stated", 0, False, _series(rows, "submissions")),
        Series("accepted, stated", 2, False, _series(rows, "accepted")),
        Series("papers held in the graph", 1, True, {r.year: (r.held, r.held) for r in rows if r.held}),
        Series("accepted, counted", 3, True, _whole(rows, lambda r: r.accepted)),
    ]
    sizes.links = [("This as a query", link("line x=year y=submissionsHigh"))]
    tiers = Panel("Orals, spotlights and posters", kind="chart")
    tiers.series = [Series(f"{tier}, stated", i, False, _series(rows, tier)) for i, tier in enumerate(TIER_FIGURES)]
    tiers.series += [
        Series(f"{tier}, counted", i, True, _whole(rows, lambda r, t=tier: r.tiers[t]))
        for i, tier in enumerate(TIER_FIGURES)
    ]
    tiers.links = [("This as a query", link("line x=year y=postersHigh"))]
    # each note says what its dashed lines draw: the papers held are drawn for every edition
    sizes.note = "Dashed: the papers the graph holds, every edition; the accepted papers it counts, only where it holds the edition whole ({whole} of {editions} editions)."
    tiers.note = "Dashed: counted in the graph, only where it holds the edition whole ({whole} of {editions} editions)."
    for chart in (sizes, tiers):
        chart.years, chart.wide, chart.figures = rate.years, True, rate.figures
    return [rate, sizes, tiers, figures_table(rows, link("table"))]


def figures_table(rows: list[EditionFigures], link: str) -> Panel:
    """One row per edition: what sources state, what the graph holds of it, and the counted rate
    where it is the edition's."""
    table = Panel(
        "Figures per edition",
        kind="table",
        columns=["edition", "submissions", "accepted papers", "acceptance rate", "orals", "spotlights", "posters",
                 "held in the graph", "rate counted in the graph"],
    )  # fmt: skip
    for r in reversed(rows):
        counted = Cell(f"{as_percent(r.counted_rate, 1)} ({r.accepted:,} / {r.held:,})") if r.counted_rate else ""
        table.table.append(
            [r.edition, span(r.stated.get("submissions")), span(r.stated.get("accepted")),
             span(r.stated.get("rate"), percent=True), span(r.stated.get("orals")), span(r.stated.get("spotlights")),
             span(r.stated.get("posters")), coverage(r.held, r.stated.get("submissions")), counted]
        )  # fmt: skip
    table.note = "Stated figures are each source's (a range where they differ; the edition's page names each source). A counted rate is shown only where the graph holds every submission with its decision."
    table.links = [("This as a query", link)]
    table.wide = True
    return table
