"""Synthetic ICLR-like data in our own data/ format, seeded and reproducible, at any scale.

    python bench/synth.py --papers 10000 --out /tmp/synth-data   # then: iclr-kg build, with
    ICLR_KG_DATA_DIR=/tmp/synth-data

Papers have 2-8 ordered authors drawn from a skewed (Zipf-like) population of people, so some
authors write many papers; organizations form hierarchies (labs under companies, departments
under universities) and are credited with the same skew; papers spread over editions, about 1%
win an award, and most carry 3-5 review ratings.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import yaml

EDITIONS = [2019, 2020, 2021, 2022, 2023, 2024]


def _zipf_index(rng: random.Random, n: int, s: float = 1.1) -> int:
    """An index in [0, n) with a heavy head: a few entities are picked very often."""
    while True:
        x = int(rng.paretovariate(s)) - 1
        if x < n:
            return x


def generate(papers: int, seed: int = 7) -> dict[str, object]:
    """The data files as Python objects: {relative path: content}."""
    rng = random.Random(seed)
    n_people = max(20, papers * 3)
    n_top = max(5, papers // 40)
    organizations = []
    for i in range(n_top):
        kind = "university" if i % 3 else "company"
        organizations.append({"key": f"org-{i}", "name": f"Organization {i}", "kind": kind,
                              "labels": {"zh-Hans": f"机构{i}"}})
        for j in range(rng.randint(0, 3)):
            organizations.append({"key": f"org-{i}-{j}", "name": f"Organization {i} unit {j}",
                                  "kind": "department" if kind == "university" else "research-lab",
                                  "parent": f"org-{i}"})
            if rng.random() < 0.3:
                organizations.append({"key": f"org-{i}-{j}-a", "name": f"Organization {i} unit {j} group A",
                                      "kind": "research-lab", "parent": f"org-{i}-{j}"})
    people = [{"key": f"person-{i}", "name": f"Person {i}"} for i in range(n_people)]
    events = {
        "conferences": [{"key": "iclr", "name": "International Conference on Learning Representations", "aliases": ["ICLR"]}],
        "editions": [{"key": f"iclr{y}", "conference": "iclr", "year": y, "name": f"ICLR {y}"} for y in EDITIONS],
        "awards": [{"key": f"iclr{y}-outstanding-paper", "name": f"ICLR {y} Outstanding Paper Award",
                    "kind": "outstanding-paper", "edition": f"iclr{y}"} for y in EDITIONS]
        + [{"key": f"iclr{y}-honorable-mention", "name": f"ICLR {y} Honorable Mention",
            "kind": "honorable-mention", "edition": f"iclr{y}"} for y in EDITIONS],
    }
    by_edition: dict[int, list[dict[str, object]]] = {y: [] for y in EDITIONS}
    for i in range(papers):
        year = EDITIONS[i % len(EDITIONS)]
        authors = []
        while len(authors) < rng.randint(2, 8):
            name = f"Person {_zipf_index(rng, n_people)}"
            if name not in authors:
                authors.append(name)
        orgs = sorted({organizations[_zipf_index(rng, len(organizations))]["name"] for _ in range(rng.randint(1, 3))})
        paper: dict[str, object] = {
            "openreview": f"S{i:09d}x", "edition": f"ICLR {year}", "title": f"Synthetic paper {i}",
            "authors": authors, "organizations": orgs,
            "decision": "accepted" if rng.random() < 0.3 else "rejected",
        }
        if paper["decision"] == "accepted":
            paper["presentation"] = rng.choice(["oral", "spotlight", "poster", "poster", "poster"])
        if rng.random() < 0.8:
            paper["ratings"] = [rng.randint(1, 10) for _ in range(rng.randint(3, 5))]
        if rng.random() < 0.01:
            kind = "outstanding-paper" if rng.random() < 0.4 else "honorable-mention"
            paper["awards"] = [{"award": f"iclr{year}-{kind}", "reason": "A synthetic reason."}]
            paper["decision"], paper["presentation"] = "accepted", "oral"
        by_edition[year].append(paper)
    files: dict[str, object] = {
        "organizations.yaml": {"organizations": organizations},
        "people.yaml": {"people": people},
        "events.yaml": events,
        "wikidata.yaml": {"links": []},
    }
    for year, items in by_edition.items():
        files[f"sources/synthetic-{year}.yaml"] = {
            "source": {"key": f"synthetic-{year}", "title": f"Synthetic ICLR {year}", "language": "en",
                       "seed": "synthetic", "about": [f"ICLR {year}"], "summary": "Synthetic data for benchmarks."},
            "editions": [{"edition": f"ICLR {year}", "submissions": len(items)}],
            "papers": items,
        }
    return files


def write(papers: int, out: Path, seed: int = 7) -> Path:
    """Write the synthetic data/ tree under `out` and return it."""
    for relative, content in generate(papers, seed).items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            yaml.dump(content, handle, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True, sort_keys=False, width=120)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(write(args.papers, args.out, args.seed))


if __name__ == "__main__":
    main()
