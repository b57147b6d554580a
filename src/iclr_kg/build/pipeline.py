"""The build: every stage in order, with timings and counts. Nothing is written until all passed.

Validation and reasoning both read the asserted graph and neither needs the other: `build` runs
validation in a forked process while it reasons (two cores: the build takes the longer of the
two, not their sum), and still reports a shape violation before any reasoning error.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import rdflib
from pyoxigraph import NamedNode, Store

from iclr_kg import gcpause, maintained, vocab
from iclr_kg.build import incremental, rdf, shaclsparql
from iclr_kg.build.report import BuildReport
from iclr_kg.build.resolve import build_registry
from iclr_kg.build.sources import Dataset, load_dataset
from iclr_kg.build.validate import ValidationResult, load_shapes, validate
from iclr_kg.config import Settings, Validator
from iclr_kg.errors import Failure, IclrKgError, SettingsError, ValidationFailed
from iclr_kg.progress import Progress
from iclr_kg.query import kept as kept_answers
from iclr_kg.reasoning.convert import to_rdflib
from iclr_kg.reasoning.reason import infer_terms
from iclr_kg.store import build_lock, drain, publish
from iclr_kg.updates import Journal, checkpoint, quads_record
from iclr_kg.updates.checkpoint import Checkpoint, Replay

T = TypeVar("T")
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies


@dataclass
class Compiled:
    """The graph before it is stored: asserted and ontology quads (as tuples of terms:
    rdf.TermQuad), and the validation result.

    The rdflib copies (for pySHACL and owlrl) are made only when one of them asks.
    """

    asserted: list[rdf.TermQuad]
    ontology: list[rdf.TermQuad]
    validation: ValidationResult | None = None

    @functools.cached_property
    def asserted_graph(self) -> rdflib.Graph:
        return to_rdflib(self.asserted)

    @functools.cached_property
    def ontology_graph(self) -> rdflib.Graph:
        return to_rdflib(self.ontology)


def _validate_fast(compiled: Compiled, shapes: rdflib.Graph) -> ValidationResult:
    """SHACL compiled to SPARQL and run by Oxigraph, on the pyoxigraph terms."""
    return shaclsparql.validate(compiled.asserted, compiled.ontology, shapes)


def _validate_pyshacl(compiled: Compiled, shapes: rdflib.Graph) -> ValidationResult:
    """pySHACL, the reference, on rdflib copies made at this boundary."""
    return validate(compiled.asserted_graph, shapes, compiled.ontology_graph)


VALIDATORS: dict[Validator, Callable[[Compiled, rdflib.Graph], ValidationResult]] = {
    "fast": _validate_fast,
    "pyshacl": _validate_pyshacl,
}


def compile_graph(settings: Settings, report: BuildReport | None = None) -> Compiled:
    """Load, resolve, convert to RDF and validate; raises on the first data error."""
    compiled = compile_unvalidated(settings, report)
    shapes = load_shapes(settings.ontology_dir / "shapes.ttl")
    engine = _validator(settings)
    compiled.validation = (report or BuildReport()).timed("validate", lambda: engine(compiled, shapes))
    return compiled


def _validator(settings: Settings) -> Callable[[Compiled, rdflib.Graph], ValidationResult]:
    engine = VALIDATORS.get(settings.validator)
    if engine is None:
        raise SettingsError(f"unknown validator {settings.validator!r}; choose one of {', '.join(VALIDATORS)}")
    return engine


def compile_unvalidated(settings: Settings, report: BuildReport | None = None) -> Compiled:
    """Load, resolve and convert to RDF; raises on the first data error."""
    report = report or BuildReport()
    parsed = settings.store / "cache" / "parsed"
    dataset = report.timed(
        "load", lambda: load_dataset(settings.data_dir, settings.imports, cache=parsed), "sources", _sources
    )
    registry = report.timed("resolve", lambda: build_registry(dataset))
    report.curation += [
        f"paper/{key} (named by title) matches {', '.join(f'paper/{i}' for i in ids)}: not merged; "
        "say which with `same_as`, or give it its own title"
        for key, ids in sorted(registry.papers.ambiguous.items())
    ] + registry.identifiers.curation
    asserted = report.timed("rdf", lambda: list(rdf.asserted_quads(dataset, registry)), "quads", len)
    return Compiled(asserted, rdf.ontology_quads(settings.ontology_dir / "iclr.ttl"))


def _sources(dataset: Dataset) -> int:
    return len(dataset.sources)


def build(settings: Settings, progress: Progress | None = None, full: bool = False) -> BuildReport:
    """Build the store at `settings.store`; on any error the previous store stays current.

    The build is incremental (build/incremental.py) where the current generation allows, unless
    `full`; it says why when it cannot be."""
    report = BuildReport(progress=progress or Progress.silent())

    def nothing_journaled(db: Store) -> dict[str, int]:
        """An incremental build starts only with an empty journal; an update accepted while it
        ran makes it a full build, which replays the journal (`_build_full`)."""
        if Journal(settings.store).entries():
            raise incremental.Fallback("updates were journaled while it ran (they are replayed onto a full build)")
        return {}

    with build_lock(settings.store), gcpause.paused():
        compiled = compile_unvalidated(settings, report)
        start = incremental.base(settings) if not full else "a full build was asked for"
        if isinstance(start, incremental.Base):
            try:
                generation = incremental.build_from(settings, start, compiled.asserted, report, nothing_journaled)
                report.generation, report.mode = str(generation), "incremental"
                return report
            except incremental.Fallback as why:
                start = str(why)
        report.mode = f"full build: {start}"
        _build_full(settings, compiled, report)
    return report


def _build_full(settings: Settings, compiled: Compiled, report: BuildReport) -> None:
    """Validate beside reasoning, then store everything in a new generation."""
    shapes = load_shapes(settings.ontology_dir / "shapes.ttl")
    aside = _validate_aside(compiled, shapes, _validator(settings))  # the curated data, before any update
    base, kept = _checkpoint(settings, compiled)
    asserted, ontology = (
        kept.fold(compiled.asserted, compiled.ontology) if kept else (compiled.asserted, compiled.ontology)
    )
    hidden: list[Any] = []
    try:
        inferred = report.timed(
            "reason",
            lambda: infer_terms(asserted, ontology, settings.reasoner, hidden),
            "triples",
            len,
        )
    except Exception:
        _raise_if_invalid(aside().validation)  # a shape violation is told first
        raise
    with report.stage("validate (beside reason)", "violations", key="validate") as shown:
        done = aside()
        shown.seconds = done.seconds  # its own time, not the wait
        shown.advance(len(done.validation.violations))
    _raise_if_invalid(done.validation)
    if kept is None:
        report.counts.update((graph, count) for graph, (count, _) in done.digests.items())
    else:  # the curated quads with what the journal's checkpointed entries did to them
        compiled.asserted = asserted
        report.counts.update(Counter(quad[3].value for quad in asserted))
    report.counts.update(Counter(quad[3].value for quad in ontology))
    if inferred:
        report.counts[vocab.GRAPH_INFERRED] = len(inferred)
    # The asserted list is emptied as it is stored (`drain`): nothing reads it after this stage.
    quads = itertools.chain(drain(compiled.asserted), ontology)
    inferred_graph = {NamedNode(vocab.GRAPH_INFERRED): inferred}  # the reasoner's terms, by id (fastrl.TermTriples)
    # Accepted updates outlive the build: each entry the checkpoint lacks runs onto the new
    # generation as the writer ran it, those journaled while it ran under the write lock.
    replaying = Replay(
        settings.store, settings.reasoner, base, kept, maintained.State(set(hidden), dict(report.counts))
    )

    def record(part: dict[str, Any]) -> dict[str, Any]:
        return {**part, **quads_record(replaying.state)}  # no state (another reasoner): counts unknown

    # what the store writes: each quad, and again in the merged default graph (the summary's
    # count is the named graphs' alone: "built 7,245 quads" after "store: 14,490 quads written")
    with report.stage("store", "quads written", total=2 * sum(report.counts.values())) as shown:
        generation = publish(
            settings.store,
            quads,
            prepare=lambda db: record(replaying.before_lock(db)),
            finish=lambda db: record(replaying.under_lock(db)),
            loaded=shown.advance,
            graphs=inferred_graph,
            ready=kept_answers.keeping(settings.queries_dir, report.timings),
        )
    report.generation = str(generation)
    report.journal = (replaying.folded, replaying.replayed)
    state = replaying.state
    if settings.reasoner == "fast" and state is not None:
        incremental.save(generation, settings, state.counts, done.digests, list(state.hidden))
    report.made += [compiled, inferred, hidden]


def _checkpoint(settings: Settings, compiled: Compiled) -> tuple[str, Checkpoint | None]:
    """The base this build replays the journal onto (its hash: `checkpoint.base_hash`) and the
    journal's checkpoint if it was made on that base (None: replay every entry). No journal, no hash."""
    journal = Journal(settings.store)
    if not journal.entries():
        return "", None
    base = checkpoint.base_hash(incremental.fingerprint(settings), compiled.asserted)
    return base, checkpoint.read(settings.store, base, journal)


def _raise_if_invalid(validation: ValidationResult) -> None:
    if not validation.conforms:
        raise ValidationFailed(validation.report, len(validation.violations))


@dataclass
class _Aside:
    """What a full build works out beside reasoning: the validation (and the seconds it took),
    then the asserted graphs' digests, whose counts are the report's and which an incremental
    build starts from (0.3 s at 10,000 papers, off the parent's path; validation is shorter)."""

    validation: ValidationResult
    seconds: float
    digests: incremental.Digests


def _work_aside(
    engine: Callable[[Compiled, rdflib.Graph], ValidationResult], compiled: Compiled, shapes: rdflib.Graph
) -> _Aside:
    start = time.perf_counter()
    validation = engine(compiled, shapes)
    return _Aside(validation, time.perf_counter() - start, incremental.digests(compiled.asserted))


def _validate_aside(
    compiled: Compiled, shapes: rdflib.Graph, engine: Callable[[Compiled, rdflib.Graph], ValidationResult]
) -> Callable[[], _Aside]:
    """Start validating `compiled` in a forked process (it shares the quads, copy-on-write); the
    returned function waits for the result (`_Aside`). A bare `os.fork` with a pipe,
    not multiprocessing: `serve` builds inside a pool worker, which multiprocessing forbids to
    have children. Where fork is not available or not safe (other threads running: a test's
    servers, say), or the process dies, validation runs here instead: slower, never skipped."""
    if sys.platform != "linux" or threading.active_count() > 1:  # a fork copies no other thread, nor its locks
        return lambda: _work_aside(engine, compiled, shapes)
    reader, writer = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        _validate_in_child(parent, reader, writer, engine, compiled, shapes)
    os.close(writer)

    def result() -> _Aside:
        with os.fdopen(reader, "rb") as answer_in:
            payload = answer_in.read()
        os.waitpid(pid, 0)
        if not payload:  # the process died (killed, out of memory): validate here
            return _work_aside(engine, compiled, shapes)
        answer = pickle.loads(payload)
        if isinstance(answer, Failure):
            raise answer.exception()
        return answer

    return result


def _validate_in_child(
    parent: int,
    reader: int,
    writer: int,
    engine: Callable[[Compiled, rdflib.Graph], ValidationResult],
    compiled: Compiled,
    shapes: rdflib.Graph,
) -> NoReturn:
    """The forked child: validate, send the pickled answer, and leave with `os._exit` whatever
    happens (it must never return into the parent's code, nor run its clean-up). It dies with the
    parent (PR_SET_PDEATHSIG): a killed build leaves no validator holding its build lock."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before that took effect
            os._exit(0)
        os.close(reader)
        try:
            answer: Any = _work_aside(engine, compiled, shapes)
        except Exception as exc:  # noqa: BLE001 - any failure is sent back and raised by the parent
            if not isinstance(exc, IclrKgError):
                traceback.print_exc()
            answer = Failure.of(exc)
        payload = pickle.dumps(answer)
        with os.fdopen(writer, "wb") as out:
            out.write(payload)
    finally:
        os._exit(0)
