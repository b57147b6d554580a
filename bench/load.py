"""Load test: concurrent clients mixing the saved queries against a real `iclr-kg serve`.

    python bench/load.py                      # 16 clients for 60 s on the real graph
    python bench/load.py --clients 32 --seconds 30 --url http://127.0.0.1:8000
    python bench/load.py --seconds 30 --slowloris 300 --slow-queries 8 --non-readers 8   # under attack
    python bench/load.py --seconds 30 --slow-queries 16 --lint-bombs 4 --search-bombs 4   # hardening #2, #4, #10
    python bench/load.py --seconds 30 --cache-busters 2 --encoding-mixers 2 --forgers 4   # round four, items 1-3

Without --url it builds the real graph into a temporary store and starts `iclr-kg serve` on a
free 127.0.0.1 port. Each client loops over the saved queries (JSON results, keep-alive
connection) until the time is up, with a bounded number of requests. Prints requests, errors,
throughput and p50/p95/p99 latency per query and overall; exits 1 on any error.

Attacks run beside the clients, for the whole time: `--slowloris N` keeps N connections
trickling header lines (reopening any the server closes), `--slow-queries N` loops N clients
on a query that runs to its time limit, `--non-readers N` keeps N connections that ask for a
large result and never read it, `--lint-bombs N` loops N clients on the editor's check
(`/api/check`) with a query whose preparation sorts 8 million rows and one nested 20,000 deep,
`--search-bombs N` loops N clients on a search of forty repeated words, `--cache-busters N`
asks a static file under ever new query strings (the server's resident memory is printed before
and after), `--encoding-mixers N` asks one JSON-LD answer with gzip and without and counts any
gzip'd answer to a client that did not offer it as `wrong`, `--forgers N` loop on slow queries
from one address each claiming another client in `Forwarded`. The figures are then those of the
well-behaved clients.

Every client has a loopback address of its own (127.0.0.10, 127.0.0.11, ...), as clients on a
network would: the server gives each address a share of its query workers, so clients sharing
one address would be refused for each other. The slow queries all come from one address,
127.0.1.1: one client trying to take the endpoint. Each attack's answers are counted by status.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def start_server(workdir: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cli = str(Path(sys.executable).with_name("iclr-kg"))
    process = subprocess.Popen(
        [cli, "serve", "--store", str(workdir / "store"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return process, url
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit("server did not start")


def connect(url: str, source: str, timeout: float = 60) -> http.client.HTTPConnection:
    """A connection to `url` from the loopback address `source` (each client its own)."""
    parsed = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout, source_address=(source, 0))


def client(url: str, names: list[str], until: float, max_requests: int, results: list, errors: list, seed: int) -> None:
    source = f"127.0.0.{10 + seed}"
    rng = random.Random(seed)
    connection = connect(url, source)
    done = 0
    while time.monotonic() < until and done < max_requests:
        name = rng.choice(names)
        started = time.perf_counter()
        try:
            connection.request(
                "GET", f"/queries/{name}?format=json", headers={"Accept": "application/sparql-results+json"}
            )
            response = connection.getresponse()
            body = response.read()
            elapsed = time.perf_counter() - started
            if response.status != 200:
                errors.append((name, response.status, body[:200]))
            else:
                json.loads(body)["results"]["bindings"]  # a whole JSON result (empty for reviews without imports)
                results.append((name, elapsed))
        except (OSError, http.client.HTTPException, ValueError) as exc:
            errors.append((name, "exception", repr(exc)))
            connection.close()
            connection = connect(url, source)
        done += 1


CROSS = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"  # runs until its time limit


def slowloris(host: str, port: int, count: int, until: float, tally: dict) -> None:
    """Keep `count` connections sending one header line per second, never the blank line."""
    sockets: list[socket.socket | None] = [None] * count
    while time.monotonic() < until:
        for i in range(count):
            try:
                if sockets[i] is None:
                    sockets[i] = socket.create_connection((host, port), timeout=5)
                    sockets[i].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                    tally["opened"] += 1
                sockets[i].sendall(b"X-Slow: 1\r\n")
            except OSError:
                tally["cut"] += 1
                if sockets[i] is not None:
                    sockets[i].close()
                sockets[i] = None
        time.sleep(1)
    for sock in sockets:
        if sock is not None:
            sock.close()


def attacker(url: str, requests: list[tuple[str, str, bytes | None]], source: str, until: float, tally: dict) -> None:
    """Send `requests` (method, path, form body) in turn from `source` until the time is up,
    counting the answers by status."""
    turn = 0
    while time.monotonic() < until:
        method, path, body = requests[turn % len(requests)]
        turn += 1
        tally["sent"] += 1
        began = time.perf_counter()
        try:
            connection = connect(url, source, timeout=120)
            headers = {"Content-Type": "application/x-www-form-urlencoded"} if body else {}
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            tally[response.status] = tally.get(response.status, 0) + 1
            connection.close()
        except (OSError, http.client.HTTPException):
            tally["broken"] = tally.get("broken", 0) + 1
        tally["seconds"] = round(tally.get("seconds", 0) + time.perf_counter() - began, 1)
        time.sleep(0.1)


SLOW_QUERY = [("GET", "/sparql?" + urllib.parse.urlencode({"query": CROSS, "format": "tsv", "timeout": "10"}), None)]
_SORTED = " ".join(f"VALUES ?{v} {{ {' '.join(str(i) for i in range(200))} }}" for v in "abc")
LINT_BOMBS = [
    (
        "POST",
        "/api/check",
        urllib.parse.urlencode({"query": f"SELECT * WHERE {{ {_SORTED} }} ORDER BY ?a ?b ?c"}).encode(),
    ),
    ("POST", "/api/check", urllib.parse.urlencode({"query": "SELECT * WHERE " + "{" * 20_000 + "}" * 20_000}).encode()),
]
SEARCH_BOMB = [("GET", "/search?" + urllib.parse.urlencode({"q": "paper " * 40, "format": "json"}), None)]


def cache_buster(url: str, source: str, until: float, tally: dict) -> None:
    """Round four's item 1: a static file under ever new query strings, gzip offered (each URL
    was cached apart, without bound: 500 added 83 MiB to a web process)."""
    connection, turn = connect(url, source), 0
    while time.monotonic() < until:
        turn += 1
        try:
            connection.request("GET", f"/static/vendor/vega/vega.min.js?r={source}-{turn}", headers=GZIP)
            response = connection.getresponse()
            response.read()
            tally[response.status] = tally.get(response.status, 0) + 1
        except (OSError, http.client.HTTPException):
            tally["broken"] = tally.get("broken", 0) + 1
            connection.close()
            connection = connect(url, source)
        tally["sent"] += 1


GZIP = {"Accept-Encoding": "gzip"}
JSONLD_CONSTRUCT = "/sparql?" + urllib.parse.urlencode(
    {"query": "CONSTRUCT { ?p a iclr:Paper } WHERE { ?p a iclr:Paper } LIMIT 50", "format": "jsonld"}
)


def encoding_mixer(url: str, source: str, until: float, tally: dict) -> None:
    """Round four's item 3: one JSON-LD answer asked for with gzip and without, in turn; an
    answer gzip'd for a client that did not offer gzip is counted as `wrong` (the response memo
    served the first client's gzip bytes to everyone until the next generation)."""
    connection, turn = connect(url, source), 0
    while time.monotonic() < until:
        turn += 1
        offered = turn % 2 == 0
        try:
            connection.request("GET", JSONLD_CONSTRUCT, headers=GZIP if offered else {"Accept-Encoding": "identity"})
            response = connection.getresponse()
            body = response.read()
            gzipped = response.getheader("Content-Encoding") == "gzip" or body[:2] == b"\x1f\x8b"
            key = "wrong" if gzipped and not offered else response.status
            tally[key] = tally.get(key, 0) + 1
        except (OSError, http.client.HTTPException):
            tally["broken"] = tally.get("broken", 0) + 1
            connection.close()
            connection = connect(url, source)
        tally["sent"] += 1


FORGED = [("GET", SLOW_QUERY[0][1], None)]


def forger(url: str, source: str, until: float, tally: dict) -> None:
    """Round four's item 2: one address loops on slow queries, each claiming another client in
    `Forwarded` (the app believed it before X-Forwarded-For, and the shipped nginx site passed it
    on): with the fix, an address the app does not trust as its proxy is one client, whatever it
    says, and waits its share (429/503 past it)."""
    turn = 0
    while time.monotonic() < until:
        turn += 1
        try:
            connection = connect(url, source, timeout=120)
            connection.request("GET", FORGED[0][1], headers={"Forwarded": f"for=10.9.{turn // 250}.{turn % 250}"})
            response = connection.getresponse()
            response.read()
            tally[response.status] = tally.get(response.status, 0) + 1
            connection.close()
        except http.client.IncompleteRead:  # streamed, then stopped at its time limit: it ran
            tally["ran to its limit"] = tally.get("ran to its limit", 0) + 1
        except (OSError, http.client.HTTPException) as exc:
            tally[type(exc).__name__] = tally.get(type(exc).__name__, 0) + 1
        tally["sent"] += 1


def web_rss(process: subprocess.Popen | None) -> int:
    """Resident bytes of the server's process tree (its web processes and workers), from /proc."""
    if process is None:
        return 0
    total, pids = 0, [process.pid]
    while pids:
        pid = pids.pop()
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in Path(f"/proc/{pid}/task").iterdir():
                pids += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def non_reader(host: str, port: int, until: float, tally: dict) -> None:
    path = "/sparql?" + urllib.parse.urlencode({"query": "SELECT * WHERE { ?s ?p ?o }", "format": "tsv"})
    while time.monotonic() < until:
        with socket.create_connection((host, port)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            tally["sent"] += 1
            time.sleep(min(40.0, max(0.0, until - time.monotonic())))  # hold it, unread


def start_attacks(url: str, args: argparse.Namespace, until: float) -> tuple[list[threading.Thread], dict]:
    parsed = urllib.parse.urlparse(url)
    tallies: dict[str, dict] = {
        "slowloris": {"opened": 0, "cut": 0},
        "slow queries (one address)": {"sent": 0},
        "non-readers": {"sent": 0},
        "lint bombs": {"sent": 0},
        "search bombs": {"sent": 0},
        "cache busters": {"sent": 0},
        "encoding mixers": {"sent": 0},
        "forgers (one address)": {"sent": 0},
    }
    threads = []
    if args.slowloris:
        threads.append(
            threading.Thread(
                target=slowloris,
                args=(parsed.hostname, parsed.port, args.slowloris, until, tallies["slowloris"]),
                daemon=True,
            )
        )
    attacks = [
        (SLOW_QUERY, args.slow_queries, "slow queries (one address)", lambda i: "127.0.1.1"),
        (LINT_BOMBS, args.lint_bombs, "lint bombs", lambda i: f"127.0.2.{10 + i}"),
        (SEARCH_BOMB, args.search_bombs, "search bombs", lambda i: f"127.0.3.{10 + i}"),
    ]
    threads += [
        threading.Thread(target=attacker, args=(url, requests, source(i), until, tallies[name]), daemon=True)
        for requests, count, name, source in attacks
        for i in range(count)
    ]
    threads += [
        threading.Thread(
            target=non_reader, args=(parsed.hostname, parsed.port, until, tallies["non-readers"]), daemon=True
        )
        for _ in range(args.non_readers)
    ]
    for target, count, name, prefix in (
        (cache_buster, args.cache_busters, "cache busters", "127.0.4."),
        (encoding_mixer, args.encoding_mixers, "encoding mixers", "127.0.5."),
        (forger, args.forgers, "forgers (one address)", None),
    ):
        threads += [
            threading.Thread(
                target=target,
                args=(url, f"{prefix}{10 + i}" if prefix else "127.0.6.1", until, tallies[name]),
                daemon=True,
            )
            for i in range(count)
        ]
    for thread in threads:
        thread.start()
    return threads, tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=100_000, help="per client, to bound the loop")
    parser.add_argument("--url", help="an already running endpoint (default: start one)")
    parser.add_argument("--slowloris", type=int, default=0, help="connections trickling their headers")
    parser.add_argument(
        "--slow-queries", type=int, default=0, help="clients looping on a query that hits its time limit"
    )
    parser.add_argument("--non-readers", type=int, default=0, help="connections that never read their large result")
    parser.add_argument("--lint-bombs", type=int, default=0, help="clients looping on costly /api/check queries")
    parser.add_argument("--search-bombs", type=int, default=0, help="clients looping on a search of 40 repeated words")
    parser.add_argument("--cache-busters", type=int, default=0, help="clients asking a static file under new URLs")
    parser.add_argument(
        "--encoding-mixers", type=int, default=0, help="clients asking one answer with gzip and without"
    )
    parser.add_argument("--forgers", type=int, default=0, help="clients on one address claiming others in Forwarded")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from iclr_kg.config import resource_dir
    from iclr_kg.sparql.saved import load_saved

    # federated saved queries need the internet; they are left out of the load mix
    names = sorted(name for name, saved in load_saved(resource_dir("queries")).items() if "SERVICE" not in saved.text)
    process = None
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url
        if url is None:
            process, url = start_server(Path(tmp))
        try:
            results: list[tuple[str, float]] = []
            errors: list[tuple] = []
            until = time.monotonic() + args.seconds
            rss_before = web_rss(process)
            attackers, tallies = start_attacks(url, args, until)
            time.sleep(2 if attackers else 0)  # let the attack take hold first
            threads = [
                threading.Thread(target=client, args=(url, names, until, args.max_requests, results, errors, i))
                for i in range(args.clients)
            ]
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.monotonic() - started
            rss_after = web_rss(process)
        finally:
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
    latencies = [t for _, t in results]
    if attackers:
        print("under attack:", "; ".join(f"{name} {tally}" for name, tally in tallies.items() if any(tally.values())))
    if process is not None:
        print(f"server resident memory: {rss_before / 2**20:.0f} MiB before, {rss_after / 2**20:.0f} MiB after")
    by_status: dict[object, int] = {}
    for error in errors:
        by_status[error[1]] = by_status.get(error[1], 0) + 1
    print(
        f"{args.clients} clients, {wall:.1f} s, {len(results)} requests ok, {len(errors)} errors {by_status or ''}, "
        f"{len(results) / wall:.1f} req/s"
    )
    print(
        f"latency p50 {percentile(latencies, 0.5) * 1000:.1f} ms, p95 {percentile(latencies, 0.95) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms, mean {statistics.fmean(latencies) * 1000:.1f} ms"
    )
    print("\n| saved query | requests | p50 ms | p95 ms |\n|---|---:|---:|---:|")
    for name in names:
        mine = [t for n, t in results if n == name]
        print(f"| {name} | {len(mine)} | {percentile(mine, 0.5) * 1000:.1f} | {percentile(mine, 0.95) * 1000:.1f} |")
    for error in errors[:10]:
        print("error:", error, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
