"""Small charts drawn on the server as SVG, so that a profile needs no chart library: a person
among their closest co-authors (a star: the person in the middle, each co-author on a circle
around, each line as thick as their papers together). The workbench draws the large ones."""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from iclr_kg.web.html import Cell

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
