"""From terms to what a person reads: panels named in the page's language, their empty columns
dropped, bars and stars drawn; and a page's schema.org JSON-LD."""

from __future__ import annotations

from typing import Any

from pyoxigraph import DefaultGraph, NamedNode

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph, value
from iclr_kg.index import Index
from iclr_kg.kinds import KINDS
from iclr_kg.web.charts import star, trend
from iclr_kg.web.html import Cell, Labeler, Remarked
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds.panels import Panel, select_rows, values_of
from iclr_kg.web.kinds.paper import PAPER_AUTHORS


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
    same += [v.value for v in values_of(store, iri, "openReviewUrl") + values_of(store, iri, "openReviewProfilePage")]
    if same:
        data["sameAs"] = same
    if kind == "paper":
        people = [row["person"] for row in select_rows(store, PAPER_AUTHORS, iri)]
        names = index.labels(p.value for p in people) if index else {}
        data["author"] = [
            {"@type": "Person", "@id": p.value, "name": names.get(p.value, (p.value, ""))[0]} for p in people
        ]
        if hit and hit.year:
            data["datePublished"] = str(hit.year)
    elif kind == "person":
        data["alternateName"] = [v.value for v in values_of(store, iri, "nativeName") + values_of(store, iri, "alias")]
        employers = values_of(store, iri, "employedBy")
        names = index.labels(e.value for e in employers) if index else {}
        data["affiliation"] = [
            {"@type": "Organization", "@id": e.value, "name": names.get(e.value, (e.value, ""))[0]} for e in employers
        ]
    return data
