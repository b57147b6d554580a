"""Pages for people: the query page, saved queries, stats, health."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from flask import Blueprint, Response, jsonify, redirect, render_template, request, send_file, url_for
from flask.typing import ResponseReturnValue

from iclr_kg import counts, vocab
from iclr_kg.errors import IclrKgError, NotFound, QueryError, StoreError, Unavailable
from iclr_kg.identifiers import SCHEMES, recognize
from iclr_kg.index import TOPIC, Hit, Index, ListFilter, fold, kind_and_key
from iclr_kg.kinds import LISTED, ROOTS, EntityKind
from iclr_kg.query.kept import rows_name
from iclr_kg.release import released_file, releases
from iclr_kg.sparql.formats import RDF_FORMATS, RESULT_FORMATS
from iclr_kg.sparql.lint import Problem, check, problem_of
from iclr_kg.sparql.querytext import keepable
from iclr_kg.sparql.saved import ABSOLUTE_IRI, NAME, PAGE_LANGUAGE, VIEWS, Param, SavedQuery, declared_view, expand
from iclr_kg.store import generation_record
from iclr_kg.topics import untranslated
from iclr_kg.web.answers import answers_to_keep, kept_rows, run_saved
from iclr_kg.web.charts import trend
from iclr_kg.web.html import HTML_ROW_LIMIT, Cell, Labeler, readable_facts, rows_table
from iclr_kg.web.http import wants_html
from iclr_kg.web.i18n import language, problem_shown, translate
from iclr_kg.web.kinds import plural
from iclr_kg.web.kinds.award import award_ranking, overview, ranking_figures, ranking_notes
from iclr_kg.web.kinds.conference import held_at
from iclr_kg.web.kinds.panels import Panel, SourceTitle, source_of, source_titles
from iclr_kg.web.querying import generation_counts, parsed_in_worker, rows_outside_request, start_query, stats_counts
from iclr_kg.web.state import state
from iclr_kg.web.trends import EditionFigures, edition_figures, query_link, rate_chart
from iclr_kg.web.workbench import ontology_local_names

blueprint = Blueprint("pages", __name__)

PREFIX_BLOCK = "".join(
    f"PREFIX {p}: <{ns}>\n" for p, ns in vocab.PREFIXES.items() if p in ("iclr", "schema", "rdfs", "skos")
)
EXAMPLE = (
    PREFIX_BLOCK
    + """
SELECT ?paper ?title ?award WHERE {
  ?paper iclr:receivedAward/iclr:name ?award ; iclr:title ?title .
}
ORDER BY ?award ?title
LIMIT 20
"""
)


@blueprint.app_context_processor
def download_formats() -> dict[str, list[str]]:
    """The formats a shown result can be downloaded in: result formats under a SELECT or ASK,
    graph formats under a CONSTRUCT or DESCRIBE."""
    return {"result_formats": list(RESULT_FORMATS), "rdf_formats": list(RDF_FORMATS)}


def _arguments(*given: Mapping[str, Any], **more: Any) -> dict[str, Any]:
    """A URL's query arguments for `url_for`, merged (later ones win)."""
    merged: dict[str, Any] = {}
    for arguments in (*given, more):
        merged.update(arguments)
    return merged


def download_links(text: str, saved: str | None, values: dict[str, str], include_inferred: bool):
    """A function the templates call to link each download format of the shown result."""
    inferred = {} if include_inferred else {"inferred": "false"}

    def link(fmt: str, attachment: bool = True) -> str:
        """The result in `fmt`: as a file to save (the download links), or to read (the views)."""
        extra = inferred | ({"download": saved or "query"} if attachment else {})
        if saved:
            return url_for("pages.saved_query", **_arguments(values, extra, name=saved, format=fmt))
        return url_for("sparql.sparql", **_arguments(extra, query=text, format=fmt))

    return link


def _domains_in_worker(text: str) -> list[Problem]:
    return parsed_in_worker(text, syntax=False)


def result_page(template: str, text: str, substitutions: dict | None = None, **context: Any) -> str | tuple[str, int]:
    """Run `text` and render it as a table in `template`; a bad query shows the parser's message."""
    include_inferred = request.args.get("inferred", "true") != "false"
    saved = context.get("saved")
    context["download"] = download_links(
        text,
        getattr(saved, "name", None),
        context.get("values", {}),
        include_inferred,
    )
    # the domains read in a worker; the syntax is the run's to say
    context["problems"] = problems = check(text, ontology_local_names(), parsing=_domains_in_worker)
    errors = [p for p in problems if p.severity == "error"]
    if errors:  # said before running, where the query is wrong, in words a person can act on
        return render_template(
            template, query=text, error=problem_shown(errors[0])["message"], inferred=include_inferred, **context
        ), QueryError.http_status
    started = time.perf_counter()
    try:
        if isinstance(saved, SavedQuery) and _as_saved(saved):
            # as the page shows it by default: computed with the generation (`warmed`) and kept
            rows = state().per_generation(rows_name(saved), functools.partial(saved_rows, saved), kept=True)
        else:
            rows = start_query(text, substitutions, row_limit=HTML_ROW_LIMIT).rows or {}
        return render_template(
            template,
            query=text,
            table=rows_table(rows, started, Labeler(state().index(), language(), state().terms(), curies=True)),
            inferred=include_inferred,
            **context,
        )
    except IclrKgError as exc:  # shown in the page, beside the query, with the error's own status
        said = str(exc)
        if isinstance(exc, QueryError):  # the worker's parser said it: marked in the editor too
            problems.append(problem_of(exc))
            said = str(problem_shown(problems[-1])["message"])  # in the page's language
        return render_template(template, query=text, error=said, inferred=include_inferred, **context), exc.http_status


def _as_saved(saved: SavedQuery) -> bool:
    """The request asks for a saved query's page as `warmed` computes it: no parameter or other
    argument (its defaults, the default dataset with inferred triples), and an answer that
    depends on the store alone."""
    asked = {k for k in request.args if k not in (PAGE_LANGUAGE,)}
    return not asked and keepable(saved.text) and _page_language_of(saved) in (None, _default_language(saved))


def _page_language_of(saved: SavedQuery) -> str | None:
    """The value of the query's PAGE_LANGUAGE parameter on this page: the page's language."""
    return language() if any(p.name == PAGE_LANGUAGE for p in saved.params) else None


def _default_language(saved: SavedQuery) -> str | None:
    return next((p.default for p in saved.params if p.name == PAGE_LANGUAGE), None)


@blueprint.route("/")
def home() -> ResponseReturnValue:
    """The front page: search first, then the editions, the awards, the organizations with most
    papers, every kind to browse, and what the graph holds as of when. A link from before the
    editor moved to /query (`/?query=...`) is sent there."""
    if request.args.get("query") is not None or request.args.get("view") is not None:
        return redirect(url_for("pages.index", **_arguments(request.args)), code=301)
    index = state().index()
    if index is None:
        raise StoreError("no store yet: run `iclr-kg build` first")
    listed = state().per_generation("front page", lambda: _front_page_lists(index))
    figures = cast(list[EditionFigures], listed["editions_figures"])
    return render_template(
        "home.html",
        rates=_front_page_rates(figures),
        term_label=lambda local: state().terms().label(local, language()),
        **listed,
    )


def _front_page_rates(rows: list[EditionFigures]) -> Panel:
    """ICLR's acceptance rate over the years, stated and counted, drawn in the page's language."""
    panel = rate_chart(rows, query_link("line x=year y=rateHigh", vocab.entity("conference", "iclr")))
    lang = language()
    panel.svg = trend(panel.years, panel.series, lambda words: translate(words, lang), panel.percent)
    panel.note = translate(panel.note, lang).format(**panel.figures)
    return panel


# ICLR itself, its editions and the awards given at them, by the ontology's iclr:editionOf and
# iclr:awardedAt: what the front page's panels list and count (the graph also holds NeurIPS 2020,
# NeurIPS and the Turing Award, context for its people; their lists show them)
ICLR_KEY = "iclr"
ICLR = vocab.entity("conference", ICLR_KEY)
ICLR_PAGE = "/resource/" + ICLR.value[len(vocab.RESOURCE_BASE) :]
# The kinds whose entities are ICLR's or another conference's: the "Inside" panel counts ICLR's
# own under these words (None: ICLR itself, not counted) and names the others as context
ICLR_OWN: dict[EntityKind, str | None] = {
    ROOTS["ConferenceEdition"]: "Editions of ICLR",
    ROOTS["Award"]: "Awards given at ICLR",
    ROOTS["Conference"]: None,
}


@dataclass(frozen=True)
class InsideRow:
    """One figure of the front page's "Inside" panel: what it counts (words to translate), the
    list or page that shows them, how many."""

    words: str
    href: str
    n: int


def _inside(index: Index, iclr: frozenset[str]) -> tuple[list[InsideRow], list[Hit]]:
    """What the graph holds, a figure per listed kind (ICLR's own editions and awards where a
    kind holds other conferences' too), and those others by name, in their lists' order."""
    rows: list[InsideRow] = []
    others: list[Hit] = []
    for kind in LISTED:
        total = index.browse(kind, "name", 1)[1]
        if kind not in ICLR_OWN:
            rows.append(InsideRow(plural(kind), f"/resource/{kind}/", total))
            continue
        hits = index.browse(kind, "name", total)[0]
        others += [h for h in hits if h.iri not in iclr]
        if (words := ICLR_OWN[kind]) is not None:
            listed_at = (
                ICLR_PAGE if kind == ROOTS["ConferenceEdition"] else f"/resource/{kind}/?conference={ICLR_KEY}"
            )  # ICLR's page lists its editions; the list of awards, those given at ICLR
            rows.append(InsideRow(words, listed_at, sum(h.iri in iclr for h in hits)))
    return rows, others


# The organizations ranked on the front page are those that are no unit of another, each with the
# papers credited to it or its units: the count its own page gives (Google with DeepMind's papers)
FRONT_PAGE_ORGANIZATIONS = 10
UNITS = f"SELECT DISTINCT ?unit WHERE {{ GRAPH <{vocab.GRAPH_ENTITIES}> {{ ?unit iclr:subOrganizationOf ?parent }} }}"

FRONT_PAGE_AWARD_RANKING = 5  # organizations the awards panel ranks (the overview ranks more)
# What a ranking of organizations cannot count: papers whose sources credit no organization
# (most of ICLR 2024's honorable mentions), said under the ranking rather than silently left out
PAPERS_WITHOUT_CREDIT = """
SELECT (COUNT(?paper) AS ?n) WHERE { ?paper a iclr:Paper . FILTER NOT EXISTS { ?paper iclr:creditedOrganization ?any } }"""


def _front_page_lists(index: Index) -> dict[str, object]:
    """What the front page lists, from the entity index (read once per store generation)."""
    iclr = held_at(state().store(), ICLR) | {ICLR.value}
    editions = [h for h in index.browse("edition", "year", 50)[0] if h.iri in iclr]
    awards = [h for h in index.browse("award", "year", 50)[0] if h.iri in iclr][:12]
    units = {row[0].value for row in state().store().query(UNITS, prefixes=vocab.QUERY_PREFIXES)}
    ranked = [(iri, n) for iri, n in index.credited_counts() if iri not in units][:FRONT_PAGE_ORGANIZATIONS]
    labels = index.labels([iri for iri, _ in ranked])
    organizations = [(iri.rsplit("/", 1)[-1], *labels.get(iri, (iri, "")), n) for iri, n in ranked]
    awarded = award_ranking(state().store(), FRONT_PAGE_AWARD_RANKING)
    years = [h.year for h in editions if h.papers and h.year]
    award_labels = index.labels([iri.value for iri, _ in awarded.organizations])
    uncredited = next(iter(state().store().query(PAPERS_WITHOUT_CREDIT, prefixes=vocab.QUERY_PREFIXES)))[0]
    inside, context = _inside(index, iclr)
    return {
        "editions": editions,
        "awards": awards,
        "organizations": organizations,
        "inside": inside,
        "context": context,
        "editions_figures": edition_figures(state().store(), vocab.entity("conference", "iclr")),
        "award_ranking": [
            (iri.value.rsplit("/", 1)[-1], *award_labels.get(iri.value, (iri.value, "")), n)
            for iri, n in awarded.organizations
        ],
        "award_figures": ranking_figures(awarded),
        "award_notes": ranking_notes(awarded),
        "paper_years": (min(years), max(years)) if years else ("", ""),
        "award_rows": _award_rows(),
        "uncredited_papers": int(uncredited.value),
    }


def _award_rows() -> list[tuple[int, str, list[tuple[str, str, int]]]]:
    """Each edition with paper awards, or that sources say gave none: (year, edition key, [(award
    key, the ontology's local name of its kind, papers)]); an empty list: no paper award."""
    rows: dict[int, tuple[int, str, list[tuple[str, str, int]]]] = {}
    for row in overview(state().store()):
        kept = rows.setdefault(row.year, (row.year, row.edition.value.rsplit("/", 1)[-1], []))
        if row.award is not None and row.kind is not None:
            kept[2].append((row.award.value.rsplit("/", 1)[-1], row.kind.value.rsplit("#", 1)[-1], len(row.papers)))
    return [rows[year] for year in sorted(rows, reverse=True)]


@blueprint.route("/query")
def index() -> str | tuple[str, int]:
    text = request.args.get("query")
    view = request.args.get("view") or declared_view(text or "") or "table"
    context: dict[str, Any] = {
        "saved": state().saved,
        "view": view if view.split(" ", 1)[0] in VIEWS else "table",
        "prefixes": vocab.QUERY_PREFIXES,
    }
    if not text:
        return render_template("index.html", query=EXAMPLE, table=None, inferred=True, **context)
    return result_page("index.html", text, **context)


@blueprint.route("/queries")
def queries() -> Response | str:
    saved = state().saved
    if (
        request.accept_mimetypes.best_match(["text/html", "application/json"]) == "application/json"
        or request.args.get("format") == "json"
    ):
        return jsonify(
            [
                {
                    "name": q.name,
                    "title": q.title,
                    "description": q.description,
                    "title_zh": q.title_zh or None,
                    "description_zh": q.description_zh or None,
                    "params": [{"name": p.name, "kind": p.kind, "default": p.default} for p in q.params],
                    "url": f"/queries/{q.name}",
                }
                for q in saved.values()
            ]
        )
    return render_template("queries.html", saved=saved)


@blueprint.route("/queries/<name>")
def saved_query(name: str) -> Response | str | tuple[str, int]:
    if not NAME.match(name) or name not in state().saved:
        wording, values = "No saved query called {name}: /queries lists them.", {"name": repr(name)}
        raise NotFound(wording.format(**values), wording=wording, values=values)  # no entity comes close
    saved = state().saved[name]
    if not wants_html():
        return run_saved(saved)
    index = state().index()
    values = {p.name: request.args[p.name] for p in saved.params if request.args.get(p.name)}
    if (page_language := _page_language_of(saved)) is not None:
        values[PAGE_LANGUAGE] = page_language
    choices = {p.name: param_choices(index, p) for p in saved.params if p.kind == "iri"}
    try:
        values = {n: by_name(index, saved, n, v) for n, v in values.items()}
        substitutions = saved.substitutions(values)
    except QueryError as exc:
        context = {"saved": saved, "values": values, "choices": choices, "editable": saved.text}
        return render_template(
            "saved.html", query=saved.text, error=str(exc), inferred=True, **context
        ), exc.http_status
    editable = saved.text_with(values)  # "Open in the query page": the parameters written in
    imported = state().per_generation("imported", _holds_an_import)  # whether "none yet" is true
    return result_page(
        "saved.html",
        saved.text,
        substitutions,
        saved=saved,
        values=values,
        choices=choices,
        editable=editable,
        imported=imported,
    )


def _holds_an_import() -> bool:
    """Whether the graph holds an import's statements (public reviews come with one)."""
    return bool(state().store().query("ASK { ?source a iclr:DataImport }", prefixes=vocab.QUERY_PREFIXES))


CHOICES_LIMIT = 500


def param_kind(param: Param) -> str | None:
    """The kind of entity an IRI parameter takes, read from its default (…/resource/edition/…)."""
    parsed = kind_and_key(param.default or "")
    return parsed[0] if parsed else None


def param_choices(index: Index | None, param: Param) -> list[Hit]:
    """Entities a parameter can take, by name, for the form's autocompletion."""
    kind = param_kind(param)
    return index.browse(kind, "name", CHOICES_LIMIT)[0] if index and kind else []


def by_name(index: Index | None, saved: SavedQuery, name: str, value: str) -> str:
    """An IRI parameter given as a name ("Ian Gemp") becomes that entity's IRI (an exact match of
    one of its names, in the parameter's kind); IRIs and prefixed names pass through."""
    param = next(p for p in saved.params if p.name == name)
    kind = param_kind(param)
    if param.kind != "iri" or kind is None or index is None or ABSOLUTE_IRI.match(expand(value)):
        return value
    for hit in index.search(value, kind, 5):
        if fold(hit.label) == fold(value) or fold(hit.label_zh) == fold(value):
            return hit.iri
    raise QueryError.worded(
        "parameter {name}: no {kind} is called {value}; pick one from the list", name=name, kind=kind, value=repr(value)
    )


HEALTH_QUERY = "ASK { ?s ?p ?o }"  # costs the same at any size: a health check must (a load balancer waits on it)
HEALTH_TIMEOUT = 5.0


@blueprint.route("/favicon.ico")
def favicon() -> ResponseReturnValue:
    """Browsers ask for /favicon.ico whatever the page links; send them to the icon we have."""
    return redirect(url_for("static", filename="favicon.svg"), code=301)


@blueprint.route("/health")
def health() -> tuple[Response, int]:
    """ok only if a query can be answered now: an ASK goes through a query worker, under the
    same time and memory limits as any query (a damaged store cannot hang or bloat this process).
    The quads are the count the generation's record keeps (counting them took longer than the
    time limit at 50,000 papers); `process` says which web process answered."""
    started = time.perf_counter()
    try:
        start_query(HEALTH_QUERY, row_limit=1, timeout=HEALTH_TIMEOUT, client=None).rows  # noqa: B018 - run it
    except IclrKgError as exc:  # whatever stops a query makes the endpoint unhealthy
        return jsonify({"status": "unavailable", "error": str(exc)}), Unavailable.http_status
    folder = state().generation_folder()
    return jsonify(
        {
            "status": "ok",
            "generation": state().generation,
            "quads": generation_record(folder).get("quads") if folder is not None else None,
            "process": os.getpid(),
            "seconds": round(time.perf_counter() - started, 3),
        }
    ), 200


def warmed() -> list[tuple[str, Callable[[], Any]]]:
    """What a new generation's pages need computed before anyone asks (`AppState.warm`): /stats'
    counts, each saved query's whole answer (web/answers.py), then the first rows of each saved
    query whose answer depends on the store alone (no SERVICE, no NOW or RAND:
    `querytext.keepable`), as its page shows them by default (read from that answer)."""
    kept: list[tuple[str, Callable[[], Any]]] = [(counts.KEPT, stats_counts), *answers_to_keep()]
    for saved in state().saved.values():
        if keepable(saved.text):
            kept.append((rows_name(saved), functools.partial(saved_rows, saved)))
    return kept


def saved_rows(saved: SavedQuery) -> dict:
    """A saved query's first rows with its defaults, as its page shows them: read from its kept
    answer (web/answers.py) when there is one, else from one query worker (no request read)."""
    kept = kept_rows(saved, HTML_ROW_LIMIT)
    return kept if kept is not None else rows_outside_request(saved.text_with({}), HTML_ROW_LIMIT)


@blueprint.route("/stats")
def stats() -> str | tuple[str, int]:
    """Counts per graph and class, computed by query workers under the usual limits, once per
    store generation (they change only with it: a second visit costs no scan of the graph)."""
    started = time.perf_counter()
    counted = generation_counts().rows()
    graphs, classes = (rows_table(rows, started) for rows in counted[:2])
    identifiers = [
        (translate(kind), SCHEMES[scheme].label, int(n))
        for kind, scheme, n in ([term[1] for term in row] for row in counted[2].get("rows", []))
    ]
    for row in classes.rows:  # a class's count links to the list of its entities
        kind = class_kind(row[0].text.removeprefix("iclr:"))
        if kind:
            row[1].href = url_for("resources.browse", kind=kind)
    engine = state().settings.remote  # the SPARQL engine answering, on a remote backend
    labeler = Labeler(state().index(), language(), state().terms())
    titles = source_titles(state().store())  # a source's graph by the source's title, distinct
    named = sorted(
        ((*graph_name(row[0].text, labeler, titles), int(row[1].text.replace(",", "") or 0), row[0].text)
         for row in graphs.rows),
        key=lambda graph: _graph_order(graph[3], titles),
    )  # fmt: skip
    return render_template(
        "stats.html",
        graphs=named,
        triples=sum(n for _, _, n, _ in named),
        classes=classes,
        identifiers=identifiers,
        generation=state().generation,
        engine=engine,
        term_label=lambda curie: state().terms().label(curie.removeprefix("iclr:"), language()),
    )


# What each of our graphs holds, in words: /stats names them so (the IRI on hover)
GRAPH_NAMES = {
    vocab.GRAPH_ENTITIES: "the registries (people, organizations, editions, awards)",
    vocab.GRAPH_INFERRED: "derived by reasoning",
    vocab.GRAPH_ONTOLOGY: "the ontology",
    vocab.GRAPH_WIKIDATA: "links to Wikidata",
    vocab.GRAPH_UPDATES: "written by updates",
}


def graph_name(iri: str, labeler: Labeler, titles: Mapping[str, SourceTitle]) -> tuple[str, str | None]:
    """A graph's name for people (a source's: its kind and its title, `source_titles`), and the
    page about it (None: none)."""
    if iri in GRAPH_NAMES:
        return translate(GRAPH_NAMES[iri]), url_for("resources.ontology") if iri == vocab.GRAPH_ONTOLOGY else None
    if iri.startswith(vocab.GRAPH_SOURCE_BASE):
        key = iri.removeprefix(vocab.GRAPH_SOURCE_BASE)
        said = titles.get(source_of(iri).value)
        kind = labeler.terms.label(said.kind, labeler.lang) if said else translate("source")
        title = labeler.cell(Cell(said.title, lang=said.language)).text if said else key  # zh: in Simplified
        return f"{kind}: {title}", url_for("resources.resource", kind="source", key=key)
    return iri, None


def _graph_order(iri: str, titles: Mapping[str, SourceTitle]) -> tuple[int, str, str]:
    """Our own graphs first, in GRAPH_NAMES' order; then the sources' by kind, then by title."""
    if iri in GRAPH_NAMES:
        return (0, f"{list(GRAPH_NAMES).index(iri):03d}", "")
    said = titles.get(source_of(iri).value) if iri.startswith(vocab.GRAPH_SOURCE_BASE) else None
    return (1, said.kind, said.title.casefold()) if said else (2, iri, "")


@blueprint.route("/downloads")
def downloads() -> str:
    """The Data page: the graph as it is now (streamed), and every versioned release `iclr-kg
    dump` wrote into the releases folder, with each file's format, size and SHA-256."""
    return render_template("downloads.html", releases=releases(state().settings.releases))


@blueprint.route("/release/<version>/<path:name>")
def release_file(version: str, name: str) -> Response:
    """A released file, at the address the release's DCAT description gives it (downloadURL);
    only a name that release's SHA256SUMS lists is served."""
    found = released_file(state().settings.releases, version, name)
    if found is None:
        raise NotFound(f"Release {version} has no file {name!r}: its SHA256SUMS lists what it has.")
    path, listed = found
    saved = listed.media_type == "application/gzip"  # a download, not a page to show
    return send_file(path, mimetype=listed.media_type, as_attachment=saved, conditional=True, max_age=86400)


def class_kind(local: str) -> str | None:
    """The list holding the entities of the class `local`, if any."""
    known = state().terms()
    return next((kind for root, kind in ROOTS.items() if local in known.below(root)), None)


SEARCH_LIMIT = 50
TOPIC_PREVIEW = 10  # papers on the topic shown under the name matches; their tab has them all


# A tab of search's page: a listed kind's matches by name, or papers by topic
SearchTab = EntityKind | Literal["topic"]


@dataclass(frozen=True)
class SearchAsked:
    """A search as asked: its words, its tab (a listed kind, topics, or none: every kind), its
    page size, the matches each tab counts, and the page asked of the tab's pages."""

    text: str
    kind: SearchTab | None
    limit: int
    counts: dict[str, int]
    pages: int
    page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit


@blueprint.route("/search")
def search() -> ResponseReturnValue:
    """Entities by name, title, alias or Chinese name; `format=json` (or Accept) for autocompletion."""
    text = request.args.get("q", "").strip()[:200]
    json_asked = _json_asked()
    pasted = recognize(text) if not json_asked else None
    if pasted:  # an ORCID iD, a dblp or Wikidata URL...: the entity it names, if we have it
        return redirect(url_for("resources.by_identifier", scheme=SCHEMES[pasted[0]].path, value=pasted[1]), code=303)
    index = state().index()
    asked = _search_asked(text, index, json_asked)
    hits = _search_hits(index, asked, json_asked)
    if json_asked:
        pages = max(asked.pages, 1)
        return jsonify({"query": text, "page": asked.page, "pages": pages, "results": [_hit_json(h) for h in hits]})
    exact = [h for h in hits if fold(h.label) == fold(text)]
    if len(exact) == 1 and not asked.kind and request.args.get("all") is None:  # the one entity so named
        return redirect(url_for("resources.resource", kind=exact[0].kind, key=exact[0].key), code=303)
    return _search_page(index, asked, hits)


def _json_asked() -> bool:
    """Matches as JSON (type-ahead): `format=json`, or an Accept that prefers JSON to HTML."""
    return request.args.get("format") == "json" or (
        request.accept_mimetypes.best_match(["text/html", "application/json"]) == "application/json"
    )


def _search_asked(text: str, index: Index | None, json_asked: bool) -> SearchAsked:
    """The tab, page size and page asked, checked, with the counts the tabs show and a kind's
    paging needs (type-ahead, JSON without a kind, does without: it asks on every key pressed)."""
    tabs: tuple[SearchTab, ...] = (*LISTED, TOPIC)
    kind = next((tab for tab in tabs if tab == request.args.get("kind")), None)
    limit = min(max(request.args.get("limit", SEARCH_LIMIT, type=int) or SEARCH_LIMIT, 1), SEARCH_LIMIT)
    counts = index.match_counts(text) if index and text and (kind or not json_asked) else {}
    # a kind's tab pages through all its matches (as many as its count says); else the best ones
    pages = -(-counts.get(kind or "", 0) // limit)
    page = min(max(request.args.get("page", 1, type=int) or 1, 1), max(pages, 1))
    return SearchAsked(text, kind, limit, counts, pages, page)


def _search_hits(index: Index | None, asked: SearchAsked, json_asked: bool) -> list[Hit]:
    """The matches shown: a tab's page of them; on the page of every kind, the best of each as
    the kinds' tabs rank them; for type-ahead, the best of all."""
    if index is None:
        return []
    if asked.kind == TOPIC:
        return index.topic_page(asked.text, asked.limit, asked.offset) if asked.pages else []
    if asked.kind and asked.pages:
        return index.search_page(asked.text, asked.kind, asked.limit, asked.offset)
    if not asked.kind and not json_asked and any(k in LISTED for k in asked.counts):
        return index.search_ranked(asked.text, [k for k in LISTED if k in asked.counts], asked.limit)
    return index.search(asked.text, asked.kind, asked.limit) if asked.text else []


def _search_groups(index: Index | None, asked: SearchAsked, hits: list[Hit]) -> dict[str, list[Hit]]:
    """The matches by kind (a tab's, all under it); on the page of every kind, after the names,
    the papers about the words that are not among them already (up to TOPIC_PREVIEW)."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(TOPIC if asked.kind == TOPIC else hit.kind, []).append(hit)
    if index and not asked.kind and asked.counts.get(TOPIC):
        listed = {hit.iri for hit in hits}
        preview = index.topic_page(asked.text, TOPIC_PREVIEW + len(listed), 0)
        groups[TOPIC] = [hit for hit in preview if hit.iri not in listed][:TOPIC_PREVIEW]
    return groups


def _topic_papers_above(index: Index | None, asked: SearchAsked, hits: list[Hit]) -> int:
    """How many of the papers the topic count counts are listed above, matched by name: the
    topic section leaves them out and says so (else "3 papers on the topic" over an empty list)."""
    expression = index.topic_filter(asked.text) if index and not asked.kind and asked.counts.get(TOPIC) else None
    papers = tuple(hit.iri for hit in hits if hit.kind == "paper")
    if index is None or expression is None or not papers:
        return 0
    return index.browse("paper", "name", 0, 0, ListFilter(topic=expression, among=papers))[1]


def _search_page(index: Index | None, asked: SearchAsked, hits: list[Hit]) -> str:
    text, counts = asked.text, asked.counts
    shown = (asked.offset + 1, asked.offset + len(hits)) if asked.kind and asked.pages else None
    # the topic's tab narrows by year: each year with its papers, linked to the list of them
    expression = index.topic_filter(text) if index and asked.kind == TOPIC and asked.pages else None
    years = index.facets("paper", (), ListFilter(topic=expression)).get("year", []) if index and expression else []
    return render_template(
        "search.html",
        q=text,
        groups=list(_search_groups(index, asked, hits).items()),
        plural=plural,
        total=len(hits),
        counts=counts,
        kind=asked.kind,
        limit=asked.limit,
        pager_limit=asked.limit
        if asked.limit != SEARCH_LIMIT
        else None,  # a page size asked for stays on the pager's links
        page=asked.page,
        pages=asked.pages,
        shown=shown,
        years=years,
        topic_above=_topic_papers_above(index, asked, hits),
        # Chinese words topic search cannot read: it says topics are English, with examples
        topics_in_english=bool(text) and not counts.get(TOPIC) and untranslated(fold(text)),
    )


def _hit_json(hit: Hit) -> dict[str, object]:
    """A search result for autocompletion, its facts line in the reader's language."""
    lang = language()
    return {**hit.as_json(), "facts": readable_facts(hit.facts_in(lang), lang, state().terms())}
