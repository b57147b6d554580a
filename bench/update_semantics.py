"""The differential test of updates, long: N random requests (seeded) sent to `/update` of a real
`iclr-kg serve` on the tests' tiny store (README's default relative store, in a folder of its
own), the dataset read after each and compared with the reference (testbed/update_model.py);
then the journal replayed by `iclr-kg build` and compared again. Prints progress, the first
difference found (the requests that led to it), and the counts.

    python bench/update_semantics.py --requests 10000 [--seed 1] [--reasoner fast]

`--reasoner owlrl` (the default) checks the closure against owlrl after every request, which
costs about 2 s per changed closure on the tiny store; `fast` uses fastrl as the reference's
reasoner (tests/test_reason.py holds it equal to owlrl) and owlrl every `--owlrl-every` requests.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyoxigraph import DefaultGraph

from iclr_kg.config import resource_dir
from testbed.helpers import run_cli, serving
from testbed.tiny import TINY_REGISTRIES, TINY_SOURCE
from testbed.update_model import (
    INFERRED,
    SERVER_ENV,
    RandomChooser,
    Reference,
    Refused,
    dataset,
    difference,
    named_graphs,
    post,
    request,
    request_text,
    reset,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reasoner", choices=["owlrl", "fast"], default="owlrl")
    parser.add_argument(
        "--owlrl-every", type=int, default=200, help="with --reasoner fast: check with owlrl this often"
    )
    parser.add_argument("--existence", action="store_true", help="graph operations without SILENT too")
    parser.add_argument("--restart-every", type=int, default=25, help="requests between two fresh starting points")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="update-semantics-"))
    (folder / "data" / "sources").mkdir(parents=True)  # the tests' tiny data: every request is checked whole
    for name, text in TINY_REGISTRIES.items():
        (folder / "data" / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (folder / "data" / "sources" / "tiny.yaml").write_text(textwrap.dedent(TINY_SOURCE).lstrip(), encoding="utf-8")
    shutil.copytree(resource_dir("ontology"), folder / "ontology")
    counts = {"acknowledged": 0, "refused": 0, "compared": 0}
    began = time.perf_counter()
    with serving(None, SERVER_ENV, cwd=folder) as (base, _):
        first = dataset(base)
        reference: Reference | None = None
        history: list[str] = []
        for number in range(1, args.requests + 1):
            if reference is None or number % args.restart_every == 1:
                reset(base, first)
                now = dataset(base)
                reasoner = "owlrl" if args.reasoner == "owlrl" or number % args.owlrl_every == 1 else "fast"
                reference = Reference([q for q in now if q.graph_name != DefaultGraph()], reasoner, named_graphs(base))
                found = difference(reference.quads(), now)
                if found:
                    print(f"the starting point before request {number} differs:\n{found}")
                    return 1
                history = []
                start, start_graphs, requests = (
                    [q for q in now if q.graph_name != DefaultGraph()],
                    named_graphs(base),
                    [],
                )

            operations = request(RandomChooser(rng), reference.held, args.existence)
            text = request_text(operations)
            history.append(text)
            requests.append(operations)
            status, body = post(base, text)
            why = ""
            try:
                reference.apply(operations)
                expected = 204
            except Refused as refused:
                expected, why = 400, f" ({refused})"
            if status != expected:
                print(f"request {number}: the server answered {status} {body[:300]!r}, the reference {expected}{why}")
                print("\n---\n".join(history))
                return 1
            counts["acknowledged" if status == 204 else "refused"] += 1
            found = difference(reference.quads(), dataset(base))
            counts["compared"] += 1
            if found:
                graphs = sorted(str(g) for g in named_graphs(base))
                print(
                    f"request {number}: the dataset differs from the reference's\n{found}\nthe server's graphs: {graphs}"
                )
                print("after:")
                print("\n---\n".join(history))
                print(f"in-process, from the same start: {in_process(folder, start, start_graphs, requests)}")
                return 1
            if number % 50 == 0:
                rate = number / (time.perf_counter() - began)
                print(f"{number:,} requests, {counts}, {rate:.1f} requests/s", flush=True)
        before = dataset(base)
        built = run_cli("build", env={**os.environ, **SERVER_ENV}, cwd=folder)
        if built.returncode != 0:
            print(f"the build that replays the journal failed: {built.stderr}")
            return 1
        found = difference(before, dataset(base))
        print(f"journal replayed by a build: {found or 'the same dataset'}")
    seconds = time.perf_counter() - began
    print(f"{args.requests:,} requests in {seconds:.0f} s: {counts}; differences found: {0 if not found else 1}")
    shutil.rmtree(folder, ignore_errors=True)
    return 0 if not found else 1


def in_process(folder: Path, start: list, graphs: list, requests: list) -> str:
    """The same requests from the same start, on `updates.apply` in this process (the writer's
    code without HTTP and processes): where the difference shows again, it can be debugged here."""
    from iclr_kg.build.pipeline import build
    from iclr_kg.config import Settings
    from iclr_kg.store import open_read_only
    from iclr_kg.updates import apply, publish

    settings = Settings(store=folder / "replay", data_dir=folder / "data", ontology_dir=folder / "ontology")
    build(settings)
    blocks: dict = {}
    for quad in start:
        if quad.graph_name == INFERRED:
            continue
        blocks.setdefault(quad.graph_name, []).append(f"{quad.subject} {quad.predicate} {quad.object} .")
    apply(settings.store, "DROP ALL")
    apply(settings.store, " ; ".join(f"CREATE SILENT GRAPH {g}" for g in graphs) or "CLEAR SILENT ALL")
    apply(
        settings.store, "INSERT DATA { " + " ".join(f"GRAPH {g} {{ {' '.join(t)} }}" for g, t in blocks.items()) + " }"
    )
    publish(settings.store)
    reference = Reference(start, "fast", graphs)
    for number, operations in enumerate(requests, 1):
        try:
            apply(settings.store, request_text(operations), defer=True)
        except Exception as exc:  # noqa: BLE001 - what the server answered 400 to
            refused = str(exc)
        else:
            refused = ""
        try:
            reference.apply(operations)
        except Refused:
            if not refused:
                return f"request {number}: applied here, refused by the reference"
            continue
        if refused:
            return f"request {number}: refused here ({refused}), applied by the reference"
        publish(settings.store)
        found = difference(reference.quads(), list(open_read_only(settings.store)))
        if found:
            return f"request {number} differs again:\n{found}"
    return "no difference"


if __name__ == "__main__":
    raise SystemExit(main())
