"""The index's file beside its generation, its tables, and the version that says whether an index
is current (an older one is built again, never read)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from iclr_kg import vocab

SUFFIX = ".index.sqlite"


SCHEMA_VERSION = 7  # 2: the authorship table; 3: the credit table; 4: the rating table; 5: topics; 6: natural;
# 7: facts_zh, and a name written in Chinese its own Chinese label


def index_path(generation: Path) -> Path:
    return generation.with_name(generation.name + SUFFIX)


def kind_and_key(iri: str) -> tuple[str, str] | None:
    """(kind, key) of one of our entity IRIs (…/resource/paper/NzTU59SYbNq), else None."""
    if not iri.startswith(vocab.RESOURCE_BASE):
        return None
    kind, _, key = iri[len(vocab.RESOURCE_BASE) :].partition("/")
    return (kind, key) if kind in vocab.ENTITY_KINDS and key else None


_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE entity (id INTEGER PRIMARY KEY, iri TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
                     label TEXT NOT NULL, label_zh TEXT NOT NULL, facts TEXT NOT NULL, sort TEXT NOT NULL,
                     year INTEGER, papers INTEGER NOT NULL, names TEXT NOT NULL, natural TEXT NOT NULL,
                     facts_zh TEXT NOT NULL);
CREATE INDEX entity_kind ON entity (kind, natural);
-- who wrote what, by entity id (iclr:authorOf of the default graph): a person's papers and
-- co-authors read here, a prolific person's in milliseconds (SPARQL sorted 31,810 paper IRIs in
-- 3.5 s at 50,000 papers)
CREATE TABLE authorship (person INTEGER NOT NULL, paper INTEGER NOT NULL, PRIMARY KEY (person, paper)) WITHOUT ROWID;
CREATE INDEX authorship_paper ON authorship (paper, person);
-- which organizations a paper credits (via 0), and each organization above a credited one (via:
-- the credited unit): an organization page's papers, years and award papers
CREATE TABLE credit (organization INTEGER NOT NULL, paper INTEGER NOT NULL, via INTEGER NOT NULL,
                     PRIMARY KEY (organization, paper, via)) WITHOUT ROWID;
CREATE INDEX credit_paper ON credit (paper);
-- each rated paper's average public rating and number of ratings, per edition it was submitted
-- to: an edition page's top-rated papers (SPARQL averaged 26,521 ratings in 0.5 s at 50,000 papers)
CREATE TABLE rating (paper INTEGER NOT NULL, edition INTEGER NOT NULL, average REAL NOT NULL,
                     ratings INTEGER NOT NULL, PRIMARY KEY (paper, edition)) WITHOUT ROWID;
CREATE INDEX rating_edition ON rating (edition, average DESC, ratings DESC);
CREATE VIRTUAL TABLE words USING fts5(names, content='', tokenize="unicode61 remove_diacritics 2", prefix='2 3');
CREATE VIRTUAL TABLE grams USING fts5(names, content='', tokenize='trigram');
-- each paper's title, keywords and abstract, stemmed: topic search (rowid: the paper's entity id;
-- the text kept, so that a patch deletes a row by its id alone)
CREATE VIRTUAL TABLE topics USING fts5(text, tokenize="porter unicode61 remove_diacritics 2");
"""


def current_index(path: Path) -> bool:
    """An index is at `path`, written with this schema (an older one is built again)."""
    return path.exists() and schema_version(path) == SCHEMA_VERSION


def schema_version(path: Path) -> int:
    """The schema version an index was written with (0: none, or no index there)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    except sqlite3.Error:
        return 0
    return int(row[0]) if row and str(row[0]).isdigit() else 0
