"""Saved queries' whole answers, computed with a generation and kept beside it (issue #35 item 3):
served in every results format, at /queries/<name> and as the same text at /sparql, with the
bytes an evaluation gives; never for another dataset, other parameter values or a newer
generation."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from iclr_kg.build.pipeline import build
from iclr_kg.query.kept import answer_name, answer_path, rows_name
from iclr_kg.sparql.formats import RESULT_FORMATS
from iclr_kg.sparql.querytext import keepable
from iclr_kg.sparql.saved import load_saved
from iclr_kg.store import current_generation, kept_beside, open_read_only, run_query
from iclr_kg.web import answers
from iclr_kg.web.conditional import kept_etag
from testbed.helpers import eventually, serving


def wait_for(path: Path, seconds: float = 60) -> None:
    eventually(path.exists, f"{path.name} kept", seconds)


def evaluated(store_dir: Path, text: str, fmt: str) -> bytes:
    """The answer as the store gives it now, serialized by pyoxigraph as a worker would."""
    results = run_query(open_read_only(store_dir), text)
    return results.serialize(format=RESULT_FORMATS[fmt].results)


@pytest.fixture
def counted_runs(monkeypatch) -> list[str]:
    """The texts handed to a query evaluation from now on (the kept answers need none)."""
    calls: list[str] = []
    real = answers.execute

    def execute(text: str, **kwargs: object):
        calls.append(text)
        return real(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(answers, "execute", execute)
    return calls


def test_a_saved_querys_answer_is_kept_with_the_generation_and_served_in_every_format(tiny_app, counted_runs) -> None:
    settings, client = tiny_app()
    assert client.get("/").status_code == 200  # the first request starts the warmer
    saved = client.application.extensions["iclr_kg"].saved["organization-papers"]
    generation = current_generation(settings.store)
    wait_for(answers.answer_path(generation, saved))
    assert saved.params, "organization-papers takes an organization, bound to its default"
    for fmt in RESULT_FORMATS:  # responses closed as a WSGI server closes them (the kept file)
        with client.get(f"/queries/{saved.name}", query_string={"format": fmt}) as served:
            assert served.status_code == 200, served.data
            assert served.data == evaluated(settings.store, saved.text_with({}), fmt), fmt
        with client.get("/sparql", query_string={"query": saved.text_with({}), "format": fmt}) as at_sparql:
            assert at_sparql.data == served.data and at_sparql.headers["ETag"] == served.headers["ETag"]
    assert counted_runs == [], "a kept answer is read, not evaluated"
    again = client.get(
        f"/queries/{saved.name}", query_string={"format": fmt}, headers={"If-None-Match": served.headers["ETag"]}
    )
    assert again.status_code == 304


def test_other_datasets_parameters_and_generations_are_evaluated(tiny_app, tiny_data, counted_runs) -> None:
    from iclr_kg.build.pipeline import build

    settings, client = tiny_app()
    client.get("/")
    saved = client.application.extensions["iclr_kg"].saved["organization-papers"]
    wait_for(answers.answer_path(current_generation(settings.store), saved))
    text = saved.text_with({})
    client.get("/sparql", query_string={"query": text, "inferred": "false"})
    client.get("/sparql", query_string={"query": text, "default-graph-uri": "https://w3id.org/iclr-kg/graph/inferred"})
    client.get(
        f"/queries/{saved.name}",
        query_string={"organization": "https://w3id.org/iclr-kg/resource/organization/deepmind", "format": "json"},
    )
    assert len(counted_runs) == 3
    build(tiny_data(extra_sources={"more.yaml": MORE}))  # a new generation: the build kept its answer
    with client.get(f"/queries/{saved.name}", query_string={"format": "csv"}) as served:
        assert served.data == evaluated(settings.store, text, "csv")  # the new generation's, not the old
    assert len(counted_runs) == 3


def test_a_page_reads_its_first_rows_from_the_kept_answer(tiny_app) -> None:
    settings, client = tiny_app()
    client.get("/")
    saved = client.application.extensions["iclr_kg"].saved["award-papers"]
    wait_for(answers.answer_path(current_generation(settings.store), saved))
    with client.application.test_request_context("/"):
        rows = answers.kept_rows(saved, 100)
    assert rows is not None and rows["columns"] == ["edition", "paper", "title", "award", "kind"]
    page = client.get("/queries/award-papers", headers={"Accept": "text/html"}).get_data(as_text=True)
    assert all(row[2][1] in page for row in rows["rows"])  # each title the kept answer holds


MORE = """
source: {key: more, title: More, language: zh-Hans, seed: s, summary: s}
papers:
  - openreview: NzTU59SYbNq
    edition: ICLR 2021
    title: "EigenGame: PCA as a Nash Equilibrium"
"""


def test_a_build_keeps_every_saved_answer_before_its_generation_is_served(tiny_data) -> None:
    """Issue 67 item 9: the build evaluates every saved query whose answer depends on the store
    alone before `current` swings, so the first visitor of each saved query's page reads it:
    the JSON answer's ETag is the kept file's, and nothing kept is computed again by the server."""
    settings = tiny_data()
    build(settings)
    generation = current_generation(settings.store)
    saved = [s for s in load_saved(settings.queries_dir).values() if keepable(s.text)]
    assert len(saved) >= 15
    kept = {s.name: kept_beside(generation, rows_name(s)) for s in saved}
    answered = {s.name: answer_path(generation, s) for s in saved if answer_path(generation, s).exists()}
    assert all(path.exists() for path in kept.values()), [n for n, p in kept.items() if not p.exists()]
    assert len(answered) >= len(saved) - 2  # all but CONSTRUCT / DESCRIBE (their rows are kept)
    written = {path: path.stat().st_mtime_ns for path in [*kept.values(), *answered.values()]}
    with serving(settings.store) as (url, _):
        for s in saved:
            with urllib.request.urlopen(f"{url}/queries/{s.name}?format=json") as first:
                assert first.status == 200
                if s.name in answered:  # served from the kept file, not evaluated: its ETag says so
                    assert first.headers["ETag"] == kept_etag(str(answered[s.name]), "json"), s.name
            with urllib.request.urlopen(
                urllib.request.Request(f"{url}/queries/{s.name}", headers={"Accept": "text/html"})
            ) as page:
                assert page.status == 200
        assert all(kept_beside(generation, answer_name(s)).exists() for s in saved if s.name in answered)
    assert {path: path.stat().st_mtime_ns for path in written} == written, "nothing kept was computed again"
