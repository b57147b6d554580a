"""Build benchmark: a full `iclr-kg build` against the storage limit, and a rebuild after one edit.

    python bench/build.py                      # 10,000 and 50,000 synthetic papers
    python bench/build.py --sizes 10000
    python bench/build.py --sizes 10000 --pairs 5   # the median of five build / limit ratios

For each size, in one run: synthetic data (bench/synth.py) is built by `iclr-kg build` in its own
process (wall time, and peak memory of its whole process tree: the build forks a validator); the
quads of the store it made are dumped and loaded again by pyoxigraph's `bulk_load` alone, in a
fresh process (the storage limit: what no build can beat); then one curated file is edited
(organizations.yaml: an organization made part of another) and the build runs again,
incrementally. Printed: seconds, peak MiB, and the ratios build / limit (issue #19's targets:
2x at 10,000 papers, 2.5x and 3 GiB at 50,000) and rebuild / build (20%). `--verify`: the edited
data is also built from scratch, and the two stores compared as tests/test_incremental.py does (testbed.helpers.snapshot).
Needs the bench extra: pip install -e '.[bench]'.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
CLI = str(Path(sys.executable).with_name("iclr-kg"))
DUMP = """
import sys
from pathlib import Path
from pyoxigraph import RdfFormat
from iclr_kg.store import open_read_only
open_read_only(Path(sys.argv[1])).dump(sys.argv[2], RdfFormat.N_QUADS)
"""
LIMIT = """
import sys, time
from pyoxigraph import RdfFormat, Store
start = time.perf_counter()
store = Store(sys.argv[2])
store.bulk_load(path=sys.argv[1], format=RdfFormat.N_QUADS)
store.flush()
print(time.perf_counter() - start)
"""


def measured(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak MiB of the process tree, its output) of one command. The peak is of
    the tree's proportional set size (PSS): the build's forked validator shares the parent's
    pages until either writes them, and a sum of resident sizes would count those twice. The
    peak sum of resident sizes is printed too.

    Reading a process's PSS costs the kernel ~30 ms per 2 GiB mapped (it walks the page tables),
    so sampled 20 times a second it took most of a core from a two-core build. The resident
    sizes (nearly free) are read every 50 ms; the PSS only when their sum is above the highest
    PSS seen (PSS never exceeds it, so no peak is missed for that), and after a pause 19 times
    as long as the last reading took: the measuring takes at most 5% of a core. A peak shorter
    than that pause (about 3 s at 50,000 papers) can be missed; the RSS sum bounds it."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    said: list[str] = []  # read as it comes: an import's warnings can fill the pipe and stop it
    reader = threading.Thread(target=lambda: said.extend(process.stdout or ()), daemon=True)
    reader.start()
    watched, peak, peak_rss, next_pss = psutil.Process(process.pid), 0.0, 0.0, 0.0
    while process.poll() is None:
        try:
            tree = [watched, *watched.children(recursive=True)]
            rss = sum(p.memory_info().rss for p in tree) / 2**20
            peak_rss = max(peak_rss, rss)
            if rss > peak and time.perf_counter() >= next_pss:
                began = time.perf_counter()
                peak = max(peak, sum(p.memory_full_info().pss for p in tree) / 2**20)
                next_pss = time.perf_counter() + 19 * (time.perf_counter() - began)
        except psutil.Error:
            pass
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    reader.join()
    output = "".join(said)
    if process.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{output[-2000:]}")
    print(
        f"  {Path(command[0]).name} {' '.join(command[1:2])}: {seconds:.1f} s, peak PSS {peak:,.0f} MiB (RSS sum {peak_rss:,.0f} MiB)",
        flush=True,
    )
    return seconds, peak, output.strip()


def built_line(said: str) -> str:
    """The build's summary line (`built N quads ... (mode; stages)`) from its output."""
    return next((line for line in said.splitlines() if line.startswith("built ")), "")


def same_as_full(store: Path, env: dict[str, str], work: Path) -> str:
    """Build the edited data again from scratch and compare the two stores as the tests do
    (tests/test_incremental.py: every quad, named graph and index row)."""
    sys.path.insert(0, str(HERE.parent))
    from testbed.helpers import snapshot

    fresh = work / f"{store.name}-fresh"
    measured([CLI, "build", "--full", "--store", str(fresh)], env)
    mine, theirs = snapshot(store), snapshot(fresh)
    same = mine == theirs
    return f"{'the same as' if same else 'DIFFERENT from'} a full build ({len(mine[0]):,} quads, {len(mine[3]):,} index rows)"


def one_size(papers: int, work: Path, verify: bool = False, pairs: int = 1) -> dict[str, Any]:
    """One size's figures. With `pairs` > 1 the build and the limit are measured that many times,
    one after the other, from an empty store each time: the figures are the pair's whose ratio
    is the median, the lower middle one of an even count (the machine's noise moves single runs
    by more than a target's margin), the peak the highest of all, and every ratio is listed."""
    sys.path.insert(0, str(HERE.parent))
    from testbed import synth

    data = synth.write(papers, work / f"data-{papers}")
    store = work / f"store-{papers}"
    env = {"ICLR_KG_DATA_DIR": str(data), "ICLR_KG_PROGRESS": "0"}
    dump = work / f"dump-{papers}.nq"  # every quad stored, the default graph's merge included
    runs = []  # (build / limit, build s, limit s, build's peak MiB, its stages), a pair at a time
    for run in range(pairs):
        shutil.rmtree(store, ignore_errors=True)
        build_s, build_mib, said = measured([CLI, "build", "--store", str(store)], env)
        if run == 0:
            subprocess.run([sys.executable, "-c", DUMP, str(store), str(dump)], check=True)
        limit_dir = work / f"limit-{papers}"
        shutil.rmtree(limit_dir, ignore_errors=True)
        _, limit_mib, limit_line = measured([sys.executable, "-c", LIMIT, str(dump), str(limit_dir)])
        limit_s = float(limit_line.splitlines()[-1])
        stages = built_line(said)
        runs.append((build_s / limit_s, build_s, limit_s, build_mib, stages))
    _, build_s, limit_s, _, stages = sorted(runs)[(len(runs) - 1) // 2]  # the pair with the median ratio
    build_mib = max(r[3] for r in runs)
    organizations = data / "organizations.yaml"  # one curated file edited: an organization joins another
    text = organizations.read_text(encoding="utf-8")
    edited = text.replace(
        "- key: org-1\n  name: Organization 1\n", "- key: org-1\n  name: Organization 1\n  parent: org-3\n", 1
    )
    assert edited != text, "bench/synth.py no longer writes org-1 as expected"
    organizations.write_text(edited, encoding="utf-8")
    rebuild_s, rebuild_mib, said = measured([CLI, "build", "--store", str(store)], env)
    rebuilt = built_line(said)
    verdict = same_as_full(store, env, work) if verify else ""
    return {
        "papers": papers,
        "quads": sum(1 for _ in dump.open("rb")),
        "build_s": build_s,
        "build_mib": build_mib,
        "limit_s": limit_s,
        "limit_mib": limit_mib,
        "rebuild_s": rebuild_s,
        "rebuild_mib": rebuild_mib,
        "stages": stages,
        "rebuilt": rebuilt,
        "verdict": verdict,
        "ratios": [round(r[0], 3) for r in runs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--pairs", type=int, default=1, help="measure build and limit this many times; report the median ratio"
    )
    parser.add_argument(
        "--verify", action="store_true", help="also build the edited data from scratch and compare (12 GiB at 50,000)"
    )
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="iclr-kg-bench-build-") as tmp:
        for papers in args.sizes:
            rows.append(one_size(papers, Path(tmp), args.verify, args.pairs))
    targets = {10000: 2.0, 50000: 2.5}
    print(
        "\n| papers | quads stored | build s | peak MiB (PSS) | bulk_load s (limit) | build / limit | target | rebuild after one edit s | rebuild / build (target 0.2) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        target = targets.get(int(r["papers"]))
        print(
            f"| {r['papers']:,} | {r['quads']:,} | {r['build_s']:.1f} | {r['build_mib']:,.0f} | {r['limit_s']:.1f} "
            f"| {r['build_s'] / r['limit_s']:.2f}x | {f'{target}x' if target else '-'} | {r['rebuild_s']:.1f} "
            f"| {r['rebuild_s'] / r['build_s']:.2f} |"
        )
    for r in rows:
        print(f"\n{r['papers']:,} papers: {r['stages']}")
        if len(r["ratios"]) > 1:
            print(
                f"  build / limit in {len(r['ratios'])} pairs: {', '.join(f'{x:.2f}x' for x in r['ratios'])} (median shown)"
            )
        print(f"  after the edit ({r['rebuild_mib']:,.0f} MiB): {r['rebuilt']}")
        if r["verdict"]:
            print(f"  the rebuilt store is {r['verdict']}")
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
