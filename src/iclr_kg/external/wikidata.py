"""Links to Wikidata: a reconciler that proposes links with evidence, and exports of the links.

The reconciler asks Wikidata's Action API (`wbsearchentities` to find candidates by name,
`wbgetentities` for their labels, aliases and claims), scores each candidate with the evidence it
finds, and writes proposals to a review file; nothing reaches data/ until a curator accepts them
(`iclr-kg link-wikidata accept`). `iclr-kg import wikidata` then reads the identifiers the linked
items state (ORCID, ROR, DOI...) into an import of their own. The client follows Wikidata's API etiquette: a descriptive User-Agent,
`maxlag`, up to 50 ids per wbgetentities call, backoff on 429 / 5xx / maxlag errors honouring
Retry-After (the HTTP part by the shared session policy, session.py), and a disk cache so that a
rerun asks nothing twice.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml

from iclr_kg import vocab
from iclr_kg.atomic import write_text
from iclr_kg.build.resolve import build_registry, normalize
from iclr_kg.build.sources import Dataset, Source, SourceInfo, StatedIdentifier, load_dataset, shared_entities
from iclr_kg.config import Settings
from iclr_kg.errors import BadIdentifier, DataError, IclrKgError, WikidataError
from iclr_kg.external.importfolder import ImportFolder, ImportResult, write_import
from iclr_kg.external.jsoncache import JsonCache
from iclr_kg.external.session import RETRY_STATUSES, polite_session
from iclr_kg.graph import solutions
from iclr_kg.identifiers import SCHEMES
from iclr_kg.kinds import KINDS, WIKIDATA_LINKED
from iclr_kg.sparql.spreadsheet import sssom_cell

DEFAULT_API = "https://www.wikidata.org/w/api.php"
BATCH = 50

# Wikidata classes that fit each kind of our entities (instance of, P31): the ontology's SKOS
# mappings of the kind's classes (kinds.py)
EXPECTED_TYPES: dict[str, frozenset[str]] = {
    name: kind.wikidata_classes for name, kind in KINDS.items() if kind.wikidata_classes
}
# properties whose values may point at an organization we have already linked: the second signal
LINKING_PROPERTIES = {"person": ("P108", "P1416", "P69"), "organization": ("P749", "P361", "P127"), "paper": ()}


@dataclass
class Proposal:
    entity: str  # kind/key
    name: str
    qid: str
    label: str
    score: float
    evidence: list[str] = field(default_factory=list)
    status: str = "proposed"  # proposed | ambiguous


class WikidataClient:
    """The Action API with the etiquette Wikidata asks of bots, and a disk cache.

    HTTP-level trouble (429, 5xx, dropped connections) is retried by the shared session policy
    (`session.py`, honouring Retry-After); a `maxlag` refusal comes as HTTP 200 with an error
    body and a Retry-After header, so it is retried here, waiting at least what the header asks.
    """

    def __init__(
        self,
        api: str = DEFAULT_API,
        cache_dir: Path | None = None,
        maxlag: int = 5,
        retries: int = 4,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = 20,
    ):
        self.api, self.cache_dir, self.maxlag = api, cache_dir, maxlag
        self.retries, self.sleep = retries, sleep
        self.session = polite_session(retries, backoff=1.0, timeout=timeout)
        self.requests = 0
        self.cache = JsonCache(cache_dir)

    @classmethod
    def for_settings(cls, settings: Settings) -> WikidataClient:
        """The client the commands use: the configured API, answers cached beside the store."""
        return cls(settings.wikidata_api, cache_dir=settings.store.parent / "wikidata-cache")

    def _cache_name(self, params: dict[str, str]) -> str:
        """Keyed by the API's address too: answers of a test stand-in never serve the real API."""
        return hashlib.sha256(json.dumps([self.api, params], sort_keys=True).encode()).hexdigest() + ".json"

    def call(self, **params: str) -> Any:
        """One API call (cached); a maxlag refusal is asked again after the wait the API names."""
        params = {**params, "format": "json", "maxlag": str(self.maxlag)}
        cached = self.cache.get(self._cache_name(params))
        if cached is not None:
            return cached
        for attempt in range(self.retries + 1):
            response = self._get(params)
            payload = _payload(response, self.api, params.get("action", ""))
            error = payload.get("error")
            if error and error.get("code") == "maxlag":
                if attempt == self.retries:
                    raise WikidataError("Wikidata's servers stayed lagged (maxlag); try again later")
                self.sleep(_retry_after(response.headers.get("Retry-After"), 5.0) * 2**attempt)
                continue
            if error:
                raise WikidataError(f"Wikidata API error {error.get('code')}: {error.get('info')}")
            if not ({"search", "entities"} & payload.keys()):
                raise _not_an_answer(self.api, params.get("action", ""))
            self.cache.put(self._cache_name(params), payload)
            return payload
        raise WikidataError("unreachable")  # pragma: no cover

    def _get(self, params: dict[str, str]) -> requests.Response:
        self.requests += 1
        try:
            return self.session.get(self.api, params=params)
        except requests.RequestException as exc:
            raise WikidataError(f"cannot reach Wikidata at {self.api}: {exc.__class__.__name__}: {exc}") from None

    def search(self, name: str, language: str) -> list[dict[str, Any]]:
        payload = self.call(
            action="wbsearchentities",
            search=name,
            language=language,
            uselang=language,
            type="item",
            limit="10",
            strictlanguage="false",
        )
        return list(payload.get("search", []))

    def entities(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """wbgetentities for any number of ids, 50 per call."""
        ids = sorted(set(ids))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(ids), BATCH):
            batch = ids[start : start + BATCH]
            payload = self.call(
                action="wbgetentities",
                ids="|".join(batch),
                props="labels|aliases|claims|descriptions",
                languages="en|zh|zh-hans|zh-hant",
            )
            found.update({k: v for k, v in payload.get("entities", {}).items() if "missing" not in v})
        return found


def _retry_after(header: str | None, default: float) -> float:
    try:
        return max(0.0, float(header)) if header else default
    except ValueError:
        return default


def _not_an_answer(api: str, action: str) -> WikidataError:
    return WikidataError(
        f"{api} answered {action} with something that is not a Wikidata API answer; nothing was cached"
    )


def _payload(response: requests.Response, api: str, action: str) -> dict[str, Any]:
    """The JSON body of an answer; an HTTP error (after the session's retries) is a WikidataError."""
    if response.status_code in RETRY_STATUSES:
        raise WikidataError(f"Wikidata answered HTTP {response.status_code} after retries; try again later")
    if response.status_code != 200:
        raise WikidataError(f"Wikidata answered HTTP {response.status_code} for {action}")
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        raise _not_an_answer(api, action)
    return payload


def _names(entity: dict[str, Any]) -> set[str]:
    labels = {v["value"] for v in entity.get("labels", {}).values()}
    aliases = {a["value"] for values in entity.get("aliases", {}).values() for a in values}
    return {normalize(n) for n in labels | aliases}


def _claim_ids(entity: dict[str, Any], prop: str) -> set[str]:
    ids = set()
    for claim in entity.get("claims", {}).get(prop, []):
        value = claim.get("mainsnak", {}).get("datavalue", {}).get("value")
        if isinstance(value, dict) and "id" in value:
            ids.add(value["id"])
        elif isinstance(value, str):
            ids.add(value)
    return ids


@dataclass
class Candidate:
    kind: str
    key: str
    names: list[str]
    related_qids: set[str]  # QIDs of our linked entities this one is tied to (employers, parents)
    openreview: str | None = None


def candidates_from(dataset: Dataset, kinds: Iterable[str]) -> list[Candidate]:
    """Our entities without a Wikidata link, with their names and the links of related entities."""
    linked = {link.entity: link.qid for link in dataset.links}
    out: list[Candidate] = []
    kinds = set(kinds)
    if "organization" in kinds:
        for org in dataset.organizations:
            if f"organization/{org.key}" in linked or org.kind == "as-credited":
                continue
            related = (
                {linked[f"organization/{org.parent}"]}
                if org.parent and f"organization/{org.parent}" in linked
                else set()
            )
            out.append(Candidate("organization", org.key, org.names, related))
    if "person" in kinds:
        affiliations: dict[str, set[str]] = {}
        for source in dataset.sources:
            for facts in source.people:
                for role in facts.education + facts.positions:
                    affiliations.setdefault(normalize(facts.person), set()).add(normalize(role.organization))
        org_qids = {}
        for org in dataset.organizations:
            qid = linked.get(f"organization/{org.key}")
            if qid:
                for name in org.names:
                    org_qids[normalize(name)] = qid
        for person in dataset.people:
            if f"person/{person.key}" in linked:
                continue
            names = person.names
            related = {org_qids[o] for n in names for o in affiliations.get(normalize(n), ()) if o in org_qids}
            out.append(Candidate("person", person.key, names, related))
    if "paper" in kinds:
        seen = set()
        for source in dataset.sources:
            for paper in source.papers:
                if paper.ident in seen or f"paper/{paper.ident}" in linked:
                    continue
                seen.add(paper.ident)
                titles = [paper.title] if paper.title else []  # a withdrawn title is matched by nothing
                out.append(Candidate("paper", paper.ident, titles, set(), paper.openreview or paper.same_as))
    return out


def score(candidate: Candidate, qid: str, entity: dict[str, Any]) -> tuple[float, list[str]]:
    """Evidence for `qid` being `candidate`: name, type, and a second, independent signal."""
    evidence, points = [], 0.0
    names = {normalize(n) for n in candidate.names}
    matched = names & _names(entity)
    if matched:
        points += 0.4
        evidence.append(f"label or alias matches: {sorted(matched)[0]}")
    types = _claim_ids(entity, "P31")
    if types & EXPECTED_TYPES.get(candidate.kind, set()):
        points += 0.3
        evidence.append(
            f"instance of (P31) {sorted(types & EXPECTED_TYPES[candidate.kind])[0]} fits a {candidate.kind}"
        )
    elif types:
        points -= 0.3
        evidence.append(f"instance of (P31) {', '.join(sorted(types)[:3])} does not fit a {candidate.kind}")
    for prop in LINKING_PROPERTIES.get(candidate.kind, ()):
        shared = _claim_ids(entity, prop) & candidate.related_qids
        if shared:
            points += 0.3
            evidence.append(f"{prop} points to {sorted(shared)[0]}, an organization linked to it in our graph")
            break
    if candidate.openreview and candidate.openreview in _claim_ids(entity, "P8968"):
        points += 0.5
        evidence.append(f"OpenReview submission id (P8968) is {candidate.openreview}")
    return round(min(points, 1.0), 2), evidence


def reconcile(
    dataset: Dataset,
    client: WikidataClient,
    kinds: Iterable[str] = WIKIDATA_LINKED,
    limit: int | None = None,
    min_score: float = 0.7,
    progress: Callable[[Iterable[Candidate]], Iterable[Candidate]] = lambda x: x,
) -> list[Proposal]:
    """Proposals for unlinked entities; two candidates with the best score make it ambiguous."""
    todo = candidates_from(dataset, kinds)[: limit if limit else None]
    proposals: list[Proposal] = []
    for candidate in progress(todo):
        hits: dict[str, str] = {}
        for name in candidate.names[:3]:
            language = "zh" if any("\u3400" <= ch <= "\u9fff" for ch in name) else "en"
            for hit in client.search(name, language):
                hits.setdefault(hit["id"], hit.get("label", ""))
        if not hits:
            continue
        entities = client.entities(hits)
        scored = sorted(
            ((score(candidate, qid, entity), qid) for qid, entity in entities.items()), key=lambda x: -x[0][0]
        )
        good = [(s, qid) for s, qid in scored if s[0] >= min_score]
        if not good:
            continue
        best = good[0][0][0]
        tied = [(s, qid) for s, qid in good if s[0] == best]
        for (points, evidence), qid in tied:
            label = entities[qid].get("labels", {}).get("en", {}).get("value", hits.get(qid, ""))
            proposals.append(
                Proposal(
                    f"{candidate.kind}/{candidate.key}",
                    candidate.names[0],
                    qid,
                    label,
                    points,
                    evidence,
                    "ambiguous" if len(tied) > 1 else "proposed",
                )
            )
    return proposals


def write_proposals(proposals: list[Proposal], path: Path) -> None:
    """The review file: one block per proposal, for a curator to read (atomic write)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, yaml.safe_dump({"proposals": [asdict(p) for p in proposals]}, allow_unicode=True, sort_keys=False))


def accept(review_file: Path, links_file: Path, entities: list[str] | None = None) -> list[Proposal]:
    """Move proposals (all unambiguous ones, or the named entities) into data/wikidata.yaml."""
    if not review_file.is_file():
        raise IclrKgError(f"no review file at {review_file}: run `iclr-kg link-wikidata` first")
    proposals = [
        Proposal(**p) for p in (yaml.safe_load(review_file.read_text(encoding="utf-8")) or {}).get("proposals", [])
    ]
    chosen = [p for p in proposals if (p.entity in entities if entities else p.status == "proposed")]
    if entities:
        for entity in entities:
            matching = [p for p in chosen if p.entity == entity]
            if len(matching) != 1:
                raise IclrKgError(f"{entity}: {len(matching)} proposals in the review file; accept exactly one")
    existing = links_file.read_text(encoding="utf-8")
    linked = {link["entity"] for link in (yaml.safe_load(existing) or {}).get("links", [])}
    blocks = []
    for p in chosen:
        if p.entity in linked:
            continue
        evidence = f"reconciled against Wikidata (score {p.score:.2f}): {'; '.join(p.evidence)}"
        blocks.append(
            f"  - entity: {p.entity}\n    qid: {p.qid}\n    method: reconciled-accepted\n"
            f"    evidence: {json.dumps(evidence, ensure_ascii=False)}\n"
        )
    if blocks:
        write_text(links_file, existing.rstrip("\n") + "\n" + "".join(blocks))  # data/ is never half-written
    remaining = [p for p in proposals if p not in chosen]
    write_proposals(remaining, review_file)
    return chosen


# ------------------------------------------------------------------------------------------
# The identifiers linked items state: an import of its own

IDENTIFIERS_IMPORT = "wikidata-identifiers"  # the import's key: its folder, source and graph


def stated_identifiers(
    dataset: Dataset, client: WikidataClient, properties: dict[str, str]
) -> tuple[list[StatedIdentifier], list[str]]:
    """The external identifiers (ORCID, ROR, DOI, arXiv...) that the Wikidata item of each linked
    entity states, read with wbgetentities (the reconciler's client: batched, cached), each
    checked by its scheme (identifiers.py); and a sentence for each left out. `properties`: the
    ontology's property -> the Wikidata property it refines (`terms.Terms.wikidata`), for the
    schemes whose values we state under a property of ours (`Scheme.wikidata_property`).
    Deprecated statements, and "no value"/"some value", are skipped."""
    linked: dict[str, list[str]] = {}
    for link in dataset.links:
        linked.setdefault(link.qid, []).append(link.entity)
    items = client.entities(linked)
    found: dict[tuple[str, str, str], StatedIdentifier] = {}
    warnings = [
        f"{qid} (linked from {', '.join(linked[qid])}) is not on Wikidata" for qid in sorted(set(linked) - set(items))
    ]
    for qid in sorted(items):
        claims = items[qid].get("claims", {})
        for entity in linked[qid]:
            kind = entity.split("/", 1)[0]
            for scheme in SCHEMES.values():
                pid = scheme.wikidata_property(properties)
                if pid is None or kind not in scheme.kinds:
                    continue
                for claim in claims.get(pid, []):
                    value = claim.get("mainsnak", {}).get("datavalue", {}).get("value")
                    if claim.get("rank") == "deprecated" or not isinstance(value, str):
                        continue
                    try:
                        parsed = scheme.parse(value)
                    except BadIdentifier as exc:
                        warnings.append(f"{entity} ({qid}): {scheme.label} {pid} left out: {exc}")
                        continue
                    found.setdefault(
                        (entity, scheme.name, parsed),
                        StatedIdentifier(entity=entity, item=qid, scheme=scheme.name, value=parsed),
                    )
    return list(found.values()), warnings


def import_identifiers(
    settings: Settings, client: WikidataClient, now: Callable[[], dt.datetime] | None = None
) -> ImportResult:
    """Write the identifiers Wikidata states for data/'s linked entities as an import of their
    own (imports/wikidata-identifiers/: one source, attributed to Wikidata, with the time it was
    read), checked to build beside data/ first, like any import (importfolder.write_import)."""
    from iclr_kg import terms

    curated = load_dataset(settings.data_dir)
    identifiers, warnings = stated_identifiers(curated, client, terms.read(settings.ontology_dir / "iclr.ttl").wikidata)
    retrieved = (now or (lambda: dt.datetime.now(dt.UTC)))()
    info = SourceInfo(
        key=IDENTIFIERS_IMPORT,
        kind="import",
        title="Identifiers stated by the Wikidata items our entities are linked to",
        language="en",
        summary=(
            "For each person, organization and paper with a checked or accepted Wikidata link, the "
            "external identifiers its item states (ORCID, dblp, ROR, GRID, arXiv, DOI, Semantic Scholar, "
            "OpenReview), read through Wikidata's API."
        ),
        service=client.api,
        retrieved=retrieved,
    )
    source = Source(source=info, identifiers=sorted(identifiers, key=lambda i: (i.entity or "", i.scheme, i.value)))
    try:
        folder, changed = write_import(
            ImportFolder(source),
            settings.imports,
            curated,
            shared_entities(settings.imports),
            "iclr-kg import wikidata",
        )
    except DataError as exc:
        raise WikidataError(f"the identifiers Wikidata states do not build, nothing written: {exc}") from exc
    stats = {"linked items": len({i.item for i in identifiers}), "identifiers": len(identifiers)}
    return ImportResult(folder, changed, "wbgetentities", client.requests, stats, warnings)


# ------------------------------------------------------------------------------------------
# Exports of the links

# The prefix of each identifier scheme's IRIs, as SSSOM CURIEs (the IRIs identifiers.py makes)
SSSOM_SCHEMES = {s.name: s.iri("") for s in SCHEMES.values() if s.prop and s.linked_by == vocab.SKOS + "exactMatch"}
SSSOM_HEADER = (
    """# curie_map:
#   iclr: https://w3id.org/iclr-kg/resource/
#   wikidata: http://www.wikidata.org/entity/
#   skos: http://www.w3.org/2004/02/skos/core#
#   semapv: https://w3id.org/semapv/vocab/
"""
    + "".join(f"#   {scheme}: {prefix}\n" for scheme, prefix in SSSOM_SCHEMES.items())
    + """# mapping_set_id: https://w3id.org/iclr-kg/mappings/wikidata.sssom.tsv
# mapping_set_description: Links from iclr-kg entities to Wikidata items, and to the identifiers their OpenReview profiles and their Wikidata items state
# license: """
    + vocab.LICENSE
    + """
"""
)
SSSOM_COLUMNS = (
    "subject_id",
    "subject_label",
    "predicate_id",
    "object_id",
    "mapping_justification",
    "mapping_provider",
    "mapping_date",
    "comment",
)


def sssom_rows(dataset: Dataset) -> list[tuple[str, str, str, str, str, str, str, str]]:
    """Every mapping with where it comes from and when: the curated Wikidata links (their
    evidence), then the identifiers each import states (the profile or the Wikidata item that
    states it, the import's date)."""
    names = {f"organization/{o.key}": o.name for o in dataset.organizations}
    names.update({f"person/{p.key}": p.name for p in dataset.people})
    rows = []
    for link in sorted(dataset.links, key=lambda link: link.entity):
        justification = "semapv:ManualMappingCuration" if link.method == "checked" else "semapv:LexicalMatching"
        comment = ("checked against public evidence: " if link.method == "checked" else "") + link.evidence
        rows.append(
            (
                f"iclr:{link.entity}",
                names.get(link.entity, ""),
                "skos:exactMatch",
                f"wikidata:{link.qid}",
                justification,
                "https://w3id.org/iclr-kg/",
                "",
                " ".join(comment.split()),
            )
        )
    registry = build_registry(dataset)
    for source in dataset.sources:
        retrieved = source.source.retrieved
        for identifier in source.identifiers:
            if (
                identifier.scheme not in SSSOM_SCHEMES
                or (identifier.scheme, identifier.value) in registry.identifiers.shared
            ):
                continue  # not a mapping (a homepage), or stated for two of our entities: none until a curator settles it
            if identifier.entity is not None:  # what the entity's Wikidata item states: a chain of two mappings
                entity, justification = identifier.entity, "semapv:MappingChaining"
                provider = f"http://www.wikidata.org/entity/{identifier.item}" if identifier.item else ""
                comment = (
                    f"stated by Wikidata {identifier.item}, the item linked to {entity} (import {source.source.key})"
                )
            else:
                key = registry.find("person", identifier.profile or "")
                if key is None:
                    continue
                entity, justification = f"person/{key}", "semapv:ManualMappingCuration"  # stated by the person
                provider = f"https://openreview.net/profile?id={identifier.profile}"
                comment = f"stated by the OpenReview profile {identifier.profile} (import {source.source.key})"
            rows.append(
                (
                    f"iclr:{entity}",
                    names.get(entity, ""),
                    "skos:exactMatch",
                    f"{identifier.scheme}:{identifier.value}",
                    justification,
                    provider,
                    retrieved.date().isoformat() if retrieved else "",
                    comment,
                )
            )
    return rows


def write_sssom(dataset: Dataset, out: Any) -> None:
    """The mappings as SSSOM TSV: a row per line whatever an imported name holds, and no cell a
    spreadsheet would run (sparql/spreadsheet.py)."""
    out.write(SSSOM_HEADER)
    out.write("\t".join(SSSOM_COLUMNS) + "\n")
    for row in sssom_rows(dataset):
        out.write("\t".join(map(sssom_cell, row)) + "\n")


# Hosts of ICLR's own announcements: what Wikidata editors accept as a reference for an award.
OFFICIAL_HOSTS = ("iclr.cc", "blog.iclr.cc", "iclr-conf.medium.com")
QUICKSTATEMENTS_QUERY = """
SELECT ?paper ?award ?year ?kind ?cited ?retrieved WHERE {
  GRAPH ?g { ?conferral iclr:conferredOn ?paper ; iclr:conferredAward ?award }
  ?g iclr:statedIn ?source . ?source a ?kind .
  ?award iclr:awardedAt/iclr:year ?year .
  OPTIONAL { ?source iclr:cites ?cited }
  OPTIONAL { ?source iclr:retrievedAt ?retrieved }
}"""


def quickstatements(dataset: Dataset, store: Any) -> tuple[list[str], int]:
    """QuickStatements (V1) lines adding to Wikidata what we know and it may lack: for papers
    and awards with *checked* links, the award received (P166) with its point in time (P585).

    Each statement's reference is a URL a Wikidata editor can check (S854), with its retrieval
    date (S813) where we know it: for facts imported from OpenReview, the paper's forum page and
    the import's date; for facts from an article, the official ICLR announcement it cites (the
    article itself has no URL in our data). A statement with no such reference is left out;
    the second value counts those."""
    from iclr_kg.store import run_query

    links = {
        f"https://w3id.org/iclr-kg/resource/{link.entity}": link.qid
        for link in dataset.links
        if link.method == "checked"
    }
    references: dict[tuple[str, str, str], set[tuple[str, str | None]]] = {}
    for row in solutions(run_query(store, QUICKSTATEMENTS_QUERY)):
        paper, award = row["paper"].value, row["award"].value
        if paper not in links or award not in links:
            continue
        found = references.setdefault((paper, award, row["year"].value), set())
        retrieved = row["retrieved"].value[:10] if row["retrieved"] is not None else None
        if row["kind"].value.endswith("#DataImport"):
            found.add((f"https://openreview.net/forum?id={paper.rsplit('/', 1)[1]}", retrieved))
        elif row["cited"] is not None and urllib.parse.urlsplit(row["cited"].value).hostname in OFFICIAL_HOSTS:
            found.add((row["cited"].value, retrieved))
    lines, unreferenced = [], 0
    for (paper, award, year), found in sorted(references.items()):
        if not found:
            unreferenced += 1
            continue
        url, retrieved = sorted(found, key=lambda r: (r[1] is None, r[0]))[0]
        line = f'{links[paper]}\tP166\t{links[award]}\tP585\t+{year}-00-00T00:00:00Z/9\tS854\t"{url}"'
        if retrieved:
            line += f"\tS813\t+{retrieved}T00:00:00Z/11"
        lines.append(line)
    return lines, unreferenced
