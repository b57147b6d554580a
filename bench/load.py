"""Load test: concurrent clients mixing the saved queries against a real `iclr-kg serve`.

    python bench/load.py                      # 16 clients for 60 s on the real graph
    python bench/load.py --clients 32 --seconds 30 --url http://127.0.0.1:8000

Without --url it builds the real graph into a temporary store and starts `iclr-kg serve` on a
free 127.0.0.1 port. Each client loops over the saved queries (JSON results, keep-alive
connection) until the time is up, with a bounded number of requests. Prints requests, errors,
throughput and p50/p95/p99 latency per query and overall; exits 1 on any error.
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
    process = subprocess.Popen([cli, "serve", "--store", str(workdir / "store"), "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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


def client(url: str, names: list[str], until: float, max_requests: int, results: list, errors: list, seed: int) -> None:
    parsed = urllib.parse.urlparse(url)
    rng = random.Random(seed)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    done = 0
    while time.monotonic() < until and done < max_requests:
        name = rng.choice(names)
        started = time.perf_counter()
        try:
            connection.request("GET", f"/queries/{name}?format=json", headers={"Accept": "application/sparql-results+json"})
            response = connection.getresponse()
            body = response.read()
            elapsed = time.perf_counter() - started
            if response.status != 200 or not json.loads(body)["results"]["bindings"]:
                errors.append((name, response.status, body[:200]))
            else:
                results.append((name, elapsed))
        except (OSError, http.client.HTTPException, ValueError) as exc:
            errors.append((name, "exception", repr(exc)))
            connection.close()
            connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        done += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=100_000, help="per client, to bound the loop")
    parser.add_argument("--url", help="an already running endpoint (default: start one)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from iclr_kg.config import resource_dir
    from iclr_kg.saved import load_saved

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
            threads = [threading.Thread(target=client, args=(url, names, until, args.max_requests, results, errors, i))
                       for i in range(args.clients)]
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.monotonic() - started
        finally:
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
    latencies = [t for _, t in results]
    print(f"{args.clients} clients, {wall:.1f} s, {len(results)} requests ok, {len(errors)} errors, "
          f"{len(results) / wall:.1f} req/s")
    print(f"latency p50 {percentile(latencies, .5) * 1000:.1f} ms, p95 {percentile(latencies, .95) * 1000:.1f} ms, "
          f"p99 {percentile(latencies, .99) * 1000:.1f} ms, mean {statistics.fmean(latencies) * 1000:.1f} ms")
    print("\n| saved query | requests | p50 ms | p95 ms |\n|---|---:|---:|---:|")
    for name in names:
        mine = [t for n, t in results if n == name]
        print(f"| {name} | {len(mine)} | {percentile(mine, .5) * 1000:.1f} | {percentile(mine, .95) * 1000:.1f} |")
    for error in errors[:10]:
        print("error:", error, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
