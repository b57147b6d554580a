"""Pages at scale: entity pages, saved queries, search and /stats on a large graph, served.

    python bench/pages.py                          # 50,000 synthetic papers (bench/synth.py)
    python bench/pages.py --papers 10000 --requests 100
    python bench/pages.py --store var/store        # an existing store

Builds the graph (unless --store), starts `iclr-kg serve` as shipped on 127.0.0.1, and asks each
kind of page `--requests` times, each time about another entity or word (so the result cache
answers only what a user would repeat: each saved query is asked with its defaults, first
request apart), one request at a time, once the server has kept what a new generation's pages
need (the time that takes is printed; `--cold` drops what an earlier run kept, so that it is
computed again); then the pages of the person, the organization and the edition with the most
papers, five times each; then each saved query's whole answer as SPARQL JSON, once. Prints median
and p95 per kind, and the largest answer, against the targets: under 100 ms median (issue #19),
every page under 300 ms and 300 KB of HTML (issue #37), every saved query's answer under a
second (issue #35), at 50,000 papers.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # endpoint.py beside it; testbed/ above
from endpoint import Server  # noqa: E402

CLI = str(Path(sys.executable).with_name("iclr-kg"))
TARGET_MS = 100.0
HEAVY_MS, HEAVY_BYTES = 300.0, 300 * 1024  # every page, however long its lists (issue #37)
ANSWER_MS = 1000.0  # every saved query's whole answer (issue #35 item 3)


def entities(store: Path, kind: str, count: int) -> list[str]:
    """Keys of `count` entities of a kind, spread over the whole kind."""
    from pyoxigraph import NamedNode

    from iclr_kg import vocab
    from iclr_kg.store import open_read_only

    cls = {"paper": "Paper", "person": "Person", "organization": "Organization"}[kind]
    db = open_read_only(store)
    found = sorted(
        {q.subject.value for q in db.quads_for_pattern(None, vocab.RDF_TYPE, NamedNode(vocab.ONTOLOGY_NS + cls), None)}
    )
    step = max(1, len(found) // count)
    return [iri.rsplit("/", 1)[1] for iri in found[::step][:count]]


def heaviest(store: Path, kind: str) -> str:
    """The key of the entity of `kind` with the most papers (the index counts them): the page
    that lists the most, where a page that holds at scale is tested."""
    import sqlite3

    from iclr_kg.index import index_path
    from iclr_kg.store import current_generation

    with sqlite3.connect(index_path(current_generation(store))) as db:
        found = db.execute(
            "SELECT key FROM entity WHERE kind = ? ORDER BY papers DESC, key LIMIT 1", (kind,)
        ).fetchone()
    return found[0]


SIZES: dict[str, int] = {}  # path -> bytes of its last answer


def kept_results(store: Path) -> list[Path]:
    """What a web process computes and keeps beside a new generation (web/pages.py `warmed`)."""
    from iclr_kg import counts
    from iclr_kg.config import resource_dir
    from iclr_kg.sparql.querytext import keepable
    from iclr_kg.sparql.saved import load_saved
    from iclr_kg.store import current_generation, kept_beside

    generation = current_generation(store)
    saved = [q for q in load_saved(resource_dir("queries")).values() if keepable(q.text)]
    return [
        kept_beside(generation, counts.KEPT),
        *(kept_beside(generation, f"answer-{q.name}") for q in saved),  # whole answers (web/answers.py)
        *(kept_beside(generation, f"saved-{q.name}") for q in saved),
    ]


def timed(port: int, path: str, accept: str = "text/html") -> tuple[float, int]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    connection.request("GET", path, headers={"Accept": accept})
    response = connection.getresponse()
    SIZES[path] = len(response.read())
    connection.close()
    return (time.perf_counter() - started) * 1000, response.status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=50000)
    parser.add_argument("--store", type=Path, help="serve this store instead of building one")
    parser.add_argument("--requests", type=int, default=50, help="requests per kind of page")
    parser.add_argument(
        "--cold", action="store_true", help="drop what the server kept for the store's generation first"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iclr-kg-bench-pages-") as tmp:
        store = args.store
        if store is None:
            from testbed import synth

            data = synth.write(args.papers, Path(tmp) / "data")
            store = Path(tmp) / "store"
            env = {**os.environ, "ICLR_KG_DATA_DIR": str(data), "ICLR_KG_PROGRESS": "0"}
            subprocess.run([CLI, "build", "--store", str(store)], check=True, env=env, capture_output=True)
        n = args.requests
        paths = {
            "paper page": [f"/resource/paper/{k}" for k in entities(store, "paper", n)],
            "person page": [f"/resource/person/{k}" for k in entities(store, "person", n)],
            "organization page": [f"/resource/organization/{k}" for k in entities(store, "organization", n)],
            "search": [f"/search?q={urllib.parse.quote(f'paper {i * 997 % args.papers}')}" for i in range(n)],
            "list of papers": [f"/resource/paper/?page={1 + i}" for i in range(n)],
            "/stats": ["/stats"] * n,
        }
        for kind in ("person", "organization", "edition"):  # the longest lists, asked a few times each
            paths[f"the {kind} with most papers"] = [f"/resource/{kind}/{heaviest(store, kind)}"] * 5
        prolific, biggest = heaviest(store, "person"), heaviest(store, "organization")
        paths["the most prolific person's papers as a list, a page each"] = [  # with their facets
            f"/resource/paper/?author={prolific}&page={1 + i}" for i in range(5)
        ]
        paths["the largest organization's papers as a list"] = [f"/resource/paper/?organization={biggest}"] * 5
        paths["search by topic"] = [f"/search?q={q}&kind=topic" for q in ("GNN", "reinforcement+learning", "pruning")]
        from iclr_kg.config import resource_dir
        from iclr_kg.sparql.saved import load_saved

        saved = [name for name, q in load_saved(resource_dir("queries")).items() if "SERVICE" not in q.text]
        kept = kept_results(store)
        if args.cold:  # what the server keeps for a generation is computed again, and timed
            for path in kept:
                path.unlink(missing_ok=True)
                path.with_suffix(".srj").unlink(missing_ok=True)
        server = Server("ours", [CLI, "serve", "--store", str(store), "--port", "{port}"])
        server.start()  # its first request: the web process sees the generation and starts keeping
        seen = time.perf_counter()
        while not all(p.exists() for p in kept) and time.perf_counter() - seen < 900:
            time.sleep(0.2)
        warm = time.perf_counter() - seen
        rows = []
        answers: list[tuple[float, str]] = []
        try:
            for kind, kind_paths in paths.items():
                times = []
                for path in kind_paths:
                    ms, status = timed(server.port, path)
                    if status != 200:
                        raise SystemExit(f"{path}: HTTP {status}")
                    times.append(ms)
                high = sorted(times)[int(0.95 * (len(times) - 1))]
                rows.append((kind, statistics.median(times), high, len(times), max(SIZES[p] for p in kind_paths)))
            firsts, repeats = [], []
            for name in saved:
                first, status = timed(server.port, f"/queries/{name}")
                if status != 200:
                    raise SystemExit(f"/queries/{name}: HTTP {status}")
                firsts.append((first, name))
                repeats.append(timed(server.port, f"/queries/{name}")[0])
            ordered = sorted(ms for ms, _ in firsts)
            rows.append(("saved query, first request", statistics.median(ordered), ordered[-1], len(ordered), 0))
            rows.append(("saved query, asked again", statistics.median(repeats), max(repeats), len(repeats), 0))
            for name in saved:  # the whole answer, as a program asks it (issue #35 item 3: under 1 s)
                ms, status = timed(server.port, f"/queries/{name}?format=json", "application/sparql-results+json")
                if status != 200:
                    raise SystemExit(f"/queries/{name}?format=json: HTTP {status}")
                answers.append((ms, name))
            whole = sorted(ms for ms, _ in answers)
            rows.append(("saved query's whole answer (JSON)", statistics.median(whole), whole[-1], len(whole), 0))
        finally:
            server.stop()
    print(f"\n### Pages on {f'{args.papers:,} synthetic papers' if args.store is None else args.store}\n")
    print("| page | median ms | p95 ms (max for saved) | requests | largest HTML KB | target | met |")
    print("|---|---:|---:|---:|---:|---|---|")
    for kind, median, high, count, size in rows:
        largest = f"{size / 1024:.0f}" if size else ""
        if kind.startswith("the "):  # the longest lists: issue #37's bound for every page
            target, met = "300 ms, 300 KB", high < HEAVY_MS and size < HEAVY_BYTES
        elif kind.startswith("saved query's whole"):  # issue #35 item 3: every one
            target, met = "1 s, every one", high < ANSWER_MS
        else:
            target, met = f"{TARGET_MS:.0f} ms median", median < TARGET_MS
        print(f"| {kind} | {median:.1f} | {high:.1f} | {count} | {largest} | {target} | {'yes' if met else 'no'} |")
    done = sum(p.exists() for p in kept)
    print(
        f"\nkept for the generation ({done} of {len(kept)}: /stats and saved queries' pages): {warm:.1f} s after the server first saw it"
    )
    slowest = sorted(firsts, reverse=True)[:3]
    print("\nslowest saved queries (first request): " + ", ".join(f"{name} {ms:.0f} ms" for ms, name in slowest))
    slowest = sorted(answers, reverse=True)[:3]
    print(
        "slowest whole answers: "
        + ", ".join(
            f"{name} {ms:.0f} ms ({SIZES[f'/queries/{name}?format=json'] / 1024:.0f} KB)" for ms, name in slowest
        )
    )


if __name__ == "__main__":
    main()
