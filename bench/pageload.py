"""Page-load benchmark: how fast the pages a person opens first render, in headless Chromium.

    python bench/pageload.py                 # the real graph, 20 loads of each page
    python bench/pageload.py --loads 50

Serves the real graph with `iclr-kg serve` on 127.0.0.1, then loads each page in Debian's chromium
(cache disabled, a fresh context per load) and reads the browser's own timings: first contentful
paint, DOMContentLoaded and load, and the JavaScript the page fetched (bytes as sent, and gzipped:
the budget of issue #18 is 600 KB compressed for the query page, first render under 300 ms).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PAGES = {
    "query page": "/",
    "query page with a result": "/?query=SELECT+%3Fp+%3Ft+WHERE+%7B+%3Fp+iclr%3Atitle+%3Ft+%7D+LIMIT+20",
    "saved query as a bar chart": "/queries/awards-per-organization",
    "a paper": "/resource/paper/NzTU59SYbNq",
    "a person (co-author graph)": "/resource/person/ian-gemp",
    "search": "/search?q=eigen",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=20)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if not chromium:
        raise SystemExit("Debian's chromium is needed: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        store = Path(tmp) / "store"
        server = subprocess.Popen(
            [str(BIN / "iclr-kg"), "serve", "--store", str(store), "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(base + "/health", timeout=2).close()
                    break
                except OSError:
                    time.sleep(0.2)
            print(
                "| page | first contentful paint: median / p90 ms | DOMContentLoaded ms | load ms | JS sent KB | JS gzipped KB |"
            )
            print("|---|---:|---:|---:|---:|---:|")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
                for name, path in PAGES.items():
                    paints, ready, loaded, sent, zipped = [], [], [], 0, 0
                    for n in range(args.loads + 1):
                        context = browser.new_context()
                        page = context.new_page()
                        scripts: list[bytes] = []
                        page.on(
                            "response",
                            lambda r, s=scripts: s.append(r.body()) if r.request.resource_type == "script" else None,
                        )
                        page.goto(base + path, wait_until="networkidle")
                        timing = page.evaluate(
                            "(() => { const n = performance.getEntriesByType('navigation')[0];"
                            " const p = performance.getEntriesByName('first-contentful-paint')[0];"
                            " return [p ? p.startTime : null, n.domContentLoadedEventEnd, n.loadEventEnd]; })()"
                        )
                        if n > 0:  # the first load warms the server's caches
                            paints.append(timing[0])
                            ready.append(timing[1])
                            loaded.append(timing[2])
                        sent = sum(len(b) for b in scripts)
                        zipped = sum(len(gzip.compress(b)) for b in scripts)
                        context.close()
                    paints.sort()
                    print(
                        f"| {name} | {statistics.median(paints):.0f} / {paints[int(len(paints) * 0.9) - 1]:.0f} | "
                        f"{statistics.median(ready):.0f} | {statistics.median(loaded):.0f} | "
                        f"{sent / 1024:.0f} | {zipped / 1024:.0f} |"
                    )
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
