"""Updates planned, and maintained from their change: the fast path of `updates.apply`.

The plan (`plan_change`) is what an update means, under the union-default-graph rule of
docs/updates.md, and both paths write it: an INSERT DATA or DELETE DATA says exactly which quads
it adds and removes; DROP and CLEAR (of a graph, DEFAULT, NAMED or ALL) remove quads read from the
store, as ADD, COPY and MOVE carry them over; a DELETE/INSERT ... WHERE (DELETE WHERE too) matches
its pattern once, before the change: on the default graph by a CONSTRUCT of each template, with
WITH, USING or GRAPH by a SELECT whose solutions fill the templates. An operation's deletes come
before its inserts. So nothing but the change's neighbourhood need be read.

Maintained (`maintain`), in the writer's working copy of the current generation the quads are
written, then:

- the inferred graph is brought up to date by delete and rederive (`reasoning/dred.py`, the code an
  incremental build runs), from the current generation's closure and its hidden facts;
- the merged default graph changes only for the triples whose standing changed;
- the entity index is patched for the entities those triples reach (`index.patch_index`), and
  the counts /stats and VoID show for the entities whose types or identifiers changed (counts.py);
- the quads per graph are counted from the last generation's counts and the change.

What a generation's maintenance needs next time (the closure's hidden facts and the counts) is
kept beside it (`<generation>.reasoned`: whole, or the change since the generation before) and,
in the writer process, in memory.

Anything else raises NotMaintained with the reason, and the update takes the reference path
(`updates.run_entry`: the same plan per operation, the inferred graph and the index recomputed
from the whole store): LOAD, CREATE, an operation that reads the dataset after another in the
same request (a WHERE; ADD, COPY or MOVE from the default or inferred graph), DELETE DATA with
blank nodes; schema triples or the ontology graph; owl:sameAs in the graph (DRed's equality
rules would need whole-graph indexes); a current generation without its reasoning state.

    plan.py      what an update means: its change, planned per operation
    reasoned.py  the reasoning state kept beside each generation and in the writer
    maintain.py  the change written, the closure by delete and rederive, the default graph settled"""

from __future__ import annotations

from iclr_kg.maintained import plan, reasoned  # the modules whose settings tests change
from iclr_kg.maintained.maintain import check_equality, check_growth, keep_context, maintain, states_equality
from iclr_kg.maintained.plan import (
    NotMaintained,
    check_statable,
    inconsistency,
    inferred_refusal,
    plan_change,
    reads_dataset,
    stated_quads,
)
from iclr_kg.maintained.reasoned import State, Step, advance, forget, held, hold, load_state, save, save_state

__all__ = [
    "NotMaintained",
    "State",
    "Step",
    "advance",
    "check_equality",
    "check_growth",
    "check_statable",
    "forget",
    "held",
    "hold",
    "inconsistency",
    "inferred_refusal",
    "keep_context",
    "load_state",
    "maintain",
    "plan",
    "plan_change",
    "reads_dataset",
    "save",
    "save_state",
    "reasoned",
    "stated_quads",
    "states_equality",
]
