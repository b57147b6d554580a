"""One registry of output formats: name → media type and pyoxigraph format, for CLI and web."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyoxigraph import QueryResultsFormat, RdfFormat

from iclr_kg.errors import NotAcceptable, UnknownFormat

if TYPE_CHECKING:  # werkzeug is imported where Accept headers are read, not in query workers
    from werkzeug.datastructures import MIMEAccept


@dataclass(frozen=True)
class Format:
    name: str
    media_type: str
    results: QueryResultsFormat | None = None  # for SELECT / ASK
    rdf: RdfFormat | None = None  # for CONSTRUCT / DESCRIBE and exports

    @property
    def prefixes(self) -> dict[str, str] | None:
        """Prefixes to declare: ours, except in line formats that have no prefix syntax."""
        from iclr_kg.vocab import EXPORT_PREFIXES

        return None if self.name in ("ntriples", "nquads") else EXPORT_PREFIXES

    @property
    def file_extension(self) -> str:
        """The extension a downloaded file gets (srj, csv, ttl, ...), as pyoxigraph names them."""
        return (self.results or self.rdf).file_extension  # type: ignore[union-attr]

    @property
    def supports_graphs(self) -> bool:
        return self.rdf in (RdfFormat.N_QUADS, RdfFormat.TRIG)


RESULT_FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("json", "application/sparql-results+json", results=QueryResultsFormat.JSON),
        Format("xml", "application/sparql-results+xml", results=QueryResultsFormat.XML),
        Format("csv", "text/csv", results=QueryResultsFormat.CSV),
        Format("tsv", "text/tab-separated-values", results=QueryResultsFormat.TSV),
    )
}

RDF_FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("turtle", "text/turtle", rdf=RdfFormat.TURTLE),
        Format("ntriples", "application/n-triples", rdf=RdfFormat.N_TRIPLES),
        Format("nquads", "application/n-quads", rdf=RdfFormat.N_QUADS),
        Format("trig", "application/trig", rdf=RdfFormat.TRIG),
        Format("jsonld", "application/ld+json", rdf=RdfFormat.JSON_LD),
        Format("rdfxml", "application/rdf+xml", rdf=RdfFormat.RDF_XML),
    )
}

EXPORT_FORMATS = ("turtle", "ntriples", "nquads", "trig", "jsonld", "rdfxml")

# What clients send in `format=`, `output=` or `results=` (SPARQLWrapper, YASGUI, browsers),
# mapped to our format names. `xml` means SPARQL XML for SELECT/ASK and RDF/XML for graphs.
RESULT_ALIASES = {
    "json": "json",
    "srj": "json",
    "application/sparql-results+json": "json",
    "application/json": "json",
    "xml": "xml",
    "srx": "xml",
    "application/sparql-results+xml": "xml",
    "csv": "csv",
    "text/csv": "csv",
    "tsv": "tsv",
    "text/tab-separated-values": "tsv",
}
RDF_ALIASES = {
    "turtle": "turtle",
    "ttl": "turtle",
    "n3": "turtle",
    "text/turtle": "turtle",
    "text/n3": "turtle",
    "ntriples": "ntriples",
    "nt": "ntriples",
    "n-triples": "ntriples",
    "application/n-triples": "ntriples",
    "nquads": "nquads",
    "nq": "nquads",
    "n-quads": "nquads",
    "application/n-quads": "nquads",
    "trig": "trig",
    "application/trig": "trig",
    "jsonld": "jsonld",
    "json-ld": "jsonld",
    "application/ld+json": "jsonld",
    "json": "jsonld",
    "rdfxml": "rdfxml",
    "rdf+xml": "rdfxml",
    "xml": "rdfxml",
    "rdf": "rdfxml",
    "application/rdf+xml": "rdfxml",
}


def _without_parameters(accept: object) -> MIMEAccept:
    """The Accept header with media type parameters dropped (`text/turtle; charset=utf-8` is
    text/turtle, which we send in UTF-8); Werkzeug would match no offer without the parameter."""
    from werkzeug.datastructures import MIMEAccept

    return MIMEAccept([(value.split(";", 1)[0].strip(), quality) for value, quality in accept])  # type: ignore[attr-defined]


def choose(kind: str, requested: str | None, accept: object | None) -> Format:
    """Pick the output format for `kind` ("results" or "rdf").

    An explicit `requested` value (format=, output=, results=) wins over the Accept header; an
    unknown value or an Accept header nothing satisfies raises NotAcceptable.
    """
    formats, aliases = (RESULT_FORMATS, RESULT_ALIASES) if kind == "results" else (RDF_FORMATS, RDF_ALIASES)
    if requested:
        name = aliases.get(requested.strip().lower())
        if name is None:
            raise UnknownFormat(f"unknown format {requested!r} for {kind}; use one of {', '.join(formats)}")
        return formats[name]
    if not accept:  # no Accept header: the first (default) format
        return next(iter(formats.values()))
    by_type = {f.media_type: f for f in formats.values()}
    if kind == "results":
        by_type.setdefault("application/json", formats["json"])
    best = _without_parameters(accept).best_match(list(by_type))
    if best is None:
        offered = ", ".join(by_type)
        raise NotAcceptable(f"none of the accepted media types can be produced; offered: {offered}")
    return by_type[best]
