"""Stage 3: turn resolved models into RDF quads, one named graph per source article.

IRIs are minted here and only here (`iri`). The registries go to the entities graph, each
article's statements to its own graph (so disagreeing articles stay side by side), Wikidata
links to the Wikidata graph. The same functions serve the build and any later entity export.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from pydantic import BaseModel
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Store, parse

from iclr_kg import terms, vocab
from iclr_kg.build.resolve import Registry
from iclr_kg.build.sources import (
    AuthorRef,
    AwardFacts,
    Curated,
    Dataset,
    Labels,
    Organization,
    PaperFacts,
    Person,
    PersonFacts,
    Prose,
    Source,
    Text,
)
from iclr_kg.errors import DataError
from iclr_kg.identifiers import SCHEMES

RDF_NS = vocab.RDF
XSD, DCTERMS, SCHEMA = vocab.XSD, vocab.DCTERMS, vocab.SCHEMA
RDF_TYPE, RDFS_LABEL, SKOS_EXACT = vocab.RDF_TYPE, vocab.RDFS_LABEL, vocab.SKOS_EXACT_MATCH
DCTERMS_REPLACED_BY = vocab.DCTERMS_IS_REPLACED_BY
iclr, iri = vocab.iclr, vocab.entity

# A quad as a tuple of pyoxigraph terms: (subject, predicate, object, graph name). The build holds
# its asserted graph this way, each term made once and shared by the quads that name it: a
# pyoxigraph Quad owns a copy of all four terms' strings (at 10,000 papers the 449,595 asserted
# quads took 245 MB as Quads, 43 MB as these tuples). Every stage reads them by position, which
# a Quad also allows.
TermQuad = tuple[Any, NamedNode, Any, NamedNode]


def source_graph(source_key: str) -> NamedNode:
    return NamedNode(vocab.GRAPH_SOURCE_BASE + source_key)


def typed(value: object, datatype: str) -> Literal:
    return _typed(str(value), datatype)


@functools.lru_cache(maxsize=4096)  # ratings, positions, indexes and counts repeat: one literal each
def _typed(text: str, datatype: str) -> Literal:
    """Keyed by the text, not the value: 1 == 1.0 == True, and Decimal("5") == Decimal("5.0")."""
    return as_stored(Literal(text, datatype=NamedNode(XSD + datatype)))


# Oxigraph stores a literal of a datatype it knows (xsd:dateTime, xsd:decimal...) as its value and
# gives back its canonical form: "2026-01-01T00:00:00+00:00" comes back "2026-01-01T00:00:00Z",
# "5.0"^^xsd:decimal "5". The build makes its literals in that form, so that its quads are the
# terms a store holds: an incremental build compares the two, and its closure (reasoning/dred.py)
# numbers terms read from both; a second spelling of one value was a change of it
_SCRATCH, _SCRATCH_LOCK = Store(), threading.Lock()
_PROBE = NamedNode("urn:iclr-kg:as-stored")


def as_stored(literal: Literal) -> Literal:
    """`literal` as a store gives it back (one in-memory insert, read and removal: 20 µs)."""
    quad = Quad(_PROBE, _PROBE, literal, DefaultGraph())
    with _SCRATCH_LOCK:
        _SCRATCH.add(quad)
        stored = next(_SCRATCH.quads_for_pattern(_PROBE, _PROBE, None, None)).object
        _SCRATCH.remove(quad)
    return stored  # type: ignore[return-value]


@functools.lru_cache(maxsize=2)
def boolean(value: bool) -> Literal:
    return typed("true" if value else "false", "boolean")


def text(value: str, language: str | None = None) -> Literal:
    return Literal(" ".join(value.split()), language=language) if language else Literal(value)


def openreview_profile(profile_id: str) -> NamedNode:
    return NamedNode(f"https://openreview.net/profile?id={quote(profile_id, safe='~')}")


def openreview_forum(openreview_id: str) -> NamedNode:
    return NamedNode(f"https://openreview.net/forum?id={openreview_id}")


# The values data files write, as the ontology names them (its skos:notation): {"workshop": "MovedToWorkshop"}
_TERMS = terms.packaged()
ORG_CLASSES = _TERMS.kinds_below("Organization")
AWARD_CLASSES = _TERMS.kinds_below("Award")
DECISIONS = _TERMS.enumeration("Decision")
PRESENTATIONS = _TERMS.enumeration("PresentationType")


# How a field's value becomes an object term: an XSD datatype ("integer", "gYear", ...), "text" (a
# plain string), "en" (English text), "iri", or an enumeration {value: ontology class} (decisions).
Kind = str | Mapping[str, str]
Fields = dict[str, tuple[NamedNode, Kind]]


def term(value: object, kind: Kind) -> NamedNode | Literal | None:
    """The object term of one field value; None where the value is not stated (None or "")."""
    if value is None or value == "":
        return None
    if isinstance(kind, Mapping):
        return iclr(kind[str(value)])
    if kind == "iri":
        return NamedNode(str(value))
    if kind in ("text", "en"):
        return text(str(value), "en" if kind == "en" else None)
    if kind == "boolean":
        return boolean(bool(value))
    return typed(value.isoformat() if isinstance(value, dt.date) else value, kind)  # dates, and datetimes


class Nodes(dict[tuple[str, str], NamedNode]):
    """The IRI of each entity (kind, key), made once per build: the quads that name an entity
    share one term (`TermQuad`)."""

    def __missing__(self, entity: tuple[str, str]) -> NamedNode:
        node = self[entity] = iri(*entity)
        return node

    def __call__(self, kind: str, key: str) -> NamedNode:
        return self[kind, key]


class _Emitter:
    """Collects quads for one graph."""

    def __init__(self, graph: NamedNode):
        self.graph = graph
        self.quads: list[TermQuad] = []

    def add(self, s: NamedNode, p: NamedNode, o: NamedNode | Literal) -> None:
        self.quads.append((s, p, o, self.graph))

    def fields(self, node: NamedNode, model: BaseModel, table: Fields) -> None:
        """A model's scalar fields (and lists of scalars, one triple per item), by its table; an
        ORDERED list's triples each with their place in it."""
        for field, (predicate, kind) in table.items():
            value = getattr(model, field)
            for position, item in enumerate(value if isinstance(value, list) else (value,), 1):
                said = len(self.quads)
                if isinstance(item, Prose):
                    self.prose(node, predicate, item)
                elif (obj := term(item, kind)) is not None:
                    self.add(node, predicate, obj)
                if field in ORDERED:
                    for _, _, obj, _ in self.quads[said:]:
                        self.ordered(node, predicate, obj, position)

    def ordered(self, node: NamedNode, predicate: NamedNode, obj: Literal | NamedNode, position: int) -> None:
        """The triple (node, predicate, obj) at `position` of its list: an iclr:OrderedStatement
        reifying it, keyed by graph, entity, property, place and language (one per value)."""
        graph = self.graph.value.rsplit("/", 1)[-1]
        entity = node.value[len(vocab.RESOURCE_BASE) :].replace("/", "-")
        language = f"-{obj.language}" if isinstance(obj, Literal) and obj.language else ""
        local = predicate.value.rsplit("#", 1)[-1]
        statement = iri("ordered", f"{graph}-{entity}-{local}-{position}{language}")
        self.add(statement, RDF_TYPE, iclr("OrderedStatement"))
        self.add(statement, NamedNode(RDF_NS + "subject"), node)
        self.add(statement, NamedNode(RDF_NS + "predicate"), predicate)
        self.add(statement, NamedNode(RDF_NS + "object"), obj)
        self.add(statement, iclr("listPosition"), typed(position, "integer"))

    def prose(self, node: NamedNode, predicate: NamedNode, words: Text, prefix: Prose | None = None) -> None:
        """Our own words: English, and Simplified Chinese where the data gives it (`prefix`: a
        lead-in in both languages, "Reviews: ")."""
        both = words if isinstance(words, Prose) else Prose(en=words, zh="")
        for language, tag in (("en", "en"), ("zh", "zh-Hans")):
            said = getattr(both, language)
            if said:
                self.add(node, predicate, text(getattr(prefix, language, "") + said, tag))


NOTE: Fields = {"note": (iclr("note"), "en")}
# The list fields whose order is the source's (an article's byline, a committee's members and
# criteria): each value's place is stated with it (an iclr:OrderedStatement); other lists are sets
# (keywords, aliases)
ORDERED = frozenset({"writers", "criteria", "committee"})
REVIEWS = Prose(en="Reviews: ", zh="评审：")
PERSON: Fields = {"name": (iclr("name"), "text"), "aliases": (iclr("alias"), "text")}
# A year twice: iclr:year an xsd:integer, which compares with numbers (FILTER (?year >= 2020)),
# and iclr:calendarYear the same year as an xsd:gYear, for vocabularies that type years so
# (docs/years.md)
EDITION: Fields = {"name": (iclr("name"), "text"), "year": (iclr("year"), "integer")}
EDITION_CALENDAR: Fields = {"year": (iclr("calendarYear"), "gYear")}
SOURCE_INFO: Fields = {
    "title": (NamedNode(DCTERMS + "title"), "text"),
    "language": (NamedNode(SCHEMA + "inLanguage"), "text"),
    "summary": (NamedNode(DCTERMS + "description"), "en"),
    "seed": (iclr("seedFile"), "text"),
    "service": (iclr("service"), "iri"),
    "venue": (iclr("venueId"), "text"),
    "retrieved": (iclr("retrievedAt"), "dateTime"),
    "outlet": (iclr("outlet"), "text"),
    "title_note": (iclr("note"), "en"),
    "outlet_note": (iclr("note"), "en"),
    "writers": (iclr("writer"), "text"),
    "cites": (iclr("cites"), "iri"),
    "url": (iclr("address"), "iri"),
    "publisher": (iclr("publisherName"), "text"),
    "published": (iclr("published"), "date"),
    "organizer": (iclr("organizerStatement"), "boolean"),
}
SOURCE_CLASSES = {"article": "Article", "import": "DataImport", "web": "WebSource"}
CONFERENCE_FACTS: Fields = {
    "founded": (iclr("foundedIn"), "integer"),
    "open_review": (iclr("usesOpenReview"), "boolean"),
    **NOTE,
}
EDITION_FACTS: Fields = {
    "start": (iclr("startDate"), "date"),
    "end": (iclr("endDate"), "date"),
    "submissions": (iclr("submissionCount"), "integer"),
    "accepted": (iclr("acceptedCount"), "integer"),
    "orals": (iclr("oralCount"), "integer"),
    "spotlights": (iclr("spotlightCount"), "integer"),
    "posters": (iclr("posterCount"), "integer"),
    "withdrawn": (iclr("withdrawnCount"), "integer"),
    "desk_rejected": (iclr("deskRejectedCount"), "integer"),
    "no_paper_awards": (iclr("noPaperAwards"), "boolean"),
    "acceptance_rate": (iclr("acceptanceRate"), "decimal"),
    "high_score_papers": (iclr("highScorePaperCount"), "integer"),
    "perfect_score_papers": (iclr("perfectScorePaperCount"), "integer"),
    "perfect_score_papers_at_least": (iclr("perfectScorePaperCountAtLeast"), "integer"),
    "resubmissions": (iclr("resubmissionCount"), "integer"),
    "arxiv_posted": (iclr("arxivPostedCount"), "integer"),
    "decisions_announced": (iclr("decisionsAnnounced"), "gYearMonth"),
    "city": (iclr("city"), "en"),
    "country": (iclr("country"), "en"),
    "online": (iclr("heldOnline"), "boolean"),
    "rating_scale": (iclr("ratingScaleLevel"), "text"),
    "confidence_scale": (iclr("confidenceScaleLevel"), "text"),
    **NOTE,
}
AWARD_FACTS: Fields = {
    "inaugural": (iclr("isInaugural"), "boolean"),
    "criteria": (iclr("criterion"), "en"),
    **NOTE,
}
PAPER_FACTS: Fields = {  # its title: _paper (the preferred one, or an alternative)
    "title_withdrawn": (iclr("titleWithdrawn"), "boolean"),
    "method_name": (iclr("methodName"), "text"),
    "code": (iclr("codeRepository"), "iri"),
    "decision": (iclr("decision"), DECISIONS),
    "presentation": (iclr("presentationType"), PRESENTATIONS),
    "summary": (iclr("summary"), "en"),
    "abstract": (iclr("abstract"), "en"),
    "keywords": (iclr("keyword"), "en"),
    "average_rating": (iclr("averageRating"), "decimal"),
    "all_ratings": (iclr("allRatingsEqual"), "integer"),
    "reviewer_count": (iclr("reviewerCount"), "integer"),
    **NOTE,
}
REVIEW_FACTS: Fields = {"rating": (iclr("rating"), "integer"), "confidence": (iclr("confidence"), "integer")}
ROLE_FACTS: Fields = {
    "role": (iclr("roleName"), "en"),
    "degree": (iclr("degree"), "en"),
    "current": (iclr("isCurrent"), "boolean"),
}
PERSON_FACTS: Fields = {"notable_work": (iclr("notableWork"), "text")}


# --------------------------------------------------------------------------------------------
# The registries


def entity_quads(dataset: Dataset, nodes: Nodes | None = None) -> list[TermQuad]:
    """The canonical entities: names, labels, kinds, organization hierarchy, editions."""
    out = _Emitter(NamedNode(vocab.GRAPH_ENTITIES))
    entities = nodes if nodes is not None else Nodes()
    for org in dataset.organizations:
        node = entities("organization", org.key)
        out.add(node, RDF_TYPE, iclr(ORG_CLASSES[org.kind]))
        _names(out, node, org.name, org.labels, org.aliases)
        if org.parent:
            out.add(node, iclr("subOrganizationOf"), entities("organization", org.parent))
        out.fields(node, org, NOTE)
        _curation(out, node, org)
    for person in dataset.people:
        node = entities("person", person.key)
        out.add(node, RDF_TYPE, iclr("Person"))
        out.fields(node, person, PERSON)
        for lang, native in person.native_name.items():
            out.add(node, iclr("nativeName"), text(native, lang))
        for profile in person.openreview:
            _profile(out, node, profile)
        _curation(out, node, person)
    for conf in dataset.conferences:
        node = entities("conference", conf.key)
        out.add(node, RDF_TYPE, iclr("Conference"))
        _names(out, node, conf.name, conf.labels, conf.aliases)
    for edition in dataset.editions:
        node = entities("edition", edition.key)
        out.add(node, RDF_TYPE, iclr("ConferenceEdition"))
        out.fields(node, edition, EDITION)
        out.fields(node, edition, EDITION_CALENDAR)
        out.add(node, iclr("editionOf"), entities("conference", edition.conference))
    for award in dataset.awards:
        node = entities("award", award.key)
        out.add(node, RDF_TYPE, iclr(AWARD_CLASSES[award.kind]))
        _names(out, node, award.name, award.labels, award.aliases)
        if award.edition:
            out.add(node, iclr("awardedAt"), entities("edition", award.edition))
    return out.quads


def _curation(out: _Emitter, node: NamedNode, entity: Organization | Person) -> None:
    if entity.curation == "needed":
        out.add(node, iclr("needsCuration"), boolean(True))


def _profile(out: _Emitter, node: NamedNode, profile: str) -> None:
    out.add(node, iclr("openReviewProfile"), text(profile))
    out.add(node, iclr("openReviewProfilePage"), openreview_profile(profile))


def _names(out: _Emitter, node: NamedNode, name: str, labels: Labels, aliases: list[str]) -> None:
    out.add(node, iclr("name"), text(name))
    out.add(node, RDFS_LABEL, text(name, "en"))
    for lang, label in labels.items():
        out.add(node, RDFS_LABEL, text(label, lang))
    for alias in aliases:
        out.add(node, iclr("alias"), text(alias))


def wikidata_quads(dataset: Dataset, nodes: Nodes | None = None) -> list[TermQuad]:
    """Checked Wikidata links, each with a reified statement saying how it was established."""
    out = _Emitter(NamedNode(vocab.GRAPH_WIKIDATA))
    entities = nodes if nodes is not None else Nodes()
    for link in dataset.links:
        kind, key = link.entity.split("/", 1)
        entity, item = entities(kind, key), NamedNode(vocab.PREFIXES["wd"] + link.qid)
        out.add(entity, SKOS_EXACT, item)
        statement = iri("link", f"{kind}-{key}")
        out.add(statement, RDF_TYPE, NamedNode(RDF_NS + "Statement"))
        out.add(statement, NamedNode(RDF_NS + "subject"), entity)
        out.add(statement, NamedNode(RDF_NS + "predicate"), SKOS_EXACT)
        out.add(statement, NamedNode(RDF_NS + "object"), item)
        out.add(statement, iclr("linkMethod"), text(link.method))
        out.add(statement, iclr("evidence"), text(link.evidence, "en"))
    return out.quads


# --------------------------------------------------------------------------------------------
# One source article


class Ref(NamedTuple):
    """A name resolved to a registry entity: its key (for IRIs minted from it) and its IRI."""

    key: str
    node: NamedNode


class _SourceBuilder:
    """Builds one article's graph, resolving its names through the registry.

    Scalar fields go through the tables above; what stays written out by hand is what links
    entities: authorships, reviews, roles and award conferrals, and the names resolved on the way.
    """

    def __init__(self, source: Source, registry: Registry, nodes: Nodes):
        self.source, self.registry, self.nodes = source, registry, nodes
        self.out = _Emitter(source_graph(source.source.key))
        self.path: Path = source.path

    def ref(self, kind: str, name: str, block: Curated, field: str, index: int | None = None) -> Ref:
        """Resolve `name` (stated at `block.field[index]`) to a `kind` entity; errors name the line,
        looked up only then (for every reference it was a fifth of the RDF stage)."""
        key = self.registry.find(kind, name)
        if key is None:  # unknown or ambiguous: `resolve` says which
            label = field if index is None else f"{field}[{index}]"
            key = self.registry.resolve(kind, name, self.path, block.line(field, index), label)
        return Ref(key, self.nodes(kind, key))

    def refs(self, node: NamedNode, predicate: NamedNode, kind: str, block: Curated, field: str) -> None:
        """One triple per name in the list field `block.field`, each resolved to a `kind` entity
        (with its place in the list, where the field is ORDERED)."""
        for i, name in enumerate(getattr(block, field)):
            entity = self.ref(kind, name, block, field, i).node
            self.out.add(node, predicate, entity)
            if field in ORDERED:
                self.out.ordered(node, predicate, entity, i + 1)

    def build(self) -> list[TermQuad]:
        self._source_info()
        for facts in self.source.conferences:
            node = self.ref("conference", facts.conference, facts, "conference").node
            self.out.fields(node, facts, CONFERENCE_FACTS)
            self.refs(node, iclr("founder"), "person", facts, "founders")
        for edition in self.source.editions:
            self.out.fields(self.ref("edition", edition.edition, edition, "edition").node, edition, EDITION_FACTS)
        for award in self.source.awards:
            self._award(award)
        seen: set[str] = set()
        for paper in self.source.papers:
            if paper.ident in seen:
                raise DataError(self.path, paper.line(), "openreview", f"paper {paper.ident!r} listed twice")
            seen.add(paper.ident)
            self._paper(paper)
        for person in self.source.people:
            self._person(person)
        for link in self.source.profiles:
            _profile(self.out, self.ref("person", link.person, link, "person").node, link.profile)
        for identifier in self.source.identifiers:
            if identifier.entity is not None:
                node = self.nodes(*identifier.entity.split("/", 1))
            else:  # the profile's owner, known by the profile id
                node = self.ref("person", identifier.profile or "", identifier, "profile").node
            if (identifier.scheme, identifier.value) in self.registry.identifiers.shared:
                continue  # stated for two of our entities: a curator settles it (resolve.py)
            scheme = SCHEMES[identifier.scheme]
            self.out.add(node, scheme.predicate, text(identifier.value))
            if scheme.linked_by:  # the IRI that names the entity elsewhere (skos:exactMatch), or its page
                self.out.add(node, NamedNode(scheme.linked_by), NamedNode(scheme.iri(identifier.value)))
        return self.out.quads

    def _source_info(self) -> None:
        info, out = self.source.source, self.out
        node = iri("source", info.key)
        out.add(node, RDF_TYPE, iclr(SOURCE_CLASSES[info.kind]))
        out.fields(node, info, SOURCE_INFO)
        if info.publisher and (publisher := self.registry.find("organization", info.publisher)):
            out.add(node, iclr("publisher"), self.nodes("organization", publisher))
        self.refs(node, iclr("about"), "edition", info, "about")
        out.add(self.out.graph, iclr("statedIn"), node)

    def _award(self, facts: AwardFacts) -> None:
        node = self.ref("award", facts.award, facts, "award").node
        self.out.fields(node, facts, AWARD_FACTS)
        self.refs(node, iclr("committeeOrganization"), "organization", facts, "committee")
        if facts.committee:
            self.out.add(node, iclr("committeeListComplete"), boolean(facts.committee_complete))

    def _paper(self, paper: PaperFacts) -> None:
        out, ident = self.out, self.registry.papers.ident(paper)
        node = self.nodes("paper", ident)
        if ident != paper.ident:  # named by title here, matched to the paper with an id: one entity
            out.add(self.nodes("paper", paper.ident), DCTERMS_REPLACED_BY, node)
        for other in self.registry.papers.ambiguous.get(paper.ident, []):
            out.add(node, iclr("possiblySameAs"), self.nodes("paper", other))
        out.add(node, RDF_TYPE, iclr("Paper"))
        if paper.title is not None:  # a spelling other sources outrank stays, as an alternative
            preferred = self.registry.papers.is_preferred(paper)
            out.add(node, iclr("title" if preferred else "alternativeTitle"), text(paper.title))
        out.fields(node, paper, PAPER_FACTS)
        out.add(node, iclr("submittedTo"), self.ref("edition", paper.edition, paper, "edition").node)
        if paper.openreview:
            out.add(node, iclr("openReviewId"), text(paper.openreview))
            out.add(node, iclr("openReviewUrl"), openreview_forum(paper.openreview))
        if paper.arxiv:  # as an identifier is stated: its value under Wikidata's property, its IRI matched
            arxiv = SCHEMES["arxiv"]
            out.add(node, arxiv.predicate, text(paper.arxiv))
            out.add(node, NamedNode(arxiv.linked_by), NamedNode(arxiv.iri(paper.arxiv)))
        if paper.review_summary:
            out.prose(node, iclr("note"), paper.review_summary, REVIEWS)
        self.refs(node, iclr("creditedOrganization"), "organization", paper, "organizations")
        if paper.organizations:
            out.add(node, iclr("organizationListComplete"), boolean(paper.organizations_complete))
        self._authors(node, paper)
        self._reviews(node, paper)
        for i, given in enumerate(paper.awards_given()):
            award = self.ref("award", given.award, paper, "awards", i)
            conferral = iri("conferral", f"{award.key}-{ident}")
            out.add(conferral, RDF_TYPE, iclr("AwardConferral"))
            out.add(conferral, iclr("conferredOn"), node)
            out.add(conferral, iclr("conferredAward"), award.node)
            if given.reason:
                out.prose(conferral, iclr("reason"), given.reason)

    def _authors(self, node: NamedNode, paper: PaperFacts) -> None:
        out = self.out
        for position, author in enumerate(paper.authors, start=1):
            if isinstance(author, AuthorRef):  # an import's author: by profile, else by entity key
                name, reference = author.name, author.profile or author.person or author.name
            else:
                name = reference = author
            person = self.ref("person", reference, paper, "authors", position - 1).node
            authorship = iri("authorship", f"{self.registry.papers.ident(paper)}-{position}")
            out.add(authorship, RDF_TYPE, iclr("Authorship"))
            out.add(authorship, iclr("authorshipOf"), node)
            out.add(authorship, iclr("authorshipBy"), person)
            out.add(authorship, iclr("authorPosition"), typed(position, "integer"))
            out.add(authorship, iclr("authorNameAsWritten"), text(name))
            if position == 1:
                out.add(node, iclr("firstAuthor"), person)

    def _reviews(self, node: NamedNode, paper: PaperFacts) -> None:
        """Reviews as an article gives them (ratings, numbered) or as an import does (by note id)."""
        out = self.out
        keys = self.registry.papers.review_keys(paper)
        numbered = [
            (iri("review", key), i, r) for i, (key, r) in enumerate(zip(keys, paper.ratings, strict=True), start=1)
        ]
        for review, index, rating in numbered:
            out.add(review, RDF_TYPE, iclr("Review"))
            out.add(review, iclr("reviewOf"), node)
            out.add(review, iclr("rating"), typed(rating, "integer"))
            out.add(review, iclr("reviewIndex"), typed(index, "integer"))
        for facts in paper.reviews:
            review = iri("review", facts.id)
            out.add(review, RDF_TYPE, iclr("Review"))
            out.add(review, iclr("reviewOf"), node)
            out.fields(review, facts, REVIEW_FACTS)

    def _person(self, facts: PersonFacts) -> None:
        out = self.out
        person = self.ref("person", facts.person, facts, "person")
        roles = [(role, True) for role in facts.education] + [(role, False) for role in facts.positions]
        for n, (role, is_education) in enumerate(roles, start=1):
            org = self.ref("organization", role.organization, role, "organization").node
            node = iri("role", f"{person.key}-{self.source.source.key}-{n}")
            out.add(node, RDF_TYPE, iclr("Role"))
            out.add(node, iclr("roleOf"), person.node)
            out.add(node, iclr("roleAt"), org)
            out.fields(node, role, ROLE_FACTS)
            out.add(node, iclr("isEducation"), boolean(is_education))
            if is_education:
                out.add(person.node, iclr("educatedAt"), org)
            if role.current:
                out.add(person.node, iclr("affiliatedWith" if is_education else "employedBy"), org)
        self.refs(person.node, iclr("formerStudentOf"), "person", facts, "student_of")
        self.refs(person.node, iclr("honoredWith"), "award", facts, "honors")
        out.fields(person.node, facts, PERSON_FACTS)


def source_quads(source: Source, registry: Registry, nodes: Nodes | None = None) -> list[TermQuad]:
    """The named graph of one article."""
    return _SourceBuilder(source, registry, nodes if nodes is not None else Nodes()).build()


def ontology_quads(ontology_file: Path) -> list[TermQuad]:
    """The ontology, parsed by Oxigraph into its own named graph, its blank nodes named the same
    in every build of the same file (vocab.ONTOLOGY_BLANK_PREFIX); a syntax error names the line."""
    graph = NamedNode(vocab.GRAPH_ONTOLOGY)
    try:
        text = ontology_file.read_bytes()
        stable = _stable_blanks(f"{vocab.ONTOLOGY_BLANK_PREFIX}{hashlib.sha256(text).hexdigest()[:12]}x")
        return [(stable(t.subject), t.predicate, stable(t.object), graph) for t in parse(text, format=RdfFormat.TURTLE)]
    except OSError as exc:
        raise DataError(ontology_file, None, None, f"cannot read ontology: {exc}") from exc
    except SyntaxError as exc:
        line = getattr(exc, "lineno", None)
        raise DataError(
            ontology_file, line, None, f"invalid Turtle: {exc.msg if hasattr(exc, 'msg') else exc}"
        ) from exc


def _stable_blanks(prefix: str) -> Callable[[Any], Any]:
    """A renaming of blank nodes to `prefix` and their order of first appearance (the parser's are random)."""
    names: dict[BlankNode, BlankNode] = {}

    def stable(term: Any) -> Any:
        if not isinstance(term, BlankNode):
            return term
        name = names.get(term)
        if name is None:
            name = names[term] = BlankNode(f"{prefix}{len(names)}")
        return name

    return stable


def asserted_quads(dataset: Dataset, registry: Registry) -> Iterator[TermQuad]:
    """Every asserted quad: entities, each source's graph, Wikidata links (not the ontology)."""
    nodes = Nodes()
    yield from entity_quads(dataset, nodes)
    keys: set[str] = set()
    for source in dataset.sources:
        key = source.source.key
        if key in keys:
            raise DataError(source.path, source.source.line("key"), "source.key", f"duplicate source key {key!r}")
        keys.add(key)
        yield from source_quads(source, registry, nodes)
    yield from wikidata_quads(dataset, nodes)
