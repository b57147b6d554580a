"""Rendering RDF terms and query results for the HTML pages (escaping is Jinja's)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from flask import url_for
from pyoxigraph import BlankNode, Literal, NamedNode

from iclr_kg import vocab

HTML_ROW_LIMIT = 1000


@dataclass
class Cell:
    text: str
    href: str | None = None
    note: str = ""  # language tag or datatype
    external: bool = False


def local_path(iri: str) -> str | None:
    """The path of our own page for an IRI of ours (resource or ontology term), else None."""
    if iri.startswith(vocab.RESOURCE_BASE):
        return "/resource/" + iri[len(vocab.RESOURCE_BASE) :]
    if iri.startswith(vocab.ONTOLOGY_NS):
        return url_for("resources.ontology") + "#" + iri[len(vocab.ONTOLOGY_NS) :]
    return None


def short(iri: str) -> str:
    """prefix:local for IRIs under a known prefix, else the IRI."""
    best = ""
    for prefix, namespace in vocab.EXPORT_PREFIXES.items():
        if iri.startswith(namespace) and len(namespace) > len(vocab.EXPORT_PREFIXES.get(best, "")):
            best = prefix
    if best:
        return f"{best}:{iri[len(vocab.EXPORT_PREFIXES[best]) :]}"
    return iri


def cell(term: object) -> Cell:
    if term is None:
        return Cell("")
    if isinstance(term, NamedNode):
        local = local_path(term.value)
        if local is None and not term.value.startswith(("http://", "https://")):
            return Cell(short(term.value))  # javascript:, data:, urn: and the like are shown, never linked
        return Cell(short(term.value), href=local or term.value, external=local is None)
    if isinstance(term, BlankNode):
        return Cell(f"_:{term.value}")
    if isinstance(term, Literal):
        if term.language:
            note = f"@{term.language}"
        elif term.datatype != vocab.XSD_STRING:
            note = short(term.datatype.value)
        else:
            note = ""
        return Cell(term.value, note=note)
    return Cell(str(term))


@dataclass
class Table:
    columns: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)
    boolean: bool | None = None
    truncated: bool = False
    seconds: float = 0.0


def plain_cell(term: tuple[str, str, str | None, str | None] | None) -> Cell:
    """A cell from a worker's (kind, value, language, datatype) tuple."""
    if term is None:
        return Cell("")
    kind, value, language, datatype = term
    if kind == "iri":
        return cell(NamedNode(value))
    if kind == "bnode":
        return Cell(f"_:{value}")
    if kind == "literal":
        if language:
            return Cell(value, note=f"@{language}")
        return cell(Literal(value, datatype=NamedNode(datatype))) if datatype else Cell(value)
    return Cell(value)


def rows_table(rows: dict, started: float) -> Table:
    """A Table from the rows a query worker sent for a page."""
    out = Table(boolean=rows.get("boolean"), truncated=rows.get("truncated", False))
    out.columns = rows.get("columns", [])
    out.rows = [[plain_cell(t) for t in row] for row in rows.get("rows", [])]
    out.seconds = time.perf_counter() - started
    return out
