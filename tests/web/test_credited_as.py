"""An organization's papers say what each credits: the organization itself or a unit under it
(review 24 item 16: Google's page left "credited as" empty for the three papers that credit
Google directly: Dynamics-Aware Unsupervised Skill Discovery, GenDICE, On the convergence of Adam)."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from tests.web.test_profiles import page, text_of


def credited_as(html: str) -> dict[str, str]:
    """Each row of the papers panel: the paper's title -> its "credited as" cell."""
    panel = html.split("<th>credited as</th>", 1)[1]
    rows = re.findall(r'<td data-label="paper">(.*?)</td><td data-label="credited as">(.*?)</td>', panel, re.S)
    return {text_of(paper): text_of(cell) for paper, cell in rows}


def test_every_paper_of_an_organization_says_what_it_credits(client: FlaskClient) -> None:
    rows = credited_as(page(client, "/resource/organization/google", lang="en"))
    assert len(rows) >= 9 and [title for title, cell in rows.items() if not cell] == []
    direct = [t for t in rows if t.startswith(("Dynamics-Aware", "GenDICE", "On the convergence of Adam"))]
    assert len(direct) == 3 and {rows[t] for t in direct} == {"Google"}
    assert rows["Learning Interactive Real-World Simulators"] == "Google DeepMind"  # through a unit alone
