"""Every entity of a kind, /resource/<kind>/: a page at a time, sorted, narrowed by the filters
(filters.py), with facets and a heading saying what the list holds; and the awards overview."""

from __future__ import annotations

import dataclasses
from typing import Any

from flask import Response, render_template, request, url_for

from iclr_kg import vocab
from iclr_kg.errors import NotFound, QueryError
from iclr_kg.index import MAX_PAGE, PAPER_SORTS, SORTS, Hit, ListFilter
from iclr_kg.kinds import LISTED
from iclr_kg.web.html import Cell, Labeler
from iclr_kg.web.i18n import language, translate
from iclr_kg.web.kinds import PAGES, plural
from iclr_kg.web.kinds.kindpage import Overview
from iclr_kg.web.resources.entities import page_url
from iclr_kg.web.resources.filters import LIST_ARGUMENTS, award_kinds, list_filters
from iclr_kg.web.state import state

BROWSE_PAGE = 100


def browse(kind: str) -> Response | str | tuple[str, int]:
    """Every entity of a kind, a page at a time, by name, year or number of papers."""
    if kind not in vocab.ENTITY_KINDS:
        raise NotFound(f"No kind of entity called {kind!r}.", near=kind)
    shown = PAGES[kind]
    if shown.overview is not None and not set(request.args) - {"lang"}:  # the list asked as it is linked
        return overview(shown.overview)
    index = state().index()
    _no_unknown_arguments()
    decisions = list(state().terms().enumeration("Decision").values())
    presentations = list(state().terms().enumeration("PresentationType").values())
    narrowed, filters, of = list_filters(index, kind, shown.lists_papers, decisions, presentations)
    # by year only where years differ: not an undated kind, nor a list of one year
    dated = index is not None and index.dated(kind) and narrowed.year is None
    sorts = [name for name in _sorts(shown.lists_papers, narrowed.topic is not None) if name != "year" or dated]
    sort = _sort_asked(kind, sorts, narrowed)
    page = _page_asked(kind)
    hits, total = index.browse(kind, sort, BROWSE_PAGE, (page - 1) * BROWSE_PAGE, narrowed) if index else ([], 0)
    if page > 1 and not hits:
        raise NotFound(f"No page {page} of {kind} entities: there are {total:,}.", near=kind)
    facets = _facets(index, kind, narrowed, decisions, presentations)
    if shown.lists_papers and "award" in facets:
        facets["award"] = _award_facet(index, kind, narrowed, [(v, n) for v, n in facets["award"] if v == "yes"])
    return render_template(
        "browse.html",
        kind=kind,
        hits=hits,
        total=total,
        page=page,
        pages=max(1, -(-total // BROWSE_PAGE)),
        sort=sort,
        sorts=sorts,
        columns=_list_columns(shown.lists_papers, hits, narrowed),
        filters=filters,
        without=lambda argument: _url_without(kind, sort, shown.lists_papers, filters, argument),
        of=of,
        heading=_list_heading(kind, plural(kind), filters, of, total),
        facets=facets,
        term_label=lambda local: state().terms().label(local, language()),
        award_classes={notation: local for notation, (local, _) in award_kinds().items()} if shown.lists_papers else {},
        listed=LISTED,
        plural=plural,
    )


def _no_unknown_arguments() -> None:
    """A list's URL says only what it takes (anything else is a 400 naming it, not ignored)."""
    unknown = sorted(set(request.args) - LIST_ARGUMENTS)
    if unknown:
        raise QueryError(
            f"a list does not take {', '.join(unknown)}; it takes {', '.join(sorted(LIST_ARGUMENTS - {'lang'}))}"
        )


def _sort_asked(kind: str, sorts: list[str], narrowed: ListFilter) -> str:
    """`?sort=`, one of the orders the list offers (the first by default; `year` on a list of one
    year, a link kept from the list of every year, the first too)."""
    sort = request.args.get("sort", sorts[0])
    if sort == "year" and narrowed.year is not None:
        sort = sorts[0]
    if sort not in sorts:
        raise QueryError.worded(  # said in a page's language by the error handler; data clients read English
            "sort={asked}: this list of {kind} entities is sorted by {sorts}",
            asked=repr(sort),
            kind=kind,
            sorts=", ".join(sorts),
        )
    return sort


def _page_asked(kind: str) -> int:
    """`?page=`, from 1 to MAX_PAGE (else a 404 saying how pages are numbered)."""
    asked = request.args.get("page", "1")
    page = int(asked) if asked.isascii() and asked.isdigit() and len(asked) < 10 else 0
    if not 1 <= page <= MAX_PAGE:
        raise NotFound(f"No page {asked!r} of {kind} entities: pages are numbered from 1.", near=kind)
    return page


def _facets(
    index: Any, kind: str, narrowed: ListFilter, decisions: list[str], presentations: list[str]
) -> dict[str, Any]:
    """The counts a list's filters show. The same on every page of a list, and a scan of every
    row per decision: once per generation for the lists of a kind by year and decision (a
    bounded set); a person's or an organization's papers are counted on each visit
    (milliseconds, and keys without end)."""
    if not index:
        return {}
    if narrowed.people or narrowed.organization or narrowed.topic:
        return dict(index.facets(kind, decisions, narrowed, presentations))
    return dict(
        state().per_generation(
            f"facets {kind} {narrowed}", lambda: index.facets(kind, decisions, narrowed, presentations)
        )
    )


def overview(make: Overview) -> str:
    """A kind's overview, in place of its list (the awards by edition: kinds/award.py)."""
    labeler = Labeler(state().index(), language(), state().terms())
    template, panels, figures = make(state().store(), labeler, state().per_generation)
    return render_template(template, panels=panels, page_url=page_url, listed=LISTED, plural=plural, **figures)


def _award_facet(index: Any, kind: str, narrowed: ListFilter, counted: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """The award facet: any award (as counted), then each kind of award with the papers it keeps
    under the other filters chosen, most first."""
    without = dataclasses.replace(narrowed, awarded=False, among=None)
    kinds = [
        (notation, index.browse(kind, "name", 0, 0, dataclasses.replace(without, among=papers))[1])
        for notation, (_, papers) in award_kinds().items()
    ]
    return counted + sorted(((k, n) for k, n in kinds if n), key=lambda kn: (-kn[1], kn[0]))


def _list_columns(papers: bool, hits: list[Hit], narrowed: ListFilter) -> dict[str, bool]:
    """The columns a list's page shows: a column no entity of the page fills is left out (people
    have no year, most no summary), and the year of a list of one year; sorted by rating, the
    rating in the year's place (the summary names the edition), so that a phone still shows the
    whole row."""
    rated = any(h.rating is not None for h in hits)
    return {
        "titled": papers,  # what names a paper is its title (iclr:title), any other entity its name
        "about": any(h.facts for h in hits),
        "year": not rated and narrowed.year is None and any(h.year for h in hits),
        "papers": not papers and any(h.papers for h in hits),
        "rating": rated,
    }


def _sorts(papers: bool, topic: bool) -> list[str]:
    """The orders a list offers, its default first: papers on a topic by relevance, else by name;
    papers also by rating, other kinds by their papers' count (a paper has no papers)."""
    if not papers:
        return [name for name in SORTS if name not in PAPER_SORTS]
    sorts = [name for name in SORTS if name not in ("papers", "relevance")]
    return ["relevance", *sorts] if topic else sorts


def _url_without(kind: str, sort: str, papers: bool, filters: dict[str, Any], argument: str) -> str:
    """The list without one of its filters (the "×" beside it, a facet's "all"): an order only
    that filter offered (a topic's relevance) goes with it, for the list's default."""
    kept = {name: value for name, value in filters.items() if name != argument}
    kept_sort = sort if sort in _sorts(papers, "topic" in kept) else None
    return url_for("resources.browse", kind=kind, sort=kept_sort, **kept)


def _list_heading(kind: str, plural: str, filters: dict[str, Any], of: list[tuple[str, Cell]], total: int) -> str:
    """What a narrowed list holds, in the reader's language: "Papers of ICLR 2021, accepted ·
    13"; an unnarrowed one, "Every paper (92)"."""
    if not filters:
        if language() == "zh":  # 全部论文（92）: no space between Chinese words, full-width brackets
            return f"{translate('Every')}{translate(kind)}（{total:,}）"
        return f"Every {kind} ({total:,})"
    terms = state().terms()
    said = [translate("of ICLR {year}").format(year=filters["year"])] if "year" in filters else []
    said += [terms.label(filters[f], language()) for f in ("decision", "presentation") if f in filters]
    if "award" in filters:
        kinds = award_kinds()
        chosen = kinds[filters["award"]][0] if filters["award"] in kinds else ""
        said.append(
            translate("with the {award}").format(award=terms.label(chosen, language()))
            if chosen
            else translate("with an award")
        )
    said += [translate(LIST_PHRASES[argument]).format(name=entity.text) for argument, entity in of]
    if language() == "zh":  # 论文（ICLR 2021，接收）· 13
        return f"{translate(plural)}（{'，'.join(said)}）· {total:,}"
    return f"{plural} {', '.join(said)} · {total:,}"


LIST_PHRASES = {"author": "by {name}", "coauthor": "with {name}", "organization": "credited to {name}",
                "topic": "on “{name}”", "conference": "at {name}"}  # fmt: skip
