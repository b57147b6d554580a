"""The journal's checkpoint: what entries 1..N did to the asserted graphs of a build, kept beside
the store (`journal.checkpoint`), so that the next build of the same base applies that in bulk
and replays only the entries after N.

A build's base is what it compiled (the asserted and ontology quads) and everything that decides
what an entry does to it (the ontology, the settings, the code: `base_hash`). After a build has
replayed entries 1..N onto base H, the checkpoint holds H, the journal's first N lines (their
length and SHA-256), the quads those entries added to and removed from the named graphs (the
inferred graph and the merged default graph are never kept: both follow from the rest) and the
named graphs that stood afterwards (an emptied graph stays). A build whose base is still H and
whose journal still starts with those lines folds the change into its quads before reasoning
and replays entries N+1.. (`pipeline._build_full`); any other (the curated data changed, an entry
was dropped, the file is damaged) replays them all, as before, and writes a new checkpoint.

A change that names a blank node of the base is not kept where the next build's parser names it
anew (the ontology's are named the same by every build: build/rdf.py); those builds replay in full."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyoxigraph import BlankNode, NamedNode, Quad, RdfFormat, Store, parse

from iclr_kg import vocab
from iclr_kg.atomic import write_text
from iclr_kg.errors import StoreError
from iclr_kg.store import JOURNAL_CHECKPOINT
from iclr_kg.updates.journal import Journal
from iclr_kg.updates.reference import replay

FORMAT = 1
PACKAGE = Path(__file__).resolve().parent.parent
UPDATE_CODE = sorted([*(PACKAGE / "updates").glob("*.py"), *(PACKAGE / "maintained").glob("*.py")])

TermQuad = tuple[Any, Any, Any, Any]


@dataclass(frozen=True)
class Checkpoint:
    """The net effect of the journal's entries up to `entry` on the base hashed as `base`."""

    base: str
    entry: int  # the last entry id it holds
    journal_bytes: int  # the length of the journal's lines up to that entry
    journal_sha256: str
    added: frozenset[TermQuad]
    removed: frozenset[TermQuad]
    graphs: frozenset[Any]  # the named graphs that stood after the entries

    def fold(self, asserted: list[TermQuad], ontology: list[TermQuad]) -> tuple[list[TermQuad], list[TermQuad]]:
        """The build's asserted and ontology quads (tuples of terms) with the change applied."""
        graph = NamedNode(vocab.GRAPH_ONTOLOGY)
        added = sorted(self.added, key=lambda q: str(q[3]))  # a graph's quads together: one run for the loader

        def folded(quads: list[TermQuad], into_ontology: bool) -> list[TermQuad]:
            kept = [q for q in quads if tuple(q) not in self.removed] if self.removed else quads
            return kept + [q for q in added if (q[3] == graph) == into_ontology]

        return folded(asserted, False), folded(ontology, True)

    def unfolded(self, quads: set[Quad]) -> set[Quad]:
        """The base's quads, from `quads` (the base with the change applied, read back)."""
        return (quads - {Quad(*q) for q in self.added}) | {Quad(*q) for q in self.removed}

    def restore_graphs(self, db: Store) -> None:
        """Make the named graphs standing in `db` those that stood after the entries (an update
        may leave a graph empty, or take one away)."""
        standing = set(db.named_graphs())
        for graph in self.graphs - standing:
            db.add_graph(graph)
        for graph in standing - self.graphs:
            if next(iter(db.quads_for_pattern(None, None, None, graph)), None) is None:  # never one with quads
                db.remove_graph(graph)


def path_of(store_dir: Path) -> Path:
    return store_dir / JOURNAL_CHECKPOINT


def base_hash(fingerprint: dict[str, str], asserted: Iterable[TermQuad]) -> str:
    """What a base is: the build's fingerprint (ontology, shapes, settings, the build's code),
    the code that runs updates, and the asserted quads (an order-free digest: the sum of their
    hashes per graph, pyoxigraph's hash being the same in every process)."""
    digest = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode())
    for path in UPDATE_CODE:
        digest.update(path.read_bytes())
    sums: dict[str, list[int]] = {}
    for quad in asserted:
        entry = sums.setdefault(str(quad[3]), [0, 0])
        entry[0] += 1
        entry[1] += hash(tuple(quad))
    digest.update(json.dumps(sorted((g, n, total % 2**64) for g, (n, total) in sums.items())).encode())
    return digest.hexdigest()


def read(store_dir: Path, base: str, journal: Journal) -> Checkpoint | None:
    """The store's checkpoint if it holds for `base` and `journal`; None (replay everything) if
    there is none, it is damaged, or it was made on another base or another journal."""
    try:
        text = path_of(store_dir).read_text(encoding="utf-8")
        checksum, _, body = text.partition("\n")
        if hashlib.sha256(body.encode("utf-8")).hexdigest() != checksum:
            return None
        kept = json.loads(body)
        if kept.get("format") != FORMAT or kept["base"] != base:
            return None
        prefix = journal.prefix(int(kept["journal_bytes"]))
        if prefix is None or hashlib.sha256(prefix).hexdigest() != kept["journal_sha256"]:
            return None
        if int(kept["entry"]) not in {e.id for e in journal.entries()}:
            return None
        return Checkpoint(
            base,
            int(kept["entry"]),
            int(kept["journal_bytes"]),
            kept["journal_sha256"],
            frozenset(_quads(kept["added"])),
            frozenset(_quads(kept["removed"])),
            frozenset(NamedNode(g) for g in kept["graphs"]),
        )
    except (OSError, ValueError, KeyError, TypeError, SyntaxError):
        return None


def write(
    store_dir: Path, base: str, journal: Journal, entry: int, before: set[Quad], after: set[Quad], graphs: set[Any]
) -> bool:
    """Keep the change from `before` (the base's named graphs) to `after` (theirs once entries
    1..`entry` ran), and the `graphs` standing then, atomically; where that change cannot be
    kept (`portable`), remove the old checkpoint instead. Returns whether one was written."""
    added, removed = after - before, before - after
    length = journal.bytes_through(entry)
    prefix = journal.prefix(length) if length is not None else None
    if prefix is None or not portable(added, removed, before):
        invalidate(store_dir)
        return False
    body = json.dumps(
        {
            "format": FORMAT,
            "base": base,
            "entry": entry,
            "journal_bytes": length,
            "journal_sha256": hashlib.sha256(prefix).hexdigest(),
            "added": _lines(added),
            "removed": _lines(removed),
            "graphs": sorted(g.value for g in graphs),
        },
        ensure_ascii=False,
    )
    write_text(path_of(store_dir), f"{hashlib.sha256(body.encode('utf-8')).hexdigest()}\n{body}", durable=True)
    return True


def invalidate(store_dir: Path) -> None:
    """No checkpoint: the next build replays the whole journal (after entries were dropped)."""
    path_of(store_dir).unlink(missing_ok=True)


def portable(added: set[Quad], removed: set[Quad], base: set[Quad]) -> bool:
    """Whether the change means the same on the next build of this base: a blank node it removes
    or copies from the base is one the next build names the same (the ontology's:
    vocab.ONTOLOGY_BLANK_PREFIX); any other of the base's is named anew by each build's parser."""
    named_anew = {b for q in base for b in _blanks(q) if not b.value.startswith(vocab.ONTOLOGY_BLANK_PREFIX)}
    if not named_anew:
        return True
    return not any(set(_blanks(q)) & named_anew for q in added | removed)


def asserted_quads(db: Store) -> set[Quad]:
    """The quads of `db`'s named graphs but the inferred one: what the checkpoint keeps the change of."""
    inferred = NamedNode(vocab.GRAPH_INFERRED)
    return {q for g in db.named_graphs() if g != inferred for q in db.quads_for_pattern(None, None, None, g)}


def _blanks(quad: Quad) -> list[BlankNode]:
    return [t for t in (quad.subject, quad.object) if isinstance(t, BlankNode)]


def _lines(quads: set[Quad]) -> list[str]:
    return sorted(f"{q} ." for q in quads)


def _quads(lines: list[str]) -> Iterator[TermQuad]:
    if not lines:
        return
    text = "\n".join(lines).encode("utf-8") + b"\n"
    for quad in parse(text, format=RdfFormat.N_QUADS):
        yield (quad.subject, quad.predicate, quad.object, quad.graph_name)


class Replay:
    """A build's replay of the journal onto its new generation, in two parts: before the write
    lock, every entry the checkpoint `kept` lacks (all, without one) as the journal stands, and a
    new checkpoint written; under the lock, only the entries journaled since (updates wait for
    the lock: they wait for those alone). `state`: the reasoning state after the load."""

    def __init__(self, store_dir: Path, reasoner: str, base: str, kept: Checkpoint | None, state: Any):
        self.store_dir, self.reasoner, self.base, self.kept, self.state = store_dir, reasoner, base, kept, state
        self.after = kept.entry if kept is not None else 0
        self.folded = sum(1 for e in Journal(store_dir).entries() if e.id <= self.after)
        self.replayed = 0
        self.covered: tuple[int, str] | None = None  # the journal's bytes the first part ran: length, SHA-256

    def before_lock(self, db: Store) -> dict[str, Any]:
        """The entries after the checkpoint's, and the new checkpoint; returns the record so far."""
        if self.kept is not None:
            self.kept.restore_graphs(db)
        journal = Journal(self.store_dir)
        loaded = asserted_quads(db) if self.base and journal.since(self.after) else None  # no base: no journal then
        record = self._run(db)
        if loaded is not None:
            before = self.kept.unfolded(loaded) if self.kept is not None else loaded
            write(self.store_dir, self.base, journal, self.after, before, asserted_quads(db), set(db.named_graphs()))
        length = journal.bytes_through(self.after) or 0
        self.covered = (length, hashlib.sha256(journal.prefix(length) or b"").hexdigest())
        return record

    def under_lock(self, db: Store) -> dict[str, Any]:
        """The entries journaled since `before_lock` (none, mostly); the record, and whether any ran."""
        length, digest = self.covered or (0, hashlib.sha256(b"").hexdigest())
        prefix = Journal(self.store_dir).prefix(length)
        if prefix is None or hashlib.sha256(prefix).hexdigest() != digest:
            raise StoreError(
                "the journal was rewritten while this build replayed it; nothing was published: build again"
            )
        before = self.replayed
        return {**self._run(db), "changed": self.replayed > before}

    def _run(self, db: Store) -> dict[str, Any]:
        record, state, count = replay(db, self.store_dir, self.reasoner, self.state, after=self.after)
        self.after, self.replayed = record["journal"], self.replayed + count
        if state is not None or count:  # another reasoner than `fast` keeps no state: unknown after an entry
            self.state = state
        return record
