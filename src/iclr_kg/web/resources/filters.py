"""What narrows a list: `?year=`, `?edition=`, `?decision=`, for editions and awards
`?conference=`, and for papers `?presentation=`,
`?award=`, `?topic=`, `?author=`, `?coauthor=`, `?organization=`, checked; and the kinds of
paper award (their notations name them in a URL)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from flask import request
from pyoxigraph import NamedNode

from iclr_kg import vocab
from iclr_kg.errors import NotFound, QueryError
from iclr_kg.index import ListFilter
from iclr_kg.web.html import Cell, Labeler
from iclr_kg.web.i18n import language
from iclr_kg.web.kinds.conference import HELD_KINDS, held_at
from iclr_kg.web.state import state

# Papers by the kind of award they won: an award's class (its skos:notation names it in a URL)
AWARDED_PAPERS = "SELECT DISTINCT ?paper ?class WHERE { ?paper iclr:receivedAward ?award . ?award a ?class }"


def award_kinds() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each kind of paper award that some paper won, by notation (outstanding-paper): its class's
    local name and the papers (IRIs) that won one; once per generation."""

    def read() -> dict[str, tuple[str, tuple[str, ...]]]:
        classes = {
            vocab.ONTOLOGY_NS + local: (notation, local)
            for notation, local in state().terms().kinds_below("Award").items()
            if local != "Award"
        }
        papers: dict[str, set[str]] = defaultdict(set)
        for row in state().store().query(AWARDED_PAPERS, prefixes=vocab.QUERY_PREFIXES):
            if row["class"].value in classes:
                papers[row["class"].value].add(row["paper"].value)
        return {classes[c][0]: (classes[c][1], tuple(sorted(found))) for c, found in papers.items()}

    return state().per_generation("award kinds", read)


# A paper list's filters by entity: the argument, the kind of entity it names, what it keeps
ENTITY_FILTERS = {"author": "person", "coauthor": "person", "organization": "organization"}


# What a list's URL may say (anything else is a 400 naming it, not silently ignored)
LIST_ARGUMENTS = {
    "sort",
    "page",
    "year",
    "edition",
    "decision",
    "presentation",
    "award",
    "topic",
    "conference",
    *ENTITY_FILTERS,
    "lang",
}


def list_filters(
    index: Any, kind: str, papers: bool, decisions: list[str], presentations: list[str]
) -> tuple[ListFilter, dict[str, Any], list[tuple[str, Cell]]]:
    """`?year=2021` (or `?edition=iclr2021`, its year), `?decision=Accepted` (an iclr:Decision)
    and, for papers, `?author=` and `?coauthor=` (people's keys: papers both wrote) and
    `?organization=` (a key: papers credited to it or below it), for editions and awards
    `?conference=` (a key: its editions, the awards given at them), checked: a value that is none
    of these is a 400 (or a 404 for an unknown entity) saying what is accepted. Returns the
    filter, the arguments that keep it on every link, and the entities it names (named and linked
    as every page names them: `Labeler`)."""
    args = request.args
    year = _year(args.get("year"), args.get("edition"), index)
    decision = _one_of("decision", args.get("decision"), decisions)
    presentation = _one_of("presentation", args.get("presentation"), presentations)
    awarded = award_kinds()
    award = _award(args.get("award"), awarded)
    topic = args.get("topic")
    expression = _topic(topic, index)
    if not papers and (presentation or award or topic):
        raise QueryError.worded("presentation, award and topic narrow lists of papers only")
    named = _entities_named(index, papers)
    held = _conference(index, kind)
    chosen = {"year": year, "decision": decision, "presentation": presentation, "award": award, "topic": topic}
    kept: dict[str, Any] = {k: v for k, v in chosen.items() if v is not None} | {a: args[a] for a in (*named, *held)}
    people = tuple(named[a] for a in ("author", "coauthor") if a in named)
    among = awarded[award][1] if award in awarded else None
    if held:
        among = tuple(sorted(held_at(state().store(), NamedNode(held["conference"]))))
    narrowed = ListFilter(
        year, decision, people, named.get("organization"), presentation, award is not None, expression, among
    )
    return narrowed, kept, _named_cells(index, named | held) + ([("topic", Cell(topic))] if topic is not None else [])


def _year(text: str | None, edition: str | None, index: Any) -> int | None:
    """`?year=2021`, four digits; `?edition=iclr2021`, an edition the index knows, wins."""
    if text is not None and not (text.isascii() and text.isdigit() and len(text) == 4):
        raise QueryError.worded("year={asked}: a year is four digits (2021)", asked=repr(text))
    if edition is None:
        return int(text) if text is not None else None
    year = index.edition_year(edition) if index else None
    if year is None:
        raise NotFound.worded("edition={asked}: no such edition (iclr2021, iclr2024, ...)", asked=repr(edition))
    return int(year)


def _one_of(argument: str, asked: str | None, values: list[str]) -> str | None:
    """`?decision=`, `?presentation=`: one of the ontology's values (in any case: `Accepted` is
    accepted), or a 400 naming them."""
    if asked is None:
        return None
    asked = next((v for v in values if v.casefold() == asked.casefold()), asked)
    if asked not in values:
        raise QueryError.worded(
            "{argument}={asked}: one of {values}", argument=argument, asked=repr(asked), values=", ".join(values)
        )
    return asked


def _award(asked: str | None, awarded: dict[str, Any]) -> str | None:
    """`?award=yes` (any award), or a kind of award some paper won, by its notation."""
    if asked not in (None, "yes", *awarded):
        raise QueryError.worded(
            "award={asked}: yes (any award) or one of {values}", asked=repr(asked), values=", ".join(sorted(awarded))
        )
    return asked


def _topic(topic: str | None, index: Any) -> Any:
    """`?topic=`: the index's search expression for a few words, or a 400."""
    if topic is None:
        return None
    expression = index.topic_filter(topic) if index else None
    if expression is None:
        raise QueryError.worded("topic={asked}: a topic is a few words (graph neural network)", asked=repr(topic))
    return expression


def _entities_named(index: Any, papers: bool) -> dict[str, str]:
    """The IRIs `?author=`, `?coauthor=`, `?organization=` name, by argument: entities the index
    holds, narrowing lists of papers only (else a 404 saying so)."""
    named: dict[str, str] = {}
    for argument, of_kind in ENTITY_FILTERS.items():
        key = request.args.get(argument)
        if key is None:
            continue
        iri = f"{vocab.RESOURCE_BASE}{of_kind}/{key}"
        if not papers or not vocab.ENTITY_KEY.match(key) or index is None or index.entity(iri) is None:
            raise NotFound(f"{argument}={key!r}: no such {of_kind} (papers only are listed by {argument})")
        named[argument] = iri
    return named


def _conference(index: Any, kind: str) -> dict[str, str]:
    """`?conference=` (a conference's key) as {"conference": its IRI}: a conference the index
    holds (else a 404), narrowing a list of what conferences hold (else a 400); {} if not asked."""
    key = request.args.get("conference")
    if key is None:
        return {}
    if kind not in HELD_KINDS:
        raise QueryError.worded("conference narrows lists of editions and awards only")
    iri = f"{vocab.RESOURCE_BASE}conference/{key}"
    if not vocab.ENTITY_KEY.match(key) or index is None or index.entity(iri) is None:
        raise NotFound.worded("conference={asked}: no such conference (iclr, ...)", asked=repr(key))
    return {"conference": iri}


def _named_cells(index: Any, named: dict[str, str]) -> list[tuple[str, Cell]]:
    """The entities a list is narrowed to, named and linked as every page names them."""
    labeler = Labeler(index, language(), state().terms())
    labeler.learn([NamedNode(iri) for iri in named.values()])
    return [(argument, labeler.cell(NamedNode(iri))) for argument, iri in named.items()]
