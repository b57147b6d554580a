"""A statement with several texts, each stated in English and in Chinese, is one row in the page's
language, not one per combination of languages (review 24 item 2: Yang Song's two roles made
eight rows, "PhD student | 博士" among them; the saved query gave Andrej Karpathy six)."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient

from tests.web.test_profiles import page, section, text_of

ROLES = {
    "en": [
        "Stanford Computer Science Department PhD student PhD current",
        "Tsinghua University undergraduate bachelor",
    ],
    "zh": ["斯坦福大学计算机科学系 博士生 博士 现任", "清华大学 本科生 学士"],
}
HEADING = {"en": "Positions and education", "zh": "任职与教育"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_persons_roles_are_one_row_each_in_the_pages_language(client: FlaskClient, lang: str) -> None:
    html = page(client, "/resource/person/yang-song", lang=lang)
    panel = re.search(rf"<h2>{HEADING[lang]}</h2>(.*?)</section>", html, re.S).group(1)
    rows = [text_of(row) for row in re.findall(r"<tr>(.*?)</tr>", panel, re.S)][1:]  # after the header
    assert rows == ROLES[lang]
    assert section(html, HEADING[lang]).count("Simplified") == 0


@pytest.mark.parametrize(
    ("lang", "roles"),
    [("en", {"computer science PhD", "director of AI"}), ("zh", {"计算机科学博士", "AI 总监"})],
)
def test_the_saved_roles_query_gives_one_row_per_role_in_the_pages_language(
    client: FlaskClient, lang: str, roles: set[str]
) -> None:
    html = page(client, "/queries/people-roles", lang=lang)
    table = html[html.index("<table") :]
    rows = [text_of(row) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S) if "Karpathy" in row]
    assert len(rows) == 2 and {r for r in roles if any(r in row for row in rows)} == roles
    assert not re.search(r"\bPhD\b.*博士|博士.*\bPhD\b", " ".join(rows))
    assert 'name="lang"' not in html  # the page's language is not a form field


def test_the_saved_roles_query_as_data_takes_its_language_as_a_parameter(client: FlaskClient) -> None:
    for lang, degree in (("en", "PhD"), ("zh", "博士")):
        rows = client.get("/queries/people-roles", query_string={"lang": lang, "format": "json"}).get_json()
        karpathy = [b for b in rows["results"]["bindings"] if "karpathy" in b["person"]["value"]]
        assert len(karpathy) == 2 and {b["degree"]["value"] for b in karpathy if "degree" in b} == {degree}
