"""A new year's build (issue #35: "the second run after one new year is incremental").

    python bench/newyear.py                        # 10,000 and 50,000 synthetic papers
    python bench/newyear.py --sizes 10000 --verify

For each size, in one run: synthetic data (bench/synth.py) without its last edition (its source
file, and the identifiers stated for its papers, which an import of that year would bring) is
built from scratch; the edition is added and `iclr-kg build` runs again as a user would (it
chooses: incremental up to `incremental.MAX_CHANGED` of the asserted quads changed); then the
same data with the edition is built from scratch in another store, the peer. Printed: each
build's seconds, CPU seconds and peak memory, the summary line (mode and stages) of each, and the
new year's ratio to the full build (below 1: the incremental build pays). `--verify`: the two stores compared as tests/test_incremental.py does.
Needs the bench extra: pip install -e '.[bench]'.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from build import CLI, HERE, built_line, measured  # bench/build.py: the same measuring


def without_last_year(papers: int, work: Path) -> tuple[Path, Path, Path]:
    """The data without its last edition; (data, the edition's file, where it was taken from)."""
    sys.path.insert(0, str(HERE.parent))
    from testbed import synth

    files = synth.generate(papers)
    year = f"sources/synthetic-{synth.EDITIONS[-1]}.yaml"
    theirs = {f"paper/{p['openreview']}" for p in files[year]["papers"]}  # type: ignore[index]
    stated = files["sources/synthetic-identifiers.yaml"]
    items = stated["identifiers"]  # type: ignore[index]
    stated["identifiers"] = [i for i in items if i["entity"] not in theirs]  # type: ignore[index]
    files[year]["identifiers"] = [i for i in items if i["entity"] in theirs]  # type: ignore[index]
    data = synth.write_files(files, work / f"data-{papers}")
    aside = work / f"{Path(year).name}-{papers}"
    (data / year).rename(aside)
    return data, aside, data / year


def cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def one_size(papers: int, work: Path, verify: bool) -> dict[str, Any]:
    data, aside, year = without_last_year(papers, work)
    env = {"ICLR_KG_DATA_DIR": str(data), "ICLR_KG_PROGRESS": "0"}
    store, fresh = work / f"store-{papers}", work / f"fresh-{papers}"
    measured([CLI, "build", "--store", str(store)], env)
    aside.rename(year)
    before = cpu_of_children()
    new_s, new_mib, new_said = measured([CLI, "build", "--store", str(store)], env)
    new_cpu, before = cpu_of_children() - before, cpu_of_children()
    full_s, full_mib, full_said = measured([CLI, "build", "--store", str(fresh)], env)
    full_cpu = cpu_of_children() - before
    verdict = ""
    if verify:
        from testbed.helpers import snapshot

        same = snapshot(store) == snapshot(fresh)
        verdict = "the same as the full build's" if same else "DIFFERENT from the full build's"
    shutil.rmtree(fresh, ignore_errors=True)
    return {
        "papers": papers,
        "new": (new_s, new_cpu, new_mib, built_line(new_said)),
        "full": (full_s, full_cpu, full_mib, built_line(full_said)),
        "verdict": verdict,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--verify", action="store_true", help="compare the two stores (as the tests do)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="iclr-kg-bench-newyear-") as tmp:
        for papers in args.sizes:
            rows.append(one_size(papers, Path(tmp), args.verify))
    print(
        "\n| papers | the new year's build: s, CPU s, peak MiB | a full build: s, CPU s, peak MiB | ratio (wall; CPU) |"
    )
    print("|---:|---|---|---:|")
    for r in rows:
        (new_s, new_cpu, new_mib, _), (full_s, full_cpu, full_mib, _) = r["new"], r["full"]
        print(
            f"| {r['papers']:,} | {new_s:.1f}, {new_cpu:.1f}, {new_mib:,.0f} | {full_s:.1f}, {full_cpu:.1f}, "
            f"{full_mib:,.0f} | **{new_s / full_s:.2f}**; {new_cpu / full_cpu:.2f} |"
        )
    for r in rows:
        print(f"\n{r['papers']:,} papers, the new year: {r['new'][3]}")
        print(f"  the full build: {r['full'][3]}")
        if r["verdict"]:
            print(f"  the new year's store is {r['verdict']}")


if __name__ == "__main__":
    main()
