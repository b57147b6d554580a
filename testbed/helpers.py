"""What many tests and benchmarks need: free ports, waiting for a server, `iclr-kg serve` as a
subprocess, a store's contents in a form two builds can be compared by."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
from pyoxigraph import BlankNode

from iclr_kg.index import index_path
from iclr_kg.store import current_generation, open_read_only

CLI = str(Path(sys.executable).with_name("iclr-kg"))


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`iclr-kg ARGS` as a user runs it (from `cwd`); `env` replaces the environment (default: this one)."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, cwd=cwd, check=False)


def free_port() -> int:
    """A port on 127.0.0.1 that nobody listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def dead_url(path: str = "/") -> str:
    """A URL on 127.0.0.1 where nothing answers: for 'the service is down' tests."""
    return f"http://127.0.0.1:{free_port()}{path}"


def eventually(condition: Callable[[], object], what: str, seconds: float = 30) -> None:
    """Until `condition()` holds, looked at every 50 ms; fail saying `what` did not happen within
    `seconds`. A test waits for what it expects, never for a fixed time: on two shared cores a
    fixed sleep is too short on a busy day and wasted on a quiet one."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.05)


def wait_for(url: str, seconds: float = 60) -> None:
    """Until `url` answers 2xx (or raise after `seconds`)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def serving(
    store: Path | None, env: dict[str, str] | None = None, wait: float = 120, cwd: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """`iclr-kg serve` as shipped (gunicorn) on a free port; yields (base URL, process).
    `store` None: no `--store`, README's default (`./var/store` under `cwd`, relative).

    Its output (stdout and stderr together) is `process.output` once the block ends; it goes to
    a file meanwhile, so that a chatty server never blocks on a full pipe."""
    port = free_port()
    where = ["--store", str(store)] if store is not None else []
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [CLI, "serve", *where, "--port", str(port)],
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for(base + "/health", wait)
            yield base, process
        finally:
            if process.poll() is None:
                process.terminate()
            process.wait(timeout=30)
            output.seek(0)
            process.output = output.read()  # type: ignore[attr-defined]


def web_processes(server: subprocess.Popen) -> set[int]:
    """The web processes of `iclr-kg serve` (gunicorn): it forks them from the serving process,
    so they share its command line (its other children, such as multiprocessing's resource
    tracker, do not; the query workers are the web processes' children). One that just ended
    (a zombie until reaped) is not counted."""
    arbiter = psutil.Process(server.pid)
    found = set()
    for child in arbiter.children():
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.cmdline() == arbiter.cmdline():
                found.add(child.pid)
    return found


def query_workers_started(server: subprocess.Popen, workers: int, seconds: float = 60) -> set[int]:
    """Wait until every web process of `server` has started its `workers` query workers (each
    starts them as it starts: web/state.py `start_workers`), so that what a test measures of the
    process tree does not include their start; returns the web processes."""

    def started() -> bool:
        web = web_processes(server)
        spawned = [[c for c in psutil.Process(pid).children() if "spawn_main" in " ".join(c.cmdline())] for pid in web]
        return len(web) >= 2 and all(len(children) >= workers for children in spawned)

    eventually(started, "each web process started its query workers", seconds)
    return web_processes(server)


def snapshot(store_dir: Path) -> tuple[set, Counter, list[str], set]:
    """What a build made, comparable across builds: every quad (blank nodes, the ontology's own,
    whose labels each parse draws anew, compared by position), the named graphs, the index rows."""
    store = open_read_only(store_dir)
    plain, blank = set(), Counter()
    for q in store.quads_for_pattern(None, None, None, None):
        if isinstance(q.subject, BlankNode) or isinstance(q.object, BlankNode):
            s = "_" if isinstance(q.subject, BlankNode) else str(q.subject)
            o = "_" if isinstance(q.object, BlankNode) else str(q.object)
            blank[str(q.graph_name), str(q.predicate), s, o] += 1
        else:
            plain.add(q)
    graphs = sorted(str(g) for g in store.named_graphs())
    with sqlite3.connect(index_path(current_generation(store_dir))) as db:
        rows = set(db.execute("SELECT iri, kind, key, label, label_zh, facts, sort, year, papers, names FROM entity"))
    return plain, blank, graphs, rows


def get(url: str, timeout: float = 15, method: str = "GET", headers: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def q(query: str, **params: str) -> str:
    return urllib.parse.urlencode({"query": query, **params})


def swallow(call: Callable[[], object]) -> None:
    """Run `call`, ignoring its error: for the deliberately slow queries a test starts in a thread
    and that are meant to time out."""
    with contextlib.suppress(Exception):
        call()


# Debian's Chromium as the browser tests launch it: no sandbox (containers), no GPU, and shared
# memory in /tmp rather than a small /dev/shm, whose exhaustion crashes a page under load.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
