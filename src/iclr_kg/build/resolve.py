"""Stage 2: resolve every name a source writes to exactly one registry entity.

Articles write the same organization many ways (谷歌, Google; 斯坦福, 斯坦福大學). The registries
list each entity once with its labels and aliases; this module indexes them and answers "which
entity is this name?". An unknown name, or a name two entities claim, is a curation error with
its file and line: silently creating or merging entities is how knowledge graphs rot.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from iclr_kg.build.sources import AuthorRef, Curated, Dataset, PaperFacts, SourceInfo
from iclr_kg.errors import DataError


def normalize(name: str) -> str:
    """Fold width (ＡＩ→AI, ：→:), case and spacing, so trivial variants match."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(folded.split())


@dataclass
class Registry:
    """Name → entity key indexes, one per kind of entity."""

    names: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    keys: dict[str, dict[str, Curated]] = field(default_factory=lambda: defaultdict(dict))
    papers: PaperMatches = field(default_factory=lambda: PaperMatches({}, {}))
    identifiers: SettledIdentifiers = field(default_factory=lambda: SettledIdentifiers(set(), []))

    def add(self, kind: str, entity: Curated, key: str, names: list[str], path: Path) -> None:
        if key in self.keys[kind]:
            raise DataError(path, entity.line("key"), "key", f"duplicate {kind} key {key!r}")
        self.keys[kind][key] = entity
        for name in [key, *names]:
            self.alias(kind, name, key)

    def alias(self, kind: str, name: str, key: str) -> None:
        """Let `name` (case, width and spacing folded) also stand for the entity `key`."""
        self.names[kind][normalize(name)].add(key)

    def candidates(self, kind: str, name: str) -> set[str]:
        return self.names[kind].get(normalize(name), set())

    def find(self, kind: str, name: str) -> str | None:
        """The key of the one `kind` entity called `name`, or None (unknown or ambiguous)."""
        found = self.candidates(kind, name)
        return next(iter(found)) if len(found) == 1 else None

    def resolve(self, kind: str, name: str, path: Path, line: int | None, field_name: str) -> str:
        """The key of the one `kind` entity called `name`, or a DataError saying why not."""
        candidates = self.candidates(kind, name)
        if not candidates:
            raise DataError(
                path, line, field_name, f"unknown {kind} {name!r}: add it (or an alias) to the {kind} registry"
            )
        if len(candidates) > 1:
            listed = ", ".join(sorted(candidates))
            raise DataError(path, line, field_name, f"ambiguous {kind} {name!r}: matches {listed}")
        return next(iter(candidates))

    def entity(self, kind: str, key: str) -> Curated:
        return self.keys[kind][key]


@dataclass
class PaperMatches:
    """Papers an article names only by title (a `key`, no OpenReview id), matched to the one paper
    with an id that has the same title in the same edition: `merged` key -> id, so the two are one
    entity (the key's IRI redirects). `ambiguous` key -> ids: several papers fit, or the authors
    differ; nothing is merged and a curator decides (`same_as`). `imported`: id -> the reviews an
    import gives by note id, (id, rating), so an article's bare ratings of the same paper name
    the same reviews rather than four more. `titles`: id -> the paper's preferred title, where
    sources spell it more than one way (preferred_titles)."""

    merged: dict[str, str]
    ambiguous: dict[str, list[str]]
    imported: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    def ident(self, paper: PaperFacts) -> str:
        return self.merged.get(paper.ident, paper.ident) if paper.key else paper.ident

    def is_preferred(self, paper: PaperFacts) -> bool:
        """Whether the title this source writes is the paper's preferred one (the only one, mostly)."""
        return self.titles.get(self.ident(paper), paper.title) == paper.title

    def review_keys(self, paper: PaperFacts) -> list[str]:
        """The review keys for an article's list of ratings: the imported reviews of the same
        paper, rating by rating, where both give the same ratings; else `<paper>-1`, `-2`..."""
        ident = self.ident(paper)
        found = self.imported.get(ident, [])
        if not found or sorted(r for _, r in found) != sorted(paper.ratings):
            return [f"{ident}-{i}" for i in range(1, len(paper.ratings) + 1)]
        pool: dict[int, list[str]] = defaultdict(list)
        for review, rating in sorted(found):
            pool[rating].append(review)
        return [pool[rating].pop(0) for rating in paper.ratings]


def _title_key(paper: PaperFacts) -> tuple[str, str]:
    """(edition, title) with case, width, punctuation and spacing folded."""
    title = "".join(c if c.isalnum() else " " for c in normalize(paper.title or ""))
    return normalize(paper.edition), " ".join(title.split())


def _author_names(paper: PaperFacts) -> set[str]:
    return {normalize(a.name if isinstance(a, AuthorRef) else a) for a in paper.authors}


def match_papers(dataset: Dataset) -> PaperMatches:
    """Match every keyed paper to an id-bearing paper by edition and title (and authors where both
    list them: at least one name in common)."""
    with_id: dict[tuple[str, str], dict[str, PaperFacts]] = defaultdict(dict)
    keyed: list[PaperFacts] = []
    imported: dict[str, list[tuple[str, int]]] = {}
    for source in dataset.sources:
        for paper in source.papers:
            rated = [(r.id, r.rating) for r in paper.reviews if r.rating is not None]
            if rated and not paper.key:
                imported.setdefault(paper.ident, rated)
            if paper.key:
                keyed.append(paper)
            else:
                with_id[_title_key(paper)].setdefault(paper.ident, paper)
    merged: dict[str, str] = {}
    ambiguous: dict[str, list[str]] = {}
    for paper in keyed:
        found = with_id.get(_title_key(paper), {})
        names = _author_names(paper)
        fitting = [i for i, other in found.items() if not names or not other.authors or names & _author_names(other)]
        if len(fitting) == 1 and len(found) == 1:
            merged[paper.ident] = fitting[0]
        elif found:
            ambiguous[paper.ident] = sorted(found)
    matches = PaperMatches(merged, ambiguous, imported)
    matches.titles = preferred_titles(dataset, matches)
    return matches


def title_rank(source: SourceInfo) -> int:
    """How far a source's spelling of a title is trusted, best first: the organizer's own word
    (ICLR's blog, iclr.cc), OpenReview (an import), a news article, any other web source."""
    if source.organizer:
        return 0
    return {"import": 1, "article": 2}.get(source.kind, 3)


def preferred_titles(dataset: Dataset, matches: PaperMatches) -> dict[str, str]:
    """Each paper's one preferred title, where sources write more than one: the spelling of its
    best-ranked source (title_rank), then the one most sources write, then the least. The others
    stay as alternative titles in their sources' graphs (docs/titles.md)."""
    stated: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for source in dataset.sources:
        rank = title_rank(source.source)
        for paper in source.papers:
            if paper.title is not None:
                stated[matches.ident(paper)][paper.title].append(rank)
    return {
        ident: min(spellings, key=lambda t: (min(spellings[t]), -len(spellings[t]), t))
        for ident, spellings in stated.items()
        if len(spellings) > 1
    }


def build_registry(dataset: Dataset) -> Registry:
    """Index every registry entity under its key, name, labels and aliases; check parents.

    People are also indexed under their OpenReview profile ids, from the registry and from the
    `profiles:` links that imports record, so an import's author resolves by profile first.
    """
    registry = Registry()
    files = dataset.files
    for org in dataset.organizations:
        registry.add(
            "organization",
            org,
            org.key,
            org.names,
            org.file or files["organizations"],
        )
    for person in dataset.people:
        names = [*person.names, *person.openreview]
        registry.add("person", person, person.key, names, person.file or files["people"])
    for conf in dataset.conferences:
        registry.add(
            "conference",
            conf,
            conf.key,
            conf.names,
            conf.file or files["events"],
        )
    for edition in dataset.editions:
        registry.add("edition", edition, edition.key, edition.names, edition.file or files["events"])
    for award in dataset.awards:
        registry.add(
            "award",
            award,
            award.key,
            award.names,
            award.file or files["events"],
        )
    for source in dataset.sources:
        for profile in source.profiles:
            key = registry.resolve("person", profile.person, source.path, profile.line("person"), "profiles.person")
            registry.alias("person", profile.profile, key)

    # Every cross-reference inside the registries must point at a known key.
    for org in dataset.organizations:
        if org.parent is not None:
            registry.resolve(
                "organization", org.parent, org.file or files["organizations"], org.line("parent"), "parent"
            )
    for edition in dataset.editions:
        registry.resolve(
            "conference", edition.conference, edition.file or files["events"], edition.line("conference"), "conference"
        )
    for award in dataset.awards:
        if award.edition is not None:
            registry.resolve("edition", award.edition, award.file or files["events"], award.line("edition"), "edition")
    _check_parent_cycles(dataset)
    registry.papers = match_papers(dataset)
    papers = {paper.ident for source in dataset.sources for paper in source.papers}

    def known(entity: str) -> bool:
        kind, key = entity.split("/", 1)
        return key in papers if kind == "paper" else key in registry.keys.get(kind, {})  # a curated registry's

    for link in dataset.links:
        if not known(link.entity):
            raise DataError(files["wikidata"], link.line("entity"), "entity", f"unknown entity {link.entity!r}")
    for source in dataset.sources:
        for identifier in source.identifiers:
            if identifier.entity is not None and not known(identifier.entity):
                raise DataError(
                    source.path, identifier.line("entity"), "entity", f"unknown entity {identifier.entity!r}"
                )
    registry.identifiers = settle_identifiers(dataset, registry)
    return registry


@dataclass
class SettledIdentifiers:
    """The identifiers all sources state, compared before any graph is written. A value stated
    for two of our entities (one ORCID on two people) is linked to neither: `shared`, and a line
    for a curator, who merges the two or corrects a source. An entity given two values of one
    scheme by different sources keeps both, each in its source's graph, and is reported too
    (never merged silently: a person may have two dblp pids, or a source may be wrong)."""

    shared: set[tuple[str, str]]  # (scheme, value)
    curation: list[str]


def settle_identifiers(dataset: Dataset, registry: Registry) -> SettledIdentifiers:
    # One pass keeps each value's first owner and each entity's first value per scheme (a dict
    # lookup per statement: 215,000 at 50,000 papers); who states what is put in words only for
    # the few that clash.
    owner: dict[tuple[str, str], str] = {}
    first_value: dict[tuple[str, str], str] = {}
    shared: set[tuple[str, str]] = set()
    several: set[tuple[str, str]] = set()
    statements = []
    for source in dataset.sources:
        for identifier in source.identifiers:
            entity = identifier.entity or _profile_owner(registry, identifier.profile or "")
            if entity is None:
                continue  # the graph's builder says the profile is unknown
            pair = (identifier.scheme, identifier.value)
            if owner.setdefault(pair, entity) != entity:
                shared.add(pair)
            if first_value.setdefault((entity, identifier.scheme), identifier.value) != identifier.value:
                several.add((entity, identifier.scheme))
            statements.append((source.source.key, identifier, entity))
    if not shared and not several:
        return SettledIdentifiers(set(), [])
    stated: dict[tuple[str, str], dict[str, set[str]]] = {}  # (scheme, value) -> entity -> who
    values: dict[tuple[str, str], dict[str, set[str]]] = {}  # (entity, scheme) -> value -> who
    for key, identifier, entity in statements:
        pair = (identifier.scheme, identifier.value)
        who = (
            f"OpenReview profile {identifier.profile}"
            if identifier.profile
            else f"Wikidata {identifier.item}"
            if identifier.item
            else f"source {key}"
        )
        if pair in shared:
            stated.setdefault(pair, {}).setdefault(entity, set()).add(who)
        elif (entity, identifier.scheme) in several:
            values.setdefault((entity, identifier.scheme), {}).setdefault(identifier.value, set()).add(who)
    curation = [
        f"{scheme} {value} is stated for {len(stated[(scheme, value)])} entities ({_said(stated[(scheme, value)])}): "
        "linked to none"
        for scheme, value in sorted(shared)
    ]
    curation += sorted(
        f"{entity} has {len(found)} {scheme} values from different sources ({_said(found)}): all kept"
        for (entity, scheme), found in values.items()
        if len(found) > 1 and len(set().union(*found.values())) > 1
    )
    return SettledIdentifiers(shared, curation)


def _profile_owner(registry: Registry, profile: str) -> str | None:
    found = registry.find("person", profile)
    return f"person/{found}" if found else None


def _said(stated: dict[str, set[str]]) -> str:
    """Who states what, for a curation line: "a by X; b by Y, Z"."""
    return "; ".join(f"{what} by {', '.join(sorted(who))}" for what, who in sorted(stated.items()))


def _check_parent_cycles(dataset: Dataset) -> None:
    parents = {o.key: o.parent for o in dataset.organizations}
    for org in dataset.organizations:
        seen, current = {org.key}, org.parent
        while current is not None:
            if current in seen:
                raise DataError(
                    org.file or dataset.files["organizations"],
                    org.line("parent"),
                    "parent",
                    f"cycle through {current!r}",
                )
            seen.add(current)
            current = parents.get(current)
