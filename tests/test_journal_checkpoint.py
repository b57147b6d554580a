"""The journal's checkpoint (updates/checkpoint.py): a build of an unchanged base folds in what the
last build's replay did and replays only the entries after it, and the graph it serves is exactly
what replaying the whole journal gives; a changed base, a damaged or mismatching checkpoint, or a
dropped entry means a full replay; the entries known when the build starts run before it takes
the write lock."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import pytest

from iclr_kg.build.pipeline import build
from iclr_kg.build.report import BuildReport
from iclr_kg.config import Settings
from iclr_kg.errors import QueryError
from iclr_kg.store import JOURNAL_CHECKPOINT, current_generation, generation_record, open_read_only, write_lock
from iclr_kg.updates import Journal, apply, drop
from testbed.tiny import TINY_SOURCE
from testbed.update_model import RandomChooser, canonical, request, request_text

PAPER = "https://w3id.org/iclr-kg/resource/paper/PxTIG12RRHS"
ICLR = "https://w3id.org/iclr-kg/ontology#"


def served(settings: Settings) -> tuple[Counter, set[str]]:
    """The current generation's every quad (the merged default graph and the inferred graph
    too), blank nodes as `_`, and its named graphs (an emptied graph still stands)."""
    db = open_read_only(settings.store)
    return canonical(db), {str(g) for g in db.named_graphs()}


def full_replay(settings: Settings) -> tuple[Counter, set[str], BuildReport]:
    """What replaying the whole journal onto a fresh build gives (no checkpoint)."""
    (settings.store / JOURNAL_CHECKPOINT).unlink(missing_ok=True)
    report = build(settings, full=True)
    return (*served(settings), report)


def apply_random(settings: Settings, rng: random.Random, requests: int) -> int:
    """Send random requests from all of SPARQL 1.1 Update (testbed/update_model.py); returns how
    many were accepted (journaled)."""
    choose, accepted = RandomChooser(rng), 0

    def held(graph: str) -> list[str]:
        db = open_read_only(settings.store)
        return [f"{q.triple} ." for q in db.quads_for_pattern(None, None, None, _graph(graph))][:5]

    for _ in range(requests):
        text = request_text(request(choose, held))
        try:
            apply(settings.store, text)
            accepted += 1
        except QueryError:
            pass
    return accepted


def _graph(written: str):
    from pyoxigraph import NamedNode

    return NamedNode(written.strip("<>"))


def authorship(number: int) -> str:
    node = f"<urn:curation:a{number}>"
    return (
        f"INSERT DATA {{ GRAPH <urn:curation> {{ <{PAPER}> <{ICLR}hasAuthorship> {node} . "
        f"{node} a <{ICLR}Authorship> ; <{ICLR}position> {number} }} }}"
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_checkpointed_build_serves_what_a_full_replay_serves(tiny_data, seed: int) -> None:
    """Random journals of mixed updates (DELETE WHERE over the curated data, DROP, CLEAR, ADD,
    COPY, MOVE, blank nodes, the default graph...): a build with the checkpoint of the build
    before equals one replaying the whole journal, over an unchanged base and a changed one."""
    rng = random.Random(seed)
    settings = tiny_data()
    build(settings)
    first = apply_random(settings, rng, 6)
    build(settings, full=True)  # replays all, writes the checkpoint
    more = apply_random(settings, rng, 4)
    writer_saw = served(settings)
    checkpointed = build(settings, full=True)
    with_checkpoint = served(settings)
    assert checkpointed.journal[1] == more, checkpointed.journal  # only the new entries ran
    *replayed, report = full_replay(settings)
    assert report.journal == (0, first + more)
    assert with_checkpoint == tuple(replayed) == writer_saw

    # a changed base: the entries' patterns may match otherwise, so every entry runs again
    tiny_data(source=TINY_SOURCE.replace("ratings: [8, 9]", "ratings: [8, 9, 6]"))
    changed = build(settings, full=True)
    assert changed.journal == (0, first + more)
    on_changed = served(settings)
    *replayed, _ = full_replay(settings)
    assert on_changed == tuple(replayed)


def test_a_second_build_of_an_unchanged_base_replays_only_the_new_entries(tiny_data) -> None:
    settings = tiny_data()
    build(settings)
    for number in range(1, 6):
        apply(settings.store, authorship(number))
    assert build(settings).journal == (0, 5)
    for number in range(6, 8):
        apply(settings.store, authorship(number))
    report = build(settings)
    assert report.journal == (5, 2) and "2 update(s) replayed, 5 taken from its checkpoint" in report.summary()
    assert build(settings).journal == (7, 0)
    assert generation_record(current_generation(settings.store))["journal"] == 7
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <urn:curation> {{ ?a a <{ICLR}Authorship> }} }}"
    assert next(iter(open_read_only(settings.store).query(query)))[0].value == "7"


@pytest.mark.parametrize("damage", ["a byte", "another base", "cut short", "not json"])
def test_a_damaged_or_mismatching_checkpoint_means_a_full_replay(tiny_data, damage: str) -> None:
    settings = tiny_data()
    build(settings)
    for number in range(1, 4):
        apply(settings.store, authorship(number))
    build(settings)
    expected = served(settings)
    path = settings.store / JOURNAL_CHECKPOINT
    text = path.read_text(encoding="utf-8")
    damaged = {
        "a byte": text.replace("urn:curation:a2", "urn:curation:a9"),
        "another base": _resealed(text.replace('"base": "', '"base": "0')),
        "cut short": text[: len(text) // 2],
        "not json": _resealed("{"),
    }[damage]
    path.write_text(damaged, encoding="utf-8")
    assert build(settings).journal == (0, 3)
    assert served(settings) == expected


def _resealed(body_or_text: str) -> str:
    """A checkpoint whose checksum matches its (altered) body."""
    import hashlib

    body = body_or_text.partition("\n")[2] if "\n" in body_or_text else body_or_text
    return f"{hashlib.sha256(body.encode()).hexdigest()}\n{body}"


def test_dropping_entries_invalidates_the_checkpoint(tiny_data) -> None:
    settings = tiny_data()
    build(settings)
    for number in range(1, 4):
        apply(settings.store, authorship(number))
    build(settings)
    assert (settings.store / JOURNAL_CHECKPOINT).exists()
    drop(settings.store, {1})
    assert not (settings.store / JOURNAL_CHECKPOINT).exists()
    assert build(settings).journal == (0, 2)
    ask = "ASK { <urn:curation:a1> ?p ?o }"
    assert not bool(open_read_only(settings.store).query(ask))
    assert bool(open_read_only(settings.store).query(ask.replace("a1", "a2")))


def test_a_build_replays_what_it_knows_before_taking_the_write_lock(tiny_data) -> None:
    """While an update holds the write lock, the build replays every entry already journaled (and
    writes the checkpoint); under the lock it runs only the entry that update journaled."""
    settings = tiny_data()
    build(settings)
    for number in range(1, 4):
        apply(settings.store, authorship(number))
    reports: list[BuildReport] = []
    with write_lock(settings.store):  # an update in progress
        builder = threading.Thread(target=lambda: reports.append(build(settings)))
        builder.start()
        deadline = time.monotonic() + 120
        while not (settings.store / JOURNAL_CHECKPOINT).exists():  # written before the lock is asked for
            assert builder.is_alive() and time.monotonic() < deadline, "the build did not replay before the lock"
            time.sleep(0.05)
        Journal(settings.store).append("update", authorship(4), None, after=0)  # the update, journaled
    builder.join(timeout=120)
    assert reports and reports[0].journal == (0, 4)
    assert generation_record(current_generation(settings.store))["journal"] == 4
    assert bool(open_read_only(settings.store).query("ASK { <urn:curation:a4> ?p ?o }"))
    assert build(settings).journal == (3, 1)  # the checkpoint holds entries 1..3


def test_no_generation_is_published_while_this_process_still_writes_it(tiny_data, monkeypatch) -> None:
    """A writer's handle kept alive past `del` by a reference cycle (an exception's frames) went
    on compacting the generation after it was published, deleting table files readers had just
    read of ("No such file ... 000066.sst" under load): each generation is closed when it is
    published, by whichever path (build, maintained burst, recomputed write) made it."""
    from iclr_kg.store import publishing
    from iclr_kg.store.generations import open_for_writing_here

    published: list[tuple[str, bool]] = []
    vouch = publishing.vouch_intact

    def vouching(generation):
        published.append((generation.name, open_for_writing_here(generation)))
        return vouch(generation)

    monkeypatch.setattr(publishing, "vouch_intact", vouching)
    settings = tiny_data()
    build(settings)
    apply_random(settings, random.Random(1), 10)
    build(settings, full=True)
    assert len(published) > 5 and not [name for name, still_open in published if still_open], published
