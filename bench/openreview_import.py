"""OpenReview import benchmark: a synthetic venue from the local stand-in, imported and built.

    pip install -e '.[bench]'
    python bench/openreview_import.py                      # 10,000 submissions, 4 reviews each
    python bench/openreview_import.py --submissions 2000 --pause 1.0

The venue comes from `bench/synth.py --openreview` and is served by testbed/openreview_standin.py in
its own process on 127.0.0.1. Measured in one run: the peer (openreview-py alone fetching the same
notes and profiles with `get_all_notes` and `search_profiles`, no processing), our import
(`iclr-kg import openreview --reviews`: fetch, cache, resolve, check, write), the import again
from its disk cache, and `iclr-kg build` with the import; wall time and peak memory of each, and
the ratio of our import to the bare fetch.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
from testbed import synth  # noqa: E402

VENUE = "ICLR.cc/2021/Conference"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measured(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run a command; (seconds, peak RSS MiB of it and its children, last line of its output)."""
    started = time.perf_counter()
    process = psutil.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0.0
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(process.stdout), daemon=True)  # type: ignore[arg-type]
    reader.start()
    while process.poll() is None:
        try:
            peak = max(peak, sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20)
        except psutil.Error:
            pass
        time.sleep(0.05)
    reader.join()
    seconds = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{''.join(output)[-3000:]}")
    return seconds, peak, (output[-1].strip() if output else "")


PEER = """
import sys, openreview
client = openreview.Client(baseurl=sys.argv[1])
venue = sys.argv[2]
ids = set()
for kind in ("Blind_Submission", "Withdrawn_Submission", "Desk_Rejected_Submission"):
    notes = client.get_all_notes(invitation=f"{venue}/-/{kind}", details="directReplies")
    ids.update(a for n in notes for a in n.content.get("authorids", []) if a.startswith("~"))
profiles = client.search_profiles(ids=sorted(ids))
print(f"{len(ids)} profile ids, {len(profiles)} profiles")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=10000)
    parser.add_argument("--reviews", type=int, default=4, help="reviews per submission")
    parser.add_argument(
        "--no-links",
        action="store_true",
        help="profiles without identifiers (ORCID, dblp...): their cost, by difference",
    )
    parser.add_argument(
        "--pause", type=float, default=0.0, help="seconds between requests (the product's default is 1.0)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        venue_file = work / "venue.json"
        started = time.perf_counter()
        venue = synth.openreview_venue(args.submissions, args.reviews, links=not args.no_links)
        venue_file.write_text(json.dumps(venue), encoding="utf-8")
        notes = sum(len(n) for n in venue["notes"].values())  # type: ignore[union-attr]
        print(
            f"synthetic venue: {notes} submissions, {len(venue['profiles'])} profiles "  # type: ignore[arg-type]
            f"({venue_file.stat().st_size / 2**20:.1f} MiB JSON, {time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
        )
        port = free_port()
        standin = subprocess.Popen(
            [sys.executable, "-m", "testbed.openreview_standin", "--venue-file", str(venue_file), "--port", str(port)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        standin.stdout.readline()  # type: ignore[union-attr]  # "OpenReview stand-in on ..."
        url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "TQDM_DISABLE": "1",
            "ICLR_KG_OPENREVIEW_API": url,
            "ICLR_KG_OPENREVIEW_API_V2": url,
            "ICLR_KG_OPENREVIEW_PAUSE": str(args.pause),
            "ICLR_KG_STORE": str(work / "store"),
        }
        try:
            rows = []
            rows.append(("peer: openreview-py fetch only", *measured([sys.executable, "-c", PEER, url, VENUE], env)))
            import_command = [
                str(BIN / "iclr-kg"),
                "import",
                "openreview",
                "--venue",
                VENUE,
                "--reviews",
                "--api",
                "v1",
            ]
            rows.append(("ours: import (fetch, resolve, check, write)", *measured(import_command, env)))
            rows.append(("ours: import again, from the disk cache", *measured(import_command, env)))
            rows.append(("ours: build with the import", *measured([str(BIN / "iclr-kg"), "build"], env)))
        finally:
            standin.terminate()
            standin.wait(timeout=10)
    print(
        f"\n### OpenReview import ({args.submissions:,} submissions x {args.reviews} reviews, pause {args.pause:g} s)\n"
    )
    print("| step | seconds | peak MiB | last line |")
    print("|---|---:|---:|---|")
    for name, seconds, peak, last in rows:
        print(f"| {name} | {seconds:.1f} | {peak:.0f} | {last[:140]} |")
    total = rows[1][1] + rows[3][1]
    print(f"\nimport + build: {total:.1f} s (target: under 180 s); import / bare fetch: {rows[1][1] / rows[0][1]:.2f}x")


if __name__ == "__main__":
    main()
