"""The kinds of entity, one registry read from the ontology (as Bioregistry derives everything
from its data): each root class of entities carries `iclr:kind` (the segment of its entities'
IRIs, /resource/<kind>/<key>, and their export prefix) and, where its entities are listed,
searched and counted, `iclr:listOrder`; its pages' schema.org type is its `schema:` superclass.

Every list of kinds in the code is read from here: the IRI prefixes (vocab), the kinds searched
and listed (index, pages, sitemaps), the list a class's entities belong to, the JSON-LD types.
A new kind is one annotated class in `ontology/iclr.ttl`; tests iterate `KINDS`, so it is tested
the day it is added (tests/test_kinds.py).

This module reads the packaged ontology file once, at import, with nothing of ours imported
(vocab imports it); its namespace is the ontology's own `vann:preferredNamespaceUri`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import NewType

from pyoxigraph import Literal, NamedNode, RdfFormat, parse

_PACKAGE = Path(__file__).resolve().parent
_ONTOLOGY = next(
    path / "iclr.ttl"
    for path in (_PACKAGE / "_resources" / "ontology", _PACKAGE.parent.parent / "ontology")
    if (path / "iclr.ttl").is_file()
)  # fmt: skip  (config.resource_dir's two places: inside a wheel, or the checkout's top level)
_NAMESPACE = "http://purl.org/vocab/vann/preferredNamespaceUri"
_SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
_SCHEMA = "http://schema.org/"
_STATEMENT = "http://www.w3.org/1999/02/22-rdf-syntax-ns#Statement"
_WIKIDATA = "http://www.wikidata.org/entity/"
# SKOS mappings that say a Wikidata class fits a class of ours: as it is, or narrower
_MATCHES = ("http://www.w3.org/2004/02/skos/core#closeMatch", "http://www.w3.org/2004/02/skos/core#narrowMatch")
# A kind of entity: the segment of its IRIs, /resource/<kind>/<key> ("paper", "person"...), as
# checked against the ontology (`entity_kind`); a word that may be one is a plain str
EntityKind = NewType("EntityKind", str)
LINK = EntityKind("link")  # Wikidata links, reified (rdf:Statement: no class of ours), have IRIs of their own


@dataclass(frozen=True)
class Kind:
    name: EntityKind  # the IRI segment and export prefix: "paper"
    root: str  # the root class's local name: "Paper"
    order: int  # its place among the listed kinds; 0: not listed (conferrals, authorships...)
    schema_type: str  # its pages' schema.org type: "ScholarlyArticle" ("Thing" if none)
    # Wikidata classes whose instances (P31) may be one of its entities: what the root class and
    # its subclasses map to (`skos:closeMatch`, `skos:narrowMatch`); link-wikidata's evidence
    wikidata_classes: frozenset[str] = frozenset()
    # its entities are statements about another triple (its root is an rdfs:subClassOf
    # rdf:Statement: a value's place in a list), not things a source speaks of
    reified: bool = False

    @property
    def listed(self) -> bool:
        """Its entities have a list, are searched by name, counted on the front page, in sitemaps."""
        return self.order > 0


def _read(path: Path) -> dict[EntityKind, Kind]:
    with path.open("rb") as f:
        triples = list(parse(f, RdfFormat.TURTLE))
    namespace = next(str(t.object.value) for t in triples if t.predicate.value == _NAMESPACE)
    said: dict[str, dict[str, list[object]]] = defaultdict(lambda: defaultdict(list))
    for t in triples:
        if isinstance(t.subject, NamedNode) and t.subject.value.startswith(namespace):
            said[t.subject.value[len(namespace) :]][t.predicate.value].append(t.object)
    parents = {
        cls: {
            v.value[len(namespace) :]
            for v in values.get(_SUBCLASS, [])
            if isinstance(v, NamedNode) and v.value.startswith(namespace)
        }
        for cls, values in said.items()
    }
    kinds = {}
    for root, values in said.items():
        named = [v.value for v in values.get(namespace + "kind", []) if isinstance(v, Literal)]
        if not named:
            continue
        order = [int(v.value) for v in values.get(namespace + "listOrder", []) if isinstance(v, Literal)]
        types = [
            v.value[len(_SCHEMA) :]
            for v in values.get(_SUBCLASS, [])
            if isinstance(v, NamedNode) and v.value.startswith(_SCHEMA)
        ]
        matched = frozenset(
            v.value[len(_WIKIDATA) :]
            for cls in classes_below(root, parents)
            for match in _MATCHES
            for v in said[cls].get(match, [])
            if isinstance(v, NamedNode) and v.value.startswith(_WIKIDATA)
        )
        name = EntityKind(named[0])
        reified = any(v.value == _STATEMENT for v in values.get(_SUBCLASS, []) if isinstance(v, NamedNode))
        kinds[name] = Kind(name, root, order[0] if order else 0, types[0] if types else "Thing", matched, reified)
    return dict(sorted(kinds.items(), key=lambda item: (not item[1].listed, item[1].order, item[0])))


def classes_below(root: str, parents: dict[str, set[str]]) -> set[str]:
    """`root` and every class under it, however deep, where `parents` maps each class to its
    direct superclasses (local names): the one walk down rdfs:subClassOf (terms.Terms.below)."""
    found = {root}
    grew = True
    while grew:
        more = {c for c, above in parents.items() if above & found} - found
        found |= more
        grew = bool(more)
    return found


KINDS: dict[EntityKind, Kind] = _read(_ONTOLOGY)
# every segment of our entities' IRIs: the kinds, and the reified links
ENTITY_KINDS: tuple[EntityKind, ...] = (*KINDS, LINK)
# the kinds whose entities are statements about other triples (reified: a value's place, a
# Wikidata link): the graph's bookkeeping, not counted among what a source states
REIFIED: frozenset[EntityKind] = frozenset({LINK, *(name for name, kind in KINDS.items() if kind.reified)})
# the kinds with a list, searched by name and counted, in their lists' order
LISTED: tuple[EntityKind, ...] = tuple(name for name, kind in KINDS.items() if kind.listed)
# The kinds link-wikidata reconciles and /id/wikidata/ resolves (two registries and the papers);
# each has Wikidata classes its items must be instances of (`Kind.wikidata_classes`,
# external/wikidata.EXPECTED_TYPES), as tests/web/test_kinds.py checks
WIKIDATA_LINKED: tuple[EntityKind, ...] = tuple(EntityKind(name) for name in ("organization", "person", "paper"))
ROOTS: dict[str, EntityKind] = {kind.root: name for name, kind in KINDS.items()}  # root class -> kind


def entity_kind(segment: str) -> EntityKind | None:
    """`segment` (of a URL, an argument) as a kind of entity, if it is one."""
    return next((kind for kind in ENTITY_KINDS if kind == segment), None)
