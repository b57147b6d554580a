"""Update benchmark: the cost of one accepted update (checkpoint, run, inferences kept, journal,
publish) against its peer, a full rebuild of the same graph, measured in the same run.

    python bench/updates.py                  # the real graph, 20 updates
    python bench/updates.py --papers 10000   # synthetic data (bench/synth.py), 20 updates

Each update inserts one authorship (so the reasoner has new facts to derive) and the next
deletes one (so it has facts to retract). Prints the median and p95 per update, the share of
it spent reasoning, and the ratio to a full build.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=0, help="synthetic papers (0: the real graph)")
    parser.add_argument("--updates", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from iclr_kg import updates
    from iclr_kg.build import reason
    from iclr_kg.build.pipeline import build
    from iclr_kg.config import Settings
    from iclr_kg.store import open_read_only

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(store=Path(tmp) / "store")
        if args.papers:
            data = Path(tmp) / "data"
            subprocess.run(
                [sys.executable, str(ROOT / "bench" / "synth.py"), "--papers", str(args.papers), "--out", str(data)],
                check=True,
                capture_output=True,
            )
            settings = Settings(store=Path(tmp) / "store", data_dir=data)
        started = time.perf_counter()
        report = build(settings)
        full_build = time.perf_counter() - started
        quads = sum(report.counts.values())
        paper = next(
            iter(
                open_read_only(settings.store).query(
                    "SELECT ?p WHERE { ?p a iclr:Paper } LIMIT 1",
                    prefixes={"iclr": "https://w3id.org/iclr-kg/ontology#"},
                )
            )
        )[0]
        reasoning: list[float] = []
        original = reason.REASONERS["fast"]

        def timed_infer(*a: object) -> object:
            begun = time.perf_counter()
            try:
                return original(*a)
            finally:
                reasoning.append(time.perf_counter() - begun)

        reason.REASONERS["fast"] = timed_infer  # type: ignore[assignment]
        times = []
        for i in range(args.updates):
            node = f"<urn:bench:authorship-{i // 2}>"
            if i % 2 == 0:
                text = (
                    f"INSERT DATA {{ GRAPH <urn:bench> {{ {paper} <https://w3id.org/iclr-kg/ontology#hasAuthorship> {node} . "
                    f"{node} <https://w3id.org/iclr-kg/ontology#authorshipBy> <urn:bench:person-{i}> }} }}"
                )
            else:
                text = f"DELETE WHERE {{ GRAPH <urn:bench> {{ {node} ?p ?o }} }}"
            begun = time.perf_counter()
            updates.apply(settings.store, text)
            times.append(time.perf_counter() - begun)
        ordered = sorted(times)
        median, p95 = statistics.median(times), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(f"graph: {quads:,} quads ({'real' if not args.papers else f'{args.papers:,} synthetic papers'})")
        print(f"full build (the peer): {full_build:.2f} s")
        print(
            f"per update: median {median * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms over {len(times)} updates; "
            f"reasoning {statistics.median(reasoning) * 1000:.0f} ms of it (median)"
        )
        print(f"an update costs {median / full_build:.2f}x a full build")


if __name__ == "__main__":
    main()
