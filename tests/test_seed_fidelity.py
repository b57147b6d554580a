"""Data never drifts from its articles: every id, title and name a source file holds occurs in that
article's text, and no article sentence is copied. Skipped where ../shared/seeds is absent."""

from __future__ import annotations

import re
import subprocess
import unicodedata

import pytest

from iclr_kg.build.sources import load_dataset
from iclr_kg.config import resource_dir

from .conftest import SEEDS

pytestmark = pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds is not present")
DATASET = load_dataset(resource_dir("data"))
CJK = re.compile(r"[\u3400-\u9fff]")


def fold(text: str) -> str:
    """Undo the articles' HTML entities and full-width punctuation; fold spaces and case."""
    text = re.sub(
        r"&＃(?:x([0-9a-f]+)|(\d+))；?", lambda m: chr(int(m.group(1), 16) if m.group(1) else int(m.group(2))), text
    )
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split()).casefold()


def seed_text(source) -> str:
    return fold((SEEDS / source.source.seed).read_text(encoding="utf-8"))


def cases():
    for source in DATASET.sources:
        if source.source.seed is None:  # a web source: its text is not in the seed collection (test_award_sources.py)
            continue
        key = source.source.key
        yield key, "title", source.source.title
        for paper in source.papers:
            if paper.openreview:
                yield key, "openreview", paper.openreview
            yield key, "paper title", paper.title
            for name in paper.authors:
                yield key, "author", name
            for name in paper.organizations:
                yield key, "organization", name
        for award in source.awards:
            for name in award.committee:
                yield key, "committee", name
        for person in source.people:
            yield key, "person", person.person
            for role in person.education + person.positions:
                yield key, "organization", role.organization


CASES = list(cases())


@pytest.mark.parametrize("source_key, kind, value", CASES, ids=[f"{c[0]}:{c[1]}:{c[2][:30]}" for c in CASES])
def test_value_occurs_in_its_article(source_key: str, kind: str, value: str) -> None:
    source = next(s for s in DATASET.sources if s.source.key == source_key)
    assert fold(value) in seed_text(source), f"{kind} {value!r} is not in {source.source.seed}"


def test_all_cases_collected() -> None:
    assert len(CASES) > 250
    assert sum(1 for c in CASES if c[1] == "openreview") == 38


def test_no_article_sentence_is_copied() -> None:
    """No tracked file repeats 20 or more consecutive Chinese characters of an article."""
    window = 20

    def runs(text: str) -> set[str]:
        chars = "".join(CJK.findall(text))
        return {chars[i : i + window] for i in range(max(0, len(chars) - window + 1))}

    seed_runs: set[str] = set()
    for path in SEEDS.glob("*.txt"):
        seed_runs |= runs(path.read_text(encoding="utf-8"))
    root = resource_dir("data").parent
    listed = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=False).stdout.split()
    files = [root / name for name in listed] or [p for p in root.rglob("*") if p.is_file()]
    copied = {}
    for path in files:
        try:
            found = runs(path.read_text(encoding="utf-8")) & seed_runs
        except (UnicodeDecodeError, OSError):
            continue
        if found:
            copied[str(path)] = sorted(found)[:3]
    assert not copied, copied
