"""A page that cites a source names it one way in every panel (review 24 item 14: ICLR 2021's
outstanding-papers article was "ICLR 2021 八篇杰出論文", its title, under a paper's credited
organizations and "機器之心", its outlet, under the same page's awards; review 25 item 14: the
cards then said "機器之心" and the page's "Every statement" table its title): every panel names a
source by its title, the label the index gives it, with `source_cells`."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from flask.testing import FlaskClient

from iclr_kg import vocab
from iclr_kg.build.sources import INTERNAL_NUMBER
from iclr_kg.web.kinds.panels import source_cells
from tests.web.test_profiles import page

SOURCE_LINK = re.compile(r'<a href="/resource/source/([^"?#]+)"[^>]*>([^<]*)</a>')


@pytest.mark.parametrize(
    "path",
    [
        "/resource/paper/rcQdycl0zyk",
        "/resource/paper/NzTU59SYbNq",
        "/resource/edition/iclr2021",
        "/resource/award/iclr2021-outstanding-paper",
        "/resource/award/",
    ],
)
def test_a_page_names_each_source_it_cites_one_way(client: FlaskClient, path: str) -> None:
    cited = page(client, path)  # the cards and the table of every statement alike
    names: dict[str, set[str]] = defaultdict(set)
    for key, text in SOURCE_LINK.findall(cited):
        names[key].add(re.sub(r" \(\d+\)$", "", text))  # the awards overview adds its count of papers
    assert names and {k: v for k, v in names.items() if len(v) > 1} == {}


def test_the_outstanding_papers_article_goes_by_its_title_in_every_panel(client: FlaskClient) -> None:
    cited = page(client, "/resource/paper/rcQdycl0zyk")
    texts = [text for key, text in SOURCE_LINK.findall(cited) if key == "iclr2021-outstanding-papers"]
    assert len(texts) >= 10 and set(texts) == {"ICLR 2021 八篇杰出論文"}  # the cards and every statement
    zh = page(client, "/resource/paper/rcQdycl0zyk", lang="zh")
    assert {text for key, text in SOURCE_LINK.findall(zh) if key == "iclr2021-outstanding-papers"} == {
        "ICLR 2021 八篇杰出论文"
    }


def test_a_source_is_named_alike_whichever_others_are_cited_beside_it(real_store) -> None:
    sources = [row["s"].value for row in real_store.query(f"SELECT ?s WHERE {{ ?s a <{vocab.ONTOLOGY_NS}Source> }}")]
    together = source_cells(real_store, sources)
    alone = {s: source_cells(real_store, [s])[s].term.text for s in sources}
    keyed = {s for s in sources if together[s].term.text == s.rsplit("/", 1)[-1]}  # two of one name, side by side
    assert (
        len(sources) >= 50 and {s: t for s, t in alone.items() if s not in keyed and t != together[s].term.text} == {}
    )


def test_notes_name_sources_by_title_linked_never_by_a_number(client: FlaskClient, real_store) -> None:
    """Review 25 new defect 3: Google Brain's note read "Article 000 counts Google Brain's awards
    as Google's" (zh "文章 000 把…"), a number only we know; every note of the graph is scanned."""
    notes = [
        row["n"].value
        for row in real_store.query(
            "SELECT DISTINCT ?n WHERE { ?e iclr:note|rdfs:comment ?n }", prefixes=vocab.QUERY_PREFIXES
        )
    ]
    assert len(notes) >= 50 and [n for n in notes if INTERNAL_NUMBER.search(n)] == []
    for path, sources in [
        ("/resource/organization/google-brain", ["iclr2021-awards-overview"]),
        ("/resource/organization/deepmind", ["iclr2021-awards-overview", "iclr2024-outstanding-papers"]),
        ("/resource/organization/pittsburgh-as-credited", ["iclr2021-outstanding-papers", "iclr2021-awards-overview"]),
    ]:
        for lang in ("en", "zh"):
            about = page(client, path, lang=lang).split("</section>", 1)[0]
            assert [key for key, _ in SOURCE_LINK.findall(about)] == sources, (path, lang)


def test_a_repositorys_file_is_named_as_on_stats_wherever_it_is_cited(client) -> None:
    """review26: three sources whose title is a file's name read "_data/papers.yml" where pages
    cite them and "clemense/ai-bestpapers: _data/papers.yml" on /stats: one name everywhere."""
    awards = client.get("/resource/award/", query_string={"lang": "en"}).get_data(as_text=True)
    stats = client.get("/stats", query_string={"lang": "en"}).get_data(as_text=True)
    for name in (
        "clemense/ai-bestpapers: _data/papers.yml",
        "ImanOu123/multilingual-model-card: iclr_best_papers.json",
    ):
        assert name in awards and name in stats, name
    assert ">_data/papers.yml<" not in awards and ">iclr_best_papers.json" not in awards
