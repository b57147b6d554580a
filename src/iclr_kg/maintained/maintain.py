"""An update maintained from its change on the writer's working copy: the quads written, the
inferred graph by delete and rederive (reasoning/dred.py), the merged default graph for the triples
whose standing changed, and what the index and the counts need."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pyoxigraph import Literal, Quad, Store, Triple

from iclr_kg import vocab
from iclr_kg.counts import FACET_PREDICATES, facets
from iclr_kg.errors import InconsistentGraph, QueryError, TooLarge
from iclr_kg.index import neighbourhood
from iclr_kg.maintained.plan import (
    DEFAULT,
    INFERRED,
    NOT_ASSERTED,
    ONTOLOGY,
    SAME_AS,
    Change,
    NotMaintained,
    check_maintainable,
    inconsistency,
    plan_change,
)
from iclr_kg.maintained.reasoned import CONTEXTS, Step, load_state
from iclr_kg.reasoning import dred, fastrl


def _schema(db: Store) -> fastrl.Schema:
    """The ontology and any schema triples of the asserted graphs (few; read by predicate)."""
    ontology = [q.triple for q in db.quads_for_pattern(None, None, None, ONTOLOGY)]
    declared = (q for c in fastrl.OXIGRAPH_DECLARATIONS for q in db.quads_for_pattern(None, fastrl.TYPE_NODE, c, None))
    stated = (q for p in fastrl.OXIGRAPH_SCHEMA_PREDICATES for q in db.quads_for_pattern(None, p, None, None))
    data = [q.triple for q in (*stated, *declared) if q.graph_name not in (*NOT_ASSERTED, ONTOLOGY)]
    return fastrl.oxigraph_schema(ontology, data)


def maintain(db: Store, source: Path, update: str, base: str | None, max_new: int = 0) -> Step:
    """Run `update` on `db` (a read-write copy of the generation `source`) and bring its inferred
    graph and default graph up to date from the change. Returns what the state and the index
    need (`advance`, `index.patch_index`), applied once the update is journaled.
    TooLarge past `max_new` new inferred triples; nothing is written then, nor on NotMaintained."""
    state = load_state(source)
    change = plan_change(db, update, base)
    for quad in (*change.added, *change.removed):
        check_maintainable(quad)
    removed = {q.triple for q in change.removed if not change.holding(q.triple)}
    added = {q.triple for q in change.added if not change.stated_before(q.triple)}

    def given(terms: tuple[Any, Any, Any]) -> bool:
        s, p, o = terms
        return not isinstance(s, Literal) and bool(change.holding(Triple(s, p, o)))

    start = CONTEXTS.pop(str(source), None)  # changed by the update: kept again only if it succeeds
    CONTEXTS.clear()
    if start is None:
        start = dred.context(_schema(db), state.hidden)
    try:  # db still holds the old closure: the change is written after
        reasoned = dred.update(db, start.schema, state.hidden, removed, added, given, start)
    except dred.Fallback as exc:
        raise NotMaintained(str(exc)) from None
    except InconsistentGraph as exc:
        raise QueryError(inconsistency(exc)) from None
    check_growth(len(reasoned.inferred_added), max_new)
    triples = {q.triple for q in (*change.removed, *change.added)}
    triples |= {*reasoned.inferred_added, *reasoned.inferred_removed}
    watched = {t.subject for t in triples if t.predicate in FACET_PREDICATES}
    before = facets(db, watched)
    change.write()
    for triple in reasoned.inferred_removed:
        db.remove(Quad(triple.subject, triple.predicate, triple.object, INFERRED))
    db.extend(Quad(t.subject, t.predicate, t.object, INFERRED) for t in reasoned.inferred_added)
    default_delta = _merge(db, triples)
    touched = [(t.subject, t.predicate, t.object) for t in triples]
    CONTEXTS[str(source)] = start  # the fast path changes no schema; start holds the hidden facts after
    return Step(
        reasoned.hidden_added,
        reasoned.hidden_removed,
        _counted(state.counts, change, reasoned),
        neighbourhood(db, touched),
        touched,
        default_delta,
        before,
        facets(db, watched),
    )


def keep_context(source: Path, target: Path) -> None:
    """The reasoner's start `maintain` kept, now `target`'s (after the update is journaled)."""
    start = CONTEXTS.pop(str(source), None)
    if start is not None:
        CONTEXTS[str(target)] = start


def check_growth(added: int, max_new: int) -> None:
    """TooLarge if an update would add more than `max_new` triples to the inferred graph (0: no bound)."""
    if max_new and added > max_new:
        raise TooLarge(
            f"the update would add {added:,} triples to the inferred graph; one update may add at most "
            f"{max_new:,} (ICLR_KG_UPDATE_MAX_DERIVED). Nothing was written"
        )


def states_equality(db: Store) -> bool:
    """Whether the dataset holds owl:sameAs (asserted or derived): then no update is maintained
    here (DRed's equality rules would need whole-graph indexes), each recomputes the closure."""
    return _an_equality(db) is not None


def _an_equality(db: Store) -> Quad | None:
    return next(iter(db.quads_for_pattern(None, SAME_AS, None, DEFAULT)), None)


def check_equality(db: Store) -> None:
    """TooLarge (413) if the update brought owl:sameAs into a dataset that had none: one such
    link makes every later update recompute the whole closure (seconds at 10,000 papers where
    the fast path takes milliseconds), and a link between two entities copies each one's triples
    to the other. Like ICLR_KG_UPDATE_MAX_DERIVED, this bounds what the update costs, now and
    after; 0 there lifts both. Nothing is written."""
    found = _an_equality(db)
    if found is not None:
        raise TooLarge(
            f"the update would bring owl:sameAs into the graph ({found.triple}), after which every update "
            "recomputes the whole closure: merge two entities in the registries (data/*.yaml), or link to "
            "another dataset with skos:exactMatch as our Wikidata links do (ICLR_KG_UPDATE_MAX_DERIVED=0 "
            "lifts this bound). Nothing was written"
        )


def _merge(db: Store, triples: Iterable[Triple]) -> int:
    """The merged default graph for `triples`: held where some named graph states it. Returns
    how many triples it gained (negative: lost)."""
    gained = 0
    for t in triples:
        merged = Quad(t.subject, t.predicate, t.object, DEFAULT)
        held = any(q.graph_name != DEFAULT for q in db.quads_for_pattern(t.subject, t.predicate, t.object, None))
        if held == (merged in db):
            continue  # its standing did not change
        gained += 1 if held else -1
        if held:
            db.add(merged)
        else:
            db.remove(merged)
    return gained


def _counted(counts: dict[str, int], change: Change, reasoned: dred.Change) -> dict[str, int]:
    """Quads per named graph after the change, from the counts before it."""
    out = dict(counts)
    for quads, sign in ((change.added, 1), (change.removed, -1)):
        for quad in quads:
            name = quad.graph_name.value  # type: ignore[union-attr]
            out[name] = out.get(name, 0) + sign
    inferred = len(reasoned.inferred_added) - len(reasoned.inferred_removed)
    out[vocab.GRAPH_INFERRED] = out.get(vocab.GRAPH_INFERRED, 0) + inferred
    return {name: n for name, n in out.items() if n}
