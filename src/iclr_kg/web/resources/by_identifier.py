"""/id/<scheme>/<value>: our entity known elsewhere by an identifier (ORCID, dblp, Wikidata...)."""

from __future__ import annotations

from flask import redirect, request, url_for
from flask.typing import ResponseReturnValue
from pyoxigraph import Literal, NamedNode

from iclr_kg import vocab
from iclr_kg.errors import NotFound
from iclr_kg.graph import ReadableGraph
from iclr_kg.identifiers import ROUTES, SCHEMES, parse_for, schemes_for
from iclr_kg.index import kind_and_key
from iclr_kg.web.state import state


def by_identifier(scheme: str, value: str) -> ResponseReturnValue:
    """303 to our entity known elsewhere by `value` (an ORCID iD, a dblp pid or publication key, a
    Wikidata item..., bare or as its URL); 404 with a search where none is; 400 for what is not
    such an identifier."""
    schemes = schemes_for(scheme)
    if not schemes:
        raise NotFound(f"no identifier scheme {scheme!r}; known: {', '.join(ROUTES)}")
    written = value + (f"?{request.query_string.decode()}" if request.query_string else "")
    known, parsed = parse_for(schemes, written)  # or a 400 saying why
    entity = find_by_identifier(state().store(), known.name, parsed)
    if entity is None:
        wording, values = (
            "No entity here is known by the {scheme} identifier {value}.",
            {"scheme": known.label, "value": parsed},
        )
        raise NotFound(wording.format(**values), near=parsed, wording=wording, values=values)
    kind, key = kind_and_key(entity) or ("", "")
    return redirect(url_for("resources.resource", kind=kind, key=key), code=303)


def find_by_identifier(store: ReadableGraph, scheme: str, value: str) -> str | None:
    """The IRI of our entity that has `value` under the scheme's property (one index lookup)."""
    known = SCHEMES[scheme]
    if not known.prop:  # Wikidata: the item's IRI, linked with skos:exactMatch
        matches = store.quads_for_pattern(None, vocab.SKOS_EXACT_MATCH, NamedNode(known.iri(value)), None)
    else:
        matches = store.quads_for_pattern(None, known.predicate, Literal(value), None)
    found = sorted({q.subject.value for q in matches if isinstance(q.subject, NamedNode)})
    return found[0] if found else None
