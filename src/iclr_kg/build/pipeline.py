"""The build: every stage in order, with timings and counts. Nothing is written until all passed."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import rdflib
from pyoxigraph import NamedNode, Quad, Store

from iclr_kg import vocab
from iclr_kg.build import rdf, shaclsparql
from iclr_kg.build.convert import to_rdflib
from iclr_kg.build.reason import infer_triples
from iclr_kg.build.resolve import build_registry
from iclr_kg.build.sources import load_dataset
from iclr_kg.build.validate import ValidationResult, load_shapes, validate
from iclr_kg.config import Settings
from iclr_kg.errors import SettingsError, ValidationFailed
from iclr_kg.store import build_lock, publish
from iclr_kg.updates import replay

T = TypeVar("T")


@dataclass
class BuildReport:
    """What a build did: seconds per stage and triples per graph."""

    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    generation: str = ""
    curation: list[str] = field(default_factory=list)  # what a curator should look at

    def timed(self, stage: str, run: Callable[[], T]) -> T:
        start = time.perf_counter()
        result = run()
        self.timings[stage] = time.perf_counter() - start
        return result

    def summary(self) -> str:
        total = sum(self.counts.values())
        stages = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.timings.items())
        lines = [f"built {total} quads in {len(self.counts)} graphs ({stages})"]
        return "\n".join(lines + [f"curation: {line}" for line in self.curation])


@dataclass
class Compiled:
    """The graph before it is stored: asserted and ontology quads, and the validation result.

    The rdflib copies (for pySHACL and owlrl) are made only when one of them asks.
    """

    asserted: list[Quad]
    ontology: list[Quad]
    validation: ValidationResult | None = None

    @functools.cached_property
    def asserted_graph(self) -> rdflib.Graph:
        return to_rdflib(self.asserted)

    @functools.cached_property
    def ontology_graph(self) -> rdflib.Graph:
        return to_rdflib(self.ontology)


def _validate_fast(compiled: Compiled, shapes: rdflib.Graph) -> ValidationResult:
    """SHACL compiled to SPARQL and run by Oxigraph, on the pyoxigraph quads."""
    return shaclsparql.validate(compiled.asserted, compiled.ontology, shapes)


def _validate_pyshacl(compiled: Compiled, shapes: rdflib.Graph) -> ValidationResult:
    """pySHACL, the reference, on rdflib copies made at this boundary."""
    return validate(compiled.asserted_graph, shapes, compiled.ontology_graph)


VALIDATORS: dict[str, Callable[[Compiled, rdflib.Graph], ValidationResult]] = {
    "fast": _validate_fast,
    "pyshacl": _validate_pyshacl,
}


def compile_graph(settings: Settings, report: BuildReport | None = None) -> Compiled:
    """Load, resolve, convert to RDF and validate; raises on the first data error."""
    report = report or BuildReport()
    dataset = report.timed("load", lambda: load_dataset(settings.data_dir, settings.imports))
    registry = report.timed("resolve", lambda: build_registry(dataset))
    report.curation += [
        f"paper/{key} (named by title) matches {', '.join(f'paper/{i}' for i in ids)}: not merged; "
        "say which with `same_as`, or give it its own title"
        for key, ids in sorted(registry.papers.ambiguous.items())
    ]
    asserted = report.timed("rdf", lambda: list(rdf.asserted_quads(dataset, registry)))
    compiled = Compiled(asserted, rdf.ontology_quads(settings.ontology_dir / "iclr.ttl"))
    shapes = load_shapes(settings.ontology_dir / "shapes.ttl")
    engine = VALIDATORS.get(settings.validator)
    if engine is None:
        raise SettingsError(f"unknown validator {settings.validator!r}; choose one of {', '.join(VALIDATORS)}")
    compiled.validation = report.timed("validate", lambda: engine(compiled, shapes))
    return compiled


def infer_quads(compiled: Compiled, reasoner: str) -> list[Quad]:
    """The inferred graph's quads, by the chosen reasoner (reason.REASONERS)."""
    graph = NamedNode(vocab.GRAPH_INFERRED)
    triples = infer_triples([q.triple for q in compiled.asserted], [q.triple for q in compiled.ontology], reasoner)
    return [Quad(t.subject, t.predicate, t.object, graph) for t in triples]


def build(settings: Settings) -> BuildReport:
    """Build the store at `settings.store`; on any error the previous store stays current."""
    report = BuildReport()

    def replay_journal(db: Store) -> dict[str, int]:
        """Accepted updates outlive the build: run them onto the new generation (updates.py)."""
        return {"journal": replay(db, settings.store, settings.reasoner)}

    with build_lock(settings.store):
        compiled = compile_graph(settings, report)
        assert compiled.validation is not None
        if not compiled.validation.conforms:
            raise ValidationFailed(compiled.validation.report, len(compiled.validation.violations))
        inferred = report.timed("reason", lambda: infer_quads(compiled, settings.reasoner))
        quads = compiled.asserted + compiled.ontology + inferred
        for quad in quads:
            name = quad.graph_name.value  # type: ignore[union-attr]
            report.counts[name] = report.counts.get(name, 0) + 1
        generation = report.timed("store", lambda: publish(settings.store, quads, finish=replay_journal))
        report.generation = str(generation)
    return report
