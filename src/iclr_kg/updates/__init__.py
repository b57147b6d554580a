"""Writes to the store: one writer at a time, every accepted update journaled, inferences kept.

Readers never see a database being written: pyoxigraph may not read a store another process
writes. So an update never touches the generation being served. Under the store's write lock
(an flock, so any number of web processes take turns) it

1. runs on a writable copy of the current generation: for an update maintained from its change
   (below), the writer's working copy, kept open from one update to the next in
   `STORE/writer/` (made again when `current` moved under it); for any other, a checkpoint of
   the current generation (`Store.backup`: RocksDB hard-links the immutable files);
2. appends the update to the journal and fsyncs it: the acknowledgement point;
3. publishes: the new generation is a checkpoint of the working copy (or the written checkpoint
   itself), marked complete (recording the last journal entry it holds and the journal's length
   then), its index brought up to date, and `current` swung to it, exactly as a build publishes.

The server's writer process (`Writer`) acknowledges an update maintained from its change after
step 2 and publishes a burst of them as one generation: when no update came for PUBLISH_IDLE,
PUBLISH_WITHIN after the burst's first, or at once when a reader asks. A checkpoint (RocksDB
flushes every column family and fsyncs) costs more than the update itself, so one per update
set the pace of a burst. Every reader of the server asks first when the journal is longer than
the current generation holds (`store.journal_behind`: one stat), so a read after an
acknowledged update sees it, from any web process. The write lock is held from a burst's first
update to its publication.

A kill -9 at any step leaves either the old generation current (the partial one is pruned) or
the journal ahead of it (the next writer catches the missing entries up, maintained from their
change where it can; a build replays them); no acknowledged update is lost. `iclr-kg build`
replays the whole journal onto each new generation, so updates outlive rebuilds until a curator
moves them into data/ and drops them (`iclr-kg updates`).

The default graph is the union of all graphs (each triple once). An update that inserts into the
default graph keeps the triples in the graph `graph/updates`; one that deletes from it deletes
the triples from every graph that states them. The inferred graph always equals what a full
build would give; an update may not add to it directly. An update made of INSERT DATA, DELETE
DATA, DELETE/INSERT ... WHERE, and DROP or CLEAR of one graph is maintained
from its change (maintained/: delete and rederive, the index patched in place); any other is
run operation by operation and the inferred graph and the index are recomputed from the whole
store. Each update prints one line saying which, and why.

    journal.py    the accepted updates, appended and fsynced: the acknowledgement point
    bursts.py     the fast path: the working copy, maintained updates, a generation per burst
    reference.py  the reference path: a checkpoint, the closure recomputed; replays
    checkpoint.py what a build's replay of the journal did, so that the next replays only the new entries
    applying.py   one update applied, by the fast path where it can be, else the reference
    writer.py     the writer process the web processes send their updates to"""

from __future__ import annotations

from iclr_kg.updates.applying import apply, publish
from iclr_kg.updates.journal import Entry, Journal, drop, export_text
from iclr_kg.updates.reference import apply_entry, graph_counts, quads_record, recompute_closure, replay, run_entry
from iclr_kg.updates.writer import Writer

__all__ = [
    "Entry",
    "Journal",
    "Writer",
    "apply",
    "apply_entry",
    "drop",
    "export_text",
    "graph_counts",
    "publish",
    "quads_record",
    "recompute_closure",
    "replay",
    "run_entry",
]
