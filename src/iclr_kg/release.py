"""A versioned release of the graph, as a reference dataset publishes one (`iclr-kg dump`).

`DIR/iclr-kg-<date>/` holds every named graph as gzipped N-Quads (what loads back into any
store), each graph as Turtle (what a person reads), a VoID and DCAT description of the release
(sizes, formats, checksums, licence), `SHA256SUMS` (`sha256sum -c` checks it) and a
`CITATION.cff` (how to cite it). Files are written under a temporary name and the folder is
renamed whole at the end: a release is complete or absent.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

import yaml
from pyoxigraph import Literal, NamedNode, RdfFormat, Triple, serialize

from iclr_kg import vocab
from iclr_kg.errors import SettingsError
from iclr_kg.graph import ReadableGraph
from iclr_kg.progress import Progress

DCAT = "http://www.w3.org/ns/dcat#"
SPDX = "http://spdx.org/rdf/terms#"
VOID = vocab.PREFIXES["void"]
DCTERMS = vocab.DCTERMS


def graph_files(graphs: Iterable[str]) -> dict[str, str]:
    """Each graph's Turtle file name in a release, one per graph: graph/source/iclr2021-outstanding-papers
    -> source-iclr2021-outstanding-papers.ttl. A name that two graphs would share (`urn:a/b` and
    `urn:a-b`), that is long, or that holds characters a file name should not is made from a
    shortened readable part and a digest of the whole IRI."""
    readable = {
        g: re.sub(r"[^A-Za-z0-9._-]+", "-", g.removeprefix(vocab.GRAPH_BASE).replace("/", "-")).strip("-.")
        for g in graphs
    }
    shared = Counter(readable.values())
    out = {}
    for graph, name in readable.items():
        plain = name == graph.removeprefix(vocab.GRAPH_BASE).replace("/", "-")
        if shared[name] > 1 or not plain or not name or len(name) > MAX_NAME:
            name = f"{name[: MAX_NAME // 2]}-{hashlib.sha256(graph.encode()).hexdigest()[:16]}".lstrip("-")
        out[graph] = name + ".ttl"
    return out


MAX_NAME = 120  # a file name's readable part (file systems allow 255 bytes)


def write_release(store: ReadableGraph, parent: Path, version: str, progress: Progress | None = None) -> Path:
    """The release `iclr-kg-<version>` of `store`'s named graphs, written into `parent`."""
    progress = progress or Progress.silent()
    final = parent / f"iclr-kg-{version}"
    if final.exists():
        raise FileExistsError(f"{final} exists: a release is never overwritten")
    work = parent / f".iclr-kg-{version}.partial"
    shutil.rmtree(work, ignore_errors=True)
    try:
        (work / "graphs").mkdir(parents=True)
    except OSError as exc:
        raise SettingsError(f"cannot write a release into {parent}: {exc.strerror or exc}") from None
    graphs = sorted(g.value for g in store.named_graphs() if isinstance(g, NamedNode))
    names = graph_files(graphs)
    try:
        with progress.stage("dump", unit="quads") as shown, gzip.open(work / "iclr-kg.nq.gz", "wb") as out:
            quads = (q for g in graphs for q in store.quads_for_pattern(None, None, None, NamedNode(g)))
            serialize(shown.track(quads), cast(IO[bytes], out), RdfFormat.N_QUADS)
        sizes: dict[str, int] = {}
        for graph in graphs:
            with (work / "graphs" / names[graph]).open("wb") as turtle:
                serialize(_counted(store, graph, sizes), turtle, RdfFormat.TURTLE, prefixes=vocab.EXPORT_PREFIXES)
        files = {"iclr-kg.nq.gz": "", **{f"graphs/{names[g]}": g for g in graphs}}  # file -> its graph
        sums = {name: _sha256(work / name) for name in files}
        (work / "CITATION.cff").write_text(_citation(version), encoding="utf-8")
        with (work / "void.ttl").open("wb") as void:
            serialize(_description(work, version, files, sums, sizes), void, RdfFormat.TURTLE, prefixes=_PREFIXES)
        sums |= {name: _sha256(work / name) for name in ("CITATION.cff", "void.ttl")}
        (work / "SHA256SUMS").write_text("".join(f"{h}  {n}\n" for n, h in sorted(sums.items())), encoding="ascii")
        work.rename(final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return final


@dataclass(frozen=True)
class ReleasedFile:
    name: str  # relative to the release: iclr-kg.nq.gz, graphs/inferred.ttl, SHA256SUMS...
    size: int
    sha256: str  # "" for SHA256SUMS itself

    @property
    def format(self) -> str:
        """What the file holds, in a word a download list shows."""
        return self._kind()[0]

    @property
    def media_type(self) -> str:
        """How it is served: a gzip file as such (saved, not shown), Turtle as Turtle, the rest as text."""
        return self._kind()[1]

    def _kind(self) -> tuple[str, str]:
        return next((kind for suffix, kind in FORMATS.items() if self.name.endswith(suffix)), ("text", "text/plain"))


FORMATS = {  # a file's ending -> (what a download list calls it, the media type it is served as)
    ".nq.gz": ("N-Quads, gzip", "application/gzip"),
    ".ttl": ("Turtle", "text/turtle"),
    ".cff": ("Citation File Format", "text/plain"),
    "SHA256SUMS": ("SHA-256 sums", "text/plain"),
}
VERSION = r"[0-9A-Za-z][0-9A-Za-z.-]{0,39}"  # what `iclr-kg dump --version` accepts


@dataclass(frozen=True)
class Release:
    version: str
    folder: Path
    files: list[ReleasedFile]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def releases(parent: Path) -> list[Release]:
    """The complete releases in `parent`, newest version first, each with its files as its
    SHA256SUMS lists them (a folder without one is not a release: a dump writes it last)."""
    found = []
    for folder in parent.glob("iclr-kg-*") if parent.is_dir() else ():
        version = folder.name.removeprefix("iclr-kg-")
        sums = folder / "SHA256SUMS"
        if not (re.fullmatch(VERSION, version) and sums.is_file()):
            continue
        files = []
        for line in sums.read_text(encoding="ascii", errors="replace").splitlines():
            digest, _, name = line.partition("  ")
            if (folder / name).is_file():
                files.append(ReleasedFile(name, (folder / name).stat().st_size, digest))
        files.append(ReleasedFile("SHA256SUMS", sums.stat().st_size, ""))
        found.append(Release(version, folder, files))
    return sorted(found, key=lambda r: r.version, reverse=True)


def released_file(parent: Path, version: str, name: str) -> tuple[Path, ReleasedFile] | None:
    """The file `name` of release `version`, if that release lists it: the only way a request's
    words become a path (no other name, no '..', reaches the disk)."""
    for release in releases(parent):
        if release.version == version:
            return next(((release.folder / f.name, f) for f in release.files if f.name == name), None)
    return None


_PREFIXES = {"dcat": DCAT, "dcterms": DCTERMS, "void": VOID, "spdx": SPDX, "xsd": vocab.XSD}


def _counted(store: ReadableGraph, graph: str, sizes: dict[str, int]) -> Iterable[Triple]:
    """The triples of `graph`, its size kept in `sizes` as they are written (for VoID)."""
    sizes[graph] = 0
    for quad in store.quads_for_pattern(None, None, None, NamedNode(graph)):
        sizes[graph] += 1
        yield quad.triple


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _description(
    folder: Path, version: str, files: dict[str, str], sums: dict[str, str], sizes: dict[str, int]
) -> Iterable[Triple]:
    """VoID (the dataset, its triples per graph) and DCAT (each file: format, size, checksum)."""
    dataset = NamedNode(f"{vocab.BASE}release/{version}")
    a = NamedNode(vocab.RDF + "type")
    yield Triple(dataset, a, NamedNode(VOID + "Dataset"))
    yield Triple(dataset, a, NamedNode(DCAT + "Dataset"))
    yield Triple(dataset, NamedNode(DCTERMS + "title"), Literal(f"iclr-kg {version}", language="en"))
    yield Triple(dataset, NamedNode(DCTERMS + "license"), NamedNode(vocab.LICENSE))
    yield Triple(dataset, NamedNode(DCTERMS + "issued"), Literal(version, datatype=NamedNode(vocab.XSD + "date")))
    yield Triple(dataset, NamedNode(DCAT + "version"), Literal(version))
    integer = NamedNode(vocab.XSD + "integer")
    yield Triple(dataset, NamedNode(VOID + "triples"), Literal(str(sum(sizes.values())), datatype=integer))
    for graph, triples in sizes.items():
        subset = NamedNode(graph)
        yield Triple(dataset, NamedNode(VOID + "subset"), subset)
        yield Triple(subset, NamedNode(VOID + "triples"), Literal(str(triples), datatype=integer))
    for name, graph in files.items():
        distribution = NamedNode(f"{dataset.value}/{name}")
        media = "application/n-quads" if name.endswith(".nq.gz") else "text/turtle"
        yield Triple(dataset, NamedNode(DCAT + "distribution"), distribution)
        yield Triple(distribution, a, NamedNode(DCAT + "Distribution"))
        yield Triple(distribution, NamedNode(DCAT + "downloadURL"), NamedNode(f"{dataset.value}/{name}"))
        yield Triple(distribution, NamedNode(DCAT + "mediaType"), Literal(media))
        if name.endswith(".gz"):
            yield Triple(distribution, NamedNode(DCAT + "compressFormat"), Literal("application/gzip"))
        size = (folder / name).stat().st_size
        yield Triple(distribution, NamedNode(DCAT + "byteSize"), Literal(str(size), datatype=integer))
        checksum = NamedNode(f"{distribution.value}#sha256")
        yield Triple(distribution, NamedNode(SPDX + "checksum"), checksum)
        yield Triple(checksum, NamedNode(SPDX + "algorithm"), NamedNode(SPDX + "checksumAlgorithm_sha256"))
        yield Triple(checksum, NamedNode(SPDX + "checksumValue"), Literal(sums[name]))
        if graph:
            yield Triple(distribution, NamedNode(VOID + "inDataset"), NamedNode(graph))


def _citation(version: str) -> str:
    """CITATION.cff (Citation File Format 1.2.0) for the release."""
    return yaml.safe_dump(
        {
            "cff-version": "1.2.0",
            "message": "If you use this dataset, please cite it as below.",
            "type": "dataset",
            "title": "iclr-kg: a knowledge graph of ICLR papers, people, organizations and awards",
            "version": version,
            "date-released": version,
            "license": "CC-BY-4.0",
            "url": vocab.BASE,
            "authors": [{"name": "The iclr-kg developers"}],
        },
        sort_keys=False,
        allow_unicode=True,
    )
