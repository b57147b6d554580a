"""One rule for an entity's key (vocab.ENTITY_KEY), for the build that makes it and the page route
that reads it: every entity of the curated build has a page (review 24 item 1: keys over 100
characters, ICLR 2016's Best Paper and its conferral among them, answered 404)."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from pydantic import ValidationError

from iclr_kg import vocab
from iclr_kg.build.sources import Person
from iclr_kg.errors import InternalError
from iclr_kg.external.openreview_import import slug

PAGE = {"Accept": "text/html"}


def test_every_entity_of_the_curated_build_has_a_page(real_store, client: FlaskClient) -> None:
    rows = real_store.query(
        f"SELECT DISTINCT ?e WHERE {{ ?e ?p ?o FILTER STRSTARTS(STR(?e), '{vocab.RESOURCE_BASE}') }}"
    )
    keys = [row["e"].value[len(vocab.RESOURCE_BASE) :] for row in rows]
    assert len(keys) > 900 and max(len(k.split("/", 1)[1]) for k in keys) > 100
    dead = [k for k in keys if client.get(f"/resource/{k}", headers=PAGE).status_code not in (200, 301)]
    assert dead == []


def test_the_longest_key_a_build_can_make_is_one_the_route_accepts(client: FlaskClient) -> None:
    """Three curated keys of the longest kind, joined with a number (a role: person-source-n)."""
    part = "a" * vocab.KEY_PART_MAX
    Person(key=part, name="A Person")
    with pytest.raises(ValidationError):
        Person(key=part + "a", name="A Person")
    longest = f"{part}-{part}-{part}-99999"
    assert vocab.ENTITY_KEY.match(longest) and vocab.entity("role", longest)
    with pytest.raises(InternalError):
        vocab.entity("role", "a" * (vocab.ENTITY_KEY_MAX + 1))
    answer = client.get(f"/resource/role/{longest}", headers=PAGE)
    assert answer.status_code == 404 and "No entity" in answer.get_data(as_text=True)  # looked up, not refused
    assert client.get(f"/resource/role/{'a' * (vocab.ENTITY_KEY_MAX + 1)}", headers=PAGE).status_code == 404


def test_an_imported_entity_key_stays_within_the_curated_bound() -> None:
    affiliation = "Department of Computer Science and Engineering " * 8
    assert len("or-" + slug(affiliation) + "-99999") <= vocab.KEY_PART_MAX
