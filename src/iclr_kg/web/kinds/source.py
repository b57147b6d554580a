"""A source's page: the article, its language, date and address (or that it gives none), and
what it states per kind of entity."""

from __future__ import annotations

from collections.abc import Mapping

from pyoxigraph import DefaultGraph, Literal, NamedNode

from iclr_kg import terms, vocab
from iclr_kg.graph import ReadableGraph, value
from iclr_kg.index import Index
from iclr_kg.kinds import KINDS, REIFIED, EntityKind
from iclr_kg.web.html import LANGUAGE_NAMES, Cell, web_link
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds.kindpage import KindPage
from iclr_kg.web.kinds.panels import NO_PAGES, Panel, Value, select_rows, values_of

SOURCE_STATES = """
SELECT ?kind (COUNT(DISTINCT ?s) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } ?g iclr:statedIn ?e .
  BIND (STRBEFORE(STRAFTER(STR(?s), STR(res:)), "/") AS ?kind) FILTER (?kind != "" && ?s != ?e)
} GROUP BY ?kind ORDER BY DESC(?n) ?kind"""


def source(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    title = [q.object for q in store.quads_for_pattern(iri, NamedNode(vocab.DCTERMS + "title"), None, DefaultGraph())]
    heading = value(title[0]) if title else iri.value.rsplit("/", 1)[-1]
    about = Panel("Source")
    about.properties(store, iri, [("Outlet", "outlet"), ("Written by", "writer")])
    tags = [value(q.object) for q in store.quads_for_pattern(iri, NamedNode(vocab.SCHEMA + "inLanguage"), None, None)]
    about.rows = [(label, [_in_its_words(v, tags) for v in values]) for label, values in about.rows]
    about.properties(
        store,
        iri,
        [
            ("About", "about"),
            ("Retrieved", "retrievedAt"),
            ("Service", "service"),
            ("Cites", "cites"),
            ("Summary", NamedNode(vocab.DCTERMS + "description")),
            ("Note", "note"),
        ],
    )
    about.add("Language", *sorted({translate(LANGUAGE_NAMES.get(tag.lower(), tag)) for tag in tags}))
    if any(True for _ in store.quads_for_pattern(iri, vocab.RDF_TYPE, vocab.iclr("Article"), DefaultGraph())):
        # an article's date and address, or that it gives none (the five seed articles give neither)
        dated: list[Value] = [
            q.object
            for q in store.quads_for_pattern(iri, NamedNode(vocab.SCHEMA + "datePublished"), None, DefaultGraph())
        ]
        about.add("Published", *(dated or [translate("not stated in the article")]))
        kept = any(True for _ in store.quads_for_pattern(iri, vocab.iclr("seedFile"), None, None))
        address: list[Value] = [
            q.object for q in store.quads_for_pattern(iri, NamedNode(vocab.SCHEMA + "url"), None, DefaultGraph())
        ]
        unstated = translate(
            "not stated in the article (we keep a copy of its text)" if kept else "not stated in the article"
        )
        about.add("Address", *(address or [unstated]))
    if any(True for _ in store.quads_for_pattern(iri, vocab.RDF_TYPE, vocab.iclr("WebSource"), DefaultGraph())):
        _web_source(store, iri, about)
    states = Panel("What it states (entities per kind)", kind="bars")
    states.bars = [
        (_kind_named(row["kind"].value), int(row["n"].value))
        for row in select_rows(store, SOURCE_STATES, iri)
        if row["kind"].value not in REIFIED  # a value's place in a list: bookkeeping, not what it states
    ]
    return heading, [about, states]


def _in_its_words(name: Value, languages: list[str]) -> Value:
    """A name the source writes (its outlet, its writers: plain strings) marked with the source's
    one language (`languages`: its tags, in every graph that states one), as its title is: a Chinese page shows Traditional script in Simplified, the
    original on hover (html.Labeler); an English page, as written."""
    if isinstance(name, Literal) and not name.language and len(set(languages)) == 1:
        return Cell(name.value, lang=languages[0])
    return name


def _kind_named(segment: str) -> str:
    """A kind of entity (an IRI segment: "conferral") as the ontology labels its class ("award
    conferral", 获奖记录), in the page's language."""
    kind = KINDS.get(EntityKind(segment))
    return translate(terms.packaged().label(kind.root)) if kind is not None else translate(segment)


def _web_source(store: ReadableGraph, iri: NamedNode, about: Panel) -> None:
    """A web source's address (a link out), who publishes it (the registry's organization where
    the name resolves to one, and the name as written), its date or that it gives none, and
    whether it is ICLR's own word or a secondary source."""
    address = [Cell(value(v), href=web_link(value(v)), external=True) for v in values_of(store, iri, "address")]
    about.add("Address", *address)
    about.add("Publisher", *values_of(store, iri, "publisher"), *values_of(store, iri, "publisherName"))
    about.add("Published", *(values_of(store, iri, "published") or [translate("the page gives no date")]))
    own = [value(v) == "true" for v in values_of(store, iri, "organizerStatement")]
    if own:
        about.add(
            "Whose word",
            translate("ICLR's own (the organizer's statement)" if own[0] else "secondary (not the organizer's word)"),
        )


PAGE = KindPage(profile=source, plural="Sources")
