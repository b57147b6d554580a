"""`iclr-kg import openreview`: a whole ICLR venue as an import folder of its own.

Submissions, decisions, authors and review scores come from `openreview.py` as typed records;
this module resolves them against the registries (an author by profile id, by the curated
author list of a paper we already have, or by name; never onto a person with another profile)
and makes flagged new entities for the rest, then hands the result to `importfolder.py`, which
writes it all or nothing. Curated facts stay as they are; where the import and an article
disagree both remain, each in its own graph.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from iclr_kg import terms, vocab
from iclr_kg.build.resolve import Registry, build_registry, normalize
from iclr_kg.build.sources import (
    AuthorRef,
    Dataset,
    Edition,
    EditionFacts,
    Organization,
    PaperFacts,
    Person,
    ProfileLink,
    ReviewFacts,
    Source,
    SourceInfo,
    StatedIdentifier,
    add_shared,
    load_dataset,
    shared_entities,
)
from iclr_kg.config import Settings
from iclr_kg.errors import DataError, ImportFailed, NothingListed
from iclr_kg.external.iclr_years import YearFormat, supported_years, year_format
from iclr_kg.external.importfolder import (
    ImportFolder,
    ImportResult,
    WrittenFrom,
    shape_violations,
    tree_digest,
    write_import,
)
from iclr_kg.external.openreview import Author, Fetcher, Profile, Progress, Submission
from iclr_kg.identifiers import SCHEMES, BadIdentifier

COMMAND = "iclr-kg import openreview"
DECISIONS = tuple(terms.packaged().enumeration("Decision"))  # the notations, in the ontology's order


# A new entity's key, `or-<slug>-<n>`, within the build's bound on a curated key (vocab.CURATED_KEY):
# an affiliation's full name may run past it.
SLUG_MAX = vocab.KEY_PART_MAX - len("or-") - len("-99999")


def slug(text: str) -> str:
    folded = normalize(text).replace("~", "")
    return re.sub(r"[^a-z0-9]+", "-", folded)[:SLUG_MAX].strip("-") or "x"


class _Resolver:
    """Finds the registry entity for each author and affiliation, or makes a flagged new one."""

    def __init__(self, dataset: Dataset, registry: Registry):
        self.registry = registry
        self.people: dict[str, Person] = {}  # new person key -> entity
        self.organizations: dict[str, Organization] = {}  # new organization key -> entity
        self.links: dict[str, str] = {}  # profile -> registry person key (matched by name)
        # (kind, identity) -> key of the new entity made for it; identity: a profile id, or a folded name
        self.new_keys: dict[tuple[str, str], str] = {}
        self.curated_authors = self._curated_authors(dataset)
        self.matched: dict[str, set[str]] = {"profile": set(), "paper": set(), "name": set()}  # how people were found
        self.orgs_matched: set[str] = set()
        self.domains: dict[str, set[str]] = {}  # organization key -> the web domains profiles state for it

    def _curated_authors(self, dataset: Dataset) -> dict[str, list[str | None]]:
        """Paper id -> person key per author position, for papers the curated articles list."""
        out: dict[str, list[str | None]] = {}
        for source in dataset.sources:
            if source.source.kind != "article":
                continue
            for paper in source.papers:
                if paper.authors and paper.ident not in out:
                    out[paper.ident] = [
                        self.registry.find("person", a if isinstance(a, str) else a.name) for a in paper.authors
                    ]
        return out

    def author(self, paper_id: str, position: int, name: str, profile: str | None, found: Profile | None) -> AuthorRef:
        """The author entry for one author slot: by profile id where there is one, else by entity key."""
        if profile:
            if self.registry.find("person", profile):
                self.matched["profile"].add(profile)
                return AuthorRef(name=name, profile=profile)
            if profile in self.links or ("person", profile) in self.new_keys:  # decided at an earlier slot
                return AuthorRef(name=name, profile=profile)
        key = self._match_known(paper_id, position, name, profile)
        if key is not None:
            if profile:
                self.links[profile] = key
                return AuthorRef(name=name, profile=profile)
            return AuthorRef(name=name, person=key)
        key, new = self._new_entity("person", profile or name, self.people)
        if new:
            self.people[key] = Person(
                key=key,
                name=(found.name if found else None) or name,
                openreview=[profile] if profile else [],
                curation="needed",
            )
        return AuthorRef(name=name, profile=profile) if profile else AuthorRef(name=name, person=key)

    def _match_known(self, paper_id: str, position: int, name: str, profile: str | None) -> str | None:
        """A registry person by the paper's curated author list, else by name (never one with another profile)."""
        curated = self.curated_authors.get(paper_id)
        key = curated[position] if curated and len(curated) > position else None
        if key is not None and self._compatible(key, profile):
            self.matched["paper"].add(key)
            return key
        key = self.registry.find("person", name)
        if key is not None and self._compatible(key, profile):
            self.matched["name"].add(key)
            return key
        return None

    def _new_entity(
        self, kind: str, identity: str, made: dict[str, Person] | dict[str, Organization]
    ) -> tuple[str, bool]:
        """The key of the new `kind` entity for `identity` (a profile id or a name), and whether it
        is made now. Keys are `or-<slug>`, then `-2`, `-3`...: identities whose names fold alike
        (~Kim_Example28271 and "Kim Example28271") stay two entities, and no key of the registry
        is reused."""
        folded = identity if identity.startswith("~") else normalize(identity)
        known = self.new_keys.get((kind, folded))
        if known is not None:
            return known, False
        base = candidate = "or-" + slug(identity)
        n = 1
        while candidate in made or candidate in self.registry.keys[kind]:
            n += 1
            candidate = f"{base}-{n}"
        self.new_keys[(kind, folded)] = candidate
        return candidate, True

    def _compatible(self, key: str, profile: str | None) -> bool:
        known = getattr(self.registry.entity("person", key), "openreview", [])
        return not profile or not known or profile in known

    def organization(self, found: Profile | None, year: int) -> str | None:
        """The name to credit for an author's institution in the submission's year (from the
        profile's history; a new entity if unknown)."""
        institution, domain = found.affiliation(year) if found else (None, None)
        if not found or not institution:
            return None
        known = self.registry.find("organization", institution)
        key, new = (known, False) if known else self._new_entity("organization", institution, self.organizations)
        if domain:
            self.domains.setdefault(key, set()).add(domain)
        if known:  # by key, as a new one is: the same file whether an earlier import made it or not
            self.orgs_matched.add(known)
            return known
        if new:
            self.organizations[key] = Organization(
                key=key,
                name=institution,
                kind="unclassified",
                curation="needed",
                note=f"From OpenReview profile affiliations{f' ({domain})' if domain else ''}.",
            )
        return key


def _paper(
    record: Submission, edition: str, year: int, resolver: _Resolver, profiles: dict[str, Profile]
) -> PaperFacts:
    """One submission as our paper: authors resolved, their institutions of that year credited."""
    authors: list[str | AuthorRef] = []
    organizations: list[str] = []
    unknown_affiliation = False
    for position, (name, profile, _) in enumerate(record.authors):
        found = profiles.get(profile) if profile else None
        authors.append(resolver.author(record.id, position, name, profile, found))
        credited = resolver.organization(found, year)
        unknown_affiliation |= credited is None
        if credited and credited not in organizations:
            organizations.append(credited)
    return PaperFacts(
        openreview=record.id,
        edition=edition,
        title=record.title or None,
        title_withdrawn=record.title_withdrawn or None,
        abstract=record.abstract or None,
        keywords=record.keywords,
        authors=authors,
        organizations=organizations,
        organizations_complete=not (organizations and unknown_affiliation),
        decision=record.decision,
        presentation=record.presentation if record.decision == "accepted" else None,
        reviews=[
            ReviewFacts(id=s.id, rating=s.rating, confidence=s.confidence)
            for s in record.reviews
            if s.rating is not None
        ],
    )


def _levels(texts: set[str]) -> list[str]:
    """A year's scale levels as its reviews wrote them, by their number."""
    return sorted(texts, key=lambda t: (int(t.split(":", 1)[0]), t))


def _edition_facts(
    edition: str,
    venue: str,
    papers: list[PaperFacts],
    counts: dict[str, int],
    complete: bool,
    scale: list[str],
    confidence_scale: list[str],
) -> EditionFacts:
    """What the import states about the edition: counts computed from what it imported, and only
    those the data supports. A partial import states none; a venue with no decisions yet (still
    under review) states its submissions but no accepted count; orals count ICLR 2020's talks
    (its name for them); oral and spotlight counts only where every accepted paper has its
    presentation and the year's tiers are orals and spotlights (2023's notable-top-5% and -25% tiers
    are neither, so that year states none)."""
    if not complete:
        return EditionFacts(
            edition=edition, note=f"A partial import (--limit): {len(papers)} submissions; no counts are stated."
        )
    decided = any(p.decision in ("accepted", "rejected", "workshop") for p in papers)
    accepted = [p for p in papers if p.decision == "accepted"]
    presented = bool(accepted) and all(p.presentation for p in accepted)  # else a count would be a guess
    presented &= not any(str(p.presentation).startswith("notable") for p in accepted)
    note = (
        f"Counted from every submission OpenReview lists for {venue}: "
        f"{counts['withdrawn']} withdrawn and {counts['desk-rejected']} desk-rejected included"
        + (f", {counts['workshop']} moved to the workshop track." if counts["workshop"] else ".")
    )
    if not decided:
        note += " No decisions were published yet, so no accepted count is stated."
    return EditionFacts(
        edition=edition,
        rating_scale=scale,
        confidence_scale=confidence_scale,
        submissions=len(papers),
        accepted=counts["accepted"] if decided else None,
        orals=sum(p.presentation in ("oral", "talk") for p in papers) if presented else None,
        spotlights=sum(p.presentation == "spotlight" for p in papers) if presented else None,
        note=note,
    )


@dataclass
class Plan:
    """An import folder, and what resolution found (figures for the command's last line)."""

    folder: ImportFolder
    stats: dict[str, int]
    warnings: list[str] = field(default_factory=list)  # what was left out, and why, in sentences


def plan_import(
    dataset: Dataset,
    fmt: YearFormat,
    service: str,
    submissions: list[Submission],
    profiles: dict[str, Profile],
    reviews: bool,
    complete: bool,
    retrieved: dt.datetime,
) -> Plan:
    """The import's files for `submissions`, resolved against `dataset` (which must not hold this import)."""
    key, year, venue, api = fmt.key, fmt.year, fmt.venue, fmt.api
    registry = build_registry(dataset)
    resolver = _Resolver(dataset, registry)
    edition = f"ICLR {year}"
    editions = []
    if not registry.candidates("edition", edition):
        editions.append(Edition(key=f"iclr{year}", conference="iclr", year=year, name=edition))
    papers, seen = [], set()
    for record in submissions:
        if record.id in seen or not (record.title or record.title_withdrawn):
            continue
        seen.add(record.id)
        papers.append(_paper(record, edition, year, resolver, profiles))
    counts = {d: sum(p.decision == d for p in papers) for d in DECISIONS}
    reviewed = [score for record in submissions for score in record.reviews]
    rating_levels = _levels({s.rating_level for s in reviewed if s.rating_level})
    confidence_levels = _levels({s.confidence_level for s in reviewed if s.confidence_level})
    facts = _edition_facts(edition, venue, papers, counts, complete, rating_levels, confidence_levels)
    what = "submissions, decisions, authors with their profile ids" + (
        ", public review ratings and confidences" if reviews else ""
    )
    info = SourceInfo(
        key=key,
        kind="import",
        title=f"OpenReview: {venue}",
        language="en",
        summary=(
            f"The {what} of {venue}, as OpenReview's API {api} listed them. The organizations credited "
            f"to a paper are derived: each author's affiliation in {year}, from their profile's history."
        ),
        about=[edition],
        service=service,
        venue=venue,
        retrieved=retrieved.astimezone(dt.UTC).replace(microsecond=0),
    )
    links = [ProfileLink(profile=p, person=k) for p, k in sorted(resolver.links.items())]
    authors = {a.profile for p in papers for a in p.authors if isinstance(a, AuthorRef) and a.profile}
    identifiers, warnings = profile_identifiers({p: profiles[p] for p in sorted(authors) if p in profiles})
    domains, refused = organization_domains(resolver.domains)
    identifiers, warnings = identifiers + domains, warnings + refused
    source = Source(source=info, editions=[facts], papers=papers, profiles=links, identifiers=identifiers)
    stats = {
        "submissions": len(papers),
        **counts,
        "decisions in words the year table does not know": sum(bool(r.unread_decision) for r in submissions),
        "reviews": sum(len(p.reviews) for p in papers),
        **{f"known people by {how}": len(keys) for how, keys in resolver.matched.items()},
        "new people": len(resolver.people),
        "known organizations": len(resolver.orgs_matched),
        "new organizations": len(resolver.organizations),
        "identifiers from profiles": len(identifiers),
        "identifiers refused": len(warnings),
    }
    folder = ImportFolder(
        source,
        people=[resolver.people[k] for k in sorted(resolver.people)],
        organizations=[resolver.organizations[k] for k in sorted(resolver.organizations)],
        editions=editions,
        uses=_keys_used(source, registry),
    )
    return Plan(folder, stats, warnings)


def profile_identifiers(profiles: dict[str, Profile]) -> tuple[list[StatedIdentifier], list[str]]:
    """The identifiers the authors' profiles state, checked (identifiers.py), and a sentence for
    each refused: a malformed one (an ORCID whose checksum fails), and one that two profiles
    both claim (a dblp pid on two people is for a curator to settle: neither gets it)."""
    found: list[StatedIdentifier] = []
    warnings: list[str] = []
    for pid, profile in profiles.items():
        for scheme, written in sorted(profile.links.items()):
            try:
                value = SCHEMES[scheme].parse(written)
            except BadIdentifier as exc:
                warnings.append(f"{pid}: {SCHEMES[scheme].label} left out: {exc}")
                continue
            found.append(StatedIdentifier(profile=pid, scheme=scheme, value=value))
    owners: dict[tuple[str, str], list[str]] = {}
    for identifier in found:
        if identifier.profile is not None:  # made above with its profile
            owners.setdefault((identifier.scheme, identifier.value), []).append(identifier.profile)
    for (scheme, value), pids in sorted(owners.items()):
        if len(pids) > 1:
            warnings.append(
                f"{SCHEMES[scheme].label} {value} is stated by {len(pids)} profiles ({', '.join(pids)}): "
                "left out of both, for a curator to settle"
            )
    kept = [i for i in found if len(owners[(i.scheme, i.value)]) == 1]
    return kept, warnings


def organization_domains(domains: dict[str, set[str]]) -> tuple[list[StatedIdentifier], list[str]]:
    """The web domains the authors' profiles state for the institutions credited (each history
    entry names one), checked, as identifiers of those organizations; a sentence for each refused."""
    found: dict[tuple[str, str], StatedIdentifier] = {}
    warnings = []
    for key, written in sorted(domains.items()):
        for domain in sorted(written):
            try:
                value = SCHEMES["domain"].parse(domain)
            except BadIdentifier as exc:
                warnings.append(f"organization/{key}: web domain left out: {exc}")
                continue
            found[(key, value)] = StatedIdentifier(entity=f"organization/{key}", scheme="domain", value=value)
    return list(found.values()), warnings


def _keys_used(source: Source, registry: Registry) -> set[str]:
    """The registry people and organizations the import's papers and profile links point at
    (with the shared entities of earlier imports among them: the import then needs those)."""
    used = {link.person for link in source.profiles}
    for paper in source.papers:
        for author in paper.authors:
            name = author if isinstance(author, str) else author.profile or author.person or author.name
            used.add(registry.find("person", name) or "")
        used |= {registry.find("organization", o) or "" for o in paper.organizations}
    return used - {""}


def keep_out_violating(plan: Plan, curated: Dataset, shared: dict[str, list], ontology_dir: Path) -> None:
    """Leave out the papers the build's SHACL check would refuse (six real withdrawn 2019 papers
    are titled "NA"), so that one bad record never blocks the graph; the import says how many."""
    violations = shape_violations(plan.folder, curated, shared, ontology_dir)
    if not violations:
        return
    bad = {v.focus for v in violations}
    source = plan.folder.source
    kept = [p for p in source.papers if vocab.entity("paper", p.ident).value not in bad]
    left_out = len(source.papers) - len(kept)
    reasons = sorted({v.message for v in violations if v.focus.startswith(vocab.RESOURCE_BASE + "paper/")})
    facts = [f.model_copy(update={"note": f"{f.note} {left_out} kept out of the graph: {'; '.join(reasons)}"})
             for f in source.editions]  # fmt: skip
    plan.folder.source = source.model_copy(update={"papers": kept, "editions": facts})
    plan.stats["kept out (break a shape)"] = left_out
    remaining = shape_violations(plan.folder, curated, shared, ontology_dir)  # what leaving them out did not mend
    if remaining:
        raise ImportFailed(
            f"the import would break {len(remaining)} SHACL shape(s), e.g. {remaining[0].focus}: "
            f"{remaining[0].message}; nothing written"
        )


# --------------------------------------------------------------------------------------------
# The command


def run_import(
    settings: Settings,
    venue: str,
    *,
    api: str = "auto",
    reviews: bool = False,
    limit: int | None = None,
    refresh: bool = False,
    progress: Progress | None = None,
    now: Callable[[], dt.datetime] | None = None,
) -> ImportResult:
    """Fetch `venue` (a group id or a year; through the cache), resolve it, and write it as an
    import folder. The year's API comes from the year table (`iclr_years.py`): no probe."""
    fmt = year_format(venue)
    if api not in ("auto", fmt.api):
        raise ImportFailed(f"ICLR {fmt.year} is on OpenReview's API {fmt.api}, not {api}")
    base = settings.openreview_api_v2 if fmt.api == "v2" else settings.openreview_api
    service = hashlib.sha256(base.encode("utf-8")).hexdigest()[:12]  # pages of one service never serve another
    cache = settings.imports / ".cache" / fmt.key / service / f"{fmt.api}{'-reviews' if reviews else ''}"
    if refresh:
        shutil.rmtree(cache, ignore_errors=True)
    fetcher = Fetcher(settings, fmt, cache, reviews, progress)
    submissions = fetcher.submissions(limit)
    if not submissions:  # not open yet: nothing of it is cached, so that a rerun asks again
        shutil.rmtree(cache, ignore_errors=True)
        raise NothingListed(f"no submissions found for {fmt.venue} at {fetcher.base}; nothing written")
    submissions, by_email = _with_profiles_of_emails(fetcher, submissions)
    profiles = fetcher.profiles(a.profile for record in submissions for a in record.authors if a.profile)
    shared = shared_entities(settings.imports)
    made_from = _MadeFrom(settings, fmt, (reviews, limit, submissions, profiles))
    unchanged = WrittenFrom(cache, made_from.digest(shared)).unchanged()
    if unchanged is not None:  # the same pages, data/, shared entities and code as when it was written
        unchanged.requests = fetcher.requests
        return unchanged
    curated = load_dataset(settings.data_dir)
    retrieved = (now or (lambda: dt.datetime.now(dt.UTC)))()
    plan = plan_import(
        _with_shared(curated, shared), fmt, fetcher.base, submissions, profiles, reviews, limit is None, retrieved
    )
    if by_email:
        plan.stats["authors found by e-mail"] = by_email
    keep_out_violating(plan, curated, shared, settings.ontology_dir)
    try:
        folder, changed = write_import(plan.folder, settings.imports, curated, shared, COMMAND)
    except DataError as exc:
        raise ImportFailed(f"the import of {fmt.venue} does not build, nothing written: {exc}") from exc
    result = ImportResult(folder, changed, fmt.api, fetcher.requests, plan.stats, plan.warnings)
    # remembered with the shared entities as this write left them (it may have added some)
    WrittenFrom(cache, made_from.digest(shared_entities(settings.imports))).remember(result)
    return result


class _MadeFrom:
    """What a year's import folder is made from, digested: what was fetched (the options,
    submissions and profiles), data/, the ontology, this package's code, and the shared entities
    other imports made that this year's records could match (one whose names or ids occur in
    them). Which other imports name an entity is left out: a new year naming the same person
    changes nothing in an older year's folder. All but the shared entities is digested once; the
    shared entities are read before the import and again after its write (which may add some)."""

    def __init__(self, settings: Settings, fmt: YearFormat, fetched: tuple):
        self.key = fmt.key
        self.tokens = _strings(fetched)
        digest = hashlib.sha256(repr((fmt.key, fetched)).encode())
        code = Path(__file__).resolve().parents[1]
        digest.update(tree_digest(settings.data_dir, settings.ontology_dir, code).encode())
        self.fetched = digest.hexdigest()

    def digest(self, shared: dict[str, list]) -> str:
        matchable = sorted(
            repr(dumped)
            for section in ("people", "organizations")
            for entity, dumped in ((e, e.model_dump(exclude={"imported_by"})) for e in shared[section])
            if self.key in entity.imported_by or _strings(dumped) & self.tokens
        )
        return hashlib.sha256(repr((self.fetched, matchable)).encode()).hexdigest()


def _strings(value: object) -> set[str]:
    """Every string in `value` (records, mappings, sequences), normalized as names are matched."""
    if isinstance(value, str):
        return {normalize(value)}
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple, set, frozenset)):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


def _with_shared(curated: Dataset, shared: dict[str, list]) -> Dataset:
    """data/ and every entity earlier imports made: what an import resolves against (a person
    2019's import made is the same person in 2020's), without depending on their folders."""
    lists = {name: list(getattr(curated, name)) for name in ("people", "organizations")}
    add_shared(lists, shared, None)
    return curated.model_copy(update=lists)


def _with_profiles_of_emails(fetcher: Fetcher, submissions: list[Submission]) -> tuple[list[Submission], int]:
    """Authors listed by e-mail (2013-2020) given the profile that has that address, where exactly
    one does: they then resolve by profile like later years' authors. The addresses themselves go
    no further than the page cache."""
    emails = {a.email for record in submissions for a in record.authors if a.email}
    if not emails:
        return submissions, 0
    found = fetcher.profiles_by_email(emails)
    if not found:
        return submissions, 0
    out, count = [], 0
    for record in submissions:
        authors = []
        for author in record.authors:
            profile = found.get(author.email) if author.email else None
            count += profile is not None
            authors.append(Author(author.name, profile.id) if profile else Author(author.name, author.profile))
        out.append(record.model_copy(update={"authors": authors}))
    return out, count


@dataclass
class YearResult:
    """One year of `--venue all`: its result, or why it was skipped or failed."""

    fmt: YearFormat
    result: ImportResult | None = None
    skipped: str | None = None  # no submissions yet (a year not open)
    failed: str | None = None


def run_all(
    settings: Settings,
    *,
    until: int | None = None,
    reviews: bool = False,
    refresh: bool = False,
    progress: Callable[[YearFormat], AbstractContextManager[Progress | None]] = lambda fmt: nullcontext(),
    now: Callable[[], dt.datetime] | None = None,
) -> list[YearResult]:
    """Every supported edition up to `until` (next year's, by default: its venue opens in the
    autumn), one import each, oldest first. Resumable: every page is cached as it arrives and each
    year is written when complete, so a rerun asks only for what it lacks. A year with nothing
    listed yet is skipped; a year that fails does not stop the others."""
    out = []
    for fmt in supported_years(until or dt.date.today().year + 1):
        try:
            with progress(fmt) as report:
                result = run_import(settings, str(fmt.year), reviews=reviews, refresh=refresh, progress=report, now=now)
            out.append(YearResult(fmt, result))
        except NothingListed as exc:
            out.append(YearResult(fmt, skipped=str(exc)))
        except ImportFailed as exc:
            out.append(YearResult(fmt, failed=str(exc)))
    return out
