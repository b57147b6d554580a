"""Damaged table files found before a query meets them: `iclr-kg check-store` reads every quad of a
generation, and `damage` reads the default graph's and the named graphs' whole-store indexes once
per generation (and again when a table file changes on disk), each in a child process under a
memory limit, so damage that would abort or swell the reader ends the child and is reported in
one line.

Why before: on a damaged block pyoxigraph 0.5.13's iterator keeps answering the same error,
and its aggregates, ORDER BY and FILTER go on pulling from it (a whole-store COUNT grows its
process by 50-250 MiB/s until a limit stops it; a plain scan fails at once). A query evaluated
in a web process cannot be stopped, so a damaged generation must not reach one."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

from pyoxigraph import (
    DefaultGraph,
    Store,
)

from iclr_kg import vocab
from iclr_kg.atomic import write_text
from iclr_kg.errors import Failure, StoreDamaged, StoreError
from iclr_kg.graph import solutions
from iclr_kg.processes import limit_address_space, start_without_main
from iclr_kg.store.generations import kept_beside, kept_for_writing


def _answer_in_child(
    read: Callable[[Store], Any], path: str, memory_mib: int, answer: Connection
) -> None:  # pragma: no cover - child process
    limit_address_space(memory_mib)
    try:
        answer.send(read(Store.read_only(path)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the damage found
        answer.send(Failure.of(StoreError(f"{type(exc).__name__}: {exc}")))


def _everything(store: Store) -> tuple[int, int]:  # pragma: no cover - child process
    quads = sum(1 for _ in store.quads_for_pattern(None, None, None, None))
    predicates = {q.predicate for q in store.quads_for_pattern(None, None, None, DefaultGraph())}
    # each predicate's quads come through the predicate-first indexes, the stats through others
    by_predicate = sum(sum(1 for _ in store.quads_for_pattern(None, p, None, None)) for p in predicates)
    for stats in (STATS_GRAPHS, STATS_CLASSES):
        for _ in solutions(store.query(stats, prefixes=vocab.QUERY_PREFIXES)):
            pass
    return quads, by_predicate


def _whole_store_indexes(store: Store) -> int:  # pragma: no cover - child process
    """Every key of the default graph's and the named graphs' subject-first indexes, read in Rust
    (`len` counts them without decoding a term): what a whole-store scan reads first."""
    return len(store)


def check_generation(generation: Path, memory_mib: int = 2048, timeout: float = 600) -> tuple[bool, str]:
    """Read every quad of a generation in a child process (a damaged file can abort the reader or
    make it allocate without bound; the child has a memory limit and a time limit)."""
    ok, answer = _in_child(_everything, generation, memory_mib, timeout)
    if not ok:
        return False, answer
    return True, f"{answer[0]} quads read, {answer[1]} again by predicate, statistics computed"


INTEGRITY = "integrity"  # kept beside a generation: what `damage` found, and the table files it read


def damage(generation: Path, memory_mib: int = 2048, timeout: float = 600) -> str | None:
    """What is damaged in `generation`, in words, or None where its whole-store indexes read
    back intact: found once per generation (the finding is kept beside it, for every process and
    every restart) and found again when a table file changed since (an overwritten or replaced
    file has a new size or time). One process reads while the others wait for its finding; a
    store this process cannot write to is read each time."""
    files = table_files(generation)
    try:
        path = kept_for_writing(generation, INTEGRITY)
        lock = open(kept_beside(generation, INTEGRITY + ".lock"), "a")  # noqa: SIM115 - closed below
    except OSError:
        return _found(generation, memory_mib, timeout)[0]
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            kept = {}
        if kept.get("files") == files:
            return cast(str | None, kept.get("damage"))
        finding, conclusive = _found(generation, memory_mib, timeout)
        if conclusive:
            with contextlib.suppress(OSError):
                write_text(path, json.dumps({"files": files, "damage": finding}))
        return finding


def vouch_intact(generation: Path) -> None:
    """Record `generation` as intact, by the process that has just written it whole and is about
    to publish it: readers then read back only what changed on disk since (a table file with a
    new size or time), and an update's generation is served at once, not after a read-back of
    the whole store (seconds at 50,000 papers, for every update). Best effort: without the
    record, readers read it back."""
    with contextlib.suppress(OSError):
        write_text(
            kept_for_writing(generation, INTEGRITY), json.dumps({"files": table_files(generation), "damage": None})
        )


def _found(generation: Path, memory_mib: int, timeout: float) -> tuple[str | None, bool]:
    """`damage`'s reading, and whether it concluded (a reading past `timeout` finds nothing, and
    is not kept: a slow machine is not a damaged store)."""
    ok, found = _in_child(_whole_store_indexes, generation, memory_mib, timeout)
    if ok:
        return None, True
    return str(found), found != _too_long(timeout)


def _too_long(timeout: float) -> str:
    return f"reading it took longer than {timeout:g} s"


def refuse_damaged(generation: Path, memory_mib: int = 2048) -> None:
    """StoreDamaged where `generation` does not read back whole (`damage`)."""
    found = damage(generation, memory_mib)
    if found is not None:
        raise StoreDamaged(generation, found)


def table_files(generation: Path) -> list[list[Any]]:
    """Each table file of `generation` with its size and modification time (nanoseconds); one
    that a compaction removed while it was listed is left out."""
    found = []
    with os.scandir(generation) as entries:
        for entry in entries:
            if entry.name.endswith(".sst"):
                with contextlib.suppress(FileNotFoundError):
                    stat = entry.stat()
                    found.append([entry.name, stat.st_size, stat.st_mtime_ns])
    return sorted(found)


def _in_child(read: Callable[[Store], Any], generation: Path, memory_mib: int, timeout: float) -> tuple[bool, Any]:
    """`read(store)` on `generation` in a spawned child under `memory_mib` and `timeout`: (True,
    what it returned), or (False, what went wrong, in words)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_answer_in_child, args=(read, str(generation), memory_mib, child), daemon=True)
    start_without_main(process)
    child.close()
    try:
        if not parent.poll(timeout):
            return False, _too_long(timeout)
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
    return True, answer


STATS_GRAPHS = """
SELECT ?graph (COUNT(*) AS ?triples) WHERE { GRAPH ?graph { ?s ?p ?o } }
GROUP BY ?graph ORDER BY ?graph
"""


STATS_CLASSES = """
SELECT ?class (COUNT(DISTINCT ?entity) AS ?entities)
WHERE { ?entity a ?class . FILTER (STRSTARTS(STR(?class), STR(iclr:))) }
GROUP BY ?class ORDER BY DESC(?entities) ?class
"""
