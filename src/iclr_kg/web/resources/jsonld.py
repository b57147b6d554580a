"""JSON-LD: a description compacted with our prefixes (PyLD); any number of triples streamed
and compacted with the same `@context` (`iclr:title`, `paper:NzTU59SYbNq`: where pyoxigraph
writes expanded JSON-LD, full IRIs and no context, and PyLD holds the whole document in memory);
and a page's schema.org JSON-LD made safe to embed in a <script> element."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from typing import IO, Any

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, RdfFormat, Triple, serialize

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph, value
from iclr_kg.index import Index
from iclr_kg.kinds import KINDS, EntityKind
from iclr_kg.web.kinds import PAGES
from iclr_kg.web.kinds.panels import values_of
from iclr_kg.web.state import state

# Triples up to which JSON-LD is compacted: PyLD takes about 0.4 s for 5,000 (a description of
# a paper is about 70); a prolific author's tens of thousands go out expanded, as they stream.
COMPACTED_UP_TO = 5_000


JSONLD_CONTEXT = {"@context": dict(vocab.QUERY_PREFIXES)}


def compact_jsonld(triples: Iterable[Any], out: Any) -> None:
    """JSON-LD of `triples` compacted by the JSON-LD 1.1 algorithm (PyLD, the reference
    implementation in Python) with our prefixes as `@context`: `iclr:title` and `paper:...`
    where pyoxigraph writes full IRIs. More than COMPACTED_UP_TO triples: expanded JSON-LD, the
    same graph, streamed with the same @context (`write_jsonld`)."""
    from pyld import jsonld  # here: only a JSON-LD description needs it

    items = iter(triples)
    head = list(itertools.islice(items, COMPACTED_UP_TO + 1))
    if len(head) > COMPACTED_UP_TO:
        write_jsonld(itertools.chain(head, items), out)
        return
    expanded = json.loads(serialize(head, format=RdfFormat.JSON_LD) or b"[]")
    out.write(json.dumps(jsonld.compact(expanded, JSONLD_CONTEXT), ensure_ascii=False).encode())


class Compactor:
    """IRIs as compact IRIs (prefix:local) under the longest namespace of `prefixes` that ends
    where the IRI's last / or # does; any other IRI stays whole."""

    def __init__(self, prefixes: dict[str, str]):
        self.namespaces = {namespace: prefix for prefix, namespace in prefixes.items()}
        self.known: dict[str, str] = {}

    def __call__(self, iri: str) -> str:
        found = self.known.get(iri)
        if found is None:
            found = iri
            cut = max(iri.rfind("/"), iri.rfind("#")) + 1
            prefix = self.namespaces.get(iri[:cut])
            if prefix is not None and not iri[cut:].startswith("//"):  # //x would read as an IRI
                found = f"{prefix}:{iri[cut:]}"
            if len(self.known) < 200_000:
                self.known[iri] = found
        return found


def write_jsonld(triples: Iterable[Triple], out: IO[bytes], prefixes: dict[str, str] = vocab.EXPORT_PREFIXES) -> None:
    """`{"@context": {prefixes}, "@graph": [node, ...]}`: a node object per run of triples of one
    subject (a store's triples come grouped by subject; a subject met again is another node
    object with the same @id, which JSON-LD merges), written as each run ends."""
    compact = Compactor(prefixes)
    out.write(b'{"@context":' + json.dumps(prefixes).encode() + b',"@graph":[')
    subject: str | None = None
    node: dict[str, list[object]] = {}
    first = True
    for triple in triples:
        this = _id(triple.subject, compact)
        if this != subject:
            if subject is not None:
                out.write((b"" if first else b",\n") + _node(subject, node))
                first = False
            subject, node = this, {}
        node.setdefault(compact(triple.predicate.value), []).append(_value(triple.object, compact))
    if subject is not None:
        out.write((b"" if first else b",\n") + _node(subject, node))
    out.write(b"]}\n")


def _node(subject: str, properties: dict[str, list[object]]) -> bytes:
    return json.dumps({"@id": subject, **properties}, ensure_ascii=False).encode()


def _id(term: object, compact: Compactor) -> str:
    if isinstance(term, NamedNode):
        return compact(term.value)
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    raise TypeError(f"JSON-LD 1.1 has no subject like {term!r}")  # a quoted triple (RDF-star)


def _value(term: object, compact: Compactor) -> dict[str, str]:
    if isinstance(term, Literal):
        if term.language:
            return {"@value": term.value, "@language": term.language}
        if term.datatype == vocab.XSD_STRING:
            return {"@value": term.value}
        return {"@value": term.value, "@type": compact(term.datatype.value)}
    return {"@id": _id(term, compact)}


# What JSON inside a <script> element must not hold as itself: `</script>` ends the element, and
# `<!--` followed by `<script` turns the rest of the page into script text (HTML's "script data
# double escaped" state). JSON reads the escapes as the same characters.
SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def jsonld(store: ReadableGraph, iri: NamedNode, kind: EntityKind) -> str:
    """schema.org JSON-LD of a paper or person (crawlers and citation tools read it from the page),
    safe to embed in a <script> element whatever the names hold (`SCRIPT_SAFE`)."""
    return json.dumps(schema_org(store, iri, kind, state().index()), ensure_ascii=False).translate(SCRIPT_SAFE)


def schema_org(store: ReadableGraph, iri: NamedNode, kind: EntityKind, index: Index | None) -> dict[str, Any]:
    """The entity as schema.org JSON-LD: type, name, the same item elsewhere, and what its kind
    adds (kinds.kindpage.KindPage.schema_org: a paper's authors, a person's affiliations)."""
    hit = index.entity(iri.value) if index else None
    data: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": KINDS[kind].schema_type if kind in KINDS else "Thing",
        "@id": iri.value,
        "url": iri.value,
        "name": hit.label if hit else iri.value.rsplit("/", 1)[-1],
    }
    same = [value(q.object) for q in store.quads_for_pattern(iri, vocab.SKOS_EXACT_MATCH, None, DefaultGraph())]
    same += [v.value for v in values_of(store, iri, "openReviewUrl") + values_of(store, iri, "openReviewProfilePage")]
    if same:
        data["sameAs"] = same
    adds = PAGES[kind].schema_org
    return data | adds(store, iri, index, hit) if adds else data
