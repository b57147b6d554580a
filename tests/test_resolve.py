"""Stage 2: names as written resolve to exactly one registry entity."""

from __future__ import annotations

import pytest

from iclr_kg.build.resolve import build_registry, normalize, preferred_titles
from iclr_kg.build.sources import load_dataset
from iclr_kg.errors import DataError


def test_normalize_folds_width_case_and_spaces() -> None:
    assert normalize("  Google   Brain ") == normalize("google brain")
    assert normalize("EigenGame： PCA") == normalize("EigenGame: PCA")


def test_aliases_labels_and_keys_resolve(tiny_data) -> None:
    settings = tiny_data()
    registry = build_registry(load_dataset(settings.data_dir))
    where = (settings.data_dir / "x.yaml", 1, "f")
    assert registry.resolve("organization", "谷歌大腦", *where) == "google-brain"
    assert registry.resolve("organization", "斯坦福", *where) == "stanford"
    assert registry.resolve("organization", "stanford university", *where) == "stanford"
    assert registry.resolve("person", "宋飏", *where) == "yang-song"
    assert registry.resolve("edition", "iclr2021", *where) == "iclr2021"


TWO_YANG_SONGS = """
        people:
          - {key: yang-song, name: Yang Song}
          - {key: yang-song-2, name: Yang Song (other), aliases: [Yang Song]}
          - {key: ben-poole, name: Ben Poole}
        """
A_PAPER = """
        source: {key: tiny, title: t, language: zh-Hans, seed: s, summary: s}
        papers:
          - openreview: PxTIG12RRHS
            edition: ICLR 2021
            title: A title
"""


@pytest.mark.parametrize(
    "people, names, where, message",
    [
        (
            {},
            "organizations: [斯坦福, Nowhere University]",
            "organizations[1]",
            "unknown organization 'Nowhere University'",
        ),
        (
            {"people.yaml": TWO_YANG_SONGS},
            "authors: [Ben Poole, Yang Song]",
            "authors[1]",
            "ambiguous person 'Yang Song'",
        ),
    ],
)
def test_a_name_that_does_not_resolve_names_file_line_and_field(
    tiny_data, people: dict[str, str], names: str, where: str, message: str
) -> None:
    """References resolve without their line; where one fails, the line is looked up."""
    from iclr_kg.build import rdf

    settings = tiny_data(**people, source=A_PAPER + "            " + names + "\n")
    dataset = load_dataset(settings.data_dir)
    with pytest.raises(DataError) as info:
        list(rdf.asserted_quads(dataset, build_registry(dataset)))
    assert (info.value.file.name, info.value.line, info.value.field) == ("tiny.yaml", 6, where)
    assert message in info.value.message


def test_ambiguous_name_is_an_error(tiny_data) -> None:
    settings = tiny_data(**{"people.yaml": TWO_YANG_SONGS})
    dataset = load_dataset(settings.data_dir)
    registry = build_registry(dataset)
    with pytest.raises(DataError, match="ambiguous person 'Yang Song': matches yang-song, yang-song-2"):
        registry.resolve("person", "Yang Song", settings.data_dir / "s.yaml", 3, "authors[0]")


def test_duplicate_registry_key(tiny_data) -> None:
    settings = tiny_data(
        **{
            "people.yaml": """
        people:
          - {key: ben-poole, name: Ben Poole}
          - {key: ben-poole, name: B. Poole}
        """
        }
    )
    with pytest.raises(DataError) as info:
        build_registry(load_dataset(settings.data_dir))
    assert info.value.line == 3 and "duplicate person key" in info.value.message


def test_unknown_parent_and_cycles(tiny_data) -> None:
    settings = tiny_data(
        **{
            "organizations.yaml": """
        organizations:
          - {key: a, name: A, kind: company, parent: b}
          - {key: b, name: B, kind: company, parent: a}
        """
        }
    )
    with pytest.raises(DataError, match="cycle"):
        build_registry(load_dataset(settings.data_dir))
    settings = tiny_data(
        **{
            "organizations.yaml": """
        organizations:
          - {key: a, name: A, kind: company, parent: nowhere}
        """
        }
    )
    with pytest.raises(DataError, match="unknown organization 'nowhere'"):
        build_registry(load_dataset(settings.data_dir))


@pytest.mark.parametrize(
    "entity, known",
    [
        ("organization/google", True),
        ("person/ben-poole", True),
        ("edition/iclr2021", True),
        ("conference/iclr", True),
        ("award/iclr2021-outstanding-paper", True),
        ("person/nobody", False),
        ("organization/yang-song", False),  # a key of another kind's registry
        ("topic/google", False),  # no registry of that kind
    ],
)
def test_a_wikidata_link_names_an_entity_of_a_curated_registry(tiny_data, entity: str, known: bool) -> None:
    """A link's entity is known when the registry of its kind has its key (the registries
    loaded say which kinds are curated: no list of them is kept beside)."""
    link = f"links:\n  - entity: {entity}\n    qid: Q95\n    method: checked\n    evidence: a test fixture\n"
    settings = tiny_data(**{"wikidata.yaml": link})
    if known:
        build_registry(load_dataset(settings.data_dir))
        return
    with pytest.raises(DataError) as info:
        build_registry(load_dataset(settings.data_dir))
    assert info.value.line == 2 and info.value.field == "entity" and entity in info.value.message


def test_the_preferred_title_is_the_best_ranked_sources_then_the_most_written(tiny_data) -> None:
    """docs/titles.md: the organizer's word, then OpenReview, then articles, then other web pages;
    among equals the spelling most sources write, then the least. The tiny article writes
    "Score-Based Generative Modeling through Stochastic Differential Equations"."""
    lower = "Score-based generative modeling through stochastic differential equations"
    paper = "papers:\n  - {openreview: PxTIG12RRHS, edition: ICLR 2021, title: '%s'}\n"
    article = "source: {key: a%d, title: t, language: en, seed: s, summary: s}\n" + paper
    web = (
        "source: {key: w%d, kind: web, title: t, language: en, summary: s, url: 'https://x.org/%d', publisher: X, organizer: %s}\n"
        + paper
    )
    sources = {
        "a1.yaml": article % (1, lower),
        "a2.yaml": article % (2, lower),
        "w1.yaml": web % (1, 1, "false", "SBGM"),
    }

    def preferred(extra: dict[str, str]) -> str:
        dataset = load_dataset(tiny_data(extra_sources=extra).data_dir)
        return preferred_titles(dataset, build_registry(dataset).papers)["PxTIG12RRHS"]

    assert preferred(sources) == lower  # two articles against one; the secondary web page last
    assert preferred({**sources, "w2.yaml": web % (2, 2, "true", "Score-Based SDEs")}) == "Score-Based SDEs"
