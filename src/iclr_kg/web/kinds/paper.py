"""A paper's page: its facts, authors as written, awards, reviews and ratings, mentions; and its
BibTeX."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from pyoxigraph import NamedNode

from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Hit, Index, ranked_titles
from iclr_kg.web.html import Attributed, Cell, OntologyLabel, Remarked, local_path
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds.kindpage import Download, KindPage
from iclr_kg.web.kinds.panels import (
    NO_PAGES,
    REASONS,
    REASONS_SAID,
    Panel,
    as_query,
    identifiers_panel,
    per_graph,
    reasons,
    select_rows,
    source_cells,
    source_of,
    values_of,
)

# A row per author and each source's form of the name (one authorship, several sources' forms)
PAPER_AUTHORS = """
SELECT ?position ?person ?written ?source WHERE {
  ?a iclr:authorshipOf ?e ; iclr:authorPosition ?position ; iclr:authorshipBy ?person .
  OPTIONAL { GRAPH ?g { ?a iclr:authorNameAsWritten ?written } OPTIONAL { ?g iclr:statedIn ?source } }
} ORDER BY ?position ?written ?source"""

# A row per place in the author list: who is there (BibTeX, schema.org), whatever sources write
AUTHOR_PLACES = """
SELECT DISTINCT ?position ?person WHERE {
  ?a iclr:authorshipOf ?e ; iclr:authorPosition ?position ; iclr:authorshipBy ?person .
} ORDER BY ?position ?person"""


# Each award of the paper, the committee's reason, and every source that states the conferral
PAPER_AWARDS = f"""
SELECT ?award {REASONS}
       (GROUP_CONCAT(DISTINCT STR(?source); separator=" ") AS ?sources) WHERE {{
  ?c iclr:conferredOn ?e ; iclr:conferredAward ?award . {REASONS_SAID}
  GRAPH ?stating {{ ?c iclr:conferredAward ?award }} ?stating iclr:statedIn ?source .
}} GROUP BY ?award ORDER BY ?award"""


PAPER_REVIEWS = """
SELECT ?review ?rating ?confidence WHERE {
  ?review iclr:reviewOf ?e ; iclr:rating ?rating . OPTIONAL { ?review iclr:confidence ?confidence }
} ORDER BY ?review"""


REVIEW_RATINGS = "SELECT ?review ?rating WHERE { ?review iclr:reviewOf ?e ; iclr:rating ?rating } ORDER BY ?review"


MENTIONS = """
SELECT DISTINCT ?source WHERE { GRAPH ?g { ?e ?p ?o } ?g iclr:statedIn ?source }"""


def paper(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    titles = per_graph(store, iri, "title")
    counted = Counter(str(t.value) for values in titles.values() for t in values)
    ranked = ranked_titles(counted)
    heading = ranked[0] if ranked else iri.value.rsplit("/", 1)[-1]
    about = Panel("Paper", wide=True)  # its summaries read across the page, not down a third of it
    if not ranked and values_of(store, iri, "titleWithdrawn"):
        heading = ""  # the page says the title was withdrawn, in the reader's language
        about.rows.append(("Title", [OntologyLabel("titleWithdrawn")]))
    alternatives = {str(t.value) for values in per_graph(store, iri, "alternativeTitle").values() for t in values}
    about.add("Also titled", *ranked[1:], *sorted(alternatives - set(ranked)))
    about.add("Edition", *values_of(store, iri, "submittedTo"))
    about.add("Decision", *values_of(store, iri, "decision"), *values_of(store, iri, "presentationType"))
    about.properties(
        store,
        iri,
        [
            ("Method", "methodName"),
        ],
    )
    summaries = per_graph(store, iri, "summary")  # each source's, named: sources summarise differently
    cited = source_cells(store, [source_of(graph).value for graph in summaries])
    about.add("Summary", *[Attributed(tuple(texts), (cited.get(source_of(graph).value, source_of(graph)),))
                           for graph, texts in sorted(summaries.items())])  # fmt: skip
    about.properties(
        store,
        iri,
        [
            ("Note", "note"),
            ("OpenReview", "openReviewUrl"),
            ("Code", "codeRepository"),
        ],
    )
    identifiers_panel(store, iri, about, "paper")
    authors = _authors(store, iri, index)
    organizations = Panel("Credited organizations")
    per_source = per_graph(store, iri, "creditedOrganization")
    distinct = {frozenset(str(o) for o in orgs) for orgs in per_source.values()}
    if len(distinct) == 1:
        organizations.add("Organizations", *next(iter(per_source.values())))
    else:
        organizations.kind, organizations.columns = "table", ["source", "organizations"]
        cited = source_cells(store, [source_of(graph).value for graph in per_source])
        for graph, orgs in sorted(per_source.items()):  # sources differ: a row per source, named by it
            organizations.table.append([cited.get(source_of(graph).value, source_of(graph)), orgs])
    awards = Panel("Awards", kind="table", columns=["award", "the committee's reason", "sources"])
    conferred = select_rows(store, PAPER_AWARDS, iri)
    named = source_cells(store, [s for row in conferred for s in row["sources"].value.split()])
    for row in conferred:
        awards.table.append(
            [row["award"], reasons(row), [named[s] for s in row["sources"].value.split() if s in named]]
        )
    reviews = _reviews(store, iri)
    mentions = Panel("Stated in")
    mentioned = [row["source"].value for row in select_rows(store, MENTIONS, iri)]
    cited = source_cells(store, mentioned)
    mentions.add("Sources", *[cited.get(source, NamedNode(source)) for source in mentioned])
    return heading, [about, authors, organizations, awards, reviews, mentions]


def _authors(store: ReadableGraph, iri: NamedNode, index: Index | None) -> Panel:
    """A row per place in the author list, however many sources write the name and however
    they write it; "as written" gives each form other than the name shown, with the sources
    that write it so."""
    panel = Panel("Authors", kind="table", columns=["#", "author", "as written"])
    rows = select_rows(store, PAPER_AUTHORS, iri)
    names = index.labels(row["person"].value for row in rows) if index else {}
    named = source_cells(store, sorted({row["source"].value for row in rows if row["source"] is not None}))
    forms: dict[tuple[int, str], dict[str, list[str]]] = {}
    for row in rows:
        written = forms.setdefault((int(row["position"].value), row["person"].value), {})
        if row["written"] is not None:
            stating = written.setdefault(row["written"].value, [])
            if row["source"] is not None and row["source"].value in named:
                stating.append(named[row["source"].value].term.text)
    for (position, person), written in forms.items():
        shown = names.get(person, ("", ""))
        other = [
            Cell(form, note=f"({', '.join(by)})" if by else "") for form, by in written.items() if form not in shown
        ]
        panel.table.append([str(position), NamedNode(person), other])
    return panel


def _reviews(store: ReadableGraph, iri: NamedNode) -> Panel:
    """One panel of the paper's reviews: a bar per review, named short ("review 2", linked to its
    page, its reviewer's confidence beside it), the number of ratings and their average above;
    where only an average was reported, that average."""
    panel = Panel("Review ratings", kind="bars")
    ratings = []
    for number, row in enumerate(select_rows(store, PAPER_REVIEWS, iri), start=1):
        rating = float(row["rating"].value)
        ratings.append(rating)
        name = Cell(translate("review {n}").format(n=number), href=local_path(row["review"].value))
        confidence = row["confidence"]
        shown = Remarked(name, translate("confidence {n}").format(n=confidence.value)) if confidence else name
        panel.bars.append((shown, rating, "", f"{rating:g}"))
    if ratings:
        panel.note = "{n} ratings, average {average}"
        panel.figures = {"n": f"{len(ratings):,}", "average": f"{sum(ratings) / len(ratings):.2f}"}
        panel.links = [("This as a query", as_query(REVIEW_RATINGS, iri, "bar x=review y=rating"))]
    else:  # no review in the graph: the average a source reported, if any
        panel.kind = "facts"
        panel.add("Average rating as reported", *values_of(store, iri, "averageRating"))
    return panel


def bibtex(store: ReadableGraph, iri: NamedNode, index: Index | None) -> str:
    """The paper as a BibTeX entry (@inproceedings): its title, its authors in order, the year and
    edition, and where to read it. Braces and backslashes in the data are escaped."""
    key = iri.value.rsplit("/", 1)[-1]
    titles = Counter(str(t.value) for values in per_graph(store, iri, "title").values() for t in values)
    title = (ranked_titles(titles) or [f"[title withdrawn: {key}]"])[0]
    people = [row["person"] for row in select_rows(store, AUTHOR_PLACES, iri)]
    names = index.labels(p.value for p in people) if index else {}
    authors = " and ".join(names.get(p.value, (p.value.rsplit("/", 1)[-1], ""))[0] for p in people)
    years = sorted({v.value[:4] for e in values_of(store, iri, "submittedTo") for v in values_of(store, e, "year")})
    year = years[0] if years else ""
    forum = [v.value for v in values_of(store, iri, "openReviewUrl")]
    fields = {
        "title": "{" + title + "}",  # the inner braces keep its capitals as written
        "author": authors,
        "booktitle": f"International Conference on Learning Representations (ICLR {year})".replace(" ()", ""),
        "year": year,
        "url": forum[0] if forum else iri.value,
        "note": f"iclr-kg: {iri.value}",
    }
    lines = [f"  {name} = {{{_bib(value, keep=name == 'title')}}}," for name, value in fields.items() if value]
    return "@inproceedings{" + f"iclr{year}-{re.sub(r'[^A-Za-z0-9_-]', '', key)},\n" + "\n".join(lines) + "\n}\n"


# BibTeX counts every brace, `\}` too, when it finds a field's end: a stray one is written as a
# command whose own braces balance
_BIB_ESCAPES = {"\\": "\\textbackslash{}", "{": "\\textbraceleft{}", "}": "\\textbraceright{}"}


def _bib(text: str, keep: bool = False) -> str:
    """A value safe inside BibTeX's braces: a stray brace or backslash would end or break it."""
    inner = text[1:-1] if keep else text
    escaped = re.sub(r"[\\{}]", lambda m: _BIB_ESCAPES[m[0]], inner)  # one pass: escapes are not escaped again
    return "{" + escaped + "}" if keep else escaped


def schema_org_fields(store: ReadableGraph, iri: NamedNode, index: Index | None, hit: Hit | None) -> dict[str, Any]:
    """What a paper's schema.org JSON-LD adds: its authors in order, and its year."""
    people = [row["person"] for row in select_rows(store, AUTHOR_PLACES, iri)]
    names = index.labels(p.value for p in people) if index else {}
    data: dict[str, Any] = {
        "author": [{"@type": "Person", "@id": p.value, "name": names.get(p.value, (p.value, ""))[0]} for p in people]
    }
    if hit and hit.year:
        data["datePublished"] = str(hit.year)
    return data


PAGE = KindPage(
    profile=paper,
    plural="Papers",
    downloads={"bibtex": Download("application/x-bibtex", "bib", bibtex)},
    schema_org=schema_org_fields,
    lists_papers=True,
)
