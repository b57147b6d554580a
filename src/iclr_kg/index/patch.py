"""An index brought up to date after an update: the rows of the entities the change reached, and
the authorships, credits, ratings and topics its triples touched, read back from the store by
pattern (an update touches a few entities; building again would read them all)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pyoxigraph import DefaultGraph, NamedNode

from iclr_kg.graph import ReadableGraph, value
from iclr_kg.index.build import (
    AUTHOR_OF,
    CREDITED,
    CREDITS,
    NAME_PREDICATES,
    PART_OF,
    RATING,
    REVIEW_OF,
    SUBMITTED_TO,
    TOPIC_PREDICATES,
    _add_authorships,
    _add_credits,
    _add_ratings,
    _add_topics,
    _described,
    _Entity,
    _row,
    _select,
    build_index,
    iclr,
)
from iclr_kg.index.facts import DERIVED
from iclr_kg.index.schema import current_index, index_path, kind_and_key
from iclr_kg.kinds import LISTED


def _patch_topics(db: sqlite3.Connection, store: ReadableGraph, gone: Iterable[int], papers: dict[str, int]) -> None:
    """The topic rows of the entity ids `gone` out; those of `papers` (IRI to entity id) in again,
    read from the store by pattern (a patch touches a few papers)."""
    db.executemany("DELETE FROM topics WHERE rowid = ?", [(number,) for number in gone])
    default = DefaultGraph()
    rows = [
        (iri, value(quad.object))
        for iri in papers
        for predicate in TOPIC_PREDICATES
        for quad in store.quads_for_pattern(NamedNode(iri), predicate, None, default)
    ]
    _add_topics(db, rows, papers)


def _patch_credits(db: sqlite3.Connection, store: ReadableGraph, touched: list[tuple[Any, Any, Any]]) -> None:
    """The credit table after a change: all of it again where the organization tree changed
    (rare: a curator's edit), else the rows of each paper whose credits changed, from the store."""
    if any(p == PART_OF for _, p, _ in touched):
        db.execute("DELETE FROM credit")
        _add_credits(db, _select(store, CREDITS))
        return
    papers = sorted({s for s, p, _ in touched if p == CREDITED and isinstance(s, NamedNode)}, key=str)
    if not papers:
        return
    default, rows = DefaultGraph(), []
    for paper in papers:
        for credit in store.quads_for_pattern(paper, CREDITED, None, default):
            rows.append((value(credit.object), paper.value, ""))
            for above in store.quads_for_pattern(credit.object, PART_OF, None, default):
                rows.append((value(above.object), paper.value, value(credit.object)))
    db.executemany(
        "DELETE FROM credit WHERE paper = (SELECT id FROM entity WHERE iri = ?)", [(p.value,) for p in papers]
    )
    _add_credits(db, rows)


def _patch_ratings(db: sqlite3.Connection, store: ReadableGraph, touched: list[tuple[Any, Any, Any]]) -> None:
    """The rating rows of each paper whose reviews, ratings or edition changed, from the store."""
    default = DefaultGraph()
    papers: set[str] = set()
    for s, p, o in touched:
        if p == REVIEW_OF and isinstance(o, NamedNode):
            papers.add(o.value)
        elif p == SUBMITTED_TO and isinstance(s, NamedNode):
            papers.add(s.value)
        elif p == RATING and isinstance(s, NamedNode):
            papers |= {value(q.object) for q in store.quads_for_pattern(s, REVIEW_OF, None, default)}
    rows = []
    for paper in sorted(papers):
        node = NamedNode(paper)
        ratings = [
            float(value(r.object))
            for review in store.quads_for_pattern(None, REVIEW_OF, node, default)
            for r in store.quads_for_pattern(review.subject, RATING, None, default)
        ]
        if ratings:
            for edition in store.quads_for_pattern(node, SUBMITTED_TO, None, default):
                rows.append((paper, value(edition.object), sum(ratings) / len(ratings), len(ratings)))
    db.executemany("DELETE FROM rating WHERE paper = (SELECT id FROM entity WHERE iri = ?)", [(p,) for p in papers])
    _add_ratings(db, rows)


def _drop_rows_of(db: sqlite3.Connection, gone: list[int]) -> None:
    """The authorship, credit and rating rows that name an entity that is gone (by its id)."""
    for start in range(0, len(gone), 500):
        batch, marks = gone[start : start + 500], ",".join("?" * len(gone[start : start + 500]))
        db.execute(f"DELETE FROM authorship WHERE person IN ({marks}) OR paper IN ({marks})", batch + batch)
        db.execute(
            f"DELETE FROM credit WHERE organization IN ({marks}) OR paper IN ({marks}) OR via IN ({marks})", batch * 3
        )
        db.execute(f"DELETE FROM rating WHERE paper IN ({marks}) OR edition IN ({marks})", batch * 2)


def _patch_authorships(db: sqlite3.Connection, store: ReadableGraph, touched: list[tuple[Any, Any, Any]]) -> None:
    """The authorship table after a change: each changed iclr:authorOf triple is added or removed
    as the default graph now has it or not."""
    default = DefaultGraph()
    stated: list[tuple[str, str]] = []
    dropped: list[tuple[str, str]] = []
    for s, p, o in touched:
        if p == AUTHOR_OF and isinstance(s, NamedNode) and isinstance(o, NamedNode):
            held = next(store.quads_for_pattern(s, p, o, default), None) is not None
            (stated if held else dropped).append((s.value, o.value))
    _add_authorships(db, stated)
    db.executemany(
        "DELETE FROM authorship WHERE person = (SELECT id FROM entity WHERE iri = ?) "
        "AND paper = (SELECT id FROM entity WHERE iri = ?)",
        dropped,
    )


def neighbourhood(store: ReadableGraph, changed: Iterable[tuple[Any, Any, Any]]) -> set[str]:
    """The entities whose rows a change of the default graph's triples `changed` can alter: the
    entities in them; what a linking entity (DERIVED: an authorship, a conferral...) in them
    links to (an award's row counts the papers its conferrals name); and, where a name, title or
    year changed, what links to that entity (a paper's row shows its edition's name, an
    authorship's label its paper's title); where a credit changed, the organizations above the
    credited one (their rows count their units' papers). The other rows read only their
    entity's own links."""
    default = DefaultGraph()
    out: set[str] = set()
    named = {p.value for p in NAME_PREDICATES} | {iclr("year").value}
    for s, p, o in changed:
        out |= {t.value for t in (s, o) if isinstance(t, NamedNode) and kind_and_key(t.value)}
        parsed = kind_and_key(s.value) if isinstance(s, NamedNode) else None
        if parsed is None:
            continue
        if parsed[0] in DERIVED:
            for quad in store.quads_for_pattern(s, None, None, default):
                if isinstance(quad.object, NamedNode) and kind_and_key(quad.object.value):
                    out.add(quad.object.value)
        if p == CREDITED and isinstance(o, NamedNode):  # an organization's count includes its units'
            parents = (q.object for q in store.quads_for_pattern(o, PART_OF, None, default))
            out |= {parent.value for parent in parents if isinstance(parent, NamedNode)}
        if p.value in named:
            for quad in store.quads_for_pattern(None, None, s, default):
                if isinstance(quad.subject, NamedNode) and kind_and_key(quad.subject.value):
                    out.add(quad.subject.value)
    return out


def patch_index(
    store: ReadableGraph,
    generation: Path,
    base: Path,
    iris: set[str],
    touched: Iterable[tuple[Any, Any, Any]] = (),
    in_place: bool = False,
) -> Path:
    """The index of `store` (at `generation`), made from the index `base` of a generation that
    differed only in the rows of the entities `iris` (`neighbourhood` of the triples `touched`):
    those rows are computed again, the others kept. An entity keeps its row id; a new one gets
    the next. A base index of an older schema is not patched: the index is built whole.

    A copy of `base` for an incremental build, whose generation has an index of its own.
    `in_place` for an update, whose cost must grow with the change and not with the index
    (a copy grows with the graph): the rows change in the file `base` is, and
    `generation`'s index is a link to it. Readers of the generation before see the new rows
    from the commit on, a few milliseconds before the new generation is published: a label or a
    search hit may be one update ahead of the store a page reads, never behind it. The file is
    in WAL mode, so readers are never blocked and never see a half-written patch."""
    if not current_index(base):
        return build_index(store, generation)
    found = _described(store, only=iris)
    path = index_path(generation)
    written = base.resolve() if in_place else path.with_name(f".{path.name}-{os.getpid()}")
    if in_place:
        db = _writing_connection(written)
    else:
        shutil.copyfile(base, written)
        db = sqlite3.connect(written)
    try:
        _patch_rows(db, store, found, iris, touched)
        db.commit()
    except BaseException:
        db.rollback()
        raise
    finally:
        if not in_place:
            db.close()
    if in_place:
        link = path.with_name(f".{path.name}-{os.getpid()}")
        link.unlink(missing_ok=True)
        link.symlink_to(written.name)  # beside it: a relative link
        os.replace(link, path)
    else:
        os.replace(written, path)
    return path


_WRITING: dict[Path, sqlite3.Connection] = {}


def _writing_connection(real: Path) -> sqlite3.Connection:
    """A writer's connection to an index file, kept open between updates (closing the last one
    checkpoints the WAL: a cost per update otherwise). WAL, so readers go on reading while it
    writes; synchronous=NORMAL, as the index is rebuilt from the store whenever in doubt."""
    db = _WRITING.get(real)
    if db is None or not real.exists():
        for held in _WRITING.values():
            held.close()
        _WRITING.clear()
        db = _WRITING[real] = sqlite3.connect(real, timeout=30, check_same_thread=False)  # under the write lock
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
    return db


def _patch_rows(
    db: sqlite3.Connection,
    store: ReadableGraph,
    found: dict[str, _Entity],
    iris: set[str],
    touched: Iterable[tuple[Any, Any, Any]],
) -> None:
    """Replace the rows of the entities `iris` by those `found` for them (what is not found has
    gone), and the authorships, credits and ratings the triples `touched` reach; not committed."""
    wanted, old = sorted(iris), []
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        old += db.execute(
            f"SELECT id, iri, kind, names FROM entity WHERE iri IN ({','.join('?' * len(batch))})", batch
        ).fetchall()
    ids = {iri: number for number, iri, _, _ in old}
    # read before the old rows go: the entity with the highest id may be among them, and a
    # new entity numbered after what is left would take its id
    last = db.execute("SELECT COALESCE(MAX(id), 0) FROM entity").fetchone()[0]
    for table in ("words", "grams"):  # contentless FTS5: a row goes out by its old text
        db.executemany(
            f"INSERT INTO {table} ({table}, rowid, names) VALUES ('delete', ?, ?)",
            [(number, names) for number, _, kind, names in old if kind in LISTED],
        )
    db.executemany("DELETE FROM entity WHERE id = ?", [(number,) for number in ids.values()])
    rows = []
    papers: dict[str, int] = {}  # IRI → entity id, of the papers among them
    for entity in sorted(found.values(), key=lambda e: e.iri):
        if entity.iri not in ids:
            last += 1
        number = ids.get(entity.iri, last)
        rows.append(_row(number, entity))
        if entity.kind == "paper":
            papers[entity.iri] = number
    db.executemany("INSERT INTO entity VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    touched = list(touched)
    _drop_rows_of(db, [number for iri, number in ids.items() if iri not in found])
    _patch_authorships(db, store, touched)
    _patch_credits(db, store, touched)
    _patch_ratings(db, store, touched)
    for table in ("words", "grams"):
        db.executemany(
            f"INSERT INTO {table} (rowid, names) VALUES (?, ?)", [(r[0], r[10]) for r in rows if r[2] in LISTED]
        )
    old_papers = [number for number, _, kind, _ in old if kind == "paper"]
    _patch_topics(db, store, old_papers, papers)
