"""What a generation counts, for /stats and VoID: quads per named graph, triples in the merged
default graph, entities per class of ours (inferred types included), and people, papers and
organizations per kind of identifier.

A build's generation is counted once, by four queries (store.STATS_GRAPHS and STATS_CLASSES,
identifiers.coverage_query, DEFAULT_GRAPH) run by a query worker (at 50,000 papers they read
the whole store for 16 s), and the counts are kept beside it. An
update's generation gets them from its change instead (maintained/): the writer reads, for
the entities whose types or identifiers the change touches, what they counted for before and
after (`facets`), and adds the difference (`Counts.changed`). So a burst of updates never sets
the query workers counting the store again.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pyoxigraph import DefaultGraph, NamedNode

from iclr_kg import vocab
from iclr_kg.atomic import write_text
from iclr_kg.graph import ReadableGraph
from iclr_kg.identifiers import COVERED_KINDS, SCHEMES, coverage_query
from iclr_kg.store import STATS_CLASSES, STATS_GRAPHS, kept_beside, kept_for_writing

KEPT = "counts"  # the name of the file beside each generation (store.kept_beside)

DEFAULT_GRAPH = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def queries() -> tuple[str, str, str, str]:
    """The four queries a generation is counted by, in the order `Counts.from_rows` reads their rows."""
    return STATS_GRAPHS, STATS_CLASSES, coverage_query(), DEFAULT_GRAPH


KINDS = {kind: vocab.iclr(local) for kind, local in COVERED_KINDS.items()}  # by class, as coverage_query
_IDENTIFIER_PREDICATES = {s.predicate: s.name for s in SCHEMES.values() if s.prop}
# What an entity counts for changes only with a triple of one of these predicates about it
FACET_PREDICATES = {vocab.RDF_TYPE, vocab.SKOS_EXACT_MATCH, *_IDENTIFIER_PREDICATES}

Facets = dict[Any, set[str]]  # entity -> "class <iri>" and "coverage <kind> <scheme>" it counts for


@dataclass
class Counts:
    graphs: dict[str, int]  # quads per named graph
    default: int  # triples in the merged default graph
    classes: dict[str, int]  # entities per class of ours
    coverage: dict[str, int]  # "<kind> <scheme>" -> entities of that kind with such an identifier

    @classmethod
    def from_rows(cls, graphs: dict, classes: dict, coverage: dict, default: dict) -> Counts:
        """From the rows a query worker sent for STATS_GRAPHS, STATS_CLASSES, coverage_query() and DEFAULT_GRAPH."""
        values = [[term[1] for term in row] for row in coverage.get("rows", [])]
        return cls(
            graphs={row[0][1]: int(row[1][1]) for row in graphs.get("rows", [])},
            default=int(default["rows"][0][0][1]),
            classes={row[0][1]: int(row[1][1]) for row in classes.get("rows", [])},
            coverage={f"{kind} {scheme}": int(n) for kind, scheme, n in values},
        )

    def rows(self) -> tuple[dict, dict, dict]:
        """As the rows of STATS_GRAPHS, STATS_CLASSES and coverage_query() (pages render query rows)."""
        number = vocab.XSD_INTEGER.value

        def table(columns: list[str], rows: list[list[tuple[str, str, None, str | None]]]) -> dict:
            return {"columns": columns, "rows": rows, "truncated": False}

        def counted(iri: str, n: int) -> list[tuple[str, str, None, str | None]]:
            return [("iri", iri, None, None), ("literal", str(n), None, number)]

        graphs = [counted(g, n) for g, n in sorted(self.graphs.items())]
        classes = [counted(c, n) for c, n in sorted(self.classes.items(), key=lambda item: (-item[1], item[0]))]
        keyed = sorted((*key.split(" ", 1), n) for key, n in self.coverage.items())
        coverage = [
            [
                ("literal", str(kind), None, None),
                ("literal", str(scheme), None, None),
                ("literal", str(n), None, number),
            ]
            for kind, scheme, n in keyed
        ]
        return (
            table(["graph", "triples"], graphs),
            table(["class", "entities"], classes),
            table(["kind", "scheme", "entities"], coverage),
        )

    def changed(self, graphs: dict[str, int], default_delta: int, before: Facets, after: Facets) -> Counts:
        """The counts after a change: `graphs` (the writer keeps quads per graph), the default
        graph's size moved by `default_delta`, and each touched entity's facets from `before`
        to `after`."""
        moved: Counter[str] = Counter()
        for entity in before.keys() | after.keys():
            for facet in after.get(entity, set()) - before.get(entity, set()):
                moved[facet] += 1
            for facet in before.get(entity, set()) - after.get(entity, set()):
                moved[facet] -= 1
        classes, coverage = dict(self.classes), dict(self.coverage)
        for facet, delta in moved.items():
            what, key = facet.split(" ", 1)
            table = classes if what == "class" else coverage
            table[key] = table.get(key, 0) + delta
        return Counts(
            graphs=dict(graphs),
            default=self.default + default_delta,
            classes={k: n for k, n in classes.items() if n},
            coverage={k: n for k, n in coverage.items() if n},
        )


def facets(store: ReadableGraph, entities: Iterable[Any]) -> Facets:
    """What each of `entities` counts for in the merged default graph: its classes of ours, and
    for each kind it is of, the schemes it has an identifier of (as coverage_query counts)."""
    default, ours = DefaultGraph(), vocab.ONTOLOGY_NS
    wikidata = SCHEMES["wikidata"].iri("")
    out: Facets = {}
    for entity in entities:
        types = {q.object for q in store.quads_for_pattern(entity, vocab.RDF_TYPE, None, default)}
        found = {f"class {t.value}" for t in types if isinstance(t, NamedNode) and t.value.startswith(ours)}
        kinds = [kind for kind, cls in KINDS.items() if cls in types]
        if kinds:
            schemes = {
                name
                for p, name in _IDENTIFIER_PREDICATES.items()
                if next(iter(store.quads_for_pattern(entity, p, None, default)), None) is not None
            }
            matches = store.quads_for_pattern(entity, vocab.SKOS_EXACT_MATCH, None, default)
            if any(isinstance(q.object, NamedNode) and q.object.value.startswith(wikidata) for q in matches):
                schemes.add("wikidata")
            found |= {f"coverage {kind} {scheme}" for kind in kinds for scheme in schemes}
        out[entity] = found
    return out


def count(store: ReadableGraph) -> Counts:
    """Count a store with the four queries, in this process (what a query worker does for the web)."""

    def rows(text: str) -> dict:
        solutions = store.query(text, prefixes=vocab.QUERY_PREFIXES)
        return {"rows": [[(None, term.value) for term in solution] for solution in solutions]}

    return Counts.from_rows(*(rows(text) for text in queries()))


def read(generation: Path) -> Counts | None:
    """The counts kept beside `generation`, if any."""
    try:
        return Counts(**json.loads(kept_beside(generation, KEPT).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write(generation: Path, counts: Counts) -> None:
    """Keep `counts` beside `generation` (whole or not at all), where the web reads them."""
    write_text(kept_for_writing(generation, KEPT), json.dumps(as_json(counts)))


def as_json(counts: Counts) -> dict[str, Any]:
    """As the web keeps a per-generation value (`AppState.per_generation(..., kept=True)`)."""
    return asdict(counts)
