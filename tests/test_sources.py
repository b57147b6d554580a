"""Stage 1: reading data/ files, and errors that name file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from iclr_kg.build.sources import load_dataset, load_source, read_yaml
from iclr_kg.errors import DataError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "source.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_lines_are_kept_for_every_field(tiny_data) -> None:
    dataset = load_dataset(tiny_data().data_dir)
    paper = dataset.sources[0].papers[0]
    assert paper.line() == 13
    assert paper.line("authors", 1) == 16
    assert dataset.organizations[2].line("parent") == 14
    copied = paper.model_copy(update={"title": "Retitled"})  # importers copy blocks: lines go along
    assert (copied.title, copied.line("authors", 1)) == ("Retitled", 16)
    organization = dataset.organizations[2]
    assert organization.file is not None and organization.model_copy().file == organization.file


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "source:\n  key: x\n  title: [unclosed\n")
    with pytest.raises(DataError) as info:
        read_yaml(path)
    assert info.value.file == path and info.value.line == 4
    assert "invalid YAML" in str(info.value)


def test_unknown_field_is_an_error_with_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "source:\n  key: x\n  title: t\n  language: zh-Hans\n  seed: s\n  summary: s\n"
        "papers:\n  - openreview: abcdefgh\n    edition: e\n    title: t\n    autors: [A]\n",
    )
    with pytest.raises(DataError) as info:
        load_source(path)
    assert (info.value.line, info.value.field) == (11, "papers.0.autors")
    assert "Extra inputs are not permitted" in info.value.message


def test_wrong_type_names_the_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "source:\n  key: x\n  title: t\n  language: zh-Hans\n  seed: s\n  summary: s\n"
        "editions:\n  - edition: e\n    submissions: many\n",
    )
    with pytest.raises(DataError) as info:
        load_source(path)
    assert (info.value.line, info.value.field) == (9, "editions.0.submissions")


@pytest.mark.parametrize(
    "note", ["Article 000 counts its awards as Google's.", "{en: seed 001 says so, zh: 文章 001 这样说}"]
)
def test_a_note_that_cites_a_source_by_an_internal_number_is_refused(tmp_path: Path, note: str) -> None:
    """Review 25 new defect 3: "Article 000 counts Google Brain's awards as Google's" on a
    reader's page; a note names a source by its title."""
    path = write(
        tmp_path,
        "source:\n  key: x\n  title: t\n  language: zh-Hans\n  seed: s\n  summary: s\n"
        f"editions:\n  - edition: e\n    note: {note}\n",
    )
    with pytest.raises(DataError) as info:
        load_source(path)
    assert info.value.line == 9 and "internal number" in info.value.message and "title" in info.value.message


def test_duplicate_key_in_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "source:\n  key: x\n  key: y\n")
    with pytest.raises(DataError) as info:
        read_yaml(path)
    assert info.value.line == 3 and "duplicate key" in str(info.value)


def test_bad_openreview_id_pattern(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "source:\n  key: x\n  title: t\n  language: zh-Hans\n  seed: s\n  summary: s\n"
        "papers:\n  - openreview: 'not an id'\n    edition: e\n    title: t\n",
    )
    with pytest.raises(DataError) as info:
        load_source(path)
    assert info.value.line == 8 and info.value.field == "papers.0.openreview"


def test_missing_registry_file(tiny_data) -> None:
    settings = tiny_data()
    (settings.data_dir / "people.yaml").unlink()
    with pytest.raises(DataError, match="registry file missing"):
        load_dataset(settings.data_dir)


def test_real_data_loads() -> None:
    from iclr_kg.config import resource_dir

    dataset = load_dataset(resource_dir("data"))
    articles = [s for s in dataset.sources if s.source.kind == "article"]
    assert {s.source.seed[:3] for s in articles if s.source.seed} == {"000", "001", "002", "003", "004"}
    assert all(s.source.url and s.source.publisher for s in dataset.sources if s.source.kind == "web")


def test_unknown_top_level_keys_in_a_registry_are_errors(tiny_data) -> None:
    """Regression (hardening #15): they were silently ignored although the module says otherwise."""
    from iclr_kg.build.sources import load_dataset
    from iclr_kg.errors import DataError

    settings = tiny_data(
        **{
            "people.yaml": """
        people:
          - {key: yang-song, name: Yang Song, native_name: {zh: 宋飏}}
          - {key: ben-poole, name: Ben Poole}
        peopel:
          - {key: jane-doe, name: Jane Doe}
        """
        }
    )
    with pytest.raises(DataError, match=r"people.yaml:4: peopel: unknown top-level key; this file holds people"):
        load_dataset(settings.data_dir)


def _shape(value: object) -> object:
    """A parsed value with every line number it carries, to compare two parsers exactly."""
    from iclr_kg.build.sources import LineDict, LineList

    if isinstance(value, LineDict):  # a key without a line of its own is on the mapping's
        lines = {k: value.key_lines.get(str(k), value.line) for k in value}
        return ("map", value.line, lines, {k: _shape(v) for k, v in value.items()})
    if isinstance(value, LineList):
        return ("list", value.line, value.item_lines, [_shape(v) for v in value])
    return value


def test_generated_import_files_read_fast_exactly_as_yaml_would(tmp_path: Path) -> None:
    """Issue #19: an import's one-JSON-mapping-per-line lists are read with json, not YAML's
    Python constructors; the values and every line number are the ones YAML gives."""
    from iclr_kg.build.sources import _parse_yaml, read_yaml
    from iclr_kg.external.importfolder import generated_yaml

    content = {
        "source": {"key": "openreview-iclr-2021", "about": ["ICLR 2021"], "summary": "Ünïcode, «quotes»: yes"},
        "editions": [{"edition": "ICLR 2021", "rating_scale": ["1: strong reject", "8: accept"], "submissions": 3}],
        "papers": [
            {"openreview": "MadeUp00001", "title": "A: b", "authors": [{"name": "Jane Roe", "profile": "~Jane_Roe1"}],
             "reviews": [{"id": "Rev0000001", "rating": 6, "confidence": None}], "organizations_complete": False},
            {"openreview": "MadeUp00002", "title": "宋飏's paper", "authors": [], "average_rating": 7.25},
        ],
        "profiles": [],
    }  # fmt: skip
    path = tmp_path / "openreview-iclr-2021.yaml"
    path.write_text(generated_yaml(content, "# Written by `iclr-kg import openreview`; rerun it.\n# Second line.\n"))
    assert _shape(read_yaml(path)) == _shape(_parse_yaml(path, path.read_text()))
    broken = path.read_text().replace('"title": "A: b"', '"title": "A: b')  # no longer JSON: YAML reports it
    path.write_text(broken)
    with pytest.raises(DataError, match=r"openreview-iclr-2021\.yaml:\d+"):
        read_yaml(path)


# Fields that hold our own words (summaries, notes, reasons as we summarised them, roles): each
# has a Chinese form beside the English in the curated data (Prose), so Chinese pages read Chinese.
OUR_WORDS = {"summary", "note", "reason", "review_summary", "title_note", "outlet_note", "criteria", "role", "degree"}


def test_our_own_words_in_data_have_a_chinese_form() -> None:
    from iclr_kg.config import resource_dir

    english_only: list[str] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in OUR_WORDS:
                    for item in value if isinstance(value, list) else [value]:
                        if not (isinstance(item, dict) and item.get("en") and item.get("zh")):
                            english_only.append(f"{where}: {key}: {item!r:.60}")
                else:
                    walk(value, where)
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    data = resource_dir("data")
    files = sorted(data.glob("*.yaml")) + sorted((data / "sources").glob("*.yaml"))
    assert len(files) > 50
    for path in files:
        walk(read_yaml(path), path.name)
    assert english_only == [], "give each a Chinese form: `field: {en: ..., zh: ...}`"


def test_prose_becomes_an_english_and_a_chinese_literal(tmp_path: Path) -> None:
    from pyoxigraph import Literal, NamedNode

    from iclr_kg.build.rdf import _Emitter
    from iclr_kg.build.sources import Prose

    out = _Emitter(NamedNode("http://example.org/g"))
    node, said = NamedNode("http://example.org/s"), NamedNode("http://example.org/p")
    out.prose(node, said, Prose(en="Well  written.", zh="写得好。"), Prose(en="Reviews: ", zh="评审："))
    out.prose(node, said, "English only.")
    assert [q[2] for q in out.quads] == [
        Literal("Reviews: Well written.", language="en"),
        Literal("评审：写得好。", language="zh-Hans"),
        Literal("English only.", language="en"),
    ]


def test_every_organization_has_a_chinese_label() -> None:
    """Chinese pages name each organization in Chinese: the seeds' form where they name it,
    else the English name kept on purpose (organizations.yaml says which, beside the label)."""
    from iclr_kg.config import resource_dir

    dataset = load_dataset(resource_dir("data"))
    assert len(dataset.organizations) > 60
    assert [o.key for o in dataset.organizations if not any(k.startswith("zh") for k in o.labels)] == []
