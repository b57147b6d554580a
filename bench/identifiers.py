"""What identifiers elsewhere cost a build (issue #38: within 10% of a build without them).

    python bench/identifiers.py                       # 50,000 synthetic papers, three pairs
    python bench/identifiers.py --papers 10000 --pairs 5

The same synthetic data (bench/synth.py) is written twice, with its identifiers source (ORCID and
dblp for people, ROR for organizations, arXiv, DOI and dblp keys for papers, as `iclr-kg import
wikidata` writes them) and without it; each is built from an empty store by `iclr-kg build` in its
own process, alternately, `--pairs` times (the machine is shared: a pair's two builds run next to
each other, and the median pair's ratio is the figure). Printed: identifiers, quads stored,
seconds and peak memory of each build, the ratio with / without, and the same ratio of the CPU
seconds the builds took (user and system, the validator's forked process included): on a machine
shared with other tenants the wall time of one 50,000-paper build varied from 180 to 260 s, the
CPU time far less.
Needs the bench extra: pip install -e '.[bench]'.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

from build import CLI, HERE, built_line, measured  # bench/build.py: the same measuring


def stored_quads(store: Path) -> int:
    from iclr_kg.store import open_read_only

    return len(open_read_only(store))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=50000)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    from testbed import synth

    with tempfile.TemporaryDirectory(prefix="iclr-kg-bench-ids-") as tmp:
        work = Path(tmp)
        data = {
            kind: synth.write(args.papers, work / f"data-{kind}", identifiers=kind == "with")
            for kind in ("with", "without")
        }
        written = (data["with"] / "sources" / "synthetic-identifiers.yaml").read_text(encoding="utf-8")
        stated = sum(line.startswith("- {") for line in written.splitlines())
        os.sync()  # the data just written is not flushed during the first build (seen: a 1.33 first pair)
        pairs, cpu_pairs, quads, peaks = [], [], {}, {"with": 0.0, "without": 0.0}
        for run in range(args.pairs):
            seconds, cpu = {}, {}
            for kind in ("with", "without") if run % 2 == 0 else ("without", "with"):
                store = work / f"store-{kind}"
                shutil.rmtree(store, ignore_errors=True)
                env = {"ICLR_KG_DATA_DIR": str(data[kind]), "ICLR_KG_PROGRESS": "0"}
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                seconds[kind], peak, said = measured([CLI, "build", "--store", str(store)], env)
                print(
                    f"    {kind}: " + built_line(said),
                    flush=True,
                )
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[kind] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                peaks[kind] = max(peaks[kind], peak)
                quads.setdefault(kind, stored_quads(store))
            pairs.append((seconds["with"] / seconds["without"], seconds["with"], seconds["without"]))
            cpu_pairs.append((cpu["with"] / cpu["without"], cpu["with"], cpu["without"]))
        ratio, with_s, without_s = sorted(pairs)[(len(pairs) - 1) // 2]
        cpu_ratio, with_cpu, without_cpu = sorted(cpu_pairs)[(len(cpu_pairs) - 1) // 2]
    print(f"\n{args.papers:,} papers, about {stated:,} identifiers stated")
    print("| build | quads stored | seconds | peak MiB (PSS) |")
    print("|---|---:|---:|---:|")
    print(f"| with identifiers | {quads['with']:,} | {with_s:.1f} | {peaks['with']:,.0f} |")
    print(f"| without | {quads['without']:,} | {without_s:.1f} | {peaks['without']:,.0f} |")
    print(f"quads with / without: {quads['with'] / quads['without']:.3f}")
    print(
        f"with / without: {ratio:.3f} (target at most 1.10); in {len(pairs)} pairs: "
        f"{', '.join(f'{r[0]:.3f}' for r in pairs)} (median shown)"
    )
    print(
        f"CPU seconds with / without: {with_cpu:.1f} / {without_cpu:.1f} = {cpu_ratio:.3f}; in {len(cpu_pairs)} pairs: "
        f"{', '.join(f'{r[0]:.3f}' for r in cpu_pairs)} (median shown)"
    )


if __name__ == "__main__":
    main()
