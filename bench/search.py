"""Search benchmark: the entity index (index.py) at ICLR scale, against a full scan of the same names.

    python bench/search.py                      # 50,000 synthetic papers (bench/synth.py): a build first
    python bench/search.py --papers 10000
    python bench/search.py --store var/store    # an existing store

Measured in one run: the index's build time and size for the store's current generation, then
for each kind of query (a word prefix, a phrase, a Chinese name, a substring, a typo, a miss) the
median and p95 latency of `Index.search` over many repetitions, and the same lookup done the
naive way (a Python scan over every name in the index, case-folded substring test) as the peer.
Then topic search (titles, keywords, abstracts; issue #37): its count and first page per query,
against a scan of every paper's text. Target (issue #17): every search under 50 ms at 50,000 papers.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "src"))
from iclr_kg.index import Index, build_index, fold, index_path  # noqa: E402
from iclr_kg.store import current_generation  # noqa: E402

QUERIES = {
    "word prefix": "synth",
    "two words": "synthetic paper 4711",
    "person by name": "Person 42",
    "Chinese name": "机构12",
    "substring": "rganization 13 unit",
    "typo": "Synthetik papr 4711",
    "miss": "zzzqqqxxx",
}
# Topic search (titles, keywords, abstracts), as the search page's tab asks it: the count, then
# the first page of 50 in bm25's order.
TOPIC_QUERIES = {
    "abbreviation, widened": "GNN",
    "spelled out": "graph neural networks",
    "common words": "reinforcement learning",
    "two topics": "pruning transformers",
    "miss": "zzzqqqxxx",
}


def timed(run, repeat: int) -> tuple[float, float]:
    """Median and p95 of `repeat` runs, in milliseconds."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=50000)
    parser.add_argument("--store", type=Path, help="an existing store (default: build one from synthetic data)")
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store_dir = args.store
        if store_dir is None:
            data, store_dir = Path(tmp) / "data", Path(tmp) / "store"
            subprocess.run([sys.executable, str(ROOT / "bench" / "synth.py"), "--papers", str(args.papers),
                            "--out", str(data)], check=True)  # fmt: skip
            env = {"ICLR_KG_DATA_DIR": str(data), "PATH": str(BIN)}
            started = time.perf_counter()
            subprocess.run([str(BIN / "iclr-kg"), "build", "--store", str(store_dir)], check=True, env=env)
            print(f"build with the index: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        generation = current_generation(store_dir)
        assert generation is not None, f"no store at {store_dir}"
        from pyoxigraph import Store

        store = Store.read_only(str(generation))
        started = time.perf_counter()
        path = build_index(store, generation)
        built = time.perf_counter() - started
        db = sqlite3.connect(path)
        entities = db.execute("SELECT COUNT(*) FROM entity").fetchone()[0]
        names = [(row[0], row[1]) for row in db.execute("SELECT iri, names FROM entity")]
        db.close()
        print(f"\n### Search ({entities:,} entities; index built in {built:.1f} s, "
              f"{index_path(generation).stat().st_size / 2**20:.0f} MiB)\n")  # fmt: skip
        print("| query | results | index: median ms | p95 ms | full scan: median ms | scan / index |")
        print("|---|---:|---:|---:|---:|---:|")
        index = Index(path)
        for name, text in QUERIES.items():
            hits = index.search(text)
            median, p95 = timed(lambda text=text: index.search(text), args.repeat)
            folded = fold(text)
            scan, _ = timed(lambda folded=folded: [i for i, n in names if folded in n][:20], max(3, args.repeat // 10))
            print(f"| {name}: `{text}` | {len(hits)} | {median:.2f} | {p95:.2f} | {scan:.1f} | {scan / median:.0f}x |")
        topics(path, index, args.repeat)


def topics(path: Path, index: Index, repeat: int) -> None:
    """Topic search's count and first page, against a scan of every paper's topic text for the
    query's words (no stemming, no synonyms: a lower bound on what a scan would cost)."""
    db = sqlite3.connect(path)
    texts = [row[0].lower() for row in db.execute("SELECT text FROM topics")]
    db.close()
    print(f"\n### Topic search ({len(texts):,} papers with titles, keywords, abstracts)\n")
    print("| query | matches | count + first page: median ms | p95 ms | scan: median ms | scan / index |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, text in TOPIC_QUERIES.items():
        matches = index.topic_count(text)

        def asked(text: str = text) -> None:
            index.topic_count(text)
            index.topic_page(text, 50, 0)

        median, p95 = timed(asked, repeat)
        words = fold(text).split()
        scan, _ = timed(lambda words=words: [t for t in texts if all(w in t for w in words)][:50], max(3, repeat // 10))
        print(f"| {name}: `{text}` | {matches:,} | {median:.2f} | {p95:.2f} | {scan:.1f} | {scan / median:.1f}x |")


if __name__ == "__main__":
    main()
