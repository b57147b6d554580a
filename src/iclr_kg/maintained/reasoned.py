"""What a generation's maintenance needs next time, kept beside it (`<generation>.reasoned`: whole
every WHOLE_EVERY updates or WHOLE_SECONDS, else the change since its parent) and in the writer
process's memory: the closure's hidden facts and the counts."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iclr_kg.counts import Facets
from iclr_kg.maintained.plan import NotMaintained
from iclr_kg.reasoning import dred
from iclr_kg.store import load_reasoned, save_reasoned

MADE_BY_UPDATES = {"made by": "updates"}  # the fingerprint of a state an update wrote: builds never start from it


@dataclass
class State:
    """What maintaining the next update needs: the closure's hidden facts and quads per graph.

    `chain`: how many generations since the state was last saved whole (each saves only its
    change); `saved`: when it was (time.time()); `added` and `removed`: the hidden facts' change
    since the last generation saved (the updates of one burst, published as one generation)."""

    hidden: set[tuple[Any, Any, Any]]
    counts: dict[str, int]
    chain: int = 0
    saved: float = 0.0
    added: set[tuple[Any, Any, Any]] = field(default_factory=set)
    removed: set[tuple[Any, Any, Any]] = field(default_factory=set)


@dataclass
class Step:
    """What one maintained update did, for the state and the index (applied once it is journaled)."""

    hidden_added: set[tuple[Any, Any, Any]]
    hidden_removed: set[tuple[Any, Any, Any]]
    counts: dict[str, int]
    iris: set[str]  # the entities whose index rows change
    touched: list[tuple[Any, Any, Any]]  # the default graph's triples that changed
    default_delta: int  # triples the merged default graph gained (negative: lost)
    before: Facets  # what the entities whose types or identifiers changed counted for
    after: Facets


# The state is saved whole at least this often; between, each update saves its change beside its
# generation (a few hundred bytes, where the whole is megabytes at 10,000 papers and pickling it
# cost more than the rest of the update). The chain back to a whole one stays short enough that
# pruning (store.KEEP_SECONDS) never takes a link of it.
WHOLE_EVERY = 200


WHOLE_SECONDS = 60.0


# The writer process's last generation: its state (so it is not read back), and the reasoner's
# start (dred.Context: the ontology's rules compiled and the hidden facts numbered, a tenth of a
# second at the curated graph and more at scale), kept only after an update that succeeded.
_LAST: dict[str, State] = {}


CONTEXTS: dict[str, dred.Context] = {}


def load_state(generation: Path) -> State:
    """The state beside `generation` (from memory if this process wrote it): its whole state, or
    the changes since the last whole one applied to it."""
    kept = _LAST.get(str(generation))
    if kept is not None:
        return kept
    try:
        changes: list[dict[str, Any]] = []
        at = generation
        saved = load_reasoned(at)
        while "parent" in saved:
            if len(changes) > 2 * WHOLE_EVERY:
                raise ValueError("a chain of changes with no whole state at its start")
            changes.append(saved)
            at = at.with_name(saved["parent"])
            saved = load_reasoned(at)
        hidden = {tuple(t) for t in saved["hidden"]}
        counts = saved["counts"]
    except Exception as exc:  # noqa: BLE001 - missing, truncated or foreign: recompute instead
        raise NotMaintained(
            f"the current generation has no reasoning state beside it ({exc.__class__.__name__})"
        ) from None
    for change in reversed(changes):
        hidden -= change["hidden_removed"]
        hidden |= change["hidden_added"]
        counts = change["counts"]
    return State(hidden, counts, chain=len(changes), saved=time.time() if not changes else 0.0)


def hold(key: Path, state: State) -> None:
    """Keep `state` in memory under `key` (a generation being made: a replay, a recomputed write),
    for the next update's `maintain`; the state held before is dropped."""
    _LAST.clear()
    _LAST[str(key)] = state


def held(key: Path) -> State | None:
    """The state held in memory under `key`, if it still is."""
    return _LAST.get(str(key))


def save_state(generation: Path, state: State) -> None:
    """Keep `state`, whole, beside `generation` and in memory (the previous generation's is dropped)."""
    _LAST.clear()
    _LAST[str(generation)] = state
    state.chain, state.saved = 0, time.time()
    state.added, state.removed = set(), set()
    save_reasoned(
        generation,
        {"fingerprint": MADE_BY_UPDATES, "counts": state.counts, "digests": {}, "hidden": list(state.hidden)},
    )


def advance(before: Path, after: Path, step: Step) -> None:
    """The state after `step`, made from the state `before` (a generation, or the update before
    in the same burst), kept in memory under the name `after`; `save` keeps it beside the
    generation the burst is published as."""
    state = load_state(before)
    for fact in step.hidden_removed:
        if fact in state.added:
            state.added.discard(fact)
        else:
            state.removed.add(fact)
    for fact in step.hidden_added:
        if fact in state.removed:
            state.removed.discard(fact)
        else:
            state.added.add(fact)
    state.hidden -= step.hidden_removed
    state.hidden |= step.hidden_added
    state.counts = step.counts
    _LAST.clear()
    _LAST[str(after)] = state


def save(parent: Path, generation: Path) -> None:
    """Keep the state of `generation` (in memory: `advance`) beside it, as its change since the
    generation `parent`, or whole every WHOLE_EVERY generations or WHOLE_SECONDS."""
    state = load_state(generation)
    state.chain += 1
    if state.chain >= WHOLE_EVERY or time.time() - state.saved >= WHOLE_SECONDS:
        save_state(generation, state)
        return
    save_reasoned(
        generation,
        {
            "fingerprint": MADE_BY_UPDATES,
            "parent": parent.name,
            "hidden_added": state.added,
            "hidden_removed": state.removed,
            "counts": state.counts,
        },
    )
    state.added, state.removed = set(), set()


def forget() -> None:
    """After a failure: what this process kept in memory may hold a change never published."""
    _LAST.clear()
    CONTEXTS.clear()
