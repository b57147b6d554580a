"""Memory at rest: `iclr-kg serve` as shipped (defaults) against Oxigraph's server on the same store.

    python bench/memory.py                 # the real graph (built first if needed)
    python bench/memory.py --store DIR

Each server starts, then answers a few requests on every web process (so that each has started
its query workers), and its whole process tree is measured three seconds later and again at
rest, once the query workers idle for ICLR_KG_QUERY_WORKER_IDLE seconds have stopped (one per
web process stays): RSS added up over the processes, and PSS (a page that n processes share
counts 1/n: every worker maps the same interpreter and libraries). Printed: both, per process
kind, and the ratio to issue #19's target of 300 MiB. Run by hand.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from iclr_kg.config import Settings  # noqa: E402
from testbed.helpers import free_port, wait_for  # noqa: E402

BIN = Path(sys.executable).parent
TARGET_MIB = 300
WARM_UP = (
    "/sparql?query=SELECT%20*%20WHERE%20%7B%3Fs%20%3Fp%20%3Fo%7D%20LIMIT%2010",
    "/resource/organization/google",
    "/stats",
)


def measured(process: subprocess.Popen) -> tuple[float, float, list[tuple[str, float]]]:
    tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    rss = [(p.name(), p.memory_info().rss / 2**20) for p in tree]
    pss = sum(p.memory_full_info().pss for p in tree) / 2**20
    return sum(r for _, r in rss), pss, rss


Measured = tuple[float, float, list[tuple[str, float]]]


def at_rest(command: list[str], base: str, paths: tuple[str, ...], rests: tuple[float, ...] = (3,)) -> list[Measured]:
    """The process tree measured after each of `rests` seconds of rest (cumulative)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(base + paths[0], 120)
        for path in paths:
            for _ in range(6):  # enough to reach every web process
                urllib.request.urlopen(base + path, timeout=60).read()
        out, rested = [], 0.0
        for rest in rests:
            time.sleep(rest - rested)
            rested = rest
            out.append(measured(process))
        return out
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("var/store"))
    args = parser.parse_args()
    if not (args.store / "current").exists():
        subprocess.run([str(BIN / "iclr-kg"), "build", "--store", str(args.store)], check=True)
    port = free_port()
    idle = Settings().query_worker_idle
    busy, ours = at_rest(
        [str(BIN / "iclr-kg"), "serve", "--store", str(args.store), "--port", str(port)],
        f"http://127.0.0.1:{port}",
        WARM_UP,
        rests=(3, idle + 10),  # just after the requests, then once idle workers have stopped
    )
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "db"
        shutil.copytree((args.store / "current").resolve(), copy)
        port = free_port()
        theirs = at_rest(
            [str(BIN / "oxigraph"), "serve-read-only", "--location", str(copy), "--bind", f"127.0.0.1:{port}"],
            f"http://127.0.0.1:{port}/query",
            ("?query=ASK%7B%7D",),
        )[0]
    print(f"ours 3 s after the requests: {len(busy[2])} processes, RSS sum {busy[0]:.0f} MiB, PSS {busy[1]:.0f} MiB")
    kinds: dict[str, list[float]] = {}
    for name, rss in ours[2]:
        kinds.setdefault(name, []).append(rss)
    print(
        f"ours at rest ({idle + 10:g} s after them): {len(ours[2])} processes, RSS sum {ours[0]:.0f} MiB, PSS {ours[1]:.0f} MiB"
    )
    for name, values in sorted(kinds.items()):
        print(f"  {len(values)} x {name}: {sum(values) / len(values):.0f} MiB RSS each")
    print(f"Oxigraph's server: RSS {theirs[0]:.0f} MiB, PSS {theirs[1]:.0f} MiB")
    print(
        f"against the target of {TARGET_MIB} MiB: RSS sum {ours[0] / TARGET_MIB:.2f}x, PSS {ours[1] / TARGET_MIB:.2f}x"
    )


if __name__ == "__main__":
    main()
