"""Update benchmark: one authorship inserted then deleted through `/update` on `iclr-kg serve`,
against Oxigraph's own server holding the same quads and taking the same updates, in one run.

    python bench/updates.py                     # the curated graph
    python bench/updates.py --papers 10000      # synthetic data (bench/synth.py)
    python bench/updates.py --papers 50000 --pairs 20

Each pair inserts a new `iclr:Authorship` of an existing person on an existing paper (so the
reasoner derives `iclr:hasAuthor`, `schema:author`, `wdt:P50`), then deletes it with
`DELETE DATA` (so those go again). Ours runs with the default settings and an update token; the
peer is `oxigraph serve` on an `oxigraph load` of our store's dump. Each request is timed from
send to the end of its answer, on a kept-alive connection; two pairs warm each server up first
and are not counted. Once, our derived triple is checked to be there after the insert and gone
after the delete. Prints the median and p95 per update on each server and the ratio of medians;
then the same for a read sent right after each of `--reads` more pairs' updates (ours publishes
an update's generation a little after acknowledging it, and such a read waits for it).
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent))
BIN = Path(sys.executable).parent
TOKEN = "bench-token"
ICLR = "https://w3id.org/iclr-kg/ontology#"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(port: int, path: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path)
            if connection.getresponse().status < 500:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"nothing answered on port {port}")


def built_store(papers: int, work: Path) -> Path:
    """A store of `papers` synthetic papers (0: the curated graph), built by the CLI."""
    env = {**os.environ, "ICLR_KG_PROGRESS": "0"}
    if papers:
        from testbed import synth

        env["ICLR_KG_DATA_DIR"] = str(synth.write(papers, work / "data"))
    store = work / "store"
    began = time.perf_counter()
    subprocess.run([str(BIN / "iclr-kg"), "build", "--store", str(store)], env=env, check=True, capture_output=True)
    print(f"built {'the curated graph' if not papers else f'{papers:,} papers'} in {time.perf_counter() - began:.1f} s")
    return store


def peer_of(store: Path, work: Path) -> Path:
    """Oxigraph's own database of the same quads (the current generation dumped, then loaded)."""
    from pyoxigraph import RdfFormat

    from iclr_kg.store import open_read_only

    dump = work / "dump.nq"
    open_read_only(store).dump(str(dump), RdfFormat.N_QUADS)
    folder = work / "oxigraph"
    subprocess.run([str(BIN / "oxigraph"), "load", "--location", str(folder), "--file", str(dump)], check=True)
    return folder


def settle(pid: int, port: int, limit: float = 600) -> float:
    """Ask for /stats (the store's counts: 16 s of scans at 50,000 papers, once), then wait until
    the server's processes rest (under 5% of one core for a second): it computes, in the
    background, the saved queries' first pages for the store (`AppState.warm`), which would
    otherwise compete with the updates for this machine's two cores. Returns the seconds waited."""
    began = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=limit)
    connection.request("GET", "/stats", headers={"Accept": "text/html"})
    connection.getresponse().read()
    time.sleep(3)  # the warmers start two seconds after a request first sees the generation
    root = psutil.Process(pid)

    def used() -> float:
        total = 0.0
        for process in [root, *root.children(recursive=True)]:
            try:
                total += sum(process.cpu_times()[:2])
            except psutil.Error:  # ended meanwhile
                pass
        return total

    while time.monotonic() - began < limit:
        before = used()
        time.sleep(1.0)
        if used() - before < 0.05:
            break
    return time.monotonic() - began


def subjects(store: Path) -> tuple[str, str, int]:
    """A paper, a person who is not its author, and the quads of the store."""
    from iclr_kg.store import open_read_only

    db = open_read_only(store)
    prefix = f"PREFIX iclr: <{ICLR}> "
    paper = next(iter(db.query(prefix + "SELECT ?p WHERE { ?p a iclr:Paper } ORDER BY ?p LIMIT 1")))[0].value
    person = next(
        iter(
            db.query(
                prefix + f"SELECT ?a WHERE {{ ?a a iclr:Person FILTER NOT EXISTS {{ <{paper}> iclr:hasAuthor ?a }} }} "
                "ORDER BY ?a LIMIT 1"
            )
        )
    )[0].value
    return paper, person, len(db)


class Client:
    """POSTs updates and GETs queries on one kept-alive connection."""

    def __init__(self, port: int, update_path: str, query_path: str, token: str | None):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.update_path, self.query_path, self.token = update_path, query_path, token

    def update(self, text: str) -> float:
        headers = {"Content-Type": "application/sparql-update"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        began = time.perf_counter()
        self.connection.request("POST", self.update_path, body=text.encode(), headers=headers)
        response = self.connection.getresponse()
        body = response.read()
        seconds = time.perf_counter() - began
        if response.status not in (200, 204):
            raise SystemExit(f"update answered {response.status}: {body[:300]!r}")
        return seconds

    def ask(self, text: str) -> bool:
        query = urllib.parse.urlencode({"query": text})
        self.connection.request(
            "GET", f"{self.query_path}?{query}", headers={"Accept": "application/sparql-results+json"}
        )
        response = self.connection.getresponse()
        return b"true" in response.read()


def pair(i: int, paper: str, person: str) -> tuple[str, str]:
    node = f"<urn:bench:authorship-{i}>"
    data = (
        f"GRAPH <urn:bench> {{ <{paper}> <{ICLR}hasAuthorship> {node} . {node} a <{ICLR}Authorship> ; "
        f"<{ICLR}authorshipBy> <{person}> ; <{ICLR}authorPosition> 99 }}"
    )
    return f"INSERT DATA {{ {data} }}", f"DELETE DATA {{ {data} }}"


def run(client: Client, pairs: int, paper: str, person: str, check: bool) -> list[float]:
    derived = f"ASK {{ GRAPH <https://w3id.org/iclr-kg/graph/inferred> {{ <{paper}> <{ICLR}hasAuthor> <{person}> }} }}"
    times: list[float] = []
    for i in range(pairs + 2):
        insert, delete = pair(i, paper, person)
        inserted = client.update(insert)
        if check and i == 0 and not client.ask(derived):
            raise SystemExit("the derived iclr:hasAuthor is not in the generation the insert made")
        deleted = client.update(delete)
        if check and i == 0 and client.ask(derived):
            raise SystemExit("the derived iclr:hasAuthor is still there after the delete")
        if i >= 2:
            times += [inserted, deleted]
    return times


def read_after(client: Client, pairs: int, paper: str, person: str) -> list[float]:
    """A read right after each update, timed alone: ours waits there for the update's generation
    (the writer publishes a burst of updates a little after acknowledging them)."""
    asked = f"ASK {{ <{paper}> <{ICLR}hasAuthorship> ?a }}"
    times: list[float] = []
    for i in range(pairs):
        for text in pair(1000 + i, paper, person):
            client.update(text)
            began = time.perf_counter()
            client.ask(asked)
            times.append(time.perf_counter() - began)
    return times


def describe(name: str, times: list[float]) -> float:
    ordered = sorted(times)
    median = statistics.median(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    print(f"| {name} | {len(times)} | {median * 1000:.2f} ms | {p95 * 1000:.2f} ms |")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=0, help="synthetic papers (0: the curated graph)")
    parser.add_argument("--pairs", type=int, default=20, help="insert-then-delete pairs, after two to warm up")
    parser.add_argument("--reads", type=int, default=10, help="pairs whose updates are each followed by a timed read")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        store = built_store(args.papers, work)
        paper, person, quads = subjects(store)
        peer = peer_of(store, work)
        ours_port, peer_port = free_port(), free_port()
        env = {**os.environ, "ICLR_KG_UPDATE_TOKEN": TOKEN, "ICLR_KG_PROGRESS": "0"}
        log = open(work / "serve.log", "w")  # noqa: SIM115 - closed below, after the server
        servers = [
            subprocess.Popen(
                [str(BIN / "iclr-kg"), "serve", "--store", str(store), "--port", str(ours_port)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            ),
            subprocess.Popen(
                [str(BIN / "oxigraph"), "serve", "--location", str(peer), "--bind", f"127.0.0.1:{peer_port}"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
        ]
        try:
            wait_for(ours_port, "/health")
            print(f"our server at rest after {settle(servers[0].pid, ours_port):.0f} s (warming its caches)")
            wait_for(peer_port, "/query?query=ASK%7B%7D")
            print(f"{quads:,} quads; paper {paper}, person {person}")
            ours = run(Client(ours_port, "/update", "/sparql", TOKEN), args.pairs, paper, person, check=True)
            theirs = run(Client(peer_port, "/update", "/query", None), args.pairs, paper, person, check=False)
            our_reads = read_after(Client(ours_port, "/update", "/sparql", TOKEN), args.reads, paper, person)
            their_reads = read_after(Client(peer_port, "/update", "/query", None), args.reads, paper, person)
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=30)
            log.close()
        print("\n| server | updates | median | p95 |\n|---|---:|---:|---:|")
        mine = describe("iclr-kg serve, /update", ours)
        peer_median = describe("oxigraph serve, /update", theirs)
        print(f"\nratio of medians: {mine / peer_median:.0f}x Oxigraph's server")
        print("\nA read right after an update (ours waits for the update's generation):\n")
        print("| server | reads | median | p95 |\n|---|---:|---:|---:|")
        read_median = describe("iclr-kg serve, /sparql after /update", our_reads)
        peer_read = describe("oxigraph serve, /query after /update", their_reads)
        print(f"\nratio of medians: {read_median / peer_read:.0f}x Oxigraph's server")
        how = [line.strip() for line in (work / "serve.log").read_text().splitlines() if line.startswith("update ")]
        inside = [float(line.rsplit(" in ", 1)[1].split()[0]) for line in how[4:] if " in " in line]
        print(f"our log, last update: {how[-1] if how else '(none)'}")
        if inside:
            print(f"inside the writer (the log's figures, timed pairs): median {statistics.median(inside):.0f} ms")


if __name__ == "__main__":
    main()
