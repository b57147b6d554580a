"""One registry of output formats: name → media type and pyoxigraph format, for CLI and web."""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import QueryResultsFormat, RdfFormat


@dataclass(frozen=True)
class Format:
    name: str
    media_type: str
    extension: str
    results: QueryResultsFormat | None = None  # for SELECT / ASK
    rdf: RdfFormat | None = None  # for CONSTRUCT / DESCRIBE and exports

    @property
    def supports_graphs(self) -> bool:
        return self.rdf in (RdfFormat.N_QUADS, RdfFormat.TRIG)


RESULT_FORMATS: dict[str, Format] = {
    f.name: f for f in (
        Format("json", "application/sparql-results+json", "srj", results=QueryResultsFormat.JSON),
        Format("xml", "application/sparql-results+xml", "srx", results=QueryResultsFormat.XML),
        Format("csv", "text/csv", "csv", results=QueryResultsFormat.CSV),
        Format("tsv", "text/tab-separated-values", "tsv", results=QueryResultsFormat.TSV),
    )
}

RDF_FORMATS: dict[str, Format] = {
    f.name: f for f in (
        Format("turtle", "text/turtle", "ttl", rdf=RdfFormat.TURTLE),
        Format("ntriples", "application/n-triples", "nt", rdf=RdfFormat.N_TRIPLES),
        Format("nquads", "application/n-quads", "nq", rdf=RdfFormat.N_QUADS),
        Format("trig", "application/trig", "trig", rdf=RdfFormat.TRIG),
        Format("jsonld", "application/ld+json", "jsonld", rdf=RdfFormat.JSON_LD),
        Format("rdfxml", "application/rdf+xml", "rdf", rdf=RdfFormat.RDF_XML),
    )
}

EXPORT_FORMATS = ("turtle", "ntriples", "nquads", "trig")
