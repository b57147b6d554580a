"""The on-disk Oxigraph store: atomic publication of a new build, read-only opening, a build lock.

Layout of a store directory:

    STORE/current            symlink to the generation being served
    STORE/generations/<id>/  one Oxigraph database per successful build
    STORE/build.lock         held (flock) while a build runs
    STORE/write.lock         held (flock) by each update, and by a build while it publishes
    STORE/journal.jsonl      every accepted update (updates/), replayed onto each build

A build writes a new generation beside the old one and swings `current` with an atomic rename
only after everything succeeded, so a failed or killed build leaves the previous store serving.

    generations.py  which generation is current, opening one, the files kept beside each
    locks.py        one build, and one writer, at a time
    loading.py      quads into pyoxigraph's bulk loader as N-Triples bytes
    publishing.py   a new generation loaded, indexed, marked complete and made current
    pruning.py      which generations and kept files may go
    running.py      queries and updates as the product runs them
    checking.py     `check-store`: every quad read in a child under a memory limit; `damage`:
                    the whole-store indexes read back once per generation, before queries"""

from __future__ import annotations

from iclr_kg.store.checking import STATS_CLASSES, STATS_GRAPHS, check_generation, damage, refuse_damaged
from iclr_kg.store.generations import (
    JOURNAL,
    JOURNAL_CHECKPOINT,
    being_written,
    built_on,
    complete_generation,
    current_generation,
    generation_record,
    generations,
    journal_behind,
    kept_beside,
    kept_for_writing,
    load_reasoned,
    open_read_only,
    reasoned_path,
    save_reasoned,
)
from iclr_kg.store.loading import batched, byte_reader, drain, ntriples
from iclr_kg.store.locks import build_lock, write_lock
from iclr_kg.store.pruning import KEEP_SECONDS, prune_kept_beside
from iclr_kg.store.publishing import discard_unpublished, publish, publish_changed, publish_generation
from iclr_kg.store.running import query_graphs, run_query, run_update

__all__ = [
    "JOURNAL",
    "JOURNAL_CHECKPOINT",
    "KEEP_SECONDS",
    "STATS_CLASSES",
    "STATS_GRAPHS",
    "batched",
    "being_written",
    "build_lock",
    "built_on",
    "byte_reader",
    "check_generation",
    "complete_generation",
    "current_generation",
    "damage",
    "discard_unpublished",
    "drain",
    "generation_record",
    "generations",
    "journal_behind",
    "kept_beside",
    "kept_for_writing",
    "load_reasoned",
    "ntriples",
    "open_read_only",
    "prune_kept_beside",
    "publish",
    "publish_changed",
    "publish_generation",
    "query_graphs",
    "reasoned_path",
    "refuse_damaged",
    "run_query",
    "run_update",
    "save_reasoned",
    "write_lock",
]
