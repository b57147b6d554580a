"""How crawlers and tools find the graph: a VoID description, sitemaps, robots.txt.

VoID (`/.well-known/void`, as the VoID spec's well-known URI) says what the dataset is, under
which licence, how big, where its endpoint and dumps are, and gives example resources. Sitemaps
list every entity page of the kinds people search for, 50,000 URLs a file (the protocol's limit),
from the generation's entity index; robots.txt points at them and keeps crawlers off the query
endpoints, where one page view can cost a query.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from flask import Blueprint, Response, request, url_for
from pyoxigraph import Literal, NamedNode, Triple

from iclr_kg import vocab
from iclr_kg.errors import NotFound
from iclr_kg.index import MAX_PAGE
from iclr_kg.kinds import LISTED
from iclr_kg.store import built_on
from iclr_kg.web.http import requested_format
from iclr_kg.web.querying import generation_counts
from iclr_kg.web.resources.serialized import rdf_response
from iclr_kg.web.state import state

blueprint = Blueprint("discovery", __name__)

SITEMAP_SIZE = 50_000
VOID = vocab.PREFIXES["void"]
EXAMPLES = ("paper/NzTU59SYbNq", "person/ian-gemp", "organization/deepmind", "edition/iclr2021")


def _void(name: str) -> NamedNode:
    return NamedNode(VOID + name)


@blueprint.route("/.well-known/void")
def void() -> Response:
    """The dataset described in VoID (Turtle unless another RDF format is asked for)."""
    store = state().store()
    dataset = NamedNode(url_for("discovery.void", _external=True) + "#dataset")
    dcterms = vocab.DCTERMS
    triples_count = generation_counts().default
    generation = state().generation
    built = built_on(generation)
    facts: list[tuple[NamedNode, NamedNode | Literal]] = [
        (vocab.RDF_TYPE, _void("Dataset")),
        (
            NamedNode(dcterms + "title"),
            Literal("iclr-kg: ICLR papers, people, organizations and awards", language="en"),
        ),
        (
            NamedNode(dcterms + "description"),
            Literal(
                "A knowledge graph of ICLR papers, authors, organizations and awards, built from curated "
                "source articles and OpenReview imports, with OWL RL inferences.",
                language="en",
            ),
        ),
        (NamedNode(dcterms + "license"), NamedNode(vocab.LICENSE)),
        (_void("sparqlEndpoint"), NamedNode(url_for("sparql.sparql", _external=True))),
        (_void("dataDump"), NamedNode(url_for("resources.data", format="nquads", _external=True))),
        (_void("uriSpace"), Literal(vocab.RESOURCE_BASE)),
        (_void("vocabulary"), NamedNode(vocab.ONTOLOGY_NS)),
        (_void("triples"), Literal(str(triples_count), datatype=vocab.XSD_INTEGER)),
    ]
    if built:
        facts.append((NamedNode(dcterms + "modified"), Literal(built, datatype=NamedNode(vocab.XSD + "date"))))
    for example in EXAMPLES:
        iri = NamedNode(vocab.RESOURCE_BASE + example)
        if any(True for _ in store.quads_for_pattern(iri, None, None, None)):
            facts.append((_void("exampleResource"), iri))
    for graph in sorted(g.value for g in store.named_graphs() if isinstance(g, NamedNode)):
        facts.append((_void("subset"), NamedNode(graph)))
    triples = [Triple(dataset, p, o) for p, o in facts]
    return rdf_response(lambda: triples, fixed=requested_format() or _rdf_or_turtle(), compacted=True)


def _rdf_or_turtle() -> str | None:
    """The asked RDF format, or Turtle for a browser (a description is data, not a page)."""
    best = request.accept_mimetypes.best_match(["text/turtle", "application/ld+json", "application/n-triples"])
    return None if best and request.accept_mimetypes[best] >= request.accept_mimetypes["text/html"] else "turtle"


@blueprint.route("/robots.txt")
def robots() -> Response:
    lines = [
        "User-agent: *",
        "Disallow: /sparql",
        "Disallow: /update",
        "Disallow: /search",
        "Disallow: /data",
        f"Sitemap: {url_for('discovery.sitemap', _external=True)}",
    ]
    return Response("\n".join(lines) + "\n", mimetype="text/plain")


@blueprint.route("/sitemap.xml")
def sitemap() -> Response:
    """A sitemap index: one sitemap per kind and 50,000 entities."""
    index = state().index()
    parts = []
    for kind in LISTED:
        total = index.browse(kind, limit=1)[1] if index else 0
        for page in range(1, -(-total // SITEMAP_SIZE) + 1):
            parts.append(url_for("discovery.sitemap_part", kind=kind, page=page, _external=True))
    parts.append(url_for("discovery.sitemap_pages", _external=True))
    body = "".join(f"<sitemap><loc>{escape(p)}</loc></sitemap>" for p in parts)
    return _xml(f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</sitemapindex>')


@blueprint.route("/sitemap-pages.xml")
def sitemap_pages() -> Response:
    urls = [
        url_for(e, _external=True)
        for e in ("pages.home", "pages.index", "pages.queries", "pages.stats", "resources.ontology")
    ]
    urls += [url_for("pages.saved_query", name=n, _external=True) for n in state().saved]
    urls += [url_for("resources.browse", kind=k, _external=True) for k in LISTED]
    return _urlset(urls)


@blueprint.route("/sitemap-<kind>-<int:page>.xml")
def sitemap_part(kind: str, page: int) -> Response:
    index = state().index()
    if kind not in LISTED or not 1 <= page <= MAX_PAGE or index is None:
        raise NotFound(f"no sitemap of {kind} entities numbered {page}")
    hits, _ = index.browse(kind, "name", SITEMAP_SIZE, (page - 1) * SITEMAP_SIZE)
    root = request.host_url.rstrip("/")
    return _urlset([f"{root}/resource/{h.kind}/{h.key}" for h in hits])


def _urlset(urls: list[str]) -> Response:
    body = "".join(f"<url><loc>{escape(u)}</loc></url>" for u in urls)
    return _xml(f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>')


def _xml(body: str) -> Response:
    return Response('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n", mimetype="application/xml")
