"""JSON-LD of any number of triples, streamed and compacted with our prefixes as its `@context`
(`iclr:title`, `paper:NzTU59SYbNq`), where pyoxigraph writes expanded JSON-LD, full IRIs and no
context, and PyLD's compaction holds the whole document in memory (a description only)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from iclr_kg import vocab

XSD_STRING = vocab.XSD + "string"


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
        datatype = term.datatype.value
        return {"@value": term.value} if datatype == XSD_STRING else {"@value": term.value, "@type": compact(datatype)}
    return {"@id": _id(term, compact)}
