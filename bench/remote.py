"""Remote engines benchmark: `iclr-kg publish` of a large graph to each engine, against its own loader.

    python bench/remote.py                          # 50,000 synthetic papers, every engine here
    python bench/remote.py --papers 10000 --engines oxigraph

In one run: synthetic data (bench/synth.py) is built once (or `--store DIR` is reused); then for
each engine (tests/engines.py starts it on 127.0.0.1 in a folder of its own):
1. `publish`: wall seconds and triples per second through the SPARQL protocols (each graph under
   its generation's own name, counts verified, the publication record switched), and the
   engine's peak resident memory meanwhile;
2. the engine's own bulk loader on the same quads (N-Quads dumped from the store), in a fresh
   engine: `oxigraph load` for Oxigraph's server, `ld_dir` + `rdf_loader_run()` for Virtuoso,
   `tdb2.tdbloader` where Fuseki is installed: the peer publish is measured against;
3. every saved query once on the engine, against the embedded store (total seconds, and the
   slowest query);
4. `iclr-kg serve` on the engine, as a site runs it: how long it takes to keep every saved
   query's whole answer for the publication, then each answer once (issue #35: under 1 s).
Printed: seconds and the ratio publish / bulk loader per engine. Run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # endpoint.py beside it; testbed/ above

from iclr_kg.config import Settings  # noqa: E402
from iclr_kg.errors import EngineError  # noqa: E402
from iclr_kg.remote.publish import publish  # noqa: E402
from iclr_kg.remote.store import RemoteStore  # noqa: E402
from iclr_kg.sparql.saved import load_saved  # noqa: E402
from iclr_kg.store import open_read_only, run_query  # noqa: E402
from testbed import engines  # noqa: E402

CLI = str(Path(sys.executable).with_name("iclr-kg"))


def built_store(papers: int, work: Path, reuse: Path | None) -> Path:
    if reuse is not None:
        return reuse
    from testbed import synth

    data = synth.write(papers, work / "data")
    store = work / "store"
    env = {"ICLR_KG_DATA_DIR": str(data), "ICLR_KG_PROGRESS": "0", "PATH": str(Path(sys.executable).parent)}
    started = time.perf_counter()
    subprocess.run([CLI, "build", "--store", str(store)], env=env, check=True, capture_output=True)
    print(f"built {papers} papers in {time.perf_counter() - started:.1f} s")
    return store


def dump(store: Path, path: Path) -> int:
    from pyoxigraph import DefaultGraph, NamedNode, Quad, RdfFormat, serialize

    from iclr_kg import vocab

    db = open_read_only(store)
    merged = NamedNode(vocab.GRAPH_MERGED)

    def quads():  # the default graph's merge under the name publish gives it
        for quad in db.quads_for_pattern(None, None, None, None):
            yield quad if quad.graph_name != DefaultGraph() else Quad(quad.subject, quad.predicate, quad.object, merged)

    counted = [0]

    def counting():
        for quad in quads():
            counted[0] += 1
            yield quad

    with open(path, "wb") as out:
        serialize(counting(), out, RdfFormat.N_QUADS)
    return counted[0]


def bulk_oxigraph(nquads: Path, folder: Path) -> float:
    binary = str(Path(sys.executable).with_name("oxigraph"))
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    subprocess.run(
        [binary, "load", "--location", str(folder / "bulk"), "--file", str(nquads)], check=True, capture_output=True
    )
    return time.perf_counter() - started


def bulk_virtuoso(nquads: Path, folder: Path) -> float:
    isql = shutil.which("isql-vt") or "isql"
    folder.mkdir(parents=True, exist_ok=True)
    with engines.virtuoso(folder, memory_gib=4) as running:
        local = folder / "db" / nquads.name
        shutil.copy(nquads, local)
        script = f"ld_dir('{local.parent}', '{local.name}', 'urn:unused'); rdf_loader_run(); checkpoint;"
        started = time.perf_counter()
        subprocess.run([isql, str(running.sql_port), "dba", "dba", f"exec={script}"], check=True, capture_output=True)
        return time.perf_counter() - started


BULK = {"oxigraph": bulk_oxigraph, "virtuoso": bulk_virtuoso}


PER_PREDICATE = "SELECT ?p (COUNT(*) AS ?n) WHERE { GRAPH <%s> { ?s ?p ?o } } GROUP BY ?p"


def mismatch(store_dir: Path, url: str) -> None:
    """Where an engine's merged graph differs from ours: triples per predicate on each side."""
    from iclr_kg import vocab
    from iclr_kg.remote.client import SparqlClient

    local = open_read_only(store_dir)
    ours = {r["p"].value: int(r["n"].value) for r in local.query(PER_PREDICATE.replace("GRAPH <%s>", ""))}
    theirs = {
        r["p"].value: int(r["n"].value) for r in SparqlClient.connect(url).select(PER_PREDICATE % vocab.GRAPH_MERGED)
    }
    for predicate in sorted(set(ours) | set(theirs)):
        if ours.get(predicate) != theirs.get(predicate):
            print(f"  merged graph, {predicate}: {ours.get(predicate)} here, {theirs.get(predicate)} there")


def saved_queries(store_dir: Path, url: str) -> tuple[float, float, float, str, list[str]]:
    """(embedded total s, remote total s, slowest remote s, its name, the queries the engine
    refused) over every saved query without SERVICE."""
    local, remote = open_read_only(store_dir), RemoteStore.connect(url)
    here = there = slowest = 0.0
    name_of_slowest, refused = "", []
    for name, saved in sorted(load_saved(Settings().queries_dir).items()):
        if "SERVICE" in saved.text:
            continue  # they call Wikidata, which is not here
        substitutions = saved.substitutions({})
        started = time.perf_counter()
        for _ in run_query(local, saved.text, substitutions=substitutions):
            pass
        here += time.perf_counter() - started
        started = time.perf_counter()
        try:
            for _ in run_query(remote, saved.text, substitutions=substitutions):
                pass
        except EngineError as exc:
            refused.append(f"{name} ({str(exc).split(chr(10))[0][-120:]})")
            continue
        took = time.perf_counter() - started
        there += took
        if took > slowest:
            slowest, name_of_slowest = took, name
    return here, there, slowest, name_of_slowest, refused


def served_answers(url: str, folder: Path) -> tuple[float, list[tuple[float, str]]]:
    """`iclr-kg serve` on the engine (`ICLR_KG_BACKEND`), as a site would run it: the seconds
    until it has kept every saved query's whole answer for the publication (web/answers.py,
    after its first request), then each answer as SPARQL JSON once, (ms, name) slowest first."""
    from endpoint import Server
    from pages import timed

    from iclr_kg.sparql.querytext import keepable

    folder.mkdir(parents=True, exist_ok=True)
    names = [n for n, q in load_saved(Settings().queries_dir).items() if keepable(q.text)]
    cli = str(Path(sys.executable).with_name("iclr-kg"))
    server = Server(
        "ours", [cli, "serve", "--store", str(folder), "--port", "{port}"], env={"ICLR_KG_BACKEND": f"sparql+{url}"}
    )
    server.start()  # its first request: the web process sees the publication and starts keeping
    seen = time.perf_counter()
    try:
        while len(list(folder.glob("remote/*/*.kept/answer-*.srj"))) < len(names) and time.perf_counter() - seen < 1800:
            time.sleep(0.5)
        kept = time.perf_counter() - seen
        timings = []
        for name in names:
            ms, status = timed(server.port, f"/queries/{name}?format=json", "application/sparql-results+json")
            timings.append((ms, name if status == 200 else f"{name} (HTTP {status})"))
    finally:
        server.stop()
    return kept, sorted(timings, reverse=True)


class PeakMemory:
    """The largest resident size of the process listening on a URL's port (the engine), sampled
    every half second while the block runs."""

    def __init__(self, url: str):
        import urllib.parse

        self.port = urllib.parse.urlsplit(url).port
        self.peak = 0

    def __enter__(self) -> PeakMemory:
        import threading

        import psutil

        listening = [
            c.pid
            for c in psutil.net_connections("tcp")
            if c.laddr and c.laddr.port == self.port and c.status == "LISTEN"
        ]
        self._process = psutil.Process(listening[0]) if listening and listening[0] else None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.5):
            if self._process is not None:
                try:
                    self.peak = max(self.peak, self._process.memory_info().rss)
                except Exception:  # noqa: BLE001 - ended
                    return

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=50_000)
    parser.add_argument("--engines", nargs="+", default=list(engines.ENGINES), choices=engines.ENGINES)
    parser.add_argument("--store", type=Path, help="reuse a built store instead of building synthetic data")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
        work = Path(tmp)
        store = built_store(args.papers, work, args.store)
        nquads = work / "all.nq"
        quads = dump(store, nquads)
        print(f"graph: {quads:,} quads (named graphs, inferred, and the merged default graph)")
        settings = Settings(store=store, progress=False)
        for kind in args.engines:
            try:
                with engines.start(kind, work / kind) as running:
                    started = time.perf_counter()
                    try:
                        with PeakMemory(running.url) as memory:
                            report = publish(settings, running.url, auth=running.auth)
                    except EngineError as exc:  # say what differs, per predicate, and go on
                        print(f"{kind}: publish failed after {time.perf_counter() - started:.1f} s: {str(exc)[:400]}")
                        mismatch(store, running.url)
                        continue
                    rate = quads / report.seconds
                    print(
                        f"{kind}: publish {report.seconds:.1f} s ({rate:,.0f} quads/s; the switch "
                        f"{report.switch_seconds:.2f} s); the engine's peak resident memory {memory.peak / 2**30:.2f} GiB"
                    )
                    here, there, slowest, slowest_name, refused = saved_queries(store, running.url)
                    kept, answers = served_answers(running.url, work / f"{kind}-served")
            except engines.Unavailable as exc:
                print(f"{kind}: skipped: {exc}")
                continue
            print(
                f"  saved queries (no SERVICE): embedded {here:.2f} s, {kind} {there:.2f} s "
                f"({there / here:.1f}x); slowest there: {slowest_name} {slowest:.2f} s"
                + (f"; refused: {'; '.join(refused)}" if refused else "")
            )
            print(
                f"  served by `iclr-kg serve` on {kind}: every saved query's whole answer kept {kept:.1f} s after "
                f"its first request; then each as JSON: slowest {', '.join(f'{n} {ms:.0f} ms' for ms, n in answers[:3])}; "
                f"under 1 s: {'yes' if answers[0][0] < 1000 else 'no'} (issue #35 item 3)"
            )
            bulk = BULK.get(kind)
            if bulk is not None:
                bulk_s = bulk(nquads, work / f"{kind}-bulk")
                print(f"  its bulk loader {bulk_s:.1f} s; publish / loader {report.seconds / bulk_s:.2f}x")


if __name__ == "__main__":
    main()
