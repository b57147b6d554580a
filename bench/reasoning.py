"""Reasoning benchmark: owlrl (reference) vs `reasonable` (Rust, for reference) vs ours (fast).

    python bench/reasoning.py                       # 1,000 / 10,000 / 50,000 synthetic papers
    python bench/reasoning.py --sizes 1000 --build  # also time a full `iclr-kg build`

Each reasoner runs in its own process on the same N-Triples files (asserted data + ontology),
so peak memory is its own; the time is the reasoning call alone, loading excluded. owlrl is
skipped above --owlrl-max papers (it takes minutes). Ratios are computed within the same run.
Needs the bench extra: pip install -e '.[bench]'.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(reasoner: str, data_file: str, ontology_file: str) -> None:
    """Run one reasoner and print {seconds, inferred, peak_mib} as JSON (loading not timed)."""
    from pyoxigraph import RdfFormat, parse

    from iclr_kg.reasoning.reason import infer_triples, keep_inferred

    before = peak_mib()
    if reasoner == "reasonable":
        import rdflib
        import reasonable

        from iclr_kg.reasoning.convert import term_from_rdflib

        data = rdflib.Graph().parse(data_file, format="nt")
        ontology = rdflib.Graph().parse(ontology_file, format="nt")
        start = time.perf_counter()
        engine = reasonable.PyReasoner()
        engine.from_graph(data + ontology)
        closure = engine.reason()
        seconds = time.perf_counter() - start
        new = (t for t in closure if t not in data and t not in ontology and isinstance(t[0], rdflib.URIRef))
        inferred = sum(1 for t in new if keep_inferred(*map(term_from_rdflib, t)))
    else:
        data = [q.triple for q in parse(path=data_file, format=RdfFormat.N_TRIPLES)]
        ontology = [q.triple for q in parse(path=ontology_file, format=RdfFormat.N_TRIPLES)]
        start = time.perf_counter()
        inferred = len(infer_triples(data, ontology, reasoner))
        seconds = time.perf_counter() - start
    print(
        json.dumps(
            {"seconds": seconds, "inferred": inferred, "peak_mib": peak_mib(), "growth_mib": peak_mib() - before}
        )
    )


def run_child(reasoner: str, data_file: Path, ontology_file: Path) -> dict[str, float]:
    """One reasoner in its own process; a crash (e.g. killed for lack of memory) is a result too."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", reasoner, str(data_file), str(ontology_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return {"seconds": float("nan"), "inferred": -1, "peak_mib": float("nan"), "failed": f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def prepare(papers: int, workdir: Path) -> tuple[Path, Path, Path, int]:
    """Synthetic data → our pipeline's asserted graph and ontology, as N-Triples files."""
    sys.path.insert(0, str(HERE.parent))
    from pyoxigraph import RdfFormat, Triple, serialize

    from iclr_kg.build import rdf
    from iclr_kg.build.resolve import build_registry
    from iclr_kg.build.sources import load_dataset
    from iclr_kg.config import resource_dir
    from testbed import synth

    data_dir = synth.write(papers, workdir / f"data-{papers}")
    dataset = load_dataset(data_dir)
    asserted = list(rdf.asserted_quads(dataset, build_registry(dataset)))
    ontology = rdf.ontology_quads(resource_dir("ontology") / "iclr.ttl")
    data_file, ontology_file = workdir / f"asserted-{papers}.nt", workdir / "ontology.nt"
    serialize((Triple(*q[:3]) for q in asserted), data_file, RdfFormat.N_TRIPLES)
    serialize((Triple(*q[:3]) for q in ontology), ontology_file, RdfFormat.N_TRIPLES)
    return data_dir, data_file, ontology_file, len(asserted)


def full_build(data_dir: Path, workdir: Path) -> dict[str, float]:
    """Time and peak memory of `iclr-kg build` on the data (validation, reasoning, loading)."""
    import os

    import psutil

    store = workdir / f"store-{data_dir.name}"
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("iclr-kg")), "build", "--store", str(store)],
        env={**os.environ, "ICLR_KG_DATA_DIR": str(data_dir)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0.0
    watched = psutil.Process(process.pid)
    while process.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss / 2**20)
        except psutil.Error:
            pass
        time.sleep(0.1)
    seconds = time.perf_counter() - start
    out, err = process.communicate()
    if process.returncode:
        return {"seconds": seconds, "peak_mib": peak, "detail": f"failed: {err.strip()[-300:]}"}
    return {"seconds": seconds, "peak_mib": peak, "detail": out.splitlines()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--owlrl-max", type=int, default=10000, help="skip owlrl above this many papers")
    parser.add_argument(
        "--reasonable-max",
        type=int,
        default=1000,
        help="skip reasonable above this many papers (at 10,000 it needed more than 24 GiB here)",
    )
    parser.add_argument("--build", action="store_true", help="also time a full iclr-kg build at each size")
    parser.add_argument("--child", nargs=3, metavar=("REASONER", "DATA", "ONTOLOGY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for papers in args.sizes:
            data_dir, data_file, ontology_file, triples = prepare(papers, workdir)
            result: dict[str, object] = {"papers": papers, "triples": triples}
            for reasoner in ("owlrl", "reasonable", "fast"):
                if (reasoner == "owlrl" and papers > args.owlrl_max) or (
                    reasoner == "reasonable" and papers > args.reasonable_max
                ):
                    continue
                result[reasoner] = run_child(reasoner, data_file, ontology_file)
                print(f"  {papers} papers, {reasoner}: {result[reasoner]}", file=sys.stderr)
            if args.build:
                result["build"] = full_build(data_dir, workdir)
                print(f"  {papers} papers, build: {result['build']}", file=sys.stderr)
            rows.append(result)
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    def cell(row: dict, name: str, key: str, fmt: str) -> str:
        return format(row[name][key], fmt) if name in row else "-"

    print(
        "| papers | asserted triples | owlrl s | reasonable s | ours s | owlrl/ours | ours/reasonable | inferred (ours) | inferred (owlrl) | ours peak MiB | owlrl peak MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        ratio = f"{row['owlrl']['seconds'] / row['fast']['seconds']:.1f}x" if "owlrl" in row else "-"
        vs_reasonable = f"{row['fast']['seconds'] / row['reasonable']['seconds']:.2f}x" if "reasonable" in row else "-"
        print(
            f"| {row['papers']} | {row['triples']} | {cell(row, 'owlrl', 'seconds', '.2f')} | {cell(row, 'reasonable', 'seconds', '.2f')} "
            f"| {cell(row, 'fast', 'seconds', '.2f')} | {ratio} | {vs_reasonable} | {cell(row, 'fast', 'inferred', 'd')} "
            f"| {cell(row, 'owlrl', 'inferred', 'd')} | {cell(row, 'fast', 'peak_mib', '.0f')} | {cell(row, 'owlrl', 'peak_mib', '.0f')} |"
        )
    builds = [row for row in rows if "build" in row]
    if builds:
        print("\n| papers | full build s | build peak MiB | stages |\n|---:|---:|---:|---|")
        for row in builds:
            print(
                f"| {row['papers']} | {row['build']['seconds']:.1f} | {row['build']['peak_mib']:.0f} | {row['build']['detail']} |"
            )


if __name__ == "__main__":
    main()
