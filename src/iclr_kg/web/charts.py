"""Small charts drawn on the server as SVG, so that a profile needs no chart library: a person
among their closest co-authors (a star: the person in the middle, each co-author on a circle
around, each line as thick as their papers together), and figures over the years (a trend:
stated and counted series side by side). The workbench draws the large ones."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup, escape

from iclr_kg.web.html import SOURCES_DIFFER, Cell, stated_range

WIDTH, HEIGHT = 560, 380
RADIUS = 135  # of the circle the co-authors sit on
MAX_LINE = 8.0  # px: the thickest line, for the most papers together


def star(centre: Cell, points: list[tuple[Cell, float]]) -> Markup:
    """`centre` among `points` (each a co-author and a weight), names linked to their pages; the
    first point at the top, then clockwise. Labels sit outside the circle, anchored away from it."""
    cx, cy = WIDTH / 2, HEIGHT / 2
    heaviest = max((w for _, w in points), default=1) or 1
    lines, nodes = [], []
    for i, (cell, weight) in enumerate(points):
        angle = -math.pi / 2 + 2 * math.pi * i / len(points)
        x, y = cx + RADIUS * math.cos(angle), cy + RADIUS * math.sin(angle)
        width = 1 + (MAX_LINE - 1) * weight / heaviest
        lines.append(
            f'<line x1="{cx:.0f}" y1="{cy:.0f}" x2="{x:.0f}" y2="{y:.0f}" stroke-width="{width:.1f}">'
            f"<title>{escape(cell.text)}: {weight:,.0f}</title></line>"
        )
        lx, ly = cx + (RADIUS + 12) * math.cos(angle), cy + (RADIUS + 12) * math.sin(angle)
        anchor = "middle" if abs(math.cos(angle)) < 0.2 else ("start" if math.cos(angle) > 0 else "end")
        nodes.append(_node(cell, x, y, lx, ly + 4, anchor))
    nodes.append(_node(centre, cx, cy, cx, cy - 14, "middle", centre=True))
    return Markup(
        f'<svg class="star" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(centre.text)}">'
        f'<g class="lines">{"".join(lines)}</g>{"".join(nodes)}</svg>'
    )


def _node(cell: Cell, x: float, y: float, lx: float, ly: float, anchor: str, centre: bool = False) -> str:
    """A dot and its name, a link where the cell has one."""
    label = f'<text x="{lx:.0f}" y="{ly:.0f}" text-anchor="{anchor}">{escape(cell.text)}</text>'
    marked = ' class="centre"' if centre else ""
    dot = f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{7 if centre else 5}"{marked}/>'
    body = dot + label
    if cell.href and not centre:
        body = f'<a href="{escape(cell.href)}">{body}</a>'
    return f"<g>{body}</g>"


# A trend: figures per year as lines of points, a vertical stroke where sources differ (from the
# lowest to the highest figure), stated series solid and counted ones dashed; the legend is HTML
# beside the drawing, so that it wraps on a narrow screen.
TREND_WIDTH, TREND_HEIGHT = 640, 280
TOP, BOTTOM = 14, 30
# Room for the tick labels at their largest (24 units, a phone's style): a digit's width, so that
# the y axis's widest label ("20,000", "40%") and half of the last year ("2026") stay in the drawing
TICK_CHAR = 14
RIGHT = 2 * TICK_CHAR + 4
COLOURS = ("#4a78a8", "#c8553d", "#3a9a5b", "#8e6bb8")
NO_POINT = "(none yet)"  # beside a series the legend names that has no point (no edition held whole)


@dataclass(frozen=True)
class Series:
    """One line of a trend: its words (translated when drawn), a colour's place in COLOURS, whether
    it is counted in the graph (dashed) rather than stated by sources, and its points, a year's
    (lowest, highest)."""

    label: str
    colour: int
    counted: bool
    points: dict[int, tuple[float, float]]


def trend(years: list[int], series: list[Series], words: Callable[[str], str], percent: bool = False) -> Markup:
    """`series` over `years` (each year a column, empty where no series has it), the y axis from 0."""
    drawn = [s for s in series if s.points]
    top = _nice(max((high for s in drawn for _, high in s.points.values()), default=1.0))

    def shown(v: float) -> str:
        return f"{v * 100:.1f}%".replace(".0%", "%") if percent else f"{v:,.0f}"

    ticks = [top * i / 4 for i in range(5)]
    left = TICK_CHAR * max(len(shown(v)) + shown(v).count("%") for v in ticks) + 12  # "%": two digits wide
    width, height = TREND_WIDTH - left - RIGHT, TREND_HEIGHT - TOP - BOTTOM
    step = width / max(1, len(years) - 1)

    def x(year: int) -> float:
        return left + step * years.index(year) if len(years) > 1 else left + width / 2

    def y(v: float) -> float:
        return TOP + height * (1 - v / top)

    grid = []
    for v in ticks:
        grid.append(
            f'<line class="grid" x1="{left}" x2="{left + width}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{shown(v)}</text>'
        )
    every = 1 if len(years) <= 8 else 2  # a label every other year when they would crowd
    for i, year in enumerate(years):
        if (len(years) - 1 - i) % every == 0:  # the latest year always labelled
            grid.append(
                f'<text class="tick" x="{x(year):.1f}" y="{TREND_HEIGHT - 8}" text-anchor="middle">{year}</text>'
            )
    lines = []
    for s in drawn:
        colour = COLOURS[s.colour % len(COLOURS)]
        dash = ' stroke-dasharray="6 4"' if s.counted else ""
        path = " ".join(f"{x(yr):.1f},{y((lo + hi) / 2):.1f}" for yr, (lo, hi) in sorted(s.points.items()))
        marks = []
        for yr, (lo, hi) in sorted(s.points.items()):
            said, differ = stated_range(lo, hi, shown)  # as the tables beside it say it
            remark = words(SOURCES_DIFFER) if differ else ""
            said += remark if remark.startswith("（") else f" {remark}".rstrip()  # （来源不一）: no space
            tip = f"<title>{escape(words(s.label))}, {yr}: {said}</title>"
            if hi > lo:
                marks.append(
                    f'<line class="range" x1="{x(yr):.1f}" x2="{x(yr):.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" stroke="{colour}">{tip}</line>'
                )
            shape = "rect" if s.counted else "circle"
            at = (
                f'x="{x(yr) - 4:.1f}" y="{y((lo + hi) / 2) - 4:.1f}" width="8" height="8"'
                if s.counted
                else f'cx="{x(yr):.1f}" cy="{y((lo + hi) / 2):.1f}" r="4"'
            )
            marks.append(f'<{shape} {at} fill="{colour}">{tip}</{shape}>')
        lines.append(
            f'<g><polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>{"".join(marks)}</g>'
        )
    none = f' <span class="note">{escape(words(NO_POINT))}</span>'  # a series named, with no point to draw
    legend = "".join(
        f'<li><span class="swatch{" counted" if s.counted else ""}" style="border-color: {COLOURS[s.colour % len(COLOURS)]}">'
        f"</span>{escape(words(s.label))}{'' if s.points else none}</li>"
        for s in series
    )
    return Markup(
        f'<figure class="trend"><svg class="trend" viewBox="0 0 {TREND_WIDTH} {TREND_HEIGHT}" role="img">'
        f'{"".join(grid)}{"".join(lines)}</svg><ul class="legend">{legend}</ul></figure>'
    )


def _nice(highest: float) -> float:
    """A round top for an axis at or above `highest` (0.32 -> 0.4, 11,672 -> 12,000)."""
    if highest <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(highest))
    for factor in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if factor * magnitude >= highest:
            return factor * magnitude
    return 10 * magnitude
