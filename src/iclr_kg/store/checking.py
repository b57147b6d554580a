"""`iclr-kg check-store`: every quad of a generation read in a child process under a memory limit,
so damage that would abort or swell the reader ends the child and is reported in one line."""

from __future__ import annotations

from multiprocessing.connection import Connection
from pathlib import Path

from pyoxigraph import (
    DefaultGraph,
    Store,
)

from iclr_kg import vocab
from iclr_kg.errors import Failure, StoreError
from iclr_kg.graph import solutions
from iclr_kg.processes import limit_address_space


def _read_everything(path: str, memory_mib: int, answer: Connection) -> None:  # pragma: no cover - child process

    limit_address_space(memory_mib)
    try:
        store = Store.read_only(path)
        quads = sum(1 for _ in store.quads_for_pattern(None, None, None, None))
        predicates = {q.predicate for q in store.quads_for_pattern(None, None, None, DefaultGraph())}
        # each predicate's quads come through the predicate-first indexes, the stats through others
        by_predicate = sum(sum(1 for _ in store.quads_for_pattern(None, p, None, None)) for p in predicates)
        for stats in (STATS_GRAPHS, STATS_CLASSES):
            for _ in solutions(store.query(stats, prefixes=vocab.QUERY_PREFIXES)):
                pass
        answer.send((quads, by_predicate))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the damage found
        answer.send(Failure.of(StoreError(f"{type(exc).__name__}: {exc}")))


def check_generation(generation: Path, memory_mib: int = 2048, timeout: float = 600) -> tuple[bool, str]:
    """Read every quad of a generation in a child process (a damaged file can abort the reader or
    make it allocate without bound; the child has a memory limit and a time limit)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_read_everything, args=(str(generation), memory_mib, child), daemon=True)
    process.start()
    child.close()
    try:
        if not parent.poll(timeout):
            return False, f"reading it took longer than {timeout:g} s"
        answer = parent.recv()
    except EOFError:
        process.join(timeout=5)
        return False, f"the reader died (exit {process.exitcode}): damaged or out of memory"
    finally:
        if process.is_alive():
            process.kill()
        process.join(timeout=5)
        parent.close()
    if isinstance(answer, Failure):
        return False, answer.message
    return True, f"{answer[0]} quads read, {answer[1]} again by predicate, statistics computed"


STATS_GRAPHS = """
SELECT ?graph (COUNT(*) AS ?triples) WHERE { GRAPH ?graph { ?s ?p ?o } }
GROUP BY ?graph ORDER BY ?graph
"""


STATS_CLASSES = """
SELECT ?class (COUNT(DISTINCT ?entity) AS ?entities)
WHERE { ?entity a ?class . FILTER (STRSTARTS(STR(?class), STR(iclr:))) }
GROUP BY ?class ORDER BY DESC(?entities) ?class
"""
