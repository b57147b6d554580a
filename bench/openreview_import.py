"""OpenReview import benchmark: a synthetic venue from the local stand-in, imported and built.

    pip install -e '.[bench]'
    python bench/openreview_import.py                      # 10,000 submissions, 4 reviews each
    python bench/openreview_import.py --submissions 2000 --pause 1.0
    python bench/openreview_import.py --every-year         # `--venue all`: 45,000 submissions, 150,000 reviews

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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
from testbed import synth  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from build import built_line  # noqa: E402
from build import measured as measured_tree  # noqa: E402

VENUE = "ICLR.cc/2021/Conference"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measured(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(seconds, peak PSS MiB of the process tree, the build's summary line or else the last line
    of the output) of one command: bench/build.py's measuring, the forked validator's shared pages
    counted once."""
    seconds, peak, output = measured_tree(command, env)
    return seconds, peak, built_line(output) or (output.splitlines() or [""])[-1].strip()


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


class StandInProcess:
    """testbed/openreview_standin.py serving a venue file, in its own process on 127.0.0.1."""

    def __init__(self, venue: dict[str, object], work: Path, name: str, port: int = 0):
        self.file = work / f"{name}.json"
        started = time.perf_counter()
        self.file.write_text(json.dumps(venue), encoding="utf-8")
        notes = sum(len(n) for n in venue["notes"].values())  # type: ignore[attr-defined]
        print(
            f"{name}: {notes} notes, {len(venue['profiles'])} profiles "  # type: ignore[arg-type]
            f"({self.file.stat().st_size / 2**20:.1f} MiB JSON, {time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
        )
        self.port = port or free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "testbed.openreview_standin",
                "--venue-file",
                str(self.file),
                "--port",
                str(self.port),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.process.stdout.readline()  # type: ignore[union-attr]  # "OpenReview stand-in on ..."
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def every_year(submissions: int, reviews: int, pause: float) -> None:
    """`--venue all` at ICLR's scale (issue #35 item 4): every edition up to NEWEST in its year's
    format, `submissions` and `reviews` in all, imported and built; then one new year appears
    (its size the newest's) and the import and the build run again."""
    years = list(synth.SUBMISSIONS_BY_YEAR)
    first = synth.openreview_every_year(submissions, reviews, years)
    newest = max(years) + 1
    scale = submissions / sum(synth.SUBMISSIONS_BY_YEAR.values())
    added = round(synth.SUBMISSIONS_BY_YEAR[max(years)] * scale)
    more = synth.openreview_every_year(added, round(reviews * added / submissions), [newest], first=submissions + 10)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = []
        env = {
            **os.environ,
            "TQDM_DISABLE": "1",
            "ICLR_KG_OPENREVIEW_PAUSE": str(pause),
            "ICLR_KG_STORE": str(work / "store"),
        }
        import_all = [str(BIN / "iclr-kg"), "import", "openreview", "--venue", "all", "--reviews"]
        build = [str(BIN / "iclr-kg"), "build"]
        standin = StandInProcess(first, work, f"every year to {max(years)}")
        try:
            env |= {"ICLR_KG_OPENREVIEW_API": standin.url, "ICLR_KG_OPENREVIEW_API_V2": standin.url}
            rows.append((f"import --venue all ({len(years)} editions)", *measured(import_all, env)))
            rows.append(("build with it", *measured(build, env)))
            rows.append(("build again, nothing changed", *measured(build, env)))
        finally:
            standin.stop()
        notes = first["notes"]
        for invitation, listed in more["notes"].items():  # type: ignore[union-attr]
            notes.setdefault(invitation, []).extend(listed)  # type: ignore[union-attr]
        for pid, profile in more["profiles"].items():  # type: ignore[union-attr]
            first["profiles"].setdefault(pid, profile)  # type: ignore[union-attr]  # a profile stays as it was
        # at the same address: the import's page cache (and what it remembers) is per service
        standin = StandInProcess(first, work, f"and {newest}", port=standin.port)
        try:
            env |= {"ICLR_KG_OPENREVIEW_API": standin.url, "ICLR_KG_OPENREVIEW_API_V2": standin.url}
            rows.append((f"import --venue all again ({newest} new)", *measured(import_all, env)))
            rows.append((f"build with {newest}", *measured(build, env)))
        finally:
            standin.stop()
    print(f"\n### OpenReview import, every edition ({submissions:,} submissions, about {reviews:,} reviews)\n")
    print("| step | seconds | peak MiB (PSS) | last line |")
    print("|---|---:|---:|---|")
    for name, seconds, peak, last in rows:
        print(f"| {name} | {seconds:.1f} | {peak:.0f} | {last[:400]} |")
    ratio = (rows[0][1] + rows[1][1]) / rows[1][1]
    peak = max(row[2] for row in rows)
    print(
        f"\nimport + build / build: {ratio:.2f}x (target 2.5x); peak {peak / 1024:.2f} GiB (target 4 GiB); "
        f"the new year's build {rows[4][1] / rows[1][1]:.2f}x the first build"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, help="10,000 (one venue); 45,000 with --every-year")
    parser.add_argument("--reviews", type=int, help="reviews per submission (4); in all with --every-year (150,000)")
    parser.add_argument("--every-year", action="store_true", help="`--venue all`: every edition, then a new one")
    parser.add_argument(
        "--no-links",
        action="store_true",
        help="profiles without identifiers (ORCID, dblp...): their cost, by difference",
    )
    parser.add_argument(
        "--pause", type=float, default=0.0, help="seconds between requests (the product's default is 1.0)"
    )
    args = parser.parse_args()
    if args.every_year:
        every_year(args.submissions or 45000, args.reviews or 150000, args.pause)
        return
    args.submissions, args.reviews = args.submissions or 10000, args.reviews or 4
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        venue = synth.openreview_venue(args.submissions, args.reviews, links=not args.no_links)
        standin = StandInProcess(venue, work, "synthetic venue")
        url = standin.url
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
            standin.stop()
    print(
        f"\n### OpenReview import ({args.submissions:,} submissions x {args.reviews} reviews, pause {args.pause:g} s)\n"
    )
    print("| step | seconds | peak MiB (PSS) | last line |")
    print("|---|---:|---:|---|")
    for name, seconds, peak, last in rows:
        print(f"| {name} | {seconds:.1f} | {peak:.0f} | {last[:140]} |")
    total = rows[1][1] + rows[3][1]
    print(f"\nimport + build: {total:.1f} s (target: under 180 s); import / bare fetch: {rows[1][1] / rows[0][1]:.2f}x")


if __name__ == "__main__":
    main()
