"""An organization's page: its names and place among organizations, award papers one row per
award, and its papers (its units' too) by year, paged."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from pyoxigraph import DefaultGraph, NamedNode

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph, Term
from iclr_kg.index import Index, fold, natural_key
from iclr_kg.web.kinds.kindpage import KindPage
from iclr_kg.web.kinds.panels import (
    LIST_LIMIT,
    LIST_PAGE,
    NO_PAGES,
    Pager,
    Panel,
    heading_of,
    identifiers_panel,
    key_of,
    paper_details,
    sources_named_in,
    values_of,
)


def _award_order(store: ReadableGraph, index: Index) -> Callable[[tuple[NamedNode, Any]], tuple[int, bool, str]]:
    """A sort key for (award, ...) pairs: the newest edition's first, an honorable mention after
    the award it accompanies (the ontology's iclr:HonorableMention)."""
    mention = vocab.iclr("HonorableMention")

    def key(pair: tuple[NamedNode, Any]) -> tuple[int, bool, str]:
        award = pair[0]
        hit = index.entity(award.value)
        is_mention = any(True for _ in store.quads_for_pattern(award, vocab.RDF_TYPE, mention, DefaultGraph()))
        return (-(hit.year or 0) if hit else 0, is_mention, award.value)

    return key


def organization(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = heading_of(store, iri)
    entities = NamedNode(vocab.GRAPH_ENTITIES)
    about = Panel("Organization")
    about.add("Names", *[q.object for q in store.quads_for_pattern(iri, vocab.RDFS_LABEL, None, entities)])
    about.add("Also known as", *values_of(store, iri, "alias"))
    chain: list[Term] = []
    node: Term = iri
    for _ in range(20):  # the chain of parents, nearest first (asserted parents only)
        parents = [q.object for q in store.quads_for_pattern(node, vocab.iclr("subOrganizationOf"), None, entities)]
        if not parents:
            break
        node = parents[0]
        chain.append(node)
    about.add("Part of", *chain)
    subs = [q.subject for q in store.quads_for_pattern(None, vocab.iclr("subOrganizationOf"), iri, entities)]
    about.add("Sub-organizations", *in_natural_order(subs, index))
    notes = values_of(store, iri, "note")
    about.add("Note", *notes)
    about.add("Sources the note names", *sources_named_in(store, notes))
    identifiers_panel(store, iri, about, "organization")
    if index is None:
        return heading, [about]
    key = key_of(iri.value)
    years = Panel("Papers per year (sub-organizations included)", kind="bars")
    years.bars = [
        (str(year), n, f"/resource/paper/?organization={key}&year={year}")
        for year, n in index.credited_per_year(iri.value)
    ]
    awards = Panel("Award papers", kind="table", columns=["award", "count", "paper"], wide=True)
    awarded, total = index.credited_award_papers(iri.value, LIST_LIMIT)
    awards.note, awards.figures = "{n} award papers, its sub-organizations' included", {"n": f"{total:,}"}
    details = paper_details(store, awarded)
    by_award: dict[NamedNode, list[NamedNode]] = defaultdict(list)
    for paper in awarded:
        for award in details[paper][1]:
            by_award[award].append(NamedNode(paper))
    awards.table = [  # each award once, with its count and papers: newest first, outstanding before mentions
        [award, f"{len(papers):,}", papers]
        for award, papers in sorted(by_award.items(), key=_award_order(store, index))
    ]
    papers = Panel("Papers", kind="table", columns=["paper", "credited as"])
    page = pages.get("papers", 1)
    listed, papers.total = index.credited_papers(iri.value, LIST_PAGE, (page - 1) * LIST_PAGE)
    papers.table = [[NamedNode(paper), [NamedNode(v) for v in vias]] for paper, _, vias in listed]
    papers.groups = [str(year) if year else "" for _, year, _ in listed]
    papers.pager = Pager.of("papers", page, papers.total)
    papers.more = f"/resource/paper/?organization={key}"
    return heading, [about, years, awards, papers]


def in_natural_order(entities: list[Any], index: Index | None) -> list[Any]:
    """Entities by name as a reader counts ("unit 2" before "unit 10"); by key without an index."""
    names = index.labels(e.value for e in entities) if index is not None else {}
    return sorted(entities, key=lambda e: natural_key(fold(names.get(e.value, (key_of(e.value), ""))[0])))


PAGE = KindPage(profile=organization, plural="Organizations")
