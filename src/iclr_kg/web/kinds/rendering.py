"""From terms to what a person reads: panels named in the page's language, their empty columns
dropped, bars and stars drawn."""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from iclr_kg import vocab
from iclr_kg.web.charts import star, trend
from iclr_kg.web.html import Cell, Labeler, Remarked
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds.panels import Panel


def _drop_empty_columns(panel: Panel) -> None:
    """A column no row fills (no award came with a reason) says nothing: leave it out."""
    if not panel.table:
        return
    keep = [i for i in range(len(panel.columns)) if any(any(c.text for c in row[i]) for row in panel.table)]
    panel.columns = [panel.columns[i] for i in keep]
    panel.table = [[row[i] for i in keep] for row in panel.table]


def _bar(name: Cell, n: float, href: str = "", shown: str = "", *, star: bool = False) -> tuple[Any, float, str, str]:
    """A bar as the page draws it: its name (a cell, linked, in a star or where `_linked`), its length, where its count links, and the count as read ("1,128", "26.5%")."""
    return (name if star else name.text, n, href, shown or (f"{n:,}" if isinstance(n, int) else f"{n:g}"))


def _linked(name: Any) -> bool:
    """Whether a bar's name links: a cell the panel made, or an entity (an organization in a
    ranking), never a term of the ontology or a year."""
    return isinstance(name, Cell | Remarked) or (
        isinstance(name, NamedNode) and name.value.startswith(vocab.RESOURCE_BASE)
    )


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
        if not isinstance(value, list):
            return [labeler.cell(value)]
        return labeler.cells(value)

    out = []
    for panel in panels:
        if not panel:
            continue
        panel.title = translate(panel.title, labeler.lang).format(**panel.figures)  # its years, its counts
        panel.rows = [(translate(label, labeler.lang), cells(values)) for label, values in panel.rows]
        panel.table = [[cells(v) for v in row] for row in panel.table]
        panel.groups = [labeler.cell(group) for group in panel.groups]
        panel.bars = [
            _bar(labeler.cell(bar[0]), *bar[1:4], star=panel.kind == "star" or _linked(bar[0])) for bar in panel.bars
        ]
        panel.links = [(translate(words, labeler.lang), href) for words, href in panel.links]
        if panel.kind == "star" and panel.bars:
            panel.svg = star(panel.bars[0][0], [(bar[0], bar[1]) for bar in panel.bars[1:]])
        if panel.series:
            panel.svg = trend(panel.years, panel.series, lambda words: translate(words, labeler.lang), panel.percent)
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
