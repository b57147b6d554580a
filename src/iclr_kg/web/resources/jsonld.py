"""JSON-LD: a description compacted with our prefixes, and a page's schema.org JSON-LD made
safe to embed in a <script> element."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from typing import Any

from pyoxigraph import DefaultGraph, NamedNode, RdfFormat, serialize

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
    same graph, streamed."""
    from pyld import jsonld  # here: only a JSON-LD description needs it

    items = iter(triples)
    head = list(itertools.islice(items, COMPACTED_UP_TO + 1))
    if len(head) > COMPACTED_UP_TO:
        serialize(itertools.chain(head, items), out, RdfFormat.JSON_LD)
        return
    expanded = json.loads(serialize(head, format=RdfFormat.JSON_LD) or b"[]")
    out.write(json.dumps(jsonld.compact(expanded, JSONLD_CONTEXT), ensure_ascii=False).encode())


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
