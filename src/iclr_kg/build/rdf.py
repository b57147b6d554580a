"""Stage 3: turn resolved models into RDF quads, one named graph per source article.

IRIs are minted here and only here (`iri`). The registries go to the entities graph, each
article's statements to its own graph (so disagreeing articles stay side by side), Wikidata
links to the Wikidata graph. The same functions serve the build and any later entity export.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, parse

from iclr_kg import vocab
from iclr_kg.build.resolve import Registry
from iclr_kg.build.sources import (
    AuthorRef,
    AwardFacts,
    ConferenceFacts,
    Curated,
    Dataset,
    EditionFacts,
    Organization,
    PaperFacts,
    Person,
    PersonFacts,
    Source,
)
from iclr_kg.errors import DataError

RDF_NS = vocab.RDF
XSD, DCTERMS, SCHEMA = vocab.XSD, vocab.DCTERMS, vocab.SCHEMA
RDF_TYPE, RDFS_LABEL, SKOS_EXACT = vocab.RDF_TYPE, vocab.RDFS_LABEL, vocab.SKOS_EXACT_MATCH
iclr, iri = vocab.iclr, vocab.entity


def source_graph(source_key: str) -> NamedNode:
    return NamedNode(vocab.GRAPH_SOURCE_BASE + source_key)


def typed(value: object, datatype: str) -> Literal:
    return Literal(str(value), datatype=NamedNode(XSD + datatype))


def boolean(value: bool) -> Literal:
    return typed("true" if value else "false", "boolean")


def text(value: str, language: str | None = None) -> Literal:
    return Literal(" ".join(value.split()), language=language) if language else Literal(value)


def openreview_profile(profile_id: str) -> NamedNode:
    return NamedNode(f"https://openreview.net/profile?id={quote(profile_id, safe='~')}")


def openreview_forum(openreview_id: str) -> NamedNode:
    return NamedNode(f"https://openreview.net/forum?id={openreview_id}")


ORG_CLASSES = {
    "university": "University",
    "company": "Company",
    "research-lab": "ResearchLab",
    "department": "Department",
    "foundation": "Foundation",
    "as-credited": "UnresolvedOrganization",
    "unclassified": "Organization",
}
DECISIONS = {"accepted": "Accepted", "rejected": "Rejected", "withdrawn": "Withdrawn", "desk-rejected": "DeskRejected"}
AWARD_CLASSES = {
    "outstanding-paper": "OutstandingPaperAward",
    "honorable-mention": "HonorableMention",
    "best-paper": "BestPaperAward",
    "person-honor": "Award",
}
PRESENTATIONS = {"oral": "Oral", "spotlight": "Spotlight", "poster": "Poster", "talk": "Talk"}


class _Emitter:
    """Collects quads for one graph."""

    def __init__(self, graph: NamedNode):
        self.graph = graph
        self.quads: list[Quad] = []

    def add(self, s: NamedNode, p: NamedNode, o: NamedNode | Literal) -> None:
        self.quads.append(Quad(s, p, o, self.graph))

    def maybe(self, s: NamedNode, p: NamedNode, o: NamedNode | Literal | None) -> None:
        if o is not None:
            self.add(s, p, o)


# --------------------------------------------------------------------------------------------
# The registries


def entity_quads(dataset: Dataset) -> list[Quad]:
    """The canonical entities: names, labels, kinds, organization hierarchy, editions."""
    out = _Emitter(NamedNode(vocab.GRAPH_ENTITIES))
    for org in dataset.organizations:
        node = iri("organization", org.key)
        out.add(node, RDF_TYPE, iclr(ORG_CLASSES[org.kind]))
        _names(out, node, org.name, org.labels, org.aliases)
        if org.parent:
            out.add(node, iclr("subOrganizationOf"), iri("organization", org.parent))
        out.maybe(node, iclr("note"), text(org.note, "en") if org.note else None)
        _curation(out, node, org)
    for person in dataset.people:
        node = iri("person", person.key)
        out.add(node, RDF_TYPE, iclr("Person"))
        out.add(node, iclr("name"), text(person.name))
        for lang, native in person.native_name.items():
            out.add(node, iclr("nativeName"), text(native, lang))
        for alias in person.aliases:
            out.add(node, iclr("alias"), text(alias))
        for profile in person.openreview:
            _profile(out, node, profile)
        _curation(out, node, person)
    for conf in dataset.conferences:
        node = iri("conference", conf.key)
        out.add(node, RDF_TYPE, iclr("Conference"))
        _names(out, node, conf.name, conf.labels, conf.aliases)
    for edition in dataset.editions:
        node = iri("edition", edition.key)
        out.add(node, RDF_TYPE, iclr("ConferenceEdition"))
        out.add(node, iclr("name"), text(edition.name))
        out.add(node, iclr("year"), typed(edition.year, "gYear"))
        out.add(node, iclr("editionOf"), iri("conference", edition.conference))
    for award in dataset.awards:
        node = iri("award", award.key)
        out.add(node, RDF_TYPE, iclr(AWARD_CLASSES[award.kind]))
        _names(out, node, award.name, award.labels, award.aliases)
        if award.edition:
            out.add(node, iclr("awardedAt"), iri("edition", award.edition))
    return out.quads


def _curation(out: _Emitter, node: NamedNode, entity: Organization | Person) -> None:
    if entity.curation == "needed":
        out.add(node, iclr("needsCuration"), boolean(True))


def _profile(out: _Emitter, node: NamedNode, profile: str) -> None:
    out.add(node, iclr("openReviewProfile"), text(profile))
    out.add(node, iclr("openReviewProfilePage"), openreview_profile(profile))


def _names(out: _Emitter, node: NamedNode, name: str, labels: dict[str, str], aliases: list[str]) -> None:
    out.add(node, iclr("name"), text(name))
    out.add(node, RDFS_LABEL, text(name, "en"))
    for lang, label in labels.items():
        out.add(node, RDFS_LABEL, text(label, lang))
    for alias in aliases:
        out.add(node, iclr("alias"), text(alias))


def wikidata_quads(dataset: Dataset) -> list[Quad]:
    """Checked Wikidata links, each with a reified statement saying how it was established."""
    out = _Emitter(NamedNode(vocab.GRAPH_WIKIDATA))
    for link in dataset.links:
        kind, key = link.entity.split("/", 1)
        entity, item = iri(kind, key), NamedNode(vocab.PREFIXES["wd"] + link.qid)
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


class _SourceBuilder:
    """Builds one article's graph, resolving its names through the registry."""

    def __init__(self, source: Source, registry: Registry):
        self.source, self.registry = source, registry
        self.out = _Emitter(source_graph(source.source.key))
        self.path: Path = source.path

    def ref(self, kind: str, name: str, block: Curated, field: str, index: int | None = None) -> NamedNode:
        line = block.line(field, index)
        label = field if index is None else f"{field}[{index}]"
        return iri(kind, self.registry.resolve(kind, name, self.path, line, label))

    def build(self) -> list[Quad]:
        self._source_info()
        for facts in self.source.conferences:
            self._conference(facts)
        for facts in self.source.editions:
            self._edition(facts)
        for facts in self.source.awards:
            self._award(facts)
        seen: set[str] = set()
        for paper in self.source.papers:
            if paper.ident in seen:
                raise DataError(self.path, paper.line(), "openreview", f"paper {paper.ident!r} listed twice")
            seen.add(paper.ident)
            self._paper(paper)
        for person in self.source.people:
            self._person(person)
        for link in self.source.profiles:
            _profile(self.out, self.ref("person", link.person, link, "person"), link.profile)
        return self.out.quads

    def _source_info(self) -> None:
        info, out = self.source.source, self.out
        node = iri("source", info.key)
        out.add(node, RDF_TYPE, iclr("Article" if info.kind == "article" else "DataImport"))
        out.add(node, NamedNode(DCTERMS + "title"), text(info.title))
        out.add(node, NamedNode(SCHEMA + "inLanguage"), text(info.language))
        out.add(node, NamedNode(DCTERMS + "description"), text(info.summary, "en"))
        out.maybe(node, iclr("seedFile"), text(info.seed) if info.seed else None)
        out.maybe(node, iclr("service"), NamedNode(info.service) if info.service else None)
        out.maybe(node, iclr("venueId"), text(info.venue) if info.venue else None)
        if info.retrieved:
            out.add(node, iclr("retrievedAt"), typed(info.retrieved.isoformat(), "dateTime"))
        out.maybe(node, iclr("outlet"), text(info.outlet) if info.outlet else None)
        for note in (info.title_note, info.outlet_note):
            out.maybe(node, iclr("note"), text(note, "en") if note else None)
        for writer in info.writers:
            out.add(node, iclr("writer"), text(writer))
        for i, about in enumerate(info.about):
            out.add(node, iclr("about"), self.ref("edition", about, info, "about", i))
        for cited in info.cites:
            out.add(node, iclr("cites"), NamedNode(cited))
        out.add(self.out.graph, iclr("statedIn"), node)

    def _conference(self, facts: ConferenceFacts) -> None:
        out = self.out
        node = self.ref("conference", facts.conference, facts, "conference")
        if facts.founded is not None:
            out.add(node, iclr("foundedIn"), typed(facts.founded, "gYear"))
        for i, name in enumerate(facts.founders):
            out.add(node, iclr("founder"), self.ref("person", name, facts, "founders", i))
        if facts.open_review is not None:
            out.add(node, iclr("usesOpenReview"), boolean(facts.open_review))
        if facts.note:
            out.add(node, iclr("note"), text(facts.note, "en"))

    def _edition(self, facts: EditionFacts) -> None:
        out, f = self.out, facts
        node = self.ref("edition", f.edition, f, "edition")
        values = {
            "startDate": (f.start, "date"),
            "endDate": (f.end, "date"),
            "submissionCount": (f.submissions, "integer"),
            "acceptedCount": (f.accepted, "integer"),
            "oralCount": (f.orals, "integer"),
            "spotlightCount": (f.spotlights, "integer"),
            "acceptanceRate": (f.acceptance_rate, "decimal"),
            "highScorePaperCount": (f.high_score_papers, "integer"),
            "perfectScorePaperCount": (f.perfect_score_papers, "integer"),
            "perfectScorePaperCountAtLeast": (f.perfect_score_papers_at_least, "integer"),
            "resubmissionCount": (f.resubmissions, "integer"),
            "arxivPostedCount": (f.arxiv_posted, "integer"),
            "decisionsAnnounced": (f.decisions_announced, "gYearMonth"),
        }
        for term, (value, datatype) in values.items():
            if value is not None:
                out.add(node, iclr(term), typed(value, datatype))
        out.maybe(node, iclr("city"), text(f.city) if f.city else None)
        out.maybe(node, iclr("country"), text(f.country) if f.country else None)
        if f.online is not None:
            out.add(node, iclr("heldOnline"), boolean(f.online))
        for level in f.rating_scale:
            out.add(node, iclr("ratingScaleLevel"), text(level))
        out.maybe(node, iclr("note"), text(f.note, "en") if f.note else None)

    def _award(self, facts: AwardFacts) -> None:
        out, f = self.out, facts
        node = self.ref("award", f.award, f, "award")
        if f.inaugural is not None:
            out.add(node, iclr("isInaugural"), boolean(f.inaugural))
        for criterion in f.criteria:
            out.add(node, iclr("criterion"), text(criterion, "en"))
        for i, name in enumerate(f.committee):
            out.add(node, iclr("committeeOrganization"), self.ref("organization", name, f, "committee", i))
        if f.committee:
            out.add(node, iclr("committeeListComplete"), boolean(f.committee_complete))
        out.maybe(node, iclr("note"), text(f.note, "en") if f.note else None)

    def _paper(self, paper: PaperFacts) -> None:
        out, ident = self.out, paper.ident
        node = iri("paper", ident)
        out.add(node, RDF_TYPE, iclr("Paper"))
        out.add(node, iclr("title"), text(paper.title))
        out.add(node, iclr("submittedTo"), self.ref("edition", paper.edition, paper, "edition"))
        if paper.openreview:
            out.add(node, iclr("openReviewId"), text(paper.openreview))
            out.add(node, iclr("openReviewUrl"), openreview_forum(paper.openreview))
        out.maybe(node, iclr("methodName"), text(paper.method_name) if paper.method_name else None)
        out.maybe(node, iclr("codeRepository"), NamedNode(paper.code) if paper.code else None)
        if paper.decision:
            out.add(node, iclr("decision"), iclr(DECISIONS[paper.decision]))
        if paper.presentation:
            out.add(node, iclr("presentationType"), iclr(PRESENTATIONS[paper.presentation]))
        for field, lang_text in (("summary", paper.summary), ("note", paper.note)):
            if lang_text:
                out.add(node, iclr(field), text(lang_text, "en"))
        if paper.review_summary:
            out.add(node, iclr("note"), text("Reviews: " + paper.review_summary, "en"))
        for i, name in enumerate(paper.organizations):
            out.add(node, iclr("creditedOrganization"), self.ref("organization", name, paper, "organizations", i))
        if paper.organizations:
            out.add(node, iclr("organizationListComplete"), boolean(paper.organizations_complete))
        self._authors(node, paper)
        self._reviews(node, paper)
        for i, given in enumerate(paper.awards_given()):
            award = self.ref("award", given.award, paper, "awards", i)
            conferral = iri("conferral", f"{award.value.rsplit('/', 1)[1]}-{ident}")
            out.add(conferral, RDF_TYPE, iclr("AwardConferral"))
            out.add(conferral, iclr("conferredOn"), node)
            out.add(conferral, iclr("conferredAward"), award)
            if given.reason:
                out.add(conferral, iclr("reason"), text(given.reason, "en"))

    def _authors(self, node: NamedNode, paper: PaperFacts) -> None:
        out = self.out
        for position, author in enumerate(paper.authors, start=1):
            if isinstance(author, AuthorRef):  # an import's author: by profile, else by entity key
                name, reference = author.name, author.profile or author.person or author.name
            else:
                name = reference = author
            person = self.ref("person", reference, paper, "authors", position - 1)
            authorship = iri("authorship", f"{paper.ident}-{position}")
            out.add(authorship, RDF_TYPE, iclr("Authorship"))
            out.add(authorship, iclr("authorshipOf"), node)
            out.add(authorship, iclr("authorshipBy"), person)
            out.add(authorship, iclr("authorPosition"), typed(position, "integer"))
            out.add(authorship, iclr("authorNameAsWritten"), text(name))
            if position == 1:
                out.add(node, iclr("firstAuthor"), person)

    def _reviews(self, node: NamedNode, paper: PaperFacts) -> None:
        out = self.out
        for index, rating in enumerate(paper.ratings, start=1):
            review = iri("review", f"{paper.ident}-{index}")
            out.add(review, RDF_TYPE, iclr("Review"))
            out.add(review, iclr("reviewOf"), node)
            out.add(review, iclr("rating"), typed(rating, "integer"))
            out.add(review, iclr("reviewIndex"), typed(index, "integer"))
        for review_facts in paper.reviews:
            review = iri("review", review_facts.id)
            out.add(review, RDF_TYPE, iclr("Review"))
            out.add(review, iclr("reviewOf"), node)
            out.add(review, iclr("rating"), typed(review_facts.rating, "integer"))
            if review_facts.confidence is not None:
                out.add(review, iclr("confidence"), typed(review_facts.confidence, "integer"))
        if paper.average_rating is not None:
            out.add(node, iclr("averageRating"), typed(paper.average_rating, "decimal"))
        if paper.all_ratings is not None:
            out.add(node, iclr("allRatingsEqual"), typed(paper.all_ratings, "integer"))
        if paper.reviewer_count is not None:
            out.add(node, iclr("reviewerCount"), typed(paper.reviewer_count, "integer"))

    def _person(self, facts: PersonFacts) -> None:
        out = self.out
        person = self.ref("person", facts.person, facts, "person")
        person_key = person.value.rsplit("/", 1)[1]
        roles = [(r, True, "education", i) for i, r in enumerate(facts.education)]
        roles += [(r, False, "positions", i) for i, r in enumerate(facts.positions)]
        for n, (role, is_education, _field, _i) in enumerate(roles, start=1):
            org = self.ref("organization", role.organization, role, "organization")
            node = iri("role", f"{person_key}-{self.source.source.key}-{n}")
            out.add(node, RDF_TYPE, iclr("Role"))
            out.add(node, iclr("roleOf"), person)
            out.add(node, iclr("roleAt"), org)
            out.add(node, iclr("roleName"), text(role.role, "en"))
            out.maybe(node, iclr("degree"), text(role.degree, "en") if role.degree else None)
            out.add(node, iclr("isCurrent"), boolean(role.current))
            out.add(node, iclr("isEducation"), boolean(is_education))
            if is_education:
                out.add(person, iclr("educatedAt"), org)
            if role.current:
                out.add(person, iclr("affiliatedWith" if is_education else "employedBy"), org)
        for i, teacher in enumerate(facts.student_of):
            out.add(person, iclr("formerStudentOf"), self.ref("person", teacher, facts, "student_of", i))
        for i, honor in enumerate(facts.honors):
            out.add(person, iclr("honoredWith"), self.ref("award", honor, facts, "honors", i))
        for work in facts.notable_work:
            out.add(person, iclr("notableWork"), text(work))


def source_quads(source: Source, registry: Registry) -> list[Quad]:
    """The named graph of one article."""
    return _SourceBuilder(source, registry).build()


def ontology_quads(ontology_file: Path) -> list[Quad]:
    """The ontology, parsed by Oxigraph into its own named graph; a syntax error names the line."""
    graph = NamedNode(vocab.GRAPH_ONTOLOGY)
    try:
        with ontology_file.open("rb") as handle:
            return [Quad(t.subject, t.predicate, t.object, graph) for t in parse(handle, format=RdfFormat.TURTLE)]
    except OSError as exc:
        raise DataError(ontology_file, None, None, f"cannot read ontology: {exc}") from exc
    except SyntaxError as exc:
        line = getattr(exc, "lineno", None)
        raise DataError(
            ontology_file, line, None, f"invalid Turtle: {exc.msg if hasattr(exc, 'msg') else exc}"
        ) from exc


def asserted_quads(dataset: Dataset, registry: Registry) -> Iterator[Quad]:
    """Every asserted quad: entities, each source's graph, Wikidata links (not the ontology)."""
    yield from entity_quads(dataset)
    keys: set[str] = set()
    for source in dataset.sources:
        key = source.source.key
        if key in keys:
            raise DataError(source.path, source.source.line("key"), "source.key", f"duplicate source key {key!r}")
        keys.add(key)
        yield from source_quads(source, registry)
    yield from wikidata_quads(dataset)
