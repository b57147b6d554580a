"""Pages and saved queries read public reviews alike (review 24 item 8: at 10,000 synthetic papers
ICLR 2021's page listed ten top-rated papers while /queries/top-rated-papers?year=2021 had no
row and rating-distribution-by-year said the graph had no import: the synthetic papers stand
for an OpenReview import but were stated as an article's, with no rating scale), and the page
of a saved query with no rows says "none yet" only where the graph holds no import."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient

from iclr_kg.build.pipeline import build
from iclr_kg.config import Settings
from iclr_kg.web import create_app
from testbed import synth
from tests.web.test_profiles import page

NONE_YET = "this graph holds none of it yet"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> FlaskClient:
    folder = tmp_path_factory.mktemp("synthetic")
    settings = Settings(data_dir=synth.write(300, folder / "data"), store=folder / "store")
    build(settings)
    return create_app(settings).test_client()


def test_an_editions_top_rated_papers_are_the_saved_querys(synthetic: FlaskClient) -> None:
    shown = page(synthetic, "/resource/edition/iclr2021", lang="en").split("Top-rated papers (public reviews)", 1)[1]
    panel = shown.split("</section>", 1)[0]
    on_page = re.findall(r'href="/resource/paper/([^"]+)"', panel)
    answer = synthetic.get("/queries/top-rated-papers", query_string={"year": "2021", "format": "json"}).get_json()
    rows = answer["results"]["bindings"]
    assert len(on_page) == 10 and set(on_page) <= {b["paper"]["value"].rsplit("/", 1)[1] for b in rows}
    assert re.findall(r">(\d+\.\d\d)<", panel) == [f"{float(b['average']['value']):.2f}" for b in rows[:10]]


def test_the_rating_distribution_has_rows_where_the_graph_has_reviews(synthetic: FlaskClient) -> None:
    answer = synthetic.get("/queries/rating-distribution-by-year", query_string={"format": "json"}).get_json()
    assert {b["year"]["value"] for b in answer["results"]["bindings"]} == {str(y) for y in synth.EDITIONS}
    assert NONE_YET not in page(synthetic, "/queries/rating-distribution-by-year", lang="en")


def test_no_rows_says_none_yet_only_where_the_graph_holds_no_import(
    synthetic: FlaskClient, client: FlaskClient
) -> None:
    assert NONE_YET in page(client, "/queries/top-rated-papers", lang="en")  # the curated graph: no import
    html = page(synthetic, "/queries/top-rated-papers", year="2013", lang="en")  # an import, not of 2013
    assert NONE_YET not in html and "No rows for these parameters" in html
