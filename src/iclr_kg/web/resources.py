"""Linked Data: entity pages (/resource/...), the ontology (/ontology), graph exports (/data)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from pyoxigraph import DefaultGraph, Literal, NamedNode, RdfFormat, serialize
from werkzeug.datastructures import MIMEAccept

from iclr_kg import vocab
from iclr_kg.errors import NotFound, QueryError
from iclr_kg.graph import ReadableGraph, Term, value
from iclr_kg.identifiers import ROUTES, SCHEMES, parse_for, schemes_for
from iclr_kg.index import MAX_PAGE, PAPER_SORTS, SORTS, Hit, ListFilter, kind_and_key
from iclr_kg.kinds import LISTED
from iclr_kg.query.streaming import ClosingBody, stream
from iclr_kg.sparql.formats import choose
from iclr_kg.sparql.saved import parse_iri
from iclr_kg.store import built_on
from iclr_kg.web.assets import chosen_encoding
from iclr_kg.web.html import Cell, Labeler, cell, short
from iclr_kg.web.http import error_response, requested_format, wants_html
from iclr_kg.web.i18n import language, translate
from iclr_kg.web.jsonld import write_jsonld
from iclr_kg.web.kinds import PROFILES, render_panels, schema_org
from iclr_kg.web.kinds.award import award_ranking, overview_table, ranking_figures, ranking_panel
from iclr_kg.web.kinds.panels import Panel
from iclr_kg.web.kinds.paper import bibtex
from iclr_kg.web.state import state

blueprint = Blueprint("resources", __name__)

KEY = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
RDFS_LABEL = vocab.RDFS_LABEL.value
NAME = vocab.ONTOLOGY_NS + "name"
INCOMING_LIMIT = 200
VALUES_SHOWN = 50  # values of one property in the statements fold; the RDF forms have them all
BROWSE_PAGE = 100


def wants_rdf() -> bool:
    """An entity or the ontology as RDF rather than as a page."""
    return not wants_html(("rdf",))


def rdf_response(
    produce: Callable[[], Iterable[Any]], graph_aware: bool = False, fixed: str | None = None, compacted: bool = False
) -> Response:
    """Serialize the triples (or quads) `produce()` returns, in the negotiated format, streamed.
    `compacted`: JSON-LD is compacted with our prefixes as its `@context` (`compact_jsonld`), for
    a description a person or a client reads (an entity, the ontology, VoID), not a whole graph.

    `produce` runs on the streaming worker thread: pyoxigraph iterators stay on one thread.
    """
    chosen = choose("rdf", fixed or requested_format(), request.accept_mimetypes)  # 400 / 406 by the handler
    if not graph_aware and chosen.supports_graphs:
        chosen = choose("rdf", "turtle", None) if chosen.name == "trig" else choose("rdf", "ntriples", None)
    if compacted and chosen.rdf == RdfFormat.JSON_LD:
        body = stream(produce, compact_jsonld)
    elif chosen.rdf == RdfFormat.JSON_LD:  # a whole graph: streamed, with our prefixes as @context
        body = stream(produce, write_jsonld)
    else:
        body = stream(produce, lambda items, out: serialize(items, out, chosen.rdf, prefixes=chosen.prefixes))
    response = Response(body, mimetype=chosen.media_type)
    return response


# Triples up to which JSON-LD is compacted: PyLD takes about 0.4 s for 5,000 (a description of
# a paper is about 70); a prolific author's tens of thousands go out expanded, as they stream.
COMPACTED_UP_TO = 5_000
JSONLD_CONTEXT = {"@context": dict(vocab.QUERY_PREFIXES)}


def compact_jsonld(triples: Iterable[Any], out: Any) -> None:
    """JSON-LD of `triples` compacted by the JSON-LD 1.1 algorithm (PyLD, the reference
    implementation in Python) with our prefixes as `@context`: `iclr:title` and `paper:...`
    where pyoxigraph writes full IRIs. More than COMPACTED_UP_TO triples: expanded JSON-LD, the
    same graph, streamed with the same @context."""
    from pyld import jsonld  # here: only a JSON-LD description needs it

    items = iter(triples)
    head = list(itertools.islice(items, COMPACTED_UP_TO + 1))
    if len(head) > COMPACTED_UP_TO:
        write_jsonld(itertools.chain(head, items), out)
        return
    expanded = json.loads(serialize(head, format=RdfFormat.JSON_LD) or b"[]")
    out.write(json.dumps(jsonld.compact(expanded, JSONLD_CONTEXT), ensure_ascii=False).encode())


MAX_REPLACEMENTS = 16


def last_successor(store: ReadableGraph, iri: NamedNode) -> NamedNode | None:
    """Where `iri` lives on: the end of its chain of `dcterms:isReplacedBy` (one redirect, not one
    per step), or None where it was not replaced, or where the chain runs in a circle or past
    MAX_REPLACEMENTS steps (a curation error: the entity is shown as it is, not redirected forever)."""
    seen, current = {iri}, iri
    for _ in range(MAX_REPLACEMENTS):
        found = next(store.quads_for_pattern(current, vocab.DCTERMS_IS_REPLACED_BY, None, DefaultGraph()), None)
        if found is None or not isinstance(found.object, NamedNode):
            return current if current != iri else None
        if found.object in seen:
            return None
        seen.add(found.object)
        current = found.object
    return None


@blueprint.route("/resource/<kind>/<key>")
def resource(kind: str, key: str) -> ResponseReturnValue:
    if kind not in vocab.ENTITY_KINDS or not KEY.match(key):
        path = f"/resource/{kind}/{key}"
        raise NotFound(
            f"No such entity: {path}", near=f"{kind} {key}", wording="No such entity: {path}", values={"path": path}
        )
    iri = NamedNode(f"{vocab.RESOURCE_BASE}{kind}/{key}")
    store = state().store()
    successor = last_successor(store, iri)
    target = kind_and_key(successor.value) if successor is not None else None
    if target is not None:  # a former IRI (a paper first named by title): the entity lives on there
        query = f"?{request.query_string.decode()}" if request.query_string else ""
        return redirect(url_for("resources.resource", kind=target[0], key=target[1]) + query, 301)
    if not any(True for _ in store.quads_for_pattern(iri, None, None, DefaultGraph())):
        wording, values = "No entity {iri} in this graph.", {"iri": iri.value}
        raise NotFound(wording.format(**values), near=f"{kind}/{key}", wording=wording, values=values)
    if kind == "paper" and request.args.get("format") == "bibtex":
        entry = bibtex(store, iri, state().index())
        return Response(
            entry, mimetype="application/x-bibtex", headers={"Content-Disposition": f'inline; filename="{key}.bib"'}
        )
    if wants_rdf():
        return rdf_response(
            lambda: (q.triple for q in store.quads_for_pattern(iri, None, None, DefaultGraph())), compacted=True
        )
    index = state().index()
    labeler = Labeler(index, language(), state().terms())
    pages = _profile_pages()
    heading, panels = PROFILES[kind](store, iri, index, pages) if kind in PROFILES else (None, [])
    statements = describe(store, iri, labeler)
    response = Response(
        render_template(
            "resource.html",
            kind=kind,
            heading=(labeler.name(iri.value) if labeler.lang == "zh" else None) or heading or statements["label"],
            panels=render_panels(panels, labeler),
            page_url=_page_url,
            jsonld=jsonld(store, iri, kind),
            **statements,
        ),
        mimetype="text/html",
    )
    return response


PROFILE_PAGES = ("papers", "coauthors")  # the paged lists of a profile: ?papers=2


def _profile_pages() -> dict[str, int]:
    """The page asked of each paged list of a profile, checked: a 400 that says what is taken."""
    pages = {}
    for argument in PROFILE_PAGES:
        asked = request.args.get(argument)
        if asked is None:
            continue
        if not (asked.isascii() and asked.isdigit() and len(asked) < 10 and int(asked) >= 1):
            raise QueryError(f"{argument}={asked!r}: pages are numbered from 1")
        pages[argument] = int(asked)
    return pages


def _page_url(argument: str, page: int) -> str:
    """This page with `argument` set to `page`, every other argument kept (the language)."""
    args = {k: v for k, v in request.args.items() if k != argument} | ({argument: str(page)} if page > 1 else {})
    return f"{request.path}?{urlencode(args)}" if args else request.path


@blueprint.route("/resource/<kind>/")
def browse(kind: str) -> Response | str | tuple[str, int]:
    """Every entity of a kind, a page at a time, by name, year or number of papers."""
    if kind not in vocab.ENTITY_KINDS:
        raise NotFound(f"No kind of entity called {kind!r}.", near=kind)
    if kind == "award" and not set(request.args) - {"lang"}:  # the list asked as it is linked: the overview
        return awards_overview()
    index = state().index()
    unknown = sorted(set(request.args) - LIST_ARGUMENTS)
    if unknown:
        raise QueryError(
            f"a list does not take {', '.join(unknown)}; it takes {', '.join(sorted(LIST_ARGUMENTS - {'lang'}))}"
        )
    decisions = list(state().terms().enumeration("Decision").values())
    presentations = list(state().terms().enumeration("PresentationType").values())
    narrowed, filters, of = _list_filters(index, kind, decisions, presentations)
    # by year only where years differ: not an undated kind, nor a list of one year
    dated = index is not None and index.dated(kind) and narrowed.year is None
    sorts = [name for name in _sorts(kind, narrowed) if name != "year" or dated]
    sort = request.args.get("sort", sorts[0])
    if sort == "year" and narrowed.year is not None:  # a link kept from the list of every year
        sort = sorts[0]
    if sort not in sorts:
        raise QueryError(f"sort={sort!r}: this list of {kind} entities is sorted by {', '.join(sorts)}")
    asked = request.args.get("page", "1")
    page = int(asked) if asked.isascii() and asked.isdigit() and len(asked) < 10 else 0
    if not 1 <= page <= MAX_PAGE:
        raise NotFound(f"No page {asked!r} of {kind} entities: pages are numbered from 1.", near=kind)
    hits, total = index.browse(kind, sort, BROWSE_PAGE, (page - 1) * BROWSE_PAGE, narrowed) if index else ([], 0)
    if page > 1 and not hits:
        raise NotFound(f"No page {page} of {kind} entities: there are {total:,}.", near=kind)
    # the same on every page of a list, and a scan of every row per decision: once per generation
    # for the lists of a kind by year and decision (a bounded set); a person's or an
    # organization's papers are counted on each visit (milliseconds, and keys without end)
    facets = {}
    if index and (narrowed.people or narrowed.organization or narrowed.topic):
        facets = index.facets(kind, decisions, narrowed, presentations)
    elif index:
        facets = state().per_generation(
            f"facets {kind} {narrowed}", lambda: index.facets(kind, decisions, narrowed, presentations)
        )
    if kind == "paper" and "award" in facets:
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
        columns=_list_columns(kind, hits, narrowed),
        filters=filters,
        of=of,
        heading=_list_heading(kind, filters, of, total),
        facets=facets,
        term_label=lambda local: state().terms().label(local, language()),
        award_classes={notation: local for notation, (local, _) in award_kinds().items()} if kind == "paper" else {},
        listed=LISTED,
    )


RANKED_ORGANIZATIONS = 15  # organizations the awards overview ranks


def awards_overview() -> str:
    """/resource/award/: every ICLR edition's paper awards by kind, each row with its papers and
    the sources that state them (an edition that sources say gave none, with those sources and
    their notes), and the organizations with most award papers over every edition, saying what
    they count and what they leave out. `?sort=name` (any argument) is the plain list of awards."""
    store = state().store()
    table, none_given, fewer = state().per_generation("awards overview", lambda: overview_table(store))
    ranking = state().per_generation("award ranking", lambda: award_ranking(store, RANKED_ORGANIZATIONS))
    rows = Panel(
        "Awards by edition", kind="table", columns=["edition", "award", "papers", "sources (papers each names)"]
    )
    rows.table = [list(row) for row in table]  # rendering fills the panels in: a copy of the generation's
    none = Panel("Where sources say no paper award was given", kind="table", columns=["edition", "source", "its note"])
    none.table, none.wide = [list(row) for row in none_given], True
    partial = Panel(
        "Sources naming fewer papers than all sources together, with their notes",
        kind="table",
        columns=["award", "source", "papers it names", "its notes"],
        wide=True,
    )
    partial.table = [list(row) for row in fewer]
    partial.note = "Some name only their own paper or the first recipient; some count otherwise (each note is the curator's reading of the source)."
    labeler = Labeler(state().index(), language(), state().terms())
    panels = render_panels([rows, none, partial, ranking_panel(ranking)], labeler)
    figures = ranking_figures(ranking)
    return render_template("awards.html", panels=panels, page_url=_page_url, listed=LISTED, **figures)


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


def _award_facet(index: Any, kind: str, narrowed: ListFilter, counted: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """The award facet: any award (as counted), then each kind of award with the papers it keeps
    under the other filters chosen, most first."""
    without = dataclasses.replace(narrowed, awarded=False, among=None)
    kinds = [
        (notation, index.browse(kind, "name", 0, 0, dataclasses.replace(without, among=papers))[1])
        for notation, (_, papers) in award_kinds().items()
    ]
    return counted + sorted(((k, n) for k, n in kinds if n), key=lambda kn: (-kn[1], kn[0]))


def _list_columns(kind: str, hits: list[Hit], narrowed: ListFilter) -> dict[str, bool]:
    """The columns a list's page shows: a column no entity of the page fills is left out (people
    have no year, most no summary), and the year of a list of one year; sorted by rating, the
    rating in the year's place (the summary names the edition), so that a phone still shows the
    whole row."""
    rated = any(h.rating is not None for h in hits)
    return {
        "about": any(h.facts for h in hits),
        "year": not rated and narrowed.year is None and any(h.year for h in hits),
        "papers": kind != "paper" and any(h.papers for h in hits),
        "rating": rated,
    }


def _sorts(kind: str, narrowed: ListFilter) -> list[str]:
    """The orders a list offers, its default first: papers on a topic by relevance, else by name;
    papers also by rating, other kinds by their papers' count (a paper has no papers)."""
    if kind != "paper":
        return [name for name in SORTS if name not in PAPER_SORTS]
    sorts = [name for name in SORTS if name not in ("papers", "relevance")]
    return ["relevance", *sorts] if narrowed.topic is not None else sorts


def _list_heading(kind: str, filters: dict[str, Any], of: list[tuple[str, Cell]], total: int) -> str:
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
        return f"{translate(PLURALS.get(kind, kind))}（{'，'.join(said)}）· {total:,}"
    return f"{PLURALS.get(kind, kind)} {', '.join(said)} · {total:,}"


PLURALS = {"paper": "Papers", "person": "People", "organization": "Organizations", "edition": "Editions",
           "award": "Awards", "conference": "Conferences", "source": "Sources"}  # fmt: skip
LIST_PHRASES = {"author": "by {name}", "coauthor": "with {name}", "organization": "credited to {name}",
                "topic": "on “{name}”"}  # fmt: skip


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
    *ENTITY_FILTERS,
    "lang",
}


def _list_filters(
    index: Any, kind: str, decisions: list[str], presentations: list[str]
) -> tuple[ListFilter, dict[str, Any], list[tuple[str, Cell]]]:
    """`?year=2021` (or `?edition=iclr2021`, its year), `?decision=Accepted` (an iclr:Decision)
    and, for papers, `?author=` and `?coauthor=` (people's keys: papers both wrote) and
    `?organization=` (a key: papers credited to it or below it), checked: a value that is none
    of these is a 400 (or a 404 for an unknown entity) saying what is accepted. Returns the
    filter, the arguments that keep it on every link, and the entities it names (named and linked
    as every page names them: `Labeler`)."""
    year_text, edition, decision = (request.args.get(k) for k in ("year", "edition", "decision"))
    year = None
    if year_text is not None:
        if not (year_text.isascii() and year_text.isdigit() and len(year_text) == 4):
            raise QueryError(f"year={year_text!r}: a year is four digits (2021)")
        year = int(year_text)
    if edition is not None:
        year = index.edition_year(edition) if index else None
        if year is None:
            raise NotFound(f"edition={edition!r}: no such edition (iclr2021, iclr2024, ...)")
    if decision is not None and decision not in decisions:
        raise QueryError(f"decision={decision!r}: one of {', '.join(decisions)}")
    presentation, award, topic = (request.args.get(k) for k in ("presentation", "award", "topic"))
    if presentation is not None and presentation not in presentations:
        raise QueryError(f"presentation={presentation!r}: one of {', '.join(presentations)}")
    awarded = award_kinds()
    if award not in (None, "yes", *awarded):
        raise QueryError(f"award={award!r}: yes (any award) or one of {', '.join(sorted(awarded))}")
    expression = index.topic_filter(topic) if index and topic is not None else None
    if topic is not None and expression is None:
        raise QueryError(f"topic={topic!r}: a topic is a few words (graph neural network)")
    if kind != "paper" and (presentation or award or topic):
        raise QueryError("presentation, award and topic narrow lists of papers only")
    chosen = (
        ("year", year),
        ("decision", decision),
        ("presentation", presentation),
        ("award", award),
        ("topic", topic),
    )
    kept: dict[str, Any] = {k: v for k, v in chosen if v is not None}
    named: dict[str, str] = {}
    for argument, of_kind in ENTITY_FILTERS.items():
        key = request.args.get(argument)
        if key is None:
            continue
        iri = f"{vocab.RESOURCE_BASE}{of_kind}/{key}"
        if kind != "paper" or not KEY.match(key) or index is None or index.entity(iri) is None:
            raise NotFound(f"{argument}={key!r}: no such {of_kind} (papers only are listed by {argument})")
        named[argument], kept[argument] = iri, key
    people = tuple(named[a] for a in ("author", "coauthor") if a in named)
    among = awarded[award][1] if award in awarded else None
    narrowed = ListFilter(
        year, decision, people, named.get("organization"), presentation, award is not None, expression, among
    )
    labeler = Labeler(index, language(), state().terms())
    labeler.learn([NamedNode(iri) for iri in named.values()])
    of = [(argument, labeler.cell(NamedNode(iri))) for argument, iri in named.items()]
    return narrowed, kept, of + ([("topic", Cell(topic))] if topic is not None else [])


@blueprint.route("/id/<scheme>/<path:value>")
def by_identifier(scheme: str, value: str) -> ResponseReturnValue:
    """303 to our entity known elsewhere by `value` (an ORCID iD, a dblp pid or publication key, a
    Wikidata item..., bare or as its URL); 404 with a search where none is; 400 for what is not
    such an identifier."""
    schemes = schemes_for(scheme)
    if not schemes:
        raise NotFound(f"no identifier scheme {scheme!r}; known: {', '.join(ROUTES)}")
    written = value + (f"?{request.query_string.decode()}" if request.query_string else "")
    known, parsed = parse_for(schemes, written)  # or a 400 saying why
    entity = find_by_identifier(state().store(), known.name, parsed)
    if entity is None:
        wording, values = (
            "No entity here is known by the {scheme} identifier {value}.",
            {"scheme": known.label, "value": parsed},
        )
        raise NotFound(wording.format(**values), near=parsed, wording=wording, values=values)
    kind, key = kind_and_key(entity) or ("", "")
    return redirect(url_for("resources.resource", kind=kind, key=key), code=303)


def find_by_identifier(store: ReadableGraph, scheme: str, value: str) -> str | None:
    """The IRI of our entity that has `value` under the scheme's property (one index lookup)."""
    known = SCHEMES[scheme]
    if not known.prop:  # Wikidata: the item's IRI, linked with skos:exactMatch
        matches = store.quads_for_pattern(None, vocab.SKOS_EXACT_MATCH, NamedNode(known.iri(value)), None)
    else:
        matches = store.quads_for_pattern(None, known.predicate, Literal(value), None)
    found = sorted({q.subject.value for q in matches if isinstance(q.subject, NamedNode)})
    return found[0] if found else None


# What JSON inside a <script> element must not hold as itself: `</script>` ends the element, and
# `<!--` followed by `<script` turns the rest of the page into script text (HTML's "script data
# double escaped" state). JSON reads the escapes as the same characters.
SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def jsonld(store: ReadableGraph, iri: NamedNode, kind: str) -> str:
    """schema.org JSON-LD of a paper or person (crawlers and citation tools read it from the page),
    safe to embed in a <script> element whatever the names hold (`SCRIPT_SAFE`)."""
    return json.dumps(schema_org(store, iri, kind, state().index()), ensure_ascii=False).translate(SCRIPT_SAFE)


def describe(store: ReadableGraph, iri: NamedNode, labeler: Labeler) -> dict[str, object]:
    """Every statement about an entity, grouped by property, each with its graphs; and the
    statements that point at it (incoming). Names for IRIs come from `labeler`."""
    graphs_of: dict[tuple[str, str], list[str]] = defaultdict(list)
    objects: dict[str, dict[str, Any]] = defaultdict(dict)
    # How many values each property has, counted by the engine on the merged default graph
    # (which holds each statement once); then each property's first VALUES_SHOWN values are read
    # (a prolific author's 31,810 iclr:authorOf were read one by one in Python: 1.1 s of the page
    # at 50,000 papers; the page shows 50 and says how many more).
    counted = store.query(f"SELECT ?p (COUNT(*) AS ?n) WHERE {{ <{iri.value}> ?p ?o }} GROUP BY ?p")
    values_of = {row[0].value: int(row[1].value) for row in counted}
    for p in values_of:
        predicate = NamedNode(p)
        # each value once, from the merged default graph; then the graphs that state it
        for quad in itertools.islice(store.quads_for_pattern(iri, predicate, None, DefaultGraph()), VALUES_SHOWN):
            objects[p][str(quad.object)] = quad.object
            graphs_of[(p, str(quad.object))] = [
                q.graph_name.value
                for q in store.quads_for_pattern(iri, predicate, quad.object, None)
                if not isinstance(q.graph_name, DefaultGraph)
            ]
    incoming_quads = []
    for quad in store.quads_for_pattern(None, None, iri, DefaultGraph()):
        incoming_quads.append(quad)
        if len(incoming_quads) >= INCOMING_LIMIT:
            break
    labeler.learn(
        [iri, *[o for values in objects.values() for o in values.values()], *[q.subject for q in incoming_quads]]
    )

    def asserted(p: str) -> bool:
        return any(graphs_of[(p, key)] != [vocab.GRAPH_INFERRED] for key in objects[p])

    def order(x: str) -> tuple[bool, bool, str]:  # rdf:type first, then asserted properties, then inferred ones
        return (x != vocab.RDF_TYPE.value, not asserted(x), short(x))

    properties = []
    for p in sorted(objects, key=order):
        values: list[dict[str, Any]] = []
        for key, o in objects[p].items():
            graphs = sorted(set(graphs_of[(p, key)]))
            values.append(
                {
                    "cell": labeler.cell(o),
                    "inferred": graphs == [vocab.GRAPH_INFERRED],
                    "sources": [short_graph(g) for g in graphs if g != vocab.GRAPH_INFERRED],
                }
            )
        values.sort(key=lambda v: (v["inferred"], v["cell"].text))
        properties.append({"predicate": cell(NamedNode(p)), "values": values, "more": values_of[p] - len(objects[p])})
    incoming = [{"subject": labeler.cell(q.subject), "predicate": cell(q.predicate)} for q in incoming_quads]
    wikidata = [  # the heading links the Wikidata item; other identifiers are in the panels
        o for o in objects.get(vocab.SKOS_EXACT_MATCH.value, {}).values() if o.value.startswith(vocab.PREFIXES["wd"])
    ]
    return {
        "iri": iri.value,
        "label": labeler.name(iri.value) or iri.value.rsplit("/", 1)[-1],
        "properties": properties,
        "incoming": incoming,
        "wikidata": [w.value for w in wikidata],
        "limit": INCOMING_LIMIT,
    }


def short_graph(graph: str) -> str:
    if graph.startswith(vocab.GRAPH_SOURCE_BASE):
        return graph[len(vocab.GRAPH_SOURCE_BASE) :]
    return graph.rsplit("/", 1)[-1]


@blueprint.route("/ontology")
def ontology() -> Response | str:
    store = state().store()
    graph = NamedNode(vocab.GRAPH_ONTOLOGY)
    if wants_rdf():
        return rdf_response(
            lambda: (q.triple for q in store.quads_for_pattern(None, None, None, graph)), compacted=True
        )
    return render_template("ontology.html", **ontology_terms(store, graph))


def ontology_terms(store: ReadableGraph, graph: NamedNode) -> dict[str, object]:
    """Classes and properties of our namespace with labels, comments, domains, ranges, parents."""
    rdf_type = vocab.RDF_TYPE
    kinds = {
        vocab.OWL_CLASS.value: "classes",
        vocab.OWL_OBJECT_PROPERTY.value: "object_properties",
        vocab.OWL_DATATYPE_PROPERTY.value: "datatype_properties",
        vocab.OWL_NAMED_INDIVIDUAL.value: "individuals",
    }
    sections: dict[str, list[dict[str, object]]] = {name: [] for name in kinds.values()}
    for kind_iri, section in kinds.items():
        for quad in store.quads_for_pattern(None, rdf_type, NamedNode(kind_iri), graph):
            term = quad.subject
            if not isinstance(term, NamedNode) or not term.value.startswith(vocab.ONTOLOGY_NS):
                continue
            facts: dict[str, list[Term]] = defaultdict(list)
            for q in store.quads_for_pattern(term, None, None, graph):
                facts[q.predicate.value].append(q.object)
            labels = {o.language: o.value for o in facts.get(RDFS_LABEL, []) if isinstance(o, Literal)}
            sections[section].append(
                {
                    "name": term.value[len(vocab.ONTOLOGY_NS) :],
                    "iri": term.value,
                    "label": labels.get("en", ""),
                    "label_zh": labels.get("zh", ""),
                    "comment": " ".join(value(o) for o in facts.get(vocab.RDFS_COMMENT.value, [])),
                    "relations": [
                        (name, [cell(o) for o in facts.get(p, []) if isinstance(o, NamedNode)])
                        for name, p in (
                            ("subclass of", vocab.RDFS_SUBCLASS_OF.value),
                            ("subproperty of", vocab.RDFS_SUBPROPERTY_OF.value),
                            ("inverse of", vocab.OWL_INVERSE_OF.value),
                            ("domain", vocab.RDFS_DOMAIN.value),
                            ("range", vocab.RDFS_RANGE.value),
                            ("type", vocab.RDF_TYPE.value),
                        )
                    ],
                }
            )
    for entries in sections.values():
        entries.sort(key=lambda e: str(e["name"]).lower())
    return {"sections": sections, "namespace": vocab.ONTOLOGY_NS}


@blueprint.route("/data")
def data() -> Response:
    """Graph Store Protocol reads: ?default (the merged graph), ?graph=IRI, or the whole graph
    (writes: writes.py). The whole graph is every named graph in N-Quads or TriG, the formats
    that carry graph names (the default), or their union in any other RDF format (Turtle,
    N-Triples, JSON-LD, RDF/XML); `?format=` makes it a file named for the dataset and its date.
    Gzip'd when the client offers it: N-Quads of 10,000 papers are 278 MB, a tenth of that so."""
    store = state().store()
    graph_iri = request.args.get("graph")

    def merged() -> Iterable[Any]:
        return (q.triple for q in store.quads_for_pattern(None, None, None, DefaultGraph()))

    if "default" in request.args and graph_iri is None:
        return gzipped(rdf_response(merged))
    if graph_iri is not None:
        return gzipped(named_graph_response(graph_iri))
    asked = requested_format()
    chosen = choose("rdf", asked or None, request.accept_mimetypes if asked else _quads_first())
    if chosen.supports_graphs:

        def every_quad() -> Iterable[Any]:
            named = list(store.named_graphs())
            return chain.from_iterable(store.quads_for_pattern(None, None, None, g) for g in named)

        response = rdf_response(every_quad, graph_aware=True, fixed=chosen.name)
    else:
        response = rdf_response(merged, fixed=chosen.name)
    if asked:  # the Data page's links: saved as a file named for the dataset and its date
        day = built_on(state().generation) or "current"
        response.headers["Content-Disposition"] = f'attachment; filename="iclr-kg-{day}.{chosen.file_extension}"'
    return gzipped(response)


def _quads_first() -> Any:
    """The client's Accept, with N-Quads first where it accepts anything (`*/*`, none given): a
    bare GET of the whole graph keeps every graph's name."""
    accept = request.accept_mimetypes
    if not request.headers.get("Accept") or accept.best == "*/*":
        return MIMEAccept([("application/n-quads", 1)])
    return accept


def gzipped(response: Response) -> Response:
    """`response`'s streamed body gzip'd as it goes, where the client offers gzip (level 1: a
    graph's N-Quads shrink about tenfold at a fraction of the CPU of the default level)."""
    response.vary.add("Accept-Encoding")
    if chosen_encoding(request.headers.get("Accept-Encoding", "")) is None or response.status_code != 200:
        return response
    body = response.response
    response.response = ClosingBody(_gzip(body), getattr(body, "close", lambda: None))
    response.headers["Content-Encoding"] = "gzip"
    response.headers.pop("Content-Length", None)
    return response


def _gzip(chunks: Iterable[str] | Iterable[bytes]) -> Iterator[bytes]:
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
    for chunk in chunks:
        packed = compressor.compress(chunk.encode() if isinstance(chunk, str) else chunk)
        if packed:
            yield packed
    yield compressor.flush()


@blueprint.route("/data/<path:_>")
def data_direct(_: str) -> Response:
    """Graph Store Protocol, direct identification: the graph whose IRI is this URL."""
    return named_graph_response(request.base_url)


def named_graph_response(graph_iri: str) -> Response:
    store = state().store()
    graph = parse_iri(graph_iri, "graph")
    if not store.contains_named_graph(graph):
        raise NotFound(f"no graph {graph_iri} in this store")
    return rdf_response(lambda: (q.triple for q in store.quads_for_pattern(None, None, None, graph)))


@blueprint.app_errorhandler(404)
def not_found(_: Exception) -> Response:
    """Werkzeug's 404 (no route matched) answered as ours."""
    return error_response(NotFound("Not found.", near=request.path))
