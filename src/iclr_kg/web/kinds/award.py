"""An award's page: what it is, the papers that received it with the sources behind each, and
what each source states (how many papers it names, its notes on them: where sources disagree,
each claim beside its source). And the overview of every award of every edition (`overview`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pyoxigraph import DefaultGraph, Literal, NamedNode

from iclr_kg import vocab
from iclr_kg.graph import ReadableGraph
from iclr_kg.index import Index
from iclr_kg.web.html import Labeler, Remarked
from iclr_kg.web.i18n import translate
from iclr_kg.web.kinds.kindpage import KindPage, PerGeneration
from iclr_kg.web.kinds.panels import (
    AWARDED,
    LIST_LIMIT,
    NO_PAGES,
    Panel,
    awarded_panel,
    heading_of,
    key_of,
    reasons,
    said_in_both,
    select_rows,
    source_cells,
)
from iclr_kg.web.kinds.rendering import render_panels

AWARD_PAPERS = AWARDED.format(
    conferred="?c iclr:conferredAward ?e ; iclr:conferredOn ?paper . BIND (?e AS ?award)", limit=LIST_LIMIT
)


# Each source that confers the award: how many papers it names, and its notes on them (why it
# names fewer, how it counts: "one of three", "without naming any co-winners")
AWARD_SOURCE_CLAIMS = f"""
SELECT ?source (COUNT(DISTINCT ?paper) AS ?papers) (GROUP_CONCAT(DISTINCT ?said; separator=" · ") AS ?notes)
       (GROUP_CONCAT(DISTINCT ?saidZh; separator=" · ") AS ?notesZh) WHERE {{
  GRAPH ?g {{ ?c iclr:conferredAward ?e ; iclr:conferredOn ?paper {said_in_both("?paper", "note")} }}
  ?g iclr:statedIn ?source .
}} GROUP BY ?source ORDER BY DESC(?papers) ?source"""


def award(
    store: ReadableGraph, iri: NamedNode, index: Index | None = None, pages: Mapping[str, int] = NO_PAGES
) -> tuple[str, list[Panel]]:
    heading = heading_of(store, iri)
    about = Panel("Award")
    about.properties(
        store,
        iri,
        [
            ("Edition", "awardedAt"),
            ("Inaugural", "isInaugural"),
            ("Criteria", "criterion"),
            ("Committee", "committeeOrganization"),
            ("Note", "note"),
        ],
    )
    papers = awarded_panel(store, AWARD_PAPERS, iri, award=False)
    claims = source_claims(store, iri)
    if papers.table:
        papers.note = "{papers} papers, named by {sources} sources"
        papers.figures = {"papers": f"{len(papers.table):,}", "sources": f"{len(claims.table):,}"}
    honoured = Panel("People honoured")
    honoured.add(
        "People", *[q.subject for q in store.quads_for_pattern(None, vocab.iclr("honoredWith"), iri, DefaultGraph())]
    )
    return heading, [about, papers, claims, honoured]


def source_claims(store: ReadableGraph, iri: NamedNode) -> Panel:
    """What each source states of the award: the papers it names, and its notes on them."""
    rows = select_rows(store, AWARD_SOURCE_CLAIMS, iri)
    named = source_cells(store, [row["source"].value for row in rows])
    panel = Panel("What each source states", kind="table", columns=["source", "papers it names", "its notes"])
    panel.table = [[named[row["source"].value], int(row["papers"].value), reasons(row, "notes")] for row in rows]
    panel.note = (
        "A source may name only some of the papers (its own, the first recipient); its notes say how it counts."
    )
    return panel


# Every paper award of every edition of ICLR, with each source that confers it (a row per award,
# paper and source: a few hundred), and the editions where a source says no paper award was given
OVERVIEW_CONFERRALS = f"""
SELECT ?edition ?year ?award ?kind ?paper ?source ?said WHERE {{
  ?edition iclr:editionOf <{vocab.entity("conference", "iclr").value}> ; iclr:year ?year .
  ?award iclr:awardedAt ?edition .
  GRAPH <{vocab.GRAPH_ENTITIES}> {{ ?award a ?kind }}
  GRAPH ?g {{ ?c iclr:conferredAward ?award ; iclr:conferredOn ?paper OPTIONAL {{ ?paper iclr:note ?said }} }}
  ?g iclr:statedIn ?source .
}} ORDER BY ?year ?award"""

OVERVIEW_NO_AWARDS = f"""
SELECT ?edition ?year ?source ?note WHERE {{
  ?edition iclr:editionOf <{vocab.entity("conference", "iclr").value}> ; iclr:year ?year .
  GRAPH ?g {{ ?edition iclr:noPaperAwards true OPTIONAL {{ ?edition iclr:note ?note }} }} ?g iclr:statedIn ?source .
}} ORDER BY ?year ?source"""


@dataclass
class OverviewRow:
    """One award of one edition (or an edition's "no paper award"): its papers, and the papers
    each source names."""

    edition: NamedNode
    year: int
    award: NamedNode | None  # None: a source says the edition gave no paper award
    kind: NamedNode | None
    papers: set[str] = field(default_factory=set)
    by_source: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    notes: dict[str, list[Literal]] = field(default_factory=lambda: defaultdict(list))  # a no-award row's, by source
    source_notes: dict[str, list[Literal]] = field(default_factory=lambda: defaultdict(list))  # on its papers


def overview(store: ReadableGraph) -> list[OverviewRow]:
    """Every ICLR edition's paper awards, newest first (as the front page lists them) and by kind,
    each with its papers and sources; an edition that sources say gave none has a row saying so,
    with those sources."""
    rows: dict[tuple[str, str], OverviewRow] = {}
    for found in store.query(OVERVIEW_CONFERRALS, prefixes=vocab.QUERY_PREFIXES):
        key = (found["edition"].value, found["award"].value)
        row = rows.setdefault(
            key, OverviewRow(found["edition"], int(found["year"].value[:4]), found["award"], found["kind"])
        )
        row.papers.add(found["paper"].value)
        row.by_source[found["source"].value].add(found["paper"].value)
        said = found["said"]  # a literal: the page marks its language
        if said is not None and said not in row.source_notes[found["source"].value]:
            row.source_notes[found["source"].value].append(said)
    for found in store.query(OVERVIEW_NO_AWARDS, prefixes=vocab.QUERY_PREFIXES):
        row = rows.setdefault(
            (found["edition"].value, ""), OverviewRow(found["edition"], int(found["year"].value[:4]), None, None)
        )
        row.by_source[found["source"].value] = set()
        if found["note"] is not None:
            row.notes[found["source"].value].append(found["note"])  # one note, in each of its languages
    return sorted(rows.values(), key=lambda r: (-r.year, _rank(r.kind)))


# The order an edition's awards are read in: the main award, its honorable mention, then the
# test-of-time award and its runner-up (classes of the ontology, by local name)
KIND_ORDER = ("BestPaperAward", "OutstandingPaperAward", "HonorableMention", "TestOfTimeAward", "TestOfTimeRunnerUp")


def _rank(kind: NamedNode | None) -> int:
    local = kind.value.rsplit("#", 1)[-1] if kind is not None else ""
    return KIND_ORDER.index(local) if local in KIND_ORDER else len(KIND_ORDER)


def overview_table(store: ReadableGraph) -> tuple[list[list[Any]], list[list[Any]], list[list[Any]]]:
    """The overview as the page lists it: edition, award, papers, and each source with the
    papers it names ("ICLR's own" marked); each edition that sources say gave no paper award:
    edition, source, its note; and each source that names fewer of an award's papers than the
    sources together, with its notes on them (how it counts: "without naming any co-winners")."""
    table, none_given, fewer = [], [], []
    for row in overview(store):  # sources named per row: one publisher's several files add their titles there
        named = source_cells(store, list(row.by_source))
        counted = sorted(row.by_source.items(), key=lambda item: (-len(item[1]), item[0]))
        sources = [
            Remarked(replace(named[s].term, text=f"{named[s].term.text} ({len(papers)})"), named[s].remark)
            if row.award
            else named[s]
            for s, papers in counted
        ]
        table.append([row.edition, row.award or "no paper award", len(row.papers) if row.award else 0, sources])
        none_given += [[row.edition, named[source], notes] for source, notes in row.notes.items()]
        fewer += [
            [row.award, named[s], f"{len(papers)} / {len(row.papers)}", row.source_notes[s]]
            for s, papers in counted
            if row.award and len(papers) < len(row.papers) and row.source_notes.get(s)
        ]
    return table, none_given, fewer


# Organizations by the ICLR award papers credited to them or to any unit below them (Google
# with DeepMind's), those that are no unit of another; the papers it cannot count (no source
# credits an organization) and the years it covers are asked beside it
AWARD_RANKING = f"""
SELECT ?organization (COUNT(DISTINCT ?paper) AS ?papers) WHERE {{
  ?paper iclr:receivedAward/iclr:awardedAt/iclr:editionOf <{vocab.entity("conference", "iclr").value}> ;
         iclr:creditedOrganization ?credited .
  ?credited iclr:subOrganizationOf* ?organization .
  FILTER NOT EXISTS {{ GRAPH <{vocab.GRAPH_ENTITIES}> {{ ?organization iclr:subOrganizationOf ?parent }} }}
}} GROUP BY ?organization ORDER BY DESC(?papers) ?organization LIMIT LIMIT_ROWS"""

AWARD_PAPER_TOTALS = f"""
SELECT ?papers ?left ?first ?last WHERE {{
  {{ SELECT (COUNT(?paper) AS ?papers) (SUM(IF(?credited, 0, 1)) AS ?left) WHERE {{
      SELECT DISTINCT ?paper ?credited WHERE {{
        ?paper iclr:receivedAward/iclr:awardedAt/iclr:editionOf <{vocab.entity("conference", "iclr").value}> .
        BIND (EXISTS {{ ?paper iclr:creditedOrganization ?any }} AS ?credited) }} }} }}
  {{ SELECT (MIN(?year) AS ?first) (MAX(?year) AS ?last) WHERE {{
      ?paper iclr:receivedAward/iclr:awardedAt ?edition .
      ?edition iclr:editionOf <{vocab.entity("conference", "iclr").value}> ; iclr:year ?year }} }}
}}"""


@dataclass(frozen=True)
class Ranking:
    """Organizations by award papers over the years `first`-`last`, with sub-organizations'
    papers counted for their parent; `left_out` of the `papers` award papers credit none."""

    organizations: list[tuple[NamedNode, int]]
    papers: int
    first: int
    last: int
    left_out: int


def award_ranking(store: ReadableGraph, limit: int) -> Ranking:
    ranked = store.query(AWARD_RANKING.replace("LIMIT_ROWS", str(int(limit))), prefixes=vocab.QUERY_PREFIXES)
    organizations = [(row["organization"], int(row["papers"].value)) for row in ranked]
    totals = next(iter(store.query(AWARD_PAPER_TOTALS, prefixes=vocab.QUERY_PREFIXES)))
    year = lambda term: int(term.value[:4]) if term is not None else 0  # noqa: E731
    return Ranking(
        organizations,
        int(totals["papers"].value),
        year(totals["first"]),
        year(totals["last"]),
        int(totals["left"].value),
    )


def ranking_panel(ranking: Ranking, lang: str) -> Panel:
    """The ranking as bars, titled with its years, its base and what it leaves out beside it;
    each count links to the organization's award papers."""
    panel = Panel("Organizations with the most award papers, {first}–{last}", kind="bars", wide=True)
    panel.bars = [
        (organization, n, f"/resource/paper/?organization={key_of(organization.value)}&award=yes")
        for organization, n in ranking.organizations
    ]
    panel.note = " ".join(
        translate(words, lang) for words in ranking_notes(ranking)
    )  # its figures filled in when drawn
    panel.figures = ranking_figures(ranking)
    return panel


RANKING_BASIS = "Counted: award papers credited to the organization or any of its sub-organizations, over every edition {first}–{last} ({papers} award papers)."
RANKING_LEFT_OUT = "{left} award papers name no organization in their sources and count for none."


def ranking_notes(ranking: Ranking) -> list[str]:
    """What the ranking counts, in English with {fields} (`ranking_figures`), and what it leaves
    out where it leaves out any: a caveat of 0 papers says nothing."""
    return [RANKING_BASIS, RANKING_LEFT_OUT] if ranking.left_out else [RANKING_BASIS]


def ranking_figures(ranking: Ranking) -> dict[str, str]:
    return {
        "first": str(ranking.first),
        "last": str(ranking.last),
        "papers": f"{ranking.papers:,}",
        "left": f"{ranking.left_out:,}",
    }


RANKED_ORGANIZATIONS = 15  # organizations the awards overview ranks


def overview_page(
    store: ReadableGraph, labeler: Labeler, per_generation: PerGeneration
) -> tuple[str, list[Panel], dict[str, str]]:
    """/resource/award/: every ICLR edition's paper awards by kind, each row with its papers and
    the sources that state them (an edition that sources say gave none, with those sources and
    their notes), and the organizations with most award papers over every edition, saying what
    they count and what they leave out. `?sort=name` (any argument) is the plain list of awards."""
    table, none_given, fewer = per_generation("awards overview", lambda: overview_table(store))
    ranking = per_generation("award ranking", lambda: award_ranking(store, RANKED_ORGANIZATIONS))
    rows = Panel(
        "Awards by edition", kind="table", columns=["edition", "award", "papers", "sources (papers each names)"]
    )
    rows.table = [list(row) for row in table]  # rendering fills the panels in: a copy of the generation's
    none = Panel("Where sources say no paper award was given", kind="table", columns=["edition", "source", "its note"])
    none.table, none.wide = [list(row) for row in none_given], True
    partial = Panel(
        "Sources naming fewer papers than all sources together, with their notes",
        kind="table",
        columns=["award", "source", "papers it names", "its notes"],
        wide=True,
    )
    partial.table = [list(row) for row in fewer]
    partial.note = "Some name only their own paper or the first recipient; some count otherwise (each note is the curator's reading of the source)."
    panels = render_panels([rows, none, partial, ranking_panel(ranking, labeler.lang)], labeler)
    return "awards.html", panels, ranking_figures(ranking)


PAGE = KindPage(profile=award, plural="Awards", overview=overview_page)
