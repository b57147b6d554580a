"""Saved queries' answers kept beside a generation, made before the generation is served.

Some saved queries aggregate or list every paper: at 50,000 papers their answer takes seconds on
any engine, and it changes only with the store. So a build (and an incremental build) evaluates
every saved query whose answer depends on the store alone (`keepable`) with its defaults, on the
new generation, before `current` swings to it (`keep_answers`, called by `store.publish`): the
whole answer as SPARQL JSON results, and its first rows as its page shows them, in the
generation's kept folder (`store.kept_beside`). The web reads them there (web/answers.py serves
the answer in any results format; web/pages.py renders the rows): no reader waits for them. An
update's generation has none until its web process computes them (`AppState.warm`), as before.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from pyoxigraph import QueryBoolean, QueryResultsFormat, QuerySolutions, Store, parse_query_results

from iclr_kg.atomic import write_text
from iclr_kg.query.answering import result_rows
from iclr_kg.sparql.querytext import keepable
from iclr_kg.sparql.saved import SavedQuery, load_saved
from iclr_kg.store import kept_beside, kept_for_writing
from iclr_kg.store.running import run_query

PAGE_ROWS = 1000  # the rows a saved query's page shows (web/html.py's HTML_ROW_LIMIT)


def answer_name(saved: SavedQuery) -> str:
    """The kept value (`AppState.per_generation`) that says a saved query's answer is kept."""
    return f"answer-{saved.name}"


def rows_name(saved: SavedQuery) -> str:
    """The kept value of a saved query's first rows, as its page shows them by default."""
    return f"saved-{saved.name}"


def answer_path(folder: Path, saved: SavedQuery, kept: Callable[[Path, str], Path] = kept_beside) -> Path:
    """The answer's SPARQL JSON results, beside the generation (pruned with it); `kept`:
    `store.kept_for_writing` to make the generation's folder for them."""
    return kept(folder, answer_name(saved)).with_suffix(".srj")


def write_answer(folder: Path, saved: SavedQuery, write: Callable[[BinaryIO], object]) -> dict[str, Any]:
    """Write a saved query's answer as SPARQL JSON results beside the generation (`write` writes
    it to the file it is given), whole or not at all: a temporary name, then renamed. Returns the
    record `per_generation` keeps once the file is complete."""
    path = answer_path(folder, saved, kept_for_writing)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(partial, "wb") as out:
            write(out)
            size = out.tell()
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return {"bytes": size, "generation": folder.name}


THREADS = 2  # queries evaluated at once: pyoxigraph leaves the GIL while it evaluates (two cores here)


def keep_answers(saved: dict[str, SavedQuery], store: Store, generation: Path) -> dict[str, float]:
    """Every keepable saved query's answer with its defaults and its page's first rows, written
    beside `generation` from `store` (its database, before it is served), THREADS at a time;
    the seconds each took."""
    keep = [query for query in saved.values() if keepable(query.text)]
    with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="kept") as pool:
        took = pool.map(functools.partial(_keep, store, generation), keep)
        return dict(zip((query.name for query in keep), took, strict=True))


def _keep(store: Store, generation: Path, query: SavedQuery) -> float:
    started = time.perf_counter()
    result = run_query(store, query.text_with({}))
    if isinstance(result, QuerySolutions | QueryBoolean):  # SELECT and ASK: the whole answer too
        record = write_answer(generation, query, functools.partial(_write_json, result))
        write_text(kept_for_writing(generation, answer_name(query)), json.dumps(record))
        with open(answer_path(generation, query), "rb") as kept:
            rows = result_rows(parse_query_results(kept, QueryResultsFormat.JSON), PAGE_ROWS)
    else:
        rows = result_rows(result, PAGE_ROWS)
    write_text(kept_for_writing(generation, rows_name(query)), json.dumps(rows, ensure_ascii=False))
    return time.perf_counter() - started


def _write_json(result: QuerySolutions | QueryBoolean, out: BinaryIO) -> None:
    result.serialize(out, QueryResultsFormat.JSON)


def keeping(queries_dir: Path, timings: dict[str, float]) -> Callable[[Store, Path], None]:
    """`keep_answers` as a build hands it to `store.publish(ready=...)`: the saved queries of
    `queries_dir`, the seconds they took in `timings["answers"]` (the build's report)."""

    def ready(store: Store, generation: Path) -> None:
        started = time.perf_counter()
        keep_answers(load_saved(queries_dir), store, generation)
        timings["answers"] = time.perf_counter() - started

    return ready
