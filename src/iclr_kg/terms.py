"""The ontology's terms as the code uses them: the enumerations (decisions, presentation types,
kinds of organization and award) with the values data files write, the class tree, and every
term's label in English and Chinese.

The ontology (`ontology/iclr.ttl`) is the one source of these: a data file's `decision: workshop`
is the `skos:notation` of `iclr:MovedToWorkshop`, a page's "转入研讨会" its `rdfs:label`@zh, and the
list a class's entities belong to follows its `rdfs:subClassOf`. Read once per ontology file
(a few milliseconds); every generation's ontology graph is loaded from the same file.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, parse

from iclr_kg import vocab
from iclr_kg.config import resource_dir
from iclr_kg.kinds import classes_below

_NOTATION = vocab.SKOS + "notation"
_LABEL = vocab.RDFS + "label"
_TYPE = vocab.RDF + "type"
_SUBCLASS = vocab.RDFS + "subClassOf"
_SUBPROPERTY = vocab.RDFS + "subPropertyOf"
_WDT = vocab.PREFIXES["wdt"]
_XSD = vocab.PREFIXES["xsd"]
_DOMAIN, _RANGE = vocab.RDFS + "domain", vocab.RDFS + "range"
_DISJOINT_WITH, _MEMBERS = vocab.OWL + "disjointWith", vocab.OWL + "members"
_FIRST, _REST = vocab.RDF + "first", vocab.RDF + "rest"


@dataclass(frozen=True)
class Terms:
    """What the ontology says of its own terms (keys: local names, `Accepted`)."""

    labels: dict[str, dict[str, str]] = field(default_factory=dict)  # local -> {language: label}
    notations: dict[str, str] = field(default_factory=dict)  # local -> the value data files write
    types: dict[str, set[str]] = field(default_factory=dict)  # individual -> its classes
    parents: dict[str, set[str]] = field(default_factory=dict)  # class -> its direct superclasses
    names: frozenset[str] = frozenset()  # every term the ontology describes (what a query may name)
    wikidata: dict[str, str] = field(default_factory=dict)  # property -> the Wikidata property it refines (P496)
    domains: dict[str, set[str]] = field(default_factory=dict)  # property -> the classes it is stated of
    ranges: dict[str, set[str]] = field(default_factory=dict)  # object property -> the classes of its values
    disjoint: frozenset[frozenset[str]] = frozenset()  # pairs of classes no entity is both of
    datatypes: dict[str, str] = field(default_factory=dict)  # datatype property -> its range's XSD local name

    def above(self, cls: str) -> set[str]:
        """`cls` and every class over it, however high."""
        found, todo = {cls}, [cls]
        while todo:
            for parent in self.parents.get(todo.pop(), ()):
                if parent not in found:
                    found.add(parent)
                    todo.append(parent)
        return found

    def never_both(self, one: str, other: str) -> bool:
        """Whether no entity can be of both classes: they, or classes over them, are disjoint."""
        return any(frozenset((a, b)) in self.disjoint for a in self.above(one) for b in self.above(other))

    def label(self, local: str, lang: str = "en") -> str:
        """The term's label in `lang`, else in English, else its local name."""
        labels = self.labels.get(local, {})
        return labels.get(lang) or labels.get("en") or local

    def below(self, root: str) -> set[str]:
        """`root` and every class under it, however deep."""
        return classes_below(root, self.parents)

    def enumeration(self, cls: str) -> dict[str, str]:
        """The individuals of an enumeration class by notation: {"workshop": "MovedToWorkshop"}."""
        return {self.notations[i]: i for i, classes in self.types.items() if cls in classes and i in self.notations}

    def kinds_below(self, root: str) -> dict[str, str]:
        """The classes under `root` (itself included) that data files name by notation:
        {"university": "University", "unclassified": "Organization", ...}."""
        return {self.notations[c]: c for c in self.below(root) if c in self.notations}

    def readable(self, text: str, lang: str = "en") -> str:
        """`text` with each `iclr:Term` in it replaced by the term's label in `lang`."""
        return _CURIE.sub(lambda m: self.label(m[1], lang), text)

    @functools.cached_property
    def _by_english(self) -> dict[str, dict[str, str]]:
        """Each English label (lower case) with the term's labels, where one term alone has it."""
        found: dict[str, list[dict[str, str]]] = {}
        for labels in self.labels.values():
            if "en" in labels:
                found.setdefault(labels["en"].lower(), []).append(labels)
        return {english: same[0] for english, same in found.items() if len({s.get("zh") for s in same}) == 1}

    def word(self, english: str, lang: str) -> str | None:
        """A page's word in `lang` where it names one of our terms by its English label: "Decision",
        "decisions" and "decision" are iclr:decision's label ("评审决定"). A plural names its term
        too (Chinese has none). None where no term is labelled so."""
        lowered = english.lower()
        for candidate in (lowered, lowered[:-1] if lowered.endswith("s") else None):
            labels = self._by_english.get(candidate) if candidate else None
            if labels is not None and lang in labels:
                return labels[lang]
        return None


_CURIE = re.compile(r"\biclr:(\w+)")


def read(path: Path) -> Terms:
    """The terms of the ontology file at `path`, cached while the file is unchanged."""
    return _read(path, path.stat().st_mtime_ns)


@functools.cache
def _read(path: Path, _mtime: int) -> Terms:
    labels: dict[str, dict[str, str]] = defaultdict(dict)
    notations: dict[str, str] = {}
    types: dict[str, set[str]] = defaultdict(set)
    parents: dict[str, set[str]] = defaultdict(set)
    names: set[str] = set()
    wikidata: dict[str, str] = {}
    domains: dict[str, set[str]] = defaultdict(set)
    ranges: dict[str, set[str]] = defaultdict(set)
    disjoint: set[frozenset[str]] = set()
    datatypes: dict[str, str] = {}
    nodes: dict[str, dict[str, object]] = defaultdict(dict)  # a blank node's values (lists, AllDisjointClasses)
    with path.open("rb") as f:
        for triple in parse(f, RdfFormat.TURTLE):
            subject, predicate, value = triple.subject, triple.predicate.value, triple.object
            if isinstance(subject, BlankNode):
                nodes[subject.value][predicate] = value
                continue
            if not (isinstance(subject, NamedNode) and subject.value.startswith(vocab.ONTOLOGY_NS)):
                continue
            local = subject.value[len(vocab.ONTOLOGY_NS) :]
            names.add(local)
            if predicate == _LABEL and isinstance(value, Literal):
                labels[local][(value.language or "en").split("-")[0]] = value.value
            elif predicate == _NOTATION and isinstance(value, Literal):
                notations[local] = value.value
            elif predicate == _RANGE and isinstance(value, NamedNode) and value.value.startswith(_XSD):
                datatypes[local] = value.value[len(_XSD) :]
            elif predicate == _SUBPROPERTY and isinstance(value, NamedNode) and value.value.startswith(_WDT):
                wikidata[local] = value.value[len(_WDT) :]
            elif isinstance(value, NamedNode) and value.value.startswith(vocab.ONTOLOGY_NS):
                if predicate == _TYPE:
                    types[local].add(value.value[len(vocab.ONTOLOGY_NS) :])
                elif predicate == _SUBCLASS:
                    parents[local].add(value.value[len(vocab.ONTOLOGY_NS) :])
                elif predicate == _DOMAIN:
                    domains[local].add(value.value[len(vocab.ONTOLOGY_NS) :])
                elif predicate == _RANGE:
                    ranges[local].add(value.value[len(vocab.ONTOLOGY_NS) :])
                elif predicate == _DISJOINT_WITH:
                    disjoint.add(frozenset((local, value.value[len(vocab.ONTOLOGY_NS) :])))
    for node in nodes.values():  # [ a owl:AllDisjointClasses ; owl:members ( ... ) ]: every pair
        members = _listed(nodes, node.get(_MEMBERS))
        disjoint |= {frozenset((a, b)) for a in members for b in members if a != b}
    return Terms(
        dict(labels), notations, dict(types), dict(parents), frozenset(names), wikidata,
        dict(domains), dict(ranges), frozenset(disjoint), datatypes,
    )  # fmt: skip


def _listed(nodes: dict[str, dict[str, object]], head: object) -> list[str]:
    """The local names of our terms in the RDF list starting at `head` (blank nodes of `nodes`)."""
    found = []
    while isinstance(head, BlankNode) and head.value in nodes:
        first = nodes[head.value].get(_FIRST)
        if isinstance(first, NamedNode) and first.value.startswith(vocab.ONTOLOGY_NS):
            found.append(first.value[len(vocab.ONTOLOGY_NS) :])
        head = nodes[head.value].get(_REST)
    return found


def packaged() -> Terms:
    """The terms of the ontology this installation ships (`ontology/iclr.ttl`)."""
    return read(resource_dir("ontology") / "iclr.ttl")
