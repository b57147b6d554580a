"""Incremental builds: the graph after an edit, made from the last build instead of from scratch.

A full build loads, reasons over, validates, stores and indexes everything; after an edit to one
curated file almost all of that comes out the same. When the current generation was made by a
build of the same ontology, shapes, settings and code (a fingerprint saved beside it, with the
closure's hidden facts), and no update has been journaled since, `build`

1. compiles the data as always (load, resolve, RDF) and compares its asserted quads with the
   generation's asserted graphs;
2. maintains the closure for the triples that changed (reasoning/dred.py: delete and rederive);
3. makes the new generation from a checkpoint of the old one (hard links) and writes only the
   changed quads: asserted graphs, the inferred graph and the merged default graph;
4. validates, on the new generation, with the constraints whose queries name a changed
   predicate (the others held and still hold), each for the focus nodes the change can reach
   (shaclsparql.validate_change); a violation makes the build full, which reports them all;
5. recomputes the index rows of the entities the change reaches (index.patch_index).

A large change (above WHOLE_ABOVE of the asserted quads: a new year) is validated whole in memory
and indexed whole, as a full build does: both cost less than finding what the
change reaches. Above MAX_CHANGED (or MAX_REMOVED) the build is full.

The result is the quads a full build gives (tests compare them); blank nodes of the ontology
keep the labels of the build that first stored it. Anything else (a changed ontology, a large
change, owl:sameAs, blank nodes in the change) falls back to a full build, saying why.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Store, Triple

from iclr_kg import vocab
from iclr_kg.build import shaclsparql
from iclr_kg.build.rdf import TermQuad
from iclr_kg.build.report import BuildReport
from iclr_kg.build.validate import ValidationResult, load_shapes
from iclr_kg.config import Settings
from iclr_kg.index import build_index, index_path, neighbourhood, patch_index
from iclr_kg.query import kept
from iclr_kg.reasoning import dred, fastrl
from iclr_kg.reasoning.dred import Fallback
from iclr_kg.store import (
    current_generation,
    generation_record,
    load_reasoned,
    publish_changed,
    reasoned_path,
    save_reasoned,
)
from iclr_kg.updates import Journal

STATE_VERSION = 1
# Above these shares of the asserted quads changed, or removed (and above MIN_CHANGED), a full
# build is faster: a new year (added), 14.5% of synthetic data, takes 0.6-0.8 of a full build
# (bench/newyear.py); one of more than 15% took 1.07 of it and 5.8 GiB against 4.0
# (bench/openreview_import.py --every-year); removing what others derive from costs more.
MAX_CHANGED = 0.15
MAX_REMOVED = 0.05
MIN_CHANGED = 2_000
# Above this share of the asserted quads changed, the change is validated and indexed whole, as a
# full build does: a new year (5% of the quads at 10,000 papers) walked back from every changed
# quad for each constraint (past 300 s) and patched 40,000 index rows (16 s; the whole index: 7).
WHOLE_ABOVE = 0.01
PACKAGE = Path(__file__).resolve().parent.parent
CODE_PARTS = ("build", "index", "store", "vocab")  # modules or packages a generation's content depends on
CODE = sorted(
    path
    for part in CODE_PARTS
    for path in ((PACKAGE / part).glob("*.py") if (PACKAGE / part).is_dir() else [PACKAGE / f"{part}.py"])
)
DEFAULT = DefaultGraph()
INFERRED = NamedNode(vocab.GRAPH_INFERRED)
ONTOLOGY = NamedNode(vocab.GRAPH_ONTOLOGY)
Digests = dict[str, tuple[int, int]]  # per asserted graph: (quads, sum of their hashes)


def fingerprint(settings: Settings) -> dict[str, str]:
    """What a generation's content depends on besides the data."""
    digest = hashlib.sha256()
    for path in CODE:
        digest.update(path.read_bytes())
    return {
        "version": str(STATE_VERSION),
        "ontology": hashlib.sha256((settings.ontology_dir / "iclr.ttl").read_bytes()).hexdigest(),
        "shapes": hashlib.sha256((settings.ontology_dir / "shapes.ttl").read_bytes()).hexdigest(),
        "reasoner": settings.reasoner,
        "validator": settings.validator,
        "pyoxigraph": pyoxigraph.__version__,
        "code": digest.hexdigest(),
    }


def save(
    generation: Path,
    settings: Settings,
    counts: dict[str, int],
    asserted: Digests,
    hidden: list[tuple[Any, Any, Any]],
) -> None:
    """Beside a generation a build made: its fingerprint, quads per graph, the digests of its
    asserted graphs and the closure's hidden facts. The generation is already published: if
    this cannot be written (a full disk), the next build is full, and nothing else is lost."""
    save_reasoned(
        generation, {"fingerprint": fingerprint(settings), "counts": counts, "digests": asserted, "hidden": hidden}
    )


@dataclass
class Base:
    """The generation an incremental build starts from."""

    generation: Path
    counts: dict[str, int]
    digests: Digests
    hidden: list[tuple[Any, Any, Any]]


def base(settings: Settings) -> Base | str:
    """The current generation if an incremental build can start from it, else why not."""
    generation = current_generation(settings.store)
    if generation is None:
        return "no store yet"
    if settings.reasoner != "fast" or settings.validator != "fast":
        return "the reasoner or validator is not `fast`"
    if generation_record(generation).get("journal", 0) or Journal(settings.store).entries():
        return "updates are journaled (they are replayed onto a full build)"
    try:
        state = load_reasoned(generation)
        if state["fingerprint"] != fingerprint(settings):
            return "the ontology, shapes, settings or code changed since the last build"
        return Base(generation, state["counts"], state["digests"], state["hidden"])
    except Exception:  # noqa: BLE001 - missing, truncated or foreign: whatever it is, build in full
        return f"the current generation has no readable build state beside it ({reasoned_path(generation).name})"


def digests(quads: list[TermQuad]) -> Digests:
    """Per graph: (quads, the sum of their hashes mod 2**64). The hash of a tuple of pyoxigraph
    terms is the same in every process (pyoxigraph's are SipHash with fixed keys, and its version
    is in the fingerprint), so a graph whose digest is unchanged holds the same quads, and is
    never read back."""
    out: dict[str, list[int]] = {}
    for quad in quads:
        entry = out.setdefault(quad[3].value, [0, 0])
        entry[0] += 1
        entry[1] += hash(quad)
    return {graph: (count, total % 2**64) for graph, (count, total) in out.items()}


@dataclass
class _Diff:
    """The asserted quads that changed, and the triples that changed as the reasoner sees them
    (a triple another graph still states is not removed)."""

    removed: set[Quad]
    added: set[Quad]
    removed_triples: set[Triple]
    added_triples: set[Triple]
    graphs: list[NamedNode]  # the asserted graphs after the change
    stated: Callable[[Triple], bool]  # whether an asserted graph states it after the change


def diff(old: Store, before: Digests, asserted: list[TermQuad], after: Digests) -> _Diff:
    """Compare `asserted` with the old generation's asserted graphs, reading back only those
    whose digest changed."""
    changed = {g for g in before.keys() | after.keys() if before.get(g) != after.get(g)}
    kept = [NamedNode(g) for g in after if g not in changed]
    old_quads = {q for g in changed if g in before for q in old.quads_for_pattern(None, None, None, NamedNode(g))}
    new_quads = {Quad(*q) for q in asserted if q[3].value in changed}
    removed, added = old_quads - new_quads, new_quads - old_quads
    if len(removed) + len(added) > max(MAX_CHANGED * len(asserted), MIN_CHANGED):
        raise Fallback(f"{len(removed) + len(added):,} asserted quads changed; a full build is faster")
    if len(removed) > max(MAX_REMOVED * len(asserted), MIN_CHANGED):
        raise Fallback(f"{len(removed):,} asserted quads removed; a full build is faster")
    for quad in (*removed, *added):
        if isinstance(quad.subject, BlankNode) or isinstance(quad.object, BlankNode):
            raise Fallback("the change has blank nodes")
        if fastrl.is_schema(quad):
            raise Fallback(f"the change states schema ({quad.predicate} {quad.object})")
    in_changed_after = [NamedNode(g) for g in changed if g in after]
    in_changed_before = [NamedNode(g) for g in changed if g in before]

    kept_names = set(kept)
    kept_predicates: dict[NamedNode, bool] = {}

    def in_kept(t: Triple) -> bool:
        # most triples the reasoner asks about are derived (iclr:hasAuthor, wdt:P50...), with a
        # predicate no asserted graph states: one look per predicate spares a look per triple
        # (a new year's 180,000 of them, 3.6 s at 10,000 papers); a triple in no graph is not
        # in the merged default graph either, one point lookup
        p = t.predicate
        if p not in kept_predicates:
            kept_predicates[p] = any(any(old.quads_for_pattern(None, p, None, g)) for g in kept)
        return (
            kept_predicates[p]
            and Quad(t.subject, p, t.object, DEFAULT) in old
            and any(q.graph_name in kept_names for q in old.quads_for_pattern(t.subject, p, t.object, None))
        )

    def stated_after(t: Triple) -> bool:
        return any(Quad(t.subject, t.predicate, t.object, g) in new_quads for g in in_changed_after) or in_kept(t)

    def stated_before(t: Triple) -> bool:
        return any(Quad(t.subject, t.predicate, t.object, g) in old_quads for g in in_changed_before) or in_kept(t)

    removed_triples = {q.triple for q in removed if not stated_after(q.triple)}
    added_triples = {q.triple for q in added if not stated_before(q.triple)}
    graphs = sorted([*kept, *in_changed_after], key=str)
    return _Diff(removed, added, removed_triples, added_triples, graphs, stated_after)


def build_from(
    settings: Settings,
    start: Base,
    asserted: list[TermQuad],
    report: BuildReport,
    finish: Callable[[Store], dict[str, Any]],
) -> Path:
    """The new generation, made from `start` for the compiled `asserted` quads (see above).
    Raises Fallback before anything is written if the change is not one this handles."""
    old = Store.read_only(str(start.generation))
    with report.stage("diff", "quads") as shown:
        after = digests(asserted)
        change = diff(old, start.digests, asserted, after)
        shown.advance(len(change.removed) + len(change.added))

    def given(terms: tuple[Any, Any, Any]) -> bool:
        s, p, o = terms
        if isinstance(s, Literal):  # a hidden fact: never asserted
            return False
        return change.stated(Triple(s, p, o)) or any(old.quads_for_pattern(s, p, o, ONTOLOGY))

    ontology = [q.triple for q in old.quads_for_pattern(None, None, None, ONTOLOGY)]
    shapes = load_shapes(settings.ontology_dir / "shapes.ttl")
    whole = len(change.removed) + len(change.added) > WHOLE_ABOVE * len(asserted)
    if whole:  # before reasoning, not beside it: the two at once took 4.1 GiB at 50,000 papers
        with report.stage("validate (whole)", "quads", key="validate") as shown:
            triples = [(t.subject, t.predicate, t.object) for t in ontology]
            _raise_if_breaks(shaclsparql.validate(asserted, triples, shapes))
            shown.advance(len(asserted))
    with report.stage("reason", "triples") as shown:
        schema = fastrl.oxigraph_schema(ontology, asserted)  # it takes the data's schema triples
        reasoned = dred.update(old, schema, start.hidden, change.removed_triples, change.added_triples, given)
        shown.advance(len(reasoned.inferred_added) + len(reasoned.inferred_removed))

    def apply(db: Store, generation: Path) -> Callable[[Store, dict[str, Any]], None]:
        with report.stage("store", "quads") as shown:
            touched = _write(db, change, reasoned)
            shown.advance(len(touched))
        if not whole:
            with report.stage("validate", "checks", key="validate") as shown:
                graphs = [*change.graphs, ONTOLOGY]
                changed = [*change.removed, *change.added]
                result, checks = shaclsparql.validate_change(db, graphs, shapes, changed, _back(db, old, graphs))
                shown.advance(checks)
            _raise_if_breaks(result)

        def index(db: Store, record: dict[str, Any]) -> None:
            # updates replayed meanwhile changed more than the diff; a large change costs less whole
            if record.get("journal") or whole:
                build_index(db, generation)
            else:
                patch_index(db, generation, index_path(start.generation), neighbourhood(db, touched), touched)

        return index

    counts = dict(start.counts)
    for graph, delta in _count_changes(change, reasoned).items():
        counts[graph] = counts.get(graph, 0) + delta
        if not counts[graph]:
            del counts[graph]

    def finished(db: Store) -> dict[str, Any]:
        return {**finish(db), "quads": sum(counts.values())}  # what /health shows

    with report.stage("publish"):
        ready = kept.keeping(settings.queries_dir, report.timings)
        generation = publish_changed(settings.store, start.generation, apply, finished, ready)
    report.counts.update(counts)
    save(generation, settings, counts, after, reasoned.hidden_after(start.hidden))
    return generation


def _raise_if_breaks(result: ValidationResult) -> None:
    if not result.conforms:  # the full build's validation reports every violation, as always
        raise Fallback(f"the change breaks {len(result.violations)} shape constraint(s)")


def _back(db: Store, old: Store, graphs: list[NamedNode]) -> shaclsparql.Neighbours:
    """One step back along a path, in the asserted graphs before or after the change (a link the
    change removed still leads to the focus nodes it affected)."""

    asserted = set(graphs)

    def back(node: Any, predicate: str, inverse: bool) -> set[Any]:
        p = NamedNode(predicate)
        found: set[Any] = set()
        for store in (db, old):
            if inverse:
                if not isinstance(node, Literal):
                    found |= {
                        q.object for q in store.quads_for_pattern(node, p, None, None) if q.graph_name in asserted
                    }
            else:
                found |= {q.subject for q in store.quads_for_pattern(None, p, node, None) if q.graph_name in asserted}
        return found

    return back


def _write(db: Store, change: _Diff, reasoned: dred.Change) -> list[tuple[Any, Any, Any]]:
    """Write the changed quads into the new generation; returns every triple whose place in the
    default graph, or in a source graph, may have changed (for the index).

    What is added goes in by the bulk loader: the generation is not published yet (a failure
    discards it), so nothing needs a transaction, and transactional inserts read before they write,
    in every index (docs/performance.md, measured choices)."""
    for quad in change.removed:
        db.remove(quad)
    for graph in {q.graph_name for q in change.removed} - set(change.graphs):
        db.remove_graph(graph)  # a source that is gone: no empty graph left behind
    for triple in reasoned.inferred_removed:
        db.remove(Quad(triple.subject, triple.predicate, triple.object, INFERRED))
    added = {q.triple for q in change.added} | set(reasoned.inferred_added)
    db.bulk_extend(
        [
            *change.added,
            *(Quad(t.subject, t.predicate, t.object, INFERRED) for t in reasoned.inferred_added),
            *(Quad(t.subject, t.predicate, t.object, DEFAULT) for t in added),  # stated or inferred: merged
        ]
    )
    gone = ({q.triple for q in change.removed} | set(reasoned.inferred_removed)) - added
    for t in gone:  # out of the merge unless another graph still holds it
        s, p, o = t.subject, t.predicate, t.object
        if not any(q.graph_name != DEFAULT for q in db.quads_for_pattern(s, p, o, None)):
            db.remove(Quad(s, p, o, DEFAULT))
    return [(t.subject, t.predicate, t.object) for t in added | gone]


def _count_changes(change: _Diff, reasoned: dred.Change) -> dict[str, int]:
    delta: dict[str, int] = {}
    for quad, sign in [*((q, -1) for q in change.removed), *((q, 1) for q in change.added)]:
        name = quad.graph_name.value  # type: ignore[union-attr]
        delta[name] = delta.get(name, 0) + sign
    inferred = len(reasoned.inferred_added) - len(reasoned.inferred_removed)
    delta[vocab.GRAPH_INFERRED] = delta.get(vocab.GRAPH_INFERRED, 0) + inferred
    return delta
