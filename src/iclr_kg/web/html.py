"""Rendering RDF terms and query results for the HTML pages (escaping is Jinja's)."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from flask import url_for
from markupsafe import Markup, escape
from pyoxigraph import BlankNode, Literal, NamedNode

from iclr_kg import terms, vocab
from iclr_kg.index import Index
from iclr_kg.index.text import simplified
from iclr_kg.query.kept import PAGE_ROWS
from iclr_kg.web.i18n import translate

HTML_ROW_LIMIT = PAGE_ROWS


@dataclass
class Cell:
    text: str
    href: str | None = None
    note: str = ""  # language tag or datatype, shown beside the text
    external: bool = False
    title: str = ""  # shown on hover: the IRI behind a name, the datatype behind a number
    lang: str = ""  # the text's language, for the lang attribute
    paragraph: bool = False  # a text that reads as a paragraph of its own (a summary), never run on
    quoted: bool = False  # a title, quoted where running words name it ("according to “…”", 据《…》)


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


def web_link(address: str) -> str | None:
    """`address` if our pages may link it: http(s) only. javascript:, data:, urn: and the like
    are shown, never linked (the one place that decides it, for every page)."""
    return address if address.lower().startswith(("http://", "https://")) else None


def cell(term: object) -> Cell:
    if term is None:
        return Cell("")
    if isinstance(term, NamedNode):
        local = local_path(term.value)
        if local is None and web_link(term.value) is None:
            return Cell(short(term.value))
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
    graph: bool = False  # triples (CONSTRUCT, DESCRIBE), downloadable in RDF formats only

    def unfit_views(self) -> dict[str, str]:
        """Each chart view these rows cannot make, with why: the view picker greys it out and says
        so (a graph of a count by year means nothing). Read from the rows the page shows."""
        numbers = [c for c in range(len(self.columns)) if self._every(c, lambda v: v.title in NUMERIC_TYPES)]
        links = [c for c in range(len(self.columns)) if self._every(c, lambda v: bool(v.href))]
        dated = [c for c in range(len(self.columns)) if self._every(c, _is_time)]
        unfit = {}
        if not (numbers and len(self.columns) >= 2):
            unfit["bar"] = unfit["line"] = "needs a column of numbers beside another column"
        elif len(numbers) < 2 and not dated:
            unfit["line"] = "needs years, dates or numbers along its axis"
        if len(links) < 2:
            unfit["graph"] = unfit["tree"] = "needs two columns of entities (from, to)"
        if not dated:
            unfit["timeline"] = "needs a column of dates or years"
        if not self.rows:
            unfit = dict.fromkeys(("bar", "line", "graph", "tree", "timeline"), "no rows to draw")
        return unfit

    def _every(self, column: int, test: Callable[[Cell], bool]) -> bool:
        values = [row[column] for row in self.rows if column < len(row) and row[column].text]
        return bool(values) and all(test(v) for v in values)


NUMERIC_TYPES = {
    f"xsd:{t}" for t in ("integer", "decimal", "double", "float", "int", "long", "short", "nonNegativeInteger", "gYear")
}


def _is_time(value: Cell) -> bool:
    """A date, a time, or a year (an xsd:gYear, or an integer a year could be)."""
    if value.title in ("xsd:date", "xsd:dateTime", "xsd:gYear"):
        return True
    return value.title == "xsd:integer" and value.text.isdigit() and 1900 <= int(value.text) <= 2100


def term_of(sent: tuple[str, str, str | None, str | None] | None) -> NamedNode | BlankNode | Literal | None:
    """The term a worker sent as a (kind, value, language, datatype) tuple."""
    if sent is None:
        return None
    kind, value, language, datatype = sent
    if kind == "iri":
        return NamedNode(value)
    if kind == "bnode":
        return BlankNode(value)
    if language:
        return Literal(value, language=language)
    return Literal(value, datatype=NamedNode(datatype)) if datatype else Literal(value)


def rows_table(rows: dict, started: float, labeler: Labeler | None = None) -> Table:
    """A Table from the rows a query worker sent for a page; with a labeler, entities by name."""
    labeler = labeler or Labeler(None)
    out = Table(boolean=rows.get("boolean"), truncated=rows.get("truncated", False), graph=rows.get("graph", False))
    out.columns = rows.get("columns", [])
    terms = [[term_of(t) for t in row] for row in rows.get("rows", [])]
    labeler.learn([t for row in terms for t in row])
    out.rows = [[labeler.cell(t) for t in row] for row in terms]
    readable_numbers(out)
    out.seconds = time.perf_counter() - started
    return out


FIGURES = re.compile(r"\d+(?: / \d+)*")  # sources' figures side by side, "2997 / 3013", or one: "2594"
LONG_FRACTION = re.compile(r"-?\d+\.\d{4,}")  # a division's result (an average), not a stated figure


def readable_numbers(table: Table) -> None:
    """A result table's numbers as a person reads them (HTML only: CSV, JSON, TSV and XML keep
    the W3C results formats' lexical forms): integers with thousands separators, 19,797 (not a
    column of years, 2021, nor a list of them, "2021, 2024"); a source's figure in text so, "2,594",
    and figures side by side each so, "2,997 / 3,013"; a decimal with more
    than three places, which a division made (an average of 9.666666666666666666), to two, 9.67.
    The value as written stays on hover."""
    for column in range(len(table.columns)):
        years = table._every(column, _is_time) or table._every(column, _plain_years)
        for row in table.rows:
            if column < len(row) and not years:
                row[column] = _readable_number(row[column])


YEARS = re.compile(r"(?:19|20)\d\d(?:(?:, | / )(?:19|20)\d\d)*")  # a list of years: "2021, 2024"


def _plain_years(value: Cell) -> bool:
    """A text of years, one or several ("2021, 2024"): a column of them stays as written."""
    return not value.title and YEARS.fullmatch(value.text) is not None


def _readable_number(value: Cell) -> Cell:
    if value.title == "xsd:integer" and value.text.lstrip("-").isdigit():
        return dataclasses.replace(value, text=f"{int(value.text):,}")
    if value.title in ("xsd:decimal", "xsd:double") and LONG_FRACTION.fullmatch(value.text):
        return dataclasses.replace(value, text=f"{float(value.text):,.2f}", title=f"{value.title} {value.text}")
    if not value.title and not value.href and FIGURES.fullmatch(value.text):
        return dataclasses.replace(value, text=" / ".join(f"{int(n):,}" for n in value.text.split(" / ")))
    return value


@dataclass(frozen=True)
class OntologyLabel:
    """A term of the ontology shown by its label in the page's language (`submissionCount` ->
    "submissions", "投稿数"), not linked."""

    local: str
    remark: str = ""  # a word of the page's own after the label: "(sources differ)"


@dataclass(frozen=True)
class StatedFigures:
    """What one source states of an edition, in one line, each figure named by its property's
    label in the page's language: "submissions: 2,997 · accepted papers: 860"."""

    figures: tuple[tuple[str, str], ...]  # (the property's local name, the value as read)


@dataclass(frozen=True)
class Worded:
    """The page's own words with {fields} filled in after translation: "the graph holds {held}
    of {total} submissions"."""

    words: str
    figures: tuple[tuple[str, str], ...] = ()

    @property
    def text(self) -> str:
        return self.words.format(**dict(self.figures))


@dataclass(frozen=True)
class Remarked:
    """A value with a remark beside it, in the page's own words: "2,997 – 3,013 (sources
    differ)", a co-author's name and "12" papers together."""

    term: Any  # a str, or a term named as every term is
    remark: str

    @property
    def text(self) -> str:
        return self.term if isinstance(self.term, str) else str(getattr(self.term, "value", ""))


@dataclass(frozen=True)
class Attributed:
    """A source's text or value (stated in one or several languages) with that source named after
    it: a paper's summary as each source gives it, a paragraph each; an edition's place, and
    "held online" as the sources that say so state it."""

    texts: tuple[Literal, ...]
    sources: tuple[Any, ...]  # each as a page names it (panels.source_cells): one, or the several that agree
    remark: str = ""  # the page's own words after the sources: "(sources differ)"

    @property
    def text(self) -> str:
        return " ".join(str(t.value) for t in self.texts)


ACCORDING_TO = "according to {source}"


SOURCES_DIFFER = "(sources differ)"


def stated_range(low: float, high: float, shown: Callable[[float], str]) -> tuple[str, bool]:
    """The one way a page states the values sources give of one figure (`reconciled` first): the
    lowest – the highest, and whether the sources differ. They differ only beyond the rounding of
    the less precise value; where they agree (28.7% and 29%: 29% is 28.7% rounded), the more
    precise value alone is shown."""
    if not _beyond_rounding(low, high):
        return shown(max(low, high, key=_places)), False
    return f"{shown(low)} – {shown(high)}", True


def reconciled(values: Iterable[float]) -> tuple[float, float]:
    """The lowest and the highest of the values sources state of one figure, where a value that is
    another's, rounded (27% of 27.4%), counts as that more precise value: ICLR 2026's 27%, 27.4%,
    28% and 29.8% are 27.4% – 29.8%."""
    given = set(values)
    kept = [v for v in given if not any(_places(f) > _places(v) and not _beyond_rounding(f, v) for f in given)]
    return min(kept), max(kept)


def _beyond_rounding(low: float, high: float) -> bool:
    places = min(_places(low), _places(high))
    unit = Decimal(1).scaleb(-places)
    return Decimal(repr(low)).quantize(unit, ROUND_HALF_UP) != Decimal(repr(high)).quantize(unit, ROUND_HALF_UP)


def _places(value: float) -> int:
    """The decimal places a value is given to: 0.29 -> 2, 0.287 -> 3, 2997.0 -> 0."""
    exponent = Decimal(repr(value)).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def readable_facts(text: str, lang: str, known: terms.Terms) -> str:
    """An index's facts line (`ICLR 2021 · iclr:Accepted (iclr:Oral) · Yang Song et al.`) in `lang`."""
    text = known.readable(text, lang)
    parts = text.split(" · ")  # a part that is a language tag (a source's: en, zh-Hant) by its name
    text = " · ".join(translate(LANGUAGE_NAMES[p.lower()], lang) if p.lower() in LANGUAGE_NAMES else p for p in parts)
    if lang != "en":
        for phrase in ("et al.", "part of"):
            text = text.replace(phrase, translate(phrase, lang))
    return text


class Labeler:
    """Turns terms into cells: entities by name (in `lang`, else English), numbers and dates
    plain (the datatype on hover), English text without its tag."""

    def __init__(self, index: Index | None, lang: str = "en", known: terms.Terms | None = None, curies: bool = False):
        self.index, self.lang, self.curies = index, lang, curies  # curies: entities' on hover (query results)
        self.terms = known or terms.packaged()
        self.labels: dict[str, tuple[str, str]] = {}

    def learn(self, terms: list[Any]) -> None:
        terms = [t.term if isinstance(t, Remarked) else t for t in terms]
        iris = [t.value for t in terms if isinstance(t, NamedNode) and t.value not in self.labels]
        if iris and self.index is not None:
            self.labels.update(self.index.labels(iris))

    def name(self, iri: str) -> str | None:
        local = iri[len(vocab.ONTOLOGY_NS) :] if iri.startswith(vocab.ONTOLOGY_NS) else ""
        if local in self.terms.types:  # a value of the ontology's (iclr:Accepted): its own label
            return self.terms.label(local, self.lang)
        found = self.labels.get(iri)
        if not found:
            return None
        english, chinese = found
        return chinese if self.lang == "zh" and chinese else english

    def _hover(self, iri: str, label: str) -> str:
        """What a named term shows on hover: a source's title (its key means nothing to a reader);
        another entity's CURIE only where SPARQL is written (`curies`), nothing on a reader's page
        ("edition:iclr2019" says no more than its name); a term of the ontology its CURIE."""
        if iri.startswith(SOURCES):
            return label
        return short(iri) if self.curies or not iri.startswith(vocab.RESOURCE_BASE) else ""

    def cells(self, values: list[Any]) -> list[Cell]:
        """The values' cells; of a text stated in several languages, the page's, unremarked."""
        shown = in_page_language(values, self.lang)
        chosen = len(shown) < len(values)
        made = [self._text(v, chosen) if isinstance(v, Literal) and v.language else self.cell(v) for v in shown]
        return _distinct([self._in_script(c) for c in made]) if self.lang == "zh" else made

    def _attributed(self, said: Attributed) -> Cell:
        """A source's text in the page's language, a paragraph, its source named after it."""
        shown = self.cells(list(said.texts))
        named = translate(", ", self.lang).join(self._named(self.cell(source)) for source in said.sources)
        notes = [c.note for c in shown if c.note] + [translate(ACCORDING_TO, self.lang).format(source=named)]
        notes += [translate(said.remark, self.lang)] if said.remark else []
        text = " ".join(c.text for c in shown)
        return Cell(text, note=" · ".join(notes), lang=shown[0].lang if shown else "", paragraph=True)

    def _named(self, shown: Cell) -> str:
        """A cell as running words name it: a title quoted as the page's language quotes one, its
        note after it in brackets (“Format for the ICLR2020 Virtual Conference” (ICLR's own);
        《Format for the ICLR2020 Virtual Conference》（ICLR 官方）): a list of titles ran together."""
        text = translate("“{title}”", self.lang).format(title=shown.text) if shown.quoted else shown.text
        return text + translate(" ({note})", self.lang).format(note=shown.note) if shown.note else text

    def _in_script(self, shown: Cell) -> Cell:
        """A name written in Traditional script (a source's title, as a link; an organization's
        other name) in Simplified on a Chinese page, the original on hover; the source's own page
        and its statements keep it."""
        if self.lang != "zh" or shown.lang.lower() != "zh-hant":
            return shown
        return dataclasses.replace(
            shown, text=simplified(shown.text), lang="zh-Hans", title=shown.title or shown.text, note=""
        )

    def _text(self, text: Literal, chosen: bool) -> Cell:
        """A text shown where the page's own words would be: unremarked when it is the page's
        language's form of our words (`chosen`); English with no Chinese form on a Chinese page is
        a source's own words (ours have both), remarked as the original's language."""
        if chosen:
            return dataclasses.replace(self.cell(text), note="")
        if _language_of(text) == "en" and self.lang != "en":
            return dataclasses.replace(self.cell(text), note=translate(ENGLISH_ORIGINAL, self.lang))
        return self.cell(text)

    def cell(self, term: Any) -> Cell:
        if isinstance(term, Cell):
            return self._in_script(term)
        if isinstance(term, OntologyLabel):
            remark = f" {translate(term.remark, self.lang)}" if term.remark else ""
            return Cell(self.terms.label(term.local, self.lang) + remark)
        if isinstance(term, StatedFigures):
            colon = "：" if self.lang == "zh" else ": "
            return Cell(
                " · ".join(
                    self.terms.label(local, self.lang) + colon + translate(shown, self.lang)
                    for local, shown in term.figures
                )
            )
        if isinstance(term, Worded):
            return Cell(translate(term.words, self.lang).format(**dict(term.figures)))
        if isinstance(term, Attributed):
            return self._attributed(term)
        if isinstance(term, Remarked):
            shown = Cell(term.term) if isinstance(term.term, str) else self.cell(term.term)
            return dataclasses.replace(shown, note=translate(term.remark, self.lang))
        if isinstance(term, NamedNode):
            base = cell(term)
            label = self.name(term.value)
            if label:
                return Cell(label, href=base.href, external=base.external, title=self._hover(term.value, label))
            return base
        if isinstance(term, Literal):
            return readable_literal(term, self.lang)
        if term is None:
            return Cell("")
        return Cell(translate(str(term), self.lang))  # the page's own words ("current"), not data


SOURCES = vocab.RESOURCE_BASE + "source/"


def _distinct(cells: list[Cell]) -> list[Cell]:
    """Cells that read the same (and link the same) shown once: 谷歌大脑 and its Traditional
    variant 谷歌大腦, once in Simplified, read as one name on a Chinese page; a cell written so
    (no original on hover) is kept over one made so."""
    kept: dict[tuple[str, str | None], Cell] = {}
    for shown in cells:
        key = (shown.text, shown.href)
        if key not in kept or (kept[key].title and not shown.title):
            kept[key] = shown
    return list(kept.values())


def inline_code(text: str) -> Markup:
    """A saved query's description as a page shows it: `a command` as code, everything else
    plain text (escaped: no other markup is read)."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


ENGLISH_ORIGINAL = "in the original English"


def in_page_language(values: list[Any], lang: str) -> list[Any]:
    """Of one statement's texts in several languages (our own words are stated in English and in
    Chinese), those in the page's language; a text with no version in it stays, as it is."""
    tagged = [v for v in values if isinstance(v, Literal) and v.language]
    if len({_language_of(v) for v in tagged}) < 2:
        return values
    ours = [v for v in tagged if _language_of(v) == lang]
    if not ours:
        return values
    return [v for v in values if not (isinstance(v, Literal) and v.language) or _language_of(v) == lang]


def _language_of(term: Literal) -> str:
    tag = (term.language or "").lower()
    return "zh" if tag.startswith("zh") else tag


# How a page names a text's language tag, rather than showing the tag itself
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese", "zh-hans": "Simplified Chinese", "zh-hant": "Traditional Chinese"}


def readable_literal(term: Literal, lang: str = "en") -> Cell:
    """A literal as a person reads it: no datatype (shown on hover), a language tag only if not the page's."""
    if term.language:
        tag = term.language.lower()
        note = "" if tag == lang else translate(LANGUAGE_NAMES.get(tag, tag), lang)
        return Cell(term.value, note=note, lang=term.language)
    datatype = term.datatype.value if term.datatype else ""
    if datatype == vocab.XSD + "boolean":
        return Cell(translate("yes" if term.value == "true" else "no", lang), title=short(datatype))
    return Cell(term.value, title="" if datatype == vocab.XSD_STRING.value else short(datatype))
