"""Synthetic ICLR-like data in our own data/ format, seeded and reproducible, at any scale.

    python bench/synth.py --papers 10000 --out /tmp/synth-data   # then: iclr-kg build, with
    ICLR_KG_DATA_DIR=/tmp/synth-data
    python bench/synth.py --openreview 10000 --out /tmp/venue.json   # an OpenReview-shaped venue
                                                                     # for testbed/openreview_standin.py

Papers have 2-8 ordered authors drawn from a skewed (Zipf-like) population of people, so some
authors write many papers; organizations form hierarchies (labs under companies, departments
under universities) and are credited with the same skew; papers spread over editions, about 1%
win an award, most carry 3-5 review ratings, and each has 1-4 keywords (`TOPICS`) and a
one-sentence abstract naming them.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import yaml

EDITIONS = [2019, 2020, 2021, 2022, 2023, 2024]
# The papers stand for an OpenReview import of every edition: stated as one (a DataImport, with
# the 1-10 scale an import states), so what reads public reviews reads theirs
SYNTHETIC_RETRIEVED = "2026-01-01T00:00:00Z"
RATING_SCALE = [f"{level}: level {level}" for level in range(1, 11)]


def _zipf_index(rng: random.Random, n: int, s: float = 1.1) -> int:
    """An index in [0, n) with a heavy head: a few entities are picked very often."""
    while True:
        x = int(rng.paretovariate(s)) - 1
        if x < n:
            return x


# What synthetic papers are about: their keywords, drawn with a heavy head (as real ones are),
# some spelled out and some abbreviated, so that topic search and its synonyms are measured.
TOPICS = [
    "representation learning", "reinforcement learning", "graph neural networks", "large language models",
    "diffusion models", "optimization", "generalization", "robustness", "transformers", "self-supervised learning",
    "contrastive learning", "federated learning", "meta-learning", "GNN", "RL", "LLM", "pruning",
    "knowledge distillation", "out-of-distribution detection", "interpretability", "fairness", "privacy",
    "continual learning", "few-shot learning", "neural architecture search", "variational autoencoders",
    "vision transformers", "causal inference", "Bayesian deep learning", "GANs",
]  # fmt: skip


def topic_of(rng: random.Random) -> tuple[list[str], str]:
    """A synthetic paper's keywords (1-4) and a one-sentence abstract naming them."""
    keywords = sorted({TOPICS[_zipf_index(rng, len(TOPICS))] for _ in range(rng.randint(1, 4))})
    rest = f", with {' and '.join(keywords[1:])}" if len(keywords) > 1 else ""
    return keywords, f"We study {keywords[0]}{rest}, on synthetic benchmarks."


def generate(papers: int, seed: int = 7, identifiers: bool = True) -> dict[str, object]:
    """The data files as Python objects: {relative path: content}. `identifiers`: a source that
    states people's, organizations' and papers' identifiers elsewhere (ORCID, dblp, ROR, arXiv,
    DOI), as `iclr-kg import wikidata` writes them, in about real proportions (`_identifiers`)."""
    rng = random.Random(seed)
    n_people = max(20, papers * 3)
    n_top = max(5, papers // 40)
    organizations = []
    for i in range(n_top):
        kind = "university" if i % 3 else "company"
        organizations.append(
            {"key": f"org-{i}", "name": f"Organization {i}", "kind": kind, "labels": {"zh-Hans": f"机构{i}"}}
        )
        for j in range(rng.randint(0, 3)):
            organizations.append(
                {
                    "key": f"org-{i}-{j}",
                    "name": f"Organization {i} unit {j}",
                    "kind": "department" if kind == "university" else "research-lab",
                    "parent": f"org-{i}",
                }
            )
            if rng.random() < 0.3:
                organizations.append(
                    {
                        "key": f"org-{i}-{j}-a",
                        "name": f"Organization {i} unit {j} group A",
                        "kind": "research-lab",
                        "parent": f"org-{i}-{j}",
                    }
                )
    people = [{"key": f"person-{i}", "name": f"Person {i}"} for i in range(n_people)]
    events = {
        "conferences": [
            {"key": "iclr", "name": "International Conference on Learning Representations", "aliases": ["ICLR"]}
        ],
        "editions": [{"key": f"iclr{y}", "conference": "iclr", "year": y, "name": f"ICLR {y}"} for y in EDITIONS],
        "awards": [
            {
                "key": f"iclr{y}-outstanding-paper",
                "name": f"ICLR {y} Outstanding Paper Award",
                "kind": "outstanding-paper",
                "edition": f"iclr{y}",
            }
            for y in EDITIONS
        ]
        + [
            {
                "key": f"iclr{y}-honorable-mention",
                "name": f"ICLR {y} Honorable Mention",
                "kind": "honorable-mention",
                "edition": f"iclr{y}",
            }
            for y in EDITIONS
        ],
    }
    by_edition: dict[int, list[dict[str, object]]] = {y: [] for y in EDITIONS}
    topics = random.Random(seed + 101)  # apart from `rng`: the rest of the data as before topics
    for i in range(papers):
        year = EDITIONS[i % len(EDITIONS)]
        authors = []
        while len(authors) < rng.randint(2, 8):
            name = f"Person {_zipf_index(rng, n_people)}"
            if name not in authors:
                authors.append(name)
        orgs = sorted({organizations[_zipf_index(rng, len(organizations))]["name"] for _ in range(rng.randint(1, 3))})
        paper: dict[str, object] = {
            "openreview": f"S{i:09d}x",
            "edition": f"ICLR {year}",
            "title": f"Synthetic paper {i}",
            "authors": authors,
            "organizations": orgs,
            "decision": "accepted" if rng.random() < 0.3 else "rejected",
        }
        paper["keywords"], paper["abstract"] = topic_of(topics)
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
            "source": {  # an import, as the papers stand for one: their reviews are public reviews
                "key": f"synthetic-{year}",
                "kind": "import",
                "title": f"Synthetic ICLR {year}",
                "language": "en",
                "service": "urn:iclr-kg:synthetic",  # testbed/synth.py, in place of OpenReview
                "retrieved": SYNTHETIC_RETRIEVED,
                "about": [f"ICLR {year}"],
                "summary": "Synthetic data for benchmarks.",
            },
            "editions": [{"edition": f"ICLR {year}", "submissions": len(items), "rating_scale": RATING_SCALE}],
            "papers": items,
        }
    if identifiers:
        files["sources/synthetic-identifiers.yaml"] = {
            "source": {
                "key": "synthetic-identifiers",
                "title": "Synthetic identifiers elsewhere",
                "language": "en",
                "seed": "synthetic",
                "summary": "Synthetic data for benchmarks.",
            },
            "identifiers": _identifiers(organizations, n_people, papers),
        }
    return files


def _identifiers(organizations: list[dict[str, object]], people: int, papers: int) -> list[dict[str, str]]:
    """Identifiers for about 60% of people (dblp) and 40% (ORCID), half the top organizations
    (ROR), and papers: 60% arXiv, 20% a DOI, 50% a dblp key. Deterministic, and well-formed by
    each scheme's own check."""
    rng = random.Random(5)
    out = []
    for i in range(people):
        if rng.random() < 0.6:
            out.append({"entity": f"person/person-{i}", "scheme": "dblp", "value": f"{i % 300}/{i}"})
        if rng.random() < 0.4:
            out.append({"entity": f"person/person-{i}", "scheme": "orcid", "value": _orcid(i)})
    for number, org in enumerate(organizations):
        if "parent" not in org and rng.random() < 0.5:
            out.append({"entity": f"organization/{org['key']}", "scheme": "ror", "value": _ror(number)})
    for i in range(papers):
        paper = f"paper/S{i:09d}x"
        arxiv = f"{EDITIONS[i % len(EDITIONS)] % 100:02d}{i % 12 + 1:02d}.{i:05d}"
        if rng.random() < 0.6:
            out.append({"entity": paper, "scheme": "arxiv", "value": arxiv})
            if rng.random() < 0.33:
                out.append({"entity": paper, "scheme": "doi", "value": f"10.48550/ARXIV.{arxiv}"})
        if rng.random() < 0.5:
            out.append({"entity": paper, "scheme": "dblp-paper", "value": f"conf/iclr/Synthetic{i}"})
    return out


def _ror(number: int) -> str:
    """A well-formed ROR id (its check digits computed as ROR does)."""
    from iclr_kg.identifiers import ROR_ALPHABET, ror_check_digits

    body = "".join(ROR_ALPHABET[(number * 7919 + 12345) // 32**k % 32] for k in range(5, -1, -1))
    return f"0{body}{ror_check_digits(body)}"


def write(papers: int, out: Path, seed: int = 7, identifiers: bool = True) -> Path:
    """Write the synthetic data/ tree under `out` and return it (see `write_files`)."""
    return write_files(generate(papers, seed, identifiers), out)


def write_files(files: dict[str, object], out: Path) -> Path:
    """Write `generate`'s files under `out` and return it. The papers and people stand for what
    `iclr-kg import` brings (every ICLR edition), so they are written as an importer writes them
    (`importfolder.generated_yaml`: one JSON line per item); the organizations and events stand
    for curated files (bench/build.py edits one) and are written as a curator would."""
    from iclr_kg.build.sources import GENERATED  # the header by which the loader reads items as JSON
    from iclr_kg.external.importfolder import generated_yaml

    header = f"{GENERATED}`'s writer for bench/synth.py: synthetic data, in the format of an import.\n"
    for relative, content in files.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if relative == "people.yaml" or relative.startswith("sources/"):
            path.write_text(generated_yaml(content, header), encoding="utf-8")  # type: ignore[arg-type]
            continue
        with path.open("w", encoding="utf-8") as handle:
            yaml.dump(
                content,
                handle,
                Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                allow_unicode=True,
                sort_keys=False,
                width=120,
            )
    return out


def _orcid(number: int) -> str:
    """A well-formed ORCID iD for a synthetic person (its check character computed as ORCID does)."""
    digits = f"{number:015d}"
    total = 0
    for ch in digits:
        total = (total + int(ch)) * 2
    check = (12 - total % 11) % 11
    body = digits + ("X" if check == 10 else str(check))
    return "-".join(body[i : i + 4] for i in range(0, 16, 4))


def _links(person: int, rng: random.Random) -> dict[str, str]:
    """The personal links of a synthetic profile, in the proportions real ones have them roughly
    (most a dblp link, many an ORCID, fewer Semantic Scholar or Google Scholar), as URLs."""
    links = {}
    if rng.random() < 0.6:
        links["dblp"] = f"https://dblp.org/pid/{person % 300}/{person}"
    if rng.random() < 0.4:
        links["orcid"] = f"https://orcid.org/{_orcid(person)}"
    if rng.random() < 0.2:
        links["semanticScholar"] = f"https://www.semanticscholar.org/author/Author-{person}/{1000000 + person}"
    if rng.random() < 0.2:
        links["gscholar"] = f"https://scholar.google.com/citations?user={person:012d}"
    return links


def openreview_venue(
    submissions: int,
    reviews: int = 4,
    seed: int = 11,
    venue: str = "ICLR.cc/2021/Conference",
    api: str = "v1",
    links: bool = True,
    first: int = 0,
) -> dict[str, object]:
    """A synthetic OpenReview venue in the API's JSON shapes: {notes: {invitation: [...]}, profiles: {...}}.

    Decisions in ICLR 2021's proportions (about 2% oral, 5% spotlight, 22% poster, 61% rejected,
    9% withdrawn, 1% desk-rejected); `reviews` reviews per paper; authors from a skewed population
    with profile ids and affiliations (some authors without a profile). Submissions are numbered
    from `first` (venues of several years in one stand-in have ids of their own).
    """
    from testbed.openreview_standin import Paper, profile, venue_notes

    rng = random.Random(seed)
    n_people = max(50, submissions * 3)
    institutions = [f"Synthetic Institute {i}" for i in range(max(10, submissions // 50))]
    profiles: dict[str, dict[str, object]] = {}
    outcomes = (
        ["oral"] * 2 + ["spotlight"] * 5 + ["poster"] * 22 + ["reject"] * 61 + ["withdrawn"] * 9 + ["desk-rejected"]
    )
    papers = []
    for i in range(first, first + submissions):
        authors: list[tuple[str, str | None]] = []
        for _ in range(rng.randint(2, 6)):
            j = _zipf_index(rng, n_people) if rng.random() < 0.3 else rng.randrange(n_people)  # prolific few, long tail
            name = f"Author Number{j}"
            pid = None if j % 17 == 0 else f"~Author_Number{j}1"
            if all(name != a for a, _ in authors):
                authors.append((name, pid))
            if pid and pid not in profiles:
                k = _zipf_index(rng, len(institutions))
                profiles[pid] = profile(
                    pid,
                    name,
                    institutions[k],
                    f"inst{k}.example.edu",
                    links=_links(j, random.Random(j)) if links else None,
                )
        outcome = rng.choice(outcomes)
        scored = [(f"R{i:07d}x{k}", rng.choice([1, 3, 5, 6, 8, 10]), rng.randint(1, 5)) for k in range(reviews)]
        keywords, abstract = topic_of(random.Random(i))
        papers.append(
            Paper(
                f"P{i:09d}",
                f"Synthetic submission {i}",
                authors,
                outcome,
                scored if outcome != "desk-rejected" else [],
                abstract=abstract,
                keywords=keywords,
            )
        )
    return {"notes": venue_notes(api, venue, papers), "profiles": profiles}


# About how many submissions each ICLR edition had on OpenReview (2015 and 2016 were not run
# there), as publicly reported and not checked against a source here: only their proportions are
# used, scaled by `openreview_every_year` to the total it is asked for.
SUBMISSIONS_BY_YEAR = {
    2013: 67, 2014: 69, 2017: 490, 2018: 935, 2019: 1591, 2020: 2594,
    2021: 2997, 2022: 3422, 2023: 4966, 2024: 7304, 2025: 11672,
}  # fmt: skip


def openreview_every_year(
    submissions: int, reviews: int, years: list[int] | None = None, links: bool = True, first: int = 0
) -> dict[str, object]:
    """Every ICLR edition in one stand-in, each in its year's format (API v1 up to 2023, v2 from
    2024), `submissions` in all in the editions' proportions and about `reviews` reviews in all;
    one population of authors across the years (a person's profile id is the same every year).
    Submissions are numbered from `first`."""
    from testbed.openreview_standin import venue_id

    chosen = years or list(SUBMISSIONS_BY_YEAR)
    weights = {year: SUBMISSIONS_BY_YEAR.get(year, max(SUBMISSIONS_BY_YEAR.values())) for year in chosen}
    scale = submissions / sum(weights.values())
    per_paper = reviews / submissions
    notes: dict[str, list[object]] = {}
    profiles: dict[str, object] = {}
    for year in chosen:
        count = max(3, round(weights[year] * scale))
        # whole reviews per paper, alternating so that the total comes out near `reviews`
        each = int(per_paper) + (1 if (year % 3) < round((per_paper % 1) * 3) else 0)
        venue = openreview_venue(
            count, each, seed=year, venue=venue_id(year), api="v2" if year >= 2024 else "v1", links=links, first=first
        )
        for invitation, listed in venue["notes"].items():  # type: ignore[union-attr]
            notes.setdefault(invitation, []).extend(listed)
        profiles.update(venue["profiles"])  # type: ignore[arg-type]
        first += count
    return {"notes": notes, "profiles": profiles}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--openreview", type=int, metavar="SUBMISSIONS", help="write an OpenReview-shaped venue (JSON) instead"
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.openreview:
        args.out.write_text(json.dumps(openreview_venue(args.openreview, seed=args.seed)), encoding="utf-8")
        print(args.out)
    else:
        print(write(args.papers, args.out, args.seed))


if __name__ == "__main__":
    main()
