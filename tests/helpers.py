"""What many tests need: free ports, waiting for a server, `iclr-kg serve` as a subprocess."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

CLI = str(Path(sys.executable).with_name("iclr-kg"))


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`iclr-kg ARGS` as a user runs it; `env` replaces the environment (default: this one)."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, check=False)


def free_port() -> int:
    """A port on 127.0.0.1 that nobody listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def dead_url(path: str = "/") -> str:
    """A URL on 127.0.0.1 where nothing answers: for 'the service is down' tests."""
    return f"http://127.0.0.1:{free_port()}{path}"


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
    store: Path, env: dict[str, str] | None = None, wait: float = 120
) -> Iterator[tuple[str, subprocess.Popen]]:
    """`iclr-kg serve` as shipped (gunicorn) on a free port; yields (base URL, process).

    Its output (stdout and stderr together) is `process.output` once the block ends; it goes to
    a file meanwhile, so that a chatty server never blocks on a full pipe."""
    port = free_port()
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen(
            [CLI, "serve", "--store", str(store), "--port", str(port)],
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
