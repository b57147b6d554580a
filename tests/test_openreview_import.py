"""`iclr-kg import openreview`: the real openreview-py client against a local OpenReview stand-in.

The fixture venue is made up here: an oral that is also in our curated data (EigenGame), an
author with two papers, a poster, a rejected paper, a withdrawn and a desk-rejected one, authors
with and without profiles, affiliations known and unknown to the registry, and reviews.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import Store

from iclr_kg import vocab
from iclr_kg.build.pipeline import build
from iclr_kg.config import Settings
from iclr_kg.errors import ImportFailed
from iclr_kg.external.importfolder import tree_digest
from iclr_kg.external.openreview_import import run_import
from iclr_kg.store import open_read_only, run_query
from testbed.helpers import dead_url, serving
from testbed.openreview_standin import Paper, StandIn, profile, venue_id, venue_notes

V1_VENUE = "ICLR.cc/2021/Conference"
V2_VENUE = "ICLR.cc/2024/Conference"
GRAPH = "https://w3id.org/iclr-kg/graph/source/openreview-iclr-2021"

PAPERS = [
    Paper(
        "NzTU59SYbNq",
        "EigenGame: PCA as a Nash Equilibrium",
        [
            ("Ian Gemp", "~Ian_Gemp1"),
            ("Brian McWilliams", "~Brian_McWilliams2"),
            ("Claire Vernade", "~Claire_Vernade1"),
            ("Thore Graepel", "~Thore_Graepel1"),
        ],
        "oral",
        [("RevEigen001", 8, 4), ("RevEigen002", 7, 3), ("RevEigen003", 8, 5)],
    ),
    Paper(
        "MadeUp00001",
        "A Made-Up Study of Attention Sinks",
        [("Jane Roe", "~Jane_Roe1"), ("Ian Gemp", "~Ian_Gemp1")],
        "poster",
        [("RevMadeUp01", 6, 3), ("RevMadeUp02", 5, 4)],
    ),
    Paper(
        "MadeUp00002",
        "Another Made-Up Paper on Pruning",
        [("Jane Roe", "~Jane_Roe1"), ("Max Mustermann", None)],
        "reject",
        [("RevMadeUp03", 3, 4)],
    ),
    Paper("MadeUp00003", "A Withdrawn Made-Up Paper", [("Alex Example", "~Alex_Example1")], "withdrawn"),
    Paper("MadeUp00004", "A Desk-Rejected Made-Up Paper", [("Alex Example", "~Alex_Example1")], "desk-rejected"),
    Paper("MadeUp00006", "A Rejected Paper Whose Authors Stayed Anonymous", [("Anonymous", None)], "reject"),
    Paper(
        "MadeUp00005",
        "A Made-Up Spotlight on Diffusion",
        [("Yang Song", "~Yang_Song7"), ("Jane Roe", "~Jane_Roe1")],
        "spotlight",
        [("RevMadeUp04", 8, 4)],
    ),
]
PROFILES = {
    p["id"]: p
    for p in [
        profile("~Ian_Gemp1", "Ian Gemp", "DeepMind", "deepmind.com"),
        profile("~Jane_Roe1", "Jane Roe", "Example Institute of Learning", "example.edu", "PhD student"),
        profile("~Alex_Example1", "Alex Example", "Google", "google.com"),
        profile("~Yang_Song7", "Yang Song", "Example Institute of Learning", "example.edu"),
    ]
}


@pytest.fixture()
def v1_server():
    server = StandIn(venue_notes("v1", V1_VENUE, PAPERS), PROFILES).start()
    yield server
    server.stop()


@pytest.fixture()
def v2_server():
    """API v2: the 2024 venue's group carries a domain, as on OpenReview."""
    papers = [
        Paper("V2Paper0001", "A Made-Up Oral of 2024", [("Jane Roe", "~Jane_Roe1")], "oral", [("RevV2Pap01", 10, 4)]),
        Paper(
            "V2Paper0002",
            "A Made-Up Rejection of 2024",
            [("Alex Example", "~Alex_Example1")],
            "reject",
            [("RevV2Pap02", 3, 2)],
        ),
        Paper("V2Paper0003", "A Made-Up Withdrawal of 2024", [("Alex Example", "~Alex_Example1")], "withdrawn"),
    ]
    group = {
        "id": V2_VENUE,
        "domain": V2_VENUE,
        "members": [],
        "content": {"submission_id": {"value": f"{V2_VENUE}/-/Submission"}},
    }
    server = StandIn(venue_notes("v2", V2_VENUE, papers), PROFILES, groups={V2_VENUE: group}).start()
    yield server
    server.stop()


def settings_for(tmp_path: Path, v1: StandIn, v2: StandIn | None = None) -> Settings:
    return Settings(
        store=tmp_path / "store",
        openreview_api=v1.url,
        openreview_api_v2=(v2 or v1).url,
        openreview_pause=0,
        openreview_retries=0,
    )


def ask(store: Store, query: str) -> list[tuple[str, ...]]:
    return [tuple(term.value if term is not None else None for term in row) for row in run_query(store, query)]


def test_import_then_build_answers_with_both_sources(tmp_path: Path, v1_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server)
    result = run_import(settings, V1_VENUE, reviews=True)
    assert result.api == "v1" and result.changed  # detected: the v2 API does not know the venue
    assert result.stats["submissions"] == 7 and result.stats["withdrawn"] == 1 and result.stats["desk-rejected"] == 1
    assert result.folder == settings.imports / "openreview-iclr-2021"
    build(settings)
    store = open_read_only(settings.store)

    decisions = dict(
        ask(store, f"""SELECT ?id ?d WHERE {{ GRAPH <{GRAPH}> {{ ?p iclr:openReviewId ?id ; iclr:decision ?d }} }}""")
    )
    assert {k: v.rsplit("#", 1)[1] for k, v in decisions.items()} == {
        "NzTU59SYbNq": "Accepted",
        "MadeUp00001": "Accepted",
        "MadeUp00002": "Rejected",
        "MadeUp00003": "Withdrawn",
        "MadeUp00004": "DeskRejected",
        "MadeUp00005": "Accepted",
        "MadeUp00006": "Rejected",
    }
    # A never de-anonymized submission has no authors, not a person called "Anonymous".
    assert ask(store, "SELECT ?who WHERE { ?a iclr:authorshipOf paper:MadeUp00006 ; iclr:authorshipBy ?who }") == []

    # The paper also in our curated data is one entity: the import's authors are the curated people.
    authors = ask(
        store,
        f"""SELECT ?pos ?who WHERE {{ GRAPH <{GRAPH}> {{ ?a iclr:authorshipOf paper:NzTU59SYbNq ;
                                iclr:authorPosition ?pos ; iclr:authorshipBy ?who }} }} ORDER BY ?pos""",
    )
    assert [who.rsplit("/", 1)[1] for _, who in authors] == [
        "ian-gemp",
        "brian-mcwilliams",
        "claire-vernade",
        "thore-graepel",
    ]
    # An author with two papers, known by profile id from now on.
    titles = ask(store, "SELECT ?t WHERE { ?p iclr:hasAuthor person:ian-gemp ; iclr:title ?t }")
    assert {("A Made-Up Study of Attention Sinks",), ("EigenGame: PCA as a Nash Equilibrium",)} <= set(titles)
    assert ask(store, "SELECT ?id WHERE { person:ian-gemp iclr:openReviewProfile ?id }") == [("~Ian_Gemp1",)]
    # A profile unknown to the registry is matched by name (and the link recorded in the import);
    # new people and organizations exist once and are flagged for curation.
    assert ask(store, "SELECT ?id WHERE { person:yang-song iclr:openReviewProfile ?id }") == [("~Yang_Song7",)]
    flagged = ask(store, "SELECT ?e WHERE { ?e iclr:needsCuration true } ORDER BY ?e")
    assert [e.rsplit("/", 2)[1] + "/" + e.rsplit("/", 1)[1] for (e,) in flagged] == [
        "organization/or-example-institute-of-learning",
        "person/or-alex-example1",
        "person/or-jane-roe1",
        "person/or-max-mustermann",
    ]
    assert ask(store, "SELECT ?o WHERE { paper:MadeUp00003 iclr:creditedOrganization ?o }") == [
        ("https://w3id.org/iclr-kg/resource/organization/google",)
    ]

    # Reviews: rating and confidence per review, attributed to the import.
    reviews = ask(
        store,
        f"""SELECT ?r ?c WHERE {{ GRAPH <{GRAPH}> {{ ?x iclr:reviewOf paper:NzTU59SYbNq ;
                               iclr:rating ?r ; iclr:confidence ?c }} }} ORDER BY ?c""",
    )
    assert reviews == [("7", "3"), ("8", "4"), ("8", "5")]

    # Curated facts stay; where the import and an article disagree, both remain, each attributed.
    counts = ask(
        store,
        """SELECT ?n ?src WHERE { GRAPH ?g { edition:iclr2021 iclr:submissionCount ?n }
                                                 ?g iclr:statedIn ?src } ORDER BY ?n""",
    )
    assert ("7", "https://w3id.org/iclr-kg/resource/source/openreview-iclr-2021") in counts
    assert any(n != "7" for n, _ in counts)
    provenance = ask(
        store,
        "SELECT ?type ?venue ?service WHERE { source:openreview-iclr-2021 a ?type ; iclr:venueId ?venue ; iclr:service ?service }",
    )
    assert ("https://w3id.org/iclr-kg/ontology#DataImport", V1_VENUE, v1_server.url) in provenance


def test_saved_queries_on_imported_data(tmp_path: Path, v1_server: StandIn) -> None:
    from iclr_kg.config import resource_dir
    from iclr_kg.sparql.saved import load_saved

    settings = settings_for(tmp_path, v1_server)
    run_import(settings, V1_VENUE, reviews=True)
    build(settings)
    store = open_read_only(settings.store)
    saved = load_saved(resource_dir("queries"))

    def rows(name: str) -> list[tuple[str, ...]]:
        return ask_with(store, saved[name].text, saved[name].substitutions())

    top = rows("top-rated-papers")
    assert len(top[0]) == 7  # year, paper (shown by its title: no title column), average, reviews...
    assert [(r[1].rsplit("/", 1)[1], r[2], r[3]) for r in top][:3] == [
        ("MadeUp00005", "8", "1"),
        ("NzTU59SYbNq", "7.666666666666666666", "3"),
        ("MadeUp00001", "5.5", "2"),
    ]
    assert "Outstanding Paper" in top[1][6]  # the award comes from the curated articles
    spread = {(r[1], r[2]): (r[3], r[4]) for r in rows("award-ratings-vs-accepted")}
    assert spread[("award papers", "8")] == ("2", "0.666666666666666666")
    assert spread[("other accepted papers", "8")] == ("1", "0.333333333333333333")
    by_org = {r[0].rsplit("/", 1)[1]: r[1:] for r in rows("decisions-per-organization")}
    # Example Institute: a poster, a rejection and a spotlight (credited through two authors' profiles)
    assert by_org["or-example-institute-of-learning"] == ("3", "3", "2", "0", "1", "1", "1", "0")


def ask_with(store: Store, query: str, substitutions) -> list[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    return [
        tuple(term.value if term is not None else None for term in row)
        for row in run_query(store, query, substitutions=substitutions)
    ]


def test_without_reviews_no_review_is_imported(tmp_path: Path, v1_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server)
    result = run_import(settings, V1_VENUE, api="v1")
    assert result.stats["reviews"] == 0
    assert '"reviews"' not in (result.folder / "sources" / "openreview-iclr-2021.yaml").read_text()


def test_api_v2_venue_is_detected_and_read(tmp_path: Path, v1_server: StandIn, v2_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server, v2_server)
    result = run_import(settings, V2_VENUE, reviews=True)
    assert result.api == "v2"
    assert result.stats["submissions"] == 3 and result.stats["accepted"] == 1 and result.stats["withdrawn"] == 1
    build(settings)
    store = open_read_only(settings.store)
    assert ask(
        store,
        "SELECT ?t ?r WHERE { paper:V2Paper0001 iclr:presentationType ?t . ?x iclr:reviewOf paper:V2Paper0001 ; iclr:rating ?r }",
    ) == [("https://w3id.org/iclr-kg/ontology#Oral", "10")]


def test_interrupted_import_writes_nothing_and_resumes(tmp_path: Path, v1_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server)
    v1_server.fail_after = 1  # the first page gets through (a 2021 venue needs no v2 probe); then the service fails
    with pytest.raises(
        ImportFailed, match=r"OpenReview at http://127\.0\.0\.1:\d+ answered with an error: Internal server error"
    ):
        run_import(settings, V1_VENUE, reviews=True)
    assert not (settings.imports / "openreview-iclr-2021").exists()
    cached = sorted(p.name for p in (settings.imports / ".cache").rglob("*.json"))
    assert cached == ["Blind_Submission-00000-1000.json"]

    v1_server.fail_after, v1_server.requests[:] = None, []
    result = run_import(settings, V1_VENUE, reviews=True, api="v1")
    assert result.changed and result.stats["submissions"] == 7
    asked = [r.split("?")[0] for r in v1_server.requests]
    # the cached page is not asked again; profiles are looked up by e-mail, then by id
    assert asked == ["GET /notes", "GET /notes", "POST /profiles/search", "POST /profiles/search"]
    assert "Blind_Submission" not in " ".join(v1_server.requests)


def test_server_error_is_one_clear_line_from_the_cli(tmp_path: Path, v1_server: StandIn) -> None:
    v1_server.fail_after = 0
    env = {
        **os.environ,
        "ICLR_KG_OPENREVIEW_API": v1_server.url,
        "ICLR_KG_OPENREVIEW_API_V2": v1_server.url,
        "ICLR_KG_OPENREVIEW_PAUSE": "0",
        "ICLR_KG_OPENREVIEW_RETRIES": "1",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "iclr_kg.cli",
            "import",
            "openreview",
            "--venue",
            V1_VENUE,
            "--api",
            "v1",
            "--store",
            str(tmp_path / "store"),
        ],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: OpenReview at {v1_server.url} answered with an error: Internal server error")
    assert "Traceback" not in done.stderr
    assert len(v1_server.requests) == 2  # one retry, then the error
    assert not (tmp_path / "imports" / "openreview-iclr-2021").exists()


def test_unreachable_service_is_a_clear_error(tmp_path: Path) -> None:

    url = dead_url("").rstrip("/")
    settings = Settings(
        store=tmp_path / "store", openreview_api=url, openreview_api_v2=url, openreview_pause=0, openreview_retries=0
    )
    with pytest.raises(ImportFailed, match=f"OpenReview at {url} could not be reached: ConnectionError"):
        run_import(settings, V1_VENUE, api="v1")


def test_reimport_changes_nothing(tmp_path: Path, v1_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server)
    first = run_import(settings, V1_VENUE, reviews=True)
    before = {p: p.read_bytes() for p in first.folder.rglob("*") if p.is_file()}
    v1_server.requests[:] = []
    again = run_import(settings, V1_VENUE, reviews=True, refresh=True)  # fetched anew from the service
    assert not again.changed and v1_server.requests
    assert {p: p.read_bytes() for p in again.folder.rglob("*") if p.is_file()} == before
    cached = run_import(settings, V1_VENUE, reviews=True, api="v1")  # from the disk cache: no request at all
    assert not cached.changed and cached.requests == 0


def test_partial_import_states_no_counts(tmp_path: Path, v1_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server)
    result = run_import(settings, V1_VENUE, api="v1", limit=2)
    text = (result.folder / "sources" / "openreview-iclr-2021.yaml").read_text()
    import yaml

    facts = yaml.safe_load(text)["editions"][0]
    assert result.stats["submissions"] == 2 and "submissions" not in facts and "partial import" in facts["note"]


def test_new_edition_is_created_for_an_unknown_year(tmp_path: Path) -> None:
    venue = "ICLR.cc/2027/Conference"
    server = StandIn(
        venue_notes(
            "v2", venue, [Paper("Y2027Pap01", "A Made-Up Paper of 2027", [("Jane Roe", "~Jane_Roe1")], "poster")]
        ),
        PROFILES,
    ).start()
    try:
        settings = settings_for(tmp_path, server)
        result = run_import(settings, venue, api="v2")
        assert '"key": "iclr2027"' in (result.folder / "events.yaml").read_text()
        build(settings)
        assert ask(
            open_read_only(settings.store), "SELECT ?y WHERE { paper:Y2027Pap01 iclr:submittedTo/iclr:year ?y }"
        ) == [("2027",)]
    finally:
        server.stop()


@pytest.mark.parametrize(
    "venue", ["NeurIPS.cc/2021/Conference", "ICLR.cc/2021/Conference/../../etc", "ICLR.cc/21/Conference"]
)
def test_only_iclr_venues_are_accepted(tmp_path: Path, venue: str) -> None:
    with pytest.raises(ImportFailed, match="unsupported venue"):
        run_import(Settings(store=tmp_path / "store", openreview_pause=0), venue, api="v1")


def test_identities_whose_names_fold_alike_stay_apart(tmp_path: Path) -> None:
    """A name-only author and a profile whose id folds to the same key are two new people."""
    papers = [
        Paper(
            "Collide001",
            "A Paper by Two Similar Names",
            [("Kim Example28271", None), ("Kim Example", "~Kim_Example28271")],
            "poster",
        ),
        Paper("Collide002", "A Second Paper by One of Them", [("Kim Example", "~Kim_Example28271")], "reject"),
    ]
    server = StandIn(venue_notes("v1", V1_VENUE, papers), {}).start()
    try:
        settings = settings_for(tmp_path, server)
        result = run_import(settings, V1_VENUE, api="v1")
        assert result.stats["new people"] == 2
        build(settings)
        rows = ask(
            open_read_only(settings.store),
            """SELECT ?p (COUNT(?paper) AS ?n) WHERE { ?paper iclr:hasAuthor ?p .
                   FILTER (STRSTARTS(STR(?p), STR(person:or-kim))) } GROUP BY ?p ORDER BY ?p""",
        )
        assert [(p.rsplit("/", 1)[1], n) for p, n in rows] == [
            ("or-kim-example28271", "1"),
            ("or-kim-example28271-2", "2"),
        ]
    finally:
        server.stop()


# --------------------------------------------------------------------------------------------
# Each year as OpenReview wrote it (issue #20, item 1 in part; item 7)

YEAR_PAPERS = [
    Paper("YearOral001", "An Oral of the Year", [("Jane Roe", "~Jane_Roe1")], "oral", [("RevYear0001", 8, 4)]),
    Paper(
        "YearPost001", "A Poster of the Year", [("Alex Example", "~Alex_Example1")], "poster", [("RevYear0002", 6, 3)]
    ),
    Paper(
        "YearRej0001",
        "A Rejection of the Year",
        [("Alex Example", "~Alex_Example1")],
        "reject",
        [("RevYear0003", 3, 5)],
    ),
]


def import_year(
    tmp_path: Path, year: int, papers: list[Paper] = YEAR_PAPERS, api: str = "v1", emails: dict | None = None
) -> tuple[Store, dict]:
    venue = venue_id(year)
    groups = {venue: {"id": venue, "domain": venue, "members": []}} if api == "v2" else None
    server = StandIn(venue_notes(api, venue, papers), PROFILES, groups=groups, emails=emails).start()
    try:
        settings = settings_for(tmp_path, server)
        result = run_import(settings, venue, reviews=True)
        build(settings)
    finally:
        server.stop()
    return open_read_only(settings.store), result.stats


def edition_figures(store: Store, year: int) -> dict[str, str]:
    rows = ask(
        store,
        f"""SELECT ?p ?v WHERE {{ GRAPH <https://w3id.org/iclr-kg/graph/source/openreview-iclr-{year}> {{
          ?e a ?t ; ?p ?v . FILTER (?p IN (iclr:acceptedCount, iclr:oralCount, iclr:spotlightCount, iclr:submissionCount))
        }} }}""".replace("?e a ?t ; ", "?e "),
    )
    return {p.rsplit("#", 1)[1]: v for p, v in rows}


def ratings(store: Store) -> list[tuple[str, ...]]:
    return ask(
        store,
        "SELECT ?r ?rating WHERE { ?r iclr:reviewOf ?p ; iclr:rating ?rating . FILTER (STRSTARTS(STR(?r), STR(review:RevYear))) } ORDER BY ?r",
    )


def test_2019_decisions_come_from_the_meta_review(tmp_path: Path) -> None:
    store, stats = import_year(tmp_path, 2019)
    assert (stats["accepted"], stats["rejected"]) == (2, 1)
    assert edition_figures(store, 2019)["acceptedCount"] == "2" and edition_figures(store, 2019)["oralCount"] == "1"


def test_2020_talks_are_its_orals_and_reviews_have_no_confidence(tmp_path: Path) -> None:
    store, _ = import_year(tmp_path, 2020)
    assert edition_figures(store, 2020)["oralCount"] == "1"
    assert ask(store, "SELECT ?c WHERE { review:RevYear0001 iclr:confidence ?c }") == []
    assert [r[1] for r in ratings(store)] == ["8", "6", "3"]


@pytest.mark.parametrize("year", [2022, 2023])
def test_2022_and_2023_scores_come_from_the_recommendation(tmp_path: Path, year: int) -> None:
    store, stats = import_year(tmp_path, year)
    assert stats["reviews"] == 3 and [r[1] for r in ratings(store)] == ["8", "6", "3"]


def test_2023_notable_tiers_are_accepted_without_a_made_up_oral_count(tmp_path: Path) -> None:
    store, stats = import_year(tmp_path, 2023)
    figures = edition_figures(store, 2023)
    assert stats["accepted"] == 2 and figures["acceptedCount"] == "2"
    assert "oralCount" not in figures and "spotlightCount" not in figures  # unknown, not 0


def test_a_venue_under_review_states_no_accepted_count(tmp_path: Path) -> None:
    pending = [Paper(f"Pending{i:04d}", f"Under Review {i}", [("Jane Roe", "~Jane_Roe1")], "pending") for i in range(3)]
    store, stats = import_year(tmp_path, 2025, pending, api="v2")
    figures = edition_figures(store, 2025)
    assert stats["submissions"] == 3 and figures == {"submissionCount": "3"}


def test_a_v1_year_needs_no_v2_probe(tmp_path: Path, v1_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server).replace(openreview_api_v2=dead_url("").rstrip("/"))
    result = run_import(settings, V1_VENUE)  # --api auto
    assert result.api == "v1" and not any("/groups" in r for r in v1_server.requests)


def test_the_page_cache_is_kept_per_service(tmp_path: Path) -> None:
    first = StandIn(venue_notes("v1", V1_VENUE, PAPERS), PROFILES).start()
    second = StandIn(venue_notes("v1", V1_VENUE, PAPERS), PROFILES).start()
    try:
        run_import(settings_for(tmp_path, first), V1_VENUE)
        again = run_import(settings_for(tmp_path, second), V1_VENUE)
        assert again.requests > 0 and second.requests  # the second service is asked, not read from the first's pages
    finally:
        first.stop()
        second.stop()


def test_an_empty_venue_says_so_and_writes_nothing(tmp_path: Path) -> None:
    server = StandIn({}, {}).start()
    try:
        settings = settings_for(tmp_path, server)
        with pytest.raises(ImportFailed, match=r"no submissions found for ICLR\.cc/2031/Conference"):
            run_import(settings, "ICLR.cc/2031/Conference")  # a year not yet open: API v2, nothing listed
        assert not (settings.imports / "openreview-iclr-2031").exists()
        with pytest.raises(ImportFailed, match=r"ICLR began in 2013"):  # no edition to ask about at all
            run_import(settings, "ICLR.cc/2012/Conference")
        assert server.requests == [] or all("2031" in r for r in server.requests)
    finally:
        server.stop()


def test_stale_staging_folders_of_killed_imports_are_removed(tmp_path: Path, v1_server: StandIn) -> None:
    settings = settings_for(tmp_path, v1_server)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    stale = settings.imports / f".staging-openreview-iclr-2021-{dead.stdout.strip()}"
    (stale / "sources").mkdir(parents=True)
    run_import(settings, V1_VENUE)
    assert not stale.exists()


def test_a_record_that_breaks_a_shape_is_kept_out_and_the_graph_builds(tmp_path: Path) -> None:
    """One bad record never blocks the graph: a two-letter title breaks the title's shape."""
    papers = [*YEAR_PAPERS, Paper("Broken0001", "AB", [("Alex Example", "~Alex_Example1")], "withdrawn")]
    store, stats = import_year(tmp_path, 2019, papers)  # builds: SHACL passes
    assert stats["kept out (break a shape)"] == 1 and stats["submissions"] == 4
    assert ask(store, "SELECT * WHERE { paper:Broken0001 ?p ?o }") == []
    note = ask(
        store,
        "SELECT ?n WHERE { GRAPH <https://w3id.org/iclr-kg/graph/source/openreview-iclr-2019> { ?e iclr:note ?n } }",
    )
    assert any("1 kept out of the graph: A paper's title is a string of 3 or more" in n for (n,) in note)


def test_a_submission_whose_title_was_taken_down_is_kept_without_one(tmp_path: Path) -> None:
    """Six real withdrawn 2019 submissions show "NA" for title and authors: each is still a
    submission, with its decision and reviews, and no invented title (issue #37, item 8)."""
    redacted = Paper("Withdrawn01", "NA", [("NA", "")], "withdrawn", [("RevNA00001", 3, 4)])
    store, stats = import_year(tmp_path, 2019, [*YEAR_PAPERS, redacted])
    assert stats["submissions"] == len(YEAR_PAPERS) + 1 and "kept out (break a shape)" not in stats
    facts = dict(ask(store, "SELECT ?p ?o WHERE { GRAPH ?g { paper:Withdrawn01 ?p ?o } }"))
    assert facts[vocab.ONTOLOGY_NS + "titleWithdrawn"] == "true"
    assert facts[vocab.ONTOLOGY_NS + "decision"] == vocab.ONTOLOGY_NS + "Withdrawn"
    assert vocab.ONTOLOGY_NS + "title" not in facts and vocab.ONTOLOGY_NS + "firstAuthor" not in facts
    assert ask(store, "SELECT ?r WHERE { ?r iclr:reviewOf paper:Withdrawn01 }") != []
    withdrawn = ask(
        store, "SELECT (COUNT(?p) AS ?n) WHERE { ?p iclr:submittedTo edition:iclr2019 ; iclr:decision iclr:Withdrawn }"
    )
    assert int(withdrawn[0][0]) == 1 + sum(p.outcome == "withdrawn" for p in YEAR_PAPERS)
    from iclr_kg.web import create_app

    client = create_app(Settings(store=tmp_path / "store")).test_client()
    for lang, words in (("en", "title withdrawn"), ("zh", "标题已撤下")):
        page = client.get("/resource/paper/Withdrawn01", query_string={"lang": lang}).get_data(as_text=True)
        assert f"<h1>[{words}" in page and "NA" not in page.split("<h1>", 1)[1].split("</h1>", 1)[0]


def test_each_year_keeps_its_rating_and_confidence_scales(tmp_path: Path) -> None:
    """Issue #20, item 6: the levels the year's reviews used, so ratings can be compared across years."""
    store, _ = import_year(tmp_path, 2022)
    levels = [v for (v,) in ask(store, "SELECT ?l WHERE { edition:iclr2022 iclr:ratingScaleLevel ?l } ORDER BY ?l")]
    assert "8: accept, good paper" in levels
    confidence = ask(store, "SELECT ?l WHERE { edition:iclr2022 iclr:confidenceScaleLevel ?l }")
    assert ("4: You are confident",) in confidence
    from iclr_kg.config import resource_dir
    from iclr_kg.sparql.saved import load_saved

    saved = load_saved(resource_dir("queries"))["ratings-by-year-normalized"]
    [row] = ask(store, saved.text)
    year, reviews, average, top, normalized = row
    assert (year[:4], reviews, top) == ("2022", "3", "8") and abs(float(normalized) - float(average) / 8) < 1e-9


def test_the_credited_organization_is_the_authors_affiliation_in_that_year(tmp_path: Path) -> None:
    """Issue #20, item 4: the institution from the profile's history that covers the submission's
    year, not the current one (a move from one institution to another in 2020)."""
    moved = profile("~Mover_One1", "Mover One", "Later Institute", "later.example.edu")
    moved["content"]["history"] = [
        {
            "position": "PhD student",
            "start": 2016,
            "end": 2019,
            "institution": {"name": "Earlier University", "domain": "earlier.example.edu"},
        },
        {
            "position": "Researcher",
            "start": 2020,
            "end": None,
            "institution": {"name": "Later Institute", "domain": "later.example.edu"},
        },
    ]
    papers = [Paper("MoverPaper1", "A Paper Written While Moving", [("Mover One", "~Mover_One1")], "poster", [])]
    credited = {}
    for year in (2019, 2021):
        venue = f"ICLR.cc/{year}/Conference"
        server = StandIn(venue_notes("v1", venue, papers), {"~Mover_One1": moved}).start()
        try:
            settings = settings_for(tmp_path / str(year), server)
            run_import(settings, venue)
            build(settings)
        finally:
            server.stop()
        rows = ask(
            open_read_only(settings.store),
            "SELECT ?n WHERE { paper:MoverPaper1 iclr:creditedOrganization/iclr:name ?n }",
        )
        credited[year] = {n for (n,) in rows}
    assert credited == {2019: {"Earlier University"}, 2021: {"Later Institute"}}


# --------------------------------------------------------------------------------------------
# Every edition (issue #20, items 1, 3 and 4)

EARLY_PAPERS = [
    *YEAR_PAPERS,
    Paper(
        "YearWork001", "A Paper Sent to the Workshop", [("Jane Roe", "~Jane_Roe1")], "workshop", [("RevYear0004", 5, 3)]
    ),
]


def decisions(store: Store, year: int) -> dict[str, tuple[str, str | None]]:
    rows = ask(
        store,
        f"""SELECT ?paper ?d ?t WHERE {{ ?paper iclr:submittedTo edition:iclr{year} ; iclr:decision ?d .
            OPTIONAL {{ ?paper iclr:presentationType ?t }} }}""",
    )
    return {p.rsplit("/", 1)[1]: (d.rsplit("#", 1)[1], t.rsplit("#", 1)[1] if t else None) for p, d, t in rows}


def test_2013_decisions_are_read_from_the_submission_itself(tmp_path: Path) -> None:
    store, stats = import_year(tmp_path, 2013, EARLY_PAPERS)
    assert decisions(store, 2013) == {
        "YearOral001": ("Accepted", "Oral"),
        "YearPost001": ("Accepted", "Poster"),
        "YearRej0001": ("Rejected", None),
        "YearWork001": ("MovedToWorkshop", None),
    }
    assert stats["reviews"] == 0 and edition_figures(store, 2013)["acceptedCount"] == "2"


def test_2014_has_no_decisions_and_states_no_accepted_count(tmp_path: Path) -> None:
    store, stats = import_year(tmp_path, 2014, EARLY_PAPERS)
    assert decisions(store, 2014) == {} and stats["submissions"] == 4
    assert edition_figures(store, 2014) == {"submissionCount": "4"}


def test_2017_reads_its_lower_case_venue_its_acceptance_replies_and_authors_in_one_string(tmp_path: Path) -> None:
    papers = [
        *EARLY_PAPERS,
        Paper("Text2017001", "Two Authors in One String", [("Jane Roe", "~Jane_Roe1"), ("Alex Example", None)],
              "poster", authors_as_text=True),
    ]  # fmt: skip
    store, stats = import_year(tmp_path, 2017, papers)
    assert decisions(store, 2017)["YearWork001"] == ("MovedToWorkshop", None)
    assert decisions(store, 2017)["YearOral001"] == ("Accepted", "Oral")
    assert (stats["accepted"], stats["workshop"], stats["rejected"], stats["reviews"]) == (3, 1, 1, 4)
    assert [r[1] for r in ratings(store)] == ["8", "6", "3", "5"]
    authors = ask(store, "SELECT ?pos WHERE { ?a iclr:authorshipOf paper:Text2017001 ; iclr:authorPosition ?pos }")
    assert sorted(authors) == [("1",), ("2",)]


def test_2018_reads_the_acceptance_decision(tmp_path: Path) -> None:
    store, stats = import_year(tmp_path, 2018, EARLY_PAPERS)
    assert decisions(store, 2018)["YearPost001"] == ("Accepted", "Poster")
    assert stats["workshop"] == 1 and edition_figures(store, 2018)["acceptedCount"] == "2"


@pytest.mark.parametrize(("year", "why"), [(2015, "not on OpenReview"), (2016, "only its workshop track")])
def test_years_not_on_openreview_say_why_and_ask_nothing(tmp_path: Path, year: int, why: str) -> None:
    server = StandIn({}, {}).start()
    try:
        with pytest.raises(ImportFailed, match=why):
            run_import(settings_for(tmp_path, server), str(year))
        assert server.requests == []
    finally:
        server.stop()


def test_2023_tiers_are_their_own_presentation_types_compared_by_tier(tmp_path: Path) -> None:
    store, _ = import_year(tmp_path, 2023)
    assert decisions(store, 2023)["YearOral001"] == ("Accepted", "NotableTop5")
    rows = ask(store, "SELECT ?tier WHERE { paper:YearOral001 iclr:presentationType/iclr:tier ?tier }")
    assert rows == [("1",)]  # the year's first tier, as an oral is in 2021


def test_authors_listed_by_e_mail_resolve_by_the_profile_that_has_it(tmp_path: Path) -> None:
    """2019/2020 list e-mail addresses: the profile with that address names the author; the
    address itself is written nowhere."""
    papers = [Paper("Mail2019001", "A Paper by E-Mail", [("J. Roe", "jane@uni.example")], "poster")]
    store, stats = import_year(tmp_path, 2019, papers, emails={"jane@uni.example": "~Jane_Roe1"})
    assert stats["authors found by e-mail"] == 1
    assert ask(store, "SELECT ?p WHERE { paper:Mail2019001 iclr:hasAuthor/iclr:openReviewProfile ?p }") == [
        ("~Jane_Roe1",)
    ]
    written = "".join(p.read_text() for p in (tmp_path / "imports").rglob("*.yaml") if ".cache" not in p.parts)
    assert "jane@uni.example" not in written


def test_imports_are_independent_and_share_new_people_in_one_place(tmp_path: Path) -> None:
    """2020 used to reuse a person only 2019's folder defined: without it, 2020 no longer built."""
    shared_person = ("Max Mustermann", None)
    by_year = {
        2019: [Paper("Indep201901", "A 2019 Paper by Max", [shared_person], "poster")],
        2020: [Paper("Indep202001", "A 2020 Paper by Max", [shared_person], "reject")],
    }
    imports = tmp_path / "imports"
    for year, papers in by_year.items():
        server = StandIn(venue_notes("v1", venue_id(year), papers), {}).start()
        try:
            run_import(settings_for(tmp_path, server), str(year))
        finally:
            server.stop()
    people = (imports / "shared" / "people.yaml").read_text()
    assert (
        people.count('"key": "or-max-mustermann"') == 1 and '"openreview-iclr-2019", "openreview-iclr-2020"' in people
    )
    assert not (imports / "openreview-iclr-2020" / "people.yaml").exists()
    settings = Settings(store=tmp_path / "store")
    for alone in (2019, 2020):  # each year alone
        other = imports / f"openreview-iclr-{2019 + 2020 - alone}"
        other.rename(other.with_name(".aside"))
        build(settings)
        rows = ask(
            open_read_only(settings.store), "SELECT ?paper WHERE { ?paper iclr:hasAuthor person:or-max-mustermann }"
        )
        assert rows == [(f"https://w3id.org/iclr-kg/resource/paper/Indep{alone}01",)]
        other.with_name(".aside").rename(other)
    build(settings)  # and together: one person with both papers
    rows = ask(open_read_only(settings.store), "SELECT ?paper WHERE { ?paper iclr:hasAuthor person:or-max-mustermann }")
    assert len(rows) == 2


EXTRAPOLATE = "How Neural Networks Extrapolate: From Feedforward to Graph Neural Networks"


def test_a_paper_named_by_title_and_the_same_paper_imported_by_id_are_one_entity(tmp_path: Path) -> None:
    """Issue #20, item 5: article 000 names this paper without an OpenReview id; the import has it
    by id. One IRI in the end; the article's IRI redirects there."""
    reviews = [("RevExtra001", 9, 4), ("RevExtra002", 8, 3), ("RevExtra003", 9, 4), ("RevExtra004", 9, 5)]
    papers = [Paper("UH-cmocLJC", EXTRAPOLATE, [("Keyulu Xu", "~Keyulu_Xu1")], "oral", reviews)]
    server = StandIn(venue_notes("v1", V1_VENUE, papers), {}).start()
    try:
        settings = settings_for(tmp_path, server)
        run_import(settings, V1_VENUE, reviews=True)
    finally:
        server.stop()
    report = build(settings)
    assert report.curation == []
    store = open_read_only(settings.store)
    assert ask(store, "SELECT ?n WHERE { paper:how-neural-networks-extrapolate dcterms:isReplacedBy ?n }") == [
        ("https://w3id.org/iclr-kg/resource/paper/UH-cmocLJC",)
    ]
    graphs = ask(store, "SELECT DISTINCT ?g WHERE { GRAPH ?g { paper:UH-cmocLJC a iclr:Paper } } ORDER BY ?g")
    assert [g.rsplit("/", 1)[1] for (g,) in graphs] == ["iclr2021-awards-overview", "openreview-iclr-2021"]
    assert ask(store, "SELECT ?p WHERE { paper:how-neural-networks-extrapolate a iclr:Paper }") == []
    # the article's four ratings (9, 9, 8, 9) are the imported four reviews, not four more
    reviews = ask(
        store, "SELECT ?r ?rating WHERE { ?r iclr:reviewOf paper:UH-cmocLJC ; iclr:rating ?rating } ORDER BY ?r"
    )
    assert [(r.rsplit("/", 1)[1], rating) for r, rating in reviews] == [
        ("RevExtra001", "9"), ("RevExtra002", "8"), ("RevExtra003", "9"), ("RevExtra004", "9")
    ]  # fmt: skip
    with serving(settings.store) as (base, _):
        import requests

        answer = requests.get(f"{base}/resource/paper/how-neural-networks-extrapolate?lang=zh", allow_redirects=False)
        assert answer.status_code == 301 and answer.headers["Location"].endswith("/resource/paper/UH-cmocLJC?lang=zh")
        assert "Keyulu Xu" in requests.get(f"{base}/resource/paper/how-neural-networks-extrapolate").text


def test_an_ambiguous_title_is_reported_and_never_merged(tmp_path: Path) -> None:
    papers = [
        Paper("Extrapol001", EXTRAPOLATE, [("Keyulu Xu", None)], "oral"),
        Paper("Extrapol002", EXTRAPOLATE.upper(), [("Someone Else", None)], "reject"),
    ]
    server = StandIn(venue_notes("v1", V1_VENUE, papers), {}).start()
    try:
        settings = settings_for(tmp_path, server)
        run_import(settings, V1_VENUE)
    finally:
        server.stop()
    report = build(settings)
    assert report.curation and "paper/how-neural-networks-extrapolate" in report.curation[0]
    store = open_read_only(settings.store)
    rows = ask(store, "SELECT ?o WHERE { paper:how-neural-networks-extrapolate iclr:possiblySameAs ?o } ORDER BY ?o")
    assert [o.rsplit("/", 1)[1] for (o,) in rows] == ["Extrapol001", "Extrapol002"]


def every_year_venue() -> dict[str, list[dict]]:
    """A few papers per year, each year in its own format, in one stand-in (both APIs)."""
    notes: dict[str, list[dict]] = {}
    for year in (2013, 2014, 2017, 2018, 2019, 2020, 2021, 2022, 2023, 2024, 2025, 2026):
        api = "v2" if year >= 2024 else "v1"
        papers = [
            Paper(f"All{year}Or1", f"The {year} Oral", [("Jane Roe", "~Jane_Roe1")], "oral", [(f"Rv{year}Or1", 8, 4)]),
            Paper(f"All{year}Po1", f"The {year} Poster", [("Jane Roe", "~Jane_Roe1"), ("Max Mustermann", None)],
                  "poster", [(f"Rv{year}Po1", 6, 3)]),
            Paper(f"All{year}Re1", f"The {year} Rejection", [("Alex Example", "~Alex_Example1")], "reject",
                  [(f"Rv{year}Re1", 3, 2)]),
        ]  # fmt: skip
        if year == 2019:
            papers.append(Paper("All2019NA1", "NA", [("Alex Example", "~Alex_Example1")], "withdrawn"))
        if year == 2026:  # still under review
            papers = [Paper(f"All2026Pe{i}", f"Pending {i}", [("Jane Roe", "~Jane_Roe1")], "pending") for i in (1, 2)]
        for invitation, listed in venue_notes(api, venue_id(year), papers).items():
            notes.setdefault(invitation, []).extend(listed)
    return notes


def test_every_year_imports_into_one_folder_and_builds(tmp_path: Path) -> None:
    """Issue #20, item 8: `--venue all`, each year in its format, then the cross-year saved queries."""
    from iclr_kg.config import resource_dir
    from iclr_kg.external.openreview_import import run_all
    from iclr_kg.sparql.saved import load_saved

    server = StandIn(every_year_venue(), PROFILES).start()
    try:
        settings = settings_for(tmp_path, server)
        results = run_all(settings, until=2027, reviews=True)
        assert [(r.fmt.year, r.failed) for r in results if r.failed] == []
        assert [r.fmt.year for r in results if r.skipped] == [2027]  # nothing listed yet
        assert [r.fmt.year for r in results if r.result] == [2013, 2014, *range(2017, 2027)]
        again = run_all(settings, until=2027, reviews=True)  # resumable: everything is cached
        assert all(r.result is None or (not r.result.changed and r.result.requests == 0) for r in again)
    finally:
        server.stop()
    build(settings)
    store = open_read_only(settings.store)
    saved = load_saved(resource_dir("queries"))
    by_year = {row[0]: row[1:] for row in ask(store, saved["decisions-by-year"].text)}
    # year: submissions, accepted, rejected, workshop, withdrawn, desk-rejected, rate, sources' figures;
    # counted from every source: the imported papers and those the curated sources name (2 in 2014 and 2019)
    assert by_year["2014"][:2] == ("5", "0") and by_year["2014"][6] is None  # no decisions in 2014: no rate
    assert by_year["2019"][:2] == ("6", "2") and by_year["2019"][4] == "1"  # the submission titled NA counts
    assert by_year["2021"][6] is None  # 3 imported of the 2,997 submissions sources count: no rate of the edition
    assert sorted(by_year["2021"][7].split(" / ")) == [
        "2997",
        "3",
        "3013",
    ]  # sources disagree (the stand-in import lists 3): all shown
    assert sorted(by_year["2021"][8].split(" / ")) == ["2", "860"]  # as the sources state it, beside the count
    assert by_year["2026"][1] == "0" and by_year["2026"][6] is None
    [top, *_] = ask(store, saved["authors-most-accepted"].text)
    assert top[1:3] == ("Jane Roe", "20")  # 2 accepted papers a year, in the 10 years with decisions
    organizations = ask(store, saved["organizations-accepted-by-year"].text)
    assert {row[2] for row in organizations if row[1] == "Example Institute of Learning"} >= {"2021", "2024"}
    distribution = ask(store, saved["rating-distribution-by-year"].text)
    assert ("2020", "8", "1", "1") in [row[:4] for row in distribution]  # 2020's top level is 8
    rated = ask(store, "SELECT ?r WHERE { review:Rv2024Or1 iclr:rating ?r } VALUES ?x { 1 }")
    assert rated == [("8",)] and ask(store, "SELECT ?r WHERE { review:Rv2025Or1 iclr:rating ?r }") == [("8",)]
    levels = ask(store, "SELECT ?l WHERE { edition:iclr2024 iclr:ratingScaleLevel ?l } ORDER BY ?l")
    assert ("8: accept, good paper",) in levels  # 2024 wrote levels; 2025's bare numbers have none


def test_the_docs_list_every_year_as_the_year_table_does() -> None:
    """docs/openreview.md's table of supported years is checked against the table the importer reads."""
    from iclr_kg.config import resource_dir
    from iclr_kg.external.iclr_years import NOT_ON_OPENREVIEW, YEARS

    readme = (resource_dir("data").parent / "docs" / "openreview.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in readme.splitlines() if line.startswith("| 20")}
    for year, fmt in YEARS.items():
        assert f"`{fmt.venue}`" in rows[str(year)] and f"| {fmt.api} |" in rows[str(year)]
    assert set(NOT_ON_OPENREVIEW) <= {int(y) for y in rows if y.isdigit()} and "2024 on" in rows


def test_a_shared_entity_a_curator_copies_into_data_wins_and_is_pruned(tmp_path: Path) -> None:
    """Copy a new person from imports/shared into data/ (same key): the build takes data/'s, and
    the next import drops the shared copy instead of keeping a stale one."""
    import shutil

    from iclr_kg.config import resource_dir

    data = tmp_path / "data"
    shutil.copytree(resource_dir("data"), data)
    papers = [Paper("Prune202101", "A Paper by Max Alone", [("Max Mustermann", None)], "poster")]
    server = StandIn(venue_notes("v1", V1_VENUE, papers), {}).start()
    try:
        settings = settings_for(tmp_path, server).replace(data_dir=data)
        run_import(settings, V1_VENUE)
        shared = settings.imports / "shared" / "people.yaml"
        assert '"or-max-mustermann"' in shared.read_text()
        with (data / "people.yaml").open("a", encoding="utf-8") as people:
            people.write("\n  - key: or-max-mustermann\n    name: Max Mustermann\n    note: Curated.\n")
        build(settings)
        store = open_read_only(settings.store)
        assert bool(run_query(store, "ASK { person:or-max-mustermann iclr:name ?n }"))
        assert not bool(run_query(store, "ASK { person:or-max-mustermann iclr:needsCuration ?f }"))  # data/'s copy
        run_import(settings, V1_VENUE, refresh=True)
        assert '"or-max-mustermann"' not in shared.read_text()
        build(settings)
    finally:
        server.stop()


def test_a_service_whose_listing_does_not_move_on_is_stopped(
    tmp_path: Path, v1_server: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile service answering every page from the start (its cursor ignored) kept the
    import asking for ever; pages of two records make the fixture venue several pages long."""
    from iclr_kg.external import openreview

    monkeypatch.setattr(openreview, "PAGE_SIZE", 2)
    v1_server.ignore_cursor = True
    settings = settings_for(tmp_path, v1_server)
    with pytest.raises(ImportFailed, match="does not move on"):
        run_import(settings, V1_VENUE)
    assert len(v1_server.requests) < 10


def test_a_listing_without_end_is_stopped_at_the_page_cap(
    tmp_path: Path, v1_server: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    from iclr_kg.external import openreview

    monkeypatch.setattr(openreview, "PAGE_SIZE", 2)
    monkeypatch.setattr(openreview, "MAX_PAGES", 3)
    v1_server.endless = True
    settings = settings_for(tmp_path, v1_server)
    with pytest.raises(ImportFailed, match="more than 3 pages"):
        run_import(settings, V1_VENUE)
    assert not (settings.imports / "openreview-iclr-2021").exists()


def test_a_record_with_a_huge_field_is_refused_by_name(tmp_path: Path) -> None:
    huge = Paper("MadeUp09999", "A" * 1_000_000, [("Ian Gemp", "~Ian_Gemp1")], "poster")
    server = StandIn(venue_notes("v1", V1_VENUE, [huge]), PROFILES).start()
    try:
        with pytest.raises(ImportFailed, match=r"title: String should have at most 5000 characters"):
            run_import(settings_for(tmp_path, server), V1_VENUE)
    finally:
        server.stop()


def test_a_rerun_with_one_new_year_resolves_only_that_year(tmp_path: Path, monkeypatch) -> None:
    """Issue #35 item 4: the second `--venue all` after a new year opens redoes that year alone;
    a year whose pages, data/, matching shared entities and code are as when it was written is
    not resolved, checked or written again, and its folder stays as it was."""
    from iclr_kg.external import openreview_import
    from iclr_kg.external.openreview_import import run_all

    notes = every_year_venue()
    newest = {inv: listed for inv, listed in notes.items() if "/2026/" in inv}
    older = {inv: listed for inv, listed in notes.items() if "/2026/" not in inv}
    planned: list[int] = []
    real_plan = openreview_import.plan_import

    def plan(curated, fmt, *args, **kwargs):
        planned.append(fmt.year)
        return real_plan(curated, fmt, *args, **kwargs)

    monkeypatch.setattr(openreview_import, "plan_import", plan)
    server = StandIn(older, PROFILES).start()
    try:
        settings = settings_for(tmp_path, server)
        first = run_all(settings, until=2027, reviews=True)
    finally:
        server.stop()
    assert [r.fmt.year for r in first if r.result] == [2013, 2014, *range(2017, 2026)]
    folders = {r.fmt.year: tree_digest(r.result.folder) for r in first if r.result}
    planned.clear()
    server = StandIn({**older, **newest}, PROFILES, port=server.server_port).start()
    try:
        second = run_all(settings, until=2027, reviews=True)
    finally:
        server.stop()
    assert planned == [2026], [(r.fmt.year, r.skipped, r.failed, r.result and r.result.changed) for r in second][-3:]
    assert [r.fmt.year for r in second if r.result and r.result.changed] == [2026]
    assert all(tree_digest(r.result.folder) == folders[r.fmt.year] for r in second if r.result and r.fmt.year < 2026)
    assert [r.result.stats for r in second if r.result and r.fmt.year == 2021] == [
        r.result.stats for r in first if r.result and r.fmt.year == 2021
    ]
    build(settings)
    assert ask(open_read_only(settings.store), "SELECT ?t WHERE { paper:All2026Pe1 iclr:title ?t }") == [("Pending 1",)]


@pytest.mark.parametrize(("year", "api"), [(2019, "v1"), (2024, "v2")])
def test_abstracts_and_keywords_are_imported_and_found_by_topic(tmp_path: Path, year: int, api: str) -> None:
    """The authors' abstract and keywords arrive in the import's graph (as a list in both APIs,
    or one comma-separated string in some v1 notes) and topic search reads them with the
    titles: "GNN" finds "graph neural networks" and the reverse (issue #37, item 4)."""
    papers = [
        Paper(
            "TopicGnn001",
            "Pruning Message Passing",
            [("Jane Roe", "~Jane_Roe1")],
            "poster",
            abstract="We prune   the messages of graph neural networks.",
            keywords="graph neural networks, pruning" if api == "v1" else ["graph neural networks", "pruning"],
        ),
        Paper(
            "TopicGnn002",
            "Another Look at Over-Smoothing",
            [("Alex Example", "~Alex_Example1")],
            "reject",
            abstract="Deep GNNs over-smooth; we say why.",
            keywords=[],
        ),
        Paper("TopicNone01", "A Paper About Nothing Here", [("Jane Roe", "~Jane_Roe1")], "reject", abstract=""),
        Paper("TopicNA0001", "NA", [("NA", "")], "withdrawn", abstract="NA", keywords=["NA"]),
    ]
    store, _ = import_year(tmp_path, year, papers, api=api)
    graph = f"https://w3id.org/iclr-kg/graph/source/openreview-iclr-{year}"
    keywords = ask(store, f"SELECT ?k WHERE {{ GRAPH <{graph}> {{ paper:TopicGnn001 iclr:keyword ?k }} }} ORDER BY ?k")
    assert keywords == [("graph neural networks",), ("pruning",)]
    abstract = ask(store, "SELECT ?a WHERE { paper:TopicGnn001 iclr:abstract ?a }")
    assert abstract == [("We prune the messages of graph neural networks.",)]
    assert ask(store, "SELECT ?a WHERE { paper:TopicGnn002 schema:abstract ?a }") != []  # through the ontology
    assert ask(store, "SELECT ?x WHERE { paper:TopicNA0001 iclr:abstract|iclr:keyword ?x }") == []  # redacted
    assert ask(store, "SELECT ?x WHERE { paper:TopicNone01 iclr:abstract ?x }") == []
    from iclr_kg.web import create_app

    client = create_app(Settings(store=tmp_path / "store")).test_client()

    def topic(q: str) -> set[str]:
        found = client.get("/search", query_string={"q": q, "kind": "topic", "format": "json"}).get_json()
        return {r["url"].rsplit("/", 1)[1] for r in found["results"]}

    gnn = topic("GNN")  # with the curated "...From Feedforward to Graph Neural Networks"
    assert gnn == topic("graph neural network") and {"TopicGnn001", "TopicGnn002", "HSKaGOi7Ar"} <= gnn
    assert topic("pruned GNNs") == {"TopicGnn001"}  # every word, stemmed
    assert topic("nothing here") == {"TopicNone01"}  # titles too
    page = client.get("/search", query_string={"q": "GNN"}).get_data(as_text=True)
    assert f"papers by topic</a> ({len(gnn)})" in page and "Papers on this topic" in page


def test_a_profile_homepage_no_iri_may_hold_is_left_out_with_a_warning() -> None:
    """Issue #54 item 4: one profile whose homepage holds a `"` stopped a whole venue's import
    (`Invalid IRI code point` when the build made its IRI); it is left out, with one warning
    naming the profile, and the other links stay."""
    from iclr_kg.external.openreview import Profile
    from iclr_kg.external.openreview_import import profile_identifiers

    profiles = {
        "~Jane_Doe1": Profile(id="~Jane_Doe1", links={"homepage": 'https://jane.example.org/"home"'}),
        "~John_Roe1": Profile(id="~John_Roe1", links={"homepage": "https://john.example.org/"}),
    }
    kept, warnings = profile_identifiers(profiles)
    assert [(i.profile, i.value) for i in kept] == [("~John_Roe1", "https://john.example.org/")]
    assert len(warnings) == 1 and warnings[0].startswith("~Jane_Doe1: ") and "left out" in warnings[0]
