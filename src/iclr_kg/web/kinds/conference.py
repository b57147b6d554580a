"""A conference's page: its founders and editions."""

from __future__ import annotations

from collections.abc import Mapping

from pyoxigraph import NamedNode

from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index
from iclr_kg.web.kinds.panels import NO_PAGES, Panel, heading_of, values_of


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
    return heading, [about]
