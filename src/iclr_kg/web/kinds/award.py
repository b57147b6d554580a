"""An award's page: what it is, and the papers that received it."""

from __future__ import annotations

from collections.abc import Mapping

from pyoxigraph import DefaultGraph, NamedNode

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index
from iclr_kg.web.kinds.panels import AWARDED, LIST_LIMIT, NO_PAGES, Panel, awarded_panel, heading_of

AWARD_PAPERS = AWARDED.format(
    conferred="?c iclr:conferredAward ?e ; iclr:conferredOn ?paper . BIND (?e AS ?award)", limit=LIST_LIMIT
)


def award(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = heading_of(store, iri)
    about = Panel("Award")
    about.properties(
        store,
        iri,
        [
            ("Edition", "awardedAt"),
            ("Inaugural", "isInaugural"),
            ("Criteria", "criterion"),
            ("Committee", "committeeOrganization"),
            ("Note", "note"),
        ],
    )
    papers = awarded_panel(store, AWARD_PAPERS, iri, award=False)
    honoured = Panel("People honoured")
    honoured.add(
        "People", *[q.subject for q in store.quads_for_pattern(None, vocab.iclr("honoredWith"), iri, DefaultGraph())]
    )
    return heading, [about, papers, honoured]
