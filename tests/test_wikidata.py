"""Wikidata: the reconciler against a local stand-in of the Action API, federation, exports."""

from __future__ import annotations

import csv
import io
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from iclr_kg.build.pipeline import build
from iclr_kg.build.sources import load_dataset
from iclr_kg.errors import QueryError
from iclr_kg.external.session import USER_AGENT
from iclr_kg.external.wikidata import (
    WikidataClient,
    WikidataError,
    accept,
    import_identifiers,
    quickstatements,
    reconcile,
    write_proposals,
    write_sssom,
)
from iclr_kg.store import open_read_only, run_query
from testbed.helpers import dead_url
from testbed.tiny import TINY_SOURCE as TINY_SOURCE_TEXT

from .conftest import select


def item(qid: str, label: str, p31: str, zh: str | None = None, **claims: str) -> dict:
    """An entity in the shape wbgetentities returns."""

    def snak(prop: str, value: str) -> dict:
        return {
            "mainsnak": {
                "snaktype": "value",
                "property": prop,
                "datavalue": {
                    "value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value},
                    "type": "wikibase-entityid",
                },
                "datatype": "wikibase-item",
            },
            "type": "statement",
            "rank": "normal",
        }

    labels = {"en": {"language": "en", "value": label}}
    if zh:
        labels["zh"] = {"language": "zh", "value": zh}
    return {
        "type": "item",
        "id": qid,
        "labels": labels,
        "descriptions": {},
        "aliases": {},
        "claims": {"P31": [snak("P31", p31)], **{p: [snak(p, v)] for p, v in claims.items()}},
    }


def external_id(prop: str, value: str | None, rank: str = "normal") -> dict:
    """An external-id statement as wbgetentities returns it (`value` None: "some value")."""
    snak: dict = {"snaktype": "somevalue", "property": prop, "datatype": "external-id"}
    if value is not None:
        snak = {**snak, "snaktype": "value", "datavalue": {"value": value, "type": "string"}}
    return {"mainsnak": snak, "type": "statement", "rank": rank}


ORCID = "0000-0002-1825-0097"  # ORCID's own example iD
ENTITIES = {
    "Q41506": item("Q41506", "Stanford University", "Q3918", zh="斯坦福大学"),
    "Q900001": item("Q900001", "Yang Song", "Q5", P69="Q41506"),  # the one who studied at Stanford
    "Q900002": item("Q900002", "Yang Song", "Q5"),  # a namesake
    "Q900003": item("Q900003", "Stanford (band)", "Q215380"),
}
ENTITIES["Q41506"]["claims"].update(
    {
        "P6782": [
            external_id("P6782", "00f54p054"),
            external_id("P6782", "00f54p055"),
        ],  # the second fails ROR's checksum
        "P2427": [external_id("P2427", "grid.168010.e")],
        "P496": [external_id("P496", ORCID)],  # an ORCID on an organization: not a scheme for it, not read
    }
)
ENTITIES["Q900001"]["claims"].update(
    {
        "P496": [external_id("P496", ORCID)],
        "P2456": [external_id("P2456", "34/8532-2"), external_id("P2456", "99/9999", rank="deprecated")],
        "P4012": [external_id("P4012", None)],  # "some value": nothing to read
    }
)
SEARCH = {"stanford university": ["Q41506", "Q900003"], "yang song": ["Q900001", "Q900002"], "宋飏": ["Q900001"]}


class StandIn(BaseHTTPRequestHandler):
    """Answers wbsearchentities / wbgetentities like Wikidata's Action API, and can misbehave."""

    log: list[dict] = []
    misbehave: list[str] = []  # "429" or "maxlag", consumed one per request

    def do_GET(self) -> None:
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(self.path).query))
        StandIn.log.append({"params": params, "agent": self.headers.get("User-Agent"), "at": time.monotonic()})
        if StandIn.misbehave:
            trouble = StandIn.misbehave.pop(0)
            if trouble == "429":
                body = b"Too many requests. Please slow down."
                self.send_response(429)
                self.send_header("Retry-After", "1")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            # MediaWiki's ApiMain::checkMaxLag: HTTP 200, an error body, Retry-After: max(maxlag, 5)
            self.reply(
                {
                    "error": {
                        "code": "maxlag",
                        "info": "Waiting for a database server: 7 seconds lagged.",
                        "host": "db1",
                        "lag": 7,
                        "type": "db",
                    },
                    "servedby": "mw1",
                },
                {"Retry-After": "5", "X-Database-Lag": "7", "MediaWiki-API-Error": "maxlag"},
            )
            return
        if params.get("action") == "wbsearchentities":
            ids = SEARCH.get(params["search"].casefold(), [])
            self.reply(
                {
                    "searchinfo": {"search": params["search"]},
                    "search": [
                        {
                            "id": q,
                            "title": q,
                            "pageid": 1,
                            "concepturi": f"http://www.wikidata.org/entity/{q}",
                            "label": ENTITIES[q]["labels"]["en"]["value"],
                            "match": {"type": "label", "language": "en", "text": params["search"]},
                        }
                        for q in ids
                    ],
                    "success": 1,
                }
            )
        elif params.get("action") == "wbgetentities":
            ids = params["ids"].split("|")
            self.reply({"entities": {q: ENTITIES.get(q, {"id": q, "missing": ""}) for q in ids}, "success": 1})
        else:
            self.reply({"error": {"code": "badvalue", "info": "Unrecognized value for parameter action"}})

    def reply(self, payload: dict, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api():
    StandIn.log, StandIn.misbehave = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/w/api.php"
    server.shutdown()
    server.server_close()


PEOPLE_SOURCE = """
    source: {key: tiny, title: t, language: zh-Hans, seed: s, summary: s}
    papers:
      - openreview: PxTIG12RRHS
        edition: ICLR 2021
        title: Score-Based Generative Modeling through Stochastic Differential Equations
        authors: [宋飏, Ben Poole]
        organizations: [斯坦福]
        awards: [ICLR 2021 Outstanding Paper Award]
    people:
      - person: 宋飏
        education:
          - {organization: 斯坦福, degree: PhD, role: PhD student, current: true}
    """
LINKED_STANFORD = """
    links:
      - {entity: organization/stanford, qid: Q41506, method: checked, evidence: a test fixture}
    """


def test_clear_match_is_proposed_with_evidence(tiny_data, api) -> None:
    dataset = load_dataset(tiny_data().data_dir)
    sleeps: list[float] = []
    proposals = reconcile(dataset, WikidataClient(api, sleep=sleeps.append), kinds=["organization"])
    stanford = [p for p in proposals if p.entity == "organization/stanford"]
    assert len(stanford) == 1 and stanford[0].qid == "Q41506" and stanford[0].status == "proposed"
    assert any("label or alias matches" in e for e in stanford[0].evidence)
    assert any("Q3918" in e for e in stanford[0].evidence)
    assert all(p.qid != "Q900003" for p in proposals)  # the band does not fit an organization
    assert not sleeps


def test_two_people_called_yang_song_are_ambiguous_without_a_second_signal(tiny_data, api) -> None:
    dataset = load_dataset(tiny_data().data_dir)
    proposals = [p for p in reconcile(dataset, WikidataClient(api), kinds=["person"]) if p.entity == "person/yang-song"]
    assert {p.qid for p in proposals} == {"Q900001", "Q900002"} and {p.status for p in proposals} == {"ambiguous"}


def test_a_second_signal_picks_the_right_yang_song(tiny_data, api) -> None:
    dataset = load_dataset(tiny_data(source=PEOPLE_SOURCE, **{"wikidata.yaml": LINKED_STANFORD}).data_dir)
    proposals = [p for p in reconcile(dataset, WikidataClient(api), kinds=["person"]) if p.entity == "person/yang-song"]
    assert [(p.qid, p.status) for p in proposals] == [("Q900001", "proposed")]
    assert any("P69 points to Q41506" in e for e in proposals[0].evidence)


def test_no_match_proposes_nothing(tiny_data, api) -> None:
    dataset = load_dataset(tiny_data().data_dir)
    proposals = reconcile(dataset, WikidataClient(api), kinds=["person"])
    assert not [p for p in proposals if p.entity == "person/ben-poole"]


def test_etiquette_user_agent_maxlag_batching_and_cache(tiny_data, api, tmp_path: Path) -> None:
    dataset = load_dataset(tiny_data().data_dir)
    client = WikidataClient(api, cache_dir=tmp_path / "cache")
    client.entities([f"Q{n}" for n in range(1, 121)])
    batches = [len(r["params"]["ids"].split("|")) for r in StandIn.log if r["params"].get("action") == "wbgetentities"]
    assert batches == [50, 50, 20]
    assert all(r["agent"] == USER_AGENT and "iclr-kg" in r["agent"] for r in StandIn.log)
    assert all(r["params"]["maxlag"] == "5" and r["params"]["format"] == "json" for r in StandIn.log)
    first = reconcile(dataset, client)
    asked = len(StandIn.log)
    again = reconcile(dataset, WikidataClient(api, cache_dir=tmp_path / "cache"))
    assert len(StandIn.log) == asked  # the rerun asked nothing
    assert first == again


def test_backoff_on_429_and_maxlag(api) -> None:
    """429 is retried by the session after its Retry-After (1 s); maxlag by the client after the
    Retry-After MediaWiki sends with it (5 s, recorded instead of slept)."""
    StandIn.misbehave = ["429", "maxlag"]
    sleeps: list[float] = []
    hits = WikidataClient(api, sleep=sleeps.append).search("Stanford University", "en")
    assert [h["id"] for h in hits] == ["Q41506", "Q900003"]
    assert len(StandIn.log) == 3
    assert StandIn.log[1]["at"] - StandIn.log[0]["at"] >= 1.0  # the 429's Retry-After was honoured
    assert sleeps == [5.0]


def test_a_service_that_stays_busy_is_a_clear_error(api) -> None:
    StandIn.misbehave = ["429"] * 3
    with pytest.raises(WikidataError, match="HTTP 429 after retries"):
        WikidataClient(api, retries=1).search("Stanford University", "en")
    assert len(StandIn.log) == 2  # one retry, then the answer is reported, not retried forever


def test_a_lag_that_persists_is_a_clear_error(api) -> None:
    StandIn.misbehave = ["maxlag"] * 3
    sleeps: list[float] = []
    with pytest.raises(WikidataError, match="stayed lagged"):
        WikidataClient(api, retries=2, sleep=sleeps.append).search("Stanford University", "en")
    assert sleeps == [5.0, 10.0]  # the wait doubles while the lag persists


def test_network_failure_is_a_clear_error_and_writes_nothing(tiny_data, tmp_path: Path) -> None:
    dead = dead_url("/w/api.php")
    dataset = load_dataset(tiny_data().data_dir)
    review = tmp_path / "review.yaml"
    with pytest.raises(WikidataError, match="cannot reach Wikidata"):
        write_proposals(reconcile(dataset, WikidataClient(dead, retries=0)), review)
    assert not review.exists()


def test_accepting_moves_links_into_the_data_and_the_graph(tiny_data, api, tmp_path: Path) -> None:
    settings = tiny_data()
    proposals = reconcile(load_dataset(settings.data_dir), WikidataClient(api), kinds=["organization"])
    review = tmp_path / "review.yaml"
    write_proposals(proposals, review)
    accepted = accept(review, settings.data_dir / "wikidata.yaml")
    assert [p.entity for p in accepted] == ["organization/stanford"]
    build(settings)
    rows = select(
        open_read_only(settings.store),
        """SELECT ?method ?evidence WHERE {
        organization:stanford skos:exactMatch wd:Q41506 .
        ?l rdf:subject organization:stanford ; iclr:linkMethod ?method ; iclr:evidence ?evidence }""",
    )
    assert rows[0]["method"] == "reconciled-accepted" and "score" in rows[0]["evidence"]
    assert yaml.safe_load(review.read_text())["proposals"] == []


def test_cli_dry_run_writes_nothing(tiny_data, api, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from iclr_kg.cli import main

    settings = tiny_data()
    env = {"ICLR_KG_DATA_DIR": str(settings.data_dir), "ICLR_KG_WIKIDATA_API": api}
    result = CliRunner().invoke(
        main, ["link-wikidata", "--store", str(tmp_path / "store"), "--dry-run", "--kind", "organization"], env=env
    )
    assert result.exit_code == 0, result.output
    assert "organization/stanford -> Q41506" in result.output and "nothing written" in result.output
    assert not (tmp_path / "wikidata-proposals.yaml").exists()
    result = CliRunner().invoke(
        main, ["link-wikidata", "--store", str(tmp_path / "store"), "--kind", "organization"], env=env
    )
    assert result.exit_code == 0 and (tmp_path / "wikidata-proposals.yaml").is_file()


def test_federated_query_reaches_only_allow_listed_endpoints(real_store, wikidata_standin: str) -> None:
    query = (
        "SELECT ?country WHERE { organization:google skos:exactMatch ?item . SERVICE <%s> { ?item wdt:P17 ?country } }"
    )
    rows = list(run_query(real_store, query % wikidata_standin, services=(wikidata_standin,)))
    assert [r["country"].value for r in rows] == ["http://www.wikidata.org/entity/Q30"]
    with pytest.raises(QueryError, match="not allowed"):
        run_query(real_store, query % wikidata_standin, services=("https://query.wikidata.org/sparql",))


def test_sssom_export(tmp_path: Path) -> None:
    from iclr_kg.config import resource_dir

    out = io.StringIO()
    write_sssom(load_dataset(resource_dir("data")), out)
    text = out.getvalue()
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert (
        yaml.safe_load("\n".join(line[2:] for line in header))["curie_map"]["wikidata"]
        == "http://www.wikidata.org/entity/"
    )
    rows = list(
        csv.DictReader(
            io.StringIO("\n".join(line for line in text.splitlines() if not line.startswith("#"))), delimiter="\t"
        )
    )
    google = next(r for r in rows if r["subject_id"] == "iclr:organization/google")
    assert google["object_id"] == "wikidata:Q95" and google["predicate_id"] == "skos:exactMatch"
    assert google["mapping_justification"] == "semapv:ManualMappingCuration"
    assert len(rows) == len(load_dataset(resource_dir("data")).links)


def test_quickstatements_only_for_checked_links_with_checkable_references(tiny_data) -> None:
    """Regression (correctness #5): reconciled-accepted links were exported, and the reference
    (S854) was our own IRI; now only checked links, referenced by the official announcement the
    article cites, or by OpenReview with the import's date (S813) for imported facts."""
    cited = TINY_SOURCE_TEXT.replace(
        "      summary: A fixture.",
        "      summary: A fixture.\n      cites: [https://blog.iclr.cc/2021/awards/, https://www.zhihu.com/x]",
    )
    imported = """
    source:
      key: openreview-iclr2024
      kind: import
      title: ICLR 2024 on OpenReview
      language: en
      service: https://api2.openreview.net
      venue: ICLR.cc/2024/Conference
      retrieved: 2026-05-01T10:00:00
      summary: An import.
    editions:
      - edition: ICLR 2021
    papers:
      - openreview: AbCdEfGhIj
        edition: ICLR 2021
        title: An imported paper
        authors: [Ben Poole]
        awards: [ICLR 2021 Outstanding Paper Award]
    """
    settings = tiny_data(
        source=cited,
        extra_sources={"import.yaml": imported},
        **{
            "wikidata.yaml": """
        links:
          - {entity: paper/PxTIG12RRHS, qid: Q900100, method: checked, evidence: a test fixture}
          - {entity: paper/AbCdEfGhIj, qid: Q900101, method: checked, evidence: a test fixture}
          - {entity: award/iclr2021-outstanding-paper, qid: Q900200, method: checked, evidence: a test fixture}
          - {entity: organization/google, qid: Q95, method: reconciled-accepted, evidence: a test fixture}
        """
        },
    )
    build(settings)
    lines, unreferenced = quickstatements(load_dataset(settings.data_dir), open_read_only(settings.store))
    assert sorted(lines) == [
        'Q900100\tP166\tQ900200\tP585\t+2021-00-00T00:00:00Z/9\tS854\t"https://blog.iclr.cc/2021/awards/"',
        'Q900101\tP166\tQ900200\tP585\t+2021-00-00T00:00:00Z/9\tS854\t"https://openreview.net/forum?id=AbCdEfGhIj"'
        "\tS813\t+2026-05-01T00:00:00Z/11",
    ]
    assert unreferenced == 0
    # a link that is only reconciled-accepted gives no statement
    settings = tiny_data(
        source=cited,
        **{
            "wikidata.yaml": """
        links:
          - {entity: paper/PxTIG12RRHS, qid: Q900100, method: reconciled-accepted, evidence: a test fixture}
          - {entity: award/iclr2021-outstanding-paper, qid: Q900200, method: checked, evidence: a test fixture}
        """
        },
    )
    build(settings)
    assert quickstatements(load_dataset(settings.data_dir), open_read_only(settings.store)) == ([], 0)


def test_a_junk_answer_is_an_error_and_never_cached(tmp_path: Path) -> None:
    """Regression (hardening #15): a proxy's or captive portal's JSON was cached as an answer."""

    class Junk(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"status": "maintenance"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Junk)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = WikidataClient(f"http://127.0.0.1:{server.server_address[1]}/w/api.php", cache_dir=tmp_path / "cache")
        with pytest.raises(WikidataError, match="not a Wikidata API answer"):
            client.search("Stanford University", "en")
        assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    finally:
        server.shutdown()
        server.server_close()


def test_the_cache_is_kept_per_api_address(api, tmp_path: Path) -> None:
    first = WikidataClient(api, cache_dir=tmp_path / "cache")
    first.search("Stanford University", "en")
    other = WikidataClient(api.replace("127.0.0.1", "localhost"), cache_dir=tmp_path / "cache")
    other.search("Stanford University", "en")
    assert (
        first.requests == 1 and other.requests == 1
    )  # the second service is asked, not answered from the first's cache
    again = WikidataClient(api, cache_dir=tmp_path / "cache")
    again.search("Stanford University", "en")
    assert again.requests == 0


LINKED_BOTH = """
    links:
      - {entity: organization/stanford, qid: Q41506, method: checked, evidence: a test fixture}
      - {entity: person/yang-song, qid: Q900001, method: checked, evidence: a test fixture}
    """


def test_the_identifiers_linked_items_state_are_imported_checked_and_attributed(tiny_data, api, tmp_path: Path) -> None:
    from iclr_kg.web import create_app

    settings = tiny_data(source=PEOPLE_SOURCE, **{"wikidata.yaml": LINKED_BOTH})
    client = WikidataClient(api, cache_dir=tmp_path / "cache")
    result = import_identifiers(settings, client)
    assert result.changed and result.stats == {"linked items": 2, "identifiers": 4}
    assert any("organization/stanford (Q41506): ROR P6782 left out" in w and "checksum" in w for w in result.warnings)
    build(settings)
    store = open_read_only(settings.store)
    stated = {
        (r["s"].value.rsplit("/", 1)[1], r["p"].value.rsplit("/", 1)[1], r["o"].value)
        for r in run_query(
            store,
            "SELECT ?s ?p ?o WHERE { GRAPH <https://w3id.org/iclr-kg/graph/source/wikidata-identifiers> { ?s ?p ?o } "
            "?s a ?kind . FILTER (?kind IN (iclr:Person, iclr:Organization)) "
            'FILTER (STRSTARTS(STR(?p), "http://www.wikidata.org/prop/direct/")) }',
        )
    }
    assert stated == {
        ("stanford", "P6782", "00f54p054"),
        ("stanford", "P2427", "grid.168010.e"),
        ("yang-song", "P496", ORCID),
        ("yang-song", "P2456", "34/8532-2"),
    }  # not the deprecated pid, not "some value", not an ORCID on an organization
    rows = select(
        store,
        """SELECT ?service WHERE { organization:stanford wdt:P6782 "00f54p054" ;
             skos:exactMatch <https://ror.org/00f54p054> .
           GRAPH ?g { organization:stanford wdt:P6782 "00f54p054" } ?g iclr:statedIn/iclr:service ?service }""",
    )
    assert [r["service"] for r in rows] == [api]
    client_app = create_app(settings).test_client()
    answer = client_app.get("/id/ror/https://ror.org/00f54p054")
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/resource/organization/stanford")
    assert client_app.get("/id/ror/00f54p055").status_code == 400  # the checksum, in words
    asked = len(StandIn.log)
    again = import_identifiers(settings, WikidataClient(api, cache_dir=tmp_path / "cache"))
    assert not again.changed and len(StandIn.log) == asked  # from the cache; nothing new to write
    from sssom.constants import SchemaValidationType
    from sssom.parsers import parse_sssom_table
    from sssom.validators import validate

    out = tmp_path / "mappings.sssom.tsv"
    with out.open("w", encoding="utf-8") as handle:
        write_sssom(load_dataset(settings.data_dir, settings.imports), handle)
    mappings = parse_sssom_table(str(out))
    assert all(
        not r.results for r in validate(mappings, [SchemaValidationType.JsonSchema], fail_on_error=False).values()
    )
    [ror] = [r for r in mappings.df.to_dict("records") if r["object_id"] == "ror:00f54p054"]
    assert (
        ror["subject_id"] == "iclr:organization/stanford" and ror["mapping_justification"] == "semapv:MappingChaining"
    )
    assert ror["mapping_provider"] == "http://www.wikidata.org/entity/Q41506" and str(ror["mapping_date"])[:2] == "20"


def test_identifiers_that_sources_disagree_on_are_reported_and_a_shared_one_links_nobody(
    tiny_data, api, tmp_path: Path
) -> None:
    other = "0000-0002-1694-233X"
    article = f"""
        source: {{key: other, title: t, language: en, seed: s, summary: s}}
        identifiers:
          - {{entity: person/yang-song, scheme: orcid, value: {other}}}
          - {{entity: person/ben-poole, scheme: dblp, value: 34/8532-2}}
        """
    settings = tiny_data(source=PEOPLE_SOURCE, extra_sources={"other.yaml": article}, **{"wikidata.yaml": LINKED_BOTH})
    import_identifiers(settings, WikidataClient(api, cache_dir=tmp_path / "cache"))
    report = build(settings)
    assert any(
        f"person/yang-song has 2 orcid values from different sources ({other} by source other; {ORCID} by Wikidata Q900001)"
        in c
        for c in report.curation
    ), report.curation
    assert any(
        "dblp 34/8532-2 is stated for 2 entities (person/ben-poole by source other; person/yang-song by Wikidata Q900001)"
        in c
        for c in report.curation
    ), report.curation
    store = open_read_only(settings.store)
    orcids = {r["v"] for r in select(store, "SELECT ?v WHERE { person:yang-song wdt:P496 ?v }")}
    assert orcids == {ORCID, other}  # both kept, each in its source's graph
    assert not select(store, 'SELECT ?s WHERE { ?s wdt:P2456 "34/8532-2" }')  # nobody's until a curator settles


def test_a_malformed_identifier_in_a_data_file_names_file_line_and_field(tiny_data) -> None:
    from iclr_kg.build.pipeline import compile_unvalidated
    from iclr_kg.errors import DataError

    article = """
        source: {key: other, title: t, language: en, seed: s, summary: s}
        identifiers:
          - {entity: organization/stanford, scheme: ror, value: 00f54p055}
        """
    settings = tiny_data(extra_sources={"other.yaml": article})
    with pytest.raises(DataError) as caught:
        compile_unvalidated(settings)
    message = str(caught.value)
    assert "other.yaml" in message and "identifiers" in message and "checksum" in message, message


def test_cli_imports_the_identifiers_and_says_what_it_left_out(tiny_data, api, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from iclr_kg.cli import main

    settings = tiny_data(source=PEOPLE_SOURCE, **{"wikidata.yaml": LINKED_BOTH})
    env = {"ICLR_KG_DATA_DIR": str(settings.data_dir), "ICLR_KG_WIKIDATA_API": api}
    result = CliRunner().invoke(main, ["import", "wikidata", "--store", str(tmp_path / "store")], env=env)
    assert result.exit_code == 0, result.output
    assert "wikidata-identifiers: written" in result.output and "4 identifiers" in result.output
    assert "ROR P6782 left out" in result.output and "run `iclr-kg build`" in result.output
    assert (tmp_path / "imports" / "wikidata-identifiers" / "sources" / "wikidata-identifiers.yaml").is_file()
