"""Incremental builds (build/incremental.py, reasoning/dred.py): after an edit, the store a build
makes from the last generation holds exactly the quads, graphs and index rows of a full build."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from iclr_kg.build.pipeline import build
from iclr_kg.config import Settings, resource_dir
from iclr_kg.errors import ValidationFailed
from iclr_kg.store import current_generation, open_read_only
from iclr_kg.updates import apply
from testbed import synth
from testbed.helpers import run_cli, snapshot


def assert_same_as_full(settings: Settings, tmp_path: Path) -> None:
    full = settings.model_copy(update={"store": tmp_path / "full-store"})
    shutil.rmtree(full.store, ignore_errors=True)
    report = build(full, full=True)
    assert report.mode.startswith("full build")
    mine, theirs = snapshot(settings.store), snapshot(full.store)
    assert mine[0] - theirs[0] == set() and theirs[0] - mine[0] == set()
    assert mine[1:] == theirs[1:]


@pytest.fixture(scope="module")
def real_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, Path]:
    """The real data/ in a folder of its own, built once for the module; and a pristine copy of
    that folder, which no test writes to."""
    root = tmp_path_factory.mktemp("real")
    data = root / "data"
    shutil.copytree(resource_dir("data"), data)
    settings = Settings(data_dir=data, store=root / "store")
    assert build(settings).mode.startswith("full build: no store yet")
    pristine = tmp_path_factory.mktemp("real-pristine") / "copy"
    shutil.copytree(root, pristine, symlinks=True)  # `current` is a relative link
    return settings, pristine


@pytest.fixture
def real_copy(real_built: tuple[Settings, Path]) -> Settings:
    """The real data/ and its store as first built, for one test to edit and build again: the
    pristine copy put back in the folder it was built in (the parse cache keys on each file's
    path), a fraction of a build's time."""
    settings, pristine = real_built
    root = settings.store.parent
    shutil.rmtree(root)
    shutil.copytree(pristine, root, symlinks=True)
    return settings


def _retitle(data: Path) -> None:
    path = data / "sources" / "iclr2021-outstanding-papers.yaml"
    text = path.read_text(encoding="utf-8")
    old = "title: Complex Query Answering with Neural Link Predictors"
    assert old in text
    path.write_text(text.replace(old, "title: Complex Query Answering, retitled", 1), encoding="utf-8")


def _drop_author(data: Path) -> None:
    path = data / "sources" / "iclr2021-outstanding-papers.yaml"
    text = path.read_text(encoding="utf-8")
    old = "authors: [Erik Arakelyan, Daniel Daza, Pasquale Minervini, Michael Cochez]"
    assert old in text
    path.write_text(text.replace(old, "authors: [Erik Arakelyan, Daniel Daza, Pasquale Minervini]"), encoding="utf-8")


def _new_parent(data: Path) -> None:
    """Amazon becomes part of Microsoft: AWS and AWS AI too, by transitivity."""
    path = data / "organizations.yaml"
    text = path.read_text(encoding="utf-8")
    old = "  - key: amazon\n    name: Amazon\n    kind: company\n"
    assert old in text
    path.write_text(text.replace(old, old + "    parent: microsoft\n", 1), encoding="utf-8")


def _no_award(data: Path) -> None:
    for path in (data / "sources").glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("    awards: [ICLR 2024 Outstanding Paper Award]\n", "", 1), encoding="utf-8")


def _without_a_source(data: Path) -> None:
    (data / "sources" / "iclr2020-perfect-score-papers.yaml").unlink()


def _new_paper(data: Path) -> None:
    path = data / "sources" / "iclr2021-notable-submissions.yaml"
    text = path.read_text(encoding="utf-8")
    assert "\npapers:\n" in text
    paper = (
        "\npapers:\n  - openreview: NEWPAPER01\n    edition: ICLR 2021\n    title: A Paper Added By Hand\n"
        "    authors: [Yang Song, Ben Poole]\n    decision: accepted\n\n"
    )
    path.write_text(text.replace("\npapers:\n", paper, 1), encoding="utf-8")


EDITS: dict[str, Callable[[Path], None]] = {
    "a paper retitled": _retitle,
    "an author dropped": _drop_author,
    "an organization given a parent": _new_parent,
    "an award taken back": _no_award,
    "a source deleted": _without_a_source,
    "a paper added": _new_paper,
}


@pytest.mark.parametrize("whole", [False, True], ids=["change-checked", "validated-and-indexed-whole"])
@pytest.mark.parametrize("edit", EDITS)
def test_an_edit_rebuilds_incrementally_to_what_a_full_build_makes(
    real_copy: Settings, tmp_path: Path, edit, whole: bool, monkeypatch
) -> None:
    """Both ways of checking a change: its own focus nodes and index rows, or (a change above
    incremental.WHOLE_ABOVE of the quads) the whole graph validated in memory, the index built
    whole."""
    from iclr_kg.build import incremental

    if whole:
        monkeypatch.setattr(incremental, "WHOLE_ABOVE", 0.0)
    EDITS[edit](real_copy.data_dir)
    report = build(real_copy)
    assert report.mode == "incremental", report.mode
    assert_same_as_full(real_copy, tmp_path)
    again = build(real_copy)  # nothing changed since: incremental, nothing to do, same graph
    assert again.mode == "incremental"
    assert sum(again.counts.values()) == sum(report.counts.values())


def _mutate(content: dict[str, dict], rng: random.Random) -> None:
    """A few random edits of the kinds curators make, on testbed/synth.py's data."""
    sources = [c for name, c in content.items() if name.startswith("sources/") and "papers" in c]
    identifiers = content["sources/synthetic-identifiers.yaml"]["identifiers"]
    people = [p["name"] for p in content["people.yaml"]["people"]]
    for _ in range(rng.randint(1, 4)):
        papers = rng.choice(sources)["papers"]
        paper = rng.choice(papers)
        kind = rng.choice(
            ["retitle", "drop author", "add author", "reorder", "drop paper", "parent", "ratings", "drop identifier"]
        )
        if kind == "retitle":
            paper["title"] += " (revised)"
        elif kind == "drop author" and len(paper["authors"]) > 1:
            paper["authors"].pop(rng.randrange(len(paper["authors"])))
        elif kind == "add author":
            extra = rng.choice(people)
            if extra not in paper["authors"]:
                paper["authors"].append(extra)
        elif kind == "reorder":
            rng.shuffle(paper["authors"])
        elif kind == "drop paper" and len(papers) > 1:
            papers.remove(paper)  # and the identifiers stated for it, as a curator would
            identifiers[:] = [i for i in identifiers if i["entity"] != f"paper/{paper['openreview']}"]
        elif kind == "drop identifier" and identifiers:
            identifiers.pop(rng.randrange(len(identifiers)))
        elif kind == "parent":
            orgs = content["organizations.yaml"]["organizations"]
            roots = [o for o in orgs if "parent" not in o]
            child, parent = rng.sample(roots, 2)
            child["parent"] = parent["key"]
        elif kind == "ratings" and paper.get("ratings"):
            paper["ratings"] = paper["ratings"][:-1] or [5]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_edits_of_synthetic_data_rebuild_exactly(tmp_path: Path, seed: int) -> None:
    content = synth.generate(300, seed=seed)
    data = tmp_path / "data"

    def write() -> None:
        for relative, value in content.items():
            path = data / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(value, allow_unicode=True, sort_keys=False), encoding="utf-8")

    write()
    settings = Settings(data_dir=data, store=tmp_path / "store")
    build(settings)
    rng = random.Random(seed)
    modes = []
    for _ in range(3):
        _mutate(content, rng)
        write()
        modes.append(build(settings).mode)
        assert_same_as_full(settings, tmp_path)
    assert modes.count("incremental") >= 2, modes


@pytest.mark.parametrize(
    ("whole_above", "whole_change"),
    [(1000, False), (0, False), (1000, True)],
    ids=["focus-nodes-named", "every-target", "whole-graph-in-memory"],
)
def test_a_change_that_breaks_a_shape_is_reported_as_by_a_full_build(
    real_copy: Settings, tmp_path: Path, whole_above: int, whole_change: bool, monkeypatch
) -> None:
    """Checked on the focus nodes the change reaches, or (a change reaching more than
    shaclsparql.WHOLE_ABOVE of them) on every target, or (a change above
    incremental.WHOLE_ABOVE of the quads) on the whole graph: the same report as a full build's."""
    from iclr_kg.build import incremental, shaclsparql

    monkeypatch.setattr(shaclsparql, "WHOLE_ABOVE", whole_above)
    if whole_change:
        monkeypatch.setattr(incremental, "WHOLE_ABOVE", 0.0)
    before = current_generation(real_copy.store)
    path = real_copy.data_dir / "sources" / "iclr2021-outstanding-papers.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("title: Complex Query Answering with Neural Link Predictors", "title: NA"))
    with pytest.raises(ValidationFailed) as incremental:
        build(real_copy)
    assert current_generation(real_copy.store) == before  # the last good store stays
    full = real_copy.model_copy(update={"store": tmp_path / "other"})
    with pytest.raises(ValidationFailed) as from_scratch:
        build(full)
    assert str(incremental.value) == str(from_scratch.value)
    assert "NA" in str(incremental.value) or "3" in str(incremental.value)


@pytest.mark.parametrize(
    "edit",
    [
        lambda source: source["papers"][0].update(title="Retitled"),  # retrieved unchanged: "…Z"
        lambda source: source["source"].update(retrieved="2026-02-01T09:30:00.250+00:00"),
    ],
    ids=["a-paper-retitled", "retrieved-again"],
)
def test_an_edited_import_keeps_the_time_its_retrieval_derives(tmp_path: Path, edit) -> None:
    """An import's iclr:retrievedAt (an xsd:dateTime; its subproperty prov:generatedAtTime
    derived) after an edit of that import: the same prov:generatedAtTime as a full build's, in
    the inferred graph, and the same build state for the build after."""
    content = synth.generate(30, identifiers=False)
    imported = {"kind": "import", "service": "urn:iclr-kg:synthetic", "retrieved": "2026-01-01T00:00:00Z"}
    content["sources/synthetic-2023.yaml"]["source"].update(imported)
    data = synth.write_files(content, tmp_path / "data")
    settings = Settings(data_dir=data, store=tmp_path / "store")
    build(settings)
    edit(content["sources/synthetic-2023.yaml"])
    synth.write_files(content, data)
    assert build(settings).mode == "incremental"
    assert_same_as_full(settings, tmp_path)
    content["sources/synthetic-2023.yaml"]["papers"][1]["title"] = "Retitled again"
    synth.write_files(content, data)
    assert build(settings).mode == "incremental"
    assert_same_as_full(settings, tmp_path)


def test_a_new_year_builds_incrementally_to_what_a_full_build_makes(tmp_path: Path) -> None:
    """Issue #35: the build after a new edition is imported (a sixth of synthetic data's papers,
    and their people and identifiers) starts from the last one."""
    data = synth.write(600, tmp_path / "data", identifiers=False)  # they would name the missing year
    year = sorted((data / "sources").glob("synthetic-2*.yaml"))[-1]
    aside = tmp_path / year.name
    year.rename(aside)
    settings = Settings(data_dir=data, store=tmp_path / "store")
    assert build(settings).mode.startswith("full build")
    aside.rename(year)
    report = build(settings)
    assert report.mode == "incremental", report.mode
    assert_same_as_full(settings, tmp_path)


def test_what_makes_a_build_full(real_copy: Settings, tmp_path: Path) -> None:
    assert build(real_copy, full=True).mode == "full build: a full build was asked for"
    ontology = tmp_path / "ontology"
    shutil.copytree(real_copy.ontology_dir, ontology)
    (ontology / "iclr.ttl").write_text((ontology / "iclr.ttl").read_text() + "\n# a comment\n")
    changed = real_copy.model_copy(update={"ontology_dir": ontology})
    assert build(changed).mode.startswith("full build: the ontology, shapes, settings or code changed")
    assert build(changed).mode == "incremental"
    apply(changed.store, "INSERT DATA { GRAPH <urn:x> { <urn:a> <urn:b> <urn:c> } }")
    assert build(changed).mode.startswith("full build: updates are journaled")
    assert any(open_read_only(changed.store).quads_for_pattern(None, None, None, None))


def test_a_damaged_build_state_means_a_full_build(real_copy: Settings) -> None:
    from iclr_kg.store import reasoned_path

    state = reasoned_path(current_generation(real_copy.store))
    state.write_bytes(state.read_bytes()[:100])  # cut short
    _retitle(real_copy.data_dir)
    report = build(real_copy)
    assert report.mode.startswith("full build: the current generation has no readable build state")
    assert build(real_copy).mode == "incremental"  # the full build saved a good one


def test_parsed_files_are_cached_by_content(real_copy: Settings) -> None:
    cache = real_copy.store / "cache" / "parsed"
    entries = sorted(p.name for p in cache.iterdir())
    assert len(entries) == 4 + len(list((real_copy.data_dir / "sources").glob("*.yaml")))
    _retitle(real_copy.data_dir)
    build(real_copy)
    now = sorted(p.name for p in cache.iterdir())
    assert len(now) == len(entries) and len(set(now) - set(entries)) == 1  # the edited file, parsed anew
    titles = open_read_only(real_copy.store).query(
        "ASK { ?p iclr:title|iclr:alternativeTitle 'Complex Query Answering, retitled' }",  # one spelling of several
        prefixes={"iclr": "https://w3id.org/iclr-kg/ontology#"},
    )
    assert bool(titles)


def test_build_full_on_the_command_line(real_copy: Settings) -> None:
    env = {"ICLR_KG_DATA_DIR": str(real_copy.data_dir), "ICLR_KG_PROGRESS": "0", "PATH": "/usr/bin:/bin"}
    done = run_cli("build", "--store", str(real_copy.store), env=env)
    assert done.returncode == 0, done.stderr
    assert "(incremental;" in done.stdout
    done = run_cli("build", "--full", "--store", str(real_copy.store), env=env)
    assert "(full build: a full build was asked for;" in done.stdout
