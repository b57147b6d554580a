"""Journal replay benchmark: what a build spends on the update journal, and how long an update
waits for the write lock meanwhile.

    python bench/replay.py                      # 100 and 1,000 entries on the curated build
    python bench/replay.py --entries 100 1000 8000

For each size: the curated data built into a fresh store, a journal of realistic entries written
(authorships inserted on existing papers and deleted again by `DELETE DATA`, titles changed in a
curation graph by `DELETE/INSERT WHERE`, a paper's keywords removed from every curated graph by
`DELETE WHERE`), then three builds: the first replays every entry (no checkpoint yet), the second
has an unchanged base (the checkpoint's entries folded in, none replayed), the third runs after
ten more entries (those ten replayed). Each build's two replay parts are timed (before the write
lock, under it), while a second process takes the write lock every 20 ms as an update would
and records its longest wait.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

ICLR = "https://w3id.org/iclr-kg/ontology#"
PREFIX = f"PREFIX iclr: <{ICLR}> "


def entries(store: Path, count: int, start: int, seed: int) -> list[str]:
    """`count` realistic updates of the curated graph, numbered from `start`."""
    from iclr_kg.store import open_read_only

    db = open_read_only(store)
    papers = [r[0].value for r in db.query(PREFIX + "SELECT ?p WHERE { ?p a iclr:Paper } ORDER BY ?p")]
    people = [r[0].value for r in db.query(PREFIX + "SELECT ?a WHERE { ?a a iclr:Person } ORDER BY ?a")]
    rng = random.Random(seed)
    out: list[str] = []
    inserted: list[str] = []
    for i in range(start, start + count):
        kind = rng.choice(["insert", "insert", "delete", "retitle", "delete-where"])
        paper, person = rng.choice(papers), rng.choice(people)
        node = f"<urn:curation:authorship-{i}>"
        data = (
            f"GRAPH <urn:curation> {{ <{paper}> iclr:hasAuthorship {node} . {node} a iclr:Authorship ; "
            f"iclr:authorshipBy <{person}> ; iclr:position {90 + i % 7} }}"
        )
        if kind == "delete" and inserted:
            out.append(PREFIX + f"DELETE DATA {{ {inserted.pop(rng.randrange(len(inserted)))} }}")
        elif kind == "retitle":
            out.append(
                PREFIX + f"DELETE {{ GRAPH <urn:curation> {{ <{paper}> iclr:title ?t }} }} "
                f'INSERT {{ GRAPH <urn:curation> {{ <{paper}> iclr:title "Revised title {i}" }} }} '
                f"WHERE {{ OPTIONAL {{ GRAPH <urn:curation> {{ <{paper}> iclr:title ?t }} }} }}"
            )
        elif kind == "delete-where":
            out.append(PREFIX + f"DELETE WHERE {{ GRAPH ?g {{ <{paper}> iclr:keyword ?k }} }}")
        else:
            inserted.append(data)
            out.append(PREFIX + f"INSERT DATA {{ {data} }}")
    return out


def prober(store: Path, waits: Any) -> None:  # pragma: no cover - a child process
    """An update's view of the build: the write lock, taken every 20 ms; each wait reported."""
    from iclr_kg.store import write_lock

    while True:
        began = time.perf_counter()
        with write_lock(store):
            waits.put(time.perf_counter() - began)
        time.sleep(0.02)


def timed_build(store: Path) -> str:
    """One build with its replay parts timed and an update's longest wait for the lock."""
    from iclr_kg.build.pipeline import build
    from iclr_kg.config import Settings
    from iclr_kg.updates.checkpoint import Replay

    parts: dict[str, float] = {}
    originals = Replay.before_lock, Replay.under_lock

    def timing(name: str, run: Any) -> Any:
        def wrapped(self: Replay, db: Any) -> Any:
            began = time.perf_counter()
            try:
                return run(self, db)
            finally:
                parts[name] = time.perf_counter() - began

        return wrapped

    Replay.before_lock = timing("before the lock", originals[0])  # type: ignore[method-assign]
    Replay.under_lock = timing("under it", originals[1])  # type: ignore[method-assign]
    waits: Any = multiprocessing.get_context("fork").Queue()
    probe = multiprocessing.get_context("fork").Process(target=prober, args=(store, waits), daemon=True)
    probe.start()
    try:
        time.sleep(0.3)
        began = time.perf_counter()
        report = build(Settings.from_env(store=store), full=True)
        seconds = time.perf_counter() - began
    finally:
        probe.terminate()
        probe.join()
        Replay.before_lock, Replay.under_lock = originals  # type: ignore[method-assign]
    longest = 0.0
    while not waits.empty():
        longest = max(longest, waits.get())
    replay = ", ".join(f"{name} {value:.2f} s" for name, value in parts.items())
    folded, replayed = report.journal
    return (
        f"build {seconds:.1f} s; {replayed} replayed, {folded} from the checkpoint; replay: {replay}; "
        f"an update's longest wait for the lock {longest:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, nargs="+", default=[100, 1000])
    args = parser.parse_args()
    from iclr_kg.build.pipeline import build
    from iclr_kg.config import Settings
    from iclr_kg.updates import Journal

    for count in args.entries:
        with tempfile.TemporaryDirectory(prefix="iclr-kg-replay-") as work:
            store = Path(work) / "store"
            build(Settings.from_env(store=store))
            journal = Journal(store)
            for text in entries(store, count, 0, seed=count):
                journal.append("update", text, None, 0)
            print(f"{count} entries, no checkpoint:   {timed_build(store)}", flush=True)
            print(f"{count} entries, the same base:   {timed_build(store)}", flush=True)
            for text in entries(store, 10, count, seed=count + 1):
                journal.append("update", text, None, 0)
            print(f"{count}+10 entries, the same base: {timed_build(store)}", flush=True)


if __name__ == "__main__":
    main()
