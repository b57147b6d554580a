"""`iclr-kg dump`: a versioned release that loads back into an empty store with the same quads,
checks against its own SHA256SUMS, describes itself in VoID and DCAT, and says how to cite it."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import rdflib
import yaml
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, Store, parse

from iclr_kg import vocab
from iclr_kg.release import graph_files, write_release
from testbed.helpers import run_cli

DCAT = rdflib.Namespace("http://www.w3.org/ns/dcat#")
SPDX = rdflib.Namespace("http://spdx.org/rdf/terms#")


def test_a_release_loads_back_whole_and_describes_itself(real_store, real_settings, tmp_path: Path) -> None:
    done = run_cli("dump", "--store", str(real_settings.store), "--to", str(tmp_path), "--version", "9.9.9")
    assert done.returncode == 0, done.stderr
    release = tmp_path / "iclr-kg-9.9.9"
    assert sorted(p.name for p in release.iterdir()) == [
        "CITATION.cff",
        "SHA256SUMS",
        "graphs",
        "iclr-kg.nq.gz",
        "void.ttl",
    ]
    # every named graph, loaded back into an empty store: the same quads
    loaded = Store()
    with gzip.open(release / "iclr-kg.nq.gz", "rb") as dump:
        loaded.bulk_extend(parse(dump, RdfFormat.N_QUADS))
    graphs = [g for g in real_store.named_graphs() if isinstance(g, NamedNode)]
    original = {q for g in graphs for q in real_store.quads_for_pattern(None, None, None, g)}
    assert set(loaded.quads_for_pattern(None, None, None, None)) == original and len(original) > 5000
    # each file as SHA256SUMS says
    listed = dict(reversed(line.split("  ", 1)) for line in (release / "SHA256SUMS").read_text().splitlines())
    for name, digest in listed.items():
        assert hashlib.sha256((release / name).read_bytes()).hexdigest() == digest, name
    assert len(listed) == 3 + len(graphs)  # the dump, one Turtle file per graph, void.ttl, CITATION.cff
    # VoID and DCAT: each distribution's size and checksum, the licence
    void = rdflib.Graph().parse(release / "void.ttl")
    sizes = {str(d).rsplit("9.9.9/", 1)[1]: int(s) for d, s in void.subject_objects(DCAT.byteSize)}
    assert sizes["iclr-kg.nq.gz"] == (release / "iclr-kg.nq.gz").stat().st_size
    sums = {
        str(c).rsplit("9.9.9/", 1)[1].removesuffix("#sha256"): str(v)
        for c, v in void.subject_objects(SPDX.checksumValue)
    }
    assert sums["iclr-kg.nq.gz"] == listed["iclr-kg.nq.gz"]
    assert (
        None,
        rdflib.URIRef("http://purl.org/dc/terms/license"),
        rdflib.URIRef("https://creativecommons.org/licenses/by/4.0/"),
    ) in void
    citation = yaml.safe_load((release / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["version"] == "9.9.9" and citation["license"] == "CC-BY-4.0"
    again = run_cli("dump", "--store", str(real_settings.store), "--to", str(tmp_path), "--version", "9.9.9")
    assert again.returncode != 0 and "never overwritten" in again.stderr  # a release is never rewritten
    bad = run_cli("dump", "--store", str(real_settings.store), "--to", str(tmp_path), "--version", "../x")
    assert bad.returncode != 0 and "letters, digits" in bad.stderr and not (tmp_path.parent / "x").exists()


def test_every_graph_gets_a_file_of_its_own(real_store, real_settings, tmp_path: Path) -> None:
    """Issue #54 item 10: `urn:a/b` and `urn:a-b` got one Turtle file (one overwritten), and a
    graph IRI over ~250 bytes made every dump fail; a --to that cannot be made was a traceback."""
    long = "urn:x:" + "y" * 400
    names = graph_files(["urn:a/b", "urn:a-b", long, vocab.GRAPH_BASE + "source/tiny"])
    assert len(set(names.values())) == 4 and names[vocab.GRAPH_BASE + "source/tiny"] == "source-tiny.ttl"
    assert all(len(n.encode()) < 200 and "/" not in n for n in names.values())
    store = Store()
    for graph in ("urn:a/b", "urn:a-b", long):
        store.add(Quad(NamedNode("urn:s"), NamedNode("urn:p"), Literal(graph), NamedNode(graph)))
    folder = write_release(store, tmp_path / "releases", "1.0")
    assert len(list((folder / "graphs").iterdir())) == 3
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    done = run_cli("dump", "--store", str(real_settings.store), "--to", str(blocked / "releases"))
    assert done.returncode != 0 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, (
        done.stderr
    )
